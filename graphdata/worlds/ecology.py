r"""An ecology and wildlife-conservation world: species, food webs, protected areas, surveys.

Written in session 33 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from ecology and wildlife conservation (species of
seven classes with their habitats, native ranges in the regions of four countries along the
flyways, aliens and translocated species with their introduced ranges, a food web; protected
areas with their habitats, the corridors of ecological networks and the stopovers of migratory
flyways; breeding atlases; field stations with their monitoring programmes and the researchers
who survey there; Red List categories and the annexes of the EU nature directives; national
species checklists; citizen-science reports), not from how any explainer decides. The rules
(:data:`ECOLOGY_RULES`, length = body atoms):

* ``prey_inverse: eaten_by(Y,X) <- feeds_on(X,Y)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`; 597 trophic links at seed 0) with no exception
  or noise;
* ``breeding_presence: occurs_in(S,A) <- breeds_in(S,A)``, length 1, parallel to the head,
  ``flyway_passage: occurs_in(S,A) <- migrates_along(S,M), stopover_at(M,A)``, length 2, and
  ``monitoring_presence: occurs_in(S,A) <- detected(P,S), run_from(P,T), located_in(T,A)``,
  length 3: **a head with three bodies** of lengths 1, 2 and 3, a breeding record, a stopover
  on the species' flyway or a detection by a monitoring programme run from a field station in
  the area; they mostly ground different facts (of the 636 ``occurs_in`` facts at seed 0, .38
  have only a breeding record, .31 only a stopover, .18 only a detection, .06 a breeding record
  and a detection, .04 a stopover and a detection, .02 two bodies otherwise or all three, .02
  none);
* ``native_checklist: on_checklist(S,Y) <- native_to(S,R), located_in(R,Y)``, length 2,
  ``alien_checklist: on_checklist(S,Y) <- introduced_to(S,R), located_in(R,Y)``, length 2, and
  ``area_checklist: on_checklist(S,Y) <- occurs_in(S,A), located_in(A,R), located_in(R,Y)``,
  length 3, the national species checklists: **a second head with three bodies**, two chains
  into the country hubs through the native and the introduced range and a chain up the place
  hierarchy through the **derived** ``occurs_in`` (of the 622 ``on_checklist`` facts at seed 0,
  .41 have only the native range, .36 the native range and an occurrence, .11 only an
  occurrence, mostly a migrant on passage in a country outside its range, .06 only the
  introduced range, .04 the introduced range and an occurrence, .004 both ranges and .02 none);
* ``corridor_link: connected_to(A,B) <- corridor_joins(C,A), corridor_joins(C,B), A != B``,
  length 2, the protected areas an ecological corridor links: a **symmetric** head
  (:attr:`~graphdata.worlds.World.symmetric`, 122 facts at seed 0 from 25 corridors joining two
  to five areas, 11 of them across a border, no exception or noise) from a **star** on the
  corridor with an **inequality between the two head variables**;
* ``site_designation: designated_for(A,S) <- occurs_in(S,A), listed_as(S,list_annex_ii)``,
  length 2, the species a protected area is designated for (a special area of conservation of
  the Habitats Directive), **anchored on the constant** ``list_annex_ii`` through the **derived**
  three-body ``occurs_in``; the areas where a bird of ``list_birds_annex_i`` occurs (102 pairs at
  seed 0; that annex is in no body) and where a species only on ``list_annex_iv`` occurs (54
  pairs) are not designated for it;
* ``invasive_threat: threatens(I,S) <- feeds_on(I,S), introduced_to(I,R), native_to(S,R)``,
  length 3, an introduced predator or grazer threatening a native species it feeds on in a
  region where it was introduced: a **triangle** (species, species, region) whose first atom is
  parallel to the head (59 triangles at seed 0; the 24 other food links of introduced species,
  to another alien or to a species not native where the consumer was introduced, threaten
  nothing);
* ``survey_licence: licensed_for(X,S) <- works_on(X,P), detected(P,S),
  listed_as(S,list_annex_iv)``, length 3, a chain from the researcher through the programme to
  a strictly protected species that ends on the **constant** ``list_annex_iv`` (87 groundable
  pairs at seed 0; the 135 pairs of a researcher with a detected species on ``list_annex_ii``
  alone need no licence);
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``reported_in`` (citizen-science reports of species present in or passing an area, by the
  class's reporting rate, plus misidentifications) links .56 of the ``occurs_in`` pairs, and
  .44 of its training pairs are ``occurs_in`` pairs (seed 0);
* rules of length 1 (two), 2 (five) and 3 (four); 1-1 (``run_from``), 1-N (``stopover_at``,
  ``threatens``), N-1 (``in_class``, ``listed_as``, ``located_in``, ``migrates_along``,
  ``works_on``) and N-N (``breeds_in``, ``connected_to``, ``corridor_joins``,
  ``designated_for``, ``detected``, ``eaten_by``, ``feeds_on``, ``has_habitat``,
  ``introduced_to``, ``licensed_for``, ``native_to``, ``occurs_in``, ``on_checklist``,
  ``reported_in``) relations (by count at seed 0);
* **exceptions**: 3 % of ``breeding_presence``'s heads (a breeding population lost since the
  atlas), 8 % of ``flyway_passage``'s (a stopover the species overflies), 4 % of
  ``monitoring_presence``'s (a detection on a transect outside the area's boundary), 2 % of
  ``native_checklist``'s (a population extinct in the country), 5 % of ``alien_checklist``'s
  (an alien that failed to establish), 4 % of ``area_checklist``'s (a vagrant left off the
  checklist), 12 % of ``site_designation``'s (a population graded non-significant on the site's
  standard data form), 10 % of ``invasive_threat``'s (a prey kept safe by predator control) and
  6 % of ``survey_licence``'s (a programme that samples without handling, by acoustic or eDNA
  surveys) are withheld; a withheld ``occurs_in`` fact also leaves out the heads only it
  grounds. **Noise**: 2 % of the ``occurs_in`` (an unpublished survey), 2 % of the
  ``on_checklist`` (a historic record), 3 % of the ``designated_for`` (a feature listed from an
  outdated survey), 4 % of the ``threatens`` (competition or disease rather than predation) and
  3 % of the ``licensed_for`` facts (a licence for a project that has not yet recorded the
  species) have no grounding; a noise ``occurs_in`` fact feeds the other bodies like any other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 583
entities (300 species, 100 researchers, 50 protected areas, 36 programmes, 25 field stations,
25 corridors, 18 regions, 8 habitats, 7 classes, 7 lists (four Red List categories and three
annexes), 4 countries, 3 flyways), 22 relations; 6,170 train, 216 valid and 214 test triples;
the valid+test targets per rule of their shortest grounding are ``prey_inverse`` 120,
``native_checklist`` 93, ``breeding_presence`` 64, ``flyway_passage`` 40, ``corridor_link`` 24,
``monitoring_presence`` 21, ``alien_checklist`` 16, ``survey_licence`` 16, ``invasive_threat``
12, ``area_checklist`` 11, ``site_designation`` 8 (length 1: 184, 2: 181, 3: 60), and 5 noise
facts; .25 of the targets have more than one grounding; 72 exceptions (34 ``occurs_in``, 20
``on_checklist``, 9 ``designated_for``, 9 ``licensed_for``, and by chance no ``threatens`` at
this seed: 6-9 at seeds 1-3). **Hubs**: ``country_germany`` has 169 distinct training
neighbours, ``region_germany_2`` 128, ``habitat_forest`` 127, the busiest protected area 74,
``class_bird`` 71, ``list_annex_iv`` 41 and the busiest programme 33 (a species a median of
16); the 2-hop enclosing subgraphs of 200 sampled test targets hold a median of 3,401.5
training triples (p90 4,412.8; at seeds 1-3, 40 targets each, p90 4,386.7, 4,022.1 and
4,331.5).

**Base facts** (:func:`ecology_world`), with :math:`N` = ``size`` species: the regions of
``_COUNTRIES`` (north to south) are ``located_in`` their country, of log-normal weight;
:math:`\max(30, \lfloor N/6 \rfloor)` protected areas, one in each region first and the rest by
weight, are ``located_in`` a region, of log-normal extent, and ``has_habitat`` 1 +
Poisson(:math:`1.5\sqrt{\text{extent}}`) habitats of ``_HABITATS`` (at most six). Each species
is ``in_class`` a class of ``_CLASSES`` by share and ``has_habitat`` one or (probability .5)
two habitats by the class's affinities. An alien (the class's share: .25 of the fish, .15 of
the plants, .12 of the mammals, .03-.06 of the rest) is ``introduced_to`` 1 + Poisson(2.5)
regions; a native species is ``native_to`` 1 + Poisson(2.5) regions (the first by weight, each
next one of its countries with probability .65, else of a neighbouring country), with
probability .03 (.1 a fish, stocked) also ``introduced_to`` one outside its range, is
``listed_as`` its Red List category unless of least concern (drawn by range size: an endemic of
one region is threatened with probability .5, a species of four regions or more .12) and on
``list_annex_ii``, ``list_annex_iv`` or ``list_birds_annex_i`` with the class's probabilities of
``_ANNEXES`` (doubled for a threatened species). A species is present (not in the graph) in a
protected area of its native or introduced regions with probability .8 when they share a
habitat, else .03 (.95 and .1 for an Annex II species), and ``breeds_in`` it with the class's
atlas probability. A consumer ``feeds_on`` 1 + Poisson(1.5) species of its regions (1 +
Poisson(3) an alien), of classes drawn by its diet (``_DIET``), by abundance and three times
more likely in a shared habitat. Each flyway of ``_FLYWAYS`` has :math:`\max(4, \lfloor A/8
\rfloor)` stopovers (``stopover_at``), areas drawn by extent and three times more likely with
wetland, freshwater or coastal habitat; a migrant (two fifths of the native birds and a few
bats and insects) ``migrates_along`` one flyway (a second with probability .25) and passes its
stopovers. :math:`\max(12, \lfloor N/12 \rfloor)` field stations are ``located_in`` an area by
extent and run (``run_from``) 1 + Poisson(.35) monitoring programmes each, aimed at one class
(a second with probability .4), which have ``detected`` a species of their classes present in
the station's area with the class's probability (.9 for a species on Annex II or IV) or
passing it on a flyway (half as likely). :math:`\max(30, \lfloor N/3 \rfloor)` researchers
``works_on`` a programme by staff weight (a second with probability .35).
:math:`\max(10, \lfloor N/12 \rfloor)` corridors each ``corridor_joins`` an area and 1 +
Poisson(.6) more, of its region, its country or a neighbouring country. A species present in
or passing an area is ``reported_in`` it with the class's reporting probability, and each area
has Poisson(1.5) misidentified reports of a species of its region that is not there.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`ECOLOGY_RULES`.
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

__all__ = ["ECOLOGY_RULES", "ecology_world"]

#: The planted rules: who is eaten by whom (an inverse pair), where a species occurs (a breeding
#: record, a stopover on its flyway or a monitoring programme's detection), the national
#: checklists (native range, introduced range, or an occurrence in a protected area), ecological
#: networks (symmetric, a star with an inequality), protected-area designation (a constant,
#: through the derived occurrences), invasive predators (a triangle) and survey licences (a
#: chain ending on a constant).
ECOLOGY_RULES = """\
prey_inverse: eaten_by(Y,X) <- feeds_on(X,Y)
breeding_presence: occurs_in(S,A) <- breeds_in(S,A)
flyway_passage: occurs_in(S,A) <- migrates_along(S,M), stopover_at(M,A)
monitoring_presence: occurs_in(S,A) <- detected(P,S), run_from(P,T), located_in(T,A)
native_checklist: on_checklist(S,Y) <- native_to(S,R), located_in(R,Y)
alien_checklist: on_checklist(S,Y) <- introduced_to(S,R), located_in(R,Y)
area_checklist: on_checklist(S,Y) <- occurs_in(S,A), located_in(A,R), located_in(R,Y)
corridor_link: connected_to(A,B) <- corridor_joins(C,A), corridor_joins(C,B), A != B
site_designation: designated_for(A,S) <- occurs_in(S,A), listed_as(S,list_annex_ii)
invasive_threat: threatens(I,S) <- feeds_on(I,S), introduced_to(I,R), native_to(S,R)
survey_licence: licensed_for(X,S) <- works_on(X,P), detected(P,S), listed_as(S,list_annex_iv)
"""

#: The countries (entity ``country_<name>``), north to south along the flyways: weight among
#: regions and protected areas, and the number of regions (entity ``region_<name>_<i>``). A
#: species' range spreads to the regions of its countries and of the neighbouring countries.
_COUNTRIES = (
    ("sweden", 0.20, 4),
    ("germany", 0.28, 5),
    ("france", 0.32, 5),
    ("spain", 0.20, 4),
)
#: Habitat types (entity ``habitat_<name>``) and their shares among the habitats of protected
#: areas.
_HABITATS = (
    ("forest", 0.22),
    ("grassland", 0.12),
    ("wetland", 0.16),
    ("freshwater", 0.14),
    ("heathland", 0.08),
    ("coastal", 0.10),
    ("montane", 0.10),
    ("farmland", 0.08),
)
#: Taxonomic classes (entity ``class_<name>``): share of the species, share of migrants (birds,
#: bats, butterflies and dragonflies that follow a flyway), share of aliens (introduced from
#: outside the four countries), and the habitat affinities in ``_HABITATS`` order.
_CLASSES = (
    ("plant", 0.24, 0.00, 0.15, (0.25, 0.20, 0.12, 0.05, 0.12, 0.08, 0.12, 0.06)),
    ("insect", 0.20, 0.05, 0.06, (0.22, 0.25, 0.12, 0.08, 0.10, 0.05, 0.08, 0.10)),
    ("bird", 0.22, 0.40, 0.04, (0.22, 0.10, 0.20, 0.08, 0.05, 0.15, 0.08, 0.12)),
    ("mammal", 0.12, 0.08, 0.12, (0.35, 0.15, 0.08, 0.05, 0.05, 0.04, 0.18, 0.10)),
    ("fish", 0.10, 0.00, 0.25, (0.00, 0.00, 0.10, 0.75, 0.00, 0.15, 0.00, 0.00)),
    ("amphibian", 0.07, 0.00, 0.03, (0.25, 0.05, 0.40, 0.25, 0.00, 0.00, 0.05, 0.00)),
    ("reptile", 0.05, 0.00, 0.04, (0.15, 0.25, 0.05, 0.00, 0.30, 0.10, 0.15, 0.00)),
)
_CLASS_NAMES = tuple(name for name, *_ in _CLASSES)
#: A consumer's diet: the weight of each prey class (in ``_CLASSES`` order) for each class;
#: plants eat nothing, an insect is a herbivore or a predator of insects.
_DIET = {
    "plant": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "insect": (0.65, 0.35, 0.0, 0.0, 0.0, 0.0, 0.0),
    "bird": (0.20, 0.50, 0.0, 0.05, 0.15, 0.05, 0.05),
    "mammal": (0.45, 0.20, 0.10, 0.15, 0.05, 0.05, 0.0),
    "fish": (0.05, 0.50, 0.0, 0.0, 0.35, 0.10, 0.0),
    "amphibian": (0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "reptile": (0.0, 0.50, 0.0, 0.20, 0.0, 0.20, 0.10),
}
#: Per class: the probability that a breeding atlas records a present species breeding, that a
#: monitoring programme aimed at its class detects it, and that a citizen scientist reports it.
_RECORDING = {
    "plant": (0.00, 0.80, 0.50),
    "insect": (0.00, 0.50, 0.35),
    "bird": (0.55, 0.80, 0.70),
    "mammal": (0.25, 0.60, 0.45),
    "fish": (0.30, 0.60, 0.15),
    "amphibian": (0.50, 0.70, 0.40),
    "reptile": (0.25, 0.50, 0.35),
}
#: Per class: the probability of a native species being on the Habitats Directive's Annex II
#: (designation of protected areas), Annex IV (strict protection) and the Birds Directive's
#: Annex I (``list_birds_annex_i``, in no body), doubled for a threatened species (vulnerable or
#: worse, capped at 1). Birds are on neither Habitats Directive annex.
_ANNEXES = {
    "plant": (0.06, 0.04, 0.0),
    "insect": (0.06, 0.05, 0.0),
    "bird": (0.0, 0.0, 0.18),
    "mammal": (0.20, 0.35, 0.0),
    "fish": (0.20, 0.05, 0.0),
    "amphibian": (0.20, 0.60, 0.0),
    "reptile": (0.12, 0.60, 0.0),
}
#: Regional Red List categories (entity ``redlist_<name>``) by the number of regions of a native
#: species' range (one, two or three, four or more). A species of least concern is on no list,
#: and an alien is not assessed (regional Red Lists assess native species only).
_REDLIST = ("lc", "nt", "vu", "en", "cr")
_REDLIST_BY_RANGE = (
    (0.30, 0.20, 0.22, 0.18, 0.10),
    (0.50, 0.18, 0.17, 0.10, 0.05),
    (0.75, 0.13, 0.08, 0.03, 0.01),
)
#: The flyways (entity ``flyway_<name>``) and their shares among migrants.
_FLYWAYS = (("east_atlantic", 0.5), ("west_european", 0.3), ("central_european", 0.2))
#: The focus of a monitoring programme: the weight of each class (``_CLASSES`` order).
_PROGRAMME_FOCUS = (0.16, 0.14, 0.26, 0.20, 0.06, 0.12, 0.06)
#: Withheld heads: a breeding population lost since the atlas, a stopover the species overflies,
#: a detection on a transect outside the area's boundary, a population extinct in the country,
#: an alien that failed to establish, a vagrant left off the checklist, a feature graded
#: non-significant on the site's standard data form, a prey kept safe by predator control, a
#: programme that samples without handling (acoustic or eDNA surveys need no licence).
_EXCEPTION_RATES = (
    ("breeding_presence", 0.03),
    ("flyway_passage", 0.08),
    ("monitoring_presence", 0.04),
    ("native_checklist", 0.02),
    ("alien_checklist", 0.05),
    ("area_checklist", 0.04),
    ("site_designation", 0.12),
    ("invasive_threat", 0.10),
    ("survey_licence", 0.06),
)
#: Heads without grounding: an occurrence from an unpublished survey, a checklist entry from a
#: historic record, a feature listed from an outdated survey, a threat by competition or
#: disease rather than predation, a licence for a project that has not yet recorded the species.
_NOISE_RATES = (
    ("occurs_in", 0.02),
    ("on_checklist", 0.02),
    ("designated_for", 0.03),
    ("threatens", 0.04),
    ("licensed_for", 0.03),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def ecology_world(
    size: int = 300,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the ecology world (module docstring) and its ground truth.

    Args:
        size: The number of species :math:`N \ge 80`. Default 300 (583 entities, 22 relations
            and 6,600 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"ecology"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = ecology_world(80, seed=0)
        >>> w.exception_rates["site_designation"], w.inverse_pairs
        (0.12, (('feeds_on', 'eaten_by'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "on_checklist")
        [2, 2, 3]
        >>> w.symmetric, w.shortcuts
        (('connected_to',), (('reported_in', 'occurs_in'),))
    """
    check_world_arguments(size, 80, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country = len(_COUNTRIES)
    countries = [f"country_{name}" for name, _, _ in _COUNTRIES]
    country_weight = np.array([w for _, w, _ in _COUNTRIES])
    facts: list[LabeledTriple] = []

    # Regions: each country's, located_in it, of log-normal weight times the country's.
    region_labels: list[str] = []
    region_country: list[int] = []
    for k, (name, _, count) in enumerate(_COUNTRIES):
        for i in range(count):
            region_labels.append(f"region_{name}_{i}")
            region_country.append(k)
    n_region = len(region_labels)
    region_weight = rng.lognormal(0.0, 0.5, n_region) * country_weight[region_country]
    facts.extend(
        (region_labels[r], "located_in", countries[k]) for r, k in enumerate(region_country)
    )

    def regions_of(ks: set[int]) -> list[int]:
        return [r for r in range(n_region) if region_country[r] in ks]

    # Protected areas: max(30, N/6), one in each region first and the rest by region weight,
    # located_in their region, of log-normal extent; each has 1 + Poisson(1.5 sqrt(extent))
    # habitats (at most six; a larger area holds more), drawn by share.
    habitat_labels = [f"habitat_{name}" for name, _ in _HABITATS]
    habitat_share = np.array([p for _, p in _HABITATS])
    n_habitat = len(_HABITATS)
    n_area = max(30, n // 6)
    area_region = list(range(n_region)) + [
        _pick(rng, region_weight) for _ in range(n_area - n_region)
    ]
    area_weight = rng.lognormal(0.0, 0.7, n_area)
    areas = entity_labels("area", n_area)
    area_habitats: list[set[int]] = []
    for a in range(n_area):
        want = min(6, 1 + int(rng.poisson(1.5 * np.sqrt(area_weight[a]))))
        chosen = rng.choice(n_habitat, size=want, replace=False, p=habitat_share)
        area_habitats.append({int(h) for h in chosen})
        facts.append((areas[a], "located_in", region_labels[area_region[a]]))
        facts.extend((areas[a], "has_habitat", habitat_labels[h]) for h in sorted(area_habitats[a]))
    region_areas = {r: [a for a in range(n_area) if area_region[a] == r] for r in range(n_region)}

    # Species: N, in_class by share; a habitat by the class's affinities (a second with
    # probability .5); a log-normal abundance. An alien (the class's share) is native to none of
    # the regions and introduced_to 1 + Poisson(2.5) of them (the first by weight, each next one
    # of its countries with probability .6, else of a neighbouring country); a native species
    # is native_to 1 + Poisson(2.5) regions (the same way, staying with probability .65), and
    # with probability .03 (.1 a fish: stocking) introduced_to one region outside its range. Its
    # Red List category is drawn by its range size (listed_as unless of least concern), and its
    # annexes by its class and category.
    species = entity_labels("species", n)
    class_labels = [f"class_{name}" for name in _CLASS_NAMES]
    class_share = np.array([c[1] for c in _CLASSES])
    klass = [_pick(rng, class_share) for _ in range(n)]
    abundance = rng.lognormal(0.0, 1.0, n)
    habitats: list[set[int]] = []
    native: list[set[int]] = []
    introduced: list[set[int]] = []
    alien: list[bool] = []
    designated: list[bool] = []
    annexed: list[bool] = []
    migrant: list[bool] = []
    list_labels = [f"redlist_{c}" for c in _REDLIST[1:]]
    list_labels += ["list_annex_ii", "list_annex_iv", "list_birds_annex_i"]

    def spread(count: int, first: int, stay: float) -> set[int]:
        chosen = {first}
        for _ in range(count - 1):
            ks = {region_country[r] for r in chosen}
            if rng.random() >= stay:
                ks = {j for k in ks for j in (k - 1, k + 1) if 0 <= j < n_country} - ks or ks
            pool = [r for r in regions_of(ks) if r not in chosen]
            if pool:
                chosen.add(weighted_pick(rng, pool, region_weight))
        return chosen

    for s in range(n):
        c = klass[s]
        name, _, p_migrant, p_alien, affinity = _CLASSES[c]
        facts.append((species[s], "in_class", class_labels[c]))
        w = np.array(affinity)
        own = {_pick(rng, w)}
        if rng.random() < 0.5:
            own.add(_pick(rng, w))
        habitats.append(own)
        facts.extend((species[s], "has_habitat", habitat_labels[h]) for h in sorted(own))
        is_alien = bool(rng.random() < p_alien)
        alien.append(is_alien)
        migrant.append(not is_alien and bool(rng.random() < p_migrant))
        if is_alien:
            native.append(set())
            count = 1 + int(rng.poisson(2.5))
            introduced.append(spread(count, _pick(rng, region_weight), 0.6))
            designated.append(False)
            annexed.append(False)
            continue
        range_ = spread(1 + int(rng.poisson(2.5)), _pick(rng, region_weight), 0.65)
        native.append(range_)
        elsewhere = [r for r in range(n_region) if r not in range_]
        moved: set[int] = set()
        if elsewhere and rng.random() < (0.1 if name == "fish" else 0.03):
            moved.add(weighted_pick(rng, elsewhere, region_weight))
        introduced.append(moved)
        facts.extend((species[s], "native_to", region_labels[r]) for r in sorted(range_))
        band = 0 if len(range_) == 1 else 1 if len(range_) <= 3 else 2
        category = _pick(rng, np.array(_REDLIST_BY_RANGE[band]))
        if category > 0:
            facts.append((species[s], "listed_as", f"redlist_{_REDLIST[category]}"))
        boost = 2.0 if category >= 2 else 1.0
        annexes = [rng.random() < min(1.0, boost * p) for p in _ANNEXES[name]]
        designated.append(annexes[0])
        annexed.append(annexes[0] or annexes[1])
        facts.extend(
            (species[s], "listed_as", label) for label, y in zip(list_labels[-3:], annexes) if y
        )
    for s in range(n):
        facts.extend((species[s], "introduced_to", region_labels[r]) for r in sorted(introduced[s]))

    # Presence (not in the graph): a species is present in a protected area of a region of its
    # native or introduced range with probability .8 if they share a habitat, else .03 (.95 and
    # .1 for an Annex II species: the areas were chosen for them). A breeding atlas records it
    # breeding there (breeds_in) with the class's probability.
    present: list[set[int]] = []
    for s in range(n):
        here: set[int] = set()
        for r in sorted(native[s] | introduced[s]):
            for a in region_areas[r]:
                if habitats[s] & area_habitats[a]:
                    p = 0.95 if designated[s] else 0.8
                else:
                    p = 0.10 if designated[s] else 0.03
                if rng.random() < p:
                    here.add(a)
        present.append(here)
        p_breed = _RECORDING[_CLASS_NAMES[klass[s]]][0]
        facts.extend(
            (species[s], "breeds_in", areas[a]) for a in sorted(here) if rng.random() < p_breed
        )

    # Food web: a consumer feeds_on 1 + Poisson(1.5) prey species (1 + Poisson(3) an alien:
    # successful invaders are generalists), each of a class drawn by its diet, among the species
    # of its range (native or introduced; aliens there included) by abundance, three times more
    # likely when they share a habitat.
    in_region: dict[int, set[int]] = {r: set() for r in range(n_region)}
    for s in range(n):
        for r in native[s] | introduced[s]:
            in_region[r].add(s)
    for s in range(n):
        diet = np.array(_DIET[_CLASS_NAMES[klass[s]]])
        if diet.sum() == 0:
            continue
        sympatric = set().union(*(in_region[r] for r in native[s] | introduced[s])) - {s}
        prey: set[int] = set()
        for _ in range(1 + int(rng.poisson(3.0 if alien[s] else 1.5))):
            c = _pick(rng, diet)
            pool = sorted(x for x in sympatric if klass[x] == c)
            if not pool:
                continue
            w = np.array([abundance[x] * (3.0 if habitats[x] & habitats[s] else 1.0) for x in pool])
            prey.add(pool[_pick(rng, w)])
        facts.extend((species[s], "feeds_on", species[x]) for x in sorted(prey))

    # Flyways: each has max(4, A/8) stopovers (stopover_at), protected areas drawn by extent,
    # three times more likely with wetland, freshwater or coastal habitat. A migrant
    # migrates_along one flyway by share (a second with probability .25) and passes its
    # stopovers.
    flyways = [f"flyway_{name}" for name, _ in _FLYWAYS]
    flyway_share = np.array([p for _, p in _FLYWAYS])
    water = {habitat_labels.index(f"habitat_{h}") for h in ("wetland", "freshwater", "coastal")}
    stop_weight = area_weight * np.array(
        [3.0 if area_habitats[a] & water else 1.0 for a in range(n_area)]
    )
    stopovers: list[list[int]] = []
    for f in range(len(flyways)):
        want = max(4, n_area // 8)
        chosen = rng.choice(n_area, size=want, replace=False, p=stop_weight / stop_weight.sum())
        stopovers.append(sorted(int(a) for a in chosen))
        facts.extend((flyways[f], "stopover_at", areas[int(a)]) for a in sorted(chosen))
    passing: list[set[int]] = [set() for _ in range(n)]
    for s in range(n):
        if not migrant[s]:
            continue
        routes = {_pick(rng, flyway_share)}
        if rng.random() < 0.25:
            routes.add(_pick(rng, flyway_share))
        for f in sorted(routes):
            facts.append((species[s], "migrates_along", flyways[f]))
            passing[s] |= set(stopovers[f])

    # Field stations: max(12, N/12), located_in a protected area by extent; each runs
    # 1 + Poisson(.35) monitoring programmes (run_from), each aimed at one class by
    # ``_PROGRAMME_FOCUS`` (a second with probability .4), that detect a species of its classes
    # present in the station's area, or passing it on a flyway (half as likely), with the
    # class's detection probability, or .9 for a species on Annex II or IV (the surveillance of
    # Article 11 of the Habitats Directive targets them).
    n_station = max(12, n // 12)
    stations = entity_labels("station", n_station)
    station_area = [_pick(rng, area_weight) for _ in range(n_station)]
    facts.extend((stations[t], "located_in", areas[station_area[t]]) for t in range(n_station))
    focus_weight = np.array(_PROGRAMME_FOCUS)
    programme_station: list[int] = []
    programme_focus: list[set[int]] = []
    for t in range(n_station):
        for _ in range(1 + int(rng.poisson(0.35))):
            focus = {_pick(rng, focus_weight)}
            if rng.random() < 0.4:
                focus.add(_pick(rng, focus_weight))
            programme_station.append(t)
            programme_focus.append(focus)
    n_programme = len(programme_station)
    programmes = entity_labels("programme", n_programme)
    for p in range(n_programme):
        facts.append((programmes[p], "run_from", stations[programme_station[p]]))
        a = station_area[programme_station[p]]
        for s in range(n):
            if klass[s] not in programme_focus[p]:
                continue
            detect = 0.9 if annexed[s] else _RECORDING[_CLASS_NAMES[klass[s]]][1]
            if a in present[s] and rng.random() < detect:
                facts.append((programmes[p], "detected", species[s]))
            elif a in passing[s] and rng.random() < 0.5 * detect:
                facts.append((programmes[p], "detected", species[s]))

    # Researchers: max(30, N/3), each works_on a programme by its log-normal staff weight and,
    # with probability .35, a second one (of the same station with probability .6).
    n_researcher = max(30, n // 3)
    researchers = entity_labels("researcher", n_researcher)
    staff = rng.lognormal(0.0, 0.6, n_programme)
    everyone = list(range(n_programme))
    for x in range(n_researcher):
        first = weighted_pick(rng, everyone, staff)
        mine = {first}
        if rng.random() < 0.35:
            same = [p for p in everyone if programme_station[p] == programme_station[first]]
            pool = same if rng.random() < 0.6 and len(same) > 1 else everyone
            mine.add(weighted_pick(rng, pool, staff))
        facts.extend((researchers[x], "works_on", programmes[p]) for p in sorted(mine))

    # Corridors: max(10, N/12), each corridor_joins a protected area by extent and
    # 1 + Poisson(.6) more, each of the first one's region (probability .5), of its country
    # (.3) or of a neighbouring country (.2, a transboundary corridor), by extent; the next
    # wider of these pools when a pool has no area left.
    n_corridor = max(10, n // 12)
    corridors = entity_labels("corridor", n_corridor)
    for c in range(n_corridor):
        first = _pick(rng, area_weight)
        joined = {first}
        k = region_country[area_region[first]]
        near = {j for j in (k - 1, k + 1) if 0 <= j < n_country}
        pools = [
            region_areas[area_region[first]],
            [a for r in regions_of({k}) for a in region_areas[r]],
            [a for r in regions_of(near) for a in region_areas[r]],
            list(range(n_area)),
        ]
        for _ in range(1 + int(rng.poisson(0.6))):
            u = rng.random()
            level = 0 if u < 0.5 else 1 if u < 0.8 else 2
            pool = [a for a in pools[level] if a not in joined]
            while not pool:
                level += 1
                pool = [a for a in pools[level] if a not in joined]
            joined.add(weighted_pick(rng, pool, area_weight))
        facts.extend((corridors[c], "corridor_joins", areas[a]) for a in sorted(joined))

    # Citizen science: a species present in or passing a protected area is reported_in it with
    # the class's probability; each area also has Poisson(1.5) misidentified reports of a
    # species of its regions (native or introduced) that is not there.
    for s in range(n):
        p_report = _RECORDING[_CLASS_NAMES[klass[s]]][2]
        for a in sorted(present[s] | passing[s]):
            if rng.random() < p_report:
                facts.append((species[s], "reported_in", areas[a]))
    for a in range(n_area):
        pool = sorted(
            s for s in in_region[area_region[a]] if a not in present[s] and a not in passing[s]
        )
        for _ in range(int(rng.poisson(1.5))):
            if pool:
                facts.append((species[pool[int(rng.integers(len(pool)))]], "reported_in", areas[a]))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(region_labels, "region"),
        **dict.fromkeys(areas, "area"),
        **dict.fromkeys(habitat_labels, "habitat"),
        **dict.fromkeys(class_labels, "class"),
        **dict.fromkeys(list_labels, "list"),
        **dict.fromkeys(species, "species"),
        **dict.fromkeys(flyways, "flyway"),
        **dict.fromkeys(stations, "station"),
        **dict.fromkeys(programmes, "programme"),
        **dict.fromkeys(researchers, "researcher"),
        **dict.fromkeys(corridors, "corridor"),
    }
    return build_world(
        "ecology",
        facts,
        ECOLOGY_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kind_types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("connected_to",),
        inverse_pairs=(("feeds_on", "eaten_by"),),
        shortcuts=(("reported_in", "occurs_in"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
