"""``graphlib graphon``: density tables of sampled graphs against the graphon's value.

``graphlib graphon densities --graphon sbm --pattern triangle --sizes 100,200,400`` samples
``--samples`` graphs per size, prints :math:`t` and :math:`t_{inj}` against :math:`t(F, W)` and
writes the convergence plot; ``graphlib graphon list`` prints the named graphons and patterns.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphdata import cli_types
from graphdata.errors import GraphDataError
from graphon.families import GRAPHONS
from graphon.patterns import PATTERNS
from graphon.sampling import EDGES, LATENTS

__all__ = ["add_subparser", "parse_sizes"]


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


def _densities(args: argparse.Namespace) -> int:
    import torch

    from graphdata.device import resolve_device
    from graphdata.run_folder import check_output_file
    from graphlib_ml.outputs import save_figure
    from graphon.densities import graphon_density
    from graphon.families import make_graphon
    from graphon.homomorphism import hom_density, inj_density
    from graphon.patterns import as_pattern
    from graphon.plot import plot_density_convergence
    from graphon.sampling import sample_graphs

    sizes = parse_sizes(args.sizes)
    check_output_file(args.out, argument="--out")
    device = resolve_device(args.device)
    graphon = make_graphon(args.graphon)
    pattern = as_pattern(args.pattern)
    print(
        f"graphon densities: graphon={graphon.name} pattern={args.pattern} sizes={sizes} "
        f"samples={args.samples} latents={args.latents} edges={args.edges} seed={args.seed} "
        f"device={device} out={args.out}"
    )
    limit = graphon_density(pattern, graphon, device=device)
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
    print("graphons: " + ", ".join(GRAPHONS))
    print("patterns: " + ", ".join(PATTERNS))
    return 0


def add_subparser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``graphlib graphon`` with its ``densities``, ``list`` and ``transfer`` subcommands.

    Args:
        subparsers: The top-level parser's subparsers action.
    """
    parser = subparsers.add_parser("graphon", help="graphons: sampling and densities")
    sub = parser.add_subparsers(dest="graphon_command", required=True)
    dens = sub.add_parser(
        "densities", help="densities of sampled graphs against the graphon's value"
    )
    dens.add_argument(
        "--graphon",
        default="sbm",
        choices=list(GRAPHONS),
        help="named graphon (default: %(default)s)",
    )
    dens.add_argument(
        "--pattern",
        default="triangle",
        choices=list(PATTERNS),
        help="named pattern (default: %(default)s)",
    )
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
    lst = sub.add_parser("list", help="print the named graphons and patterns")
    lst.set_defaults(func=_list)
    from graphlib_ml.cli.iwn import add_transfer_subparser

    add_transfer_subparser(sub)
