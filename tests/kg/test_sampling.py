import pytest
import torch

from graphdata.errors import GraphDataError
from kg.sampling import (
    bernoulli_head_probability,
    bernoulli_negatives,
    false_negative_mask,
    uniform_negatives,
)


class _SetIndex:
    """A brute-force membership oracle (a Python set of triples)."""

    def __init__(self, triples: torch.Tensor) -> None:
        self.known = {tuple(t) for t in triples.tolist()}

    def contains(self, mapped: torch.Tensor) -> torch.Tensor:
        return torch.tensor([tuple(t) in self.known for t in mapped.tolist()], dtype=torch.bool)


def _toy_triples() -> torch.Tensor:
    # relation 0: 1-N (head 0 -> tails 1..4, head 5 -> tails 6, 7): tph = 6/2 = 3, hpt = 1
    # relation 1: N-1 (heads 0..3 -> tail 9): tph = 1, hpt = 4
    # relation 2: 1-1 (0->1, 2->3): tph = hpt = 1
    rows = [(0, 0, t) for t in range(1, 5)] + [(5, 0, 6), (5, 0, 7)]
    rows += [(h, 1, 9) for h in range(4)] + [(0, 2, 1), (2, 2, 3)]
    rows += [(0, 0, 1)]  # a duplicate must not count twice
    return torch.tensor(rows)


def test_bernoulli_probability_closed_form():
    p = bernoulli_head_probability(_toy_triples(), 4)
    torch.testing.assert_close(p, torch.tensor([3 / 4, 1 / 5, 1 / 2, 1 / 2]))


def test_bernoulli_probability_matches_set_counts_on_random_triples():
    # Oracle: tph and hpt from Python sets of the distinct triples, on random triples with many
    # duplicates, an unused relation and entity ids that leave gaps.
    g = torch.Generator().manual_seed(3)
    triples = torch.stack(
        [
            torch.randint(0, 9, (400,), generator=g) * 3,
            torch.randint(0, 4, (400,), generator=g),
            torch.randint(0, 7, (400,), generator=g),
        ],
        dim=1,
    )
    distinct = {tuple(row) for row in triples.tolist()}
    expected = []
    for r in range(5):
        rows = [(h, t) for h, rel, t in distinct if rel == r]
        if not rows:
            expected.append(0.5)
            continue
        tph = len(rows) / len({h for h, _ in rows})
        hpt = len(rows) / len({t for _, t in rows})
        expected.append(tph / (tph + hpt))
    p = bernoulli_head_probability(triples, 5)
    torch.testing.assert_close(p, torch.tensor(expected))


def test_bernoulli_probability_rejects_out_of_range_relation():
    with pytest.raises(GraphDataError, match="num_relations: got 2"):
        bernoulli_head_probability(_toy_triples(), 2)


@pytest.mark.parametrize("kind", ["uniform", "bernoulli"])
def test_negatives_differ_on_exactly_one_side(kind, device):
    pos = _toy_triples().to(device)
    g = torch.Generator(device=device).manual_seed(0)
    if kind == "uniform":
        neg = uniform_negatives(pos, 10, num_negatives=50, generator=g)
    else:
        p = bernoulli_head_probability(pos, 3)
        neg = bernoulli_negatives(pos, 10, p, num_negatives=50, generator=g)
    assert neg.shape == (pos.size(0), 50, 3) and neg.device.type == device.type
    diff = neg != pos[:, None, :]
    assert (diff.sum(-1) == 1).all()  # exactly one position changed ...
    assert not diff[..., 1].any()  # ... never the relation
    assert int(neg.min()) >= 0 and int(neg[..., [0, 2]].max()) < 10


def test_uniform_head_rate_and_entity_distribution():
    pos = torch.tensor([[3, 0, 7]]).repeat(400, 1)
    g = torch.Generator().manual_seed(1)
    neg = uniform_negatives(pos, 10, num_negatives=100, generator=g)  # 40,000 draws
    head = neg[..., 0] != 3
    assert abs(head.float().mean().item() - 0.5) < 0.01  # s.d. 0.0025
    # replacement heads are uniform over the 9 other entities (never the original 3)
    counts = torch.bincount(neg[..., 0][head], minlength=10).float()
    assert counts[3] == 0
    freq = counts[torch.arange(10) != 3] / head.sum()
    assert (freq - 1 / 9).abs().max() < 0.01


def test_bernoulli_head_rate_matches_tph_over_tph_plus_hpt():
    triples = _toy_triples()
    p = bernoulli_head_probability(triples, 3)
    g = torch.Generator().manual_seed(2)
    pos = triples.repeat(200, 1)
    neg = bernoulli_negatives(pos, 10, p, num_negatives=20, generator=g)
    head_changed = (neg[..., 0] != pos[:, None, 0]).float()  # [B, k]
    for r in range(3):
        rate = head_changed[pos[:, 1] == r].mean().item()
        assert abs(rate - p[r].item()) < 0.015, (r, rate, p[r].item())


def test_same_seed_same_negatives():
    pos = _toy_triples()
    a = uniform_negatives(pos, 10, num_negatives=5, generator=torch.Generator().manual_seed(3))
    b = uniform_negatives(pos, 10, num_negatives=5, generator=torch.Generator().manual_seed(3))
    c = uniform_negatives(pos, 10, num_negatives=5, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_filtered_negatives_never_contain_true_triples():
    # a dense graph: every (h, 0, t) with h + t even is true, so many corruptions hit true triples
    n = 6
    true = torch.tensor([(h, 0, t) for h in range(n) for t in range(n) if (h + t) % 2 == 0])
    index = _SetIndex(true)
    g = torch.Generator().manual_seed(5)
    neg = uniform_negatives(true, n, num_negatives=30, generator=g)
    keep = false_negative_mask(neg, index)
    brute = torch.tensor(
        [[tuple(t) not in index.known for t in row] for row in neg.tolist()], dtype=torch.bool
    )
    assert torch.equal(keep, brute)
    assert (~keep).any() and keep.any()  # both cases occur
    kept = neg[keep]
    assert not any(tuple(t) in index.known for t in kept.tolist())


def test_bad_input_raises():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(GraphDataError, match=r"positives: expected integer triples \[N, 3\]"):
        uniform_negatives(torch.zeros(4, 2, dtype=torch.long), 5, generator=g)
    with pytest.raises(GraphDataError, match="num_entities: expected at least 2"):
        uniform_negatives(torch.zeros(1, 3, dtype=torch.long), 1, generator=g)
    with pytest.raises(GraphDataError, match="num_negatives: expected a positive integer"):
        uniform_negatives(torch.zeros(1, 3, dtype=torch.long), 3, num_negatives=0, generator=g)
    with pytest.raises(GraphDataError, match=r"negatives: expected corrupted triples \[B, k, 3\]"):
        false_negative_mask(torch.zeros(4, 3, dtype=torch.long), _SetIndex(torch.zeros(0, 3)))


def test_draws_match_the_public_samplers_stream():
    # The trainer draws (side, replacement) pairs directly; same generator stream and the same
    # corrupted triples as uniform_negatives / bernoulli_negatives.
    from kg.sampling import _apply_corruptions, _draw_corruptions

    pos = torch.tensor([[0, 0, 1], [2, 1, 3], [4, 0, 0]])
    prob = torch.tensor([0.2, 0.9])
    public = bernoulli_negatives(
        pos, 6, prob, num_negatives=5, generator=torch.Generator().manual_seed(3)
    )
    gen = torch.Generator().manual_seed(3)
    corrupt_head, replacement = _draw_corruptions(pos, prob[pos[:, 1]], 6, 5, gen)
    assert torch.equal(_apply_corruptions(pos, corrupt_head, replacement), public)
    changed_head = public[..., 0] != pos[:, None, 0]
    assert torch.equal(changed_head, corrupt_head)


@pytest.mark.parametrize("kind", ["uniform", "bernoulli"])
def test_side_per_positive_shares_one_side_among_a_positives_negatives(kind):
    pos = torch.tensor([[3, 0, 7]]).repeat(2000, 1)
    g = torch.Generator().manual_seed(2)
    if kind == "uniform":
        neg = uniform_negatives(pos, 10, num_negatives=8, generator=g, per_positive=True)
        rate = 0.5
    else:
        neg = bernoulli_negatives(
            pos, 10, torch.tensor([0.25]), num_negatives=8, generator=g, per_positive=True
        )
        rate = 0.25
    head = neg[..., 0] != 3  # [2000, 8]: which side each negative replaced
    assert torch.equal(head, head[:, :1].expand_as(head))  # one side per positive
    assert bool(((neg != pos[:, None, :]).sum(-1) == 1).all())  # still exactly one side changed
    # the side is Bernoulli(rate) per positive: 2,000 draws, s.d. <= 0.011
    assert abs(head[:, 0].float().mean().item() - rate) < 0.04
    # the replacements stay uniform over the 9 other entities
    counts = torch.bincount(neg[..., 0][head], minlength=10).float()
    assert counts[3] == 0
    assert ((counts[torch.arange(10) != 3] / head.sum()) - 1 / 9).abs().max() < 0.02


def test_trainer_draws_with_a_side_per_positive_match_the_public_sampler():
    from kg.sampling import _apply_corruptions, _draw_corruptions

    pos = torch.tensor([[0, 0, 1], [2, 1, 3], [4, 0, 0], [1, 1, 2]])
    public = uniform_negatives(
        pos, 6, num_negatives=5, generator=torch.Generator().manual_seed(4), per_positive=True
    )
    gen = torch.Generator().manual_seed(4)
    corrupt_head, replacement = _draw_corruptions(pos, torch.full((4,), 0.5), 6, 5, gen, True)
    assert torch.equal(_apply_corruptions(pos, corrupt_head, replacement), public)
