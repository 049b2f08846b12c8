r"""A software-ecosystem world: packages, dependencies, maintainers, organisations, advisories.

Written as a **held-out** world for the explainer work (issue #18): designed from what a package
registry looks like, not from how any explainer decides. In realistic proportions it holds:

* **rule chaining**: ``exposed_to`` (a package is exposed to the advisories of its direct
  dependencies) is derived, and feeds one of the two bodies of ``alerted``;
* a head with **two alternative bodies**: a maintainer is ``alerted`` of an advisory against a
  package they maintain (``own_alert``) or one their package is exposed to (``upstream_alert``);
  a few alerts (an internal dependency on a vulnerable package) have both;
* an **inequality** and a **star** body: ``co_maintainer`` through a shared package, ``M != N``;
* a **triangle** whose body holds an atom parallel to the head: an ``internal_dependency`` is a
  dependency between two packages sharing a maintainer;
* a **length-3 chain** (``relies_on_org``: a dependency maintained by a member of the
  organisation) beside a correlated, **not equivalent length-2 shortcut**
  ``depends_on(P,Q), sponsored_by(Q,O)``: organisations sponsor most packages their members lead,
  and some others (at seed 0 the path reaches .59 of the ``relies_on_org`` pairs, and .91 of the
  pairs it reaches are heads; ``sponsored_by`` is recorded in
  :attr:`~graphdata.worlds.World.shortcuts`, though as a single edge it links .13 of the heads);
* **hubs**: dependencies attach preferentially (core libraries with up to about 80 dependents
  at the default size), advisories fall on popular packages more often, prolific maintainers,
  and four language ecosystems every package belongs to (2-hop enclosing subgraphs of about
  1,500 triples, p90 2,700);
* **symmetric** relations (``conflicts_with``, drawn in one orientation and completed by a
  length-1 rule; ``co_maintainer``), **exceptions** (15 % of exposures are withheld: the
  dependent pins a patched release; 10 % of internal dependencies), **noise** (5 % of
  ``exposed_to`` and of ``relies_on_org`` facts have no grounding), and 1-N
  (``has_vulnerability``), N-1 (``maintained_by``, ``member_of``, ``written_in``) and N-N
  (``depends_on``, ``exposed_to``, ``alerted``, ``relies_on_org``) relations.

**Base facts** (:func:`software_world`), with :math:`P` = ``size`` packages, created in order:

* four languages with weights .4, .3, .2, .1 (``written_in``); twelve categories, one uniform
  (``in_category``) and a second with probability 0.25; eight licences with weights .35, .2,
  .15, .1, .08, .06, .04, .02 (``has_license``);
* :math:`\max(4, \lfloor P/40 \rfloor)` organisations and :math:`\max(10, \lfloor P/4 \rfloor)`
  maintainers, 75 % of whom are ``member_of`` one uniform organisation (the rest are
  independent);
* ``maintained_by``: a lead maintainer drawn with probability proportional to one plus the
  packages they already maintain (prolific maintainers); a second maintainer with probability
  0.35 (a member of the lead's organisation with probability 0.6, when there is another) and a
  third with probability 0.1, uniform;
* ``forked_from``: with probability 0.04 a package (not the first) forks a uniform earlier
  package and copies its language, categories and dependencies;
* ``depends_on``: otherwise :math:`1 + \text{Poisson}(2)` draws (at most the number of earlier
  packages), each with probability 0.25 one of the earlier packages the lead maintains (an
  internal dependency, when there is one), else an earlier package of the same language with
  probability 0.95 and any earlier package otherwise, drawn with probability proportional to
  its dependents plus one (repeats dropped);
* ``has_vulnerability``: :math:`\max(5, \lfloor P/12 \rfloor)` advisories in groups of
  :math:`1 + \text{Poisson}(1.5)`, each group against one package drawn with probability
  proportional to its dependents plus two (popular packages are audited more);
* ``conflicts_with``: :math:`\lfloor P/8 \rfloor` draws of a package and another of its
  language and first category (two implementations of one module; repeats dropped), one
  orientation;
* ``sponsored_by``: each package whose lead maintainer is a member is sponsored by that
  organisation with probability 0.7; plus 15 % as many uniform package-organisation pairs.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`SOFTWARE_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import World, build_world, check_world_arguments, entity_labels

__all__ = ["SOFTWARE_RULES", "software_world"]

#: The planted rules: a symmetry, chains through a derived relation, a head with two bodies,
#: a star with an inequality, a triangle and a length-3 chain.
SOFTWARE_RULES = """\
conflict_symmetry: conflicts_with(X,Y) <- conflicts_with(Y,X)
exposure_rule: exposed_to(P,V) <- depends_on(P,Q), has_vulnerability(Q,V)
own_alert: alerted(M,V) <- maintained_by(P,M), has_vulnerability(P,V)
upstream_alert: alerted(M,V) <- maintained_by(P,M), exposed_to(P,V)
co_maintainer_rule: co_maintainer(M,N) <- maintained_by(P,M), maintained_by(P,N), M != N
internal_rule: internal_dependency(P,Q) <- depends_on(P,Q), maintained_by(P,M), maintained_by(Q,M)
org_rule: relies_on_org(P,O) <- depends_on(P,Q), maintained_by(Q,M), member_of(M,O)
"""

_LANGUAGES = (0.4, 0.3, 0.2, 0.1)
_CATEGORIES = 12
_LICENSES = (0.35, 0.2, 0.15, 0.1, 0.08, 0.06, 0.04, 0.02)


def software_world(
    size: int = 500,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the software-ecosystem world (module docstring) and its ground truth.

    Args:
        size: The number of packages :math:`P \ge 20`. Default 500 (702 entities, 15 relations
            and about 7,100 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"software"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = software_world(60, seed=0)
        >>> w.exception_rates["exposure_rule"], w.noise_rates["relies_on_org"]
        (0.15, 0.05)
        >>> sorted({r.head.relation for r in w.rules if r.name.endswith("alert")})
        ['alerted']
    """
    check_world_arguments(size, 20, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    n_org, n_maint, n_vuln = max(4, n // 40), max(10, n // 4), max(5, n // 12)
    packages, maintainers = entity_labels("package", n), entity_labels("maintainer", n_maint)
    orgs, advisories = entity_labels("org", n_org), entity_labels("advisory", n_vuln)
    languages = entity_labels("language", len(_LANGUAGES))
    categories = entity_labels("category", _CATEGORIES)
    licenses = entity_labels("license", len(_LICENSES))
    facts: list[LabeledTriple] = []
    org_of: list[int] = []  # -1: an independent maintainer
    for m in range(n_maint):
        org_of.append(int(rng.integers(n_org)) if rng.random() < 0.75 else -1)
        if org_of[m] >= 0:
            facts.append((maintainers[m], "member_of", orgs[org_of[m]]))
    org_members = [[m for m in range(n_maint) if org_of[m] == o] for o in range(n_org)]
    language_of: list[int] = []
    category_of: list[list[int]] = []
    lead_of: list[int] = []
    deps_of: list[list[int]] = []
    own: list[list[int]] = [[] for _ in range(n_maint)]  # maintainer -> packages, in order
    load = np.zeros(n_maint)  # packages per maintainer
    dependents = np.zeros(n)  # dependents per package
    for p in range(n):
        fork = -1
        if p > 0 and rng.random() < 0.04:
            fork = int(rng.integers(p))
        if fork >= 0:  # a fork keeps its origin's language, categories and dependencies
            language_of.append(language_of[fork])
            category_of.append(list(category_of[fork]))
            facts.append((packages[p], "forked_from", packages[fork]))
        else:
            language_of.append(int(rng.choice(len(_LANGUAGES), p=_LANGUAGES)))
            mine = [int(rng.integers(_CATEGORIES))]
            if rng.random() < 0.25:
                mine.append(int((mine[0] + rng.integers(1, _CATEGORIES)) % _CATEGORIES))
            category_of.append(mine)
        facts.append((packages[p], "written_in", languages[language_of[p]]))
        facts.extend((packages[p], "in_category", categories[c]) for c in category_of[p])
        licence = int(rng.choice(len(_LICENSES), p=_LICENSES))
        facts.append((packages[p], "has_license", licenses[licence]))
        lead = int(rng.choice(n_maint, p=(load + 1.0) / (load + 1.0).sum()))
        team = [lead]
        if rng.random() < 0.35:
            colleagues = org_members[org_of[lead]] if org_of[lead] >= 0 else []
            if len(colleagues) > 1 and rng.random() < 0.6:
                team.append(colleagues[int(rng.integers(len(colleagues)))])
            else:
                team.append(int(rng.integers(n_maint)))
        if rng.random() < 0.1:
            team.append(int(rng.integers(n_maint)))
        team = list(dict.fromkeys(team))
        lead_of.append(lead)
        deps: list[int] = list(deps_of[fork]) if fork >= 0 else []
        for _ in range(0 if fork >= 0 else min(p, 1 + int(rng.poisson(2.0)))):
            if own[lead] and rng.random() < 0.25:  # an internal dependency
                deps.append(own[lead][int(rng.integers(len(own[lead])))])
                continue
            same = rng.random() < 0.95
            pool = [q for q in range(p) if not same or language_of[q] == language_of[p]]
            pool = pool or list(range(p))
            weight = dependents[pool] + 1.0
            deps.append(pool[int(rng.choice(len(pool), p=weight / weight.sum()))])
        deps_of.append(list(dict.fromkeys(deps)))
        for q in deps_of[p]:
            dependents[q] += 1
            facts.append((packages[p], "depends_on", packages[q]))
        for m in team:
            own[m].append(p)
            load[m] += 1
            facts.append((packages[p], "maintained_by", maintainers[m]))
    weight = dependents + 2.0
    v = 0
    while v < n_vuln:  # a package with a security history has several advisories
        p = int(rng.choice(n, p=weight / weight.sum()))
        for _ in range(min(n_vuln - v, 1 + int(rng.poisson(1.5)))):
            facts.append((packages[p], "has_vulnerability", advisories[v]))
            v += 1
    conflicts: set[tuple[int, int]] = set()
    for _ in range(n // 8):
        p = int(rng.integers(n))
        rivals = [
            q
            for q in range(n)
            if q != p
            and language_of[q] == language_of[p]
            and category_of[q][0] == category_of[p][0]
        ]
        if rivals:
            q = rivals[int(rng.integers(len(rivals)))]
            if (q, p) not in conflicts:
                conflicts.add((p, q))
    facts.extend((packages[p], "conflicts_with", packages[q]) for p, q in sorted(conflicts))
    sponsored: set[tuple[int, int]] = set()
    for p in range(n):
        if org_of[lead_of[p]] >= 0 and rng.random() < 0.7:
            sponsored.add((p, org_of[lead_of[p]]))
    for _ in range(int(0.15 * len(sponsored))):
        sponsored.add((int(rng.integers(n)), int(rng.integers(n_org))))
    facts.extend((packages[p], "sponsored_by", orgs[o]) for p, o in sorted(sponsored))
    types = {
        **dict.fromkeys(packages, "package"),
        **dict.fromkeys(maintainers, "maintainer"),
        **dict.fromkeys(orgs, "organisation"),
        **dict.fromkeys(advisories, "advisory"),
        **dict.fromkeys(languages, "language"),
        **dict.fromkeys(categories, "category"),
        **dict.fromkeys(licenses, "license"),
    }
    return build_world(
        "software",
        facts,
        SOFTWARE_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={"exposure_rule": 0.15, "internal_rule": 0.1},
        noise_rates={"exposed_to": 0.05, "relies_on_org": 0.05},
        symmetric=("conflicts_with", "co_maintainer"),
        shortcuts=(("sponsored_by", "relies_on_org"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
