"""knn_graph on 100k random points against scikit-learn NearestNeighbors, side by side.

Both sides get the same float64 points in the unit square (cube) and return, for every point,
its k nearest other points: ours with ``graphdata.spatial.knn_graph`` (cKDTree path, including
the tie check and building ``edge_index``), the anchor with
``NearestNeighbors(n_neighbors=k).fit(X).kneighbors()`` (squidpy's k-NN builder), or, without
scikit-learn, chunked brute-force ``torch.cdist`` + ``topk``. Both single-threaded. The neighbour
distances must agree. Target: ratio anchor / ours >= 1 (no slower than scikit-learn).

Run: ``.venv/bin/python -m benchmarks.bench_knn [--n 100000 --k 6 --dims 2 3 --repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from graphdata.spatial import knn_graph


def _sklearn_anchor(k: int) -> tuple[str, Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]]:
    try:
        from sklearn.neighbors import NearestNeighbors
    except ImportError:
        return "brute-force cdist", lambda x: _brute_force(x, k)

    def run(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # kneighbors() without X excludes each point itself, as squidpy's KNNBuilder does.
        return NearestNeighbors(n_neighbors=k).fit(x).kneighbors()

    return "sklearn NearestNeighbors", run


def _brute_force(x: np.ndarray, k: int, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    points = torch.from_numpy(x)
    dists, index = [], []
    for start in range(0, len(points), chunk):
        d = torch.cdist(points[start : start + chunk], points)  # [c, n]
        rows = torch.arange(d.shape[0])
        d[rows, rows + start] = torch.inf
        values, cols = torch.topk(d, k, dim=1, largest=False)
        dists.append(values)
        index.append(cols)
    return torch.cat(dists).numpy(), torch.cat(index).numpy()


def _timed(fn: Callable, *args: object, **kwargs: object) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def _sync(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="points")
    parser.add_argument("--k", type=int, default=6, help="neighbours per point")
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per side (best kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--torch-device",
        default="auto",
        help="also time the chunked torch path on this device ('auto': CUDA when present, "
        "'none': skip)",
    )
    args = parser.parse_args(argv)
    torch_device = args.torch_device
    if torch_device == "auto":
        torch_device = "cuda" if torch.cuda.is_available() else "none"

    anchor_name, anchor = _sklearn_anchor(args.k)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # both sides single-threaded; also less noise on shared machines
    results: dict[str, object] = {"n": args.n, "k": args.k, "anchor": anchor_name}
    print(f"knn_graph vs {anchor_name}: n = {args.n}, k = {args.k}, best of {args.repeats}")
    try:
        for dim in args.dims:
            x = np.random.default_rng(args.seed).random((args.n, dim))
            coords = torch.from_numpy(x)
            knn_graph(coords[:1000], args.k)  # warm-up
            # Interleave the two sides so that load from other processes hits both alike.
            ours_t, anchor_t = [], []
            for _ in range(args.repeats):
                t, (edge_index, distance) = _timed(knn_graph, coords, args.k)
                ours_t.append(t)
                t, (anchor_dist, _) = _timed(anchor, x)
                anchor_t.append(t)
            ours_dist = distance.view(args.n, args.k).numpy()
            max_err = float(np.abs(np.sort(anchor_dist, axis=1) - ours_dist).max())
            best_ours, best_anchor = min(ours_t), min(anchor_t)
            ratio = best_anchor / best_ours
            print(
                f"  {dim}-D: knn_graph {best_ours:.3f} s (median "
                f"{statistics.median(ours_t):.3f}), {anchor_name} {best_anchor:.3f} s (median "
                f"{statistics.median(anchor_t):.3f}); ratio anchor/ours = {ratio:.2f}x "
                f"(target >= 1); max |distance difference| = {max_err:.1e}"
            )
            if torch_device != "none":
                on_device = coords.to(torch_device)
                knn_graph(on_device[:1000], args.k, method="torch")  # warm-up
                device_t = []
                for _ in range(args.repeats):
                    _sync(torch_device)
                    t, (dev_index, _) = _timed(knn_graph, on_device, args.k, method="torch")
                    _sync(torch_device)
                    device_t.append(t)
                same = bool(torch.equal(dev_index.cpu(), edge_index))
                print(
                    f"       torch path on {torch_device}: {min(device_t):.3f} s, ratio "
                    f"anchor/torch = {best_anchor / min(device_t):.2f}x, same edges as "
                    f"cKDTree: {same}"
                )
                results[f"{dim}d_torch_{torch_device}"] = {"s": min(device_t), "same_edges": same}
            results[f"{dim}d"] = {
                "ours_s": best_ours,
                "anchor_s": best_anchor,
                "ours_median_s": statistics.median(ours_t),
                "anchor_median_s": statistics.median(anchor_t),
                "ratio_anchor_over_ours": ratio,
                "max_distance_diff": max_err,
                "edges": int(edge_index.shape[1]),
            }
    finally:
        torch.set_num_threads(threads)
    return results


if __name__ == "__main__":
    main()
