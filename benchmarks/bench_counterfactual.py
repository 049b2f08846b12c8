"""Counterfactual knock-outs at a horizon (gradient ascent) vs at equilibrium (clamped mean field).

Issue 19: the per-ring effect of the gradient protocol grows with its arbitrary horizon (ring 3:
5e-5 at the default, 3e-3 at 10x longer, with the true matrices). Here, on simulated tissues
(``spatial.simulate.simulate_tissue``: hex grid, k-NN 6, distinct signed truths, Langevin
samples) for each gene count and seed:

1. fit Celcomen with defaults (signed input), and take the true matrices;
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
   true-matrix effect against it (rings 1-2, unclamped coordinates).

Run: ``OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_counterfactual --genes 10,20
--seeds 3 [--langevin] [--out results.json]``.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import platform
import time
import warnings

import numpy as np
import torch

from graphdata.atomic import write_text_atomic
from graphdata.device import make_generator
from spatial._inputs import unit_rows
from spatial._messages import edge_weights, neighbour_operator
from spatial.celcomen import Celcomen
from spatial.counterfactual import ring_index
from spatial.simulate import simulate_tissue

GRADIENT_STEPS = (50, 100, 200, 500)
MEAN_FIELD = (("tol 1e-6", 1e-6, 0.5), ("tol 1e-8", 1e-8, 0.5), ("tol 1e-10", 1e-10, 0.5),
              ("tol 1e-8 damping .25", 1e-8, 0.25))  # fmt: skip


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


def run(args) -> dict:
    rows = []
    for g in args.genes:
        for seed in range(args.seeds):
            tissue = simulate_tissue(
                args.cells, g, seed=seed, steps=args.sim_steps, strength=args.strength * g / 2
            )
            cells = knockout_cells(tissue)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                fitted = Celcomen(progress=False, seed=seed).fit(tissue.x, tissue.edge_index)
            truth = Celcomen.from_matrices(tissue.W_intra, tissue.W_inter)
            ours, true = protocols(fitted, tissue, cells), protocols(truth, tissue, cells)
            row = {"genes": g, "seed": seed, "protocols": {}}
            for name in true:
                cf_t, s_t = true[name]
                cf_f, s_f = ours[name]
                row["protocols"][name] = {
                    "ring_effect_true": ring_effect(cf_t.delta, cf_t.ring, cf_t.clamped),
                    "ring_effect_fitted": ring_effect(cf_f.delta, cf_f.ring, cf_f.clamped),
                    "pearson_fitted_vs_true": ring_pearson(
                        cf_f.delta, cf_t.delta, cf_t.ring, cf_t.clamped
                    ),
                    "protocol_true": cf_t.protocol,
                    "seconds_true": s_t,
                    "seconds_fitted": s_f,
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
                    keep = (ring <= 2).unsqueeze(1) & (ring >= 1).unsqueeze(1) & ~clamped
                    a, b = cf.delta[keep].double().numpy(), delta[keep].numpy()
                    row["protocols"][name]["pearson_vs_langevin_rings_1_2"] = float(
                        np.corrcoef(a, b)[0, 1]
                    )
            rows.append(row)
            print(f"G={g} seed={seed}")
            for name, p in row["protocols"].items():
                extra = p.get("pearson_vs_langevin_rings_1_2")
                proto = p["protocol_true"]
                its = f" it {proto['iterations']}+{proto['sham_iterations']}" if "iterations" in (
                    proto) else ""  # fmt: skip
                print(
                    f"  {name:38s} true |eff| r1-3 "
                    + " ".join(f"{v:.2e}" for v in p["ring_effect_true"])
                    + "  fitted-vs-true r "
                    + " ".join(f"{v:.2f}" for v in p["pearson_fitted_vs_true"])
                    + (f"  vs langevin {extra:.2f}" if extra is not None else "")
                    + its
                )
            if args.langevin:
                lv = row["langevin"]
                print(
                    "  langevin (true)                        |eff| r1-3 "
                    + " ".join(f"{v:.2e}" for v in lv["ring_effect"])
                    + "  s.e. "
                    + " ".join(f"{v:.1e}" for v in lv["ring_stderr"])
                )
    return {
        "rows": rows,
        "config": vars(args),
        "hardware": {"machine": platform.machine(), "python": platform.python_version(),
                     "torch": torch.__version__, "threads": torch.get_num_threads()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    args.genes = [int(g) for g in args.genes.split(",")]
    torch.set_num_threads(args.threads)
    results = run(args)
    if args.out:
        write_text_atomic(args.out, json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main()
