"""Celcomen: identifiability on simulated tissues, counterfactual accuracy, timing, scaling.

1. Identifiability (issue 7): tissues of ``--cells`` cells on a hex grid (k-NN, k = 6) with
   distinct signed truths, sampled from the model (Langevin on the sphere), for each gene count
   in ``--genes`` and ``--seeds`` seeds. Methods, all in this run: ours (score matching), our
   corrected mean-field Celcomen loss, the reference protocol (3-D normaliser, [0, 1] clipping,
   unit diagonal, plain SGD; a mode of our code), plain gene-gene correlation (intra baseline)
   and the symmetrised correlation of own with neighbour-averaged expression (inter baseline).
   Metrics on off-diagonal entries: Spearman, Pearson, the mean absolute error of the z-scored
   entries ("std-MAE", scale-free; it and Pearson separate methods where Spearman ties, as at 4
   genes), AUROC of the sign (non-zero truths) and of the support (|estimate| for non-zero vs
   zero truth); a run "collapses" when all off-diagonal entries are equal (Spearman undefined).
   Win rates vs the correlation baselines are strict on each metric (ties reported for
   Spearman). The tie ceiling is the Spearman a perfect estimator gets against a truth with
   exact zeros (ties broken at random).
2. Counterfactual check: knock gene 0 out in a centre cell and its neighbours; Pearson between
   the effect predicted with fitted matrices and the effect under the true matrices, both
   with the same protocol (cells within graph distance 2, unclamped genes). Three protocols:
   "equilibrium", the library default, the clamped mean-field fixed point (no horizon;
   benchmarks/bench_counterfactual.py compares it with the horizons and a sampled equilibrium);
   the gradient relaxation "scaled", 50 steps of 4 / (50 L) with L = 2 ||W_intra||_2 +
   ||A + A^T||_2 ||W_inter||_2 of the fitted matrices (spatial.counterfactual.auto_step_size),
   a horizon of 4 model time units at every gene count, and "fixed" 50 steps x 0.01 (about the
   same at 4 genes). Also reported:
   how much the true effect still changes over 10 more fixed steps (> 5 %: unsettled).
3. Timing on ``--timing-cells`` x each of ``--timing-genes`` (default 1,781 x 480, the GBM
   Xenium case of the paper; a comma list runs several gene counts): seconds per training epoch
   (``--timing-epochs``, full batch, so one optimiser step per epoch on both sides) and per
   relaxation step; with ``--reference-python PATH`` (a Python with the reference package
   ``celcomen`` 0.0.1 in its own environment), the reference's ``train`` epoch (its own
   protocol: SGD lr 0.1, beta 0.1, re-symmetrisation and a fresh optimiser every epoch) for the
   same number of epochs and ``--reference-steps`` Simcomen steps (its angle parametrisation,
   SGD lr 1e-3) on the same data, graph and true matrices, side by side. Each side runs one
   untimed warm-up epoch and step first, so one-off start-up costs count on neither side.
4. ``--scaling``: fit and one counterfactual on 50,000 cells x 100 genes, time and peak memory.

Run: ``.venv/bin/python -m benchmarks.bench_celcomen [--seeds 10] [--reference-python PATH]``.
Timing only, against the reference: ``.venv/bin/python -m benchmarks.bench_celcomen
--skip-identifiability --timing-cells 1000 --timing-genes 20,100,200 --reference-python
/tmp/celcomen-venv/bin/python``, that venv made with ``python3 -m venv /tmp/celcomen-venv &&
/tmp/celcomen-venv/bin/pip install torch==2.13.0 celcomen==0.0.1`` (naming torch keeps pip on
the CPU build).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from graphdata.atomic import write_text_atomic
from spatial._messages import edge_weights
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import relax, ring_index
from spatial.simulate import simulate_tissue

METHODS = ("ours", "mean_field", "reference", "correlation")


def _offdiag(a) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return a[np.triu_indices(a.shape[0], 1)]


def scores(estimate, truth) -> dict:
    """Off-diagonal Spearman, Pearson, standardised MAE, sign/support AUROC, collapse flag.

    ``std_mae`` is the mean absolute difference of the z-scored off-diagonal entries of
    estimate and truth (scale-free, so correlations and couplings compare; lower is better). It
    and Pearson separate methods where Spearman ties, e.g. at 4 genes (6 entries, exact zeros).
    """
    est, tru = _offdiag(estimate), _offdiag(truth)
    collapsed = bool(np.ptp(est) <= 1e-9 * (1 + np.abs(est).max()))
    nonzero = tru != 0
    out = {
        "collapsed": collapsed,
        "spearman": float("nan"),
        "pearson": float("nan"),
        "std_mae": float("nan"),
        "auroc_sign": 0.5,
        "auroc_support": 0.5,
    }
    if not collapsed:
        out["spearman"] = float(spearmanr(est, tru).statistic)
        out["pearson"] = float(np.corrcoef(est, tru)[0, 1])
        out["std_mae"] = float(
            np.abs((est - est.mean()) / est.std() - (tru - tru.mean()) / tru.std()).mean()
        )
        if 0 < (tru[nonzero] > 0).sum() < nonzero.sum():
            out["auroc_sign"] = float(roc_auc_score(tru[nonzero] > 0, est[nonzero]))
        if 0 < nonzero.sum() < nonzero.size:
            out["auroc_support"] = float(roc_auc_score(nonzero, np.abs(est)))
    return out


def correlation_baselines(x: np.ndarray, edge_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gene-gene Pearson correlation; symmetrised correlation of own vs neighbour-mean."""
    g = x.shape[1]
    neighbour = np.zeros_like(x)
    np.add.at(neighbour, edge_index[1], x[edge_index[0]])
    counts = np.bincount(edge_index[1], minlength=len(x)).clip(min=1)[:, None]
    cross = np.corrcoef(x.T, (neighbour / counts).T)[:g, g:]
    return np.corrcoef(x.T), (cross + cross.T) / 2


def _knockout_cells(tissue) -> torch.Tensor:
    n = tissue.x.shape[0]
    centre = torch.zeros(n, dtype=torch.bool)
    centre[int(torch.argmin((tissue.coords - tissue.coords.mean(0)).norm(dim=1)))] = True
    return ring_index(tissue.edge_index, centre, n) <= 1


def knockout_pearson(
    fitted: Celcomen,
    tissue,
    steps: int = 50,
    step_size: float | None = None,
    method: str = "mean_field",
) -> tuple[float, float | None]:
    """Pearson of predicted vs true knockout effect, with the same protocol.

    ``method="mean_field"`` (the library default): both at their clamped mean-field
    equilibrium (``steps``, ``step_size`` unused). ``"gradient"``: ``step_size=None`` resolves
    the automatic step from the *fitted* matrices (no truth used) and relaxes the truth with
    that same step. Returns (Pearson, step used or None).
    """
    cells = _knockout_cells(tissue)
    kwargs: dict = {"edge_index": tissue.edge_index, "method": method, "progress": False}
    if method == "gradient":
        kwargs["steps"] = steps
    predicted = fitted.intervene(
        tissue.x, {0: 0.0}, cells, **kwargs, **({"step_size": step_size} if step_size else {})
    )
    truth = Celcomen.from_matrices(tissue.W_intra, tissue.W_inter).intervene(
        tissue.x, {0: 0.0}, cells, step_size=predicted.step_size, **kwargs
    )
    keep = (truth.ring <= 2).unsqueeze(1) & ~truth.clamped
    a, b = predicted.delta[keep].numpy(), truth.delta[keep].numpy()
    pearson = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")
    return pearson, predicted.step_size


def knockout_report(fitted: Celcomen, tissue, steps: int = 50, fixed_step: float = 0.01) -> dict:
    """Knockout Pearson under two protocols and how far the truth's relaxation is from rest.

    ``scaled``: the library default, ``steps`` steps of ``4 / (steps L)`` with ``L`` the field's
    Lipschitz constant from the *fitted* matrices (:func:`spatial.counterfactual.auto_step_size`),
    a horizon of 4 model time units at every gene count. ``fixed``: ``steps`` x ``fixed_step``
    (50 x 0.01, time 0.5 whatever the coupling strength; the default before the automatic
    step). ``truth_change`` is the relative change of the true effect over 10 further fixed
    steps (> 0.05: the true relaxation is still moving between basins).
    """
    cells = _knockout_cells(tissue)
    truth_model = Celcomen.from_matrices(tissue.W_intra, tissue.W_inter)
    kwargs = {"edge_index": tissue.edge_index, "step_size": fixed_step, "method": "gradient"}
    now = truth_model.intervene(tissue.x, {0: 0.0}, cells, steps=steps, **kwargs)
    later = truth_model.intervene(tissue.x, {0: 0.0}, cells, steps=steps + 10, **kwargs)
    keep = (now.ring <= 2).unsqueeze(1) & ~now.clamped
    change = float((later.delta[keep] - now.delta[keep]).norm() / now.delta[keep].norm())
    scaled, scaled_step = knockout_pearson(fitted, tissue, steps, None, "gradient")
    return {
        # the library default since issue 19: the clamped mean-field equilibrium
        "equilibrium": knockout_pearson(fitted, tissue)[0],
        "fixed": knockout_pearson(fitted, tissue, steps, fixed_step, "gradient")[0],
        "scaled": scaled,
        "scaled_step_size": scaled_step,
        "truth_change": change,
    }


def identifiability(args) -> dict:
    runs = []
    for g in args.genes:
        for seed in range(args.seeds):
            start = time.perf_counter()
            tissue = simulate_tissue(args.cells, g, seed=seed, steps=args.sim_steps)
            sim_s = time.perf_counter() - start
            configs = {
                "ours": CelcomenConfig(epochs=args.epochs, progress=False, seed=seed),
                "mean_field": CelcomenConfig(
                    objective="mean_field", epochs=args.epochs, progress=False, seed=seed
                ),
                "reference": CelcomenConfig.reference(
                    epochs=args.epochs, progress=False, seed=seed
                ),
            }
            run = {"genes": g, "seed": seed, "simulate_s": sim_s}
            rng = np.random.default_rng(seed)
            tru = _offdiag(tissue.W_inter)
            run["tie_ceiling"] = float(
                spearmanr(tru + 1e-9 * rng.standard_normal(tru.size), tru).statistic
            )
            for name, config in configs.items():
                start = time.perf_counter()
                est = Celcomen(config).fit(tissue.x, tissue.edge_index)
                run[name] = {
                    "fit_s": time.perf_counter() - start,
                    "intra": scores(est.W_intra_, tissue.W_intra),
                    "inter": scores(est.W_inter_, tissue.W_inter),
                }
                if name == "ours":
                    report = knockout_report(est, tissue)
                    run[name]["knockout_pearson"] = report["equilibrium"]  # library default
                    run[name]["knockout"] = report
                elif seed < 3:
                    run[name]["knockout_pearson"] = knockout_pearson(est, tissue)[0]
            corr_intra, corr_inter = correlation_baselines(
                tissue.x.numpy(), tissue.edge_index.numpy()
            )
            run["correlation"] = {
                "intra": scores(corr_intra, tissue.W_intra),
                "inter": scores(corr_inter, tissue.W_inter),
            }
            runs.append(run)
            ko = run["ours"]["knockout"]
            print(
                f"G={g:3d} seed={seed:2d} rho "
                + " ".join(
                    f"{m}={run[m]['intra']['spearman']:+.3f}/{run[m]['inter']['spearman']:+.3f}"
                    for m in METHODS
                )
                + " | pearson ours/corr "
                + "/".join(
                    f"{run[m][w]['pearson']:.3f}"
                    for w in ("intra", "inter")
                    for m in ("ours", "correlation")
                )
                + f" | ko fixed {ko['fixed']:.3f} scaled "
                f"{ko['scaled']:.3f} truth change {ko['truth_change']:.2f}"
                f" (sim {sim_s:.0f}s)",
                flush=True,
            )
    return {"runs": runs, "summary": summarise(runs, args.genes)}


def summarise(runs: list[dict], genes: list[int]) -> dict:
    summary = {}
    print(
        "\noff-diagonal Spearman median (intra / inter), AUROC sign and support medians,"
        " collapse fraction, win rate vs the correlation baselines"
    )
    for g in genes:
        rows = [r for r in runs if r["genes"] == g]
        summary[g] = {"tie_ceiling": float(np.median([r["tie_ceiling"] for r in rows]))}
        for m in METHODS:
            entry = {}
            for which in ("intra", "inter"):
                vals = [r[m][which] for r in rows]
                rho = np.array([v["spearman"] for v in vals])
                base = np.array([r["correlation"][which]["spearman"] for r in rows])
                pearson = np.array([v["pearson"] for v in vals])
                base_pearson = np.array([r["correlation"][which]["pearson"] for r in rows])
                mae = np.array([v["std_mae"] for v in vals])
                base_mae = np.array([r["correlation"][which]["std_mae"] for r in rows])
                entry[which] = {
                    "spearman_median": float(np.nanmedian(rho))
                    if np.isfinite(rho).any()
                    else float("nan"),
                    "pearson_median": float(np.nanmedian(pearson))
                    if np.isfinite(pearson).any()
                    else float("nan"),
                    "std_mae_median": float(np.nanmedian(mae))
                    if np.isfinite(mae).any()
                    else float("nan"),
                    "auroc_sign_median": float(np.median([v["auroc_sign"] for v in vals])),
                    "auroc_support_median": float(np.median([v["auroc_support"] for v in vals])),
                    "collapse_fraction": float(np.mean([v["collapsed"] for v in vals])),
                    "win_rate_vs_correlation": float(np.mean(np.nan_to_num(rho, nan=-2) > base)),
                    "tie_rate_vs_correlation": float(np.mean(rho == base)),
                    "pearson_win_rate_vs_correlation": float(
                        np.mean(np.nan_to_num(pearson, nan=-2) > base_pearson)
                    ),
                    "std_mae_win_rate_vs_correlation": float(
                        np.mean(np.nan_to_num(mae, nan=np.inf) < base_mae)
                    ),
                }
            ko = [r[m].get("knockout_pearson") for r in rows if "knockout_pearson" in r[m]]
            entry["knockout_pearson_median"] = float(np.nanmedian(ko)) if ko else None
            if m == "ours":
                reports = [r[m]["knockout"] for r in rows]
                fixed = np.array([k["fixed"] for k in reports])
                scaled = np.array([k["scaled"] for k in reports])
                entry["knockout"] = {
                    "fixed_median": float(np.nanmedian(fixed)),
                    "fixed_min": float(np.nanmin(fixed)),
                    "scaled_median": float(np.nanmedian(scaled)),
                    "scaled_min": float(np.nanmin(scaled)),
                    "truth_unsettled_fraction": float(
                        np.mean([k["truth_change"] > 0.05 for k in reports])
                    ),
                }
            summary[g][m] = entry
            print(
                f"G={g:3d} {m:12s} rho {entry['intra']['spearman_median']:+.3f} / "
                f"{entry['inter']['spearman_median']:+.3f}  pearson "
                f"{entry['intra']['pearson_median']:+.3f} / "
                f"{entry['inter']['pearson_median']:+.3f}  std-MAE "
                f"{entry['intra']['std_mae_median']:.3f} / "
                f"{entry['inter']['std_mae_median']:.3f}  sign "
                f"{entry['intra']['auroc_sign_median']:.2f}/{entry['inter']['auroc_sign_median']:.2f}"
                f"  support {entry['intra']['auroc_support_median']:.2f}/"
                f"{entry['inter']['auroc_support_median']:.2f}  collapse "
                f"{entry['intra']['collapse_fraction']:.2f}/{entry['inter']['collapse_fraction']:.2f}"
                f"  win rho {entry['intra']['win_rate_vs_correlation']:.2f}/"
                f"{entry['inter']['win_rate_vs_correlation']:.2f} (ties "
                f"{entry['intra']['tie_rate_vs_correlation']:.2f}/"
                f"{entry['inter']['tie_rate_vs_correlation']:.2f}) pearson "
                f"{entry['intra']['pearson_win_rate_vs_correlation']:.2f}/"
                f"{entry['inter']['pearson_win_rate_vs_correlation']:.2f} std-MAE "
                f"{entry['intra']['std_mae_win_rate_vs_correlation']:.2f}/"
                f"{entry['inter']['std_mae_win_rate_vs_correlation']:.2f}"
                + (f"  ko {entry['knockout_pearson_median']:.2f}" if ko else "")
            )
            if m == "ours":
                k = entry["knockout"]
                print(
                    f"G={g:3d} knockout (ours) fixed 50 x 0.01: median {k['fixed_median']:.3f} "
                    f"min {k['fixed_min']:.3f}; scaled 50 x 4/(50 L): median "
                    f"{k['scaled_median']:.3f} min {k['scaled_min']:.3f}; true relaxation "
                    f"unsettled at 50 steps in {k['truth_unsettled_fraction']:.0%} of runs"
                )
        print(f"G={g:3d} tie ceiling of Spearman {summary[g]['tie_ceiling']:.3f}")
    return summary


def _passes(est: Celcomen) -> int:
    """Full passes over the cells of a fit: one per epoch (adam/sgd), or for "cg" one per
    iteration plus two (the ``b = grad(0)`` pass and the final check), also when it stopped at
    the iteration cap; a restart after a failed check adds one more, not counted here
    (``relative_gradient_`` is None exactly for adam/sgd)."""
    return est.n_iter_ + 2 if est.relative_gradient_ is not None else est.n_iter_


def _per_epoch(config: CelcomenConfig, x, edge_index, epochs: int) -> float:
    start = time.perf_counter()
    est = Celcomen(config, epochs=epochs, progress=False).fit(x, edge_index)
    return (time.perf_counter() - start) / _passes(est)


REFERENCE_SCRIPT = textwrap.dedent("""
    import json, sys, time, numpy as np, torch
    from torch_geometric.data import Data
    from celcomen.models.celcomen import celcomen
    from celcomen.models.simcomen import simcomen
    from celcomen.training_plan.train import train
    data = np.load(sys.argv[1]); epochs, steps = int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(int(sys.argv[4]))
    x = torch.from_numpy(data["x"]); ei = torch.from_numpy(data["edge_index"])
    g = x.shape[1]
    loader = [Data(x=x, edge_index=ei)]
    train(1, 0.1, celcomen(g, g, n_neighbors=6, seed=0), loader, zmft_scalar=0.1)  # warm-up
    model = celcomen(g, g, n_neighbors=6, seed=0)
    t = time.perf_counter(); train(epochs, 0.1, model, loader, zmft_scalar=0.1)
    epoch_s = (time.perf_counter() - t) / epochs
    sim = simcomen(g, g, n_neighbors=6, seed=0)
    sim.set_g2g(torch.from_numpy(data["w_inter"]))
    sim.set_g2g_intra(torch.from_numpy(data["w_intra"]))
    sim.set_sphex(sim.calc_sphex(x))
    opt = torch.optim.SGD(sim.parameters(), lr=1e-3)
    def step():  # one step of the reference's train_simcomen, without its snapshots
        msg, msg_intra, log_z = sim(ei, 1)
        energy = torch.trace(msg @ sim.gex.T) + torch.trace(msg_intra @ sim.gex.T)
        loss = -(-log_z + 0.1 * energy)
        opt.zero_grad(); loss.backward(); opt.step()
    step()  # warm-up
    t = time.perf_counter()
    for _ in range(steps):
        step()
    print(json.dumps({"epoch_s": epoch_s, "simcomen_step_s": (time.perf_counter() - t) / steps,
                      "epochs": epochs, "steps": steps, "torch": torch.__version__,
                      "threads": torch.get_num_threads()}))
""")


def timing(args) -> list[dict]:
    return [timing_one(args, genes) for genes in args.timing_genes]


def timing_one(args, genes: int) -> dict:
    tissue = simulate_tissue(args.timing_cells, genes, steps=20, seed=0)
    x, ei = tissue.x, tissue.edge_index
    w = edge_weights(ei, x.shape[0])
    epochs, steps = args.timing_epochs, args.timing_steps
    model = Celcomen.from_matrices(tissue.W_intra, tissue.W_inter).model_
    _per_epoch(CelcomenConfig(), x, ei, 1)  # warm-up, as on the reference side
    relax(model, x, ei, w, steps=1)
    out = {
        "cells": args.timing_cells,
        "genes": genes,
        "epochs": epochs,
        "relax_steps": steps,
        "ours_epoch_s": _per_epoch(CelcomenConfig(), x, ei, epochs),
        "mean_field_epoch_s": _per_epoch(CelcomenConfig(objective="mean_field"), x, ei, epochs),
        "reference_mode_epoch_s": _per_epoch(CelcomenConfig.reference(), x, ei, epochs),
    }
    start = time.perf_counter()
    relax(model, x, ei, w, steps=steps)
    out["ours_relax_step_s"] = (time.perf_counter() - start) / steps
    print(
        f"\ntiming {args.timing_cells} cells x {genes} genes: epoch ours "
        f"{out['ours_epoch_s'] * 1e3:.1f} ms, mean-field {out['mean_field_epoch_s'] * 1e3:.1f} "
        f"ms, reference mode {out['reference_mode_epoch_s'] * 1e3:.1f} ms; relaxation step "
        f"{out['ours_relax_step_s'] * 1e3:.1f} ms (a counterfactual runs two relaxations)"
    )
    if args.reference_python is None:
        out["reference_package"] = "not run: pass --reference-python PATH (celcomen 0.0.1)"
        print("reference package: not run (no --reference-python given)")
        return out
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.npz"
        np.savez(
            path,
            x=x.numpy(),
            edge_index=ei.numpy(),
            w_intra=tissue.W_intra.numpy(),
            w_inter=tissue.W_inter.numpy(),
        )
        script = Path(tmp) / "ref.py"
        script.write_text(REFERENCE_SCRIPT)
        proc = subprocess.run(
            [
                args.reference_python,
                str(script),
                str(path),
                str(epochs),
                str(args.reference_steps),
                str(args.threads),
            ],
            capture_output=True,
            text=True,
            timeout=3600,
        )
    if proc.returncode != 0:
        out["reference_package"] = f"failed: {proc.stderr.strip()[-500:]}"
        print(f"reference package failed:\n{proc.stderr[-2000:]}")
        return out
    ref = json.loads(proc.stdout.strip().splitlines()[-1])
    out["reference_package"] = ref
    out["epoch_ratio_ours_over_reference"] = out["ours_epoch_s"] / ref["epoch_s"]
    out["relax_speedup_reference_over_ours"] = ref["simcomen_step_s"] / out["ours_relax_step_s"]
    speedup = out["relax_speedup_reference_over_ours"]
    print(
        f"reference package: epoch {ref['epoch_s'] * 1e3:.1f} ms (ours/ref "
        f"{out['epoch_ratio_ours_over_reference']:.2f}), Simcomen step "
        f"{ref['simcomen_step_s']:.2f} s (speed-up {speedup:.0f}x)"
    )
    return out


def scaling(args) -> dict:
    n, g = 50_000, 100
    start = time.perf_counter()
    tissue = simulate_tissue(n, g, steps=50, seed=0)
    sim_s = time.perf_counter() - start
    start = time.perf_counter()
    est = Celcomen(epochs=args.scaling_epochs, progress=False).fit(tissue.x, tissue.edge_index)
    fit_s = time.perf_counter() - start
    centre = torch.zeros(n, dtype=torch.bool)
    centre[n // 2 + int(np.sqrt(n)) // 2] = True
    cells = ring_index(tissue.edge_index, centre, n) <= 1
    start = time.perf_counter()
    est.intervene(
        tissue.x, {0: 0.0}, cells, edge_index=tissue.edge_index, method="gradient", steps=50
    )
    cf_s = time.perf_counter() - start
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB
    out = {
        "cells": n,
        "genes": g,
        "simulate_50_steps_s": sim_s,
        "fit_s": fit_s,
        "fit_epochs": args.scaling_epochs,
        "counterfactual_50_steps_s": cf_s,
        "peak_rss_gib": peak_gib,
    }
    print(
        f"\nscaling {n} cells x {g} genes: fit {fit_s:.1f} s ({args.scaling_epochs} epochs), "
        f"counterfactual (2 x 50 steps) {cf_s:.1f} s, peak RSS {peak_gib:.2f} GiB"
    )
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genes", default="4,10,20,40", help="gene counts (default 4,10,20,40)")
    parser.add_argument("--seeds", type=int, default=10, help="seeds per gene count (default 10)")
    parser.add_argument("--cells", type=int, default=1000, help="cells per tissue (default 1000)")
    parser.add_argument("--sim-steps", type=int, default=4000, help="Langevin steps (default 4000)")
    parser.add_argument("--epochs", type=int, default=300, help="fit epochs (default 300)")
    parser.add_argument("--timing-cells", type=int, default=1781)
    parser.add_argument(
        "--timing-genes", default="480", help="gene counts for the timing, comma list (default 480)"
    )
    parser.add_argument(
        "--timing-epochs",
        type=int,
        default=20,
        help="training epochs timed, both sides (default 20)",
    )
    parser.add_argument(
        "--timing-steps", type=int, default=20, help="our relaxation steps timed (default 20)"
    )
    parser.add_argument(
        "--reference-steps",
        type=int,
        default=3,
        help="reference Simcomen steps timed (default 3; each takes seconds)",
    )
    parser.add_argument(
        "--reference-python",
        default=None,
        help="python with celcomen 0.0.1 installed, for the package timing",
    )
    parser.add_argument("--scaling", action="store_true", help="also run 50k cells x 100 genes")
    parser.add_argument("--scaling-epochs", type=int, default=100)
    parser.add_argument("--skip-identifiability", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    args.genes = [int(v) for v in args.genes.split(",")]
    args.timing_genes = [int(v) for v in args.timing_genes.split(",")]
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    results: dict = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "threads": args.threads,
        },
        "args": {k: v for k, v in vars(args).items()},
    }
    if not args.skip_identifiability:
        results["identifiability"] = identifiability(args)
    results["timing"] = timing(args)
    if args.scaling:
        results["scaling"] = scaling(args)
    results["wall_s"] = time.perf_counter() - start
    if args.out:
        path = Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(results, indent=1, default=str))
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
