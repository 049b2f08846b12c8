"""Counterfactual knock-outs at a horizon (gradient ascent) vs at equilibrium (clamped mean field).

Issue 19: the per-ring effect of the gradient protocol grows with its arbitrary horizon (ring 3:
5e-5 at the default, 3e-3 at 10x longer, with the true matrices). Here, on simulated tissues
for each gene count and seed. Two worlds (``--world``):

- ``dev`` (default): ``spatial.simulate.simulate_tissue`` (hex grid, k-NN 6, distinct signed
  truths, Langevin samples), the library's own simulator, on which the protocol was developed;
- ``metropolis``: :func:`benchmarks.tissue_metropolis.simulate`, written independently of the
  library (random positions, Metropolis on the sphere from the Celcomen energy, truths drawn
  differently, negative-binomial counts with a log link). Held out for the counterfactual
  protocol, which was designed on ``dev`` tissues; not for fitting counts: the ``log_counts``
  transform was tuned on this world (``benchmarks/bench_celcomen_counts.py``). The graph is the
  k-NN graph ``Celcomen.fit`` builds itself (``graphdata.spatial.knn_graph``, k =
  ``CelcomenConfig.n_neighbors``), checked equal to the one the truth was sampled on.

1. fit Celcomen with defaults on the signed coordinates (both worlds) and, in ``metropolis``, on
   the raw counts too (route ``counts``: the default transform, what a user with a slide
   does); take the true matrices (Celcomen convention, GCN weights, in both simulators);
2. knock gene 0 out in the centre cell and its neighbours (ring 0);
3. ``gradient``: 50, 100, 200, 500 steps of the default step (4 / (50 L), L from the matrices
   used), i.e. horizons 4, 8, 16, 40 model time units; ``mean_field``: tolerance 1e-6, 1e-8,
   1e-10 (damping 0.5) and 1e-8 with damping 0.25;
4. report per ring (1, 2, 3+) the mean over genes of |mean effect| (unclamped genes), and the
   Pearson over (cell, gene) pairs of the ring (unclamped coordinates) between the effect with
   fitted and with true matrices;
5. with ``--langevin``: the model's own equilibrium of the true matrices, sampled: clamped
   Langevin on the sphere (free coordinates on their sphere of radius sqrt(1 - ||c||^2)),
   perturbed and sham chains driven by the same noise, time-averaged after burn-in; its
   per-ring mean effect with a batch-means standard error, and the Pearson of each protocol's
   true-matrix effect, and of each route's fitted effect, against it (rings 1-2, unclamped
   coordinates);
6. ``metropolis`` only: knocking gene 0 out sets a count to 0, the lowest level there is, but a
   signed coordinate to 0, the middle of its range, so the counts route is also compared with
   a true knock-*down* (:func:`knockdown_truth`): gene 0 set to its lowest signed value in the
   tissue (the row then projected to the sphere, as every clamp is), mean field at the default
   tolerance.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_counterfactual --genes 10,20
--seeds 3 [--world metropolis] [--langevin] [--out results.json]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import platform
import time
import warnings
from dataclasses import replace

import numpy as np
import torch

from benchmarks import tissue_metropolis
from graphdata.atomic import write_text_atomic
from graphdata.device import make_generator
from graphdata.spatial import knn_graph
from spatial._inputs import unit_rows
from spatial._messages import edge_weights, neighbour_operator
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import ring_index
from spatial.simulate import SimulatedTissue, simulate_tissue

GRADIENT_STEPS = (50, 100, 200, 500)
MEAN_FIELD = (("tol 1e-6", 1e-6, 0.5), ("tol 1e-8", 1e-8, 0.5), ("tol 1e-10", 1e-10, 0.5),
              ("tol 1e-8 damping .25", 1e-8, 0.25))  # fmt: skip


def dev_world(args, genes: int, seed: int) -> tuple[SimulatedTissue, dict, dict]:
    """A ``spatial.simulate`` tissue, its routes and no diagnostics.

    Routes: ``signed``, and with ``--dev-counts`` also ``counts``, the tissue's
    ``layers['counts']`` ~ Poisson(100 (1 + x)) (:meth:`SimulatedTissue.to_anndata`, identity
    link, one depth), fitted with the default transform.
    """
    tissue = simulate_tissue(
        args.cells, genes, seed=seed, steps=args.sim_steps, strength=args.strength * genes / 2
    )
    routes = {"signed": tissue.x}
    if args.dev_counts:
        counts = tissue.to_anndata(depth=100.0, seed=seed).layers["counts"]
        routes["counts"] = torch.from_numpy(np.asarray(counts)).float()
    return tissue, routes, {}


def metropolis_world(args, genes: int, seed: int) -> tuple[SimulatedTissue, dict, dict]:
    """A ``tissue_metropolis`` tissue, its routes (signed, counts) and sampler diagnostics.

    The graph is rebuilt as ``Celcomen.fit`` builds it from positions and must equal the one
    the truth was sampled on; the GCN weights of both codes must agree too.
    """
    sim = tissue_metropolis.simulate(args.cells, genes, seed=seed)
    coords = torch.from_numpy(sim.coords)
    edge_index, _ = knn_graph(coords, CelcomenConfig().n_neighbors)
    weight = edge_weights(edge_index, args.cells, dtype=torch.float64)
    if not torch.equal(edge_index, torch.from_numpy(sim.edge_index)) or not np.allclose(
        weight.numpy(), sim.edge_weight
    ):
        raise RuntimeError("metropolis: the library's k-NN graph differs from the simulator's")
    tissue = SimulatedTissue(
        coords=coords.float(),
        edge_index=edge_index,
        x=torch.from_numpy(sim.x).float(),
        W_intra=torch.from_numpy(sim.W_intra).float(),
        W_inter=torch.from_numpy(sim.W_inter).float(),
    )
    report = sim.report.as_dict()
    info = {
        "ordering_criterion_drawn": sim.params["ordering_criterion_drawn"],
        "sampler": {k: report[k] for k in ("acceptance", "x2_max_z", "x2_z_null_median")},
    }
    return tissue, {"signed": tissue.x, "counts": torch.from_numpy(sim.counts).float()}, info


#: World name -> tissue builder: (args, genes, seed) -> (tissue, {route: expression}, info).
WORLDS = {"dev": dev_world, "metropolis": metropolis_world}


def knockout_cells(tissue) -> torch.Tensor:
    n = tissue.x.shape[0]
    centre = torch.zeros(n, dtype=torch.bool)
    centre[int(torch.argmin((tissue.coords - tissue.coords.mean(0)).norm(dim=1)))] = True
    return ring_index(tissue.edge_index, centre, n) <= 1


def protocols(estimator: Celcomen, tissue, cells: torch.Tensor) -> dict:
    """Every protocol's counterfactual with one estimator: name -> (Counterfactual, seconds)."""
    out = {}
    step = None
    for steps in GRADIENT_STEPS:
        start = time.perf_counter()
        kwargs = {"horizon": 4.0} if step is None else {"step_size": step}
        cf = estimator.intervene(
            tissue.x, {0: 0.0}, cells, edge_index=tissue.edge_index, method="gradient",
            steps=steps, progress=False, **kwargs,
        )  # fmt: skip
        step = cf.step_size  # the 50-step default step, kept for the longer runs
        out[f"gradient {steps} steps (horizon {4.0 * steps / 50:g})"] = (
            cf,
            time.perf_counter() - start,
        )
    for name, tol, damping in MEAN_FIELD:
        start = time.perf_counter()
        cf = estimator.intervene(
            tissue.x, {0: 0.0}, cells, edge_index=tissue.edge_index, tolerance=tol,
            damping=damping, progress=False,
        )  # fmt: skip
        out[f"mean_field {name}"] = (cf, time.perf_counter() - start)
    return out


def ring_effect(delta: torch.Tensor, ring: torch.Tensor, clamped: torch.Tensor) -> list[float]:
    """Mean over unclamped genes of |mean effect| in rings 1, 2, 3+."""
    free_genes = ~clamped.any(0)
    return [float(delta[ring == r][:, free_genes].mean(0).abs().mean()) for r in (1, 2, 3)]


def ring_pearson(a: torch.Tensor, b: torch.Tensor, ring: torch.Tensor, clamped) -> list[float]:
    out = []
    for r in (1, 2, 3):
        keep = (ring == r).unsqueeze(1) & ~clamped
        x, y = a[keep].double().numpy(), b[keep].double().numpy()
        ok = x.std() > 0 and y.std() > 0
        out.append(float(np.corrcoef(x, y)[0, 1]) if ok else float("nan"))
    return out


def knockdown_truth(tissue, cells: torch.Tensor) -> tuple[torch.Tensor, float]:
    """True-matrix mean-field effect of setting gene 0 to its lowest signed value in the tissue.

    Clamped values must be >= 0, so gene 0 is mirrored first: x_0 -> -x_0 with W -> D W D, D =
    diag(-1, 1, ..., 1), leaves the energy unchanged; the value set is then max(-x_0), and the
    effect is mirrored back. Returns (delta [N, G], the level min x_0).
    """
    flip = torch.ones(tissue.x.shape[1], dtype=tissue.x.dtype)
    flip[0] = -1.0
    mirror = torch.outer(flip, flip)
    truth = Celcomen.from_matrices(tissue.W_intra * mirror, tissue.W_inter * mirror)
    x = tissue.x * flip
    level = float(x[:, 0].max())
    cf = truth.intervene(x, {0: level}, cells, edge_index=tissue.edge_index, progress=False)
    return cf.delta * flip, -level


def clamped_langevin(model, tissue, cells, *, steps, burn_in, step_size, seed, batches=10):
    """Time-averaged clamped Langevin, perturbed and sham with common noise (module docstring).

    Returns (mean delta [N, G], batch-means standard error of the per-ring mean [3, G]).
    """
    x = tissue.x.double()
    n, g = x.shape
    clamped = torch.zeros(n, g, dtype=torch.bool)
    clamped[cells, 0] = True
    edited = x.clone()
    edited[cells, 0] = 0.0
    starts = torch.stack([unit_rows(edited), x])  # [2, N, G]
    fixed = torch.where(clamped, starts, torch.zeros_like(starts))
    free = (~clamped).double()
    radius = (1 - fixed.square().sum(-1, keepdim=True)).clamp(min=0).sqrt()  # [2, N, 1]
    y = starts * free
    weight = edge_weights(tissue.edge_index, n, dtype=torch.float64)
    op = neighbour_operator(tissue.edge_index, weight, n)
    strength = (op @ torch.ones(n, 1, dtype=torch.float64)).squeeze(-1)
    energy = copy.deepcopy(model).double()
    gen = make_generator(seed)
    ring = ring_index(tissue.edge_index, cells, n)
    kept = steps - burn_in
    per_batch = kept // batches
    sums = torch.zeros(batches, n, g, dtype=torch.float64)
    with torch.no_grad():
        for t in range(steps):
            noise = torch.randn(n, g, generator=gen, dtype=torch.float64) * free[0]  # shared
            new = []
            for b in range(2):
                state = fixed[b] + y[b]
                field = energy.field_from(state, op @ state, strength) * free[b]
                move = step_size * field + math.sqrt(2 * step_size) * noise * free[b]
                r2 = radius[b].square().clamp(min=1e-300)
                move = move - ((y[b] * move).sum(-1, keepdim=True) / r2) * y[b]  # tangent
                step = y[b] + move
                new.append(step * (radius[b] / step.norm(dim=-1, keepdim=True).clamp(min=1e-300)))
            y = torch.stack(new)
            if t >= burn_in and (t - burn_in) // per_batch < batches:
                sums[(t - burn_in) // per_batch] += (fixed[0] + y[0]) - (fixed[1] + y[1])
    batch_delta = sums / per_batch  # [batches, N, G]
    delta = batch_delta.mean(0)
    ring_means = torch.stack(
        [torch.stack([bd[ring == r].mean(0) for r in (1, 2, 3)]) for bd in batch_delta]
    )  # [batches, 3, G]
    stderr = ring_means.std(0) / math.sqrt(batches)
    return delta, stderr


def fitted_entry(cf, seconds: float, true_cf) -> dict:
    """One route's fitted counterfactual, scored against the true-matrix one."""
    return {
        "ring_effect_fitted": ring_effect(cf.delta, cf.ring, cf.clamped),
        "pearson_fitted_vs_true": ring_pearson(
            cf.delta, true_cf.delta, true_cf.ring, true_cf.clamped
        ),
        "protocol_fitted": cf.protocol,
        "seconds_fitted": seconds,
    }


def langevin_pearson(delta: torch.Tensor, sampled: torch.Tensor, ring, clamped) -> float:
    """Pearson of an effect with the sampled one, rings 1-2, unclamped coordinates."""
    keep = (ring <= 2).unsqueeze(1) & (ring >= 1).unsqueeze(1) & ~clamped
    return float(np.corrcoef(delta[keep].double().numpy(), sampled[keep].double().numpy())[0, 1])


def print_row(row: dict, routes) -> None:
    print(f"G={row['genes']} seed={row['seed']}")
    for route in routes:
        print(f"  fitted on {route}:")
        for name, p in row["protocols"].items():
            fit = p if route == "signed" else p[route]
            extra = p.get("pearson_vs_langevin_rings_1_2")
            proto = p["protocol_true"]
            its = f" it {proto['iterations']}+{proto['sham_iterations']}" if "iterations" in (
                proto) else ""  # fmt: skip
            print(
                f"  {name:38s} true |eff| r1-3 "
                + " ".join(f"{v:.2e}" for v in p["ring_effect_true"])
                + "  fitted-vs-true r "
                + " ".join(f"{v:.2f}" for v in fit["pearson_fitted_vs_true"])
                + (f"  vs langevin {extra:.2f}" if extra is not None else "")
                + (
                    f" (fitted {fit['pearson_fitted_vs_langevin_rings_1_2']:.2f})"
                    if "pearson_fitted_vs_langevin_rings_1_2" in fit
                    else ""
                )
                + its
            )
    if "knockdown" in row:
        kd = row["knockdown"]
        print(
            f"  true knock-down to {kd['level']:.3f}, mean field    |eff| r1-3 "
            + " ".join(f"{v:.2e}" for v in kd["ring_effect_true"])
            + "  counts-fit knock-out vs it r "
            + " ".join(f"{v:.2f}" for v in kd["pearson_counts_vs_true"])
        )
    if "langevin" in row:
        lv = row["langevin"]
        print(
            "  langevin (true)                        |eff| r1-3 "
            + " ".join(f"{v:.2e}" for v in lv["ring_effect"])
            + "  s.e. "
            + " ".join(f"{v:.1e}" for v in lv["ring_stderr"])
        )


def run(args) -> dict:
    rows = []
    for g in args.genes:
        for seed in range(args.seeds):
            tissue, routes, info = WORLDS[args.world](args, g, seed)
            cells = knockout_cells(tissue)
            fits = {}
            for route, x in routes.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    fitted = Celcomen(progress=False, seed=seed).fit(x, tissue.edge_index)
                fits[route] = protocols(fitted, replace(tissue, x=x), cells)
            truth = Celcomen.from_matrices(tissue.W_intra, tissue.W_inter)
            true = protocols(truth, tissue, cells)
            row = {"genes": g, "seed": seed, "protocols": {}, **info}
            for name in true:
                cf_t, s_t = true[name]
                row["protocols"][name] = {
                    "ring_effect_true": ring_effect(cf_t.delta, cf_t.ring, cf_t.clamped),
                    "protocol_true": cf_t.protocol,
                    "seconds_true": s_t,
                }
                for route in routes:  # signed: flat, as before; other routes: nested
                    entry = fitted_entry(*fits[route][name], cf_t)
                    if route == "signed":
                        row["protocols"][name].update(entry)
                    else:
                        row["protocols"][name][route] = entry
            if "counts" in routes:
                delta, level = knockdown_truth(tissue, cells)
                cf_c, _ = fits["counts"]["mean_field tol 1e-8"]
                row["knockdown"] = {
                    "level": level,
                    "ring_effect_true": ring_effect(delta, cf_c.ring, cf_c.clamped),
                    "pearson_counts_vs_true": ring_pearson(
                        cf_c.delta, delta, cf_c.ring, cf_c.clamped
                    ),
                }
            if args.langevin:
                start = time.perf_counter()
                model = truth.model_
                delta, stderr = clamped_langevin(
                    model, tissue, cells, steps=args.langevin_steps, burn_in=args.langevin_burn,
                    step_size=args.langevin_step, seed=seed,
                )  # fmt: skip
                ring = true["mean_field tol 1e-8"][0].ring
                clamped = true["mean_field tol 1e-8"][0].clamped
                row["langevin"] = {
                    "ring_effect": ring_effect(delta.float(), ring, clamped),
                    "ring_stderr": [float(s[~clamped.any(0)].mean()) for s in stderr],
                    "seconds": time.perf_counter() - start,
                    "steps": args.langevin_steps,
                    "burn_in": args.langevin_burn,
                    "step_size": args.langevin_step,
                }
                for name, (cf, _) in true.items():
                    p = row["protocols"][name]
                    p["pearson_vs_langevin_rings_1_2"] = langevin_pearson(
                        cf.delta, delta, ring, clamped
                    )
                    for route in routes:
                        fit = p if route == "signed" else p[route]
                        fit["pearson_fitted_vs_langevin_rings_1_2"] = langevin_pearson(
                            fits[route][name][0].delta, delta, ring, clamped
                        )
            rows.append(row)
            print_row(row, routes)
    return {
        "rows": rows,
        "config": vars(args),
        "hardware": {"machine": platform.machine(), "python": platform.python_version(),
                     "torch": torch.__version__, "threads": torch.get_num_threads()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--world",
        choices=tuple(WORLDS),
        default="dev",
        help="tissue simulator: dev (spatial.simulate, default) or metropolis (held out)",
    )
    parser.add_argument(
        "--dev-counts",
        action="store_true",
        help="dev world: also fit its Poisson counts (the metropolis world always does)",
    )
    parser.add_argument("--genes", default="10,20", help="gene counts (default 10,20)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per gene count (default 3)")
    parser.add_argument("--cells", type=int, default=1000, help="cells (default 1000)")
    parser.add_argument("--sim-steps", type=int, default=4000, help="simulation Langevin steps")
    parser.add_argument(
        "--strength",
        type=float,
        default=1.0,
        help="spectral norm of each true matrix, in units of G/2, the simulator's default (1)",
    )
    parser.add_argument("--langevin", action="store_true", help="also sample the equilibrium")
    parser.add_argument("--langevin-steps", type=int, default=20000)
    parser.add_argument("--langevin-burn", type=int, default=2000)
    parser.add_argument("--langevin-step", type=float, default=0.002)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    if args.world != "dev" and (args.sim_steps != 4000 or args.strength != 1.0):
        parser.error("--sim-steps and --strength set the dev simulator; drop them for metropolis")
    args.genes = [int(g) for g in args.genes.split(",")]
    torch.set_num_threads(args.threads)
    results = run(args)
    if args.out:
        write_text_atomic(args.out, json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main()
