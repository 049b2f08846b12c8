r"""Negative sampling for sLCWA training: uniform and Bernoulli corruption, false-negative filter.

Every positive triple :math:`(h, r, t)` gets ``k`` corrupted copies in which either the head or
the tail is replaced by another entity (the corrupted set of TransE, Bordes et al., "Translating
Embeddings for Modeling Multi-relational Data", NeurIPS 2013, Section 2; PyKEEN's sLCWA, Ali et
al., "Bringing Light Into the Dark", TPAMI 2021, arXiv 2006.13365):

* *uniform* (PyKEEN's ``basic``): the head with probability 1/2, otherwise the tail;
* *Bernoulli* (Wang et al., "Knowledge Graph Embedding by Translating on Hyperplanes", AAAI 2014,
  TransH, DOI 10.1609/aaai.v28i1.8870): the head with probability
  :math:`\mathrm{tph}_r / (\mathrm{tph}_r + \mathrm{hpt}_r)`, so that 1-N relations corrupt the
  "one" side and create fewer false negatives.

The replacement is drawn uniformly from the *other* entities, so a corrupted copy always differs
from its positive in exactly one position. All draws run vectorised on the device of the
positives from an explicit :class:`torch.Generator` (which must live on that device).
:func:`false_negative_mask` drops copies that are known true triples (PyKEEN
``sampling/filtering.py``).
"""

from __future__ import annotations

from typing import Any, Protocol

import torch
from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = [
    "TripleMembership",
    "bernoulli_head_probability",
    "uniform_negatives",
    "bernoulli_negatives",
    "false_negative_mask",
    "chunk_negatives",
    "chunk_negative_scores",
]


class TripleMembership(Protocol):
    """Anything that answers "is this a known true triple?" (e.g. ``graphdata.FilterIndex``)."""

    def contains(self, mapped_triples: Tensor) -> Tensor:
        """Return a boolean ``[B]``: whether each row of ``[B, 3]`` is a known triple."""
        ...


def bernoulli_head_probability(mapped_triples: Tensor, num_relations: int) -> Tensor:
    r"""Per-relation probability of corrupting the head (Wang et al. 2014, TransH, sec. 4).

    .. math::
        p_r = \frac{\mathrm{tph}_r}{\mathrm{tph}_r + \mathrm{hpt}_r}, \quad
        \mathrm{tph}_r = \frac{|T_r|}{|\{h : (h, r, t) \in T_r\}|}, \quad
        \mathrm{hpt}_r = \frac{|T_r|}{|\{t : (h, r, t) \in T_r\}|}

    :math:`T_r` is the set of distinct triples of relation :math:`r`; tph is the mean number of
    tails per head, hpt the mean number of heads per tail. Relations without triples get 1/2.

    Args:
        mapped_triples: The training triples ``(head, relation, tail)`` as integer ids.
        num_relations: The number of relations :math:`R` (ids ``0 .. R-1``).

    Returns:
        The probabilities :math:`p_r`, float32 on the device of ``mapped_triples``.

    Shapes:
        ``mapped_triples: [N, 3]`` -> ``[R]``.

    Examples:
        >>> # relation 0 is 1-N: one head with two tails, so corrupt the head (p = 2 / (2 + 1)).
        >>> bernoulli_head_probability(torch.tensor([[0, 0, 1], [0, 0, 2]]), 1)
        tensor([0.6667])
    """
    triples = _check_triples(mapped_triples, "mapped_triples")
    if triples.numel() and int(triples[:, 1].max()) >= num_relations:
        raise GraphDataError(
            f"num_relations: got {num_relations}, but mapped_triples holds relation id "
            f"{int(triples[:, 1].max())}; pass the dataset's num_relations"
        )
    device = triples.device
    # Distinct (r, h), (r, t) and (h, r, t) from 1-D int64 keys r E + h and r E + t (E R < 2^63
    # for any table that fits in memory): torch.unique(dim=0) of 10M rows peaked at 3.1 GB,
    # these keys at about ten [N] int64 tensors (0.73 GB). (h, r, t) is distinct where
    # (r E + h, t) changes after a lexicographic sort (two stable sorts).
    span = int(triples[:, [0, 2]].max()) + 1 if triples.numel() else 1
    rh = triples[:, 1] * span + triples[:, 0]
    rt = triples[:, 1] * span + triples[:, 2]
    order = torch.argsort(triples[:, 2], stable=True)
    order = order[torch.argsort(rh[order], stable=True)]
    rh_sorted, t_sorted = rh[order], triples[order, 2]
    first = torch.ones_like(rh_sorted, dtype=torch.bool)
    first[1:] = (rh_sorted[1:] != rh_sorted[:-1]) | (t_sorted[1:] != t_sorted[:-1])
    n_triples = torch.bincount(rh_sorted[first] // span, minlength=num_relations).float()
    # Each distinct (r, h) or (r, t) pair contributes one to its relation's count.
    n_heads = torch.bincount(torch.unique(rh) // span, minlength=num_relations)
    n_tails = torch.bincount(torch.unique(rt) // span, minlength=num_relations)
    tph = n_triples / n_heads.clamp_min(1)
    hpt = n_triples / n_tails.clamp_min(1)
    prob = torch.full((num_relations,), 0.5, device=device)
    seen = n_triples > 0
    prob[seen] = tph[seen] / (tph[seen] + hpt[seen])
    return prob


def uniform_negatives(
    positives: Tensor,
    num_entities: int,
    *,
    num_negatives: int = 1,
    generator: torch.Generator,
    per_positive: bool = False,
) -> Tensor:
    r"""Corrupt the head or the tail (probability 1/2 each) of every positive ``k`` times.

    PyKEEN's ``BasicNegativeSampler`` (Ali et al., "Bringing Light Into the Dark", TPAMI 2021,
    arXiv 2006.13365). For copy :math:`j` of positive :math:`(h, r, t)`:

    .. math::
        (h, r, t)_j^- = \begin{cases} (e_j, r, t) & u_j < 1/2 \\ (h, r, e_j) & \text{otherwise}
        \end{cases}, \quad u_j \sim U[0, 1),\ e_j \sim U(\mathcal{E} \setminus \{x\})

    where :math:`x` is the entity being replaced. With ``per_positive`` one :math:`u` is drawn
    per positive and shared by its :math:`k` copies, so all of them replace the same side.

    Args:
        positives: Positive triples as integer ids.
        num_entities: The number of entities :math:`|\mathcal{E}| \ge 2`.
        num_negatives: Copies :math:`k` per positive. Default 1.
        generator: The random generator, on the device of ``positives``.
        per_positive: One side per positive instead of per copy (default False).

    Returns:
        The corrupted triples.

    Shapes:
        ``positives: [B, 3]`` -> ``[B, k, 3]``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> neg = uniform_negatives(torch.tensor([[0, 0, 1]]), 5, num_negatives=4, generator=g)
        >>> neg.shape, bool(((neg != torch.tensor([0, 0, 1])).sum(-1) == 1).all())
        (torch.Size([1, 4, 3]), True)
    """
    triples = _check_triples(positives, "positives")
    prob = torch.full((triples.size(0),), 0.5, device=triples.device)
    return _corrupt(triples, prob, num_entities, num_negatives, generator, per_positive)


def bernoulli_negatives(
    positives: Tensor,
    num_entities: int,
    head_probability: Tensor,
    *,
    num_negatives: int = 1,
    generator: torch.Generator,
    per_positive: bool = False,
) -> Tensor:
    r"""Corrupt the head with the relation's Bernoulli probability, else the tail, ``k`` times.

    Wang et al., "Knowledge Graph Embedding by Translating on Hyperplanes", AAAI 2014 (TransH).
    For copy :math:`j` of positive :math:`(h, r, t)`:

    .. math::
        (h, r, t)_j^- = \begin{cases} (e_j, r, t) & u_j < p_r \\ (h, r, e_j) & \text{otherwise}
        \end{cases}, \quad u_j \sim U[0, 1),\ e_j \sim U(\mathcal{E} \setminus \{x\})

    with :math:`p_r` from :func:`bernoulli_head_probability` and :math:`x` the replaced entity.
    With ``per_positive`` one :math:`u` is drawn per positive and shared by its copies.

    Args:
        positives: Positive triples as integer ids.
        num_entities: The number of entities :math:`|\mathcal{E}| \ge 2`.
        head_probability: :math:`p_r` per relation, from :func:`bernoulli_head_probability`.
        num_negatives: Copies :math:`k` per positive. Default 1.
        generator: The random generator, on the device of ``positives``.
        per_positive: One side per positive instead of per copy (default False).

    Returns:
        The corrupted triples.

    Shapes:
        ``positives: [B, 3]``, ``head_probability: [R]`` -> ``[B, k, 3]``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> pos = torch.tensor([[0, 0, 1]])
        >>> neg = bernoulli_negatives(pos, 5, torch.tensor([1.0]), num_negatives=3, generator=g)
        >>> bool((neg[..., 1:] == pos[:, None, 1:]).all())  # p = 1: only heads change
        True
    """
    triples = _check_triples(positives, "positives")
    if head_probability.dim() != 1:
        raise GraphDataError(
            f"head_probability: expected one probability per relation [R], got shape "
            f"{tuple(head_probability.shape)}; use bernoulli_head_probability(train, R)"
        )
    prob = head_probability.to(triples.device)[triples[:, 1]]  # [B]
    return _corrupt(triples, prob, num_entities, num_negatives, generator, per_positive)


def false_negative_mask(negatives: Tensor, known: TripleMembership) -> Tensor:
    r"""Mark the corrupted triples that are not known true triples (filtered sampling).

    .. math::
        m_{bj} = \mathbb{1}\bigl[(h, r, t)^-_{bj} \notin \mathcal{K}\bigr]

    :math:`\mathcal{K}` is the set behind ``known`` (use the training triples only: filtering
    with validation or test triples would leak them into training).

    Args:
        negatives: Corrupted triples from :func:`uniform_negatives` or
            :func:`bernoulli_negatives`.
        known: An index of true triples with a ``contains(mapped [M, 3]) -> bool [M]`` method,
            e.g. :class:`graphdata.filter_index.FilterIndex`.

    Returns:
        ``True`` where the negative is kept (not a known triple).

    Shapes:
        ``negatives: [B, k, 3]`` -> ``[B, k]``.
    """
    if negatives.dim() != 3 or negatives.size(-1) != 3:
        raise GraphDataError(
            f"negatives: expected corrupted triples [B, k, 3], got shape {tuple(negatives.shape)}"
        )
    flat = negatives.reshape(-1, 3)  # [B * k, 3]
    return ~known.contains(flat).reshape(negatives.shape[:2]).to(torch.bool)


def _check_triples(triples: Tensor, name: str) -> Tensor:
    """Validate an integer ``[N, 3]`` triple tensor."""
    if triples.dim() != 2 or triples.size(1) != 3 or triples.is_floating_point():
        raise GraphDataError(
            f"{name}: expected integer triples [N, 3] (head, relation, tail), got "
            f"{triples.dtype} of shape {tuple(triples.shape)}"
        )
    return triples.long()


def _corrupt(
    triples: Tensor,
    head_prob: Tensor,
    num_entities: int,
    k: int,
    generator: torch.Generator,
    per_positive: bool = False,
) -> Tensor:
    """Replace the head (probability ``head_prob[b]``) or the tail of ``k`` copies per triple."""
    corrupt_head, draw = _draw_corruptions(
        triples, head_prob, num_entities, k, generator, per_positive
    )
    return _apply_corruptions(triples, corrupt_head, draw)


def _draw_corruptions(
    triples: Tensor,
    head_prob: Tensor,
    num_entities: int,
    k: int,
    generator: torch.Generator,
    per_positive: bool = False,
) -> tuple[Tensor, Tensor]:
    """Which side each of ``k`` copies replaces (``True`` = head) and the replacing entity.

    Returns ``corrupt_head: bool [B, k]`` and ``replacement: long [B, k]``; the draws (and so the
    generator's stream) are those of :func:`_corrupt`. With ``per_positive`` one side is drawn
    per positive and shared by its ``k`` copies.
    """
    if num_entities < 2:
        raise GraphDataError(
            f"num_entities: expected at least 2 entities to corrupt a triple, got {num_entities}"
        )
    if k < 1:
        raise GraphDataError(f"num_negatives: expected a positive integer, got {k}")
    device = triples.device
    b = triples.size(0)
    sides = 1 if per_positive else k
    u = torch.rand(b, sides, device=device, generator=generator)  # [B, 1] or [B, k]
    corrupt_head = (u < head_prob[:, None]).expand(b, k).contiguous()
    original = torch.where(corrupt_head, triples[:, :1], triples[:, 2:])  # [B, k]
    # Draw from the E - 1 other entities: shift draws at or above the original by one.
    draw = torch.randint(0, num_entities - 1, (b, k), device=device, generator=generator)
    draw += draw >= original
    return corrupt_head, draw


def _apply_corruptions(triples: Tensor, corrupt_head: Tensor, replacement: Tensor) -> Tensor:
    """The corrupted triples ``[B, k, 3]`` of :func:`_draw_corruptions`'s draws."""
    negatives = triples[:, None, :].repeat(1, corrupt_head.size(1), 1)  # [B, k, 3]
    column = torch.where(corrupt_head, 0, 2)  # [B, k]: the position being replaced
    return negatives.scatter(2, column[..., None], replacement[..., None])


def chunk_negatives(
    positives: Tensor,
    head_probability: Tensor,
    num_entities: int,
    *,
    num_negatives: int,
    chunk_size: int,
    generator: torch.Generator,
) -> tuple[Tensor, Tensor]:
    r"""PyTorch-BigGraph's batched negatives: one side per positive, ``k`` entities per chunk.

    Lerer et al., "PyTorch-BigGraph: A Large-scale Graph Embedding System", SysML 2019,
    arXiv 1903.12287, Section 4.3 (uniform negatives shared across a chunk). Positive :math:`b`
    belongs to chunk :math:`c(b) = \lfloor b / C \rfloor`; it corrupts its head with probability
    :math:`p_b` (``head_probability``: 1/2 uniform, :math:`p_r` Bernoulli), else its tail, and all
    positives of chunk :math:`c` share the negatives :math:`e_{c1}, \dots, e_{ck} \sim
    U(\mathcal{E})`, drawn with replacement from all entities (a negative may equal the replaced
    entity: :func:`chunk_negative_scores` masks those).

    PBG also appends the chunk's own positives' entities to the candidates ("batch" negatives:
    for a head-corrupting positive the chunk's heads, for a tail-corrupting one its tails, so
    :math:`k + C` candidates that follow the degree distribution). They are not used here: in one
    run per dataset (chunks of 256, :math:`k = 32`, DistMult and TransE, filtered test MRR) they
    lowered the MRR on Nations and UMLS with every loss and on FB15k-237 with ``bce`` (.022 ->
    .004), raised it on FB15k-237 with ``nssa`` (DistMult .105 -> .197, TransE .195 -> .200)
    and ``margin`` (.238 -> .244), and cost 2-7x the epoch time (:math:`k + C` scores per
    positive instead of :math:`k`).

    Args:
        positives: Positive triples as integer ids.
        head_probability: :math:`p_b` per positive.
        num_entities: :math:`|\mathcal{E}| \ge 2`.
        num_negatives: :math:`k`, negatives per chunk (and so per positive).
        chunk_size: :math:`C \ge 1`, positives per chunk (the last chunk may be smaller).
        generator: The random generator, on the device of ``positives``.

    Returns:
        ``corrupt_head`` (bool ``[B]``) and ``negatives`` (long ``[ceil(B / C), k]``).

    Shapes:
        ``positives: [B, 3]``, ``head_probability: [B]``.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> side, neg = chunk_negatives(torch.zeros(5, 3, dtype=torch.long), torch.full((5,), 0.5),
        ...     10, num_negatives=4, chunk_size=2, generator=g)
        >>> side.shape, neg.shape
        (torch.Size([5]), torch.Size([3, 4]))
    """
    triples = _check_triples(positives, "positives")
    if num_entities < 2:
        raise GraphDataError(
            f"num_entities: expected at least 2 entities to corrupt a triple, got {num_entities}"
        )
    for name, value in (("num_negatives", num_negatives), ("chunk_size", chunk_size)):
        if not isinstance(value, int) or value < 1:
            raise GraphDataError(f"{name}: expected a positive int, got {value!r}")
    b, device = triples.size(0), triples.device
    u = torch.rand(b, device=device, generator=generator)  # [B]
    corrupt_head = u < head_probability
    chunks = -(-b // chunk_size)
    negatives = torch.randint(
        0, num_entities, (chunks, num_negatives), device=device, generator=generator
    )  # [ceil(B / C), k]
    return corrupt_head, negatives


def chunk_negative_scores(
    model: Any,
    positives: Tensor,
    corrupt_head: Tensor,
    negatives: Tensor,
    chunk: Tensor,
) -> tuple[Tensor, Tensor]:
    r"""Scores of every positive against its chunk's shared negatives, one kernel per chunk side.

    For positive :math:`b = (h_b, r_b, t_b)` of chunk :math:`c = c(b)` with negatives
    :math:`e_{c1}, \dots, e_{ck}` (:func:`chunk_negatives`):

    .. math::
        s_{bj} = \begin{cases} f(e_{cj}, r_b, t_b) & \text{corrupt\_head}_b \\
        f(h_b, r_b, e_{cj}) & \text{otherwise} \end{cases}, \qquad
        m_{bj} = \mathbb{1}[e_{cj} \ne x_b]

    with :math:`f` the model's score and :math:`x_b` the replaced entity; :math:`m` marks the
    negatives that differ from the positive (a sLCWA loss's ``mask``). Per chunk, the
    head-corrupting positives are scored with one ``score_heads(r, t, entities=e_c)`` and the
    others with one ``score_tails(h, r, entities=e_c)`` (a ``[C, k]`` matrix product or
    distance kernel; one call when the model scores both sides at once), instead of
    :math:`C k` gathered triples: the scores equal ``model._score_corrupted`` with
    ``replacement = negatives[chunk]`` up to float rounding.

    Args:
        model: A :class:`kg.base.KGEModel`.
        positives: This rank's positives ``(h, r, t)`` (a contiguous run of the global batch).
        corrupt_head: Their sides, bool.
        negatives: Every chunk's negatives (the global batch's).
        chunk: Each positive's chunk id, non-decreasing.

    Returns:
        ``scores`` (float ``[B, k]``) and ``mask`` (bool ``[B, k]``).

    Shapes:
        ``positives: [B, 3]``, ``corrupt_head: [B]``, ``negatives: [n_c, k]``, ``chunk: [B]``.
    """
    head, rel, tail = positives.unbind(1)
    pieces = []
    ids, counts = torch.unique_consecutive(chunk, return_counts=True)
    start = 0
    for c, n in zip(ids.tolist(), counts.tolist()):
        part = slice(start, start + n)
        start += n
        side = corrupt_head[part]  # [n]
        at_head = torch.nonzero(side)[:, 0]
        at_tail = torch.nonzero(~side)[:, 0]
        cand = negatives[c]  # [k]
        h, r, t = head[part], rel[part], tail[part]
        head_side = (r[at_head], t[at_head])
        tail_side = (h[at_tail], r[at_tail])
        both = model._both_sides(head_side, tail_side, cand)
        if both is None:  # a side without rows is skipped (an empty lookup breaks the backward)
            sides = [model.score_heads(*head_side, entities=cand)] if at_head.numel() else []
            if at_tail.numel():
                sides.append(model.score_tails(*tail_side, cand))
            both = torch.cat(sides)  # [n, k], head-corrupting rows first
        order = torch.cat([at_head, at_tail])  # row of ``both`` -> position in the chunk
        pieces.append(both[torch.argsort(order)])  # [n, k]
    scores = torch.cat(pieces) if pieces else negatives.new_zeros(0, negatives.size(1)).float()
    replaced = torch.where(corrupt_head, head, tail)  # [B]
    mask = negatives[chunk] != replaced[:, None]  # [B, k]
    return scores, mask
