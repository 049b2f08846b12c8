r"""A museums and art-provenance world: artworks, artists, museums, the market, restitution.

Written in session 34 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from museums and the provenance of art (artworks by
the artists of fourteen schools and movements from the Italian Renaissance to contemporary art,
in eight media, signed or not and listed or not in their artist's catalogue raisonné; museums of
four kinds in the cities of eight countries with their collections and the exhibitions they host
and lend to; modern galleries that represent artists from the nineteenth century on and
old-master dealers, auction houses and the names their sale catalogues give; gaps in a work's
provenance by period; works confiscated from collectors in 1933-1945, the collectors' heirs and
their restitution claims), not from how any explainer decides. The rules
(:data:`HERITAGE_RULES`, length = body atoms):

* ``collection_inverse: holds(M,A) <- in_collection(A,M)``, length 1, an **inverse pair**
  (recorded in :attr:`~graphdata.worlds.World.inverse_pairs`; 712 works in museums at seed 0)
  with no exception or noise;
* ``signed_attribution: attributed_to(A,P) <- signed_by(A,P)``, length 1, parallel to the head,
  and ``catalogue_attribution: attributed_to(A,P) <- listed_in(A,K), catalogue_of(K,P)``, length
  2, a chain through the artist's catalogue raisonné: **a head with two bodies**, a work's
  attribution from its signature or its catalogue entry (of the 712 ``attributed_to`` facts at
  seed 0, .46 have only a signature, .35 both, .16 only a catalogue entry and .03 neither); the
  182 works neither signed nor catalogued (old masters' unsigned panels, drawings) are not
  attributed;
* ``joint_heirs: co_heir(H,J) <- heir_of(H,C), heir_of(J,C), H != J``, length 2, the joint heirs
  of a dispossessed collector: a **symmetric** head (:attr:`~graphdata.worlds.World.symmetric`,
  176 facts at seed 0 from 30 collectors with one to five heirs; the 7 collectors with a single
  heir link nothing; no exception or noise) from a **star** on the collector with an
  **inequality between the two head variables**;
* ``gap_review: under_review(A,M) <- in_collection(A,M), gap_in(A,period_1933_1945)``, length 2,
  a **star** on the work whose first atom is parallel to the head, **anchored on the constant**
  ``period_1933_1945``, and ``looted_review: under_review(A,M) <- in_collection(A,M),
  looted_from(A,C)``, length 2: **a second head with two bodies**, the works a museum reviews
  under the Washington Principles, for a gap in their provenance in 1933-1945 or a recorded
  confiscation (of the 142 ``under_review`` facts at seed 0, .39 have only the gap, .37 only the
  confiscation, .20 both and .04 neither); the 105 works in museums with gaps in other periods
  only, and the 16 confiscated works in private hands, are not reviewed;
* ``heir_claim: claim_against(H,M) <- heir_of(H,C), looted_from(A,C), in_collection(A,M)``,
  length 3, a chain from an heir through the collector and a work confiscated from them to the
  museum holding it (199 groundable pairs at seed 0);
* ``museum_lender: lender_to(M,N) <- in_collection(A,M), shown_in(A,E), hosted_by(E,N), M !=
  N``, length 3, a chain from a museum through a work of its collection and an exhibition to the
  host, with an **inequality between the two head variables**: the host's own works in its
  exhibition (45 of the 368 works shown at seed 0) are no loans, nor are the 47 works lent from
  private hands;
* ``primary_market: primary_dealer(A,D) <- sold_by(A,D), attributed_to(A,P), represents(D,P)``,
  length 3, the gallery that sold a work of an artist it represents: a **triangle** (work,
  gallery, artist) whose first atom is parallel to the head and whose second is the **derived**
  two-body attribution (361 groundable pairs at seed 0; sales by auction houses and old-master
  dealers are never primary);
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``catalogued_as`` (the artist a sale catalogue names for a work that came up at auction: its
  maker, whether or not the work is attributed, or with probability .12 another artist of its
  school) links .50 of the ``attributed_to`` pairs, and .66 of its training pairs are
  ``attributed_to`` pairs (seed 0);
* rules of length 1 (two), 2 (four) and 3 (three); 1-1 (``catalogue_of``), 1-N (``holds``,
  ``represents``), N-1 (``attributed_to``, ``catalogued_as``, ``gap_in``, ``heir_of``,
  ``hosted_by``, ``in_collection``, ``listed_in``, ``located_in``, ``looted_from``, ``medium``,
  ``member_of``, ``primary_dealer``, ``shown_in``, ``signed_by``, ``under_review``) and N-N
  (``claim_against``, ``co_heir``, ``lender_to``, ``sold_by``) relations (by count at seed 0);
* **exceptions**: 4 % of ``signed_attribution``'s heads (a signature found to be a later
  addition), 5 % of ``catalogue_attribution``'s (a catalogue entry rejected by later
  scholarship), 6 % of ``gap_review``'s (a gap the museum's research has already closed), 10 %
  of ``looted_review``'s (a case settled by a just and fair solution that left the work in the
  museum), 10 % of ``heir_claim``'s (heirs who waived their claim or whose family was
  compensated after the war), 5 % of ``museum_lender``'s (a work on long-term deposit, lent by
  its owner rather than the museum holding it) and 8 % of ``primary_market``'s (a work the
  artist's gallery resold for a collector on the secondary market) are withheld; a withheld
  ``attributed_to`` fact also leaves out the primary dealers only it grounds. **Noise**: 3 % of
  the ``attributed_to`` (an attribution on connoisseurship alone), 4 % of the ``under_review``
  (a review opened on a tip-off), 4 % of the ``claim_against`` (a claim lodged without a
  documented loss) and 3 % of the ``lender_to`` facts (a loan to a long-term display outside the
  recorded exhibitions) have no grounding; a noise ``attributed_to`` fact feeds the triangle
  like any other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,314 entities (900 artworks, 128 artists, 78 heirs, 45 catalogues raisonnés, 30 collectors, 30
exhibitions, 22 museums, 21 cities, 18 galleries, 14 schools, 8 countries, 8 media, 6 auction
houses, 6 provenance periods), 22 relations; 8,169 train, 229 valid and 231 test triples; the
valid+test targets per rule of their shortest grounding are ``collection_inverse`` 142,
``signed_attribution`` 111, ``primary_market`` 54, ``joint_heirs`` 36, ``heir_claim`` 34,
``catalogue_attribution`` 28, ``museum_lender`` 21, ``gap_review`` 18, ``looted_review`` 9
(length 1: 253, 2: 91, 3: 109), and 7 noise facts; .15 of the targets have more than one
grounding; 93 exceptions (27 ``attributed_to``, 25 ``primary_dealer``, 24 ``claim_against``, 14
``under_review``, 3 ``lender_to``). **Hubs**: ``medium_oil`` has 601 distinct training
neighbours (the oil paintings and the painters), the busiest museum 194, the busiest gallery
174, ``house_sothebys`` 167, ``period_1933_1945`` 110, ``city_paris`` 58 and the busiest artist
35 (an artwork a median of 6); the 2-hop enclosing subgraphs of the 200 sampled test targets
hold a median of 1,020.5 training triples (p90 2,310.4; at seeds 1-3, 40 targets each, p90
2,106.9, 1,950.0 and 2,056.1). Sizes were adjusted while the world was written, never from an
explainer's results: the number of collectors and of the works confiscated from each so that
every rule has at least 8 held-out targets at seed 0, and the media of the artists (which link
the painters to ``medium_oil``) so that the enclosing subgraphs reach 1,000-5,000 training
triples.

**Base facts** (:func:`heritage_world`), with :math:`N` = ``size`` artworks: each city of
``_COUNTRIES`` is ``located_in`` its country, of log-normal weight.
:math:`\max(20, \lfloor N/7 \rfloor)` artists are each ``member_of`` a school of ``_SCHOOLS`` by
share (with probability .1 also of another of the same era), ``located_in`` one of its cities,
with a log-normal fame; an artist works in a first ``medium`` by its era's shares
(``_MEDIUM_SHARE``; a drawing or print half as likely) and, with probability .35, a second. An
artist of the top 40 % of fame has a catalogue raisonné (``catalogue_of`` it) with probability
.75, another with .2.
:math:`\max(8, \lfloor N/40 \rfloor)` museums of a kind of ``_MUSEUM_KINDS`` (the eras they
collect) are ``located_in`` a city of a country by weight, of log-normal size.
:math:`\max(6, \lfloor N/50 \rfloor)` galleries, old-master dealers with probability .3 and
modern galleries otherwise, are ``located_in`` a city by weight; with probability .85 a modern
gallery (one in the school's country three times as likely) ``represents`` an artist of the
nineteenth century or later, and then a second with .3. Each artwork is by an artist drawn
by fame, in the artist's first medium with probability .8 (.9 with a single medium), its second
with .1, else any medium of its era; ``signed_by`` its artist with the era's probability
(``_ERAS``; a drawing .7 times that) and ``listed_in`` its artist's catalogue raisonné with
probability .85; a work of the modern era is made in 1933-1945 with probability .25; it has a
``gap_in`` each provenance period of ``_PERIODS`` from its making on with the period's
probability. A work is ``in_collection`` of a museum with probability .8, among the museums
collecting its era by size (three times as likely in its school's country).
:math:`\max(6, \lfloor N/30 \rfloor)` collectors, ``located_in`` a city of Germany, Austria, the
Netherlands or France, each had 1 + Poisson(2.4) works made before 1933 drawn by fame
confiscated (``looted_from``; such a work has a gap in 1933-1945 with probability .25 more) and
have 1 + Poisson(1.3) heirs (``heir_of``) ``located_in`` a city of a country by
``_HEIR_COUNTRY``. A work of the nineteenth century or later is first ``sold_by`` one of its
artist's galleries with probability .7 (another modern gallery with .3 when its artist has
none); any work is ``sold_by`` Poisson(.5) more dealers of its era (old-master dealers for old
masters and the nineteenth century, else modern galleries) and at auction by a house of
``_HOUSES`` with probability .5, and again with .15; a work at auction is ``catalogued_as`` by
its artist with probability .88, else another artist of its school.
:math:`\max(6, \lfloor N/30 \rfloor)` exhibitions are each ``hosted_by`` a museum by size,
monographic (an artist by fame of an era the host collects) or a survey of a school with
probability .5 each, and 6 + Poisson(8) works of the theme are ``shown_in`` it, a work in a
museum three times as likely as one in private hands and one of the host's own twice more.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`HERITAGE_RULES`.
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

__all__ = ["HERITAGE_RULES", "heritage_world"]

#: The planted rules: a museum's holdings (an inverse pair), a work's attribution (its
#: signature, or its entry in the artist's catalogue raisonné), the joint heirs of a
#: dispossessed collector (symmetric, a star with an inequality), the works a museum reviews
#: for their provenance (a gap in 1933-1945, a constant; or a documented confiscation), the
#: heirs' restitution claims against the museums holding a confiscated work, the museums that
#: lend to another's exhibitions (a chain with an inequality) and a work's primary dealer (a
#: triangle through the derived attribution).
HERITAGE_RULES = """\
collection_inverse: holds(M,A) <- in_collection(A,M)
signed_attribution: attributed_to(A,P) <- signed_by(A,P)
catalogue_attribution: attributed_to(A,P) <- listed_in(A,K), catalogue_of(K,P)
joint_heirs: co_heir(H,J) <- heir_of(H,C), heir_of(J,C), H != J
gap_review: under_review(A,M) <- in_collection(A,M), gap_in(A,period_1933_1945)
looted_review: under_review(A,M) <- in_collection(A,M), looted_from(A,C)
heir_claim: claim_against(H,M) <- heir_of(H,C), looted_from(A,C), in_collection(A,M)
museum_lender: lender_to(M,N) <- in_collection(A,M), shown_in(A,E), hosted_by(E,N), M != N
primary_market: primary_dealer(A,D) <- sold_by(A,D), attributed_to(A,P), represents(D,P)
"""

#: The countries (entity ``country_<name>``): weight among the museums, and the cities
#: (entity ``city_<name>``) with their weight among museums, galleries and people.
_COUNTRIES = (
    ("netherlands", 0.14, (("amsterdam", 1.0), ("the_hague", 0.5), ("rotterdam", 0.4))),
    ("germany", 0.20, (("berlin", 1.0), ("munich", 0.7), ("dresden", 0.4), ("cologne", 0.5))),
    ("france", 0.18, (("paris", 1.0), ("lyon", 0.3))),
    ("uk", 0.16, (("london", 1.0), ("edinburgh", 0.3))),
    ("usa", 0.20, (("new_york", 1.0), ("washington", 0.5), ("boston", 0.4), ("chicago", 0.4))),
    ("austria", 0.06, (("vienna", 1.0),)),
    ("italy", 0.04, (("florence", 1.0), ("venice", 0.6), ("rome", 0.6))),
    ("belgium", 0.02, (("antwerp", 1.0), ("brussels", 0.8))),
)
#: The eras of creation: the provenance period (index into ``_PERIODS``) a work of the era
#: is made in, and the probability that it is signed.
_ERAS = (
    ("old", 0, 0.35),
    ("c19", 1, 0.75),
    ("modern", 2, 0.80),
    ("postwar", 4, 0.85),
    ("contemporary", 5, 0.75),
)
#: The provenance periods (entity ``period_<name>``) and the probability of a gap in a work's
#: provenance in each, once the work exists.
_PERIODS = (
    ("before_1800", 0.25),
    ("1800_1900", 0.15),
    ("1900_1933", 0.08),
    ("1933_1945", 0.12),
    ("1945_1970", 0.05),
    ("after_1970", 0.02),
)
#: Schools and movements (entity ``school_<name>``): era, the cities their artists worked in,
#: and their share of the artists.
_SCHOOLS = (
    ("italian_renaissance", "old", ("florence", "venice", "rome"), 0.08),
    ("flemish_baroque", "old", ("antwerp", "brussels"), 0.06),
    ("dutch_golden_age", "old", ("amsterdam", "the_hague", "rotterdam"), 0.10),
    ("romanticism", "c19", ("paris", "london", "dresden", "munich"), 0.06),
    ("realism", "c19", ("paris", "london"), 0.05),
    ("impressionism", "c19", ("paris",), 0.10),
    ("post_impressionism", "c19", ("paris", "amsterdam"), 0.06),
    ("expressionism", "modern", ("berlin", "dresden", "munich", "vienna"), 0.10),
    ("cubism", "modern", ("paris",), 0.06),
    ("de_stijl", "modern", ("amsterdam", "the_hague"), 0.03),
    ("surrealism", "modern", ("paris", "brussels"), 0.06),
    ("abstract_expressionism", "postwar", ("new_york",), 0.07),
    ("pop_art", "postwar", ("new_york", "london"), 0.06),
    ("contemporary", "contemporary", ("london", "berlin", "new_york", "paris"), 0.11),
)
#: The media (entity ``medium_<name>``) and, per era (``_ERAS`` order), their shares.
_MEDIA = ("oil", "tempera", "watercolour", "drawing", "print", "sculpture", "photograph", "mixed")
_MEDIUM_SHARE = (
    (0.52, 0.06, 0.02, 0.20, 0.12, 0.08, 0.0, 0.0),
    (0.58, 0.0, 0.14, 0.10, 0.06, 0.12, 0.0, 0.0),
    (0.50, 0.0, 0.10, 0.10, 0.14, 0.12, 0.0, 0.04),
    (0.40, 0.0, 0.02, 0.06, 0.18, 0.14, 0.08, 0.12),
    (0.22, 0.0, 0.0, 0.04, 0.10, 0.20, 0.20, 0.24),
)
#: Museum kinds: share, and the eras they collect.
_MUSEUM_KINDS = (
    ("encyclopedic", 0.35, ("old", "c19", "modern", "postwar", "contemporary")),
    ("old_master", 0.20, ("old", "c19")),
    ("modern", 0.30, ("c19", "modern", "postwar")),
    ("contemporary", 0.15, ("postwar", "contemporary")),
)
#: The auction houses (entity ``house_<name>``) and their city.
_HOUSES = (
    ("christies", "london"),
    ("sothebys", "new_york"),
    ("bonhams", "london"),
    ("phillips", "new_york"),
    ("drouot", "paris"),
    ("lempertz", "cologne"),
)
#: Where the heirs of the dispossessed collectors live (country weights, ``_COUNTRIES`` order).
_HEIR_COUNTRY = (0.10, 0.05, 0.10, 0.25, 0.40, 0.04, 0.03, 0.03)
#: Withheld heads: a signature found to be a later addition, a catalogue entry rejected by
#: later scholarship, a gap the museum's research has already closed, a case settled by a just
#: and fair solution that left the work in the museum, heirs who waived their claim or whose
#: family was compensated after the war, a work on long-term deposit lent by its owner rather
#: than the museum holding it, a work the artist's gallery resold for a collector on the
#: secondary market.
_EXCEPTION_RATES = (
    ("signed_attribution", 0.04),
    ("catalogue_attribution", 0.05),
    ("gap_review", 0.06),
    ("looted_review", 0.10),
    ("heir_claim", 0.10),
    ("museum_lender", 0.05),
    ("primary_market", 0.08),
)
#: Heads without grounding: an attribution on connoisseurship alone, a review opened on a
#: tip-off without a recorded gap or loss, a claim lodged without a documented loss, a loan to
#: a long-term display outside the recorded exhibitions.
_NOISE_RATES = (
    ("attributed_to", 0.03),
    ("under_review", 0.04),
    ("claim_against", 0.04),
    ("lender_to", 0.03),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def heritage_world(
    size: int = 900,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the heritage world (module docstring) and its ground truth.

    Args:
        size: The number of artworks :math:`N \ge 80`. Default 900 (1,314 entities, 22
            relations and 8,629 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"heritage"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = heritage_world(80, seed=0)
        >>> w.exception_rates["heir_claim"], w.inverse_pairs
        (0.1, (('in_collection', 'holds'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "attributed_to")
        [1, 2]
        >>> w.symmetric, w.shortcuts
        (('co_heir',), (('catalogued_as', 'attributed_to'),))
    """
    check_world_arguments(size, 80, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    facts: list[LabeledTriple] = []

    # Places: each city is located_in its country; log-normal city weights times the listed.
    countries = [f"country_{name}" for name, _, _ in _COUNTRIES]
    country_weight = np.array([w for _, w, _ in _COUNTRIES])
    city_names: list[str] = []
    city_country: list[int] = []
    city_base: list[float] = []
    for k, (_, _, cities) in enumerate(_COUNTRIES):
        for name, size_ in cities:
            city_names.append(name)
            city_country.append(k)
            city_base.append(size_)
    n_city = len(city_names)
    cities_ = [f"city_{name}" for name in city_names]
    city_index = {name: c for c, name in enumerate(city_names)}
    city_weight = np.array(city_base) * rng.lognormal(0.0, 0.3, n_city)
    facts.extend((cities_[c], "located_in", countries[city_country[c]]) for c in range(n_city))
    country_cities = [
        [c for c in range(n_city) if city_country[c] == k] for k in range(len(countries))
    ]

    # Schools and artists: max(20, N/7) artists, each member_of a school by share (a second of
    # the same era with probability .1), located_in one of its cities, with a log-normal fame.
    eras = [name for name, _, _ in _ERAS]
    era_index = {name: i for i, name in enumerate(eras)}
    schools = [f"school_{name}" for name, _, _, _ in _SCHOOLS]
    school_era = [era_index[era] for _, era, _, _ in _SCHOOLS]
    school_share = np.array([share for _, _, _, share in _SCHOOLS])
    school_home = [city_country[city_index[cs[0]]] for _, _, cs, _ in _SCHOOLS]
    n_artist = max(20, n // 7)
    artists = entity_labels("artist", n_artist)
    artist_school: list[int] = []
    fame = rng.lognormal(0.0, 1.0, n_artist)
    for p in range(n_artist):
        s = _pick(rng, school_share)
        artist_school.append(s)
        facts.append((artists[p], "member_of", schools[s]))
        if rng.random() < 0.1:
            same = [x for x in range(len(schools)) if school_era[x] == school_era[s] and x != s]
            if same:
                facts.append((artists[p], "member_of", schools[same[int(rng.integers(len(same)))]]))
        studios = [city_index[c] for c in _SCHOOLS[s][2]]
        facts.append((artists[p], "located_in", cities_[weighted_pick(rng, studios, city_weight)]))
    artist_era = [school_era[s] for s in artist_school]
    # Each artist works in a first medium by its era's shares (a drawing or print as the first
    # .5 times as likely) and, with probability .35, a second (medium): the painters are linked
    # to medium_oil like their paintings.
    media = [f"medium_{name}" for name in _MEDIA]
    artist_media: list[list[int]] = []
    for p in range(n_artist):
        share = np.array(_MEDIUM_SHARE[artist_era[p]])
        first = _pick(
            rng, share * np.array([0.5 if x in ("drawing", "print") else 1.0 for x in _MEDIA])
        )
        own = [first]
        if rng.random() < 0.35:
            share[first] = 0.0
            own.append(_pick(rng, share))
        artist_media.append(own)
        facts.extend((artists[p], "medium", media[x]) for x in own)
    # A catalogue raisonné (entity catalogue_<i>) for each artist of the top 40 % fame with
    # probability .75, of the others with .2.
    top = np.quantile(fame, 0.6)
    has_catalogue = [
        bool(rng.random() < (0.75 if fame[p] >= top else 0.2)) for p in range(n_artist)
    ]
    catalogue_artists = [p for p in range(n_artist) if has_catalogue[p]]
    catalogues = entity_labels("catalogue", len(catalogue_artists))
    catalogue_of = {p: catalogues[j] for j, p in enumerate(catalogue_artists)}
    facts.extend((catalogue_of[p], "catalogue_of", artists[p]) for p in catalogue_artists)

    # Museums: max(8, N/40), each in a country by weight and a city of it by weight, of a kind
    # of ``_MUSEUM_KINDS``, with a log-normal size.
    n_museum = max(8, n // 40)
    museums = entity_labels("museum", n_museum)
    kind_share = np.array([share for _, share, _ in _MUSEUM_KINDS])
    museum_city: list[int] = []
    museum_eras: list[set[int]] = []
    for m in range(n_museum):
        k = _pick(rng, country_weight)
        museum_city.append(weighted_pick(rng, country_cities[k], city_weight))
        museum_eras.append({era_index[e] for e in _MUSEUM_KINDS[_pick(rng, kind_share)][2]})
        facts.append((museums[m], "located_in", cities_[museum_city[m]]))
    museum_weight = rng.lognormal(0.0, 0.9, n_museum)

    # Galleries: max(6, N/50), located_in a city by weight, old-master dealers (.3) or modern
    # galleries; each artist of the nineteenth century or later is represented by a modern
    # gallery with probability .85 (of its school's country three times as likely), and a
    # second with .3.
    n_gallery = max(6, n // 50)
    galleries = entity_labels("gallery", n_gallery)
    gallery_city = [_pick(rng, city_weight) for _ in range(n_gallery)]
    gallery_modern = [bool(rng.random() >= 0.3) for _ in range(n_gallery)]
    gallery_weight = rng.lognormal(0.0, 0.8, n_gallery)
    facts.extend((galleries[g], "located_in", cities_[gallery_city[g]]) for g in range(n_gallery))
    modern_galleries = [g for g in range(n_gallery) if gallery_modern[g]]
    dealers = [g for g in range(n_gallery) if not gallery_modern[g]] or modern_galleries
    represented: list[list[int]] = []
    for p in range(n_artist):
        reps: list[int] = []
        if artist_era[p] >= 1:
            for q in (0.85, 0.3):
                pool = [g for g in modern_galleries if g not in reps]
                if not pool or rng.random() >= q:
                    break
                w = gallery_weight[pool] * np.array(
                    [
                        3.0
                        if city_country[gallery_city[g]] == school_home[artist_school[p]]
                        else 1.0
                        for g in pool
                    ]
                )
                reps.append(pool[_pick(rng, w)])
        represented.append(sorted(reps))
        facts.extend((galleries[g], "represents", artists[p]) for g in represented[p])

    # Artworks: N, each by an artist drawn by fame, in the artist's first medium with
    # probability .8 (.9 with one medium), its second with .1, else any of its era; signed_by
    # the artist with the era's probability (a drawing .7 times that), listed_in the artist's
    # catalogue raisonné with probability .85; a modern work is made in 1933-1945 with
    # probability .25; a gap_in each provenance period from its making on by the period's
    # probability (written after the confiscations, which add gaps).
    works = entity_labels("artwork", n)
    periods = [f"period_{name}" for name, _ in _PERIODS]
    work_artist = [_pick(rng, fame) for _ in range(n)]
    work_era = [artist_era[p] for p in work_artist]
    work_start: list[int] = []
    work_gaps: list[set[int]] = []
    for a in range(n):
        p, e = work_artist[a], work_era[a]
        u = rng.random()
        if u < 0.8 or len(artist_media[p]) == 1 and u < 0.9:
            medium = artist_media[p][0]
        elif u < 0.9:
            medium = artist_media[p][1]
        else:
            medium = _pick(rng, np.array(_MEDIUM_SHARE[e]))
        facts.append((works[a], "medium", media[medium]))
        sign = _ERAS[e][2] * (0.7 if _MEDIA[medium] == "drawing" else 1.0)
        if rng.random() < sign:
            facts.append((works[a], "signed_by", artists[p]))
        if has_catalogue[p] and rng.random() < 0.85:
            facts.append((works[a], "listed_in", catalogue_of[p]))
        start = _ERAS[e][1]
        if eras[e] == "modern" and rng.random() < 0.25:
            start = 3  # made in 1933-1945
        work_start.append(start)
        gaps = {t for t in range(start, len(_PERIODS)) if rng.random() < _PERIODS[t][1]}
        work_gaps.append(gaps)

    # Collections: a work is in_collection of a museum with probability .8, among the museums
    # collecting its era by size (three times as likely in its school's country).
    work_museum: list[int] = []
    for a in range(n):
        e = work_era[a]
        pool = [m for m in range(n_museum) if e in museum_eras[m]]
        if not pool or rng.random() >= 0.8:
            work_museum.append(-1)
            continue
        home = school_home[artist_school[work_artist[a]]]
        w = museum_weight[pool] * np.array(
            [3.0 if city_country[museum_city[m]] == home else 1.0 for m in pool]
        )
        work_museum.append(pool[_pick(rng, w)])
        facts.append((works[a], "in_collection", museums[work_museum[a]]))

    # Confiscations: max(6, N/30) dispossessed collectors located_in a city of Germany,
    # Austria, the Netherlands or France; each lost 1 + Poisson(2.4) works made before 1933
    # (looted_from; a work once), drawn by their artist's fame; a confiscated work has a gap in
    # 1933-1945 with probability .25 more. Each collector has 1 + Poisson(1.3) heirs (heir_of)
    # located_in a city of a country by ``_HEIR_COUNTRY``.
    n_collector = max(6, n // 30)
    collectors = entity_labels("collector", n_collector)
    seized = [
        k
        for k, (name, _, _) in enumerate(_COUNTRIES)
        if name in ("germany", "austria", "netherlands", "france")
    ]
    seized_cities = [c for k in seized for c in country_cities[k]]
    taken: set[int] = set()
    early = [a for a in range(n) if work_start[a] <= 2]
    heir_country = np.array(_HEIR_COUNTRY)
    heirs: list[str] = []
    for c in range(n_collector):
        facts.append(
            (collectors[c], "located_in", cities_[weighted_pick(rng, seized_cities, city_weight)])
        )
        pool = [a for a in early if a not in taken]
        want = min(len(pool), 1 + int(rng.poisson(2.4)))
        lost: list[int] = []
        if want:
            w = fame[[work_artist[a] for a in pool]]
            drawn = rng.choice(len(pool), size=want, replace=False, p=w / w.sum())
            lost = sorted(pool[int(j)] for j in drawn)
        for a in lost:
            taken.add(a)
            facts.append((works[a], "looted_from", collectors[c]))
            if rng.random() < 0.25:
                work_gaps[a].add(3)
        for _ in range(1 + int(rng.poisson(1.3))):
            h = f"heir_{len(heirs):03d}"
            heirs.append(h)
            k = _pick(rng, heir_country)
            facts.append((h, "heir_of", collectors[c]))
            facts.append(
                (h, "located_in", cities_[weighted_pick(rng, country_cities[k], city_weight)])
            )
    for a in range(n):
        facts.extend((works[a], "gap_in", periods[t]) for t in sorted(work_gaps[a]))

    # The market: a work of the nineteenth century or later is first sold_by one of its
    # artist's galleries with probability .7 (another modern gallery with .3 when it has none);
    # Poisson(.5) more sales by a dealer of its era's kind; an auction (sold_by a house) with
    # probability .5, another with .15; a work at auction is catalogued_as by its artist with
    # probability .88, else another artist of its school (whether or not it is attributed).
    houses = [f"house_{name}" for name, _ in _HOUSES]
    facts.extend(
        (houses[i], "located_in", cities_[city_index[c]]) for i, (_, c) in enumerate(_HOUSES)
    )
    house_weight = np.array([1.0, 1.0, 0.5, 0.4, 0.5, 0.3])
    school_artists = [
        [p for p in range(n_artist) if artist_school[p] == s] for s in range(len(schools))
    ]
    for a in range(n):
        p, e = work_artist[a], work_era[a]
        sellers: set[str] = set()
        if e >= 1:
            if represented[p] and rng.random() < 0.7:
                sellers.add(galleries[represented[p][int(rng.integers(len(represented[p])))]])
            elif not represented[p] and rng.random() < 0.3:
                sellers.add(galleries[weighted_pick(rng, modern_galleries, gallery_weight)])
        kind = dealers if e <= 1 else modern_galleries
        for _ in range(int(rng.poisson(0.5))):
            sellers.add(galleries[weighted_pick(rng, kind, gallery_weight)])
        auctions = int(rng.random() < 0.5) + int(rng.random() < 0.15)
        for _ in range(auctions):
            sellers.add(houses[_pick(rng, house_weight)])
        if auctions:
            named = p
            if rng.random() >= 0.88:
                others = [x for x in school_artists[artist_school[p]] if x != p] or [p]
                named = others[int(rng.integers(len(others)))]
            facts.append((works[a], "catalogued_as", artists[named]))
        facts.extend((works[a], "sold_by", x) for x in sorted(sellers))

    # Exhibitions: max(6, N/30), each hosted_by a museum by size; monographic (an artist by
    # fame of an era the host collects) or a survey of a school, with probability .5 each; it
    # shows 6 + Poisson(8) works of its theme, a work in a museum three times as likely as one
    # in private hands and one of the host's own twice more.
    n_exhibition = max(6, n // 30)
    exhibitions = entity_labels("exhibition", n_exhibition)
    for x in range(n_exhibition):
        m = _pick(rng, museum_weight)
        facts.append((exhibitions[x], "hosted_by", museums[m]))
        fits = [p for p in range(n_artist) if artist_era[p] in museum_eras[m]]
        if rng.random() < 0.5 and fits:
            p = weighted_pick(rng, fits, fame)
            pool = [a for a in range(n) if work_artist[a] == p]
        else:
            ss = [s for s in range(len(schools)) if school_era[s] in museum_eras[m]]
            s = weighted_pick(rng, ss, school_share)
            pool = [a for a in range(n) if artist_school[work_artist[a]] == s]
        if not pool:
            continue
        w = np.array(
            [
                (3.0 if work_museum[a] >= 0 else 1.0) * (2.0 if work_museum[a] == m else 1.0)
                for a in pool
            ]
        )
        want = min(len(pool), 6 + int(rng.poisson(8.0)))
        shown = rng.choice(len(pool), size=want, replace=False, p=w / w.sum())
        facts.extend((works[pool[int(j)]], "shown_in", exhibitions[x]) for j in sorted(shown))

    kinds = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(cities_, "city"),
        **dict.fromkeys(schools, "school"),
        **dict.fromkeys(artists, "artist"),
        **dict.fromkeys(catalogues, "catalogue"),
        **dict.fromkeys(museums, "museum"),
        **dict.fromkeys(galleries, "gallery"),
        **dict.fromkeys(houses, "auction_house"),
        **dict.fromkeys(works, "artwork"),
        **dict.fromkeys(media, "medium"),
        **dict.fromkeys(periods, "period"),
        **dict.fromkeys(collectors, "collector"),
        **dict.fromkeys(heirs, "heir"),
        **dict.fromkeys(exhibitions, "exhibition"),
    }
    return build_world(
        "heritage",
        facts,
        HERITAGE_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kinds,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("co_heir",),
        inverse_pairs=(("in_collection", "holds"),),
        shortcuts=(("catalogued_as", "attributed_to"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
