r"""CUDA against CPU: each part's main paths from the same state must agree; FB15k-237 timing.

One script, under 5 minutes on one GPU, in six sections that each run on their own (an error in
one is reported as a FAIL line and the others still run):

- ``kg``: TransE (sLCWA, NSSA), ComplEx (1vsAll, reciprocal, N3), TuckER (1vsAll, reciprocal;
  dropout and batch norm, compared in eval mode, plus a dropout-free train-mode variant whose
  batch-norm statistics move) and ConvE (convolution, eval mode) are built on the CPU, copied to
  the device (random draws differ across devices, so nothing is drawn there) and take the same
  fixed batches and negatives: scores before training, the first loss and gradients, parameters
  (and buffers) after a few SGD steps; ComplEx also a few fused-Adam steps in float64. Then
  filtered both-sides ``kg.evaluate`` of the same CPU-trained parameters on both devices (Nations
  and UMLS from the shared datasets, else a synthetic family KG): MRR and Hits@1/3/10, and the
  optimistic and pessimistic ranks exactly, except where the CPU scores put a candidate within
  :math:`10^{-4} \max_c |s_c|` of the true answer's score (a near tie, which rounding on the other
  device may order either way): such a query's rank may move by at most its number of near ties,
  and the metric tolerance widens by the most those moves can change it. Last, a smoke run of
  ``kg.Trainer`` (TransE, ComplEx defaults, a few epochs) on both devices: the devices draw
  different random streams, so only the test MRRs' closeness is checked (0.15, about twice
  the seed-to-seed spread on the CPU).
- ``graphon``: ``hom_density`` (float64 and float32, padded batches with a mask, a node signal
  with exponents) and ``inj_density`` of sampled graphs, ``graphon_density`` (exact step graphon
  and quadrature), ``wl_refine`` histograms, ``cut_norm`` (exact, and SDP to 1e-6: its
  hyperplane rounding keeps the best of 64 sign vectors), and IWN/IGN forward and backward from
  the same parameters.
- ``spatial``: a Celcomen fit from the same (zero) initialisation on a small simulated tissue in
  float64 with Adam and in float32 with SGD, and one counterfactual (knock-out of gene 0 in one
  cell) with the CPU-fitted matrices on both devices; its ``delta`` (perturbed minus sham) is
  small, so it is judged with ``atol = 2 rtol`` on the scale of the unit rows it comes from.
- ``graphdata``: ``knn_graph`` (cKDTree on the CPU, chunked ``cdist`` on CUDA), ``FilterIndex``
  construction and queries, ``enumerate_paths_batch``.
- ``distributed``: issue 22's equivalence test, two data-parallel ranks (per-rank batch B/2)
  against one process (batch B): DistMult sLCWA with filtered negatives, 2 epochs; parameters
  at ``RTOL32``, epoch losses at 1e-5, and the sharded evaluation's ranks of the 2-rank
  parameters exactly against one process's. NCCL with one GPU per rank on CUDA (skipped with
  fewer than two GPUs: NCCL refuses two ranks on one device), gloo on the CPU, where the sums
  still come in another order, so this section's tolerances stay as stated in the dry run.
- ``timing`` (CUDA, when FB15k-237 is found in ``--kg-root`` or given by ``--data``; on the CPU
  only with ``--data``, a dry run on a small folder): seconds of one full training epoch (not
  extrapolated) of ComplEx 1vsAll and TransE sLCWA with their library defaults
  (``TrainingConfig.from_defaults``, no validation, TF32 off as everywhere here), filtered
  both-sides test evaluation seconds (first call, which also moves the filter index, and a
  repeat), the test MRR after that epoch and ``torch.cuda.max_memory_allocated`` of training and
  of evaluation; then the trained model's evaluation on the first 5,000 test triples on the CPU
  and the device, checked by the rule of the ``kg`` section.

Tolerances. Every tensor check prints ``PASS|FAIL name max_abs_err tol`` with
``max_abs_err = max |got - ref|`` and ``tol = atol + rtol * max |ref|`` (a norm-wise bound: a
gradient that is zero almost everywhere is judged on its scale, not entry by entry); it passes
iff the shapes match, the non-finite entries coincide and ``max_abs_err <= tol``. The ``rtol``
of each check is stated where it is made: 1e-4 for float32 paths (TF32 off:
``torch.backends.cuda.matmul.allow_tf32 = False``, cuDNN likewise), 1e-9 for float64 paths,
0 for integer results (ranks, edge lists, paths, histograms). SGD is used for the float32 step
comparisons because an SGD update is linear in the gradient; Adam's
:math:`g / (\sqrt{v} + \epsilon)` turns a rounding-level difference of a near-zero gradient
into a whole step of either sign, so Adam is compared in float64 only.

``--device cpu`` compares the CPU with itself: the same kernels run twice, so every tolerance is 0
(bit-identical, except the ``distributed`` section's) and every check must pass; that is the dry run
the tests use (``--quick`` shrinks every size). Without CUDA the default ``--device cuda`` prints
``CUDA not available: skipped`` and exits 0. The exit code is 1 when any check fails.

Run: ``.venv/bin/python -m benchmarks.cuda_check [--device cuda] [--quick] [--data FB15K_FOLDER]
[--kg-root FOLDER] [--sections kg,graphon,spatial,graphdata,distributed,timing] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import platform
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

__all__ = ["Check", "Context", "compare", "compare_many", "main"]

#: Sections in running order.
SECTIONS = ("kg", "graphon", "spatial", "graphdata", "distributed", "timing")
_REPO = Path(__file__).resolve().parents[1]
#: Where the shared KG folders are looked for: next to the repository, else inside it.
_SHARED_CANDIDATES = (
    _REPO.parent / "shared" / "datasets" / "kg",
    _REPO / "shared" / "datasets" / "kg",
)
_SHARED = next((p for p in _SHARED_CANDIDATES if p.is_dir()), _SHARED_CANDIDATES[0])
#: Relative tolerances of float32 and float64 paths on another device.
RTOL32 = 1e-4
RTOL64 = 1e-9
#: Trainer smoke run: the devices' random streams differ as seeds do. Test MRR after 3 epochs
#: on the CPU, 4 seeds: spread .005 (TransE) and .08 (ComplEx) on Nations, .03 and .02 on UMLS.
SMOKE_MRR_TOL = 0.15
#: A candidate within this fraction of the row's largest |score| of the true answer is a near tie.
NEAR_TIE = 1e-4


@dataclass
class Check:
    """One comparison: its name, whether it passed, the largest error and the tolerance."""

    name: str
    passed: bool
    max_abs_err: float
    tol: float
    detail: str = ""

    def line(self) -> str:
        """``PASS|FAIL name max_abs_err tol`` (and the detail in brackets)."""
        status = "PASS" if self.passed else "FAIL"
        text = f"{status} {self.name} {self.max_abs_err:.3e} {self.tol:.3e}"
        return text + (f"  [{self.detail}]" if self.detail else "")


def _as_tensor(value: Any) -> Tensor:
    """A CPU tensor of ``value`` (a tensor, number, bool or nested sequence of them)."""
    if isinstance(value, Tensor):
        return value.detach().cpu()
    return torch.as_tensor(value, dtype=torch.float64)


def _error(ref: Tensor, got: Tensor) -> tuple[float, float]:
    """``(max |got - ref|, max |ref|)`` over the entries where ``ref`` is finite."""
    if ref.dtype == torch.bool:
        ref, got = ref.long(), got.long()
    if not ref.is_floating_point() and not ref.is_complex():
        if ref.numel() == 0:
            return 0.0, 0.0
        # Integer ids (e.g. FilterIndex keys up to E * R * E) are exact in int64, not in float32.
        return float((got.long() - ref.long()).abs().max()), float(ref.long().abs().max())
    finite = torch.isfinite(ref)
    if not bool(finite.any()):
        return 0.0, 0.0
    diff = (got.to(ref.dtype) - ref)[finite].abs()
    return float(diff.max()), float(ref[finite].abs().max())


def compare(
    name: str,
    ref: Any,
    got: Any,
    *,
    rtol: float,
    atol: float = 0.0,
    detail: str = "",
) -> Check:
    """Compare ``got`` (any device) with the CPU reference ``ref`` (module docstring's rule).

    Args:
        name: The check's name, e.g. ``"kg.complex.grads"``.
        ref: The reference (tensor or number), computed on the CPU.
        got: The same quantity from the device under test.
        rtol: Relative tolerance, scaled by ``max |ref|``.
        atol: Absolute tolerance added to it. Default 0.
        detail: Extra text for the report line.

    Returns:
        The :class:`Check`: passed iff the shapes match, the non-finite entries coincide (same
        positions, same values) and ``max |got - ref| <= atol + rtol * max |ref|``.

    Examples:
        >>> compare("x", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0001]), rtol=1e-4).passed
        True
        >>> compare("x", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.01]), rtol=1e-4).passed
        False
    """
    a, b = _as_tensor(ref), _as_tensor(got)
    if a.dtype != b.dtype:
        why = f"dtype {b.dtype} vs reference {a.dtype}"
        return Check(name, False, math.inf, atol, f"{why}; {detail}" if detail else why)
    if a.shape != b.shape:
        why = f"shape {tuple(b.shape)} vs reference {tuple(a.shape)}"
        return Check(name, False, math.inf, atol, f"{why}; {detail}" if detail else why)
    if a.is_floating_point():
        nonfinite = ~torch.isfinite(a)
        b_cast = b.to(a.dtype)
        if not torch.equal(nonfinite, ~torch.isfinite(b_cast)) or not torch.equal(
            a[nonfinite].nan_to_num(0.0), b_cast[nonfinite].nan_to_num(0.0)
        ):
            why = "non-finite entries differ"
            return Check(name, False, math.inf, atol, f"{why}; {detail}" if detail else why)
    err, scale = _error(a, b)
    tol = atol + rtol * scale
    return Check(name, err <= tol, err, tol, detail)


def compare_many(
    name: str,
    refs: Mapping[str, Any],
    gots: Mapping[str, Any],
    *,
    rtol: float,
    atol: float = 0.0,
    detail: str = "",
) -> Check:
    """One check over several named tensors (e.g. every gradient), reported by the worst one.

    Each entry is judged by :func:`compare` with its own scale; the result passes iff every entry
    passes and the names agree, and shows the entry with the largest ``max_abs_err / tol``.

    Args:
        name: The check's name.
        refs: Reference tensors by name (CPU).
        gots: The same names from the device under test.
        rtol: Relative tolerance of each entry.
        atol: Absolute tolerance of each entry. Default 0.
        detail: Extra text for the report line.

    Returns:
        The :class:`Check` of the worst entry, named ``name``.

    Examples:
        >>> ok = {"a": torch.ones(2), "b": torch.zeros(2)}
        >>> compare_many("g", ok, {"a": torch.ones(2), "b": torch.zeros(2)}, rtol=0.0).passed
        True
        >>> compare_many("g", ok, {"a": torch.ones(2)}, rtol=0.0).passed
        False
    """
    if set(refs) != set(gots):
        missing = sorted(set(refs) ^ set(gots))
        return Check(name, False, math.inf, atol, f"entries differ: {missing}")
    checks = [compare(key, refs[key], gots[key], rtol=rtol, atol=atol) for key in sorted(refs)]
    if not checks:
        return Check(name, True, 0.0, atol, detail or "nothing to compare")

    def badness(c: Check) -> float:
        if c.max_abs_err == 0.0:
            return 0.0
        return (
            math.inf if c.tol == 0.0 or not math.isfinite(c.max_abs_err) else c.max_abs_err / c.tol
        )

    worst = max(checks, key=badness)
    if badness(worst) == 0.0:
        text = f"{len(checks)} tensors, all equal"
    else:
        text = f"worst of {len(checks)}: {worst.name}" + (
            f" ({worst.detail})" if worst.detail else ""
        )
    return Check(
        name,
        all(c.passed for c in checks),
        worst.max_abs_err,
        worst.tol,
        f"{text}; {detail}" if detail else text,
    )


@dataclass
class _Outcome:
    """Whether a guarded block raised."""

    failed: bool = False


@dataclass
class Context:
    """What every section needs: the device, sizes, tolerances and the checks made so far."""

    device: torch.device
    quick: bool
    kg_root: Path
    data: Path | None
    checks: list[Check] = field(default_factory=list)
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        """The device is the CPU: the same kernels run twice, so results must be bit-identical."""
        return self.device.type == "cpu"

    def rtol(self, stated: float) -> float:
        """``stated`` on another device; 0 when comparing the CPU with itself."""
        return 0.0 if self.exact else stated

    def add(self, check: Check) -> Check:
        """Record ``check`` and print its line."""
        self.checks.append(check)
        print(check.line(), flush=True)
        return check

    def compare(self, name: str, ref: Any, got: Any, *, rtol: float, detail: str = "") -> Check:
        """:func:`compare` with :meth:`rtol` applied, recorded."""
        return self.add(compare(name, ref, got, rtol=self.rtol(rtol), detail=detail))

    def compare_many(
        self,
        name: str,
        refs: Mapping[str, Any],
        gots: Mapping[str, Any],
        *,
        rtol: float,
        detail: str = "",
    ) -> Check:
        """:func:`compare_many` with :meth:`rtol` applied, recorded."""
        return self.add(compare_many(name, refs, gots, rtol=self.rtol(rtol), detail=detail))

    @contextmanager
    def guard(self, name: str) -> Iterator[_Outcome]:
        """Run a block; an exception in it becomes the failed check ``name.error``, then go on.

        Yields an :class:`_Outcome` whose ``failed`` says, after the block, whether it raised.
        """
        outcome = _Outcome()
        try:
            yield outcome
        except Exception as err:  # one failing part must not stop the others
            outcome.failed = True
            traceback.print_exc(file=sys.stdout)
            self.add(Check(f"{name}.error", False, math.inf, 0.0, f"{type(err).__name__}: {err}"))

    def agree(
        self, name: str, fn: Callable[[torch.device], Any], *, rtol: float, detail: str = ""
    ) -> tuple[Any, Any] | None:
        """``fn(device)`` on the CPU and on the device, compared (a dict entry by entry).

        Guarded: an exception becomes the failed check ``name.error`` and None is returned.
        """
        with self.guard(name):
            ref, got = _both(self, fn)
            if isinstance(ref, dict) and isinstance(got, dict):
                self.compare_many(name, ref, got, rtol=rtol, detail=detail)
            else:
                self.compare(name, ref, got, rtol=rtol, detail=detail)
            return ref, got
        return None

    def agree_moved(
        self, name: str, fn: Callable[..., Any], *args: Any, rtol: float, **kwargs: Any
    ) -> tuple[Any, Any] | None:
        """:meth:`agree` of ``fn(*args, **kwargs)``, its tensors moved to each device."""
        return self.agree(name, lambda d: fn(*_to(args, d), **_to(kwargs, d)), rtol=rtol)

    def sync(self) -> None:
        """Wait for the device (for timing)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def _to(value: Any, device: torch.device) -> Any:
    """``value`` with every tensor (also inside tuples, lists and dicts) moved to ``device``."""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, tuple | list):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _cpu(value: Any) -> Any:
    """``value`` with every tensor detached and moved to the CPU."""
    if isinstance(value, Tensor):
        return value.detach().cpu()
    if isinstance(value, tuple | list):
        return type(value)(_cpu(v) for v in value)
    if isinstance(value, dict):
        return {k: _cpu(v) for k, v in value.items()}
    return value


def _both(ctx: Context, fn: Callable[[torch.device], Any]) -> tuple[Any, Any]:
    """``fn(device)`` on the CPU and on the device under test, both results on the CPU."""
    ref = _cpu(fn(torch.device("cpu")))
    got = _cpu(fn(ctx.device))
    return ref, got


# --------------------------------------------------------------------------------------- kg


@dataclass
class _KGSpec:
    """One model's agreement run: how to build it, its regime and its loss."""

    name: str
    build: Callable[[int, int], Any]  # (num_entities, num_relations) -> model
    regime: str  # "slcwa" or "1vsall"
    reciprocal: bool
    lr: float
    train_mode: bool = True  # steps in train mode (False: eval mode, dropout off, BN frozen)
    label_smoothing: float = 0.0
    n3: float = 0.0


def _kg_datasets(ctx: Context) -> list[tuple[str, Any]]:
    """Nations (and UMLS unless quick) from ``ctx.kg_root``, else a synthetic family KG."""
    from graphdata.synthetic import family_kg
    from graphdata.triples import KGDataset

    names = ("nations",) if ctx.quick else ("nations", "umls")
    found = [
        (name, KGDataset.from_folder(ctx.kg_root / name))
        for name in names
        if (ctx.kg_root / name / "train.txt").is_file()
    ]
    if not found:
        found = [("family", family_kg(120 if ctx.quick else 400, seed=0).dataset)]
    return found


def _kg_specs(quick: bool) -> list[_KGSpec]:
    """The models compared: TransE, ComplEx, TuckER (eval and BN-train modes), ConvE (eval)."""
    from kg.complex import ComplEx
    from kg.conve import ConvE
    from kg.transe import TransE
    from kg.tucker import TuckER

    dim = 16 if quick else 128
    conve_dim, height = (16, 4) if quick else (100, 10)  # 2-D reshape H x dim / H (ConvE's)

    def tucker(dropout: float) -> Callable[[int, int], Any]:
        return lambda e, r: TuckER(
            e,
            r,
            dim,
            relation_dim=dim,
            input_dropout=dropout,
            hidden_dropout1=dropout,
            hidden_dropout2=dropout,
        )

    return [
        _KGSpec("transe", lambda e, r: TransE(e, r, dim, p=1), "slcwa", False, lr=0.5),
        _KGSpec("complex", lambda e, r: ComplEx(e, r, dim), "1vsall", True, lr=5.0, n3=1e-2),
        # Default-like dropout: only eval mode is deterministic (dropout masks are device draws).
        _KGSpec("tucker", tucker(0.3), "1vsall", True, 1.0, train_mode=False, label_smoothing=0.1),
        # No dropout, train mode: batch norm uses batch statistics and moves its running ones.
        _KGSpec("tucker_bn_train", tucker(0.0), "1vsall", True, 1.0, label_smoothing=0.1),
        # Convolution with its 2-D batch norm folded in (a batched product), dropout: eval mode
        # as for TuckER.
        _KGSpec(
            "conve",
            lambda e, r: ConvE(e, r, conve_dim, embedding_height=height),
            "1vsall",
            True,
            1.0,
            train_mode=False,
            label_smoothing=0.1,
        ),
    ]


def _kg_batches(
    dataset: Any, spec: _KGSpec, steps: int, batch: int, negatives: int
) -> list[tuple[Tensor, Tensor | None]]:
    """Fixed CPU batches (and sLCWA negatives), drawn once from a seeded CPU generator."""
    from kg.sampling import uniform_negatives

    triples = dataset.train.mapped_triples
    if spec.reciprocal:
        inverse = triples[:, [2, 1, 0]].clone()  # (t, r + R, h)
        inverse[:, 1] += dataset.num_relations
        triples = torch.cat([triples, inverse])
    gen = torch.Generator().manual_seed(0)
    order = torch.randperm(triples.size(0), generator=gen)
    out: list[tuple[Tensor, Tensor | None]] = []
    for step in range(steps):
        pos = triples[order[(step * batch) % triples.size(0) :][:batch]]
        neg = None
        if spec.regime == "slcwa":
            neg = uniform_negatives(
                pos,
                dataset.num_entities,
                num_negatives=negatives,
                generator=gen,
                per_positive=True,
            )  # [B, k, 3]
        out.append((pos, neg))
    return out


def _kg_loss(model: Any, spec: _KGSpec, pos: Tensor, neg: Tensor | None) -> Tensor:
    """The regime's loss of one batch, as the trainer forms it (kg.losses)."""
    from kg.losses import nssa_loss, one_vs_all_loss

    h, r, t = pos.unbind(1)
    if spec.regime == "slcwa":
        assert neg is not None
        b, k, _ = neg.shape
        flat = neg.reshape(-1, 3)  # [B * k, 3]
        neg_scores = model(flat[:, 0], flat[:, 1], flat[:, 2]).view(b, k)  # [B, k]
        margin = float(getattr(model, "nssa_margin", 0.0))
        loss = nssa_loss(model(h, r, t), neg_scores, margin=margin, adversarial_temperature=1.0)
    else:
        scores = model.score_tails(h, r)  # [B, E]
        loss = one_vs_all_loss(scores, t, label_smoothing=spec.label_smoothing)
    if spec.n3:
        loss = loss + spec.n3 * model.regularization(h, r, t, kind="n3")
    return loss


def _kg_trajectory(
    model: Any,
    spec: _KGSpec,
    batches: list[tuple[Tensor, Tensor | None]],
    probe: Tensor,
    device: torch.device,
    optimizer: str = "sgd",
) -> dict[str, Any]:
    """Scores, first loss and gradients, then parameters after the steps, all on the CPU."""
    from kg.base import eval_mode

    model = model.to(device)
    probe = probe.to(device)
    out: dict[str, Any] = {}
    with torch.no_grad(), eval_mode(model):
        h, r, t = probe.unbind(1)
        out["scores"] = {
            "tails": model.score_tails(h, r),
            "heads": model.score_heads(r, t),
            "forward": model(h, r, t),
        }
    params = list(model.parameters())
    if optimizer == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=1e-2, fused=True)
    else:
        opt = torch.optim.SGD(params, lr=spec.lr)
    model.train(spec.train_mode)
    for step, (pos, neg) in enumerate(batches):
        loss = _kg_loss(model, spec, pos.to(device), None if neg is None else neg.to(device))
        opt.zero_grad()
        loss.backward()
        if step == 0:
            out["loss0"] = loss.detach()
            out["grads"] = {
                n: p.grad.detach().clone()
                for n, p in model.named_parameters()
                if p.grad is not None
            }
        opt.step()
        model.post_step()
    model.eval()
    out["state"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return _cpu(out)


def _near_ties(
    model: Any, triples: Tensor, index: Any, reciprocal: bool, num_relations: int
) -> Tensor:
    """Per query ``[2, N]`` (head side, tail side): filtered candidates near the true score.

    A candidate is a near tie when its CPU score is within ``NEAR_TIE * max_c |s_c|`` of the
    true answer's (the row's largest modulus sets the scale of the rounding of every score).
    """
    from kg.base import eval_mode

    counts = []
    with torch.no_grad(), eval_mode(model):
        for chunk in triples.split(1024):
            h, r, t = chunk.unbind(1)
            rows = torch.arange(chunk.size(0))
            tails = model.score_tails(h, r)  # [n, E]
            if reciprocal:
                heads = model.score_tails(t, r + num_relations)  # [n, E]
            else:
                heads = model.score_heads(r, t)
            sides = []
            for scores, true, (qrow, qcol) in (
                (heads, h, index.head_coo(r, t)),
                (tails, t, index.tail_coo(h, r)),
            ):
                target = scores[rows, true].clone()  # [n]
                scale = scores.abs().amax(dim=1).clamp_min(1e-30)  # [n]
                scores[qrow, qcol] = torch.nan  # filtered candidates never count
                scores[rows, true] = torch.nan  # nor the answer itself
                near = (scores - target[:, None]).abs() <= NEAR_TIE * scale[:, None]  # NaN: no
                sides.append(near.sum(dim=1))
            counts.append(torch.stack(sides))  # [2, n]
    return torch.cat(counts, dim=1) if counts else torch.zeros(2, 0, dtype=torch.long)


def _rank_checks(ctx: Context, name: str, ref: Any, got: Any, ties: Tensor) -> None:
    """Ranks exactly except near ties; metrics to 1e-4 widened by what near ties can move."""
    allowed = torch.zeros_like(ties) if ctx.exact else ties
    excess = torch.zeros((), dtype=torch.long)
    for kind in ("optimistic", "pessimistic"):
        diff = (getattr(got, kind) - getattr(ref, kind)).abs()  # [2, N]
        excess = torch.maximum(excess, (diff - allowed).clamp_min(0).max())
    tied = int((allowed > 0).sum())
    ctx.add(
        Check(
            f"{name}.ranks",
            int(excess) == 0,
            float(excess),
            0.0,
            f"{tied} of {ties.numel()} queries with near ties (rank may move by their count)",
        )
    )
    rank = ref.ranks("both", "realistic")  # [2N], head side then tail side
    c = allowed.flatten().double()
    base = 0.0 if ctx.exact else 1e-4
    # A query with c near ties has its rank in [rank - c, rank + c] on the other device.
    rr_moves = 1 / (rank - c).clamp_min(1) - 1 / (rank + c)
    bound = float(rr_moves.sum()) / max(rank.numel(), 1)
    ctx.add(compare(f"{name}.mrr", ref.mrr, got.mrr, rtol=0.0, atol=base + bound))
    for k in (1, 3, 10):
        # Hits@k of such a query can only change when that interval straddles k.
        flips = ((c > 0) & (rank - c <= k) & (rank + c > k)).double()
        bound = float(flips.mean()) if rank.numel() else 0.0
        ctx.add(
            compare(
                f"{name}.hits_at_{k}", ref.hits_at(k), got.hits_at(k), rtol=0.0, atol=base + bound
            )
        )


def section_kg(ctx: Context) -> None:
    """KGE scores, gradients and steps from one state; filtered evaluation; a Trainer smoke run."""
    datasets = _kg_datasets(ctx)
    for ds_name, dataset in datasets:
        for spec in _kg_specs(ctx.quick):
            with ctx.guard(f"kg.{ds_name}.{spec.name}"):
                _kg_model_checks(ctx, ds_name, dataset, spec)
    _trainer_smoke(ctx, *datasets[-1])  # the largest (UMLS): the least noisy test MRR


def _kg_model_checks(ctx: Context, ds_name: str, dataset: Any, spec: _KGSpec) -> None:
    """One model on one dataset: scores, loss, gradients, SGD (and Adam) steps, evaluation."""
    from kg.evaluation import evaluate

    steps = 2 if ctx.quick else 4
    batch = 32 if ctx.quick else 256
    e, r = dataset.num_entities, dataset.num_relations
    index = dataset.filter_index()
    test = dataset.test.mapped_triples
    probe = dataset.train.mapped_triples[:16]
    name = f"kg.{ds_name}.{spec.name}"
    torch.manual_seed(0)
    model = spec.build(e, 2 * r if spec.reciprocal else r)
    batches = _kg_batches(dataset, spec, steps, batch, negatives=8 if ctx.quick else 32)
    cpu = torch.device("cpu")
    ref = _kg_trajectory(copy.deepcopy(model), spec, batches, probe, cpu)
    got = _kg_trajectory(copy.deepcopy(model), spec, batches, probe, ctx.device)
    ctx.compare_many(f"{name}.scores", ref["scores"], got["scores"], rtol=RTOL32)
    ctx.compare(f"{name}.loss", ref["loss0"], got["loss0"], rtol=RTOL32)
    ctx.compare_many(f"{name}.grads", ref["grads"], got["grads"], rtol=RTOL32)
    start = {k: v.detach() for k, v in model.state_dict().items()}
    moved = max(float((ref["state"][k].double() - start[k].double()).abs().max()) for k in start)
    ctx.compare_many(
        f"{name}.after_{steps}_sgd_steps",
        ref["state"],
        got["state"],
        rtol=RTOL32,
        detail=f"training moved a parameter by up to {moved:.2e}",
    )
    if spec.name == "complex":
        with ctx.guard(f"{name}.after_{steps}_adam_steps_float64"):
            # Fused Adam (the trainer's optimiser), in float64 (see the module docstring).
            m64 = copy.deepcopy(model).double()
            ref64 = _kg_trajectory(copy.deepcopy(m64), spec, batches, probe, cpu, "adam")
            got64 = _kg_trajectory(copy.deepcopy(m64), spec, batches, probe, ctx.device, "adam")
            ctx.compare_many(
                f"{name}.after_{steps}_adam_steps_float64",
                ref64["state"],
                got64["state"],
                rtol=RTOL64,
            )
    # Evaluate the CPU-trained parameters on both devices.
    trained = copy.deepcopy(model)
    trained.load_state_dict(ref["state"])
    trained.eval()

    def run_eval(device: torch.device) -> Any:
        on_device = copy.deepcopy(trained).to(device)
        return evaluate(on_device, test, index, reciprocal=spec.reciprocal)

    ref_m, got_m = _both(ctx, run_eval)
    ties = _near_ties(trained, test, index, spec.reciprocal, r)
    _rank_checks(ctx, f"{name}.eval", ref_m, got_m, ties)


def _trainer_smoke(ctx: Context, ds_name: str, dataset: Any) -> None:
    """kg.Trainer end to end on both devices; different random streams, so MRRs only close."""
    from kg.config import TrainingConfig
    from kg.training import Trainer, build_model

    epochs = 1 if ctx.quick else 3
    dim = 16 if ctx.quick else None  # None: the model's default size
    for model_name in ("transe", "complex"):
        cfg = TrainingConfig.from_defaults(model_name, epochs=epochs, eval_every=0, progress=False)

        def fit(device: torch.device, cfg: TrainingConfig = cfg, name: str = model_name) -> float:
            model = build_model(name, dataset, cfg, dim=dim).to(device)
            trainer = Trainer(model, cfg).fit(dataset)
            return trainer.evaluate(dataset).mrr

        name = f"kg.{ds_name}.trainer_smoke.{model_name}.test_mrr"
        with ctx.guard(name):
            ref, got = _both(ctx, fit)
            ctx.add(
                compare(
                    name,
                    ref,
                    got,
                    rtol=0.0,
                    atol=0.0 if ctx.exact else SMOKE_MRR_TOL,
                    detail=f"{epochs} epoch(s); the devices draw different random streams",
                )
            )


# ----------------------------------------------------------------------------------- graphon


def section_graphon(ctx: Context) -> None:
    """Homomorphism densities, graphon densities, WL, cut norm, IWN/IGN from one state."""
    from graphon.cut import cut_norm
    from graphon.densities import graphon_density
    from graphon.families import make_graphon, sbm
    from graphon.homomorphism import hom_density, inj_density
    from graphon.sampling import sample_graphs
    from graphon.wl import wl_refine

    n, batch = (16, 3) if ctx.quick else (64, 8)
    patterns = ("edge", "triangle", "square") if ctx.quick else PATTERNS_FULL
    # Sampled on the CPU (the devices' random streams differ), then moved.
    adj64 = sample_graphs(
        make_graphon("sine"), n, batch_size=batch, seed=0, dtype=torch.float64
    ).adj
    weighted = sample_graphs(sbm(), n, batch_size=batch, edges="weighted", seed=1).adj  # float32
    for pattern in patterns:
        name = f"graphon.hom_density.{pattern}"
        ctx.agree_moved(f"{name}.float64", hom_density, pattern, adj64, rtol=RTOL64)
        ctx.agree_moved(f"{name}.float32_weighted", hom_density, pattern, weighted, rtol=RTOL32)
    # Padded batch of different sizes: each graph's own density through the mask.
    sizes = [n, n // 2, n - 3][: max(2, batch // 2)]
    mask = torch.zeros(len(sizes), n, dtype=torch.bool)
    padded = torch.zeros(len(sizes), n, n, dtype=torch.float64)
    for b, size in enumerate(sizes):
        mask[b, :size] = True
        padded[b, :size, :size] = adj64[b, :size, :size]
    ctx.agree_moved(
        "graphon.hom_density.triangle.masked",
        hom_density,
        "triangle",
        padded,
        mask=mask,
        rtol=RTOL64,
    )
    signal = torch.rand(batch, n, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    ctx.agree_moved(
        "graphon.hom_density.path3.signal",
        hom_density,
        "path3",
        adj64,
        signal,
        exponents=[1, 2, 1],
        rtol=RTOL64,
    )
    ctx.agree_moved("graphon.inj_density.square", inj_density, "square", adj64, rtol=RTOL64)
    # Graphon densities: exact on a step graphon, product quadrature on a smooth one.
    order = 16 if ctx.quick else 64
    for label, graphon in (("sbm_exact", sbm()), ("affine_quadrature", make_graphon("affine"))):

        def density(device: torch.device, graphon: Any = graphon) -> float:
            return graphon_density("triangle", graphon, order=order, device=device).value

        ctx.agree(f"graphon.graphon_density.triangle.{label}", density, rtol=RTOL64)

    # WL histograms (the refinement itself runs on the host; the device's tensors go in).
    def wl(device: torch.device) -> list[list[tuple[int, float]]]:
        graphs = [a.to(device) for a in adj64[: min(batch, 4)]]
        return [sorted(h.items()) for h in wl_refine(graphs).histograms]

    with ctx.guard("graphon.wl_refine.histograms"):
        ref_h, got_h = wl(torch.device("cpu")), wl(ctx.device)
        differ = sum(a != b for a, b in zip(ref_h, got_h)) + abs(len(ref_h) - len(got_h))
        ctx.add(
            Check(
                "graphon.wl_refine.histograms", differ == 0, float(differ), 0.0, "graphs differing"
            )
        )
    # Cut norm of a difference of two graphs: exact enumeration and the SDP relaxation (whose
    # hyperplane rounding picks the best of 64 sign vectors: 1e-6, not float64 rounding).
    for label, size, rtol in (("exact", 12, RTOL64), ("sdp", 24 if ctx.quick else 60, 1e-6)):
        pair = sample_graphs(make_graphon("sine"), size, batch_size=2, seed=3, dtype=torch.float64)
        diff = pair.adj[0] - pair.adj[1]

        def cut(device: torch.device, diff: Tensor = diff, method: str = label) -> Tensor:
            result = cut_norm(diff.to(device), method=method)
            return torch.tensor([result.value, result.upper], dtype=torch.float64)

        ctx.agree(f"graphon.cut_norm.{label}", cut, rtol=rtol, detail="[value, upper]")
    _equivariant_nets(ctx, n)


#: Patterns of the full run: trees, cycles, cliques (different elimination plans).
PATTERNS_FULL = ("edge", "path4", "star3", "triangle", "square", "diamond", "k4", "cycle5")


def _equivariant_nets(ctx: Context, n: int) -> None:
    """IWN and IGN forward and backward on a padded batch with a signal, same parameters."""
    from graphdata.dense import DenseGraphBatch
    from graphon.nn.models import IGN, IWN

    gen = torch.Generator().manual_seed(4)
    sizes = [n, n - 2, n // 2]
    adjs = []
    for size in sizes:
        upper = torch.triu((torch.rand(size, size, generator=gen) < 0.3).float(), diagonal=1)
        adjs.append(upper + upper.T)
    signals = [torch.rand(size, 2, generator=gen) for size in sizes]
    batch = DenseGraphBatch.from_adjacency(adjs, signals)
    small = DenseGraphBatch.from_adjacency([a[:8, :8] for a in adjs], [s[:8] for s in signals])
    nets: list[tuple[str, Callable[[], torch.nn.Module], DenseGraphBatch]] = [
        ("iwn2", lambda: IWN(2, 8, 2, num_layers=3), batch),
        ("ign2", lambda: IGN(2, 8, 2, num_layers=3), batch),
        ("iwn3_node", lambda: IWN(2, 4, 1, num_layers=2, order=3, task="node"), small),
    ]
    for label, make, data in nets:
        torch.manual_seed(0)
        net = make()

        def run(device: torch.device, net: torch.nn.Module = net, data: Any = data) -> Any:
            model = copy.deepcopy(net).to(device)
            out = model(data.to(device))
            out.square().sum().backward()
            grads = {k: p.grad for k, p in model.named_parameters() if p.grad is not None}
            return out.detach(), grads

        with ctx.guard(f"graphon.nn.{label}"):
            (ref_out, ref_g), (got_out, got_g) = _both(ctx, run)
            ctx.compare(f"graphon.nn.{label}.forward", ref_out, got_out, rtol=RTOL32)
            ctx.compare_many(f"graphon.nn.{label}.grads", ref_g, got_g, rtol=RTOL32)


# ----------------------------------------------------------------------------------- spatial


def section_spatial(ctx: Context) -> None:
    """Celcomen fits from the same initialisation and one counterfactual, float64 and float32."""
    from spatial.celcomen import Celcomen
    from spatial.simulate import simulate_tissue

    cells, genes, epochs = (60, 4, 20) if ctx.quick else (1000, 10, 100)
    tissue = simulate_tissue(cells, genes, steps=50, seed=0)
    centre = torch.zeros(cells, dtype=torch.bool)
    centre[cells // 2] = True
    for label, dtype, params, rtol in (
        ("float64_adam", torch.float64, {}, RTOL64),
        ("float32_sgd", torch.float32, {"optimizer": "sgd", "lr": 0.5}, RTOL32),
    ):
        x = tissue.x.to(dtype)

        def fit(device: torch.device, x: Tensor = x, params: dict[str, Any] = params) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "not converged" after a short fit is expected
                est = Celcomen(epochs=epochs, progress=False, **params).fit(
                    x, tissue.edge_index, device=device
                )
            return est.W_intra_, est.W_inter_, torch.tensor(est.losses_, dtype=torch.float64)

        name = f"spatial.celcomen.{label}"
        with ctx.guard(name) as fitting:
            ref, got = _both(ctx, fit)
            ctx.compare(f"{name}.W_intra", ref[0], got[0], rtol=rtol, detail=f"{epochs} epochs")
            ctx.compare(f"{name}.W_inter", ref[1], got[1], rtol=rtol)
            ctx.compare(f"{name}.losses", ref[2], got[2], rtol=rtol)
        if fitting.failed:
            continue  # no fitted matrices for the counterfactual
        w_intra, w_inter = ref[0], ref[1]  # the CPU fit's matrices on both devices

        def knock_out(
            device: torch.device, x: Tensor = x, w: tuple[Tensor, Tensor] = (w_intra, w_inter)
        ) -> Any:
            est = Celcomen.from_matrices(w[0].to(device), w[1].to(device))
            cf = est.intervene(
                x.to(device), {0: 0.0}, centre, edge_index=tissue.edge_index.to(device)
            )
            return {"perturbed": cf.perturbed, "sham": cf.sham, "ring": cf.ring}, cf.delta

        with ctx.guard(f"spatial.counterfactual.{label}"):
            (ref_cf, ref_delta), (got_cf, got_delta) = _both(ctx, knock_out)
            ctx.compare_many(f"spatial.counterfactual.{label}", ref_cf, got_cf, rtol=rtol)
            # delta = perturbed - sham is small: judged on the scale of the unit rows it came from.
            ctx.add(
                compare(
                    f"spatial.counterfactual.{label}.delta",
                    ref_delta,
                    got_delta,
                    rtol=0.0,
                    atol=2 * ctx.rtol(rtol),
                    detail="atol = 2 rtol (rows are unit vectors)",
                )
            )


# ------------------------------------------------------------------------------- distributed

#: Two data-parallel ranks with per-rank batch B/2 against one process with batch B: DistMult,
#: sLCWA with filtered negatives (the per-rank denominators travel), 2 epochs, no validation.
_DIST_CONFIG = {
    "regime": "slcwa",
    "loss": "margin",
    "num_negatives": 4,
    "filter_negatives": True,
    "epochs": 2,
    "batch_size": 37,
    "lr": 0.05,
    "eval_every": 0,
    "progress": False,
    "seed": 5,
}


def _dist_setup() -> tuple[Any, Any, Any]:
    """The dataset, a fresh model and the config of the distributed section (CPU)."""
    from graphdata.synthetic import family_kg
    from kg.config import TrainingConfig
    from kg.distmult import DistMult

    dataset = family_kg(60, seed=1).dataset
    model = DistMult(dataset.num_entities, dataset.num_relations, dim=8)
    return dataset, model, TrainingConfig(**_DIST_CONFIG)


def _dist_worker(rank: int, init_file: str, device_type: str, out: str) -> None:
    """One rank of :func:`section_distributed`: NCCL on its own GPU, or gloo on the CPU."""
    from kg.distributed import evaluate_sharded, leave_together
    from kg.training import Trainer

    torch.set_num_threads(1)
    device = torch.device(device_type, rank) if device_type == "cuda" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = False
    backend = "nccl" if device.type == "cuda" else "gloo"
    torch.distributed.init_process_group(
        backend, init_method=f"file://{init_file}", rank=rank, world_size=2
    )
    with leave_together():
        dataset, model, config = _dist_setup()
        trainer = Trainer(model.to(device), config).fit(dataset)
        metrics = evaluate_sharded(
            trainer.model_,
            dataset.test.mapped_triples.to(device),
            dataset.filter_index().to(device),
        )
        if rank == 0:
            torch.save(
                {
                    "state": {k: v.cpu() for k, v in trainer.model_.state_dict().items()},
                    "losses": [h["loss"] for h in trainer.history_],
                    "optimistic": metrics.optimistic.cpu(),
                    "pessimistic": metrics.pessimistic.cpu(),
                },
                Path(out) / "rank0.pt",
            )


def section_distributed(ctx: Context) -> None:
    """Data-parallel training on 2 ranks against one process (issue 22's equivalence test).

    On CUDA the ranks use NCCL, one GPU each, so it needs two GPUs (NCCL refuses two ranks on
    one device); on the CPU (the dry run) gloo. Checked: the trained parameters at ``RTOL32``
    and the epoch losses at 1e-5 against one process on ``ctx.device`` with the global batch
    (the same gradient sums in another order: not bit-identical even on the CPU), and the
    sharded evaluation's ranks of the 2-rank parameters exactly against
    :func:`kg.evaluation.evaluate` of the same parameters in one process.
    """
    import tempfile

    import torch.multiprocessing as mp

    from kg.evaluation import evaluate
    from kg.training import Trainer

    if ctx.device.type == "cuda" and torch.cuda.device_count() < 2:
        print(
            f"distributed: skipped (NCCL needs one GPU per rank; {torch.cuda.device_count()} "
            "GPU here)",
            flush=True,
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(
            _dist_worker, args=(str(Path(tmp) / "init"), ctx.device.type, tmp), nprocs=2, join=True
        )
        two = torch.load(Path(tmp) / "rank0.pt", weights_only=True)
    dataset, model, config = _dist_setup()
    device = ctx.device if ctx.device.type == "cpu" else torch.device("cuda", 0)
    one = Trainer(model.to(device), config).fit(dataset)
    refs = {k: v.cpu() for k, v in one.model_.state_dict().items()}
    ctx.add(compare_many("distributed.params", refs, two["state"], rtol=RTOL32))
    losses = torch.tensor([h["loss"] for h in one.history_], dtype=torch.float64)
    got = torch.tensor(two["losses"], dtype=torch.float64)
    ctx.add(compare("distributed.losses", losses, got, rtol=1e-5))
    model.load_state_dict(two["state"])
    single = evaluate(
        model.to(device), dataset.test.mapped_triples.to(device), dataset.filter_index().to(device)
    )
    for which in ("optimistic", "pessimistic"):
        ref = getattr(single, which).cpu()
        ctx.add(compare(f"distributed.ranks.{which}", ref, two[which], rtol=0))


# --------------------------------------------------------------------------------- graphdata


def section_graphdata(ctx: Context) -> None:
    """kNN graph, FilterIndex and path enumeration with the device's tensors."""
    from graphdata.filter_index import FilterIndex
    from graphdata.paths import enumerate_paths_batch
    from graphdata.spatial import knn_graph
    from graphdata.synthetic import family_kg

    points = 500 if ctx.quick else 20000
    gen = torch.Generator().manual_seed(5)
    for dims in (2, 3):
        coords = torch.rand(points, dims, generator=gen, dtype=torch.float64)
        groups = torch.randint(0, 3, (points,), generator=gen)
        for label, batch in (("", None), (".batched", groups)):

            def knn(device: torch.device, coords: Tensor = coords, batch: Any = batch) -> Any:
                b = None if batch is None else batch.to(device)
                return knn_graph(coords.to(device), 6, batch=b)  # auto: kdtree on CPU, else torch

            name = f"graphdata.knn_graph.{dims}d{label}"
            with ctx.guard(name):
                (ref_ei, ref_d), (got_ei, got_d) = _both(ctx, knn)
                ctx.compare(f"{name}.edge_index", ref_ei, got_ei, rtol=0.0)
                ctx.compare(f"{name}.distance", ref_d, got_d, rtol=RTOL64)
    family = family_kg(120 if ctx.quick else 600, seed=0)
    ds = family.dataset
    e, r = ds.num_entities, ds.num_relations
    known = [s.mapped_triples for s in (ds.train, ds.valid, ds.test)]
    queries = ds.test.mapped_triples
    unseen = torch.stack([queries[:, 2], queries[:, 1], queries[:, 0]], dim=1)  # mostly absent

    def index_run(device: torch.device) -> dict[str, Tensor]:
        index = FilterIndex.from_triples(
            *(k.to(device) for k in known), num_entities=e, num_relations=r
        )
        q = queries.to(device)
        out = {
            name: getattr(index, name)
            for name in (
                "hr_keys",
                "hr_ptr",
                "hr_tails",
                "hrt_codes",
                "rt_keys",
                "rt_ptr",
                "rt_heads",
            )
        }
        out["tail_coo"] = torch.stack(index.tail_coo(q[:, 0], q[:, 1]))
        out["head_coo"] = torch.stack(index.head_coo(q[:, 1], q[:, 2]))
        out["contains"] = index.contains(torch.cat([q, unseen.to(device)]))
        return out

    ctx.agree("graphdata.filter_index", index_run, rtol=0.0)
    train = ds.train.mapped_triples
    edge_index, edge_type = train[:, [0, 2]].T.contiguous(), train[:, 1].contiguous()
    pairs = queries[: 16 if ctx.quick else 64][:, [0, 2]]

    def paths(device: torch.device) -> dict[str, Tensor]:
        found = enumerate_paths_batch(
            edge_index.to(device),
            edge_type.to(device),
            pairs.to(device),
            3,
            num_nodes=e,
            max_paths=200,
            on_overflow="truncate",
        )
        fields = ("nodes", "edge_ids", "relations", "forward", "length")
        return {f"{b}.{f}": getattr(p, f) for b, p in enumerate(found) for f in fields}

    ctx.agree("graphdata.enumerate_paths_batch", paths, rtol=0.0, detail="max_length 3")


# ------------------------------------------------------------------------------------ timing


def _load_fb15k237(path: Path) -> Any:
    """FB15k-237 with the triples of labels unseen in train dropped (PyKEEN's behaviour)."""
    from graphdata.triples import KGDataset

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return KGDataset.from_folder(path, on_unknown="drop")


def _reset_peak(device: torch.device) -> None:
    """Start a new peak-memory window (CUDA only)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def _peak(device: torch.device) -> int | None:
    """``torch.cuda.max_memory_allocated`` since the last reset; None off CUDA."""
    return int(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else None


def _mib(nbytes: int | None) -> str:
    return "n/a" if nbytes is None else f"{nbytes / 2**20:.0f} MiB"


def section_timing(ctx: Context) -> None:
    """Seconds per full FB15k-237 epoch and per filtered test evaluation on the device."""
    if ctx.device.type != "cuda" and ctx.data is None:
        # A CPU epoch of FB15k-237 takes minutes; name a (small) folder with --data to dry-run.
        print("timing: skipped (needs CUDA, or --data FOLDER for a dry run)", flush=True)
        ctx.timing["skipped"] = "needs CUDA"
        return
    path = ctx.data if ctx.data is not None else ctx.kg_root / "fb15k237"
    if not (path / "train.txt").is_file():
        print(f"timing: skipped ({path} has no train.txt; pass --data FOLDER)", flush=True)
        ctx.timing["skipped"] = f"no dataset at {path}"
        return
    started = time.perf_counter()
    dataset = _load_fb15k237(path)
    ctx.timing["dataset"] = {
        "path": str(path),
        "entities": dataset.num_entities,
        "relations": dataset.num_relations,
        "train": dataset.train.mapped_triples.size(0),
        "test": dataset.test.mapped_triples.size(0),
        "load_s": time.perf_counter() - started,
    }
    index = dataset.filter_index()
    agree = 2000 if ctx.quick else 5000  # test triples also ranked on the CPU (seconds there)
    for name in ("complex", "transe"):
        with ctx.guard(f"timing.{path.name}.{name}"):
            _time_model(ctx, path.name, name, dataset, index, agree)


def _time_model(ctx: Context, tag: str, name: str, dataset: Any, index: Any, agree: int) -> None:
    """One full epoch of model ``name`` with its defaults, then timed test evaluations."""
    from kg.config import TrainingConfig
    from kg.evaluation import evaluate
    from kg.training import Trainer, build_model

    test = dataset.test.mapped_triples
    cfg = TrainingConfig.from_defaults(name, epochs=1, eval_every=0, progress=False)
    model = build_model(name, dataset, cfg).to(ctx.device)
    _reset_peak(ctx.device)
    trainer = Trainer(model, cfg).fit(dataset)
    ctx.sync()
    train_peak = _peak(ctx.device)
    _reset_peak(ctx.device)
    eval_s = []
    for _ in range(2):  # the first call also moves the filter index to the device
        ctx.sync()
        start = time.perf_counter()
        metrics = evaluate(model, test, index, reciprocal=cfg.reciprocal)
        ctx.sync()
        eval_s.append(time.perf_counter() - start)
    row = {
        "regime": cfg.regime,
        "reciprocal": cfg.reciprocal,
        "dim": model.dim,
        "batch_size": cfg.batch_size,
        "epoch_s": trainer.history_[0]["seconds"],
        "epoch": "one full epoch (library defaults, no validation)",
        "train_peak_bytes": train_peak,
        "eval_s": eval_s[0],
        "eval_repeat_s": eval_s[1],
        "eval_peak_bytes": _peak(ctx.device),
        "test_mrr_after_1_epoch": metrics.mrr,
        "test_hits_at_10_after_1_epoch": metrics.hits_at(10),
    }
    ctx.timing[name] = row
    # One line per model: the numbers RESULTS.md records.
    print(
        f"TIME {tag} {name} {cfg.regime}: epoch {row['epoch_s']:.2f} s "
        f"(peak {_mib(train_peak)}), filtered both-sides test evaluation "
        f"{eval_s[0]:.2f} s, again {eval_s[1]:.2f} s (peak {_mib(row['eval_peak_bytes'])}), "
        f"test MRR after 1 epoch {metrics.mrr:.4f}",
        flush=True,
    )
    # Agreement at scale: the trained parameters evaluated on the CPU and on the device.
    subset = test[:agree]
    on_cpu = copy.deepcopy(model).cpu()
    ref = evaluate(on_cpu, subset, index, reciprocal=cfg.reciprocal)
    got = evaluate(model, subset, index, reciprocal=cfg.reciprocal)
    ties = _near_ties(on_cpu, subset, index, cfg.reciprocal, dataset.num_relations)
    _rank_checks(ctx, f"timing.{tag}.{name}.eval_first_{subset.size(0)}", ref, got, ties)
    del on_cpu, model, trainer
    if ctx.device.type == "cuda":
        torch.cuda.empty_cache()


# -------------------------------------------------------------------------------------- main

_SECTION_FUNCS: dict[str, Callable[[Context], None]] = {
    "kg": section_kg,
    "graphon": section_graphon,
    "spatial": section_spatial,
    "graphdata": section_graphdata,
    "distributed": section_distributed,
    "timing": section_timing,
}


def _environment(device: torch.device) -> dict[str, Any]:
    """Versions and hardware for the summary."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "threads": torch.get_num_threads(),
    }
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        env["cuda"] = torch.version.cuda
        env["tf32_matmul"] = torch.backends.cuda.matmul.allow_tf32
        env["tf32_cudnn"] = torch.backends.cudnn.allow_tf32
    return env


def _jsonable(value: Any) -> Any:
    """``value`` with non-finite floats as the strings ``"inf"``/``"nan"`` (strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def main(argv: list[str] | None = None) -> int:
    """Run the sections, print one line per check and a JSON summary; return the exit code.

    Args:
        argv: Command-line arguments (default ``sys.argv[1:]``).

    Returns:
        0 when every check passed (or CUDA is absent and the device is CUDA), else 1.
    """
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--device",
        default="cuda",
        help="device compared with the CPU (default cuda; 'cpu' compares the CPU with itself, "
        "exactly: a dry run of the same code paths)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds on a CPU)")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)} (default all)",
    )
    parser.add_argument(
        "--kg-root",
        type=Path,
        default=_SHARED,
        help="folder holding nations/ and umls/ (default ../shared/datasets/kg; a synthetic "
        "family KG where absent)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="FB15k-237 folder for the timing (default <kg-root>/fb15k237)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the JSON summary here")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        parser.error(f"--sections: unknown {unknown}; choose from {','.join(SECTIONS)}")
    try:
        device = torch.device(args.device)
    except RuntimeError as err:
        parser.error(
            f"--device: expected a torch device such as cuda or cpu, got {args.device!r} ({err})"
        )
    if device.type == "cuda" and not torch.cuda.is_available():
        print("CUDA not available: skipped", flush=True)
        if args.out is not None:
            from graphdata.atomic import write_text_atomic

            summary = {"skipped": "CUDA not available", "passed": True, "checks": []}
            write_text_atomic(args.out, json.dumps(summary, indent=2) + "\n")
        return 0
    ctx = Context(device=device, quick=args.quick, kg_root=args.kg_root, data=args.data)
    mode = "exact (CPU vs CPU)" if ctx.exact else "CPU reference vs device"
    print(
        f"cuda_check: device {device}, {mode}, {'quick' if args.quick else 'full'} sizes",
        flush=True,
    )
    started = time.perf_counter()
    saved = (
        torch.get_num_threads(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
    torch.set_num_threads(1)  # the CPU reference runs single-threaded (a shared machine)
    # Full fp32 matmuls and convolutions on the GPU, or float32 agreement means nothing.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    seconds: dict[str, float] = {}
    try:
        env = _environment(device)
        for section in sections:
            t0 = time.perf_counter()
            with ctx.guard(section):
                _SECTION_FUNCS[section](ctx)
            seconds[section] = time.perf_counter() - t0
            print(f"== {section}: {seconds[section]:.1f} s", flush=True)
    finally:  # main() is also called in-process (tests): leave torch as it was
        torch.set_num_threads(saved[0])
        torch.backends.cuda.matmul.allow_tf32 = saved[1]
        torch.backends.cudnn.allow_tf32 = saved[2]
    failed = [c.name for c in ctx.checks if not c.passed]
    summary = {
        "device": str(device),
        "mode": mode,
        "quick": args.quick,
        "environment": env,
        "passed": not failed,
        "num_checks": len(ctx.checks),
        "failed": failed,
        "seconds": seconds,
        "elapsed_s": time.perf_counter() - started,
        "timing": ctx.timing,
        "checks": [asdict(c) for c in ctx.checks],
    }
    text = json.dumps(_jsonable(summary), indent=2, allow_nan=False)
    # The checks were printed one per line; the printed summary leaves them out (--out has all).
    short = {k: v for k, v in summary.items() if k != "checks"}
    print(json.dumps(_jsonable(short), indent=2, allow_nan=False), flush=True)
    if args.out is not None:
        from graphdata.atomic import write_text_atomic

        write_text_atomic(args.out, text + "\n")
    status = "all passed" if not failed else f"{len(failed)} FAILED"
    print(
        f"cuda_check: {len(ctx.checks)} checks, {status}, {summary['elapsed_s']:.1f} s", flush=True
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
