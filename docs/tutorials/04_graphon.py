r"""
graphon: graphons, densities, WL and cut distance
=================================================

:mod:`graphon` holds graphons :math:`W: [0, 1]^2 \to [0, 1]` and graphon-signals, W-random
graphs, homomorphism densities

.. math::
    t(F, W) = \int_{[0,1]^{V(F)}} \prod_{uv \in E(F)} W(x_u, x_v)\, \mathrm{d}x

(Lovász, *Large Networks and Graph Limits*, AMS 2012, Section 7.2), the Weisfeiler-Leman test on
graphs and graphons and the cut distance. API: :doc:`/api/graphon`.
"""

# %%
# A graphon and its triangle density
# ----------------------------------
# For :math:`W(x, y) = x y` every pattern has a closed form,
# :math:`t(F, W) = \prod_v 1 / (\deg v + 1)`: :math:`1/27` for the triangle.
# :func:`graphon.graphon_density` integrates by quadrature and reports an error estimate.
from graphon import graphon_density, hom_density, make_graphon, sample_graphs

W = make_graphon("product")
estimate = graphon_density("triangle", W)
print(f"t(triangle, xy) = {estimate.value:.12f}  (1/27 = {1 / 27:.12f})")

# %%
# Sampled graphs converge to it
# -----------------------------
# :func:`graphon.sample_graphs` draws W-random graphs: latents :math:`x_i \sim U[0, 1]` and
# independent edges :math:`A_{ij} \sim \mathrm{Bernoulli}(W(x_i, x_j))`. Their triangle
# densities concentrate around :math:`t(K_3, W)` as :math:`n` grows.
for n in (50, 200, 800):
    graphs = sample_graphs(W, n, batch_size=8, seed=0)
    densities = hom_density("triangle", graphs.adj)
    print(f"n = {n:4d}: mean {densities.mean():.5f}, std {densities.std():.5f}")

# %%
# Draw the graphon and one sampled adjacency matrix (nodes sorted by latent).
import matplotlib.pyplot as plt
import torch

from graphon.plot import plot_adjacency, plot_graphon

graphs = sample_graphs(W, 200, seed=0)
order = torch.argsort(graphs.latents)
fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.6), layout="constrained")
plot_graphon(W, ax=left)
plot_adjacency(graphs.adj[order][:, order], ax=right)

# %%
# Weisfeiler-Leman and the cut distance
# -------------------------------------
# 1-WL cannot tell a 6-cycle from two triangles (both 2-regular); 2-WL (folklore) can. The cut
# distance of two samples of the same graphon is small, of samples of different graphons not.
from graphon import erdos_renyi, sbm, wl_equivalent
from graphon.distance import cut_distance

cycle = torch.zeros(6, 6)
for i in range(6):
    cycle[i, (i + 1) % 6] = cycle[(i + 1) % 6, i] = 1.0
triangles = torch.zeros(6, 6)
for block in (range(3), range(3, 6)):
    for i in block:
        for j in block:
            triangles[i, j] = float(i != j)
print("1-WL equivalent:", wl_equivalent(cycle, triangles, k=1))
print("2-WL equivalent:", wl_equivalent(cycle, triangles, k=2))

a = sample_graphs(erdos_renyi(0.5), 60, seed=1).adj.double()
b = sample_graphs(erdos_renyi(0.5), 60, seed=2).adj.double()
c = sample_graphs(sbm(2, p=0.9, q=0.1), 60, latents="grid", seed=3).adj.double()
for name, other in (("ER vs ER ", b), ("ER vs SBM", c)):
    result = cut_distance(a, other)
    print(f"{name}: {result.value:.4f} (bounds [{result.lower:.4f}, {result.upper:.4f}])")
