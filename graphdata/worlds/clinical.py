r"""A clinical world: patients, clinicians, hospitals, conditions, drugs, classes, variants.

Written as a **held-out** world for the explainer, without reading :mod:`kg.explain`, the
explainer benchmarks or their results, and never run with an explainer or trained on while it
was written: designed from the clinical domain (patients admitted to hospitals and attended by
their clinicians, diagnoses treated with first-line drugs, drug classes, adverse effects,
drug-drug interactions, risk alleles and pharmacogenomic variants, allergies and pharmacy
dispensing records), not from how any explainer decides. The rules (:data:`CLINICAL_RULES`,
length = body atoms):

* ``care_inverse: patient_of(P,M) <- attends(M,P)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`; ``attends`` 1-N, ``patient_of`` N-1);
* ``interaction_symmetry: interacts_with(D,E) <- interacts_with(E,D)``, length 1, a
  **symmetric base relation**: interactions are drawn in one orientation, mostly between known
  interacting classes (anticoagulant and NSAID, SSRI and opioid, ...); at seed 0 the reversed
  copy of every held-out target is in train;
* ``colleague: colleague_of(M,N) <- works_at(M,H), works_at(N,H), M != N``, length 2, a
  **symmetric** relation from a **star with a shared variable and an inequality** around a
  hospital (at seed 0 the reversed copy of .79 of its held-out targets is in train);
* ``standard_care: prescribed(P,D) <- diagnosed_with(P,C), first_line(C,D)``, length 2: a
  patient gets the first-line drugs of each diagnosis, through a **condition hub**; its
  **exceptions are correlated with another relation**: a withheld prescription is mostly a
  recorded allergy (at seed 0 ``allergic_to(P,D)`` holds for .79 of the 123 withheld
  prescriptions, and .68 of the ``allergic_to`` facts are withheld prescriptions; no allergy
  is to a prescribed drug). ``prescribed`` is never a base fact: a **derived relation with
  held-out facts used in four other rules' bodies**, derived in the first round of the closure
  and they in the second;
* ``side_effect: at_risk_of(P,C) <- prescribed(P,D), adverse_effect(D,C)``, length 2, **through
  the derived** ``prescribed``, and ``predisposition: at_risk_of(P,C) <- carries(P,V),
  predisposes(V,C)``, length 2, over base facts (``predisposes`` is 1-1: each risk allele
  predisposes to its own condition): **a head with two bodies** (at seed 0 .03 of the
  ``at_risk_of`` facts have both, .66 only the drug body, .26 only the allele body, .05
  neither: noise);
* ``pharmacogenomic: dose_adjusted(P,D) <- prescribed(P,D), carries(P,V),
  alters_response(V,D)`` and ``interaction_adjustment: dose_adjusted(P,D) <- prescribed(P,D),
  prescribed(P,E), interacts_with(D,E)``, both length 3: **a head with two triangle bodies**
  (patient, drug, variant; patient, drug, interacting drug), each with an atom **parallel to
  the head** through the derived ``prescribed`` (the second uses it twice, and the partly
  derived ``interacts_with``); at seed 0 .07 of the ``dose_adjusted`` facts have both bodies,
  .32 only the variant body, .55 only the interaction body, .06 neither (noise);
* ``inr_clinic: monitored_at(P,H) <- prescribed(P,D), in_class(D,class_anticoagulant),
  admitted_to(P,H)``, length 3, a body **anchored on a constant** (the class entity
  ``class_anticoagulant``, present at every size and seed): the path from patient to hospital
  is the single atom ``admitted_to``, parallel to the head, and the other two atoms are a side
  branch from the patient that ends in the constant, three hops from the hospital;
* a **correlated shortcut**: ``dispensed`` (base) is in no body of ``prescribed``, but a
  pharmacy dispenses most prescriptions (and over-the-counter NSAIDs): at seed 0 it links .82
  of the ``prescribed`` pairs and .88 of its training pairs are prescriptions
  (:attr:`~graphdata.worlds.World.shortcuts`);
* rules of length 1 (two), 2 (four) and 3 (three); 1-1 (``predisposes``), 1-N (``attends``),
  N-1 (``located_in``, ``works_at``, ``admitted_to``, ``in_class``, ``first_line``,
  ``adverse_effect``, ``allergic_to``, ``patient_of``, ``monitored_at``) and N-N
  (``diagnosed_with``, ``carries``, ``alters_response``, ``interacts_with``, ``dispensed``,
  ``colleague_of``, ``prescribed``, ``at_risk_of``, ``dose_adjusted``) relations;
* **exceptions**: 12 % of ``standard_care``'s heads (allergies), 15 % of the ``at_risk_of``
  facts only ``side_effect`` derives, 10 % of ``predisposition``'s (incomplete penetrance),
  10 % of ``pharmacogenomic``'s, 20 % of the ``dose_adjusted`` facts only
  ``interaction_adjustment`` derives (a minor interaction) and 5 % of ``inr_clinic``'s are
  withheld; **noise**: 4 % of the ``prescribed`` facts (off-label prescriptions, which feed the
  four rules of the second round), 5 % of the ``at_risk_of`` and 6 % of the ``dose_adjusted``
  facts have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 680
entities (400 patients, 80 clinicians, 66 drugs, 40 conditions, 33 cities, 25 variants, 20
hospitals, 10 drug classes, 6 countries), 20 relations; 7,301 train, 337 valid and 336 test
triples; the valid+test targets per rule of their shortest grounding are ``standard_care``
211, ``side_effect`` 134, ``care_inverse`` 80, ``colleague`` 76, ``predisposition`` 73,
``inr_clinic`` 28, ``interaction_adjustment`` 21, ``pharmacogenomic`` 15,
``interaction_symmetry`` 14 (length 1: 94, 2: 494, 3: 64), and 21 noise facts; .06 of the
targets have more than one grounding; 396 exceptions (206 ``at_risk_of``, 123 ``prescribed``,
62 ``dose_adjusted``, 5 ``monitored_at``). **Hubs**: the busiest drug has 188 distinct
training neighbours, the most prevalent condition 171, the largest hospital 84, the most common
variant 67; the 2-hop enclosing subgraphs of 200 test targets hold a median of 1,055 training
triples (p90 2,977).

**Base facts** (:func:`clinical_world`), with :math:`N` = ``size`` patients: six countries by
weight (.30 down to .08); :math:`\max(6, \lfloor N/12 \rfloor)` cities (``located_in``, one per
country first, the rest by weight) with a log-normal population; :math:`\max(6, \lfloor N/20
\rfloor)` hospitals (``located_in`` a city by population, one per country first) with a
log-normal size; :math:`\max(12, \lfloor N/5 \rfloor)` clinicians (``works_at``, one per
hospital first, the rest by size); ten drug classes (``_CLASSES``) and :math:`\max(30,
\lfloor N/6 \rfloor)` drugs (``in_class``, one per class first, the rest by class share) with a
log-normal popularity; :math:`\max(16, \lfloor N/10 \rfloor)` conditions with a log-normal
prevalence (doubled for the first three, whose therapy class is the anticoagulant one; the
rest by class share), each with a first-line drug of its therapy class by popularity and a
second with probability .4 (``first_line``); each class has a typical adverse condition that
each of its drugs has with probability .7, and a drug has another with probability .3
(``adverse_effect``); as many interactions as drugs (``interacts_with``, one orientation), .8
of them between a known interacting class pair (``_INTERACTING``) by popularity, the rest
between any two drugs of different classes; :math:`\max(12, \lfloor N/16 \rfloor)` variants
with a carrier frequency uniform on :math:`[.02, .15]`, the first .4 of them risk alleles of
distinct conditions (``predisposes``), the rest altering the response to each drug of one
class with probability .8 (``alters_response``); patients ``admitted_to`` a hospital by size,
``attends``-ed by one of its clinicians (.9) or any clinician, ``diagnosed_with``
:math:`1 + \text{Poisson}(1.3)` distinct conditions by prevalence, and ``carries`` each
variant with its frequency. Two relations follow the prescriptions and are drawn after a
first :func:`~graphdata.worlds.base.build_world`: a patient is ``allergic_to`` the drug of .85
of their withheld prescriptions, and with probability .1 to a drug they are not prescribed, by
popularity; ``dispensed`` holds for .8 of the prescriptions, and for an NSAID by popularity
with probability .3 (over the counter). Neither is in a rule body, so adding them leaves the
closure, the noise and the split as they were, and a second build from the generator state of
the first gives the same world with them.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`CLINICAL_RULES`.
"""

from __future__ import annotations

import copy

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import (
    World,
    build_world,
    check_world_arguments,
    entity_labels,
    weighted_pick,
)

__all__ = ["CLINICAL_RULES", "clinical_world"]

#: The planted rules: an inverse care pair, a symmetric base interaction relation, a symmetric
#: colleague star with an inequality, standard care from diagnosis and first-line therapy
#: feeding a risk head with two bodies, two triangles for dose adjustment and a rule anchored
#: on the constant ``class_anticoagulant``.
CLINICAL_RULES = """\
care_inverse: patient_of(P,M) <- attends(M,P)
interaction_symmetry: interacts_with(D,E) <- interacts_with(E,D)
colleague: colleague_of(M,N) <- works_at(M,H), works_at(N,H), M != N
standard_care: prescribed(P,D) <- diagnosed_with(P,C), first_line(C,D)
side_effect: at_risk_of(P,C) <- prescribed(P,D), adverse_effect(D,C)
predisposition: at_risk_of(P,C) <- carries(P,V), predisposes(V,C)
pharmacogenomic: dose_adjusted(P,D) <- prescribed(P,D), carries(P,V), alters_response(V,D)
interaction_adjustment: dose_adjusted(P,D) <- prescribed(P,D), prescribed(P,E), interacts_with(D,E)
inr_clinic: monitored_at(P,H) <- prescribed(P,D), in_class(D,class_anticoagulant), admitted_to(P,H)
"""

_COUNTRIES = (0.3, 0.22, 0.16, 0.13, 0.11, 0.08)
#: The drug classes (entity ``class_<name>``), each with its share of the drugs and of the
#: conditions it is the first-line therapy of (the first three conditions are anticoagulated).
_CLASSES = (
    ("anticoagulant", 0.08, 0.03),
    ("antiplatelet", 0.07, 0.06),
    ("nsaid", 0.10, 0.12),
    ("statin", 0.09, 0.11),
    ("beta_blocker", 0.10, 0.10),
    ("ace_inhibitor", 0.10, 0.11),
    ("biguanide", 0.06, 0.07),
    ("ssri", 0.12, 0.13),
    ("opioid", 0.10, 0.09),
    ("antibiotic", 0.18, 0.18),
)
#: Class pairs with known interactions (most ``interacts_with`` facts join one of them).
_INTERACTING = (
    ("anticoagulant", "nsaid"),
    ("anticoagulant", "antiplatelet"),
    ("anticoagulant", "antibiotic"),
    ("ssri", "nsaid"),
    ("ssri", "opioid"),
    ("ace_inhibitor", "nsaid"),
    ("statin", "antibiotic"),
    ("beta_blocker", "ssri"),
)


def clinical_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the clinical world (module docstring) and its ground truth.

    Args:
        size: The number of patients :math:`N \ge 40`. Default 400 (680 entities, 20
            relations and about 7,970 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"clinical"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = clinical_world(60, seed=0)
        >>> w.exception_rates["standard_care"], w.shortcuts
        (0.12, (('dispensed', 'prescribed'),))
        >>> sorted(r.name for r in w.rules if r.head.relation == "at_risk_of")
        ['predisposition', 'side_effect']
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country, n_class = len(_COUNTRIES), len(_CLASSES)
    n_city, n_hospital = max(n_country, n // 12), max(n_country, n // 20)
    n_clinician, n_condition = max(12, n // 5), max(16, n // 10)
    n_drug, n_variant = max(30, n // 6), max(12, n // 16)
    patients, clinicians = entity_labels("patient", n), entity_labels("clinician", n_clinician)
    countries, cities = entity_labels("country", n_country), entity_labels("city", n_city)
    hospitals, conditions = (
        entity_labels("hospital", n_hospital),
        entity_labels("condition", n_condition),
    )
    drugs, variants = entity_labels("drug", n_drug), entity_labels("variant", n_variant)
    class_names = [name for name, _, _ in _CLASSES]
    classes = [f"class_{name}" for name in class_names]
    facts: list[LabeledTriple] = []

    # Places: cities in countries (one each first, the rest by weight); hospitals in a city
    # (one per country first) by population, with a log-normal size (the big ones are hubs).
    city_country = (
        list(range(n_country)) + rng.choice(n_country, size=n_city - n_country, p=weights).tolist()
    )
    population = rng.lognormal(0.0, 1.0, n_city) * weights[city_country]
    facts.extend((cities[y], "located_in", countries[c]) for y, c in enumerate(city_country))
    all_cities = list(range(n_city))
    for h in range(n_hospital):
        pool = [y for y in all_cities if city_country[y] == h] if h < n_country else all_cities
        facts.append((hospitals[h], "located_in", cities[weighted_pick(rng, pool, population)]))
    beds = rng.lognormal(0.0, 0.9, n_hospital)

    # Clinicians: one per hospital first, the rest by size.
    clinician_hospital = (
        list(range(n_hospital))
        + rng.choice(n_hospital, size=n_clinician - n_hospital, p=beds / beds.sum()).tolist()
    )
    facts.extend(
        (clinicians[m], "works_at", hospitals[h]) for m, h in enumerate(clinician_hospital)
    )
    staff = [
        [m for m in range(n_clinician) if clinician_hospital[m] == h] for h in range(n_hospital)
    ]

    # Drug classes and drugs: one drug per class first, the rest by class share; a log-normal
    # popularity.
    drug_share = np.array([s for _, s, _ in _CLASSES])
    drug_class = (
        list(range(n_class))
        + rng.choice(n_class, size=n_drug - n_class, p=drug_share / drug_share.sum()).tolist()
    )
    popularity = rng.lognormal(0.0, 0.8, n_drug)
    facts.extend((drugs[d], "in_class", classes[k]) for d, k in enumerate(drug_class))
    members = [[d for d in range(n_drug) if drug_class[d] == k] for k in range(n_class)]

    # Conditions: a log-normal prevalence (hubs); a therapy class (the first three anticoagulant,
    # the rest by share), one first-line drug of it by popularity, a second with probability
    # .4 (of the same class or, half the time, of any class).
    prevalence = rng.lognormal(0.0, 1.0, n_condition)
    prevalence[:3] *= 2.0  # anticoagulated conditions (atrial fibrillation, ...) are common
    therapy_share = np.array([s for _, _, s in _CLASSES])
    therapy = [0, 0, 0] + rng.choice(
        n_class, size=n_condition - 3, p=therapy_share / therapy_share.sum()
    ).tolist()
    every_drug = list(range(n_drug))
    for c in range(n_condition):
        chosen = [weighted_pick(rng, members[therapy[c]], popularity)]
        if rng.random() < 0.4:
            pool = members[therapy[c]] if rng.random() < 0.5 else every_drug
            pool = [d for d in pool if d not in chosen]
            if pool:
                chosen.append(weighted_pick(rng, pool, popularity))
        facts.extend((conditions[c], "first_line", drugs[d]) for d in chosen)
    # Adverse effects are mostly class effects: each class has a typical adverse condition,
    # which each of its drugs has with probability .7, and a drug has another with
    # probability .3.
    all_conditions = list(range(n_condition))
    class_adverse = [int(rng.integers(n_condition)) for _ in range(n_class)]
    for d in range(n_drug):
        harms = set()
        if rng.random() < 0.7:
            harms.add(class_adverse[drug_class[d]])
        if rng.random() < 0.3:
            harms.add(int(rng.choice(all_conditions)))
        facts.extend((drugs[d], "adverse_effect", conditions[c]) for c in sorted(harms))
    # Drug-drug interactions, one orientation (interaction_symmetry completes them): .8 of
    # them join a known interacting class pair, the rest any two drugs of different classes.
    pairs: set[tuple[int, int]] = set()
    tries = 0
    while len(pairs) < n_drug and tries < 50 * n_drug:
        tries += 1
        if rng.random() < 0.8:
            a_name, b_name = _INTERACTING[int(rng.integers(len(_INTERACTING)))]
            a = weighted_pick(rng, members[class_names.index(a_name)], popularity)
            b = weighted_pick(rng, members[class_names.index(b_name)], popularity)
        else:
            a, b = (int(x) for x in rng.choice(n_drug, size=2, replace=False))
        if drug_class[a] != drug_class[b] and (a, b) not in pairs and (b, a) not in pairs:
            pairs.add((a, b))
    facts.extend((drugs[a], "interacts_with", drugs[b]) for a, b in sorted(pairs))

    # Variants: the first .4 are risk alleles, each predisposing to its own condition (1-1);
    # the rest alter the response to the drugs of one class (each drug with probability .8).
    n_risk = max(2, int(0.4 * n_variant))
    risk_for = rng.choice(n_condition, size=n_risk, replace=False).tolist()
    facts.extend((variants[v], "predisposes", conditions[c]) for v, c in enumerate(risk_for))
    for v in range(n_risk, n_variant):
        k = int(rng.integers(n_class))
        affected = [d for d in members[k] if rng.random() < 0.8] or members[k][:1]
        facts.extend((variants[v], "alters_response", drugs[d]) for d in affected)
    frequency = rng.uniform(0.02, 0.15, n_variant)

    # Patients: admitted to a hospital by size, attended by one of its clinicians (.9) or
    # by any clinician; 1 + Poisson(1.3) conditions by prevalence; each variant with its
    # carrier frequency.
    every_clinician = list(range(n_clinician))
    for p in range(n):
        h = int(rng.choice(n_hospital, p=beds / beds.sum()))
        facts.append((patients[p], "admitted_to", hospitals[h]))
        pool = staff[h] if rng.random() < 0.9 else every_clinician
        facts.append((clinicians[pool[int(rng.integers(len(pool)))]], "attends", patients[p]))
        had: list[int] = []
        for _ in range(1 + int(rng.poisson(1.3))):
            pool = [c for c in all_conditions if c not in had]
            had.append(weighted_pick(rng, pool, prevalence))
        facts.extend((patients[p], "diagnosed_with", conditions[c]) for c in sorted(had))
        carried = np.flatnonzero(rng.random(n_variant) < frequency).tolist()
        facts.extend((patients[p], "carries", variants[v]) for v in carried)

    types = {
        **dict.fromkeys(patients, "patient"),
        **dict.fromkeys(clinicians, "clinician"),
        **dict.fromkeys(hospitals, "hospital"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(conditions, "condition"),
        **dict.fromkeys(drugs, "drug"),
        **dict.fromkeys(classes, "drug_class"),
        **dict.fromkeys(variants, "variant"),
    }

    def build(base: list[LabeledTriple], generator: np.random.Generator) -> World:
        return build_world(
            "clinical",
            base,
            CLINICAL_RULES,
            seed=seed,
            size=n,
            rng=generator,
            entity_types=types,
            exception_rates={
                "standard_care": 0.12,
                "side_effect": 0.15,
                "predisposition": 0.1,
                "pharmacogenomic": 0.1,
                "interaction_adjustment": 0.2,
                "inr_clinic": 0.05,
            },
            noise_rates={"prescribed": 0.04, "at_risk_of": 0.05, "dose_adjusted": 0.06},
            symmetric=("colleague_of", "interacts_with"),
            inverse_pairs=(("attends", "patient_of"),),
            shortcuts=(("dispensed", "prescribed"),),
            valid_fraction=valid_fraction,
            test_fraction=test_fraction,
        )

    # Allergies and dispensing records follow the prescriptions, so they are drawn after a
    # first build: both relations are in no rule body, so adding them leaves the closure, the
    # noise and the split unchanged, and a second build from the same generator state gives
    # the same world with them (the same exceptions, noise and split).
    replay = copy.deepcopy(rng)
    first = build(facts, rng)
    drug_index = {label: d for d, label in enumerate(drugs)}
    patient_index = {label: p for p, label in enumerate(patients)}
    prescribed: list[set[int]] = [set() for _ in range(n)]
    for split in first.dataset.splits.values():
        for x, r, y in split.to_labeled_triples():
            if r == "prescribed":
                prescribed[patient_index[x]].add(drug_index[y])
    # A withheld first-line prescription is mostly a recorded allergy to that drug (.85);
    # besides, a patient is allergic to a drug they are not prescribed with probability .1
    # (by popularity). No allergy is to a drug the patient is prescribed.
    allergies: set[tuple[int, int]] = set()
    for x, r, y in first.exceptions:
        if r == "prescribed" and rng.random() < 0.85:
            allergies.add((patient_index[x], drug_index[y]))
    for p in range(n):
        if rng.random() < 0.1:
            pool = [d for d in every_drug if d not in prescribed[p]]
            allergies.add((p, weighted_pick(rng, pool, popularity)))
    # Dispensing records: .8 of the prescriptions are dispensed (a correlated shortcut); a
    # patient buys an over-the-counter NSAID with probability .3.
    dispensed: set[tuple[int, int]] = set()
    for p in range(n):
        for d in sorted(prescribed[p]):
            if rng.random() < 0.8:
                dispensed.add((p, d))
        if rng.random() < 0.3:
            dispensed.add((p, weighted_pick(rng, members[class_names.index("nsaid")], popularity)))
    facts.extend((patients[p], "allergic_to", drugs[d]) for p, d in sorted(allergies))
    facts.extend((patients[p], "dispensed", drugs[d]) for p, d in sorted(dispensed))
    return build(facts, replay)
