"""``graphlib graphon``: a graphon's homomorphism densities, alone or against sampled graphs.

``graphlib graphon density --graphon "x*y" --pattern triangle`` prints :math:`t(F, W)` with
its error and method (``--json`` for one JSON object). ``--graphon`` takes a named graphon
(``graphlib graphon list``; ``--param k=v`` sets a family's parameters) or an expression of
``x`` and ``y`` (:mod:`graphon.expressions`; the name is tried first); ``--graphon-file W.npy``
takes a symmetric ``[K, K]`` matrix in :math:`[0, 1]`, the step graphon with equal blocks
(``--measures m.npy`` for other block measures, or a ``.npz`` with ``probs`` and
``measures``). ``--pattern`` takes a name or an edge list (``"0-1,1-2,2-0"``, multiplicity
``"0-1:2"``, isolated vertex ``"3"``). ``--signal "1 + x"`` with ``--exponents 1,1`` (one per
vertex) weights the vertices by :math:`f(x_v)^{d_v}`.

``graphlib graphon densities --graphon sbm --pattern triangle --sizes 100,200,400`` samples
``--samples`` graphs per size, prints :math:`t` and :math:`t_{inj}` against :math:`t(F, W)` and
writes the convergence plot; its ``--graphon`` and ``--pattern`` take the same forms. A
multigraph pattern on 0/1 graphs (``--edges bernoulli``) gets the warning of
:func:`graphon.densities.sample_density`: those samples estimate its simple version.
``graphlib graphon list`` prints the named graphons and patterns and the expression grammar.
Bad input ends as one ``graphlib: error: --flag: ...`` line and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.npyio import NpzFile

from graphdata import cli_types
from graphdata.errors import GraphDataError, closest_labels
from graphon.families import GRAPHONS
from graphon.patterns import PATTERNS
from graphon.sampling import EDGES, LATENTS

if TYPE_CHECKING:
    from graphon.densities import DensityEstimate
    from graphon.graphons import Graphon, StepGraphon
    from graphon.patterns import Pattern

__all__ = [
    "add_subparser",
    "load_graphon_file",
    "parse_exponents",
    "parse_params",
    "parse_sizes",
    "resolve_graphon",
]


def parse_sizes(text: str) -> list[int]:
    """Parse ``"100,200,400"`` into sizes ``>= 2``.

    Examples:
        >>> parse_sizes("100, 200,400")
        [100, 200, 400]
    """
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise GraphDataError(f"--sizes: expected comma-separated ints, got {text!r}") from err
    if not sizes or min(sizes) < 2:
        raise GraphDataError(f"--sizes: expected sizes >= 2, got {text!r}")
    return sizes


def parse_params(items: list[str] | None) -> dict[str, int | float]:
    """Parse repeated ``--param k=v`` into keyword parameters (ints stay ints).

    Examples:
        >>> parse_params(["num_blocks=3", "p=0.9"])
        {'num_blocks': 3, 'p': 0.9}
    """
    params: dict[str, int | float] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key.isidentifier():
            raise GraphDataError(f"--param: expected name=value, e.g. p=0.5, got {item!r}")
        if key in params:
            raise GraphDataError(f"--param: {key!r} is given twice; pass each parameter once")
        number = cli_types.integer() if re.fullmatch(r"[+-]?\d+", raw) else cli_types.finite_float()
        try:
            params[key] = number(raw)
        except argparse.ArgumentTypeError as err:
            raise GraphDataError(f"--param: {key}: {err}") from None
    return params


def parse_exponents(text: str, pattern: Pattern) -> list[int]:
    """Parse ``--exponents "1,0,2"``: one int ``>= 0`` per vertex of ``pattern``.

    Examples:
        >>> from graphon.patterns import as_pattern
        >>> parse_exponents("1, 0", as_pattern("edge"))
        [1, 0]
    """
    parts = [part.strip() for part in text.split(",")]
    if not all(re.fullmatch(r"\d+", part) for part in parts):
        raise GraphDataError(
            f"--exponents: expected comma-separated ints >= 0, one per vertex, got {text!r}"
        )
    if len(parts) != pattern.num_vertices:
        raise GraphDataError(
            f"--exponents: expected {pattern.num_vertices} ints, one per vertex 0..."
            f"{pattern.num_vertices - 1} of the pattern {pattern.name!r}, got {len(parts)} "
            f"({text!r})"
        )
    return [int(part) for part in parts]


def _flagged(flag: str, err: GraphDataError, prefix: str) -> GraphDataError:
    """``err`` reworded to name the flag: ``pattern: ...`` becomes ``--pattern: ...``."""
    text = str(err)
    text = text[len(prefix) + 2 :] if text.startswith(f"{prefix}: ") else text
    return GraphDataError(f"{flag}: {text}")


def resolve_graphon(text: str, params: dict[str, int | float] | None = None) -> Graphon:
    """``--graphon``: a name of :data:`~graphon.families.GRAPHONS` (tried first) or an expression.

    Args:
        text: A graphon name, or an expression of ``x`` and ``y`` (:mod:`graphon.expressions`).
        params: ``--param`` values, for named families only.

    Returns:
        The graphon.

    Examples:
        >>> resolve_graphon("sbm", {"num_blocks": 2}).num_blocks
        2
        >>> resolve_graphon("x*y").name
        'x*y'
    """
    from graphon.expressions import parse_graphon
    from graphon.families import make_graphon

    if text in GRAPHONS:
        try:
            return make_graphon(text, **(params or {}))
        except GraphDataError as err:
            raise GraphDataError(f"--param: graphon {text!r}: {err}") from None
    if params:
        raise GraphDataError(
            f"--param: only named graphons take parameters, got {sorted(params)} for the "
            f"expression {text!r}; write the values into the expression"
        )
    try:
        return parse_graphon(text)
    except GraphDataError as err:
        if text.strip().isidentifier() and text.strip() not in ("x", "y"):
            close = closest_labels(text.strip(), GRAPHONS)
            hint = f"closest named graphons: {', '.join(map(repr, close))}; " if close else ""
            raise GraphDataError(
                f"--graphon: {text!r} is neither a named graphon ({hint}see `graphlib graphon "
                f"list`) nor an expression: {err}"
            ) from None
        raise GraphDataError(f"--graphon: {err}") from None


def _load_array(path: str, flag: str) -> np.ndarray | NpzFile:
    """``numpy.load`` without pickles; unreadable content is bad input, not a crash."""
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, EOFError) as err:  # pickled data, object arrays, an empty file
        raise GraphDataError(
            f"{flag}: cannot read {path} as a .npy or .npz array ({err}); save a float array "
            "with numpy.save, or numpy.savez(path, probs=..., measures=...)"
        ) from None


def _real(array: object, flag: str, path: str, ndim: int) -> np.ndarray:
    """``array`` as float64 if it is a real ``ndim``-dimensional array, else raise."""
    if isinstance(array, NpzFile):
        raise GraphDataError(f"{flag}: {path}: expected a .npy array, got a .npz archive")
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
        kind = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
        raise GraphDataError(f"{flag}: {path}: expected a real (float) array, got {kind}")
    if array.ndim != ndim:
        want = "a square [K, K] matrix" if ndim == 2 else "a vector [K] of block measures"
        raise GraphDataError(f"{flag}: {path}: expected {want}, got shape {array.shape}")
    return array.astype(np.float64)


def load_graphon_file(path: str, measures: str | None = None) -> StepGraphon:
    r"""``--graphon-file``: the step graphon :math:`W = B_{kl}` on :math:`I_k \times I_l`.

    Args:
        path: A ``.npy`` with the symmetric ``[K, K]`` matrix :math:`B` in :math:`[0, 1]`, or a
            ``.npz`` with ``probs`` (that matrix) and optionally ``measures`` (``[K]``).
        measures: A ``.npy`` with positive block measures ``[K]`` (normalised to sum 1).
            Default: equal blocks, or the ``.npz``'s ``measures``.

    Returns:
        The step graphon, named after the file; its densities are exact.
    """
    import torch

    from graphon.graphons import StepGraphon

    data = _load_array(path, "--graphon-file")
    raw_sizes: object = None
    if isinstance(data, NpzFile):
        with data:
            keys = set(data.files)
            if "probs" not in keys or keys - {"probs", "measures"}:
                raise GraphDataError(
                    f"--graphon-file: {path}: expected the arrays 'probs' and optionally "
                    f"'measures', got {sorted(keys)}; save with numpy.savez(path, probs=B, "
                    "measures=m)"
                )
            try:
                raw_probs = data["probs"]
                raw_sizes = data["measures"] if "measures" in keys else None
            except ValueError as err:  # object arrays
                raise GraphDataError(f"--graphon-file: {path}: {err}; save float arrays") from None
        if raw_sizes is not None and measures is not None:
            raise GraphDataError(
                f"--measures: {path} already holds measures; pass them once (drop --measures)"
            )
    else:
        raw_probs = data
    probs = _real(raw_probs, "--graphon-file", path, 2)
    k = probs.shape[0]
    if probs.shape[1] != k or k == 0:
        raise GraphDataError(
            f"--graphon-file: {path}: expected a square [K, K] matrix, K >= 1, got shape "
            f"{probs.shape}"
        )
    flag, where = "--graphon-file", path
    if measures is not None:
        raw_sizes, flag, where = _load_array(measures, "--measures"), "--measures", measures
    sizes = None if raw_sizes is None else _real(raw_sizes, flag, where, 1)
    if sizes is not None and (sizes.shape != (k,) or not np.all(np.isfinite(sizes) & (sizes > 0))):
        raise GraphDataError(
            f"{flag}: {where}: expected {k} finite positive block measures, got "
            f"{sizes.tolist()[:8]}{' ...' if sizes.size > 8 else ''}; drop empty blocks"
        )
    try:
        return StepGraphon(
            torch.as_tensor(probs),
            None if sizes is None else torch.as_tensor(sizes),
            name=Path(path).name,
        )
    except GraphDataError as err:
        if str(err).startswith("sizes: "):  # the measures, from --measures or the .npz
            raise _flagged(f"{flag}: {where}", err, "sizes") from None
        raise _flagged(f"--graphon-file: {path}", err, "probs") from None


def _computed(
    fn: Callable[..., DensityEstimate], *args: object, **kwargs: object
) -> DensityEstimate:
    """``fn(*args, **kwargs)`` with its warnings as ``graphlib: warning: ...`` lines on stderr.

    The density code warns (``UserWarning``) when its quadrature did not converge; a command
    line shows that as one plain line, not Python's warning format with a source line. Other
    warning categories are passed on as they were.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = fn(*args, **kwargs)
    sys.stdout.flush()
    for w in caught:
        if w.category is UserWarning:
            print(f"graphlib: warning: {w.message}", file=sys.stderr, flush=True)
        else:  # deprecations and the like, passed on as they were
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return est


def _pattern(text: str) -> Pattern:
    from graphon.patterns import as_pattern

    try:
        return as_pattern(text)
    except GraphDataError as err:
        raise _flagged("--pattern", err, "pattern") from None


def _density(args: argparse.Namespace) -> int:
    from graphon.densities import graphon_density
    from graphon.expressions import parse_signal
    from graphon.graphons import GraphonSignal, StepGraphon

    params = parse_params(args.param)
    graphon: Graphon
    if args.graphon_file is not None:
        if params:
            raise GraphDataError("--param: only named graphons take parameters; drop --param")
        graphon = load_graphon_file(args.graphon_file, args.measures)
    elif args.measures is not None:
        raise GraphDataError("--measures: only with --graphon-file; drop --measures")
    else:
        graphon = resolve_graphon(args.graphon, params)
    pattern = _pattern(args.pattern)
    if (args.signal is None) != (args.exponents is None):
        raise GraphDataError(
            "--exponents: required with --signal and refused without it: pass both (e.g. "
            f"--signal '1 + x' --exponents {','.join(['1'] * pattern.num_vertices)}) or neither"
        )
    source: Graphon | GraphonSignal = graphon
    exponents = None
    if args.signal is not None:
        exponents = parse_exponents(args.exponents, pattern)
        try:
            signal = parse_signal(args.signal)
        except GraphDataError as err:
            raise GraphDataError(f"--signal: {err}") from None
        source = GraphonSignal(graphon, signal, name=f"{graphon.name}, f = {args.signal}")
    options = {}
    if args.kinks is not None:
        options["kinks"] = args.kinks
    if args.kinks is not None and isinstance(graphon, StepGraphon) and args.signal is None:
        # The density of a step graphon is an exact finite sum: no quadrature to steer.
        print(
            f"graphlib: warning: --kinks {args.kinks} is unused: the density of the step "
            f"graphon {graphon.name!r} is computed exactly, without quadrature",
            file=sys.stderr,
            flush=True,
        )
    if not args.json:  # the resolved configuration first, as every command prints it
        print(
            f"graphon density: graphon={graphon.name} pattern={args.pattern} "
            f"signal={args.signal} exponents={exponents} order={args.order} "
            f"kinks={args.kinks or 'as declared'}"
        )
    est = _computed(
        graphon_density, pattern, source, exponents=exponents, order=args.order, **options
    )
    bound = bool(getattr(est, "bound", False))  # the field is new in DensityEstimate
    if args.json:
        record = {
            "value": est.value,
            "error": est.error,
            "bound": bound,
            "method": est.method,
            "pattern": args.pattern,
            "graphon": graphon.name,
            "signal": args.signal,
            "exponents": exponents,
            "order": args.order,
            "kinks": args.kinks,
        }
        print(json.dumps(record, allow_nan=False))  # value and error are finite
        return 0
    print(f"t(F, W) = {est.value!r}")
    print(f"error {'bound' if bound else 'estimate'}: {est.error!r} ({est.method})")
    return 0


def _check_work(pattern: Pattern, text: str, sizes: list[int], samples: int) -> None:
    """Refuse, before any sampling, sizes without injective maps and densities over budget."""
    from graphon.homomorphism import MAX_COST, estimate_cost

    k = pattern.num_vertices
    small = [n for n in sizes if n < k]
    if small:
        raise GraphDataError(
            f"--sizes: t_inj of the {k}-vertex pattern {text!r} needs graphs of at least {k} "
            f"nodes (no injective map fits in fewer), got sizes {small}; pass sizes >= {k}"
        )
    for injective, what in ((False, "t(F, G_n)"), (True, "t_inj(F, G_n)")):
        try:
            cost = estimate_cost(pattern, max(sizes), injective=injective).cost * samples
        except GraphDataError as err:
            raise _flagged("--pattern", err, "pattern") from None
        if cost > MAX_COST:
            raise GraphDataError(
                f"--sizes: {what} of the pattern {text!r} on {samples} graphs of {max(sizes)} "
                f"nodes needs about {cost:.3g} multiply-adds, over the budget {MAX_COST:.3g}; "
                "lower --sizes or --samples, or pick a smaller pattern"
            )


def _densities(args: argparse.Namespace) -> int:
    from graphdata.device import resolve_device
    from graphdata.run_folder import check_output_file

    sizes = parse_sizes(args.sizes)
    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    graphon = resolve_graphon(args.graphon, parse_params(args.param))
    pattern = _pattern(args.pattern)
    _check_work(pattern, args.pattern, sizes, args.samples)
    # Imported after every check: matplotlib alone takes a second or more to load.
    import torch

    from graphlib_ml.outputs import save_figure
    from graphon.densities import graphon_density
    from graphon.homomorphism import hom_density, inj_density
    from graphon.plot import plot_density_convergence
    from graphon.sampling import sample_graphs

    print(
        f"graphon densities: graphon={graphon.name} pattern={args.pattern} sizes={sizes} "
        f"samples={args.samples} latents={args.latents} edges={args.edges} seed={args.seed} "
        f"device={device} out={args.out}"
    )
    if not pattern.is_simple and args.edges == "bernoulli":
        # The warning sample_density gives, worded for the flag.
        sys.stdout.flush()
        print(
            f"graphlib: warning: pattern {pattern.name!r} has multi-edges; on 0/1 graphs "
            "A∘A = A, so the sampled densities estimate the density of its simple version, "
            "not t(F, W) (use --edges weighted for t(F, W))",
            file=sys.stderr,
            flush=True,
        )
    limit = _computed(graphon_density, pattern, graphon, device=device)
    print(f"t(F, W) = {limit.value:.6f} ({limit.method}, error {limit.error:.1e})")
    gen = torch.Generator(device=device).manual_seed(args.seed)
    rows, homs, injs = [], [], []
    header = ("n", "mean t", "sd t", "mean t_inj", "sd t_inj", "|t_inj-t(W)|")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (6, 10, 9, 11, 9, 13))))
    for n in sizes:
        sample = sample_graphs(
            graphon,
            n,
            batch_size=args.samples,
            latents=args.latents,
            edges=args.edges,
            generator=gen,
            dtype=torch.float64,
        )
        t = hom_density(pattern, sample.adj).cpu()
        ti = inj_density(pattern, sample.adj).cpu()
        homs.append(t.tolist())
        injs.append(ti.tolist())
        sd_t = float(t.std()) if len(t) > 1 else 0.0
        sd_i = float(ti.std()) if len(ti) > 1 else 0.0
        gap = abs(float(ti.mean()) - limit.value)
        rows.append(n)
        print(
            f"{n:>6} {float(t.mean()):>10.6f} {sd_t:>9.2e} {float(ti.mean()):>11.6f} "
            f"{sd_i:>9.2e} {gap:>13.2e}"
        )
    ax = plot_density_convergence(rows, homs, limit.value, label="t(F, G_n)")
    plot_density_convergence(rows, injs, None, ax, label="t_inj(F, G_n)")
    ax.set_title(f"{args.pattern} densities, {graphon.name}")
    save_figure(ax.figure, Path(args.out))
    print(f"wrote {args.out}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from graphon.expressions import GRAMMAR

    print("graphons: " + ", ".join(GRAPHONS))
    print("patterns: " + ", ".join(PATTERNS))
    print("edge lists: 0-1,1-2,2-0 (u-v an edge, u-v:m multiplicity m, u an isolated vertex)")
    print("expressions: " + GRAMMAR)
    return 0


def _graphon_flags(
    parser: argparse.ArgumentParser, default: str | None, group: argparse._ActionsContainer
) -> None:
    """``--graphon`` (in ``group``) and ``--param``, shared by ``density`` and ``densities``."""
    group.add_argument(
        "--graphon",
        default=default,
        help="a named graphon (see `graphlib graphon list`) or an expression of x and y, "
        'e.g. "exp(-abs(x - y))"' + (" (default: %(default)s)" if default else ""),
    )
    parser.add_argument(
        "--param",
        action="append",
        metavar="K=V",
        help="a parameter of a named graphon family, e.g. p=0.3 (repeatable)",
    )


def _pattern_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pattern",
        default="triangle",
        help='a named pattern or an edge list, e.g. "0-1,1-2,2-0", "0-1:2" (multiplicity 2), '
        '"0-1,2" (vertex 2 isolated) (default: %(default)s)',
    )


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib graphon``: ``density``, ``densities``, ``list`` and ``transfer``.

    Args:
        subparsers: The top-level parser's subparsers action.
    """
    parser = subparsers.add_parser("graphon", help="graphons: sampling and densities")
    sub = parser.add_subparsers(dest="graphon_command", required=True)
    dens = sub.add_parser(
        "densities", help="densities of sampled graphs against the graphon's value"
    )
    _graphon_flags(dens, "sbm", dens)
    _pattern_flag(dens)
    dens.add_argument(
        "--sizes", default="100,200,400", help="comma-separated graph sizes (default: %(default)s)"
    )
    dens.add_argument(
        "--samples",
        type=cli_types.positive_int,
        default=10,
        help="graphs per size (default: %(default)s)",
    )
    dens.add_argument(
        "--latents",
        default="uniform",
        choices=list(LATENTS),
        help="latent positions (default: %(default)s)",
    )
    dens.add_argument(
        "--edges",
        default="bernoulli",
        choices=list(EDGES),
        help="0/1 or weighted edges (default: %(default)s)",
    )
    dens.add_argument(
        "--seed",
        type=cli_types.seed,
        default=0,
        help="random seed (default: %(default)s)",
    )
    dens.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s)")
    dens.add_argument(
        "--out", default="graphon_densities.png", help="PNG to write (default: %(default)s)"
    )
    dens.set_defaults(func=_densities)
    one = sub.add_parser("density", help="t(F, W) of one graphon, with its error and method")
    source = one.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--graphon-file",
        metavar="W.npy",
        help="a symmetric [K, K] matrix in [0, 1] (.npy, equal blocks) or a .npz with probs "
        "and measures: a step graphon",
    )
    _graphon_flags(one, None, source)  # after --graphon-file: usage shows the pair
    one.add_argument("--measures", metavar="M.npy", help="block measures [K] for --graphon-file")
    _pattern_flag(one)
    one.add_argument("--signal", help='a signal f(x), e.g. "1 + x" (needs --exponents)')
    one.add_argument(
        "--exponents", help="vertex exponents d for --signal, one per vertex, e.g. 1,1,1"
    )
    one.add_argument(
        "--kinks",
        choices=("auto", "none", "diagonal"),
        help="kinks of W on the diagonal: detect, none, or declared (default: the graphon's "
        "own declaration)",
    )
    one.add_argument(
        "--order",
        type=cli_types.integer(2),
        default=128,
        help="quadrature nodes per axis (default: %(default)s)",
    )
    one.add_argument("--json", action="store_true", help="print one JSON object")
    one.set_defaults(func=_density)
    lst = sub.add_parser("list", help="print the named graphons, patterns and expression grammar")
    lst.set_defaults(func=_list)
    from graphlib_ml.cli.iwn import add_transfer_subparser

    add_transfer_subparser(sub)
