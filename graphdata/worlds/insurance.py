r"""An insurance world: policyholders, policies, insurers and reinsurers, claims, loss events.

Written in session 33 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from insurance in three European markets (people and
businesses holding motor, home, liability, commercial property, health and life policies with
the insurers of their country, sold direct, by tied agents or by brokers; insured vehicles and
buildings in the cities of their regions; insurers supervised by their regulators and ceding to
reinsurers, which buy retrocession; loss events (storms, floods, hail, fires and accidents) and
attritional claims with their claims handlers, loss adjusters and the repairers and clinics that
serve them, in the insurers' networks or not; fraud investigations into single claims and
suspected rings), not from how any explainer decides. The rules (:data:`INSURANCE_RULES`, length
= body atoms):

* ``claim_inverse: has_claim(P,C) <- made_under(C,P)``, length 1, an **inverse pair** (recorded
  in :attr:`~graphdata.worlds.World.inverse_pairs`; 1-N, 580 claims at seed 0) with no exception
  or noise;
* ``staff_adjuster: adjusts_for(J,I) <- employed_by(J,I)``, length 1, parallel to the head, and
  ``instructed_adjuster: adjusts_for(J,I) <- handled_by(C,J), claim_against(C,I)``, length 2,
  through the **derived** claim insurer: **a head with two bodies**, an insurer's own claims
  handler or anyone it instructed on one of its claims (of the 115 ``adjusts_for`` facts at seed
  0, .44 have both, .50 only an instruction (loss adjusters, and handlers of another insurer
  that outsources its claims handling), .03 only the employment (a handler with none of its
  insurer's claims) and .03 neither);
* ``claim_insurer: claim_against(C,I) <- made_under(C,P), underwritten_by(P,I)``, length 2, the
  insurer a claim is against, a chain through its policy whose head is **derived** and used in
  three other bodies (573 facts at seed 0);
* ``network_settlement: settled_with(C,X) <- serviced_by(C,X), claim_against(C,I),
  in_network(X,I)``, length 3, a **triangle** (claim, provider, insurer) whose first atom is
  parallel to the head and whose second is the derived claim insurer, and ``direct_billing:
  settled_with(C,X) <- serviced_by(C,X), made_under(C,P), in_line(P,line_health)``, length 3, a
  chain ending on the **constant** ``line_health``: **a second head with two bodies**, the
  providers an insurer pays directly, a repairer or clinic of its network or any provider of a
  health claim (of the 284 ``settled_with`` facts at seed 0, .50 have only the network, .32 both
  (a health claim at a network clinic), .15 only the direct billing and .03 neither); the 137
  pairs of a claim other than health and a provider outside its insurer's network are paid to
  the policyholder and not settled;
* ``event_cession: affected_by(R,E) <- arising_from(C,E), claim_against(C,I), cedes_to(I,R)``,
  length 3, a chain from a loss event through its claims and the derived claim insurer to the
  insurer's reinsurers, and ``retrocession: affected_by(R,E) <- affected_by(S,E),
  cedes_to(S,R)``, length 2, **recursive** through its own head: **a third head with two
  bodies**, closed in the second and third rounds (of the 178 ``affected_by`` facts at seed 0,
  .70 have only a cedant's claims, .26 only a retrocession, .04 neither);
* ``fraud_ring: linked_claim(C,D) <- investigated_in(C,F), investigated_in(D,F), C != D``,
  length 2, the claims of one fraud investigation: a **symmetric** head
  (:attr:`~graphdata.worlds.World.symmetric`, 74 facts at seed 0 from 8 rings of two to five
  claims; the 12 investigations of a single claim link nothing; no exception or noise) from a
  **star** on the investigation with an **inequality between the two head variables**;
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``on_panel`` (the loss adjusters on an insurer's panel, which get nine in ten of the
  insurer's instructions to loss adjusters) links .37 of the ``adjusts_for`` pairs, and .67 of
  its training pairs are ``adjusts_for`` pairs (seed 0);
* rules of length 1 (two), 2 (four) and 3 (three); 1-1 (``covers``), 1-N (``has_claim``), N-1
  (``adjusts_for``, ``arising_from``, ``claim_against``, ``employed_by``, ``handled_by``,
  ``held_by``, ``in_line``, ``investigated_in``, ``located_in``, ``made_under``,
  ``serviced_by``, ``settled_with``, ``sold_by``, ``supervised_by``, ``underwritten_by``) and
  N-N (``affected_by``, ``cedes_to``, ``in_network``, ``linked_claim``, ``on_panel``) relations
  (by count at seed 0);
* **exceptions**: 3 % of ``staff_adjuster``'s heads (a handler on long-term leave), 2 % of
  ``claim_insurer``'s (a claim in a portfolio transferred to a run-off consolidator), 5 % of
  ``instructed_adjuster``'s (an adjuster instructed by a broker with delegated claims
  authority), 8 % of ``network_settlement``'s (a repair above the network's authority limit,
  paid to the policyholder), 6 % of ``direct_billing``'s (an outpatient bill paid by the patient
  and reimbursed), 12 % of ``event_cession``'s (an event loss within the cedant's retention) and
  15 % of ``retrocession``'s (retrocession cover exhausted by an earlier event) are withheld; a
  withheld ``claim_against`` fact also leaves out the heads only it grounds. **Noise**: 1 % of
  the ``claim_against`` (a claim booked to a group sister company), 3 % of the ``adjusts_for``
  (an adjuster retained for a file review without a claim), 3 % of the ``settled_with`` (an ex
  gratia payment to a provider) and 4 % of the ``affected_by`` facts (a facultative placement
  outside the treaties) have no grounding; a noise ``claim_against`` fact feeds the other bodies
  like any other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
2,318 entities (730 policies, 580 claims, 300 policyholders (260 persons and 40 businesses),
218 vehicles, 210 buildings, 56 claims handlers, 36 cities, 30 loss events (9 storms, 8 hail
storms, 7 floods, 4 fires, 2 accidents), 30 repairers, 25 loss adjusters, 20 investigations, 15
tied agents, 15 clinics, 12 regions, 12 brokers, 9 insurers, 6 lines, 6 reinsurers, 3
countries, 3 regulators, 2 retrocession funds), 22 relations; 8,613 train, 174 valid and 176
test triples; the valid+test targets per rule of their shortest grounding are
``claim_inverse`` 116, ``claim_insurer`` 114, ``network_settlement`` 33, ``event_cession`` 24,
``direct_billing`` 15, ``fraud_ring`` 14, ``staff_adjuster`` 12, ``instructed_adjuster`` 9,
``retrocession`` 9 (length 1: 128, 2: 146, 3: 72), and 4 noise facts; .16 of the targets have
more than one grounding; 53 exceptions (22 ``affected_by``, 14 ``settled_with``, 13
``claim_against``, 4 ``adjusts_for``). **Hubs**: ``country_germany`` has 495 distinct training
neighbours (the country of risk of its policies and of loss of its claims), the busiest insurer
397, ``line_motor`` 190, the busiest city 73, the busiest clinic and repairer 69 each, the
busiest broker 53 and the busiest reinsurer 31 (a policy a median of 6); the 2-hop enclosing
subgraphs of the 173 sampled test targets hold a median of 1,196 training triples (p90
1,629.8; at seeds 1-3, 40 targets each, p90 2,025.6, 2,420.2 and 1,596.2). Sizes were adjusted
while the world was written, never from an explainer's results: the default size and the
numbers of claims handlers and loss adjusters so that every rule has at least 8 held-out
targets at seed 0, and the number of insurers, the five-year claims window and the country of
risk of a policy and of loss of a claim so that the enclosing subgraphs reach 1,000-5,000
training triples.

**Base facts** (:func:`insurance_world`), with :math:`N` = ``size`` policyholders: the regions
of ``_COUNTRIES`` are ``located_in`` their country and three cities in each ``located_in`` its
region, of log-normal weight; each country's regulator is ``located_in`` it.
:math:`\max(9, \lfloor N/40 \rfloor)` insurers, the first of each country its market leader
writing every line and the others of a country by weight and a kind of ``_INSURER_KINDS``
(composite, non-life, life or health), are ``supervised_by`` their country's regulator and
``located_in`` a city of it (their head office), of log-normal market weight; each ``cedes_to``
2 + Poisson(1.2) of :math:`\max(6, \lfloor N/50 \rfloor)` reinsurers by size, and a reinsurer
with probability .8 to 1 + Poisson(.4) of two retrocession funds and (all but the two largest)
the two largest reinsurers. :math:`\max(8, \lfloor N/25 \rfloor)` brokers and
:math:`\max(12, \lfloor N/20 \rfloor)` tied agents (each of one insurer by weight) are
``located_in`` a city. A policyholder (a business with probability .15) is ``located_in`` a city
by weight and takes up each line with its country's probability (``_PERSON_TAKE_UP``,
``_BUSINESS_TAKE_UP``): a policy ``held_by`` it, ``in_line`` the line, ``located_in`` its country
and ``underwritten_by`` an insurer writing the line (one it already has a policy with, with
probability .45, else one of its country by weight, a foreign one with probability .04),
``sold_by`` nobody, one of the insurer's agents or the holder's broker by the country's channel
shares. A motor policy ``covers`` a vehicle (a business's fleet 1 + Poisson(1.5)), a home policy
the holder's building and a commercial property policy 1 + Poisson(.8) buildings, ``located_in``
a city. :math:`\max(15, \lfloor N/10 \rfloor)` loss events of a peril of ``_PERILS`` are
``located_in`` one region of a country (a storm 1 + Poisson(1.2), with probability .3 one more
abroad; a flood 1 + Poisson(.5)). Over five years a policy has Poisson(``_CLAIM_RATE`` x its
vehicles or buildings) claims ``made_under`` it, and each insured building or vehicle in an
event's regions (a fire's city) has a claim ``arising_from`` the event with the peril's
probability (an accident also strikes health and life policies there); a claim is ``located_in``
its country. Each insurer has 2 + Poisson(4 x its weight over the mean) claims handlers
``employed_by`` it; :math:`\max(15, \lfloor N/12 \rfloor)` loss adjusters are ``on_panel`` of 2 +
Poisson(1) insurers of their country. A claim is ``handled_by`` someone with its line's
probability (``_ADJUSTED``; .9 from an event): a loss adjuster for an event or commercial
property claim with probability .75 (else .12), of the insurer's panel with probability .9, or
else a handler of its insurer (of another insurer with probability .04).
:math:`\max(15, \lfloor N/10 \rfloor)` repairers and :math:`\max(10, \lfloor N/20 \rfloor)`
clinics are ``located_in`` a city and ``in_network`` of insurers of their country (a repairer of
each writing motor, home or property with probability .3, a clinic of each writing health with
.5, motor or liability with .1); a claim is ``serviced_by`` a repairer (motor .85, home and
property .45) or a clinic (health .95, liability .25, a motor injury .12) of its region, of its
insurer's network with probability .6 (.55 a health claim's clinic, .3 an injury's) when there is
one. :math:`\max(12, \lfloor N/15 \rfloor)` fraud investigations each have one claim
``investigated_in`` them or, with probability .5, a ring of 2 + Poisson(1.2) claims of one
provider, one event or the motor claims of one region.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`INSURANCE_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import (
    World,
    build_world,
    check_world_arguments,
    entity_labels,
    weighted_pick,
)

__all__ = ["INSURANCE_RULES", "insurance_world"]

#: The planted rules: a policy's claims (an inverse pair), the insurers an adjuster acts for (its
#: employer, or an instruction on a claim through the derived claim insurer), the insurer a claim
#: is against (through its policy), the providers a claim is settled with directly (a network
#: provider of its insurer, a triangle; any provider of a health claim, a constant), the
#: reinsurers a loss event reaches (through the cedants' claims, or recursively through
#: retrocession) and the claims a fraud investigation links (symmetric, a star with an
#: inequality).
INSURANCE_RULES = """\
claim_inverse: has_claim(P,C) <- made_under(C,P)
staff_adjuster: adjusts_for(J,I) <- employed_by(J,I)
claim_insurer: claim_against(C,I) <- made_under(C,P), underwritten_by(P,I)
instructed_adjuster: adjusts_for(J,I) <- handled_by(C,J), claim_against(C,I)
network_settlement: settled_with(C,X) <- serviced_by(C,X), claim_against(C,I), in_network(X,I)
direct_billing: settled_with(C,X) <- serviced_by(C,X), made_under(C,P), in_line(P,line_health)
event_cession: affected_by(R,E) <- arising_from(C,E), claim_against(C,I), cedes_to(I,R)
retrocession: affected_by(R,E) <- affected_by(S,E), cedes_to(S,R)
fraud_ring: linked_claim(C,D) <- investigated_in(C,F), investigated_in(D,F), C != D
"""

#: The countries (entity ``country_<name>``): weight among policyholders, insurers, firms and
#: events, the number of regions (entity ``region_<name>_<i>``, each with three cities, entity
#: ``city_<name>_<j>``) and the insurance supervisor (entity ``regulator_<name>``).
_COUNTRIES = (
    ("germany", 0.45, 5, "bafin"),
    ("uk", 0.35, 4, "pra"),
    ("netherlands", 0.20, 3, "dnb"),
)
_CITIES_PER_REGION = 3
#: The lines of business (entity ``line_<name>``); ``property`` is commercial property.
_LINES = ("motor", "home", "liability", "property", "health", "life")
#: Per country (``_COUNTRIES`` order), the probability that a person holds a policy of each
#: line (``_LINES`` order): private liability cover is near universal in Germany and the
#: Netherlands and part of the home policy in the UK; health is substitutive private cover in
#: Germany, private medical insurance in the UK and the compulsory basic cover in the
#: Netherlands.
_PERSON_TAKE_UP = (
    (0.70, 0.60, 0.80, 0.0, 0.12, 0.30),
    (0.72, 0.62, 0.08, 0.0, 0.10, 0.35),
    (0.65, 0.58, 0.85, 0.0, 0.95, 0.25),
)
#: The same for a business (fleet motor, employers' and public liability, commercial property,
#: group health and group life); a business holds no home policy.
_BUSINESS_TAKE_UP = (0.50, 0.0, 0.80, 0.85, 0.15, 0.20)
#: The share of businesses among the policyholders.
_BUSINESS_SHARE = 0.15
#: Insurer kinds: share among the insurers after each country's market leader, the lines
#: always written and the lines written with a probability.
_INSURER_KINDS = (
    (
        "composite",
        0.45,
        ("motor", "home", "liability", "property"),
        (("life", 0.5), ("health", 0.3)),
    ),
    ("non_life", 0.20, ("motor", "home", "liability"), (("property", 0.3),)),
    ("life", 0.15, ("life",), (("health", 0.3),)),
    ("health", 0.20, ("health",), ()),
)
#: Distribution channel (direct, tied agent, broker) of a person's policies per country, and
#: of a business's.
_PERSON_CHANNEL = ((0.25, 0.50, 0.25), (0.50, 0.08, 0.42), (0.45, 0.15, 0.40))
_BUSINESS_CHANNEL = (0.05, 0.25, 0.70)
#: Expected attritional claims per policy and insured unit (vehicle or building) over the
#: five years the world covers.
_CLAIM_RATE = {
    "motor": 0.60,
    "home": 0.35,
    "liability": 0.20,
    "property": 0.60,
    "health": 1.60,
    "life": 0.03,
}
#: Loss events (entity ``<peril>_<i>``): share of the events, and the probability that an
#: insured building or vehicle in the struck area has a claim from the event. An accident (a
#: motorway pile-up or a rail crash) strikes the vehicles, health and life policies of its
#: region (``_ACCIDENT``).
_PERILS = (
    ("storm", 0.30, 0.18, 0.03),
    ("flood", 0.20, 0.10, 0.06),
    ("hail", 0.20, 0.12, 0.25),
    ("fire", 0.15, 0.30, 0.0),
    ("accident", 0.15, 0.0, 0.03),
)
_ACCIDENT = {"health": 0.02, "life": 0.005}
#: A claim's probability of an adjuster, per line; a claim from a loss event has one with
#: probability .9.
_ADJUSTED = {
    "motor": 0.70,
    "home": 0.60,
    "liability": 0.85,
    "property": 0.95,
    "health": 0.20,
    "life": 0.80,
}
#: How likely each line's claims are to draw a fraud investigation of their own.
_SUSPICION = {
    "motor": 4.0,
    "home": 2.0,
    "liability": 0.5,
    "property": 2.0,
    "health": 1.5,
    "life": 0.1,
}
#: Withheld heads: a claims handler on long-term leave, a claim in a portfolio transferred to a
#: run-off consolidator, an adjuster instructed by a broker with delegated claims authority, a
#: repair above the network's authority limit paid to the policyholder, an outpatient bill paid
#: by the patient and reimbursed, an event loss within the cedant's retention, retrocession
#: cover exhausted by an earlier event.
_EXCEPTION_RATES = (
    ("staff_adjuster", 0.03),
    ("claim_insurer", 0.02),
    ("instructed_adjuster", 0.05),
    ("network_settlement", 0.08),
    ("direct_billing", 0.06),
    ("event_cession", 0.12),
    ("retrocession", 0.15),
)
#: Heads without grounding: a claim booked to a group sister company, an adjuster retained for
#: a file review without a claim, an ex gratia payment to a provider, a facultative placement
#: outside the treaties.
_NOISE_RATES = (
    ("claim_against", 0.01),
    ("adjusts_for", 0.03),
    ("settled_with", 0.03),
    ("affected_by", 0.04),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def _numbered(kinds: list[str]) -> list[str]:
    """Labels ``<kind>_000``, ``<kind>_001``, ... numbered within each kind, in list order."""
    count = {kind: kinds.count(kind) for kind in set(kinds)}
    labels = {kind: entity_labels(kind, m) for kind, m in count.items()}
    seen = dict.fromkeys(count, 0)
    out = []
    for kind in kinds:
        out.append(labels[kind][seen[kind]])
        seen[kind] += 1
    return out


def insurance_world(
    size: int = 300,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the insurance world (module docstring) and its ground truth.

    Args:
        size: The number of policyholders :math:`N \ge 80`. Default 300 (2,318 entities, 22
            relations and 8,963 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"insurance"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = insurance_world(80, seed=0)
        >>> w.exception_rates["event_cession"], w.inverse_pairs
        (0.12, (('made_under', 'has_claim'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "settled_with")
        [3, 3]
        >>> w.symmetric, w.shortcuts
        (('linked_claim',), (('on_panel', 'adjusts_for'),))
    """
    check_world_arguments(size, 80, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country = len(_COUNTRIES)
    countries = [f"country_{name}" for name, _, _, _ in _COUNTRIES]
    country_weight = np.array([w for _, w, _, _ in _COUNTRIES])
    regulators = [f"regulator_{reg}" for _, _, _, reg in _COUNTRIES]
    lines = [f"line_{name}" for name in _LINES]
    line_index = {name: k for k, name in enumerate(_LINES)}
    facts: list[LabeledTriple] = []
    facts.extend((regulators[k], "located_in", countries[k]) for k in range(n_country))

    # Regions and cities: each country's regions are located_in it, and three cities in each
    # region; log-normal weights (a region's times its country's, a city's times its region's).
    region_labels: list[str] = []
    region_country: list[int] = []
    city_labels: list[str] = []
    city_region: list[int] = []
    for k, (name, _, count, _) in enumerate(_COUNTRIES):
        first = len(region_labels)
        for i in range(count):
            region_labels.append(f"region_{name}_{i}")
            region_country.append(k)
            facts.append((region_labels[-1], "located_in", countries[k]))
        for j in range(count * _CITIES_PER_REGION):
            city_labels.append(f"city_{name}_{j}")
            city_region.append(first + j // _CITIES_PER_REGION)
    n_region, n_city = len(region_labels), len(city_labels)
    region_weight = rng.lognormal(0.0, 0.4, n_region) * country_weight[region_country]
    city_weight = rng.lognormal(0.0, 0.8, n_city) * region_weight[city_region]
    city_country = [region_country[city_region[c]] for c in range(n_city)]
    facts.extend(
        (city_labels[c], "located_in", region_labels[city_region[c]]) for c in range(n_city)
    )
    country_cities = [[c for c in range(n_city) if city_country[c] == k] for k in range(n_country)]
    region_cities = [[c for c in range(n_city) if city_region[c] == r] for r in range(n_region)]
    country_regions = [
        [r for r in range(n_region) if region_country[r] == k] for k in range(n_country)
    ]

    # Insurers: max(9, N/40); the first of each country is its market leader, a composite
    # writing every line, the others are of a country by weight and of a kind of
    # ``_INSURER_KINDS``. Each is supervised_by its country's regulator, has its head office
    # (located_in) in a city of it by squared weight, and a log-normal market weight.
    n_insurer = max(9, n // 40)
    insurers = entity_labels("insurer", n_insurer)
    insurer_country = list(range(n_country))
    insurer_country += [_pick(rng, country_weight) for _ in range(n_insurer - n_country)]
    insurer_weight = rng.lognormal(0.0, 0.7, n_insurer)
    kind_share = np.array([share for _, share, _, _ in _INSURER_KINDS])
    writes: list[set[int]] = []
    for i in range(n_insurer):
        k = insurer_country[i]
        if i < n_country:
            own = set(range(len(_LINES)))
        else:
            _, _, always, maybe = _INSURER_KINDS[_pick(rng, kind_share)]
            own = {line_index[x] for x in always}
            own |= {line_index[x] for x, p in maybe if rng.random() < p}
        writes.append(own)
        facts.append((insurers[i], "supervised_by", regulators[k]))
        head_office = weighted_pick(rng, country_cities[k], city_weight**2)
        facts.append((insurers[i], "located_in", city_labels[head_office]))

    # Reinsurance: max(6, N/50) reinsurers of log-normal size (the first the largest) and two
    # retrocession funds. Each insurer cedes_to a panel of 2 + Poisson(1.2) reinsurers drawn by
    # size; each reinsurer buys retrocession (cedes_to) with probability .8 from 1 + Poisson(.4)
    # sellers: the retrocession funds (weight 2 each) and, for all but the two largest, the two
    # largest reinsurers (weight 1 each), so that cessions never run in a circle.
    n_reinsurer = max(6, n // 50)
    reinsurers = entity_labels("reinsurer", n_reinsurer)
    retro_funds = entity_labels("retro_fund", 2)
    re_weight = np.sort(rng.lognormal(0.0, 0.8, n_reinsurer))[::-1].copy()
    for i in range(n_insurer):
        want = min(n_reinsurer, 2 + int(rng.poisson(1.2)))
        panel = rng.choice(n_reinsurer, size=want, replace=False, p=re_weight / re_weight.sum())
        facts.extend((insurers[i], "cedes_to", reinsurers[int(r)]) for r in sorted(panel))
    for r in range(n_reinsurer):
        if rng.random() >= 0.8:
            continue
        sellers = list(retro_funds) + (reinsurers[:2] if r >= 2 else [])
        w = np.array([2.0, 2.0] + ([1.0, 1.0] if r >= 2 else []))
        want = min(len(sellers), 1 + int(rng.poisson(0.4)))
        chosen = rng.choice(len(sellers), size=want, replace=False, p=w / w.sum())
        facts.extend((reinsurers[r], "cedes_to", sellers[int(j)]) for j in sorted(chosen))

    # Intermediaries: max(8, N/25) brokers located_in a city by weight, of log-normal size;
    # max(12, N/20) tied agents, each selling for one insurer (by weight, not a health-only
    # one) and located_in a city of its country.
    n_broker = max(8, n // 25)
    brokers = entity_labels("broker", n_broker)
    broker_city = [_pick(rng, city_weight) for _ in range(n_broker)]
    broker_weight = rng.lognormal(0.0, 0.8, n_broker)
    facts.extend((brokers[b], "located_in", city_labels[broker_city[b]]) for b in range(n_broker))
    n_agent = max(12, n // 20)
    agents = entity_labels("agent", n_agent)
    tied = [i for i in range(n_insurer) if writes[i] != {line_index["health"]}]
    agent_insurer = [weighted_pick(rng, tied, insurer_weight) for _ in range(n_agent)]
    for a in range(n_agent):
        city = weighted_pick(rng, country_cities[insurer_country[agent_insurer[a]]], city_weight)
        facts.append((agents[a], "located_in", city_labels[city]))

    # Policyholders: N, a business with probability .15, else a person, located_in a city by
    # weight. A holder takes up each line with its country's probability (``_PERSON_TAKE_UP``,
    # ``_BUSINESS_TAKE_UP``): one policy, held_by it, in_line the line and located_in the
    # holder's country (the country of risk). Its insurer writes the line: with probability
    # .45 one the holder already has a policy with (a bundle), else one of the holder's
    # country by market weight (with probability .04 a foreign one, a branch or under freedom
    # of services). The policy is sold_by nobody (direct), one of the insurer's tied agents or
    # the holder's broker (drawn once, of its country, by size), by the channel shares
    # (``_PERSON_CHANNEL``, ``_BUSINESS_CHANNEL``; the broker when the insurer has no agent).
    holders = entity_labels("holder", n)
    holder_city = [_pick(rng, city_weight) for _ in range(n)]
    holder_country = [city_country[c] for c in holder_city]
    is_business = [bool(rng.random() < _BUSINESS_SHARE) for _ in range(n)]
    facts.extend((holders[h], "located_in", city_labels[holder_city[h]]) for h in range(n))
    policy_holder: list[int] = []
    policy_line: list[int] = []
    policy_insurer: list[int] = []
    policy_seller: list[str] = []
    for h in range(n):
        k = holder_country[h]
        take_up = _BUSINESS_TAKE_UP if is_business[h] else _PERSON_TAKE_UP[k]
        channel = np.array(_BUSINESS_CHANNEL if is_business[h] else _PERSON_CHANNEL[k])
        local_brokers = [b for b in range(n_broker) if city_country[broker_city[b]] == k]
        broker = weighted_pick(rng, local_brokers or list(range(n_broker)), broker_weight)
        mine: list[int] = []
        for lob, p in enumerate(take_up):
            if rng.random() >= p:
                continue
            bundle = [i for i in mine if lob in writes[i]]
            if bundle and rng.random() < 0.45:
                insurer = bundle[int(rng.integers(len(bundle)))]
            else:
                foreign = rng.random() < 0.04
                pool = [
                    i
                    for i in range(n_insurer)
                    if lob in writes[i] and (insurer_country[i] != k) == foreign
                ]
                insurer = weighted_pick(rng, pool, insurer_weight)
            mine.append(insurer)
            route = _pick(rng, channel)
            own_agents = [a for a in range(n_agent) if agent_insurer[a] == insurer]
            if route == 0:
                seller = ""
            elif route == 1 and own_agents:
                seller = agents[own_agents[int(rng.integers(len(own_agents)))]]
            else:
                seller = brokers[broker]
            policy_holder.append(h)
            policy_line.append(lob)
            policy_insurer.append(insurer)
            policy_seller.append(seller)
    n_policy = len(policy_holder)
    policies = entity_labels("policy", n_policy)
    for p in range(n_policy):
        facts.append((policies[p], "held_by", holders[policy_holder[p]]))
        facts.append((policies[p], "in_line", lines[policy_line[p]]))
        facts.append((policies[p], "located_in", countries[holder_country[policy_holder[p]]]))
        facts.append((policies[p], "underwritten_by", insurers[policy_insurer[p]]))
        if policy_seller[p]:
            facts.append((policies[p], "sold_by", policy_seller[p]))

    # Insured assets: a motor policy covers a vehicle (a business's fleet 1 + Poisson(1.5)), a
    # home policy the holder's building, a commercial property policy 1 + Poisson(.8)
    # buildings, the first in the holder's city and the others in a city of its country by
    # weight; each is located_in its city (a vehicle where it is kept, the holder's).
    asset_kind: list[str] = []
    asset_city: list[int] = []
    asset_policy: list[int] = []
    for p in range(n_policy):
        h, line = policy_holder[p], _LINES[policy_line[p]]
        count = 0
        if line == "motor":
            count = 1 + int(rng.poisson(1.5)) if is_business[h] else 1
        elif line in ("home", "property"):
            count = 1 + int(rng.poisson(0.8)) if line == "property" else 1
        for j in range(count):
            asset_kind.append("vehicle" if line == "motor" else "building")
            asset_policy.append(p)
            if line == "property" and j > 0:
                asset_city.append(
                    weighted_pick(rng, country_cities[holder_country[h]], city_weight)
                )
            else:
                asset_city.append(holder_city[h])
    assets = _numbered(asset_kind)
    for x in range(len(assets)):
        facts.append((policies[asset_policy[x]], "covers", assets[x]))
        facts.append((assets[x], "located_in", city_labels[asset_city[x]]))
    units = [0] * n_policy
    for p in asset_policy:
        units[p] += 1

    # Loss events: max(15, N/10), each of a peril of ``_PERILS`` by share, in a country by
    # weight and located_in a first region of it by weight; a storm also in Poisson(1.2) more
    # regions of the country and, with probability .3, in one of another (a windstorm crossing
    # the North Sea), a flood in Poisson(.5) more; a fire burns in one city of its region (not
    # in the graph).
    peril_share = np.array([share for _, share, _, _ in _PERILS])
    event_peril: list[str] = []
    event_regions: list[set[int]] = []
    event_city: list[int] = []
    for _ in range(max(15, n // 10)):
        peril = _PERILS[_pick(rng, peril_share)][0]
        here = country_regions[_pick(rng, country_weight)]
        struck = {weighted_pick(rng, here, region_weight)}
        more = {"storm": rng.poisson(1.2), "flood": rng.poisson(0.5)}.get(peril, 0)
        for _ in range(int(more)):
            pool = [r for r in here if r not in struck]
            if pool:
                struck.add(weighted_pick(rng, pool, region_weight))
        if peril == "storm" and rng.random() < 0.3:
            abroad = [r for r in range(n_region) if r not in here]
            struck.add(weighted_pick(rng, abroad, region_weight))
        event_city.append(weighted_pick(rng, region_cities[min(struck)], city_weight))
        event_peril.append(peril)
        event_regions.append(struck)
    events = _numbered(event_peril)
    for e in range(len(events)):
        facts.extend((events[e], "located_in", region_labels[r]) for r in sorted(event_regions[e]))

    # Claims: each policy has Poisson(``_CLAIM_RATE`` x its vehicles or buildings) attritional
    # claims, made_under it and located_in the holder's country. Each insured building or
    # vehicle in an event's regions (a fire: its city) has a claim arising_from the event with
    # the peril's probability, located_in the asset's country; an accident also strikes each
    # health and life policy of a holder of its regions (``_ACCIDENT``).
    claim_policy: list[int] = []
    claim_event: list[int] = []
    claim_region: list[int] = []
    for p in range(n_policy):
        expected = _CLAIM_RATE[_LINES[policy_line[p]]] * max(1, units[p])
        for _ in range(int(rng.poisson(expected))):
            claim_policy.append(p)
            claim_event.append(-1)
            claim_region.append(city_region[holder_city[policy_holder[p]]])
    for e, peril in enumerate(event_peril):
        _, _, p_building, p_vehicle = next(x for x in _PERILS if x[0] == peril)
        for x in range(len(assets)):
            c = asset_city[x]
            if city_region[c] not in event_regions[e] or peril == "fire" and c != event_city[e]:
                continue
            if rng.random() < (p_building if asset_kind[x] == "building" else p_vehicle):
                claim_policy.append(asset_policy[x])
                claim_event.append(e)
                claim_region.append(city_region[c])
        if peril != "accident":
            continue
        for p in range(n_policy):
            r = city_region[holder_city[policy_holder[p]]]
            q = _ACCIDENT.get(_LINES[policy_line[p]], 0.0)
            if r in event_regions[e] and rng.random() < q:
                claim_policy.append(p)
                claim_event.append(e)
                claim_region.append(r)
    n_claim = len(claim_policy)
    claims = entity_labels("claim", n_claim)
    claim_insurer = [policy_insurer[p] for p in claim_policy]
    claim_line = [_LINES[policy_line[p]] for p in claim_policy]
    for c in range(n_claim):
        facts.append((claims[c], "made_under", policies[claim_policy[c]]))
        facts.append((claims[c], "located_in", countries[region_country[claim_region[c]]]))
        if claim_event[c] >= 0:
            facts.append((claims[c], "arising_from", events[claim_event[c]]))

    # Adjusters: each insurer employs 2 + Poisson(4 x its weight over the mean) claims handlers
    # (employed_by); max(15, N/12) independent loss adjusters, each of a country by weight, are
    # on_panel of 2 + Poisson(1) insurers of it by weight. A claim is handled_by one with its
    # line's probability (``_ADJUSTED``; .9 from a loss event): a claim from an event or on
    # commercial property goes to a loss adjuster with probability .75, another with .12 (or
    # when its insurer has no handler), else to a handler of its insurer (of another insurer of
    # the country with probability .04: outsourced claims handling); a loss adjuster is of the
    # insurer's panel with probability .9, else any of the claim's country.
    handler_insurer: list[int] = []
    for i in range(n_insurer):
        handler_insurer += [i] * (
            2 + int(rng.poisson(4.0 * insurer_weight[i] / insurer_weight.mean()))
        )
    handlers = entity_labels("handler", len(handler_insurer))
    facts.extend((handlers[j], "employed_by", insurers[i]) for j, i in enumerate(handler_insurer))
    staff = [[j for j, o in enumerate(handler_insurer) if o == i] for i in range(n_insurer)]
    n_adjuster = max(15, n // 12)
    adjusters = entity_labels("adjuster", n_adjuster)
    adjuster_country = [_pick(rng, country_weight) for _ in range(n_adjuster)]
    panel_of: list[list[int]] = [[] for _ in range(n_insurer)]
    for a in range(n_adjuster):
        here = [i for i in range(n_insurer) if insurer_country[i] == adjuster_country[a]]
        want = min(len(here), 2 + int(rng.poisson(1.0)))
        w = insurer_weight[here]
        chosen = rng.choice(len(here), size=want, replace=False, p=w / w.sum())
        for j in sorted(int(x) for x in chosen):
            panel_of[here[j]].append(a)
            facts.append((adjusters[a], "on_panel", insurers[here[j]]))
    for c in range(n_claim):
        line, i, k = claim_line[c], claim_insurer[c], region_country[claim_region[c]]
        if rng.random() >= (0.9 if claim_event[c] >= 0 else _ADJUSTED[line]):
            continue
        independent = claim_event[c] >= 0 or line == "property"
        if rng.random() < (0.75 if independent else 0.12) or not staff[i]:
            pool = panel_of[i]
            if not pool or rng.random() >= 0.9:
                pool = [a for a in range(n_adjuster) if adjuster_country[a] == k]
            pool = pool or list(range(n_adjuster))
            facts.append((claims[c], "handled_by", adjusters[pool[int(rng.integers(len(pool)))]]))
            continue
        team = staff[i]
        if rng.random() < 0.04:
            others = [
                o for o in range(n_insurer) if o != i and insurer_country[o] == k and staff[o]
            ]
            team = staff[others[int(rng.integers(len(others)))]] if others else team
        facts.append((claims[c], "handled_by", handlers[team[int(rng.integers(len(team)))]]))

    # Providers: max(15, N/10) repairers (body shops and building restorers) and max(10, N/20)
    # clinics, located_in a city by weight, of log-normal size. A repairer is in_network of each
    # insurer of its country that writes motor, home or property with probability .3; a clinic
    # of each that writes health with probability .5, else motor or liability with .1.
    n_repairer = max(15, n // 10)
    n_clinic = max(10, n // 20)
    providers = entity_labels("repairer", n_repairer) + entity_labels("clinic", n_clinic)
    n_provider = n_repairer + n_clinic
    provider_city = [_pick(rng, city_weight) for _ in range(n_provider)]
    provider_weight = rng.lognormal(0.0, 0.6, n_provider)
    damage = {line_index[x] for x in ("motor", "home", "property")}
    injury = {line_index[x] for x in ("motor", "liability")}
    network: list[set[int]] = []
    for x in range(n_provider):
        joined: set[int] = set()
        for i in range(n_insurer):
            if insurer_country[i] != city_country[provider_city[x]]:
                continue
            if x < n_repairer:
                p = 0.3 if writes[i] & damage else 0.0
            else:
                p = 0.5 if line_index["health"] in writes[i] else 0.1 if writes[i] & injury else 0.0
            if rng.random() < p:
                joined.add(i)
        network.append(joined)
        facts.append((providers[x], "located_in", city_labels[provider_city[x]]))
        facts.extend((providers[x], "in_network", insurers[i]) for i in sorted(joined))

    # Servicing: a motor claim is serviced_by a repairer with probability .85 and (an injury)
    # a clinic with .12, a home or property claim by a repairer with .45, a health claim by a
    # clinic with .95 and a liability claim by a clinic with .25. The provider is one of the
    # claim's region in the insurer's network, when there is one, with probability .6 (.55 a
    # clinic of a health claim, .3 of an injury; claims steering), else any of the region by
    # size (of the country when the region has none).
    def provider(c: int, clinic: bool, steer: float) -> int:
        r, i = claim_region[c], claim_insurer[c]
        span = range(n_repairer, n_provider) if clinic else range(n_repairer)
        local = [x for x in span if city_region[provider_city[x]] == r]
        ours = [x for x in local if i in network[x]]
        if ours and rng.random() < steer:
            return weighted_pick(rng, ours, provider_weight)
        k = region_country[r]
        pool = local or [x for x in span if city_country[provider_city[x]] == k] or list(span)
        return weighted_pick(rng, pool, provider_weight)

    serviced: list[set[int]] = []
    for c in range(n_claim):
        line = claim_line[c]
        used: set[int] = set()
        if line == "motor" and rng.random() < 0.85:
            used.add(provider(c, False, 0.6))
        if line == "motor" and rng.random() < 0.12:
            used.add(provider(c, True, 0.3))
        if line in ("home", "property") and rng.random() < 0.45:
            used.add(provider(c, False, 0.6))
        if line == "health" and rng.random() < 0.95:
            used.add(provider(c, True, 0.55))
        if line == "liability" and rng.random() < 0.25:
            used.add(provider(c, True, 0.3))
        serviced.append(used)
        facts.extend((claims[c], "serviced_by", providers[x]) for x in sorted(used))

    # Fraud: max(12, N/15) investigations. Each looks, with probability .5, into a suspected
    # ring of 2 + Poisson(1.2) claims: of one provider (inflated invoices, probability .5), of
    # one loss event (opportunist claims, .2) or motor claims of one region (staged accidents,
    # .3); otherwise (or when fewer than two such claims are left) into one claim drawn by its
    # line's ``_SUSPICION``. A claim is investigated_in at most one.
    taken: set[int] = set()
    n_investigation = max(12, n // 15)
    investigations = entity_labels("investigation", n_investigation)
    for v in range(n_investigation):
        ring: list[int] = []
        if rng.random() < 0.5:
            want = 2 + int(rng.poisson(1.2))
            u = rng.random()
            if u < 0.5:
                x = int(rng.integers(n_provider))
                pool = [c for c in range(n_claim) if x in serviced[c]]
            elif u < 0.7:
                e = int(rng.integers(len(events)))
                pool = [c for c in range(n_claim) if claim_event[c] == e]
            else:
                r = int(rng.integers(n_region))
                pool = [
                    c for c in range(n_claim) if claim_line[c] == "motor" and claim_region[c] == r
                ]
            pool = [c for c in pool if c not in taken]
            if len(pool) >= 2:
                chosen = rng.choice(len(pool), size=min(want, len(pool)), replace=False)
                ring = sorted(pool[int(j)] for j in chosen)
        if not ring:
            pool = [c for c in range(n_claim) if c not in taken]
            ring = [pool[_pick(rng, np.array([_SUSPICION[claim_line[c]] for c in pool]))]]
        taken |= set(ring)
        facts.extend((claims[c], "investigated_in", investigations[v]) for c in ring)

    kinds = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(region_labels, "region"),
        **dict.fromkeys(city_labels, "city"),
        **dict.fromkeys(regulators, "regulator"),
        **dict.fromkeys(lines, "line"),
        **dict.fromkeys(insurers, "insurer"),
        **dict.fromkeys(reinsurers, "reinsurer"),
        **dict.fromkeys(retro_funds, "retro_fund"),
        **dict.fromkeys(brokers, "broker"),
        **dict.fromkeys(agents, "agent"),
        **{holders[h]: "business" if is_business[h] else "person" for h in range(n)},
        **dict.fromkeys(policies, "policy"),
        **{assets[x]: asset_kind[x] for x in range(len(assets))},
        **dict.fromkeys(events, "event"),
        **dict.fromkeys(claims, "claim"),
        **dict.fromkeys(handlers, "handler"),
        **dict.fromkeys(adjusters, "adjuster"),
        **{providers[x]: "repairer" if x < n_repairer else "clinic" for x in range(n_provider)},
        **dict.fromkeys(investigations, "investigation"),
    }
    return build_world(
        "insurance",
        facts,
        INSURANCE_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kinds,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("linked_claim",),
        inverse_pairs=(("made_under", "has_claim"),),
        shortcuts=(("on_panel", "adjusts_for"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
