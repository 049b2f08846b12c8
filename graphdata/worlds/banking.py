r"""A retail and commercial banking world: customers, accounts, loans, banks, merchants.

Written in session 30 as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from the banking domain (customers in twelve
countries, persons and businesses, who bank at home or in an offshore centre; six international
banks with branches in several countries beside local banks; current accounts, some held jointly
by spouses; mortgages, buy-to-let, consumer, commercial loans and credit lines with their
borrowers, guarantors and collateral; credit cards; card payments to merchants registered in a
few e-commerce hubs; employers; the FATF grey list and the EU high-risk list), not from how any
explainer decides. The rules (:data:`BANKING_RULES`, length = body atoms):

* ``holder_inverse: holds(C,A) <- held_by(A,C)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`; 1-N: 591 holdings of 547 accounts at seed 0,
  44 of them joint), with no exception or noise;
* ``borrower_liable: liable_for(C,L) <- borrower_on(C,L)`` and ``guarantor_liable:
  liable_for(C,L) <- guarantor_of(C,L)``, both length 1: **a head with two bodies** through two
  different relations, each parallel to the head (a guarantor is never a borrower on the loan);
* ``lending_relationship: banks_with(C,B) <- borrower_on(C,L), lent_by(L,B)``, length 2, and
  ``account_relationship: banks_with(C,B) <- holds(C,A), held_at(A,H), branch_of(H,B)``, length
  3 through the derived ``holds``: **a second head with two bodies**, overlapping (of the 480
  ``banks_with`` facts at seed 0, .29 have both, .10 only the loan, .59 only an account, .02
  none);
* ``co_borrowers: co_borrower(C,D) <- borrower_on(C,L), borrower_on(D,L), C != D``, length 2, a
  **symmetric** relation (:attr:`~graphdata.worlds.World.symmetric`, 50 facts at seed 0) with
  no exception or noise; ``spouse_of`` (base, 98 facts) is symmetric too;
* ``owner_occupier: occupies(C,P) <- borrower_on(C,L), secured_by(L,P),
  loan_type(L,loan_residential)``, length 3, a **star** on the loan ``L`` (in every body atom,
  not in the head) with **a constant** in the third atom: a buy-to-let is secured by a property
  too (18 loans at seed 0), which its borrower does not occupy;
* ``foreign_spend: spends_abroad(C,K) <- paid(C,M), located_in(M,K), located_in(C,J), K != J``,
  length 3, the countries a customer pays merchants in other than its own: an **inequality
  between a head variable and a body variable**, both reached by the same relation, and a
  dense N-N head (600 facts at seed 0);
* ``due_diligence: reviews(B,C) <- banks_with(C,B), located_in(C,K),
  lists(list_fatf_grey,K)``, length 3, the customers a bank subjects to enhanced due diligence:
  the head **reverses** the derived first atom, and the third atom has **a constant as its
  subject**; ``list_eu_highrisk``, in no body, lists an overlapping set of countries;
* ``staff_banking: in_programme(C,B) <- employed_by(C,E), banks_with(E,B), banks_with(C,B)``,
  length 3, a staff banking programme: a **triangle** whose last atom is parallel to the head and
  whose two last atoms are the derived two-body ``banks_with``;
* **correlated shortcuts** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``card_issuer`` (a customer's credit card, from its main bank with probability .8) links .43 of
  the ``banks_with`` pairs and .92 of its training pairs are ``banks_with`` pairs; ``spouse_of``
  links .84 of the ``co_borrower`` pairs and .43 of the spouse pairs co-borrow (seed 0);
* rules of length 1 (three), 2 (two) and 3 (five); 1-1 (``co_borrower``, ``guarantor_of``,
  ``occupies``, ``secured_by``, ``spouse_of``), 1-N (``borrower_on``, ``holds``,
  ``liable_for``), N-1 (``branch_of``, ``card_issuer``, ``employed_by``, ``held_at``,
  ``held_by``, ``in_programme``, ``lent_by``, ``loan_type``, ``located_in``) and N-N
  (``banks_with``, ``lists``, ``paid``, ``reviews``, ``spends_abroad``) relations (by count at
  seed 0);
* **exceptions**: 2 % of ``borrower_liable``'s heads (a borrower released by a debt
  settlement), 6 % of ``guarantor_liable``'s (a guarantee released), 4 % of
  ``lending_relationship``'s (a loan sold to a debt purchaser), 3 % of
  ``account_relationship``'s (a dormant account), 6 % of ``owner_occupier``'s (a home let out),
  5 % of ``foreign_spend``'s (a foreign merchant's payment processed by its local subsidiary), 5 %
  of ``due_diligence``'s (a customer exempted, e.g. a public body) and 12 % of
  ``staff_banking``'s (an employee who opted out) are withheld; a withheld ``banks_with`` fact
  also leaves out the heads only it grounds. **Noise**: 2 % of the ``banks_with`` (an
  introduced or closed relationship), 2 % of the ``liable_for`` (a liability from an
  undocumented guarantee), 3 % of the ``occupies`` (a tenant on record), 3 % of the
  ``spends_abroad`` (a payment miscoded), 4 % of the ``reviews`` (a review triggered by a
  transaction alert) and 5 % of the ``in_programme`` facts (a former employee kept in the
  programme) have no grounding; a noise ``banks_with`` fact feeds the rules above like any
  other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,358 entities (547 accounts, 246 persons, 204 loans, 122 properties, 74 businesses, 63
branches, 40 merchants, 25 cities, 18 banks, 12 countries, 5 loan types, 2 watch lists), 22
relations; 6,465 train, 223 valid and 220 test triples; the valid+test targets per rule of
their shortest grounding are ``holder_inverse`` 118, ``foreign_spend`` 116,
``account_relationship`` 49, ``borrower_liable`` 44, ``lending_relationship`` 37,
``owner_occupier`` 20, ``guarantor_liable`` 16, ``due_diligence`` 13, ``staff_banking`` 12,
``co_borrowers`` 10 (length 1: 178, 2: 47, 3: 210), and 8 noise facts; .17 of the targets have
more than one grounding; 84 exceptions (41 ``spends_abroad``, 15 ``in_programme``, 11
``banks_with``, 10 ``liable_for``, 5 ``occupies``, 2 ``reviews``). **Hubs**: the UK has 213
distinct training neighbours, the busiest merchant 171, ``bank_albion`` 136, ``loan_residential``
76 (a person a median of 13); the 2-hop enclosing subgraphs of 200 sampled test targets hold a
median of 599 training triples (p90 1,723).

**Base facts** (:func:`banking_world`), with :math:`N` = ``size`` customers: each city of
``_COUNTRIES`` is ``located_in`` its country, and each watch list ``lists`` its countries. Each
international bank of ``_BANKS`` is ``located_in`` its home country with a branch in each city
at home and, abroad, in the main city (and the second with probability .3); then
:math:`\max(12, \lfloor N/25 \rfloor)` local banks, one in each country first and the rest by
weight, of log-normal weight, with a branch in the main city and in each other city with
probability .6; a branch is a ``branch_of`` its bank and ``located_in`` its city. :math:`N`
customers, a business with probability .25, each ``located_in`` a country by weight, banking
there or, with probability .12, in an offshore centre abroad (``_OFFSHORE``). Persons of a
country are paired at random, each pair ``spouse_of`` (both ways) with probability .45; a person
is ``employed_by`` a business of its country (by log-normal size) with probability .55. A main
bank, businesses first: a bank of the banking country by weight, an employee's its employer's
with probability .4 and else a spouse's with probability .6 (when they bank in the same
country). Accounts: 1 + Poisson(.5) a person, 1 + Poisson(1.3) a business, the first at the
main bank and each other there with probability .45 (else at another bank of the banking
country), ``held_at`` a branch of the bank there by city weight, ``held_by`` the customer and,
with probability .35, its spouse. Loans: Poisson(.45) a person, :math:`\min(3,
\text{Poisson}(1.1))` a business, of a ``loan_type`` by weight (``_LOAN_TYPES``), ``lent_by``
the main bank with probability .7 (else another bank of the banking country), the customer
``borrower_on`` it with its spouse on a residential mortgage (probability .75) or a consumer
loan (.25) and another business of its country on a commercial loan (.08); a
``guarantor_of`` it with probability .7 for a business (an employee, else a person of its
country), .25 for a consumer loan and .15 for a mortgage (a person of the country); ``secured_by``
a property ``located_in`` a city (by weight) of the borrower's country for a residential
mortgage, of the banking country for a buy-to-let, and with probability .6 of the borrower's
country for a commercial loan. A person holds a card with probability .75, a business .5:
``card_issuer`` its main bank with probability .8, else a bank of its banking country.
:math:`\max(30, \lfloor N/8 \rfloor)` merchants ``located_in`` a country by its weight plus the
e-commerce hubs' (``_MERCHANT_HUBS``), of log-normal popularity; a person ``paid`` 3 +
Poisson(5) draws of merchants, a business 1 + Poisson(3), each of its own country with
probability .7 (when there is one) and else of any, by popularity.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`BANKING_RULES`.
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

__all__ = ["BANKING_RULES", "banking_world"]

#: The planted rules: account holders (an inverse pair), liability for a loan (two bodies of
#: length 1), banking relationships from a loan or an account (two bodies, one through the
#: derived holders), co-borrowers (symmetric), owner occupation (a star with a constant),
#: spending abroad (an inequality with a head variable), enhanced due diligence (a constant
#: subject) and staff banking programmes (a triangle through the derived relationships).
BANKING_RULES = """\
holder_inverse: holds(C,A) <- held_by(A,C)
borrower_liable: liable_for(C,L) <- borrower_on(C,L)
guarantor_liable: liable_for(C,L) <- guarantor_of(C,L)
lending_relationship: banks_with(C,B) <- borrower_on(C,L), lent_by(L,B)
co_borrowers: co_borrower(C,D) <- borrower_on(C,L), borrower_on(D,L), C != D
account_relationship: banks_with(C,B) <- holds(C,A), held_at(A,H), branch_of(H,B)
owner_occupier: occupies(C,P) <- borrower_on(C,L), secured_by(L,P), loan_type(L,loan_residential)
foreign_spend: spends_abroad(C,K) <- paid(C,M), located_in(M,K), located_in(C,J), K != J
due_diligence: reviews(B,C) <- banks_with(C,B), located_in(C,K), lists(list_fatf_grey,K)
staff_banking: in_programme(C,B) <- employed_by(C,E), banks_with(E,B), banks_with(C,B)
"""

#: The countries (entity ``country_<name>``): weight among customers, banks and merchants,
#: whether the FATF grey list and the EU high-risk list name it (entities ``list_fatf_grey``
#: and ``list_eu_highrisk``), and its cities (entity ``city_<name>``) with their weights.
_COUNTRIES = (
    ("uk", 0.19, False, False, (("london", 0.7), ("manchester", 0.2), ("edinburgh", 0.1))),
    ("germany", 0.13, False, False, (("frankfurt", 0.4), ("berlin", 0.35), ("munich", 0.25))),
    ("france", 0.11, False, False, (("paris", 0.7), ("lyon", 0.3))),
    ("netherlands", 0.06, False, False, (("amsterdam", 0.7), ("rotterdam", 0.3))),
    ("switzerland", 0.07, False, False, (("zurich", 0.6), ("geneva", 0.4))),
    ("usa", 0.11, False, False, (("new_york", 0.6), ("chicago", 0.2), ("miami", 0.2))),
    ("spain", 0.07, False, False, (("madrid", 0.55), ("barcelona", 0.45))),
    ("poland", 0.04, False, False, (("warsaw", 0.7), ("krakow", 0.3))),
    ("uae", 0.08, True, True, (("dubai", 0.75), ("abu_dhabi", 0.25))),
    ("panama", 0.05, True, True, (("panama_city", 1.0),)),
    ("turkey", 0.06, True, False, (("istanbul", 0.8), ("ankara", 0.2))),
    ("cayman", 0.02, False, True, (("george_town", 1.0),)),
)
#: Where customers bank when not at home (private and offshore banking), by weight.
_OFFSHORE = (("switzerland", 0.35), ("uk", 0.3), ("cayman", 0.15), ("usa", 0.1), ("uae", 0.1))
#: Extra weight of merchants registered in a country (e-commerce and payment hubs).
_MERCHANT_HUBS = (("usa", 0.25), ("uk", 0.12), ("netherlands", 0.1))
#: The international banks (entity ``bank_<name>``): home country, the countries where each has
#: branches, and weight.
_BANKS = (
    ("albion", "uk", ("uk", "usa", "uae", "cayman", "switzerland"), 3.0),
    ("rhein", "germany", ("germany", "netherlands", "poland", "switzerland", "uk"), 2.5),
    ("lumiere", "france", ("france", "spain", "switzerland", "uae", "turkey"), 2.0),
    ("liberty", "usa", ("usa", "panama", "uk", "cayman"), 2.5),
    ("helvetia", "switzerland", ("switzerland", "uk", "uae", "panama"), 1.5),
    ("iberia", "spain", ("spain", "panama", "turkey", "usa"), 1.5),
)
#: Loan types (entity ``loan_<name>``) with their weights for a person and a business.
_LOAN_TYPES = (
    ("residential", 0.55, 0.0),
    ("buy_to_let", 0.15, 0.0),
    ("consumer", 0.30, 0.0),
    ("commercial", 0.0, 0.65),
    ("credit_line", 0.0, 0.35),
)
#: Withheld heads: a borrower released by a debt settlement, a guarantee released, a loan sold
#: to a debt purchaser, a dormant account, a home let out, a foreign payment processed locally,
#: a customer exempted from due diligence, an employee who opted out of the programme.
_EXCEPTION_RATES = (
    ("borrower_liable", 0.02),
    ("guarantor_liable", 0.06),
    ("lending_relationship", 0.04),
    ("account_relationship", 0.03),
    ("owner_occupier", 0.06),
    ("foreign_spend", 0.05),
    ("due_diligence", 0.05),
    ("staff_banking", 0.12),
)
#: Heads without grounding: an introduced or closed relationship, an undocumented guarantee, a
#: tenant on record, a miscoded payment, a review after a transaction alert, a former employee.
_NOISE_RATES = (
    ("banks_with", 0.02),
    ("liable_for", 0.02),
    ("occupies", 0.03),
    ("spends_abroad", 0.03),
    ("reviews", 0.04),
    ("in_programme", 0.05),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def banking_world(
    size: int = 320,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the banking world (module docstring) and its ground truth.

    Args:
        size: The number of customers :math:`N \ge 60`. Default 320 (1,358 entities, 22
            relations and 6,908 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"banking"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = banking_world(80, seed=0)
        >>> w.exception_rates["staff_banking"], w.inverse_pairs
        (0.12, (('held_by', 'holds'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "banks_with")
        [2, 3]
        >>> w.symmetric, w.shortcuts[0]
        (('co_borrower', 'spouse_of'), ('card_issuer', 'banks_with'))
    """
    check_world_arguments(size, 60, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_country = len(_COUNTRIES)
    n_local, n_merchant = max(n_country, n // 25), max(30, n // 8)
    countries = [f"country_{name}" for name, _, _, _, _ in _COUNTRIES]
    country_index = {name: k for k, (name, _, _, _, _) in enumerate(_COUNTRIES)}
    country_weight = np.array([w for _, w, _, _, _ in _COUNTRIES])
    city_labels: list[str] = []
    city_country: list[int] = []
    city_weight: list[float] = []
    for k, (_, _, _, _, cities) in enumerate(_COUNTRIES):
        for name, w in cities:
            city_labels.append(f"city_{name}")
            city_country.append(k)
            city_weight.append(w)
    cities_in = {k: [c for c, j in enumerate(city_country) if j == k] for k in range(n_country)}
    weight_of_city = np.array(city_weight)
    loan_types = [f"loan_{name}" for name, _, _ in _LOAN_TYPES]
    person_loan = np.array([p for _, p, _ in _LOAN_TYPES])
    business_loan = np.array([b for _, _, b in _LOAN_TYPES])
    facts: list[LabeledTriple] = []

    # Countries, cities and the watch lists.
    facts.extend((city_labels[c], "located_in", countries[k]) for c, k in enumerate(city_country))
    for k, (_, _, grey, eu, _) in enumerate(_COUNTRIES):
        if grey:
            facts.append(("list_fatf_grey", "lists", countries[k]))
        if eu:
            facts.append(("list_eu_highrisk", "lists", countries[k]))

    # Banks: the international banks, located_in their home country with branches in each
    # country of their presence (one a city at home; abroad the main city, and the second with
    # probability .3); then max(12, N/25) local banks, one in each country first and the rest
    # by weight, of log-normal weight, with a branch in the main city and in each other city
    # with probability .6. A branch is a branch_of its bank and located_in its city.
    bank_labels = [f"bank_{name}" for name, _, _, _ in _BANKS]
    bank_country = [country_index[home] for _, home, _, _ in _BANKS]
    bank_weight = [w for _, _, _, w in _BANKS]
    branch_rows: list[tuple[int, int]] = []  # (bank, city)
    for b, (_, seat, presence, _) in enumerate(_BANKS):
        for name in presence:
            k = country_index[name]
            own = sorted(cities_in[k], key=lambda c: -city_weight[c])
            if name == seat:
                chosen = own
            else:
                chosen = own[:1] + [c for c in own[1:2] if rng.random() < 0.3]
            branch_rows.extend((b, c) for c in chosen)
    for j in range(n_local):
        k = j if j < n_country else _pick(rng, country_weight)
        b = len(bank_labels)
        bank_labels.append(f"bank_local_{j:03d}")
        bank_country.append(k)
        bank_weight.append(float(rng.lognormal(0.0, 0.7)))
        own = sorted(cities_in[k], key=lambda c: -city_weight[c])
        branch_rows.extend((b, c) for i, c in enumerate(own) if i == 0 or rng.random() < 0.6)
    n_bank = len(bank_labels)
    weight_of_bank = np.array(bank_weight)
    facts.extend((bank_labels[b], "located_in", countries[k]) for b, k in enumerate(bank_country))
    branches = entity_labels("branch", len(branch_rows))
    for h, (b, c) in enumerate(branch_rows):
        facts.append((branches[h], "branch_of", bank_labels[b]))
        facts.append((branches[h], "located_in", city_labels[c]))
    banks_in = {
        k: sorted({b for b, c in branch_rows if city_country[c] == k}) for k in range(n_country)
    }
    branches_of = {
        (b, k): [h for h, (bb, c) in enumerate(branch_rows) if bb == b and city_country[c] == k]
        for b in range(n_bank)
        for k in range(n_country)
    }

    # Customers: N, a business with probability .22, else a person; located_in a country by
    # weight; banking at home, or with probability .12 in an offshore centre abroad.
    is_business = (rng.random(n) < 0.25).tolist()
    customer_country: list[int] = rng.choice(
        n_country, size=n, p=country_weight / country_weight.sum()
    ).tolist()
    banking_country: list[int] = []
    for k in customer_country:
        pool = [country_index[c] for c, _ in _OFFSHORE if country_index[c] != k]
        offshore = np.array([x for c, x in _OFFSHORE if country_index[c] != k])
        banking_country.append(pool[_pick(rng, offshore)] if rng.random() < 0.12 else k)
    customers = entity_labels("customer", n)
    facts.extend((customers[c], "located_in", countries[k]) for c, k in enumerate(customer_country))
    size_of = rng.lognormal(0.0, 1.0, n)
    persons = [c for c in range(n) if not is_business[c]]
    businesses = [c for c in range(n) if is_business[c]]
    businesses_in = {
        k: [c for c in businesses if customer_country[c] == k] for k in range(n_country)
    }

    # Spouses: the persons of a country in a random order, each adjacent pair married with
    # probability .45; spouse_of both ways.
    spouse: dict[int, int] = {}
    for k in range(n_country):
        own = [c for c in persons if customer_country[c] == k]
        order = [own[i] for i in rng.permutation(len(own)).tolist()]
        for x, y in zip(order[::2], order[1::2]):
            if rng.random() < 0.45:
                spouse[x], spouse[y] = y, x
                facts.append((customers[x], "spouse_of", customers[y]))
                facts.append((customers[y], "spouse_of", customers[x]))

    # Employment: a person is employed_by a business of its country (by size) with probability
    # .55 when there is one.
    employer: dict[int, int] = {}
    for c in persons:
        pool = businesses_in[customer_country[c]]
        if pool and rng.random() < 0.55:
            employer[c] = weighted_pick(rng, pool, size_of)
            facts.append((customers[c], "employed_by", customers[employer[c]]))

    # Main banks, businesses first: a bank with branches in the banking country, by weight; a
    # person's is its employer's with probability .4 (when it banks in the same country), else
    # its spouse's with probability .6 (when already drawn).
    main_bank: dict[int, int] = {}

    def bank_in(k: int, avoid: int | None = None) -> int:
        pool = [b for b in banks_in[k] if b != avoid] or banks_in[k]
        return weighted_pick(rng, pool, weight_of_bank)

    for c in businesses + persons:
        k = banking_country[c]
        e, s = employer.get(c), spouse.get(c)
        if e is not None and banking_country[e] == k and rng.random() < 0.4:
            main_bank[c] = main_bank[e]
        elif s is not None and s in main_bank and banking_country[s] == k and rng.random() < 0.6:
            main_bank[c] = main_bank[s]
        else:
            main_bank[c] = bank_in(k)

    # Accounts: 1 + Poisson(.5) a person, 1 + Poisson(1.3) a business; the first at the main
    # bank, each other there with probability .55, else at another bank of the banking country;
    # held_at a branch of the bank in that country (by city weight), held_by the customer and,
    # with probability .35, by its spouse when the spouse banks in the same country.
    account_rows: list[tuple[list[int], int]] = []
    for c in range(n):
        k = banking_country[c]
        count = 1 + int(rng.poisson(1.3 if is_business[c] else 0.5))
        for i in range(count):
            b = main_bank[c] if i == 0 or rng.random() < 0.45 else bank_in(k, main_bank[c])
            pool = branches_of[(b, k)]
            h = pool[_pick(rng, weight_of_city[[branch_rows[x][1] for x in pool]])]
            holders = [c]
            s = spouse.get(c)
            if s is not None and banking_country[s] == k and rng.random() < 0.35:
                holders.append(s)
            account_rows.append((holders, h))
    accounts = entity_labels("account", len(account_rows))
    for a, (holders, h) in enumerate(account_rows):
        facts.extend((accounts[a], "held_by", customers[c]) for c in holders)
        facts.append((accounts[a], "held_at", branches[h]))

    # Loans: Poisson(.45) a person, min(3, Poisson(1.1)) a business, of a type by weight, lent_by
    # the main bank with probability .7, else another bank of the banking country. Co-borrowers:
    # the spouse on a residential mortgage (probability .7) or a consumer loan (.15), another
    # business of the country on a commercial loan (.08). Guarantors: an employee of the
    # business (probability .55), a person of the country on a consumer loan (.12) or a
    # mortgage (.05). Collateral (secured_by, a property located_in a city): a home in the
    # borrower's country for a residential mortgage, a flat in the banking country for a
    # buy-to-let, business premises with probability .6 for a commercial loan.
    employees: dict[int, list[int]] = {}
    for c, e in sorted(employer.items()):
        employees.setdefault(e, []).append(c)
    persons_in = {k: [c for c in persons if customer_country[c] == k] for k in range(n_country)}
    loan_rows: list[tuple[list[int], int, int, list[int], int | None]] = []
    property_city: list[int] = []
    for c in range(n):
        k, home = banking_country[c], customer_country[c]
        count = min(3, int(rng.poisson(1.1))) if is_business[c] else int(rng.poisson(0.45))
        for _ in range(count):
            t = _pick(rng, business_loan if is_business[c] else person_loan)
            kind = _LOAN_TYPES[t][0]
            b = main_bank[c] if rng.random() < 0.7 else bank_in(k, main_bank[c])
            borrowers, guarantors = [c], []
            s = spouse.get(c)
            if s is not None and rng.random() < {"residential": 0.75, "consumer": 0.25}.get(
                kind, 0.0
            ):
                borrowers.append(s)
            if kind == "commercial" and rng.random() < 0.08:
                others = [x for x in businesses_in[home] if x != c]
                if others:
                    borrowers.append(weighted_pick(rng, others, size_of))
            staff = employees.get(c, [])
            chance = (
                0.7 if is_business[c] else {"consumer": 0.25, "residential": 0.15}.get(kind, 0.0)
            )
            pool = staff or [x for x in persons_in[home] if x not in borrowers]
            if pool and rng.random() < chance:
                guarantors.append(pool[int(rng.integers(len(pool)))])
            collateral: int | None = None
            if kind in ("residential", "buy_to_let") or (
                kind == "commercial" and rng.random() < 0.6
            ):
                where = k if kind == "buy_to_let" else home
                pool = cities_in[where]
                property_city.append(pool[_pick(rng, weight_of_city[pool])])
                collateral = len(property_city) - 1
            loan_rows.append((borrowers, b, t, guarantors, collateral))
    loans = entity_labels("loan", len(loan_rows))
    properties = entity_labels("property", max(len(property_city), 1))
    facts.extend((properties[p], "located_in", city_labels[y]) for p, y in enumerate(property_city))
    for i, (borrowers, b, t, guarantors, collateral) in enumerate(loan_rows):
        facts.extend((customers[c], "borrower_on", loans[i]) for c in borrowers)
        facts.extend((customers[c], "guarantor_of", loans[i]) for c in guarantors)
        facts.append((loans[i], "lent_by", bank_labels[b]))
        facts.append((loans[i], "loan_type", loan_types[t]))
        if collateral is not None:
            facts.append((loans[i], "secured_by", properties[collateral]))

    # Cards: a person holds a card issued by a bank with probability .75, a business with
    # probability .5: its main bank with probability .8, else a bank of its banking country.
    for c in range(n):
        if rng.random() < (0.5 if is_business[c] else 0.75):
            k = banking_country[c]
            b = main_bank[c] if rng.random() < 0.8 else bank_in(k)
            facts.append((customers[c], "card_issuer", bank_labels[b]))

    # Merchants: max(30, N/6), located_in a country by its weight plus the e-commerce hubs',
    # of log-normal popularity. A person paid 1 + Poisson(3) distinct merchants, a business
    # Poisson(1.5): each of its country with probability .7 (when there is one), else any, by
    # popularity.
    merchant_weight = country_weight.copy()
    for name, w in _MERCHANT_HUBS:
        merchant_weight[country_index[name]] += w
    merchant_country = rng.choice(
        n_country, size=n_merchant, p=merchant_weight / merchant_weight.sum()
    ).tolist()
    popularity = rng.lognormal(0.0, 1.4, n_merchant)
    merchants = entity_labels("merchant", n_merchant)
    facts.extend((merchants[m], "located_in", countries[k]) for m, k in enumerate(merchant_country))
    everywhere = list(range(n_merchant))
    merchants_in = {
        k: [m for m in everywhere if merchant_country[m] == k] for k in range(n_country)
    }
    for c in range(n):
        count = 1 + int(rng.poisson(3.0)) if is_business[c] else 3 + int(rng.poisson(5.0))
        local = merchants_in[customer_country[c]]
        paid: set[int] = set()
        for _ in range(count):
            pool = local if local and rng.random() < 0.7 else everywhere
            paid.add(weighted_pick(rng, pool, popularity))
        facts.extend((customers[c], "paid", merchants[m]) for m in sorted(paid))

    kind_types = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(city_labels, "city"),
        **dict.fromkeys(("list_fatf_grey", "list_eu_highrisk"), "watch_list"),
        **dict.fromkeys(loan_types, "loan_type"),
        **dict.fromkeys(bank_labels, "bank"),
        **dict.fromkeys(branches, "branch"),
        **{customers[c]: "business" if is_business[c] else "person" for c in range(n)},
        **dict.fromkeys(accounts, "account"),
        **dict.fromkeys(loans, "loan"),
        **dict.fromkeys(properties, "property"),
        **dict.fromkeys(merchants, "merchant"),
    }
    return build_world(
        "banking",
        facts,
        BANKING_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kind_types,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("co_borrower", "spouse_of"),
        inverse_pairs=(("held_by", "holds"),),
        shortcuts=(("card_issuer", "banks_with"), ("spouse_of", "co_borrower")),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
