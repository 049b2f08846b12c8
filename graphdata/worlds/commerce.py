r"""A commerce world: customers, sellers, products, brands, categories, warehouses, places.

Written as a **held-out** world for the explainer, without reading :mod:`kg.explain`, the
explainer benchmarks or their results, and never run with an explainer or trained on while it
was written: designed from the e-commerce domain (a marketplace of sellers listing branded
products in a category tree, warehouses that fulfil their orders, customers who buy and follow
brands), not from how any explainer decides. The rules (:data:`COMMERCE_RULES`, length = body
atoms):

* ``listing_inverse: offered_by(P,S) <- offers(S,P)``, length 1, an **inverse pair** (recorded
  in :attr:`~graphdata.worlds.World.inverse_pairs`; ``offers`` 1-N, ``offered_by`` N-1);
* ``own_label: offers(S,P) <- own_label(S,P)``, length 1, whose head is the **base side** of
  that pair: an own-label product's listing is never a base fact, so every held-out ``offers``
  target is an own-label one and its inverse copy ``offered_by(P,S)`` is in train (``own_label``
  is 1-1);
* ``partner_symmetry: partner_of(S,T) <- partner_of(T,S)``, length 1, a **symmetric base
  relation**: partnerships are drawn in one orientation and no other rule derives
  ``partner_of``; partners mostly share a warehouse (at seed 0 .51 of the partner pairs are
  also linked by the path ``fulfilled_by(S,W), fulfilled_by(T,W)``);
* ``competitor: competes_with(S,T) <- offers(S,P), offers(T,P), S != T``, length 2, a
  **symmetric** relation from a **star with a shared variable and an inequality** (through the
  partly derived ``offers``; at seed 0 the reversed copy of .87 of its held-out targets is in
  train);
* ``category_up: in_category(P,C) <- in_category(P,D), subcategory_of(D,C)``, length 2,
  **recursive** through its own head over a three-level category tree (top, middle, leaf), so
  the closure stops after **two rounds**: a product listed in a leaf gets its middle and then
  its top category, the second round through a derived body atom; the top categories are
  **hubs**;
* ``ships_from: ships_from(S,K) <- fulfilled_by(S,W), located_in(W,Y), located_in(Y,K)``,
  length 3, a chain through the warehouse and its city into a **country hub**; a **derived
  relation with held-out facts used in another rule's body**, beside a **correlated shortcut**:
  ``registered_in`` (base) is in no body of ``ships_from``, but a seller mostly uses a
  warehouse at home: at seed 0 it links .76 of the ``ships_from`` pairs and .82 of its training
  pairs are ``ships_from`` facts (:attr:`~graphdata.worlds.World.shortcuts`);
* ``seller_market: available_in(P,K) <- offers(S,P), ships_from(S,K)``, length 2, **through the
  derived** ``ships_from`` (and the partly derived ``offers``), and ``brand_market:
  available_in(P,K) <- made_by(P,B), brand_origin(B,K)``, length 2: **a head with two bodies**
  (at seed 0 .28 of the ``available_in`` facts have both, .49 only the seller body, .19 only
  the brand body, .04 neither: noise);
* ``loyalty: loyal_to(C,B) <- follows(C,B), purchased(C,P), made_by(P,B)``, length 3, a
  **triangle** (customer, product, brand) whose head is parallel to a body atom: a customer
  who follows a brand and bought one of its products;
* rules of length 1 (three), 2 (four) and 3 (two); 1-1 (``own_label``), 1-N (``offers``),
  N-1 (``lives_in``, ``located_in``, ``registered_in``, ``fulfilled_by``, ``made_by``,
  ``brand_origin``, ``subcategory_of``, ``offered_by``, ``ships_from``) and N-N
  (``purchased``, ``follows``, ``in_category``, ``partner_of``, ``competes_with``,
  ``available_in``) relations;
* **exceptions**: 5 % of ``ships_from``'s heads (a warehouse used for returns only), 10 % of
  the ``available_in`` facts only ``seller_market`` derives, 30 % of ``brand_market``'s (a
  brand not sold at home) and 15 % of ``loyalty``'s are withheld; **noise**: 4 % of the
  ``available_in`` facts (grey imports) and 5 % of the ``loyal_to`` facts (loyalty without a
  recorded purchase) have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 868
entities (400 customers, 257 products, 80 sellers, 38 categories, 33 brands, 33 cities, 20
warehouses, 7 countries), 18 relations; 8,759 train, 204 valid and 204 test triples; the
valid+test targets per rule of their shortest grounding are ``category_up`` 90, ``loyalty``
72, ``listing_inverse`` 71, ``competitor`` 46, ``seller_market`` 46, ``brand_market`` 22,
``partner_symmetry`` 20, ``ships_from`` 18, ``own_label`` 16 (length 1: 107, 2: 204, 3: 90),
and 7 noise facts; .17 of the targets have more than one grounding; 166 exceptions (102
``available_in``, 60 ``loyal_to``, 4 ``ships_from``). **Hubs**: the largest country has 256
distinct training neighbours, the busiest product 173, the largest top category 76, the
largest brand 93, the busiest seller 43; the 2-hop enclosing subgraphs of 200 test targets
hold a median of 1,096 training triples (p90 2,400).

**Base facts** (:func:`commerce_world`), with :math:`N` = ``size`` customers: seven countries
by weight (.30 down to .05); :math:`\max(7, \lfloor N/12 \rfloor)` cities (``located_in``,
one per country first, the rest by weight) with a log-normal population; :math:`\max(7,
\lfloor N/20 \rfloor)` warehouses (``located_in`` a city by population; one per country first,
the rest by weight); a category tree of four top categories with three, three, two and two
middle ones, each with two or three leaves (``subcategory_of``); :math:`\max(8, \lfloor N/12
\rfloor)` brands (``brand_origin`` a country by weight, a log-normal popularity, one top
category and a second, uniform, with probability .3); :math:`\max(12, \lfloor N/5 \rfloor)` sellers
(``registered_in`` a country by weight, a log-normal size, a top category), ``fulfilled_by`` a
warehouse by capacity, at home with probability .85, and a second with probability .3 (at home
with probability .5); :math:`\lfloor 5S/4 \rfloor` partnerships among the :math:`S` sellers
(``partner_of``, one orientation), a seller by size and a partner sharing a warehouse with
probability .6, else any seller, by size;
:math:`\max(30, \lfloor 9N/20 \rfloor)` products (``made_by`` a brand by popularity,
``in_category`` a leaf of one of its top categories, a middle category with probability .1),
each ``offers``-listed by a seller of that top category and :math:`\text{Poisson}(.6)` more
(of that top category with probability .8), by size, three times as likely from the brand's
country; own-label products: a seller has one with probability .85 (a second with probability
.2), of its top category, made by a brand of its country (``own_label``, never ``offers``);
customers ``lives_in`` a country by weight, make :math:`3 + \text{Poisson}(9)` distinct
purchases (``purchased``) by the product's appeal (brand popularity times a log-normal factor),
with probability .75 among the products sold in their country (brand origin or a seller's
warehouse there), half of them in a favourite top category, and follow
:math:`\text{Poisson}(1.6)` brands (``follows``), with probability .65 the brand of a product
they bought, else a brand by popularity (repeats merged).

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`COMMERCE_RULES`.
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

__all__ = ["COMMERCE_RULES", "commerce_world"]

#: The planted rules: an inverse listing pair fed by a length-1 own-label rule, a symmetric base
#: partnership, a symmetric competitor star with an inequality, a recursive category hierarchy,
#: a length-3 warehouse chain into country hubs feeding a head with two bodies, and a loyalty
#: triangle.
COMMERCE_RULES = """\
listing_inverse: offered_by(P,S) <- offers(S,P)
own_label: offers(S,P) <- own_label(S,P)
partner_symmetry: partner_of(S,T) <- partner_of(T,S)
competitor: competes_with(S,T) <- offers(S,P), offers(T,P), S != T
category_up: in_category(P,C) <- in_category(P,D), subcategory_of(D,C)
ships_from: ships_from(S,K) <- fulfilled_by(S,W), located_in(W,Y), located_in(Y,K)
seller_market: available_in(P,K) <- offers(S,P), ships_from(S,K)
brand_market: available_in(P,K) <- made_by(P,B), brand_origin(B,K)
loyalty: loyal_to(C,B) <- follows(C,B), purchased(C,P), made_by(P,B)
"""

_COUNTRIES = (0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05)
#: Top categories and how many middle categories each holds (leaves: 2 or 3 per middle one).
_TOP = (3, 3, 2, 2)


def _fill(rng: np.random.Generator, n: int, weight: np.ndarray) -> list[int]:
    """``n`` parents: one per parent first (``len(weight) <= n``), the rest by ``weight``."""
    k = len(weight)
    rest = rng.choice(k, size=n - k, p=weight / weight.sum()).tolist() if n > k else []
    return list(range(k)) + [int(x) for x in rest]


def commerce_world(
    size: int = 400,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the commerce world (module docstring) and its ground truth.

    Args:
        size: The number of customers :math:`N \ge 40`. Default 400 (868 entities, 18
            relations and about 9,170 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"commerce"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = commerce_world(60, seed=0)
        >>> w.exception_rates["brand_market"], w.noise_rates["available_in"]
        (0.3, 0.04)
        >>> sorted(r.name for r in w.rules if r.head.relation == "available_in")
        ['brand_market', 'seller_market']
    """
    check_world_arguments(size, 40, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    weights = np.asarray(_COUNTRIES)
    n_country = len(_COUNTRIES)
    n_city = max(n_country, n // 12)
    n_warehouse = max(n_country, n // 20)
    n_seller, n_brand = max(12, n // 5), max(8, n // 12)
    n_product = max(30, 9 * n // 20)  # besides the own-label products
    customers, sellers = entity_labels("customer", n), entity_labels("seller", n_seller)
    brands, countries = entity_labels("brand", n_brand), entity_labels("country", n_country)
    cities, warehouses = entity_labels("city", n_city), entity_labels("warehouse", n_warehouse)
    facts: list[LabeledTriple] = []

    # Places: cities of countries (one each first) with a log-normal population; warehouses in
    # a city of a country (one per country first, the rest by weight), by population.
    city_country = _fill(rng, n_city, weights)
    population = rng.lognormal(0.0, 1.0, n_city) * weights[city_country]
    cities_of = [[y for y in range(n_city) if city_country[y] == c] for c in range(n_country)]
    facts.extend((cities[y], "located_in", countries[c]) for y, c in enumerate(city_country))
    warehouse_country = _fill(rng, n_warehouse, weights)
    capacity = rng.lognormal(0.0, 0.5, n_warehouse) * weights[warehouse_country]
    for w, c in enumerate(warehouse_country):
        y = weighted_pick(rng, cities_of[c], population)
        facts.append((warehouses[w], "located_in", cities[y]))
    warehouses_of = [
        [w for w in range(n_warehouse) if warehouse_country[w] == c] for c in range(n_country)
    ]

    # The category tree: top categories, middle ones under them, two or three leaves each.
    categories: list[str] = []
    top_of: list[int] = []  # each category's top category
    leaves_of: list[list[int]] = [[] for _ in _TOP]
    middles_of: list[list[int]] = [[] for _ in _TOP]
    for t in range(len(_TOP)):
        categories.append(f"category_{len(categories):03d}")
        top_of.append(t)
    for t, k in enumerate(_TOP):
        for _ in range(k):
            m = len(categories)
            categories.append(f"category_{m:03d}")
            top_of.append(t)
            middles_of[t].append(m)
            facts.append((categories[m], "subcategory_of", categories[t]))
            for _ in range(2 + int(rng.random() < 0.5)):
                leaf = len(categories)
                categories.append(f"category_{leaf:03d}")
                top_of.append(t)
                leaves_of[t].append(leaf)
                facts.append((categories[leaf], "subcategory_of", categories[m]))
    n_top = len(_TOP)
    top_weight = np.array([len(leaves_of[t]) for t in range(n_top)], dtype=float)

    # Brands: an origin country by weight, a popularity, one or two top categories.
    brand_home = [int(rng.choice(n_country, p=weights)) for _ in range(n_brand)]
    brand_pop = rng.lognormal(0.0, 0.8, n_brand)
    brand_tops = []
    for b in range(n_brand):
        first = int(rng.choice(n_top, p=top_weight / top_weight.sum()))
        tops = [first]
        if rng.random() < 0.3:
            tops.append(int(rng.integers(n_top)))
        brand_tops.append(sorted(set(tops)))
        facts.append((brands[b], "brand_origin", countries[brand_home[b]]))

    # Sellers: a registration country by weight, a size, a top category they specialise in;
    # fulfilled by a warehouse at home (.85) or anywhere, a second one with probability .3.
    seller_home = [int(rng.choice(n_country, p=weights)) for _ in range(n_seller)]
    seller_size = rng.lognormal(0.0, 0.7, n_seller)
    seller_top = [int(rng.choice(n_top, p=top_weight / top_weight.sum())) for _ in sellers]
    everywhere = list(range(n_warehouse))
    stores: list[list[int]] = []
    for s in range(n_seller):
        facts.append((sellers[s], "registered_in", countries[seller_home[s]]))
        own: list[int] = []
        for k in range(1 + int(rng.random() < 0.3)):
            home = [w for w in warehouses_of[seller_home[s]] if w not in own]
            pool = home if home and rng.random() < (0.85 if k == 0 else 0.5) else everywhere
            pool = [w for w in pool if w not in own] or [w for w in everywhere if w not in own]
            own.append(weighted_pick(rng, pool, capacity))
        stores.append(own)
        facts.extend((sellers[s], "fulfilled_by", warehouses[w]) for w in own)
    # Partnerships (one orientation drawn, partner_symmetry completes them): with probability
    # .6 a seller sharing a warehouse, else any seller, by size.
    partners: set[tuple[int, int]] = set()
    tries = 0
    while len(partners) < 5 * n_seller // 4 and tries < 20 * n_seller:
        tries += 1
        a = int(rng.choice(n_seller, p=seller_size / seller_size.sum()))
        sharing = [b for b in range(n_seller) if b != a and set(stores[a]) & set(stores[b])]
        pool = sharing if sharing and rng.random() < 0.6 else [b for b in range(n_seller) if b != a]
        b = weighted_pick(rng, pool, seller_size)
        if (a, b) not in partners and (b, a) not in partners:
            partners.add((a, b))
    facts.extend((sellers[a], "partner_of", sellers[b]) for a, b in sorted(partners))

    # Products: a brand by popularity, a leaf of one of its top categories (a middle category
    # with probability .1), listed by a seller of that top category (three times as likely
    # from the brand's country) and by Poisson(.6) more, mostly of the same top category.
    products: list[str] = []
    product_brand: list[int] = []
    appeal: list[float] = []
    product_top: list[int] = []
    listing: list[tuple[int, int]] = []
    specialists = [[s for s in range(n_seller) if seller_top[s] == t] for t in range(n_top)]
    all_sellers = list(range(n_seller))

    def new_product(b: int, t: int) -> int:
        """A new product of brand ``b`` in top category ``t``: its label, brand and category."""
        p = len(products)
        products.append(f"product_{p:03d}")
        product_brand.append(b)
        product_top.append(t)
        appeal.append(float(brand_pop[b] * rng.lognormal(0.0, 1.0)))
        pool = leaves_of[t] if rng.random() >= 0.1 else middles_of[t]
        facts.append((products[p], "made_by", brands[b]))
        facts.append((products[p], "in_category", categories[pool[int(rng.integers(len(pool)))]]))
        return p

    for _ in range(n_product):
        b = int(rng.choice(n_brand, p=brand_pop / brand_pop.sum()))
        tops = brand_tops[b]
        p = new_product(b, tops[int(rng.integers(len(tops)))])
        boost = np.where(np.asarray(seller_home) == brand_home[b], 3.0, 1.0) * seller_size
        chosen: list[int] = []
        for k in range(1 + int(rng.poisson(0.6))):
            pool = specialists[product_top[p]] if rng.random() < (1.0 if k == 0 else 0.8) else []
            pool = [s for s in pool or all_sellers if s not in chosen]
            if pool:
                chosen.append(weighted_pick(rng, pool, boost))
        listing.extend((s, p) for s in chosen)
    # Own-label products: most sellers have one (a second with probability .2), made by a
    # brand of their country when there is one; their listing is left to own_label.
    own_label: list[tuple[int, int]] = []
    for s in range(n_seller):
        if rng.random() >= 0.85:
            continue
        for _ in range(1 + int(rng.random() < 0.2)):
            domestic = [b for b in range(n_brand) if brand_home[b] == seller_home[s]]
            b = weighted_pick(rng, domestic or list(range(n_brand)), brand_pop)
            own_label.append((s, new_product(b, seller_top[s])))
    facts.extend((sellers[s], "offers", products[p]) for s, p in listing)
    facts.extend((sellers[s], "own_label", products[p]) for s, p in own_label)

    # Customers: a country by weight; 3 + Poisson(9) purchases by appeal, .75 of them among
    # the products sold at home, half in a favourite top category; Poisson(1.6) brands
    # followed, .65 of them a brand bought from.
    n_all = len(products)
    weight = np.asarray(appeal)
    every_product = list(range(n_all))
    sold_in: list[set[int]] = [{brand_home[product_brand[p]]} for p in range(n_all)]
    for s, p in listing + own_label:
        sold_in[p].update(warehouse_country[w] for w in stores[s])
    local = [[p for p in range(n_all) if k in sold_in[p]] for k in range(n_country)]
    for c in range(n):
        k = int(rng.choice(n_country, p=weights))
        facts.append((customers[c], "lives_in", countries[k]))
        favourite = int(rng.choice(n_top, p=top_weight / top_weight.sum()))
        bought: list[int] = []
        for _ in range(3 + int(rng.poisson(9.0))):
            pool = local[k] if rng.random() < 0.75 else every_product
            if rng.random() < 0.5:
                pool = [p for p in pool if product_top[p] == favourite] or pool
            pool = [p for p in pool if p not in bought]
            if pool:
                bought.append(weighted_pick(rng, pool, weight))
        facts.extend((customers[c], "purchased", products[p]) for p in sorted(bought))
        followed: set[int] = set()
        for _ in range(int(rng.poisson(1.6))):
            if rng.random() < 0.65:
                followed.add(product_brand[bought[int(rng.integers(len(bought)))]])
            else:
                followed.add(int(rng.choice(n_brand, p=brand_pop / brand_pop.sum())))
        facts.extend((customers[c], "follows", brands[b]) for b in sorted(followed))
    types = {
        **dict.fromkeys(customers, "customer"),
        **dict.fromkeys(sellers, "seller"),
        **dict.fromkeys(products, "product"),
        **dict.fromkeys(brands, "brand"),
        **dict.fromkeys(categories, "category"),
        **dict.fromkeys(warehouses, "warehouse"),
        **dict.fromkeys(cities, "city"),
        **dict.fromkeys(countries, "country"),
    }
    return build_world(
        "commerce",
        facts,
        COMMERCE_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={
            "ships_from": 0.05,
            "seller_market": 0.1,
            "brand_market": 0.3,
            "loyalty": 0.15,
        },
        noise_rates={"available_in": 0.04, "loyal_to": 0.05},
        symmetric=("competes_with", "partner_of"),
        inverse_pairs=(("offers", "offered_by"),),
        shortcuts=(("registered_in", "ships_from"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
