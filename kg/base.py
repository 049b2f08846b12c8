r"""The small contract every knowledge-graph embedding model follows.

A model scores triples :math:`(h, r, t)` (higher = more plausible) three ways that agree up to
floating-point rounding: one score per triple (:meth:`KGEModel.forward`), every candidate tail
of a query :math:`(h, r, \cdot)` (:meth:`KGEModel.score_tails`) and every candidate head of
:math:`(\cdot, r, t)` (:meth:`KGEModel.score_heads`). New models override only the math; the shape
follows PyG's ``torch_geometric/nn/kge/base.py`` and PyKEEN's ``score_t``/``score_h`` idea.
"""

from __future__ import annotations

import abc
import functools
import math
import numbers
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor

from graphdata.errors import GraphDataError
from kg._distance import Workspace, gathered_distance, query_rows, row_distance
from kg._product import kept_product
from kg._regularizers import n3_sum
from kg._rows import Embedding

__all__ = ["KGEModel", "EntitySelection", "REGULARIZERS", "eval_mode"]


def _memory_bytes() -> int:
    """This machine's physical memory in bytes (1 TiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 2**40


def _check_rate(name: str, value: float) -> float:
    """Return a dropout rate as a float if it is a finite number in ``[0, 1)``, else raise.

    ``torch.nn.Dropout`` accepts NaN (and 1, which zeroes every activation).

    Args:
        name: The argument's name, for the message.
        value: The rate.

    Returns:
        ``float(value)``.

    Raises:
        GraphDataError: If ``value`` is not a finite number in ``[0, 1)``.

    Examples:
        >>> _check_rate("input_dropout", 0.2)
        0.2
    """
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok and math.isfinite(value) and 0 <= value < 1:
        return float(value)
    raise GraphDataError(
        f"{name}: expected a dropout rate in [0, 1), got {value!r}; pass e.g. {name}=0.2 "
        "(0 disables dropout)"
    )


@contextmanager
def eval_mode(module: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """Run a block with ``module`` in evaluation mode, then restore its mode (also on errors).

    A teacher or model scored in training mode would apply dropout and move batch-norm running
    statistics (ConvE); every scoring of a model the caller owns goes through this.

    Examples:
        >>> layer = torch.nn.Dropout().train()
        >>> with eval_mode(layer):
        ...     layer.training
        False
        >>> layer.training
        True
    """
    was_training = module.training
    module.eval()
    try:
        yield module
    finally:
        module.train(was_training)


#: Which candidate entities to score: all (``None``), a contiguous ``slice`` (a view, no copy),
#: or a 1-D ``LongTensor`` of entity ids.
EntitySelection = slice | Tensor | None

#: Regulariser kinds accepted by :meth:`KGEModel.regularization`.
REGULARIZERS = ("n3", "l2")

#: Id dtypes the scorers take: torch's embedding lookups and indexing read int64 and int32 ids
#: alike (the same scores); int16, int8, uint8, bool and float ids fail in them or index as masks.
ID_DTYPES = (torch.int64, torch.int32)

#: The id arguments of each public scorer, in order, checked by :func:`_checks_ids`.
_ID_ARGS = {
    "forward": ("head_index", "rel_type", "tail_index"),
    "score_tails": ("head_index", "rel_type"),
    "score_heads": ("rel_type", "tail_index"),
}


def _refuse_ids(name: str, value: object) -> None:
    """Raise the :class:`GraphDataError` for ids ``value`` of argument ``name``."""
    what = f"a {value.dtype} tensor" if isinstance(value, Tensor) else type(value).__name__
    raise GraphDataError(
        f"{name}: expected a LongTensor of ids (int64, or int32), got {what}; convert with "
        f"torch.as_tensor({name}, dtype=torch.long)"
    )


def _checks_ids(method: Callable[..., Tensor], names: tuple[str, ...]) -> Callable[..., Tensor]:
    """``method`` refusing id arguments that are not int64/int32 tensors, by name.

    O(1): a type and a dtype test per argument, never a pass over the ids (the scorers are the
    training and evaluation hot path). torch's own errors for such ids name none of the
    arguments (``Expected tensor for argument #1 'indices' to have one of the following scalar
    types: Long, Int``). A missing argument is left to Python's own TypeError.
    """

    @functools.wraps(method)
    def checked(self: KGEModel, *args: Any, **kwargs: Any) -> Tensor:
        for i, name in enumerate(names):
            if i >= len(args) and name not in kwargs:
                continue  # missing: the method's own TypeError says so
            value = args[i] if i < len(args) else kwargs[name]
            if not isinstance(value, Tensor) or value.dtype not in ID_DTYPES:
                _refuse_ids(name, value)
        return method(self, *args, **kwargs)

    checked._checks_ids = True  # type: ignore[attr-defined]
    return checked


class KGEModel(torch.nn.Module, abc.ABC):
    r"""Base class of the KGE models: ``forward``, ``score_tails``, ``score_heads`` and friends.

    The three scorers compute one function :math:`f` (higher = more plausible):

    .. math::
        \texttt{forward}(h, r, t)_b = f(h_b, r_b, t_b), \quad
        \texttt{score\_tails}(h, r)_{bc} = f(h_b, r_b, c), \quad
        \texttt{score\_heads}(r, t)_{bc} = f(c, r_b, t_b),

    for every candidate entity :math:`c` (all entities, or the ``entities`` selection).
    Subclasses implement :meth:`forward`, :meth:`score_tails`, :meth:`score_heads`,
    and :meth:`reset_parameters`, store their tables as ``entity`` and ``relation`` embeddings
    (or override :meth:`_regularized`, the table rows a regulariser penalises), and extend
    :attr:`config` with their own constructor arguments, so that ``type(model)(**model.config)``
    rebuilds an untrained copy.

    Args:
        num_entities: Number of entities :math:`|\mathcal{E}|` (ids ``0 .. num_entities - 1``).
        num_relations: Number of relations (ids ``0 .. num_relations - 1``); with reciprocal
            training this counts the inverse relations too.
        dim: Embedding size (complex components for the complex-valued models).

    Raises:
        GraphDataError: If a size is not a positive integer.

    Examples:
        >>> from kg.distmult import DistMult
        >>> model = DistMult(4, 2, dim=3)
        >>> h, r, t = torch.tensor([0, 1]), torch.tensor([1, 1]), torch.tensor([2, 3])
        >>> torch.allclose(model.score_tails(h, r)[torch.arange(2), t], model(h, r, t))
        True
    """

    #: The key of this class in :data:`kg.models.MODELS` (stored in checkpoints).
    name: str = ""
    #: A one-buffer :class:`kg._distance.Workspace` the trainer lends while it trains, for the
    #: 1-N score product (:meth:`_dot_scores`); ``None`` otherwise.
    score_workspace: Workspace | None = None

    #: Byte budget for the ``[B, chunk, ...]`` intermediates of models that broadcast over
    #: candidates (RotatE, ConvE heads). 8 MiB: on a CPU, chunks near cache size ran RotatE's
    #: UMLS scoring about 3x faster than 64 MiB ones; on a GPU they are still large kernels.
    chunk_bytes: int = 8 * 2**20

    #: :math:`\gamma` of the NSSA loss that local re-training (:mod:`kg.explain.retrain`) uses
    #: for this model: the margin its own sLCWA training adds to the score (TransE's 9, which
    #: :data:`kg.models.DEFAULTS` reads from here). 0 for models trained without NSSA or whose score
    #: holds its margin (RotatE). A new model that trains with NSSA sets its own in its file.
    nssa_margin: float = 0.0

    #: The entity and relation tables every model stores (declared for the type checker; each
    #: model's ``__init__`` creates them).
    entity: Embedding
    relation: Embedding

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each scorer a subclass defines the O(1) id check of :func:`_checks_ids`.

        A model's ``forward``, ``score_tails`` and ``score_heads`` then refuse ids that are
        not an int64 or int32 tensor with a :class:`GraphDataError` naming the argument; the
        model's file holds only the math.
        """
        super().__init_subclass__(**kwargs)
        for method, names in _ID_ARGS.items():
            fn = cls.__dict__.get(method)
            if fn is not None and not getattr(fn, "__isabstractmethod__", False):
                if not getattr(fn, "_checks_ids", False):
                    setattr(cls, method, _checks_ids(fn, names))

    def __init__(self, num_entities: int, num_relations: int, dim: int) -> None:
        super().__init__()
        for arg, value in (
            ("num_entities", num_entities),
            ("num_relations", num_relations),
            ("dim", dim),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise GraphDataError(f"{arg}: expected a positive int, got {value!r}")
        self.num_entities = num_entities
        self.num_relations = num_relations
        self.dim = dim
        # Every model holds at least one dim-sized row per entity and relation.
        self._check_size((num_entities + num_relations) * dim)

    def _check_size(self, numel: int) -> None:
        """Refuse, before allocating, parameters of ``numel`` floats that cannot fit in memory.

        An absurd ``dim`` (a typo, a crafted checkpoint config) would otherwise allocate lazily
        and be killed by the OS, or fail deep inside torch.
        """
        need = numel * torch.tensor([], dtype=torch.get_default_dtype()).element_size()
        have = _memory_bytes()
        if need > have:
            raise GraphDataError(
                f"dim: {type(self).__name__}({self.num_entities}, {self.num_relations}, "
                f"dim={self.dim}) needs about {need / 2**30:,.1f} GiB for its parameters, more "
                f"than this machine's {have / 2**30:,.1f} GiB of memory; pass a smaller dim"
            )

    @property
    def config(self) -> dict[str, Any]:
        """Constructor arguments: ``type(model)(**model.config)`` rebuilds the architecture."""
        return {
            "num_entities": self.num_entities,
            "num_relations": self.num_relations,
            "dim": self.dim,
        }

    @abc.abstractmethod
    def reset_parameters(self) -> None:
        """Re-draw every learnable parameter from the model's initialisation."""

    @abc.abstractmethod
    def forward(self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor) -> Tensor:
        """Score each triple ``(head_index[b], rel_type[b], tail_index[b])``; shape ``[B]``."""

    @abc.abstractmethod
    def score_tails(
        self, head_index: Tensor, rel_type: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate tail of each query ``(h, r, ?)``; shape ``[B, C]``.

        ``C`` is ``num_entities`` or the size of ``entities``, and column ``c`` scores the
        triple ``(h, r, candidates[c])``.
        """

    @abc.abstractmethod
    def score_heads(
        self, rel_type: Tensor, tail_index: Tensor, entities: EntitySelection = None
    ) -> Tensor:
        """Score every candidate head of each query ``(?, r, t)``; shape ``[B, C]``."""

    #: Whether the rows of :meth:`_regularized` are complex vectors stored as ``[real |
    #: imaginary]`` halves (ComplEx, RotatE): the regulariser then takes complex moduli.
    _complex_rows: bool = False

    def _regularized(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> tuple[tuple[Embedding, Tensor], ...]:
        """The rows a regulariser penalises, as ``(table of [n, m] rows, row ids [k])`` pairs.

        Each id counts once per occurrence; heads and tails of one table share a pair.
        """
        entity_ids = torch.cat([head_index, tail_index])  # [2B]
        return (self.entity, entity_ids), (self.relation, rel_type)

    def regularization(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor, *, kind: str = "n3"
    ) -> Tensor:
        r"""Embedding regulariser of a batch, to be multiplied by a weight :math:`\lambda`.

        Lacroix et al., "Canonical Tensor Decomposition for Knowledge Base Completion",
        ICML 2018, arXiv 1806.07297 (N3).

        .. math::
            \Omega_{N3} = \frac{1}{3B} \sum_{b=1}^{B} \sum_{x \in \{e_{h_b}, w_{r_b}, e_{t_b}\}}
                \sum_i |x_i|^3, \qquad
            \Omega_{L2} = \frac{1}{B} \sum_{b=1}^{B} \sum_{x} \sum_i |x_i|^2

        :math:`|x_i|` is the modulus of coordinate :math:`i` (complex modulus for ComplEx and
        RotatE, so ComplEx-N3 is reproduced). Which embeddings enter is model-specific (RotatE's
        unit-modulus rotations and TuckER's core do not). The reference code
        (facebookresearch/kbc, ``regularizers.py``) computes :math:`\frac{w}{B} \sum_b \sum_x
        \sum_i |x_i|^3`, without the :math:`1/3`: its weight :math:`w` is :math:`\lambda / 3`
        here (``--reg 5e-2`` there is :math:`\lambda = 0.15`), and its ``F2`` is
        :math:`w\,\Omega_{L2}` (:math:`w = \lambda`).

        Args:
            head_index: Head ids.
            rel_type: Relation ids.
            tail_index: Tail ids.
            kind: ``"n3"`` or ``"l2"``. Default ``"n3"``.

        Returns:
            A scalar tensor (differentiable).

        Shapes:
            head_index, rel_type, tail_index: ``[B]``; output ``[]``.

        Raises:
            GraphDataError: If ``kind`` is unknown.
        """
        if kind not in REGULARIZERS:
            raise GraphDataError(f"kind: expected one of {REGULARIZERS}, got {kind!r}")
        batch = max(head_index.numel(), 1)
        total: Tensor | float = 0.0  # a Python zero keeps the rows' dtype in the sum
        for table, ids in self._regularized(head_index, rel_type, tail_index):
            # sum over occurrences = sum over distinct rows x their counts: each row's powers
            # are computed once (a 1-N batch repeats the few entities and relations of a small
            # graph hundreds of times). The whole table when most of its rows occur (no gather
            # and no scatter of the gradient); otherwise only the rows that occur (a batch of
            # FB15k-237 queries holds ~1/3 of its 474 relations, whose [474, m^2] RESCAL
            # matrices cost more than their lookup).
            if table.num_embeddings <= ids.numel():
                counts = torch.bincount(ids, minlength=table.num_embeddings)
                distinct = counts.nonzero().flatten()
                if 2 * distinct.numel() > table.num_embeddings:
                    rows = table.weight
                else:
                    rows, counts = table(distinct), counts[distinct]
            else:
                distinct, counts = torch.unique(ids, return_counts=True)
                rows = table(distinct)  # [U, m], a lookup (kg._rows: no [n, m] gradient table)
            if kind == "l2":
                # |z|^2 = re^2 + im^2: the same sum of squares over both halves of a complex row.
                total = total + torch.dot(counts.to(rows.dtype), rows.square().sum(-1))
            else:
                total = total + n3_sum(rows, complex_rows=self._complex_rows, row_weight=counts)
        return torch.as_tensor(total) / (batch if kind == "l2" else 3 * batch)

    def _both_sides(
        self,
        head_side: tuple[Tensor, Tensor],
        tail_side: tuple[Tensor, Tensor],
        entities: EntitySelection,
    ) -> Tensor | None:
        """``cat([score_heads(*head_side), score_tails(*tail_side)])`` in one pass, or ``None``.

        ``head_side`` is ``(rel_type [B_h], tail_index [B_h])``, the queries ``(?, r, t)``;
        ``tail_side`` is ``(head_index [B_t], rel_type [B_t])``, the queries ``(h, r, ?)``; the
        result is ``[B_h + B_t, C]``. Evaluation ranks both sides; models whose two sides share
        one kernel (a matmul or a distance against the entity table) score all queries at once.
        ``None`` (the default) makes the caller score the sides separately.
        """
        return None

    def _score_corrupted(
        self,
        head_index: Tensor,
        rel_type: Tensor,
        tail_index: Tensor,
        replacement: Tensor,
        corrupt_head: Tensor,
        *,
        workspace: Workspace | None = None,
    ) -> Tensor:
        """Scores ``[B, k]`` of ``(h, r, t)`` with the head (or tail) replaced by ``replacement``.

        Column ``j`` of row ``b`` scores ``(replacement[b, j], r_b, t_b)`` where
        ``corrupt_head[b, j]`` and ``(h_b, r_b, replacement[b, j])`` elsewhere, as ``forward``
        would. sLCWA training calls it; distance models override it to reuse one query per side
        and the buffers of ``workspace`` (:class:`kg._distance.Workspace`) from step to step.
        """
        b, k = replacement.shape
        heads = torch.where(corrupt_head, replacement, head_index[:, None])  # [B, k]
        tails = torch.where(corrupt_head, tail_index[:, None], replacement)
        rels = rel_type[:, None].expand(b, k)
        return self(heads.reshape(-1), rels.reshape(-1), tails.reshape(-1)).view(b, k)

    def _score_positives_and_corrupted(
        self,
        head_index: Tensor,
        rel_type: Tensor,
        tail_index: Tensor,
        replacement: Tensor,
        corrupt_head: Tensor,
        *,
        workspace: Workspace | None = None,
    ) -> tuple[Tensor, Tensor]:
        """``forward(h, r, t)`` ``[B]`` and :meth:`_score_corrupted` ``[B, k]`` of one sLCWA batch.

        Distance models override it to score the positives from the same looked-up rows and
        queries as their corruptions.
        """
        positive = self(head_index, rel_type, tail_index)
        negative = self._score_corrupted(
            head_index, rel_type, tail_index, replacement, corrupt_head, workspace=workspace
        )
        return positive, negative

    def bytes_per_query(self) -> int:
        """Approximate bytes of intermediates per query row of ``score_tails``/``score_heads``.

        Excludes the ``[B, C]`` output. Evaluation sizes its batches with it; models with large
        per-query work (TuckER's ``W_r``, ConvE's feature maps) override it.
        """
        return 8 * self.dim * 4

    def post_step(self) -> None:
        """Projection applied by the trainer after every optimiser step; a no-op by default."""

    def triple_representation(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> Tensor:
        """The per-coordinate interaction whose sum (or negative norm) is the score, ``[B, D]``.

        KGExplainer's distilled evaluator regresses its graph embedding onto it (the reference:
        ``h + r - t`` for TransE, ``h * r * t`` for DistMult). Every model writes its own in its
        file; one without a per-coordinate form returns its score as ``[B, 1]``.

        Raises:
            GraphDataError: For a model that does not define it.
        """
        raise GraphDataError(
            f"model: {type(self).__name__} defines no triple_representation, which the distilled "
            "evaluator of kg.explain regresses on; write it in the model's file (or return "
            "self(head_index, rel_type, tail_index).unsqueeze(-1) for the score alone)"
        )

    def project_rows(self, name: str, rows: Tensor) -> Tensor:
        """Project rows of parameter ``name`` as :meth:`post_step` projects the whole table.

        Local re-training (:mod:`kg.explain.retrain`) trains copies of entity rows and applies
        this after initialisation and after every step. Default: the rows unchanged (models
        whose :meth:`post_step` is a no-op); a model with a constraint overrides both.

        Args:
            name: The parameter's name (``"entity.weight"``, ``"bias"``).
            rows: ``[..., d]`` rows of that parameter.

        Returns:
            The projected rows, same shape.
        """
        return rows

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.config.items() if k != "num_entities")
        return f"{type(self).__name__}({self.num_entities}, {args})"

    # ---- helpers for subclasses ------------------------------------------------------------

    def _dot_scores(self, query: Tensor, candidates: Tensor, bias: Tensor | None = None) -> Tensor:
        """``query @ candidates.T + bias``, ``[B, C]``; under autograd stored as ``[C, B]``.

        While training, the product is computed as ``(candidates @ query.T).T``: MKL's sgemm on
        one core takes about half the time for ``[C, d] x [d, B]`` as for ``[B, d] x [d, C]``
        at FB15k-237's shapes (C = 14,505, d = 256, B = 256: 28 vs 54 ms), and the backward
        products run as fast from either layout (``benchmarks/RESULTS.md``, issue 17). The
        losses of :mod:`kg.losses` read the transposed view without copying it. While the
        trainer lends :attr:`score_workspace`, the product goes into its kept buffer
        (:func:`kg._product.kept_product`), and the gradient of the whole entity table into the
        table's kept gradient buffer (:mod:`kg._rows`); a ``bias`` is added in place there,
        and also into the product's own tensor when no workspace is lent.
        Without autograd (evaluation) the result is the plain contiguous product, the bias
        added by the same ``addmm``.
        """
        if torch.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (query, candidates, bias)
        ):
            # Without a lent workspace the product takes a tensor of its own, the bias still
            # added in place there (no second [B, C] block).
            table = self.entity  # its kept gradient buffer takes the whole table's gradient
            buffer = table.grad_buffer if candidates is table.weight else None
            return kept_product(
                candidates, query, self.score_workspace, bias=bias, candidates_grad=buffer
            )
        if bias is None:
            return query @ candidates.t()
        return torch.addmm(bias, query, candidates.t())  # no second [B, C] pass for the bias

    def _candidates(self, weight: Tensor, entities: EntitySelection) -> Tensor:
        """Rows of an entity table for the selected candidates, ``[C, ...]`` (a view for slices).

        While training routes lookups' gradients (:mod:`kg._rows`, :mod:`kg._sparse_optim`), a
        tensor of ids on the entity table is a lookup, so its gradient joins them (sLCWA's batched
        negatives) instead of a dense ``[E, d]`` table; the values are the same.
        """
        if (
            isinstance(entities, Tensor)
            and entities.dtype not in ID_DTYPES
            and entities.dtype != torch.bool  # a mask of the candidates, as torch reads it
        ):
            # torch indexes a uint8 tensor as a mask: ids [0, 3, 1] would pick rows 1 and 2;
            # int16, int8 and float tensors are refused by torch's indexing, naming no argument
            dtype = str(entities.dtype).removeprefix("torch.")
            mask = ", which torch reads as a mask" if entities.dtype == torch.uint8 else ""
            raise GraphDataError(
                f"entities: expected a 1-D tensor of entity ids (int64, or int32), got a "
                f"{dtype} tensor of {entities.numel()} values{mask}; pass entities.long()"
            )
        if (
            isinstance(entities, Tensor)
            and entities.dtype != torch.bool
            and weight is self.entity.weight
            and self.entity.grad_buffer is not None
        ):
            return self.entity(entities)
        return weight if entities is None else weight[entities]

    def _chunks(self, entities: EntitySelection, size: int) -> Iterator[EntitySelection]:
        """Split a candidate selection into pieces of at most ``size`` candidates."""
        size = max(int(size), 1)
        if entities is None or isinstance(entities, slice):
            # torch indexing only takes positive slice steps, so ``step > 0`` here.
            start, stop, step = (entities or slice(None)).indices(self.num_entities)
            for lo in range(start, stop, size * step):
                yield slice(lo, min(lo + size * step, stop), step)
        else:
            yield from entities.split(size)


class SideQueryModel(KGEModel):
    r"""A distance model whose sLCWA corruptions are scored against two queries per positive.

    Its score is a function of a distance :math:`\lVert q - e \rVert` between a query and an
    entity row: :math:`q = q_\text{tail}(h, r)` against :math:`e_x` for a replaced tail, and
    :math:`q = q_\text{head}(r, t)` against :math:`e_x` for a replaced head (TransE:
    :math:`h + r` and :math:`t - r`; RotatE: :math:`h \circ r` and :math:`t \circ \bar r`).
    A subclass gives the two queries (:meth:`_side_queries`), the distance
    (:attr:`_distance_kind`) and the score of a distance (:meth:`_from_distance`); the corrupted
    copies are then scored by :func:`kg._distance.gathered_distance` (its buffers and the entity
    table's kept gradient buffer reused from step to step), and the positives from the tail
    side's query, the rows looked up once.
    """

    @property
    @abc.abstractmethod
    def _distance_kind(self) -> str:
        """The ``kind`` of :func:`kg._distance.gathered_distance`."""

    @abc.abstractmethod
    def _side_queries(
        self, head_index: Tensor, rel_type: Tensor, tail_index: Tensor
    ) -> tuple[Tensor, Tensor]:
        """The tails' rows ``[B, w]`` and the queries ``[B, 2, w]`` (tail side, head side)."""

    @abc.abstractmethod
    def _from_distance(self, distance: Tensor) -> Tensor:
        """The score of a distance (elementwise)."""

    def _score_corrupted(
        self,
        head_index: Tensor,
        rel_type: Tensor,
        tail_index: Tensor,
        replacement: Tensor,
        corrupt_head: Tensor,
        *,
        workspace: Workspace | None = None,
    ) -> Tensor:
        _, queries = self._side_queries(head_index, rel_type, tail_index)
        return self._corruption_scores(queries, replacement, corrupt_head, workspace)

    def _score_positives_and_corrupted(
        self,
        head_index: Tensor,
        rel_type: Tensor,
        tail_index: Tensor,
        replacement: Tensor,
        corrupt_head: Tensor,
        *,
        workspace: Workspace | None = None,
    ) -> tuple[Tensor, Tensor]:
        tails, queries = self._side_queries(head_index, rel_type, tail_index)
        positive = self._from_distance(row_distance(queries[:, 0] - tails, self._distance_kind))
        return positive, self._corruption_scores(queries, replacement, corrupt_head, workspace)

    def _corruption_scores(
        self,
        queries: Tensor,
        replacement: Tensor,
        corrupt_head: Tensor,
        workspace: Workspace | None,
    ) -> Tensor:
        """Scores ``[B, k]`` of the corrupted copies against the side queries ``[B, 2, w]``."""
        distance = gathered_distance(
            queries.reshape(-1, queries.size(-1)),  # [2 B, w]: row 2 b + side
            query_rows(corrupt_head),
            self.entity.weight,
            replacement,
            kind=self._distance_kind,
            workspace=workspace,
            entity_grad=self.entity.grad_buffer,
        )
        return self._from_distance(distance)
