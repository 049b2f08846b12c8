"""Cut norm: exact enumeration and the Alon-Naor SDP against brute force and each other.

1. Exact enumeration over S with the best T by column sums (O(2^n n^2)) against brute force over
   both S and T (O(4^n n)), same value checked, n = 8..12; then exact enumeration alone up to
   n = 20.
2. The SDP bracket [value, upper] against the exact value at n = 12..16: how tight the rounding
   (lower bound) and the dual certificate (upper bound) are.
3. The SDP at n = 100..800 on the difference of two independent G(n, 1/2) graphs (l1 ~ 1/2,
   cut norm ~ n^(-1/2)): time and upper/lower gap.
4. Cut distance of sampled SBM graphs to their graphon (sampling lemma): bounds against n.

Times are process CPU seconds (one torch thread by default).

Run: ``.venv/bin/python -m benchmarks.bench_cutnorm [--threads 1]``.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from graphon.cut import cut_norm
from graphon.distance import cut_distance
from graphon.families import erdos_renyi, sbm
from graphon.sampling import sample_graphs

F64 = torch.float64


def brute_force(a: torch.Tensor) -> float:
    """max over all (S, T) of |sum_{S x T} a| / n^2, both enumerated, in row chunks."""
    n = a.size(0)
    subsets = ((torch.arange(2**n)[:, None] >> torch.arange(n)) & 1).to(a.dtype)  # [2^n, n]
    right = a @ subsets.T  # [n, 2^n]
    best = 0.0
    for start in range(0, 2**n, 256):
        best = max(best, float((subsets[start : start + 256] @ right).abs().max()))
    return best / n**2


def _timed(fn, *args, **kwargs):
    # Process CPU time: the machine is shared and torch runs one thread.
    start = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - start, out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), float64")
    g = torch.Generator().manual_seed(0)
    results: dict = {
        "threads": args.threads,
        "exact_vs_brute": [],
        "exact_scaling": [],
        "sdp_vs_exact": [],
        "sdp_large": [],
        "sampling_lemma": [],
    }

    print("exact enumeration (best T by column sums) vs brute force over S and T:")
    for n in (8, 10, 12):
        a = torch.randn(n, n, generator=g, dtype=F64)
        tb, vb = _timed(brute_force, a)
        te, ve = _timed(cut_norm, a, method="exact")
        ve = ve.value
        assert math.isclose(vb, ve, rel_tol=1e-12)
        results["exact_vs_brute"].append({"n": n, "brute_s": tb, "exact_s": te, "ratio": tb / te})
        print(f"  n = {n:2d}: brute {tb:.3f} s, exact {te:.4f} s: {tb / te:,.0f}x, value {ve:.4f}")
    for n in (16, 18, 20):
        a = torch.randn(n, n, generator=g, dtype=F64)
        te, _ = _timed(cut_norm, a, method="exact")
        results["exact_scaling"].append({"n": n, "exact_s": te})
        print(f"  exact enumeration n = {n}: {te:.2f} s")

    print("SDP bracket [rounded cut, dual certificate] / exact:")
    for n in (12, 14, 16):
        for kind in ("gaussian", "signs"):
            a = torch.randn(n, n, generator=g, dtype=F64)
            if kind == "signs":
                a = torch.sign(a)
            exact = cut_norm(a, method="exact").value
            ts, res = _timed(cut_norm, a, method="sdp")
            row = {
                "n": n,
                "kind": kind,
                "lower_ratio": res.value / exact,
                "upper_ratio": res.upper / exact,
                "sdp_s": ts,
            }
            results["sdp_vs_exact"].append(row)
            print(
                f"  n = {n}, {kind:8s}: lower {row['lower_ratio']:.4f}, upper "
                f"{row['upper_ratio']:.4f} (Grothendieck bound 1.7823), {ts:.3f} s"
            )

    print("SDP on the difference of two G(n, 1/2) graphs:")
    for n in (100, 200, 400, 800):
        s = sample_graphs(erdos_renyi(0.5), n, batch_size=2, seed=n, dtype=F64)
        diff = s.adj[0] - s.adj[1]
        ts, res = _timed(cut_norm, diff, method="sdp")
        row = {
            "n": n,
            "l1": float(diff.abs().mean()),
            "lower": res.value,
            "upper": res.upper,
            "gap": res.upper / res.value,
            "sdp_s": ts,
            "sqrt_n_lower": res.value * n**0.5,
        }
        results["sdp_large"].append(row)
        print(
            f"  n = {n:4d}: l1 {row['l1']:.3f}, cut norm in [{res.value:.4f}, {res.upper:.4f}] "
            f"(gap {row['gap']:.3f}), sqrt(n) * lower {row['sqrt_n_lower']:.3f}, {ts:.2f} s"
        )

    # Nodes come sorted by their latents, so "identity" aligns G's steps with W's blocks; degree
    # sorting cannot, since this SBM is regular.
    print("cut distance of G(n, W) to W = SBM(5 blocks, .8/.3), latent order:")
    w = sbm()
    for n in (50, 100, 200, 400):
        s = sample_graphs(w, n, latents="uniform", seed=n, dtype=F64)
        tc, res = _timed(cut_distance, s.adj, w, align="identity")
        row = {"n": n, "lower": res.lower, "upper": res.upper, "s": tc}
        results["sampling_lemma"].append(row)
        print(f"  n = {n:3d}: delta_cut in [{res.lower:.4f}, {res.upper:.4f}], {tc:.2f} s")
    return results


if __name__ == "__main__":
    main()
