r"""A biology world: proteins with hub interactions, drugs, diseases, pathways and tissues.

Built to break what the family world lets through (issue #18): **rule exceptions** (20 % of
the drug-disease pairs that ``treats_rule`` grounds are withheld, 30 % for ``indirect_rule``,
10 % for ``functional_rule``), **noise** (10 % of ``treats`` and 5 % of ``acts_on_pathway``
facts have no grounding at all), **popular hub proteins** (a preferential-attachment
interaction network that drugs target preferentially), **hub** relations (five compartments,
eight tissues), a **star** body around a constant (``co_target`` through a shared target in
``apoptosis``), a triangle whose body holds an atom **parallel to the head**
(``functional_link(X,Y)`` needs ``interacts(X,Y)``, itself symmetric through a derived
orientation), a symmetric relation and an inverse pair, and a **shortcut**: ``clinical_trial``
links half of the drug-disease pairs a rule grounds, and a fifth as many others.

**Base facts** (:func:`biology_world`), with :math:`P` = ``size`` proteins:

* ``interacts``: a Barabási-Albert network (each new protein attaches to two earlier ones with
  probability proportional to their degree plus one), each edge in one random orientation;
* 12 pathways (``pathway_000`` ... and ``apoptosis``): protein 0 (the oldest hub) is in
  ``apoptosis``; every other protein is ``in_pathway`` the pathway of the first protein it
  attached to with probability 0.6, else a uniform one, and a second uniform pathway with
  probability 0.2;
* ``located_in`` one of five compartments; ``expressed_in`` 1-3 of eight tissues;
* 25 % of proteins ``regulates`` 2-6 uniform proteins;
* :math:`\max(5, \lfloor P/20 \rfloor)` diseases: a protein is ``associated_with`` one uniform
  disease with probability :math:`\min(0.9, 0.3 + 0.03\,\deg)`, so hubs carry diseases more often;
* :math:`\max(5, \lfloor P/3 \rfloor)` drugs, each ``targets`` 1-4 proteins drawn with
  probability proportional to degree;
* ``clinical_trial(d, z)`` for each pair with ``targets(d, p)``, ``associated_with(p, z)``
  with probability 0.5, plus a fifth as many uniform drug-disease pairs.

The ground truth comes from :func:`graphdata.worlds.base.build_world` with
:data:`BIOLOGY_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import World, build_world, check_world_arguments, entity_labels

__all__ = ["BIOLOGY_RULES", "biology_world"]

#: The planted rules: symmetry, inverse, chains, a star with a constant, a triangle.
BIOLOGY_RULES = """\
interaction_symmetry: interacts(X,Y) <- interacts(Y,X)
target_inverse: targeted_by(P,D) <- targets(D,P)
treats_rule: treats(D,Z) <- targets(D,P), associated_with(P,Z)
pathway_rule: acts_on_pathway(D,W) <- targets(D,P), in_pathway(P,W)
apoptosis_rule: co_target(D,E) <- targets(D,P), targets(E,P), in_pathway(P,apoptosis), D != E
functional_rule: functional_link(X,Y) <- interacts(X,Y), in_pathway(X,W), in_pathway(Y,W)
indirect_rule: indirect_effect(D,Z) <- targets(D,P), regulates(P,Q), associated_with(Q,Z)
"""

_PATHWAYS = 12
_COMPARTMENTS = 5
_TISSUES = 8


def biology_world(
    size: int = 600,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the biology world (module docstring) and its ground truth.

    Args:
        size: The number of proteins :math:`P \ge 20`. Default 600 (855 entities, 14 relations
            and about 8,600 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"biology"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = biology_world(60, seed=0)
        >>> w.exception_rates["treats_rule"], w.noise_rates["treats"]
        (0.2, 0.1)
    """
    check_world_arguments(size, 20, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    proteins = entity_labels("protein", n)
    pathways = [*entity_labels("pathway", _PATHWAYS - 1), "apoptosis"]
    compartments = entity_labels("compartment", _COMPARTMENTS)
    tissues = entity_labels("tissue", _TISSUES)
    n_disease, n_drug = max(5, n // 20), max(5, n // 3)
    diseases, drugs = entity_labels("disease", n_disease), entity_labels("drug", n_drug)
    facts: list[LabeledTriple] = []
    degree = np.zeros(n)
    first_link = [-1] * n
    edges: list[tuple[int, int]] = [(0, 1), (1, 2), (0, 2)]  # a seed triangle
    degree[:3] = 2
    for p in range(3, n):
        weight = degree[:p] + 1.0
        chosen = rng.choice(p, size=2, replace=False, p=weight / weight.sum()).tolist()
        first_link[p] = int(chosen[0])
        for q in chosen:
            edges.append((int(q), p))
            degree[[q, p]] += 1
    for a, b in edges:
        x, y = (a, b) if rng.random() < 0.5 else (b, a)
        facts.append((proteins[x], "interacts", proteins[y]))
    pathway_of: list[int] = []
    for p in range(n):
        if p == 0:  # the oldest hub is an apoptosis protein, so co_target has heads
            w = _PATHWAYS - 1
        elif first_link[p] >= 0 and rng.random() < 0.6:
            w = pathway_of[first_link[p]]
        else:
            w = int(rng.integers(_PATHWAYS))
        pathway_of.append(w)
        mine = {w}
        if rng.random() < 0.2:
            mine.add(int(rng.integers(_PATHWAYS)))
        facts.extend((proteins[p], "in_pathway", pathways[k]) for k in sorted(mine))
        facts.append((proteins[p], "located_in", compartments[int(rng.integers(_COMPARTMENTS))]))
        for t in sorted(set(rng.choice(_TISSUES, size=int(rng.integers(1, 4))).tolist())):
            facts.append((proteins[p], "expressed_in", tissues[t]))
    for p in range(n):
        if rng.random() < 0.25:
            for q in sorted(set(rng.integers(n, size=int(rng.integers(2, 7))).tolist())):
                if q != p:
                    facts.append((proteins[p], "regulates", proteins[q]))
    disease_of: dict[int, int] = {}
    for p in range(n):
        if rng.random() < min(0.9, 0.3 + 0.03 * degree[p]):
            disease_of[p] = int(rng.integers(n_disease))
            facts.append((proteins[p], "associated_with", diseases[disease_of[p]]))
    trials: set[tuple[int, int]] = set()
    grounded = 0
    popularity = degree / degree.sum()
    for d in range(n_drug):
        for p in sorted(set(rng.choice(n, size=int(rng.integers(1, 5)), p=popularity).tolist())):
            facts.append((drugs[d], "targets", proteins[p]))
            if p in disease_of:
                grounded += 1
                if rng.random() < 0.5:
                    trials.add((d, disease_of[p]))
    for _ in range(grounded // 5):
        trials.add((int(rng.integers(n_drug)), int(rng.integers(n_disease))))
    facts.extend((drugs[d], "clinical_trial", diseases[z]) for d, z in sorted(trials))
    types = {
        **dict.fromkeys(proteins, "protein"),
        **dict.fromkeys(pathways, "pathway"),
        **dict.fromkeys(compartments, "compartment"),
        **dict.fromkeys(tissues, "tissue"),
        **dict.fromkeys(diseases, "disease"),
        **dict.fromkeys(drugs, "drug"),
    }
    return build_world(
        "biology",
        facts,
        BIOLOGY_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=types,
        exception_rates={"treats_rule": 0.2, "indirect_rule": 0.3, "functional_rule": 0.1},
        noise_rates={"treats": 0.1, "acts_on_pathway": 0.05},
        symmetric=("interacts",),
        inverse_pairs=(("targeted_by", "targets"),),
        shortcuts=(("clinical_trial", "treats"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
