r"""Training losses for knowledge-graph embeddings.

Two families, after the training regimes: sLCWA (PyKEEN; Ali et al., "Bringing Light Into the
Dark", TPAMI 2021, arXiv 2006.13365), and 1-N scoring, KvsAll (Dettmers et al., "Convolutional
2D Knowledge Graph Embeddings", AAAI 2018, arXiv 1707.01476) and 1vsAll (Lacroix et al.,
"Canonical Tensor Decomposition for Knowledge Base Completion", ICML 2018, arXiv 1806.07297):

* **sLCWA** losses take the scores of the positives ``[B]`` and of their ``k`` corrupted copies
  ``[B, k]``, plus an optional boolean mask ``[B, k]`` that drops filtered false negatives
  (:func:`margin_ranking_loss`, :func:`softplus_loss`, :func:`bce_loss`, :func:`nssa_loss`).
* **1-N** losses take the scores of every entity ``[B, E]`` (:func:`kvsall_bce_loss` for KvsAll
  with dense targets, :func:`kvsall_bce_loss_coo` with the answers as index pairs,
  :func:`one_vs_all_loss` for 1vsAll).

The two 1-N losses the trainer uses (:func:`kvsall_bce_loss_coo`, :func:`one_vs_all_loss`) have
hand-written backward passes: on FB15k-237 (14,541 entities) the ``[B, E]`` element-wise passes
of autograd's BCE (a dense target, ``log_sigmoid`` forward and backward) cost a third of a
ComplEx step besides the matrix products. Each computes the probabilities once in the forward
pass and turns them into the gradient in place in the backward pass, which therefore runs once
(no ``retain_graph=True`` through it).

Scores are plausibilities (higher = more plausible), as every :mod:`kg` model returns them.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from graphdata.errors import GraphDataError

__all__ = [
    "margin_ranking_loss",
    "softplus_loss",
    "bce_loss",
    "nssa_loss",
    "kvsall_bce_loss",
    "kvsall_bce_loss_coo",
    "one_vs_all_loss",
]


def _check_number(name: str, value: float, *, high: float | None = None) -> float:
    """Return ``value`` as a float if it is finite, >= 0 and below ``high``; else raise.

    A NaN temperature used to drop every negative silently, a NaN margin to make the loss NaN.
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok and math.isfinite(value) and value >= 0 and (high is None or value < high):
        return float(value)
    span = f"in [0, {high:g})" if high is not None else ">= 0"
    raise GraphDataError(
        f"{name}: expected a finite number {span}, got {value!r}; pass a finite {name} {span}"
    )


def _check_pairs(pos: Tensor, neg: Tensor, mask: Tensor | None) -> Tensor:
    """Validate sLCWA inputs and return the float mask ``[B, k]`` (1 = keep)."""
    if pos.dim() != 1 or neg.dim() != 2 or neg.size(0) != pos.size(0):
        raise GraphDataError(
            f"scores: expected positive scores [B] and negative scores [B, k], got "
            f"{tuple(pos.shape)} and {tuple(neg.shape)}; reshape the negatives to [B, k]"
        )
    if mask is None:
        return torch.ones_like(neg)
    if mask.shape != neg.shape:
        raise GraphDataError(
            f"mask: expected the shape of the negative scores {tuple(neg.shape)}, "
            f"got {tuple(mask.shape)}"
        )
    return mask.to(neg.dtype)


def margin_ranking_loss(
    pos: Tensor, neg: Tensor, *, margin: float = 1.0, mask: Tensor | None = None
) -> Tensor:
    r"""Pairwise margin ranking loss, as in TransE.

    Bordes et al., "Translating Embeddings for Modeling Multi-relational Data", NeurIPS 2013.

    .. math::
        L = \frac{1}{|M|} \sum_{(b, j) \in M} \max\bigl(0,\ \gamma - f^+_b + f^-_{bj}\bigr)

    :math:`f^+_b` is the score of positive ``b``, :math:`f^-_{bj}` that of its ``j``-th negative,
    :math:`\gamma` the margin and :math:`M` the kept (unmasked) pairs; the loss is 0 when
    :math:`M` is empty.

    Args:
        pos: Scores of the positive triples.
        neg: Scores of their corrupted copies.
        margin: The margin :math:`\gamma`. Default 1.0.
        mask: ``True`` where a negative is kept; ``None`` (default) keeps all.

    Returns:
        The scalar loss.

    Shapes:
        ``pos: [B]``, ``neg: [B, k]``, ``mask: [B, k]`` -> ``[]``.

    Examples:
        >>> margin_ranking_loss(torch.tensor([2.0]), torch.tensor([[0.5, 1.5]]))
        tensor(0.2500)
    """
    keep = _check_pairs(pos, neg, mask)
    margin = _check_number("margin", margin)
    hinge = F.relu(margin - pos.unsqueeze(1) + neg)  # [B, k]
    return (hinge * keep).sum() / keep.sum().clamp_min(1.0)


def softplus_loss(pos: Tensor, neg: Tensor, *, mask: Tensor | None = None) -> Tensor:
    r"""Pointwise softplus (logistic) loss, as in ComplEx.

    Trouillon et al., "Complex Embeddings for Simple Link Prediction", ICML 2016,
    arXiv 1606.06357.

    .. math::
        L = \frac{1}{B + |M|} \Bigl( \sum_b \operatorname{softplus}(-f^+_b)
            + \sum_{(b, j) \in M} \operatorname{softplus}(f^-_{bj}) \Bigr),
        \quad \operatorname{softplus}(x) = \log(1 + e^x)

    i.e. :math:`\operatorname{softplus}(-y f)` with labels :math:`y = \pm 1`, averaged over every
    kept score as PyKEEN's ``SoftplusLoss`` does. It equals :func:`bce_loss` without smoothing.

    Args:
        pos: Scores of the positive triples.
        neg: Scores of their corrupted copies.
        mask: ``True`` where a negative is kept; ``None`` (default) keeps all.

    Returns:
        The scalar loss.

    Shapes:
        ``pos: [B]``, ``neg: [B, k]``, ``mask: [B, k]`` -> ``[]``.

    Examples:
        >>> softplus_loss(torch.tensor([0.0]), torch.tensor([[0.0]]))
        tensor(0.6931)
    """
    keep = _check_pairs(pos, neg, mask)
    total = F.softplus(-pos).sum() + (F.softplus(neg) * keep).sum()
    return total / (pos.numel() + keep.sum())


def bce_loss(
    pos: Tensor, neg: Tensor, *, label_smoothing: float = 0.0, mask: Tensor | None = None
) -> Tensor:
    r"""Binary cross-entropy on logits over positives and negatives (sLCWA).

    The pointwise loss of PyKEEN's ``BCEWithLogitsLoss`` (Ali et al., "Bringing Light Into the
    Dark", TPAMI 2021, arXiv 2006.13365).

    .. math::
        L = \frac{1}{B + |M|} \Bigl( \sum_b \ell(f^+_b, 1 - \varepsilon)
            + \sum_{(b, j) \in M} \ell(f^-_{bj}, \varepsilon) \Bigr),
        \quad \ell(f, y) = -y \log \sigma(f) - (1 - y) \log \sigma(-f)

    :math:`\varepsilon` is the label smoothing (two classes: targets :math:`1 - \varepsilon` and
    :math:`\varepsilon`, PyKEEN's ``apply_label_smoothing``); with :math:`\varepsilon = 0` this is
    :func:`softplus_loss`.

    Args:
        pos: Scores (logits) of the positive triples.
        neg: Scores of their corrupted copies.
        label_smoothing: :math:`\varepsilon \in [0, 1)`. Default 0.0.
        mask: ``True`` where a negative is kept; ``None`` (default) keeps all.

    Returns:
        The scalar loss.

    Shapes:
        ``pos: [B]``, ``neg: [B, k]``, ``mask: [B, k]`` -> ``[]``.

    Examples:
        >>> bce_loss(torch.tensor([0.0]), torch.tensor([[0.0]]))
        tensor(0.6931)
    """
    keep = _check_pairs(pos, neg, mask)
    eps = _check_number("label_smoothing", label_smoothing, high=1.0)
    pos_term = F.binary_cross_entropy_with_logits(
        pos, torch.full_like(pos, 1.0 - eps), reduction="sum"
    )
    neg_term = F.binary_cross_entropy_with_logits(neg, torch.full_like(neg, eps), reduction="none")
    return (pos_term + (neg_term * keep).sum()) / (pos.numel() + keep.sum())


def nssa_loss(
    pos: Tensor,
    neg: Tensor,
    *,
    margin: float = 0.0,
    adversarial_temperature: float = 1.0,
    mask: Tensor | None = None,
) -> Tensor:
    r"""Self-adversarial negative sampling loss (NSSA), as in RotatE.

    Sun et al., "RotatE: Knowledge Graph Embedding by Relational Rotation in Complex Space",
    ICLR 2019, arXiv 1902.10197, eq. 5.

    .. math::
        L = \frac{1}{2B} \sum_b \Bigl( -\log \sigma(\gamma + f^+_b)
            - \sum_{j:(b,j) \in M} p_{bj} \log \sigma(-\gamma - f^-_{bj}) \Bigr),
        \quad p_{bj} = \operatorname{sg}\Bigl[
            \frac{\exp(\alpha f^-_{bj})}{\sum_{j':(b,j') \in M} \exp(\alpha f^-_{bj'})} \Bigr]

    The paper writes :math:`f = \gamma - d` with a distance :math:`d`; here :math:`f` is the
    model's score (:math:`-d` for distance models), so pass ``margin=gamma`` for a model whose
    score has no margin, and ``margin=0`` for one that already adds it (our RotatE).
    :math:`\operatorname{sg}` stops the gradient (the weights are detached, as in the reference
    ``codes/model.py``); :math:`\alpha` is the adversarial temperature. The two parts are
    averaged over the batch and halved, as the reference code and PyKEEN's ``NSSALoss`` do; a row
    whose negatives are all masked contributes only its positive part.

    Args:
        pos: Scores of the positive triples.
        neg: Scores of their corrupted copies.
        margin: The margin :math:`\gamma` added to every score. Default 0.0.
        adversarial_temperature: :math:`\alpha`; 0 gives uniform weights. Default 1.0.
        mask: ``True`` where a negative is kept; ``None`` (default) keeps all.

    Returns:
        The scalar loss.

    Shapes:
        ``pos: [B]``, ``neg: [B, k]``, ``mask: [B, k]`` -> ``[]``.

    Examples:
        >>> nssa_loss(torch.tensor([0.0]), torch.tensor([[0.0, 0.0]]))
        tensor(0.6931)
    """
    keep = _check_pairs(pos, neg, mask)
    margin = _check_number("margin", margin)
    alpha = _check_number("adversarial_temperature", adversarial_temperature)
    logits = (alpha * neg.detach()).masked_fill(keep == 0, float("-inf"))
    # A fully masked row gives softmax NaN (0/0): zero it, that row then has no negative part.
    weights = torch.softmax(logits, dim=-1).nan_to_num(0.0)  # [B, k]
    pos_part = -F.logsigmoid(margin + pos)  # [B]
    neg_part = -(weights * F.logsigmoid(-margin - neg)).sum(dim=-1)  # [B]
    return (pos_part.mean() + neg_part.mean()) / 2


def kvsall_bce_loss(scores: Tensor, targets: Tensor, *, label_smoothing: float = 0.0) -> Tensor:
    r"""1-N binary cross-entropy over all entities (KvsAll), as in ConvE.

    Dettmers et al., "Convolutional 2D Knowledge Graph Embeddings", AAAI 2018, arXiv 1707.01476.

    .. math::
        L = \frac{1}{B E} \sum_{b, e} -y'_{be} \log \sigma(f_{be})
            - (1 - y'_{be}) \log \sigma(-f_{be}),
        \quad y' = (1 - \varepsilon) y + \varepsilon / E

    :math:`y_{be} = 1` iff entity :math:`e` answers query :math:`b` in the training set (multi-hot),
    :math:`E` the number of entities and :math:`\varepsilon` the label smoothing (Szegedy et al.,
    arXiv 1512.00567). ConvE's and TuckER's code add :math:`1/E` instead of :math:`\varepsilon/E`;
    we use the standard form.

    Args:
        scores: Logits of every entity for each query.
        targets: Multi-hot targets (0/1, any dtype).
        label_smoothing: :math:`\varepsilon \in [0, 1)`. Default 0.0.

    Returns:
        The scalar loss.

    Shapes:
        ``scores: [B, E]``, ``targets: [B, E]`` -> ``[]``.

    Examples:
        >>> kvsall_bce_loss(torch.zeros(1, 3), torch.tensor([[1.0, 0.0, 0.0]]))
        tensor(0.6931)
    """
    if scores.shape != targets.shape or scores.dim() != 2:
        raise GraphDataError(
            f"targets: expected the shape of scores [B, E] {tuple(scores.shape)}, "
            f"got {tuple(targets.shape)}"
        )
    label_smoothing = _check_number("label_smoothing", label_smoothing, high=1.0)
    y = targets.to(scores.dtype)
    if label_smoothing:
        y = (1.0 - label_smoothing) * y + label_smoothing / scores.size(1)
    return F.binary_cross_entropy_with_logits(scores, y)


def one_vs_all_loss(
    scores: Tensor,
    target: Tensor,
    *,
    label_smoothing: float = 0.0,
    overwrite_scores: bool = False,
) -> Tensor:
    r"""1vsAll cross-entropy over all entities, as in ComplEx-N3.

    Lacroix et al., "Canonical Tensor Decomposition for Knowledge Base Completion", ICML 2018,
    arXiv 1806.07297.

    .. math::
        L = \frac{1}{B} \sum_b \Bigl( -(1 - \varepsilon) \log \operatorname{softmax}(f_b)_{t_b}
            - \frac{\varepsilon}{E} \sum_e \log \operatorname{softmax}(f_b)_e \Bigr)

    :math:`f_b` are the scores of all :math:`E` entities for query :math:`b`, :math:`t_b` its true
    answer and :math:`\varepsilon` the label smoothing (:func:`torch.nn.functional.cross_entropy`
    semantics). Under autograd the softmax is computed once, in place, as
    :math:`m_b = \max_e f_{be}`, :math:`s_b = \sum_e e^{f_{be} - m_b}`,
    :math:`\operatorname{softmax}(f_b)_e = e^{f_{be} - m_b} / s_b`, with
    :math:`\log \sum_e e^{f_{be}} = m_b + \log s_b`, so that

    .. math::
        L_b = (1 - \varepsilon)(m_b + \log s_b - f_{b t_b})
            + \varepsilon \Bigl(m_b + \log s_b - \frac{1}{E} \sum_e f_{be}\Bigr),

    and the gradient :math:`(\operatorname{softmax}(f_b) - (1 - \varepsilon) \mathbb{1}_{t_b} -
    \varepsilon / E) / B` is written over the probabilities.

    Args:
        scores: Scores of every entity for each query.
        target: Index of the true entity per query.
        label_smoothing: :math:`\varepsilon \in [0, 1)`. Default 0.0.
        overwrite_scores: Compute the probabilities (then the gradient) in ``scores``' memory
            instead of a copy, for a caller that does not read ``scores`` again (the trainer:
            one page-faulting ``[B, E]`` allocation less per batch). Where an operation that
            made ``scores`` saved them for its own backward, that backward raises autograd's
            in-place error. Default False.

    Returns:
        The scalar loss.

    Shapes:
        ``scores: [B, E]``, ``target: [B]`` -> ``[]``.

    Examples:
        >>> one_vs_all_loss(torch.zeros(2, 4), torch.tensor([0, 3]))
        tensor(1.3863)
    """
    if scores.dim() != 2 or target.shape != scores.shape[:1]:
        raise GraphDataError(
            f"target: expected one index per row of scores [B, E] {tuple(scores.shape)}, "
            f"got shape {tuple(target.shape)}"
        )
    label_smoothing = _check_number("label_smoothing", label_smoothing, high=1.0)
    if not (scores.requires_grad and torch.is_grad_enabled()):
        return F.cross_entropy(scores, target, label_smoothing=label_smoothing)
    return _OneVsAll.apply(scores, target, label_smoothing, bool(overwrite_scores))


class _OneVsAll(torch.autograd.Function):
    # Forward (one_vs_all_loss's docstring): f_t and the row means of f are read first, then
    # p = softmax(f) in place; the loss from m + log s. Backward:
    #   dL/df_be = (p_be - (1 - eps) 1[e = t_b] - eps / E) / B, written over p in place.

    @staticmethod
    def forward(ctx: Any, scores: Tensor, target: Tensor, eps: float, overwrite: bool) -> Tensor:
        b, e = scores.shape
        rows = torch.arange(b, device=scores.device)
        work = scores.detach()
        if work.dtype not in (torch.float32, torch.float64):
            work, overwrite = work.float(), True  # a copy of our own
        f_t = work[rows, target]
        mean = work.mean(dim=1) if eps else None
        p = work if overwrite else work.clone()  # clone keeps the [E, B] storage of kg.base
        lse = _softmax_(p)
        loss = (1.0 - eps) * (lse - f_t)
        if mean is not None:
            loss = loss + eps * (lse - mean)
        ctx.save_for_backward(p, target)
        ctx.eps, ctx.consumed, ctx.dtype = eps, False, scores.dtype
        return loss.mean().to(scores.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        p, target = _consume(ctx, "one_vs_all_loss")
        b, e = p.shape
        scale = grad.to(p.dtype) / b
        rows = torch.arange(b, device=p.device)
        g = p.mul_(scale)
        g[rows, target] -= (1.0 - ctx.eps) * scale
        if ctx.eps:
            g.sub_(ctx.eps / e * scale)
        return g.to(ctx.dtype), None, None, None


def _softmax_(f: Tensor) -> Tensor:
    r"""Overwrite ``f`` ``[B, E]`` with its row softmax; return :math:`\log \sum_e e^{f_{be}}`.

    :math:`m_b = \max_e f_{be}`, :math:`s_b = \sum_e e^{f_{be} - m_b}`, then
    :math:`f_{be} \leftarrow e^{f_{be} - m_b} / s_b` and :math:`\operatorname{lse}_b = m_b +
    \log s_b` (exact where :math:`\log \operatorname{softmax}_{t}` would underflow).

    On the ``[E, B]`` storage of :mod:`kg.base`'s training product the row reductions run over
    the storage's first dimension, where ATen's softmax, ``amax`` and ``sum`` are slow (ComplEx's
    1,000 x 14,505 batch on one core: softmax 100 ms, ``amax`` 14 ms, ``sum`` 11 ms): the maximum
    is taken over cache-sized blocks of storage rows and the sum as a matrix-vector product with
    ones (4 and 2 ms); the in-place passes stream either order at memory speed.
    """
    if f.stride(0) == 1 and f.stride(1) != 1:  # [E, B] storage
        storage = f.t()
        rows = max(1, _CHUNK // max(storage.size(1), 1))
        m = torch.stack([block.amax(dim=0) for block in storage.split(rows)]).amax(dim=0)  # [B]
        storage.sub_(m).exp_()
        s = torch.mv(storage.t(), storage.new_ones(storage.size(0)))  # [B]
        storage.div_(s)
        return m + s.log()
    m = f.amax(dim=1, keepdim=True)  # [B, 1]
    f.sub_(m).exp_()
    s = f.sum(dim=1, keepdim=True)
    f.div_(s)
    return (m + s.log()).squeeze(1)


def kvsall_bce_loss_coo(
    scores: Tensor,
    rows: Tensor,
    cols: Tensor,
    *,
    label_smoothing: float = 0.0,
    overwrite_scores: bool = False,
) -> Tensor:
    r""":func:`kvsall_bce_loss` with the multi-hot targets given as index pairs.

    Dettmers et al., "Convolutional 2D Knowledge Graph Embeddings", AAAI 2018, arXiv 1707.01476.

    .. math::
        L = \frac{1}{B E} \Bigl( \sum_{b, e} \operatorname{softplus}(f_{be})
            - (1 - \varepsilon) \sum_{(b, e) \in Y} f_{be}
            - \frac{\varepsilon}{E} \sum_{b, e} f_{be} \Bigr)

    which equals :func:`kvsall_bce_loss` with :math:`y_{be} = 1` for the pairs
    :math:`(b, e) \in Y = \{(\text{rows}_i, \text{cols}_i)\}` (distinct) and 0 elsewhere,
    because :math:`-y \log\sigma(f) - (1 - y)\log\sigma(-f) = \operatorname{softplus}(f) - y f`.
    No ``[B, E]`` target is built; the gradient :math:`(\sigma(f) - y') / (B E)` is written over
    the probabilities in place.

    Args:
        scores: Logits of every entity for each query.
        rows: Query index of each answer.
        cols: Entity index of each answer (pairs distinct).
        label_smoothing: :math:`\varepsilon \in [0, 1)`. Default 0.0.
        overwrite_scores: Write the probabilities (then the gradient) over ``scores``' memory
            instead of a new ``[B, E]`` tensor, for a caller that does not read ``scores``
            again (the trainer: one page-faulting allocation less per batch). Where an
            operation that made ``scores`` saved them for its own backward, that backward
            raises autograd's in-place error. Default False.

    Returns:
        The scalar loss.

    Shapes:
        ``scores: [B, E]``, ``rows, cols: [P]`` -> ``[]``.

    Examples:
        >>> kvsall_bce_loss_coo(torch.zeros(1, 3), torch.tensor([0]), torch.tensor([0]))
        tensor(0.6931)
    """
    if scores.dim() != 2 or rows.shape != cols.shape or rows.dim() != 1:
        raise GraphDataError(
            f"rows, cols: expected two index vectors of one length for scores [B, E], got "
            f"scores {tuple(scores.shape)}, rows {tuple(rows.shape)}, cols {tuple(cols.shape)}"
        )
    label_smoothing = _check_number("label_smoothing", label_smoothing, high=1.0)
    return _KvsAllBCE.apply(scores, rows, cols, label_smoothing, bool(overwrite_scores))


class _KvsAllBCE(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, scores: Tensor, rows: Tensor, cols: Tensor, eps: float, overwrite: bool
    ) -> Tensor:
        b, e = scores.shape
        work = scores.detach()
        if work.dtype not in (torch.float32, torch.float64):
            work, overwrite = work.float(), True  # a copy of our own
        total = -(1.0 - eps) * work[rows, cols].sum()
        if eps:
            total = total - eps / e * work.sum()
        p, softplus = _sigmoid_and_softplus_sum(work, out=work if overwrite else None)
        total = total + softplus
        ctx.eps, ctx.consumed, ctx.dtype = eps, False, scores.dtype
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(p, rows, cols)
        return (total / (b * e)).to(scores.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        p, rows, cols = _consume(ctx, "kvsall_bce_loss_coo")
        b, e = p.shape
        scale = grad.to(p.dtype) / (b * e)
        g = p.mul_(scale)
        g.index_put_((rows, cols), -(1.0 - ctx.eps) * scale, accumulate=True)
        if ctx.eps:
            g.sub_(ctx.eps / e * scale)
        return g.to(ctx.dtype), None, None, None, None


#: Elements per chunk of :func:`_sigmoid_and_softplus_sum`: 512 KiB of float32, so a chunk's
#: passes stay in a core's L2 cache instead of streaming ``[B, E]`` temporaries through memory.
_CHUNK = 1 << 17


def _sigmoid_and_softplus_sum(f: Tensor, out: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r""":math:`\sigma(f)` elementwise and :math:`\sum \operatorname{softplus}(f)`, from one sigmoid.

    With :math:`\sigma(|f|) = \max(\sigma(f), 1 - \sigma(f))`,

    .. math::
        \operatorname{softplus}(f) = \log(1 + e^f) = \max(f, 0) - \log \sigma(|f|)

    (for :math:`f \ge 0`, :math:`\log(1 + e^f) = f - \log \sigma(f)`; for :math:`f < 0`,
    :math:`\log(1 + e^f) = -\log \sigma(-f)`). Each term is exact up to rounding:
    :math:`\sigma(|f|) \in [1/2, 1]`, so its logarithm is off by at most about one unit in the
    last place of 1 (:math:`2^{-24}` in float32, where :math:`\sigma(|f|)` rounds to 1 beyond
    :math:`|f| \approx 17` and the term :math:`e^{-|f|} < 2^{-24}` drops). The BCE's gradient
    needs :math:`\sigma(f)` anyway, and one logarithm costs less than softplus's exp and log1p.
    Rows of the storage go in chunks that fit a core's cache; ``out`` (``f`` itself allowed)
    receives :math:`\sigma(f)`, a new tensor when ``None``.
    """
    if f.dim() == 2 and f.stride(0) == 1 and f.stride(1) != 1:  # [E, B] storage (kg.base)
        p, total = _sigmoid_and_softplus_sum(f.t(), None if out is None else out.t())
        return p.t(), total
    p = torch.empty_like(f) if out is None else out
    rows = max(1, _CHUNK // max(f.size(1), 1))
    scratch = f.new_empty(min(rows, f.size(0)), f.size(1))
    total = f.new_zeros(())
    for start in range(0, f.size(0), rows):
        chunk, probability = f[start : start + rows], p[start : start + rows]
        work = scratch[: chunk.size(0)]
        total += torch.clamp(chunk, min=0.0, out=work).sum()  # before chunk may be overwritten
        torch.sigmoid(chunk, out=probability)
        torch.neg(probability, out=work).add_(1.0)  # 1 - sigma(f)
        total -= torch.maximum(probability, work, out=work).log_().sum()  # log sigma(|f|)
    return p, total


def _consume(ctx: Any, name: str) -> tuple[Tensor, ...]:
    """The saved tensors of a 1-N loss whose backward overwrites them (so it may run once)."""
    if ctx.consumed:
        raise RuntimeError(
            f"{name}: backward writes the gradient over its saved probabilities and runs once; "
            "do not pass retain_graph=True through it"
        )
    ctx.consumed = True
    return tuple(ctx.saved_tensors)
