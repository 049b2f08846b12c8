import itertools

import pytest
import torch

from graphdata.errors import GraphDataError
from graphdata.paths import enumerate_paths
from kg.explain.local import length_shares, local_structure


def _fair_brute_force(counts, budget):
    """The max-min fair split by exhaustion: among all splits that keep min(budget, sum)
    paths, the one whose ascending sorted shares are lexicographically largest; ties go to
    the split that gives more to shorter lengths."""
    total = min(budget, sum(counts))
    splits = [s for s in itertools.product(*(range(c + 1) for c in counts)) if sum(s) == total]
    return list(max(splits, key=lambda s: (sorted(s), s)))


@pytest.mark.parametrize("seed", range(40))
def test_length_shares_is_the_max_min_fair_split(seed):
    generator = torch.Generator().manual_seed(seed)
    counts = torch.randint(0, 7, (3,), generator=generator).tolist()
    budget = int(torch.randint(0, 16, (1,), generator=generator))
    assert length_shares(counts, budget) == _fair_brute_force(counts, budget)


def test_length_shares_passes_unused_shares_on():
    assert length_shares([1, 40, 300], 150) == [1, 40, 109]  # lengths 1, 2 need less
    assert length_shares([0, 300, 300], 150) == [0, 75, 75]
    assert length_shares([3, 4, 5], 100) == [3, 4, 5]  # under the cap: everything


# h = 0, t = 1: one direct triple, 6 two-step paths (via 2..7) and 8 three-step paths
# (via 8-9, 10-11, ..., 22-23), each over its own nodes.
def _graph():
    edges = [(0, 0, 1)]
    edges += [e for k in range(2, 8) for e in ((0, 1, k), (k, 2, 1))]
    edges += [e for k in range(8, 24, 2) for e in ((0, 3, k), (k, 4, k + 1), (k + 1, 5, 1))]
    triples = torch.tensor(edges)
    return triples[:, [0, 2]].t(), triples[:, 1]


def test_capped_candidates_keep_long_paths_against_brute_force():
    edge_index, edge_type = _graph()
    target = (0, 9, 1)  # a relation not in the graph: nothing is removed
    full = enumerate_paths(edge_index, edge_type, 0, 1, 3)
    assert full.length.tolist() == [1] + [2] * 6 + [3] * 8
    with pytest.warns(UserWarning, match="max_candidates=7 candidate paths"):
        local = local_structure(
            edge_index, edge_type, target, hops=2, max_length=3, max_candidates=7
        )
    assert local.truncated
    lengths = [len(p) for p in local.paths]
    # A shortest-first cap would keep [1, 6, 0]: no three-step path at all.
    assert lengths == [1] + [2] * 3 + [3] * 3
    # Within a length the kept paths are the first of that length in enumeration order.
    triples = local.triples.tolist()
    kept = [tuple(tuple(triples[e]) for e in p) for p in local.paths]
    reference = [tuple((h, r, t) for h, r, t, _ in steps) for steps in full.to_list()]
    by_length = {ell: [p for p in reference if len(p) == ell] for ell in (1, 2, 3)}
    assert kept == by_length[1][:1] + by_length[2][:3] + by_length[3][:3]
    uncapped = local_structure(edge_index, edge_type, target, hops=2, max_length=3)
    assert not uncapped.truncated and len(uncapped.paths) == 15


def test_enumerate_paths_min_length_matches_the_filtered_enumeration():
    generator = torch.Generator().manual_seed(3)
    edge_index = torch.randint(0, 9, (2, 30), generator=generator)
    edge_type = torch.randint(0, 3, (30,), generator=generator)
    full = enumerate_paths(edge_index, edge_type, 0, 1, 3, num_nodes=9)
    for ell in (1, 2, 3):
        exact = enumerate_paths(edge_index, edge_type, 0, 1, ell, num_nodes=9, min_length=ell)
        keep = full.length == ell
        assert exact.length.tolist() == [ell] * int(keep.sum())
        assert torch.equal(exact.edge_ids, full.edge_ids[keep][:, :ell])
    with pytest.raises(GraphDataError, match="min_length: expected at most max_length=2"):
        enumerate_paths(edge_index, edge_type, 0, 1, 2, num_nodes=9, min_length=3)
