r"""Explain many targets across worker processes that share one fitted explainer.

Explanations of different targets are independent: each reads the training graph, the model and
the distilled evaluator, and writes nothing, so a list of targets splits across processes
without communication (an embarrassingly parallel map, issue 22). The workers must not redo the
expensive part, the evaluator's distillation: with the ``"fork"`` start method (default, Linux)
every worker inherits the parent's fitted :class:`~kg.explain.KGExplainer` copy-on-write, and
nothing is pickled but the target ids and the results; with ``"spawn"`` or ``"forkserver"`` the
explainer is sent once per worker through :mod:`torch.multiprocessing`, whose pickler moves
tensors into shared memory instead of copying them. Each worker runs ``threads`` intra-op
threads (default 1: on a machine with as many cores as workers, more threads only contend).

Targets are handed out in blocks of ``chunk_size`` in input order (``imap``), and the results
come back in input order, so the output equals :meth:`KGExplainer.explain_all
<kg.explain.KGExplainer.explain_all>`'s, field for field except the wall time ``seconds``, when
the serial run uses the same number of threads (a different thread count may change the last
bits of the GNN's sums). The candidate-cap warnings of the workers are sent back and become
one summary line in the parent (:func:`kg.explain.local.capped_summary`).
"""

from __future__ import annotations

import multiprocessing
import warnings
from collections.abc import Sequence
from typing import Any, Protocol

import torch

from graphdata.errors import GraphDataError
from kg.explain.explanation import PathExplanation
from kg.explain.local import CandidatesCapped, capped_summary


class Explainer(Protocol):
    """What :func:`explain_parallel` needs of a fitted :class:`~kg.explain.KGExplainer`.

    A protocol, not an import: :mod:`kg.explain.explainer` imports this module
    (``explain_all(workers=...)``), and the package's modules form no import circle.
    """

    def resolve(self, triple: Sequence[str] | Sequence[int]) -> tuple[int, int, int]:
        """Map a triple of labels or ids to ids."""
        ...

    def explain(
        self, triple: Sequence[str] | Sequence[int], *, mode: str | None = None
    ) -> PathExplanation:
        """Explain one triple."""
        ...


__all__ = ["START_METHODS", "Explainer", "explain_parallel"]

#: Process start methods :func:`explain_parallel` accepts.
START_METHODS = ("fork", "spawn", "forkserver")

#: The explainer a worker uses: set in the parent before a fork (inherited), or by
#: :func:`_init_worker` after a spawn. One per process; never changed while a pool runs.
_EXPLAINER: Any = None
#: The mode a worker explains in (``None``: the explainer config's).
_MODE: str | None = None

# A worker's result: the explanation and its cap warnings as plain fields (a CandidatesCapped
# does not pickle: its keyword-only fields are not in its args).
_Result = tuple[PathExplanation, list[dict[str, Any]]]


def explain_parallel(
    explainer: Explainer,
    triples: Sequence[Sequence[str] | Sequence[int]],
    *,
    workers: int = 2,
    mode: str | None = None,
    threads: int = 1,
    chunk_size: int = 1,
    start_method: str = "fork",
) -> list[PathExplanation]:
    """Explain ``triples`` with ``workers`` processes sharing one fitted explainer, in order.

    Args:
        explainer: A fitted :class:`~kg.explain.KGExplainer` (not re-fitted, not modified).
        triples: ``(head, relation, tail)`` labels or ids, one per target.
        workers: Worker processes, ``>= 1``. Default 2.
        mode: As for :meth:`KGExplainer.explain <kg.explain.KGExplainer.explain>`; default
            ``None``, the config's.
        threads: Intra-op threads per worker (``torch.set_num_threads``). Default 1.
        chunk_size: Targets handed to a worker at a time. Default 1 (explanation times vary
            by orders of magnitude between targets, so small blocks balance the load).
        start_method: One of :data:`START_METHODS`. Default ``"fork"`` (inherits the
            explainer, Linux and macOS only).

    Returns:
        One :class:`~kg.explain.explanation.PathExplanation` per triple, in the same order.

    Raises:
        GraphDataError: On a bad argument, an unfitted explainer, or a bad triple (checked in
            the parent before any worker starts).

    Examples:
        >>> from graphdata.triples import KGDataset
        >>> from kg.distmult import DistMult
        >>> from kg.explain import ExplainerConfig, KGExplainer, RetrainConfig
        >>> rows = [("ann", "owns", "dog"), ("dog", "chases", "cat"), ("ann", "likes", "cat")]
        >>> dataset = KGDataset.from_labeled(rows, rows[:1], rows[:1])
        >>> config = ExplainerConfig(mode="retrain", max_length=2, hops=1,
        ...                          retrain=RetrainConfig(steps=2))
        >>> explainer = KGExplainer(DistMult(3, 3, dim=4), config).fit(dataset)
        >>> [e.target for e in explain_parallel(explainer, [rows[2], rows[2]], workers=2)]
        [('ann', 'likes', 'cat'), ('ann', 'likes', 'cat')]
    """
    global _EXPLAINER, _MODE
    for name, value in (("workers", workers), ("threads", threads), ("chunk_size", chunk_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GraphDataError(f"{name}: expected a positive int, got {value!r}")
    if start_method not in START_METHODS:
        raise GraphDataError(f"start_method: expected one of {START_METHODS}, got {start_method!r}")
    if start_method not in multiprocessing.get_all_start_methods():
        raise GraphDataError(
            f"start_method: {start_method!r} is not available on this platform (available: "
            f"{multiprocessing.get_all_start_methods()}); pass start_method='spawn'"
        )
    ids = [explainer.resolve(triple) for triple in triples]  # fails early, in the parent
    if not ids:
        return []
    if _EXPLAINER is not None:
        raise GraphDataError(
            "explain_parallel: called from inside a worker or while another call runs; run one "
            "explain_parallel at a time from the main process"
        )
    import torch.multiprocessing as tmp

    context = tmp.get_context(start_method)
    initargs: tuple[Any, ...] = (None, mode, threads)
    if start_method == "fork":
        _EXPLAINER, _MODE = explainer, mode  # inherited by the forked workers
    else:
        initargs = (explainer, mode, threads)
    try:
        with context.Pool(min(workers, len(ids)), _init_worker, initargs) as pool:
            results: list[_Result] = list(pool.imap(_explain_one, ids, chunksize=chunk_size))
    finally:
        _EXPLAINER, _MODE = None, None
    with capped_summary(num_targets=len(ids)):
        for _, capped in results:
            for fields in capped:
                message = fields.pop("message")
                warnings.warn(CandidatesCapped(message, **fields), stacklevel=2)
    return [explanation for explanation, _ in results]


def _init_worker(explainer: Any, mode: str | None, threads: int) -> None:
    """Set the worker's explainer (unless inherited), mode and thread count."""
    global _EXPLAINER, _MODE
    if explainer is not None:
        _EXPLAINER, _MODE = explainer, mode
    torch.set_num_threads(threads)


def _explain_one(ids: tuple[int, int, int]) -> _Result:
    """Explain one target in a worker; return the result and its cap warnings' fields."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CandidatesCapped)
        explanation = _EXPLAINER.explain(ids, mode=_MODE)
    capped = [
        {
            "message": str(w.message),
            "target": w.message.target,
            "found": w.message.found,
            "kept": w.message.kept,
            "overflow": w.message.overflow,
            "max_candidates": w.message.max_candidates,
            "max_length": w.message.max_length,
            "method": w.message.method,
        }
        for w in caught
        if isinstance(w.message, CandidatesCapped)
    ]
    for w in caught:  # anything else is passed on in the worker (its stderr)
        if not isinstance(w.message, CandidatesCapped):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return explanation, capped
