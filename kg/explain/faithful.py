r"""Model-faithful evaluation of explanations: relearn an entity without, or with only, them.

Fidelity on the distilled evaluator (:mod:`kg.explain.fidelity`) measures the evaluator, not the
KGE. Here the actual model is re-trained (issue 18). For a target :math:`(h, r, t)` and a set
:math:`S` of training triples, one endpoint :math:`e` at a time (:math:`e = h` for the tail
rank, :math:`e = t` for the head rank) has its row re-drawn from the model's own initialiser
(``init="random"``, default; ``"pretrained"`` starts from the trained rows) and fine-tuned for
``steps`` full-batch Adam steps on the model's own training objective over the training graph
:math:`G` with some triples removed, every other parameter frozen at its trained value. With
``FaithfulConfig.neighbours`` (default ``True``) the rows of :math:`e`'s neighbours, the other
ends of its training triples (the target's excluded), are re-drawn and fine-tuned with it: the
relearned set is :math:`R = \{e\} \cup \{x : x \ne e \text{ shares a training triple with }
e\}`; ``neighbours=False`` gives :math:`R = \{e\}`, whose trained neighbours then remember
:math:`e`. The user's model is never modified (the relearned rows are copies). One endpoint at
a time, because two endpoints relearned together from little evidence drift to alike rows, and
a bilinear score then rates the pair as if it were a self-loop.

**Objective.** With :math:`D = G \setminus (S \cup \{(h, r, t)\})` the kept triples, the 1vsAll
cross-entropy of :class:`kg.training.Trainer` (reciprocal: the rows of :math:`D` and their
inverses, tails only; otherwise tails and heads, halved), full batch, plus the regulariser:

.. math::
    \mathcal{L}_D(w) = \frac{1}{Z_D} \sum_{q \in Q(D)} \omega_q \Bigl(-f_w(q, y_q) + \log
        \sum_{x \in \mathcal{E}} \exp f_w(q, x)\Bigr) + \sum_{u \in R}
        \frac{\lambda\, n_D(u)}{c\,|D|} \sum_i |w_{u,i}|^p,

minimised over the rows :math:`w = (w_u)_{u \in R}`, :math:`w_u \in \mathbb{R}^d`, of the
relearned entities only. :math:`Q(D)` holds one query per training row (anchor, relation,
answer :math:`y_q`, side), :math:`\omega_q = 1` (reciprocal) or :math:`\frac12`,
:math:`Z_D = \sum_q \omega_q`, :math:`f_w` is the model's score with the rows of :math:`R`
replaced by :math:`w`, :math:`n_D(u)` counts the occurrences of :math:`u` as head or tail of a
triple of :math:`D` (a self-loop twice), and :math:`(c, p) = (3, 3)` for N3 or :math:`(1, 2)`
for L2 (:meth:`kg.base.KGEModel.regularization`; the other rows are frozen, so their terms are
constant). The objective is exact, not only the triples touching :math:`R`: each query
anchored outside :math:`R` contributes through its log-normaliser, whose frozen part
:math:`\log \sum_{x \notin R} \exp f(q, x)` is computed once per target, and only terms free
of :math:`w` are dropped (a test checks the gradient against autograd through the full loss).

**Necessity** of a removal :math:`S`: the target's filtered realistic rank (train, valid and
test filter; mean of the tail rank with :math:`h` relearned and the head rank with :math:`t`
relearned) after fine-tuning on :math:`G \setminus S`, minus that of the **control**,
fine-tuned the same way with nothing removed (fine-tuning alone moves ranks):

.. math::
    \Delta_{\mathrm{nec}}(S) = \operatorname{rank}\bigl(w^{(T)}_{G \setminus S}\bigr) -
        \operatorname{rank}\bigl(w^{(T)}_{G}\bigr),

positive when :math:`S` was needed. **Sufficiency** of :math:`S`: the rank after fine-tuning on
:math:`G \setminus (N(e) \setminus S)`, with :math:`N(e)` every training triple whose head or
tail is :math:`e`: the relearned row sees, of its own triples, those in :math:`S` alone. The
reference arms are the control (all of :math:`N(e)`) and ``"none"`` (none of it). Every arm of
a call starts from the same rows and takes the same steps; arms are fine-tuned together, each
with its own copy of the rows (Adam's element-wise updates never mix them), so batching changes
nothing but the speed.

A kept triple that touches :math:`R` enters the objective through its own score; any other
only through its query's log-normaliser, where the rows of :math:`R` are a few of the
:math:`|\mathcal{E}|` candidates. With ``neighbours=False`` (:math:`R = \{e\}`) the middle
triple of a length-3 path :math:`h \to x \to y \to t` reaches the relearned row only that
way, nearly invisible to this protocol; with the default it touches the relearned neighbour
:math:`x` of :math:`h` (and :math:`y` of :math:`t`).

Examples:
    >>> from graphdata.triples import KGDataset
    >>> from kg.complex import ComplEx
    >>> rows = [("a", "p", "b"), ("b", "q", "c"), ("a", "s", "d"), ("d", "g", "b")]
    >>> data = KGDataset.from_labeled(rows, rows[:1], [("a", "g", "c")])
    >>> model = ComplEx(4, 8, dim=4)
    >>> report = FaithfulEvaluator(model, data, config=FaithfulConfig(steps=5)).necessity(
    ...     ("a", "g", "c"), {"path": [("a", "p", "b"), ("b", "q", "c")]})
    >>> report.drop("control"), report.arms["path"].num_removed
    (0.0, 2)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor
from torch.func import functional_call

from graphdata.checks import check_seed
from graphdata.errors import GraphDataError, UnknownLabelError
from graphdata.triples import KGDataset
from graphdata.typing import LabeledTriple
from kg._regularizers import n3_sum
from kg.base import KGEModel, eval_mode
from kg.config import TrainingConfig
from kg.explain._teacher import check_finite_parameters, entity_parameters

__all__ = [
    "INITS",
    "FaithfulConfig",
    "ArmResult",
    "FaithfulReport",
    "FaithfulEvaluator",
    "necessity",
    "sufficiency",
    "equal_budget",
]

#: How the relearned rows start: re-drawn from the model's initialiser (default), or at their
#: trained values (from there the model rarely needs any one triple: the rows already encode it).
INITS = ("random", "pretrained")
#: Keys whose relearned columns hold more than this share of the softmax get their frozen
#: log-normaliser recomputed from the masked row instead of by subtraction (float64; below the
#: threshold the subtraction loses at most ~1e-6 relative).
_EXACT_MASS = 1e-3
#: Query keys scored per chunk when the frozen log-normalisers are computed.
_CHUNK = 4096


@dataclass
class FaithfulConfig:
    """Hyperparameters of the fine-tuning (module docstring); every arm uses the same."""

    steps: int = 100  # full-batch Adam steps on the relearned rows
    lr: float = 0.05  # Adam learning rate of the relearned rows
    init: str = "random"  # one of INITS
    # relearn the endpoint's neighbours too; False: the endpoint alone, whose trained neighbours
    # then remember it (a neighbour with one triple mirrors the endpoint's row: module doc)
    neighbours: bool = True
    seed: int = 0  # seeds the re-drawn rows

    def validate(self) -> None:
        """Raise :class:`~graphdata.errors.GraphDataError` naming the first invalid field."""
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 0:
            raise GraphDataError(f"steps: expected an int >= 0, got {self.steps!r}")
        lr = self.lr
        if (
            isinstance(lr, bool)
            or not isinstance(lr, (int, float))
            or not (math.isfinite(lr) and lr > 0)
        ):
            raise GraphDataError(f"lr: expected a finite number > 0, got {lr!r}")
        if self.init not in INITS:
            raise GraphDataError(f"init: expected one of {INITS}, got {self.init!r}")
        if not isinstance(self.neighbours, bool):
            raise GraphDataError(f"neighbours: expected True or False, got {self.neighbours!r}")
        check_seed("seed", self.seed, required=True)  # None too: no seed is drawn here


@dataclass(frozen=True)
class ArmResult:
    """The target after one arm's fine-tuning.

    Attributes:
        name: The arm's name (``"control"``, ``"none"``, ``"original"`` or the caller's key).
        num_removed: Training triples removed from the fine-tuning graph (the target excluded;
            for sufficiency, the larger of the two sides' counts).
        tail_score: :math:`f(h, r, t)` after relearning :math:`h`.
        head_score: :math:`f(h, r, t)` after relearning :math:`t` (for a reciprocal model the
            score its head ranking reads, :math:`f(t, r^{-1}, h)`).
        tail_rank: Filtered realistic rank of :math:`t` for :math:`(h, r, ?)`, :math:`h`
            relearned.
        head_rank: Filtered realistic rank of :math:`h` for :math:`(?, r, t)`, :math:`t`
            relearned.
    """

    name: str
    num_removed: int
    tail_score: float
    head_score: float
    tail_rank: float
    head_rank: float

    @property
    def score(self) -> float:
        """The mean of the two sides' scores."""
        return 0.5 * (self.tail_score + self.head_score)

    @property
    def rank(self) -> float:
        """The mean of the two sides' ranks (both-sides evaluation)."""
        return 0.5 * (self.tail_rank + self.head_rank)

    @property
    def reciprocal_rank(self) -> float:
        """The mean of the two sides' reciprocal ranks."""
        return 0.5 * (1.0 / self.tail_rank + 1.0 / self.head_rank)


@dataclass(frozen=True)
class FaithfulReport:
    """One target's arms: the untouched model, the control and the caller's arms.

    Attributes:
        target: The target ``(head, relation, tail)``.
        kind: ``"necessity"`` or ``"sufficiency"``.
        original: The trained model, untouched (no fine-tuning).
        control: Fine-tuned with nothing removed.
        arms: The caller's arms by name (and ``"none"`` for sufficiency).
        config: The fine-tuning hyperparameters used.
    """

    target: LabeledTriple
    kind: str
    original: ArmResult
    control: ArmResult
    arms: dict[str, ArmResult] = field(default_factory=dict)
    config: FaithfulConfig = field(default_factory=FaithfulConfig)

    def drop(self, name: str) -> float:
        r"""Rank of arm ``name`` minus the control's (``"control"`` gives 0 exactly).

        For necessity this is :math:`\Delta_{\mathrm{nec}}`; for sufficiency the distance of
        the explanation-only rank from the full-neighbourhood rank.
        """
        arm = self.control if name == "control" else self.arms.get(name)
        if arm is None:
            raise GraphDataError(
                f"name: expected 'control' or one of {sorted(self.arms)}, got {name!r}"
            )
        return arm.rank - self.control.rank


def equal_budget(
    triples: Sequence[Sequence[str]], n: int, filler: Sequence[Sequence[str]] = ()
) -> tuple[LabeledTriple, ...]:
    """The first ``n`` distinct triples of ``triples``, padded from ``filler`` when short.

    The equal-budget rule of the benchmark: every method is compared at the explanation's
    number of removed triples, trimmed by its own order, padded by a ranking of its own or a
    shared neutral one (``filler``), skipping repeats.

    Args:
        triples: The method's triples, best first.
        n: The budget.
        filler: Triples to pad with, in order. Default ``()``: no padding.

    Returns:
        At most ``n`` distinct triples (fewer only when both sequences run out).

    Examples:
        >>> equal_budget([("a", "r", "b"), ("a", "r", "b"), ("b", "r", "c")], 3,
        ...              [("b", "r", "c"), ("c", "r", "d")])
        (('a', 'r', 'b'), ('b', 'r', 'c'), ('c', 'r', 'd'))
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise GraphDataError(f"n: expected an int >= 0, got {n!r}")
    out: list[LabeledTriple] = []
    seen: set[LabeledTriple] = set()
    for triple in [*triples, *filler]:
        if len(out) == n:
            break
        key = (str(triple[0]), str(triple[1]), str(triple[2]))
        if key not in seen:
            seen.add(key)
            out.append(key)
    return tuple(out)


class _Methods(torch.nn.Module):
    """Calls a model method under :func:`torch.func.functional_call` (parameters ``model.*``)."""

    def __init__(self, model: KGEModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, method: str, *args: Tensor, entities: Tensor | None = None) -> Tensor:
        out: Tensor = getattr(self.model, method)(*args, entities=entities)
        return out


@dataclass
class _Target:
    """What one target's arms share: the relearned entities and the frozen normalisers."""

    ids: tuple[int, int, int]
    relearn: Tensor  # [k] entity ids of R (h, t)
    a_keys: Tensor  # [K_A] key ids whose anchor is in R
    b_keys: Tensor  # [K_B] the other keys
    b_frozen: Tensor  # [K_B] log sum_{e not in R} exp f(key, e), frozen model (float64)
    a_queries: Tensor  # [Q_A] queries whose anchor is in R
    b_queries: Tensor  # [Q_B] queries whose anchor is not in R and answer is
    touching: Tensor  # [N] bool: N(e), the training triples with head or tail e
    # the B keys' scores as q_key . w + o_key when linear in the candidate row w (else None):
    # [K_B, d] queries and [K_B, 1] offsets (FaithfulEvaluator._linear_keys)
    b_linear: tuple[Tensor, Tensor] | None = None


class FaithfulEvaluator:
    r"""Necessity and sufficiency of triple sets by relearning a target's endpoints (module doc).

    Args:
        model: The trained KGE (never modified).
        dataset: The dataset it was trained on (train is fine-tuned on; all splits filter).
        training: The config the model was trained with; its regime must be ``"1vsall"`` (the
            default of ComplEx, DistMult, TuckER, RESCAL and ConvE), and ``reciprocal``,
            ``regularizer`` and ``regularizer_weight`` define the objective. Default ``None``:
            ``TrainingConfig.from_defaults(model.name)``.
        config: The fine-tuning hyperparameters. Default ``FaithfulConfig()``.

    Raises:
        GraphDataError: On an unsupported regime, a model that does not fit the dataset, or an
            invalid config.
    """

    def __init__(
        self,
        model: KGEModel,
        dataset: KGDataset,
        *,
        training: TrainingConfig | None = None,
        config: FaithfulConfig | None = None,
    ) -> None:
        if not isinstance(model, KGEModel):
            raise GraphDataError(f"model: expected a KGEModel, got {type(model).__name__}")
        if not isinstance(dataset, KGDataset):
            raise GraphDataError(f"dataset: expected a KGDataset, got {type(dataset).__name__}")
        training = training if training is not None else TrainingConfig.from_defaults(model.name)
        if training.regime != "1vsall":
            raise GraphDataError(
                f"training: regime {training.regime!r} is not supported; the exact objective is "
                "written for the 1vsAll cross-entropy (TrainingConfig(regime='1vsall'), the "
                "default of complex, distmult, tucker, rescal and conve)"
            )
        self.config = config if config is not None else FaithfulConfig()
        self.config.validate()
        check_finite_parameters(model)
        relations = dataset.num_relations * (2 if training.reciprocal else 1)
        if model.num_entities != dataset.num_entities or model.num_relations != relations:
            raise GraphDataError(
                f"model: {model!r} does not fit dataset {dataset.name!r} ({dataset.num_entities} "
                f"entities, {relations} relations with reciprocal={training.reciprocal}); pass "
                "the dataset and the training config the model was trained with"
            )
        self.model, self.dataset, self.training = model, dataset, training
        self.device = model.entity.weight.device
        self._methods = _Methods(model)
        self._frozen = {f"model.{k}": v.detach() for k, v in model.named_parameters()}
        self._buffers = {f"model.{k}": v for k, v in model.named_buffers()}
        self._entity_tables = {
            f"model.{k}": v.detach() for k, v in entity_parameters(model).items()
        }
        train = dataset.train.mapped_triples.to(self.device)  # [N, 3]
        self.train = train
        num_e, num_r = dataset.num_entities, dataset.num_relations
        self._keys_of = ((train[:, 0] * num_r + train[:, 1]) * num_e + train[:, 2]).cpu()
        self._order = torch.argsort(self._keys_of)
        self._sorted_keys = self._keys_of[self._order]
        self._filter = dataset.filter_index().to(self.device)
        self._build_queries()
        self._targets: dict[tuple[tuple[int, int, int], str], _Target] = {}

    # ---- setup -----------------------------------------------------------------------------

    def _build_queries(self) -> None:
        """The training rows as queries (anchor, relation, answer, side, weight, triple)."""
        h, r, t = self.train.unbind(1)
        n = h.numel()
        index = torch.arange(n, device=self.device)
        if self.training.reciprocal:  # (h, r, ?) and (t, r + R, ?), tails only, weight 1
            anchor, rel, answer = (
                torch.cat([h, t]),
                torch.cat([r, r + self.dataset.num_relations]),
                torch.cat([t, h]),
            )
            side = torch.zeros(2 * n, dtype=torch.long, device=self.device)
            weight = torch.ones(2 * n, device=self.device)
        else:  # (h, r, ?) side 0 and (?, r, t) side 1, each weighted 1/2
            anchor, rel, answer = torch.cat([h, t]), torch.cat([r, r]), torch.cat([t, h])
            side = torch.cat([torch.zeros_like(h), torch.ones_like(h)])
            weight = torch.full((2 * n,), 0.5, device=self.device)
        self.q_anchor, self.q_rel, self.q_answer, self.q_weight = anchor, rel, answer, weight
        self.q_triple = torch.cat([index, index])
        code = (side * self.model.num_relations + rel) * self.dataset.num_entities + anchor
        keys, self.q_key = torch.unique(code, return_inverse=True)  # [K], [Q]
        ne = self.dataset.num_entities
        self.k_anchor = keys % ne
        self.k_rel = (keys // ne) % self.model.num_relations
        self.k_side = keys // (ne * self.model.num_relations)
        self.k_lse = self._frozen_lse(torch.arange(keys.numel(), device=self.device), None)

    def _frozen_scores(self, keys: Tensor, columns: Tensor | None) -> Tensor:
        """Frozen scores ``[len(keys), C]`` of the keys against ``columns`` (all: ``None``)."""
        cols = (
            columns
            if columns is not None
            else torch.arange(self.dataset.num_entities, device=self.device)
        )
        out = []
        with torch.no_grad(), eval_mode(self.model):
            for chunk in keys.split(_CHUNK):
                a, r, s = self.k_anchor[chunk], self.k_rel[chunk], self.k_side[chunk]
                rows = torch.empty(chunk.numel(), cols.numel(), device=self.device)
                tail, head = s == 0, s == 1
                if bool(tail.any()):
                    rows[tail] = self.model.score_tails(a[tail], r[tail], entities=cols)
                if bool(head.any()):
                    rows[head] = self.model.score_heads(r[head], a[head], entities=cols)
                out.append(rows)
        return torch.cat(out) if out else torch.empty(0, cols.numel(), device=self.device)

    def _frozen_lse(self, keys: Tensor, mask: Tensor | None) -> Tensor:
        """``log sum exp`` of each key's frozen row (float64), ``mask``ed columns left out."""
        out = []
        for chunk in keys.split(_CHUNK):
            rows = self._frozen_scores(chunk, None).double()
            if mask is not None:
                rows[:, mask] = -math.inf
            out.append(torch.logsumexp(rows, dim=1))
        return torch.cat(out) if out else torch.empty(0, dtype=torch.float64, device=self.device)

    def _resolve(
        self, triple: Sequence[str] | Sequence[int], argument: str
    ) -> tuple[int, int, int]:
        if isinstance(triple, str) or len(triple) != 3:
            raise GraphDataError(
                f"{argument}: expected a (head, relation, tail) triple, got {triple!r}"
            )
        ds = self.dataset
        vocabs = (ds.entities, ds.relations, ds.entities)
        ids = []
        for vocab, value in zip(vocabs, triple):
            if isinstance(value, str):
                if value not in vocab:
                    raise UnknownLabelError(vocab.kind, value, vocab.labels, argument)
                ids.append(vocab.id(value))
            elif isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(vocab):
                ids.append(int(value))
            else:
                raise GraphDataError(
                    f"{argument}: {value!r} in {triple!r} is neither a {vocab.kind} label nor an "
                    f"id in [0, {len(vocab)})"
                )
        return ids[0], ids[1], ids[2]

    def _triple_index(self, ids: tuple[int, int, int]) -> int:
        """Position of a triple in the training set, or -1."""
        num_e, num_r = self.dataset.num_entities, self.dataset.num_relations
        key = (ids[0] * num_r + ids[1]) * num_e + ids[2]
        pos = int(torch.searchsorted(self._sorted_keys, torch.tensor(key)))
        if pos < self._sorted_keys.numel() and int(self._sorted_keys[pos]) == key:
            return int(self._order[pos])
        return -1

    def _removal(
        self, target: tuple[int, int, int], triples: Sequence[Sequence[str]], argument: str
    ) -> Tensor:
        """Training positions of ``triples`` (each checked to be a training triple)."""
        if isinstance(triples, str):
            raise GraphDataError(f"{argument}: expected a sequence of triples, got a string")
        positions = []
        for triple in triples:
            ids = self._resolve(triple, argument)
            if ids == target:
                raise GraphDataError(
                    f"{argument}: holds the target {tuple(triple)!r}; the target is left out of "
                    "every arm's fine-tuning already, remove it from the set"
                )
            index = self._triple_index(ids)
            if index < 0:
                raise GraphDataError(
                    f"{argument}: {tuple(triple)!r} is not a training triple of dataset "
                    f"{self.dataset.name!r}; only triples of dataset.train can be removed (pass "
                    "the explanation's triples)"
                )
            positions.append(index)
        return torch.tensor(sorted(set(positions)), dtype=torch.long, device=self.device)

    def _target(self, ids: tuple[int, int, int], side: str) -> _Target:
        """The shared state of relearning ``h`` (``side="tail"``) or ``t`` (``"head"``)."""
        cached = self._targets.get((ids, side))
        if cached is not None:
            return cached
        h, _, t = ids
        e = h if side == "tail" else t
        own = (self.train[:, 0] == e) | (self.train[:, 2] == e)  # [N] the triples of e
        index = self._triple_index(ids)
        if index >= 0:
            own[index] = False  # the target is no evidence
        relearn = torch.tensor([e], device=self.device)
        if self.config.neighbours:  # e first, then its neighbours in id order
            near = torch.unique(self.train[own][:, [0, 2]])
            relearn = torch.cat([relearn, near[near != e]])
        in_r = torch.zeros(self.dataset.num_entities, dtype=torch.bool, device=self.device)
        in_r[relearn] = True
        a_keys = torch.nonzero(in_r[self.k_anchor])[:, 0]
        b_keys = torch.nonzero(~in_r[self.k_anchor])[:, 0]
        lse = self.k_lse[b_keys]  # [K_B] float64
        s0 = self._frozen_scores(b_keys, relearn).double()  # [K_B, k]
        mass = torch.exp(s0 - lse.unsqueeze(1)).sum(1)  # [K_B]
        frozen = lse + torch.log1p(-mass.clamp(max=1.0 - 1e-16))
        exact = torch.nonzero(mass > _EXACT_MASS)[:, 0]
        if exact.numel():
            frozen[exact] = self._frozen_lse(b_keys[exact], relearn)
        q_anchor_in = in_r[self.q_anchor]
        a_queries = torch.nonzero(q_anchor_in)[:, 0]
        b_queries = torch.nonzero(~q_anchor_in & in_r[self.q_answer])[:, 0]
        touching = own
        target = _Target(ids, relearn, a_keys, b_keys, frozen, a_queries, b_queries, touching)
        target.b_linear = self._linear_keys(b_keys, relearn)
        if self._targets and next(iter(self._targets))[0] != ids:
            self._targets = {}  # one target at a time: its arms and both sides share this
        self._targets[(ids, side)] = target
        return target

    def _linear_keys(self, keys: Tensor, relearn: Tensor) -> tuple[Tensor, Tensor] | None:
        r"""Queries ``[K, d]`` and offsets ``[K, 1]`` of ``keys`` if their scores are linear.

        A key anchored outside the relearned set sees the relearned rows only as candidates.
        For the bilinear models (DistMult, ComplEx, RESCAL, TuckER) its score is
        :math:`q_{key} \cdot w`: the query is read once per target by scoring the unit rows
        (:math:`q_i = f(key, e_i) - f(key, 0)`, exact for these models), so each step of the
        loss is one ``[c k, d] x [d, K]`` product instead of recomputing the ``K`` queries
        (at FB15k-237, ~150k of them, most of a step's time). Checked on the relearned
        entities' trained rows; a model that fails the check (a distance model, one with
        other entity-indexed parameters) returns ``None`` and keeps the general path.
        """
        table = self._entity_tables.get("model.entity.weight")
        if table is None or len(self._entity_tables) > 1 or table.dim() != 2 or not keys.numel():
            return None
        d = table.size(1)
        check = table[relearn[:4]]  # [m, d]
        probe = torch.cat(
            [torch.eye(d, dtype=table.dtype, device=self.device), table.new_zeros(1, d), check]
        )  # [d + 1 + m, d]
        params = {**self._frozen, **self._buffers, "model.entity.weight": torch.cat([table, probe])}
        ids = table.size(0) + torch.arange(probe.size(0), device=self.device)
        out = []
        with torch.no_grad(), eval_mode(self.model):
            for chunk in keys.split(_CHUNK):
                a, r, side = self.k_anchor[chunk], self.k_rel[chunk], self.k_side[chunk]
                out.append(self._side_scores(params, a, r, side, ids))
        scores = torch.cat(out)  # [K, d + 1 + m]
        offset = scores[:, d : d + 1]  # [K, 1]
        query = (scores[:, :d] - offset).contiguous()  # [K, d]
        predicted = check @ query.t() + offset.t()  # [m, K]
        actual = scores[:, d + 1 :].t()  # [m, K]
        scale = actual.abs().max().clamp_min(1.0)
        if not torch.allclose(predicted, actual, rtol=1e-4, atol=1e-5 * float(scale)):
            return None
        return query, offset

    # ---- the fine-tuning ---------------------------------------------------------------------

    def _initial_rows(self, relearn: Tensor) -> Tensor:
        trained = self.model.entity.weight.detach()[relearn]
        if self.config.init == "pretrained":
            return trained.clone()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.config.seed)
            fresh = type(self.model)(**self.model.config)
        rows = fresh.entity.weight.detach()[relearn.cpu()].to(trained)
        return self.model.project_rows("entity.weight", rows)

    def _params(self, rows: Tensor) -> dict[str, Tensor]:
        """Parameters with every entity table extended by the arms' rows (ids E + c k + i)."""
        c, k = rows.shape[0], rows.shape[1]
        params = {**self._frozen, **self._buffers}
        relearn = self._current.relearn
        for name, table in self._entity_tables.items():
            if name == "model.entity.weight":
                extra = rows.reshape(c * k, *rows.shape[2:])
            else:  # other entity-indexed parameters (ConvE's bias) keep their trained rows
                extra = table[relearn].repeat(c, *([1] * (table.dim() - 1)))
            params[name] = torch.cat([table, extra])
        return params

    def _columns(self, c: int) -> Tensor:
        """Per arm, the extended ids of the candidates ``0..E-1`` (R replaced) ``[c, E]``."""
        ne, k = self.dataset.num_entities, self._current.relearn.numel()
        cols = torch.arange(ne, device=self.device).repeat(c, 1)
        cols[:, self._current.relearn] = ne + torch.arange(c * k, device=self.device).view(c, k)
        return cols

    def _call(
        self, params: dict[str, Tensor], method: str, *args: Tensor, entities: Tensor
    ) -> Tensor:
        return functional_call(self._methods, params, (method, *args), {"entities": entities})

    def _side_scores(
        self, params: dict[str, Tensor], anchor: Tensor, rel: Tensor, side: Tensor, entities: Tensor
    ) -> Tensor:
        """Scores ``[B, C]`` of queries (side 0: tails of ``(anchor, rel)``; 1: heads)."""
        out = torch.empty(anchor.numel(), entities.numel(), device=self.device)
        tail, head = side == 0, side == 1
        if bool(tail.all()):
            return self._call(params, "score_tails", anchor, rel, entities=entities)
        if bool(tail.any()):
            out = out.index_put(
                (torch.nonzero(tail)[:, 0],),
                self._call(params, "score_tails", anchor[tail], rel[tail], entities=entities),
            )
        if bool(head.any()):
            out = out.index_put(
                (torch.nonzero(head)[:, 0],),
                self._call(params, "score_heads", rel[head], anchor[head], entities=entities),
            )
        return out

    def _loss(self, rows: Tensor, keep: Tensor) -> Tensor:
        r"""Sum over arms of :math:`\mathcal{L}_D` (module docstring) up to constants."""
        tgt = self._current
        c, k = rows.shape[0], rows.shape[1]
        ne = self.dataset.num_entities
        params = self._params(rows)
        cols = self._columns(c)  # [c, E]
        ext = torch.arange(ne + c * k, device=self.device)
        slot = torch.full((ne,), -1, dtype=torch.long, device=self.device)
        slot[tgt.relearn] = torch.arange(k, device=self.device)
        kept_q = keep[:, self.q_triple].to(rows.dtype) * self.q_weight  # [c, Q] w_q for kept
        z = kept_q.sum(1).clamp_min(1e-12)  # [c]
        mass = kept_q.new_zeros(c, self.k_anchor.numel())
        mass.index_add_(1, self.q_key, kept_q)  # [c, K] m_{c,k}
        total = rows.new_zeros(c)
        # (a) keys anchored in R: whole rows with the arm's anchor and candidates.
        if tgt.a_keys.numel():
            ka = tgt.a_keys.numel()
            anchor = (
                ne
                + torch.arange(c, device=self.device).unsqueeze(1) * k
                + slot[self.k_anchor[tgt.a_keys]]
            ).reshape(-1)
            rel = self.k_rel[tgt.a_keys].repeat(c)
            side = self.k_side[tgt.a_keys].repeat(c)
            full = self._side_scores(params, anchor, rel, side, ext).view(c, ka, -1)  # [c, K_A, E']
            arm_rows = full.gather(2, cols.unsqueeze(1).expand(c, ka, ne))  # [c, K_A, E]
            lse = torch.logsumexp(arm_rows, dim=2)  # [c, K_A]
            total = total + (mass[:, tgt.a_keys] * lse).sum(1)
            position = torch.full(
                (self.k_anchor.numel(),), -1, dtype=torch.long, device=self.device
            )
            position[tgt.a_keys] = torch.arange(ka, device=self.device)
            qa = tgt.a_queries
            pos_scores = arm_rows[:, position[self.q_key[qa]], self.q_answer[qa]]  # [c, Q_A]
            total = total - (kept_q[:, qa] * pos_scores).sum(1)
        # (b) the other keys: the arm's columns join the frozen log-normaliser.
        if tgt.b_keys.numel():
            kb = tgt.b_keys.numel()
            b = tgt.b_keys
            if tgt.b_linear is not None:  # the same product as the model's, queries cached
                query, offset = tgt.b_linear
                flat = rows.reshape(c * k, -1)  # [c k, d]
                s = torch.mm(flat, query.t()).t() + offset  # [K_B, c k]
            else:
                arm_ids = ne + torch.arange(c * k, device=self.device)
                a, r, side = self.k_anchor[b], self.k_rel[b], self.k_side[b]
                s = self._side_scores(params, a, r, side, arm_ids)  # [K_B, c k]
            s = s.view(kb, c, k).permute(1, 0, 2)  # [c, K_B, k]
            frozen = tgt.b_frozen.to(rows.dtype).unsqueeze(0).unsqueeze(2).expand(c, kb, 1)
            lse = torch.logsumexp(torch.cat([frozen, s], dim=2), dim=2)  # [c, K_B]
            total = total + (mass[:, b] * lse).sum(1)
            qb = tgt.b_queries
            if qb.numel():
                position = torch.full(
                    (self.k_anchor.numel(),), -1, dtype=torch.long, device=self.device
                )
                position[b] = torch.arange(kb, device=self.device)
                pos_scores = s[:, position[self.q_key[qb]], slot[self.q_answer[qb]]]  # [c, Q_B]
                total = total - (kept_q[:, qb] * pos_scores).sum(1)
        loss = total / z
        cfg = self.training
        if cfg.regularizer is not None and cfg.regularizer_weight:
            heads, tails = self.train[:, 0], self.train[:, 2]
            keep_f = keep.to(rows.dtype)  # [c, N]
            counts = keep_f.new_zeros(c, self.dataset.num_entities)
            counts.index_add_(1, heads, keep_f).index_add_(1, tails, keep_f)
            counts = counts[:, tgt.relearn]  # [c, k] n_D(x) of each relearned row
            n_kept = keep_f.sum(1).clamp_min(1.0)  # [c] |D|
            flat = rows.reshape(c * k, -1)  # [c k, d]
            if cfg.regularizer == "n3":  # one weighted sum over every arm's rows: arms add up
                weight = (counts / (3 * n_kept).unsqueeze(1)).reshape(-1)
                reg = n3_sum(flat, complex_rows=self.model._complex_rows, row_weight=weight)
            else:
                weight = (counts / n_kept.unsqueeze(1)).reshape(-1)
                reg = (weight * flat.square().sum(-1)).sum()
            return loss.sum() + cfg.regularizer_weight * reg
        return loss.sum()

    def _side_rank(self, rows: Tensor, side: str) -> tuple[Tensor, Tensor]:
        """Score and filtered rank ``[c]`` of the target's ``side`` under each arm's rows.

        ``"tail"``: rank of :math:`t` for :math:`(h, r, ?)`; ``"head"``: of :math:`h` for
        :math:`(?, r, t)` (for a reciprocal model, :math:`t` for :math:`(t, r^{-1}, ?)`).
        """
        h, r, t = self._current.ids
        c, k = rows.shape[0], rows.shape[1]
        ne = self.dataset.num_entities
        params = self._params(rows)
        cols = self._columns(c)  # [c, E]
        ext = torch.arange(ne + c * k, device=self.device)
        rel = torch.full((c,), r, device=self.device)
        hq, rq, tq = (torch.tensor([x], device=self.device) for x in (h, r, t))
        if side == "tail":
            scores = self._call(params, "score_tails", cols[:, h], rel, entities=ext).gather(
                1, cols
            )
            return scores[:, t], _realistic(scores, t, self._filter.tails(hq, rq)[1])
        if self.training.reciprocal:
            inverse = rel + self.dataset.num_relations
            scores = self._call(params, "score_tails", cols[:, t], inverse, entities=ext)
        else:
            scores = self._call(params, "score_heads", rel, cols[:, t], entities=ext)
        scores = scores.gather(1, cols)
        return scores[:, h], _realistic(scores, h, self._filter.heads(rq, tq)[1])

    def _finetune(self, keep: Tensor) -> tuple[Tensor, Tensor]:
        """Relearn the current entity under every keep mask ``[c, N]``; score and rank ``[c]``."""
        cfg = self.config
        rows0 = self._initial_rows(self._current.relearn)
        rows = rows0.unsqueeze(0).repeat(keep.size(0), *([1] * rows0.dim())).requires_grad_(True)
        optimizer = torch.optim.Adam([rows], lr=cfg.lr)
        with eval_mode(self.model):
            with torch.enable_grad():
                for _ in range(cfg.steps):
                    loss = self._loss(rows, keep)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    with torch.no_grad():
                        rows.copy_(self.model.project_rows("entity.weight", rows))
            with torch.no_grad():
                score, rank = self._side_rank(rows.detach(), self._side)
        if not (torch.isfinite(score).all() and torch.isfinite(rows).all()):
            raise GraphDataError(
                f"config: fine-tuning with lr={cfg.lr:g} for {cfg.steps} steps gave non-finite "
                "scores; lower FaithfulConfig.lr"
            )
        return score, rank

    def _use(self, ids: tuple[int, int, int], side: str) -> None:
        self._current, self._side = self._target(ids, side), side

    def _original(self, ids: tuple[int, int, int]) -> ArmResult:
        out = {}
        with torch.no_grad(), eval_mode(self.model):
            for side in ("tail", "head"):
                self._use(ids, side)
                rows = self.model.entity.weight.detach()[self._current.relearn].unsqueeze(0)
                out[side] = self._side_rank(rows, side)
        (ts, tr), (hs, hr) = out["tail"], out["head"]
        return ArmResult("original", 0, float(ts[0]), float(hs[0]), float(tr[0]), float(hr[0]))

    def _prepare(
        self, target: Sequence[str] | Sequence[int]
    ) -> tuple[tuple[int, int, int], Tensor]:
        ids = self._resolve(target, "target")
        if ids[0] == ids[2]:
            raise GraphDataError(
                f"target: {tuple(target)!r} is a self-loop; its head and tail are one entity, "
                "so neither can be relearned apart from the other"
            )
        base = torch.ones(self.train.size(0), dtype=torch.bool, device=self.device)
        index = self._triple_index(ids)
        if index >= 0:
            base[index] = False  # the target never trains its own rows
        return ids, base

    def _labels(self, ids: tuple[int, int, int]) -> LabeledTriple:
        ent, rel = self.dataset.entities.labels, self.dataset.relations.labels
        return ent[ids[0]], rel[ids[1]], ent[ids[2]]

    # ---- public ----------------------------------------------------------------------------

    def necessity(
        self,
        target: Sequence[str] | Sequence[int],
        removals: Mapping[str, Sequence[Sequence[str]]],
    ) -> FaithfulReport:
        r"""Fine-tune without each removal set and compare the target's rank to the control.

        Args:
            target: ``(head, relation, tail)`` labels or ids.
            removals: Arm name -> the training triples to remove (labels or ids); the names
                ``"control"``, ``"none"`` and ``"original"`` are reserved.

        Returns:
            The :class:`FaithfulReport`; ``report.drop(name)`` is :math:`\Delta_{\mathrm{nec}}`.

        Raises:
            GraphDataError: For a triple that is not a training triple, the target itself, a
                reserved name, a self-loop target, or non-finite scores.
        """
        return self._evaluate(target, removals, "necessity")

    def sufficiency(
        self,
        target: Sequence[str] | Sequence[int],
        explanations: Mapping[str, Sequence[Sequence[str]]],
    ) -> FaithfulReport:
        r"""Fine-tune with the relearned entity's triples reduced to each explanation's.

        Adds the arm ``"none"``: every triple of the relearned entity removed.

        Args:
            target: ``(head, relation, tail)`` labels or ids.
            explanations: Arm name -> the training triples to keep of :math:`N(e)`.

        Returns:
            The :class:`FaithfulReport`; ``report.arms[name].rank`` is the sufficiency rank.

        Raises:
            GraphDataError: As :meth:`necessity`.
        """
        return self._evaluate(target, explanations, "sufficiency")

    def _evaluate(
        self,
        target: Sequence[str] | Sequence[int],
        sets: Mapping[str, Sequence[Sequence[str]]],
        kind: str,
    ) -> FaithfulReport:
        ids, base = self._prepare(target)
        if not isinstance(sets, Mapping):
            raise GraphDataError(
                f"removals: expected a mapping of arm name -> triples, got {type(sets).__name__}; "
                "wrap one set as {'explanation': triples}"
            )
        names, positions = ["control"], [torch.empty(0, dtype=torch.long, device=self.device)]
        for name, triples in sets.items():
            if name in ("control", "none", "original"):
                raise GraphDataError(f"removals: the arm name {name!r} is reserved; rename it")
            if str(name) in names:
                raise GraphDataError(
                    f"removals: two arms are named {str(name)!r} (names are compared as "
                    "strings); give each arm its own name"
                )
            names.append(str(name))
            positions.append(self._removal(ids, triples, f"removals[{name!r}]"))
        if kind == "sufficiency":
            names.append("none")
            positions.append(torch.empty(0, dtype=torch.long, device=self.device))
        results: dict[str, list[Tensor]] = {}
        removed: dict[str, list[int]] = {}
        for side in ("tail", "head"):
            self._use(ids, side)
            masks = []
            for i, (name, pos) in enumerate(zip(names, positions)):
                if kind == "sufficiency" and i > 0:
                    mask = base & ~self._current.touching
                    mask[pos] = True
                else:
                    mask = base.clone()
                    mask[pos] = False
                masks.append(mask)
                removed.setdefault(name, []).append(int((base & ~mask).sum()))
            results[side] = list(self._finetune(torch.stack(masks)))
        (ts, tr), (hs, hr) = results["tail"], results["head"]
        arms = [
            ArmResult(n, max(removed[n]), float(ts[i]), float(hs[i]), float(tr[i]), float(hr[i]))
            for i, n in enumerate(names)
        ]
        return FaithfulReport(
            target=self._labels(ids),
            kind=kind,
            original=self._original(ids),
            control=arms[0],
            arms={a.name: a for a in arms[1:]},
            config=self.config,
        )


def _realistic(scores: Tensor, true: int, known: Tensor) -> Tensor:
    """Filtered realistic rank ``[c]`` of column ``true`` in each row of ``scores [c, E]``."""
    masked = torch.zeros(scores.size(1), dtype=torch.bool, device=scores.device)
    masked[known] = True
    masked[true] = True  # the true entity is compared with, not against
    star = scores[:, true : true + 1]
    greater = ((scores > star) & ~masked).sum(1)
    equal = ((scores == star) & ~masked).sum(1)
    return 1.0 + greater.double() + 0.5 * equal.double()


def necessity(
    model: KGEModel,
    dataset: KGDataset,
    target: Sequence[str] | Sequence[int],
    removed_triples: Mapping[str, Sequence[Sequence[str]]] | Sequence[Sequence[str]],
    *,
    steps: int = FaithfulConfig.steps,
    lr: float = FaithfulConfig.lr,
    init: str = FaithfulConfig.init,
    seed: int = FaithfulConfig.seed,
    training: TrainingConfig | None = None,
) -> FaithfulReport:
    r"""Necessity of removal sets for one target: :meth:`FaithfulEvaluator.necessity`.

    Args:
        model: The trained KGE (never modified).
        dataset: Its dataset.
        target: ``(head, relation, tail)`` labels or ids.
        removed_triples: One set of training triples (arm ``"removed"``) or arm name -> set.
        steps: Adam steps. Default 100.
        lr: Adam learning rate. Default 0.05.
        init: One of :data:`INITS`. Default ``"random"``.
        seed: Seeds the re-drawn rows. Default 0.
        training: The model's training config. Default ``None``: its defaults.

    Returns:
        The :class:`FaithfulReport`.
    """
    config = FaithfulConfig(steps=steps, lr=lr, init=init, seed=seed)
    evaluator = FaithfulEvaluator(model, dataset, training=training, config=config)
    return evaluator.necessity(target, _arms(removed_triples, "removed"))


def sufficiency(
    model: KGEModel,
    dataset: KGDataset,
    target: Sequence[str] | Sequence[int],
    explanation_triples: Mapping[str, Sequence[Sequence[str]]] | Sequence[Sequence[str]],
    *,
    steps: int = FaithfulConfig.steps,
    lr: float = FaithfulConfig.lr,
    init: str = FaithfulConfig.init,
    seed: int = FaithfulConfig.seed,
    training: TrainingConfig | None = None,
) -> FaithfulReport:
    r"""Sufficiency of explanations for one target: :meth:`FaithfulEvaluator.sufficiency`.

    Args:
        model: The trained KGE (never modified).
        dataset: Its dataset.
        target: ``(head, relation, tail)`` labels or ids.
        explanation_triples: One set (arm ``"explanation"``) or arm name -> set.
        steps: Adam steps. Default 100.
        lr: Adam learning rate. Default 0.05.
        init: One of :data:`INITS`. Default ``"random"``.
        seed: Seeds the re-drawn rows. Default 0.
        training: The model's training config. Default ``None``: its defaults.

    Returns:
        The :class:`FaithfulReport`.
    """
    config = FaithfulConfig(steps=steps, lr=lr, init=init, seed=seed)
    evaluator = FaithfulEvaluator(model, dataset, training=training, config=config)
    return evaluator.sufficiency(target, _arms(explanation_triples, "explanation"))


def _arms(
    triples: Mapping[str, Sequence[Sequence[str]]] | Sequence[Sequence[str]], name: str
) -> Mapping[str, Sequence[Sequence[str]]]:
    """Arm name -> triples: a mapping as given, one set as the single arm ``name``."""
    return triples if isinstance(triples, Mapping) else {name: triples}
