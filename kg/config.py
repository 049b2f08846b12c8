r"""Training configuration: one dataclass with a comment on each default, and the named choices.

:class:`TrainingConfig` holds everything :class:`kg.training.Trainer` needs besides the model;
:meth:`TrainingConfig.from_defaults` starts from a model's tuned defaults
(:data:`kg.models.DEFAULTS`). The optimisers, regimes, losses, samplers and regularisers are
visible tuples and dicts, not a registry.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from graphdata.errors import GraphDataError
from kg._sparse_optim import SPARSE_OPTIMIZERS
from kg.models import DEFAULTS

__all__ = [
    "TrainingConfig",
    "OPTIMIZERS",
    "SPARSE_OPTIMIZERS",
    "REGIMES",
    "LOSSES",
    "SAMPLERS",
    "REGULARIZERS",
    "PRECISIONS",
]

#: Optimisers by name: ``torch.optim`` classes called as ``cls(params, lr=lr)`` (Adam with
#: ``fused=True`` on CPU and CUDA, see ``kg.training``). ``"rowwise_adagrad"`` (PyTorch-BigGraph's
#: row-wise Adagrad) and ``"sparse_adam"`` (``torch.optim.SparseAdam``, lazy Adam) update only
#: the embedding rows a batch touches (``kg._sparse_optim``; sLCWA, embedding-table models).
OPTIMIZERS: dict[str, Callable[..., torch.optim.Optimizer]] = {
    "adam": torch.optim.Adam,
    "adagrad": torch.optim.Adagrad,
    "sgd": torch.optim.SGD,
    **SPARSE_OPTIMIZERS,
}
#: Training regimes: sLCWA (PyKEEN; Ali et al., TPAMI 2021, arXiv 2006.13365), KvsAll (1-N
#: scoring; Dettmers et al., AAAI 2018, arXiv 1707.01476) and 1vsAll (Lacroix et al., ICML 2018,
#: arXiv 1806.07297).
REGIMES = ("slcwa", "kvsall", "1vsall")
#: The losses each regime accepts; the first is its default.
LOSSES: dict[str, tuple[str, ...]] = {
    "slcwa": ("nssa", "margin", "softplus", "bce"),
    "kvsall": ("bce",),
    "1vsall": ("cross_entropy",),
}
#: Negative samplers of the sLCWA regime (:mod:`kg.sampling`).
SAMPLERS = ("uniform", "bernoulli")
#: Regularisers of :meth:`kg.base.KGEModel.regularization`.
REGULARIZERS = ("n3", "l2")
#: Arithmetic of the training forward pass: plain float32, or ``torch.autocast`` to bfloat16
#: (matrix products in bf16, losses and the optimiser in float32; evaluation stays float32).
PRECISIONS = ("fp32", "bf16")


@dataclass
class TrainingConfig:
    """Every training hyperparameter, with the default a newcomer gets (see each comment).

    Field names match :class:`kg.models.ModelDefaults`; :meth:`from_defaults` starts from a
    model's tuned values. The plain defaults train any model reasonably on a small graph.
    """

    regime: str = "slcwa"  # training regime: "slcwa", "kvsall" or "1vsall"
    # None: the regime's default (nssa for slcwa, bce for kvsall, cross_entropy for 1vsall)
    loss: str | None = None
    epochs: int = 100  # passes over the training triples (or KvsAll queries)
    batch_size: int = 256  # positives (or queries) per optimiser step
    lr: float = 1e-3  # learning rate
    optimizer: str = "adam"  # key of OPTIMIZERS
    num_negatives: int = 32  # sLCWA: corrupted copies per positive
    sampler: str = "uniform"  # sLCWA: "uniform" (PyKEEN basic) or "bernoulli" (TransH)
    # sLCWA: draw the corrupted side once per positive, shared by its k negatives (PyKEEN's basic
    # sampler corrupts heads in one half of a batch and tails in the other; the RotatE reference
    # code alternates head- and tail-batches); False: each negative draws its own side.
    side_per_positive: bool = False
    filter_negatives: bool = False  # sLCWA: mask corruptions that are training triples
    # sLCWA: PyTorch-BigGraph's batched negatives: each chunk of this many positives shares
    # num_negatives uniform entities, scored with one kernel per chunk (needs side_per_positive);
    # PBG's extra in-chunk negatives (the chunk's own heads/tails) are not used, see
    # kg.sampling.chunk_negatives. 0: every positive draws its own negatives.
    batched_negatives: int = 0
    margin: float | None = None  # margin/nssa gamma; None: 1.0 for margin, 0.0 for nssa
    adversarial_temperature: float = 1.0  # nssa: alpha of the self-adversarial weights
    label_smoothing: float = 0.0  # bce, kvsall, 1vsall: epsilon
    reciprocal: bool = False  # train on inverse relations too, predict tails only
    regularizer: str | None = None  # None, "n3" (Lacroix et al. 2018) or "l2"
    regularizer_weight: float = 0.0  # lambda of the regulariser
    grad_clip: float | None = None  # max total gradient 2-norm; None: no clipping
    precision: str = "fp32"  # "fp32", or "bf16": autocast the training forward (PRECISIONS)
    # Validation every 2 epochs with patience 10 (at most ~20 epochs past the peak; the old 10 / 5
    # ran 1-N models up to 77 past it): chosen on Nations, UMLS and FB15k-237 by
    # benchmarks/bench_kg_defaults.py, which replays every rule on curves validated each epoch.
    eval_every: int = 2  # epochs between validations (and after the last); 0: never validate
    patience: int | None = 10  # validations without MRR improvement before stopping; None: never
    restore_best: bool = True  # end with the parameters of the best validation MRR
    seed: int = 0  # seeds initialisation, shuffling, negatives and dropout
    progress: bool = True  # show a tqdm bar with the running loss
    log_path: str | None = None  # JSON-lines file, one line of metrics per epoch
    checkpoint_path: str | None = None  # checkpoint written atomically after each epoch
    checkpoint_every: int = 1  # epochs between checkpoints (the last epoch always writes)

    @classmethod
    def from_defaults(cls, name: str, **overrides: Any) -> TrainingConfig:
        """The tuned training defaults of model ``name`` (``kg.models.DEFAULTS``), overridden.

        Args:
            name: A key of :data:`kg.models.MODELS`.
            **overrides: Fields of :class:`TrainingConfig` to set instead.

        Returns:
            The config.

        Raises:
            GraphDataError: On an unknown model name or field.

        Examples:
            >>> TrainingConfig.from_defaults("rotate", epochs=3).loss
            'nssa'
        """
        _choice("name", name, tuple(DEFAULTS))
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise GraphDataError(f"overrides: unknown TrainingConfig fields {unknown}")
        tuned = {k: v for k, v in DEFAULTS[name].to_dict().items() if k in fields}
        config = cls(**{**tuned, **overrides})
        keeps = tuned.get("loss") in ("margin", "nssa") and config.resolved_loss() == tuned["loss"]
        if "margin" not in overrides and not keeps:
            # A margin only means something to these two losses, and the tuned one belongs to
            # the tuned loss: TransE's 9.0 made an overridden loss="bce" a refused config.
            config = dataclasses.replace(config, margin=None)
        return config

    def resolved_loss(self) -> str:
        """The loss in use: :attr:`loss`, or the regime's default when ``None``."""
        return self.loss if self.loss is not None else LOSSES[self.regime][0]

    def resolved_margin(self) -> float:
        """The loss margin in use: :attr:`margin`, or 1.0 (margin loss) / 0.0 (others)."""
        if self.margin is not None:
            return float(self.margin)
        return 1.0 if self.resolved_loss() == "margin" else 0.0

    def validate(self, *, flags: bool = False) -> None:
        """Raise :class:`~graphdata.errors.GraphDataError` naming the first invalid field.

        Every numeric field is checked for its type, finiteness and range; the message names
        the field and its ``graphlib kg train`` flag (the field name with ``-`` for ``_``),
        what was expected, what arrived and the fix, e.g. ``margin (--margin): expected a
        finite number >= 0 or None, got nan; pass a non-negative --margin``.

        Args:
            flags: Name the command-line flags (``--loss``, ``--regime``) instead of the
                keyword arguments in the messages about a combination of fields, for
                ``graphlib kg train``. Default False.

        Raises:
            GraphDataError: On the first invalid field.

        Examples:
            >>> TrainingConfig(adversarial_temperature=float("nan")).validate()
            Traceback (most recent call last):
            ...
            graphdata.errors.GraphDataError: adversarial_temperature (--adversarial-temperature): \
expected a finite number >= 0, got nan; pass a non-negative --adversarial-temperature \
(0 weighs negatives uniformly, 1 is the RotatE default)
        """
        _choice("regime", self.regime, REGIMES)
        loss, losses = self.resolved_loss(), LOSSES[self.regime]
        if loss not in losses:  # often a model's tuned loss kept when only the regime changed
            takes = [regime for regime, names in LOSSES.items() if loss in names]
            if flags:
                raise GraphDataError(
                    f"--loss: --regime {self.regime} takes {' or '.join(losses)}, got {loss} "
                    f"(--loss, or the model's tuned loss); pass --loss {losses[0]} with --regime "
                    f"{self.regime}"
                    + (f", or keep --loss {loss} with --regime {takes[0]}" if takes else "")
                )
            raise GraphDataError(
                f"loss (regime {self.regime!r}): expected one of {losses}, got {loss!r}; pass "
                f"--loss {losses[0]} (loss={losses[0]!r}) with --regime {self.regime}"
                + (f", or keep {loss!r} with --regime {takes[0]}" if takes else "")
            )
        _choice("optimizer", self.optimizer, tuple(OPTIMIZERS))
        _choice("sampler", self.sampler, SAMPLERS)
        _choice("precision", self.precision, PRECISIONS)
        if self.regularizer is not None:
            _choice("regularizer", self.regularizer, REGULARIZERS)
        for name in (
            "side_per_positive",
            "filter_negatives",
            "reciprocal",
            "restore_best",
            "progress",
        ):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise GraphDataError(f"{name}: expected True or False, got {value!r}")
        for name, low in (
            ("epochs", 1),
            ("batch_size", 1),
            ("num_negatives", 1),
            ("checkpoint_every", 1),
            ("eval_every", 0),
            ("batched_negatives", 0),
        ):
            _check_int(name, getattr(self, name), low=low)
        if self.patience is not None:
            _check_int("patience", self.patience, low=1, none_ok=True)
        _check_int("seed", self.seed, low=0, high=2**64 - 1)
        _check_real("lr", self.lr, low=0.0, strict=True, fix="pass a positive --lr, e.g. 1e-3")
        if self.margin is not None:
            _check_real(
                "margin", self.margin, low=0.0, none_ok=True, fix="pass a non-negative --margin"
            )
        _check_real(
            "adversarial_temperature",
            self.adversarial_temperature,
            low=0.0,
            fix="pass a non-negative --adversarial-temperature (0 weighs negatives "
            "uniformly, 1 is the RotatE default)",
        )
        _check_real(
            "label_smoothing",
            self.label_smoothing,
            low=0.0,
            high=1.0,
            fix="pass --label-smoothing in [0, 1), e.g. 0.1",
        )
        _check_real(
            "regularizer_weight",
            self.regularizer_weight,
            low=0.0,
            fix="pass a non-negative --regularizer-weight, e.g. 1e-2",
        )
        if self.grad_clip is not None:
            _check_real(
                "grad_clip",
                self.grad_clip,
                low=0.0,
                strict=True,
                none_ok=True,
                fix="pass a positive --grad-clip, e.g. 1.0, or leave it out for no clipping",
            )
        loss = self.resolved_loss()
        if self.margin is not None and loss not in ("margin", "nssa"):
            raise GraphDataError(
                f"--margin: the {loss!r} loss has no margin, got --margin {self.margin:g} (or "
                "the model's tuned margin); drop --margin, or pass --loss margin or nssa"
                if flags
                else f"margin: the {loss!r} loss has no margin; set margin=None or use "
                "loss='margin' or 'nssa'"
            )
        if self.label_smoothing and loss in ("nssa", "margin", "softplus"):
            raise GraphDataError(
                f"--label-smoothing: the {loss!r} loss has no labels to smooth, got "
                f"--label-smoothing {self.label_smoothing:g}; drop --label-smoothing, or pass "
                "--loss bce or --regime kvsall or 1vsall"
                if flags
                else f"label_smoothing: the {loss!r} loss has no labels to smooth; set "
                "label_smoothing=0 or use loss='bce' or a 1-N regime"
            )
        if self.batched_negatives and self.regime != "slcwa":
            raise GraphDataError(
                f"--batched-negatives: negatives only exist in --regime slcwa, got "
                f"--batched-negatives {self.batched_negatives} with --regime {self.regime}; "
                "drop --batched-negatives, or pass --regime slcwa"
                if flags
                else f"batched_negatives: negatives only exist in the 'slcwa' regime, got "
                f"{self.batched_negatives} with regime={self.regime!r}; set batched_negatives=0"
            )
        if self.batched_negatives and not self.side_per_positive:
            raise GraphDataError(
                f"--batched-negatives: a chunk scores its shared negatives on one side per "
                f"positive, got --batched-negatives {self.batched_negatives} with "
                "--no-side-per-positive (or the model's tuned value); pass --side-per-positive, "
                "or drop --batched-negatives"
                if flags
                else f"batched_negatives: a chunk scores its shared negatives on one side per "
                f"positive, got batched_negatives={self.batched_negatives} with "
                "side_per_positive=False; set side_per_positive=True (--side-per-positive)"
            )
        if self.optimizer in SPARSE_OPTIMIZERS and self.regime != "slcwa":
            raise GraphDataError(
                f"--optimizer: {self.optimizer} updates the rows a batch touches, which needs "
                f"--regime slcwa; --regime {self.regime} scores every entity (a dense "
                "gradient): pass --optimizer adam or adagrad, or --regime slcwa"
                if flags
                else f"optimizer: {self.optimizer!r} updates the rows a batch touches, which "
                f"needs regime 'slcwa'; regime {self.regime!r} scores every entity (a dense "
                "gradient): use optimizer='adam' or 'adagrad'"
            )
        if self.optimizer in SPARSE_OPTIMIZERS and self.grad_clip is not None:
            raise GraphDataError(
                f"--grad-clip: not supported with --optimizer {self.optimizer} (row "
                "gradients); drop --grad-clip, or pass --optimizer adam"
                if flags
                else f"grad_clip: not supported with optimizer {self.optimizer!r} (row "
                "gradients); set grad_clip=None or use optimizer='adam'"
            )
        if self.regularizer_weight and self.regularizer is None:
            raise GraphDataError(
                f"--regularizer-weight: expected 0, or > 0 with --regularizer n3 or l2, got "
                f"--regularizer-weight {self.regularizer_weight:g} with --regularizer none; "
                "pass --regularizer n3 or l2, or drop --regularizer-weight"
                if flags
                else f"regularizer_weight: expected 0, or > 0 with regularizer 'n3' or 'l2', "
                f"got {self.regularizer_weight!r} with regularizer={self.regularizer!r}"
            )


def _field(name: str) -> str:
    """``name (--flag)``: the field and its ``graphlib kg train`` flag."""
    return f"{name} (--{name.replace('_', '-')})"


def _check_int(
    name: str, value: Any, *, low: int, high: int | None = None, none_ok: bool = False
) -> None:
    """Refuse a non-int (bools included) or an int outside ``[low, high]``."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ok and low <= value and (high is None or value <= high):
        return
    span = f"an int >= {low}" if high is None else f"an int in [{low}, {high}]"
    flag = f"--{name.replace('_', '-')}"
    fix = f"pass {flag} {max(low, 1)} or more" if high is None else f"pass {flag} in that range"
    raise GraphDataError(
        f"{_field(name)}: expected {span}{' or None' if none_ok else ''}, got {value!r}; {fix}"
    )


def _check_real(
    name: str,
    value: Any,
    *,
    low: float,
    high: float | None = None,
    strict: bool = False,
    none_ok: bool = False,
    fix: str,
) -> None:
    """Refuse a non-number, NaN, an infinity, or a value below ``low`` or not below ``high``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok and math.isfinite(value):
        above = value > low if strict else value >= low
        if above and (high is None or value < high):
            return
    if high is not None:
        span = f"a finite number in [{low:g}, {high:g})"
    else:
        span = f"a finite number {'>' if strict else '>='} {low:g}"
    raise GraphDataError(
        f"{_field(name)}: expected {span}{' or None' if none_ok else ''}, got {value!r}; {fix}"
    )


def _choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise GraphDataError(f"{name}: expected one of {choices}, got {value!r}")
