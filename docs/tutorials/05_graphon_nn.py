r"""
graphon.nn: invariant graphon networks
======================================

:mod:`graphon.nn` implements the Invariant Graphon Networks (IWNs) of Herbst & Jegelka,
"Higher-Order Graphon Neural Networks: Approximation and Cut Distance", ICLR 2025,
arXiv:2503.14338, next to the Invariant Graph Networks (IGNs) of Maron et al., "Invariant and
Equivariant Graph Networks", ICLR 2019, arXiv:1812.09902, and an MPNN baseline. An IWN layer
keeps only the linear equivariant maps that are bounded on graphons: no diagonal reads, no
diagonal writes. API: :doc:`/api/graphon.nn`.
"""

# %%
# The equivariant bases
# ---------------------
# The linear :math:`S_n`-equivariant maps from 2-tensors to 2-tensors form a basis of
# Bell(4) = 15 elements (Maron et al.); the IWN keeps 7 of them.
from graphon.nn import basis_size

for k, ell in ((1, 1), (2, 1), (2, 2), (3, 3)):
    print(
        f"{k} -> {ell}: IGN {basis_size(k, ell, basis='ign'):4d}, "
        f"IWN {basis_size(k, ell, basis='iwn'):3d}"
    )

# %%
# Blow-up invariance
# ------------------
# A graph :math:`G` and its blow-up :math:`G \otimes J_m` (every node copied :math:`m` times)
# induce the same graphon, so a network that is a function of the graphon gives them the same
# output. The IWN does; the full IGN reads the diagonal and does not.
import torch

from graphdata import DenseGraphBatch
from graphon.nn import IGN, IWN

generator = torch.Generator().manual_seed(0)
n, m = 7, 3
upper = torch.rand(n, n, generator=generator, dtype=torch.float64).triu(1)
adj = upper + upper.T  # a weighted graph without loops
signal = torch.rand(n, 1, generator=generator, dtype=torch.float64)
small = DenseGraphBatch.from_adjacency([adj], [signal])
big = DenseGraphBatch.from_adjacency(
    [torch.kron(adj, torch.ones(m, m, dtype=torch.float64))], [signal.repeat_interleave(m, 0)]
)
for cls in (IWN, IGN):
    torch.manual_seed(0)
    model = cls(1).double().eval()
    with torch.no_grad():
        gap = (model(small) - model(big)).abs().max().item()
    print(f"{cls.__name__}: |N(G) - N(G x J_{m})| = {gap:.2e}")

# %%
# Untrained networks on W-random graphs
# -------------------------------------
# Herbst & Jegelka's Appendix H: random weights :math:`\mathcal{N}(0, 1)`, graphs
# :math:`\mathbb{G}(n, 1/2)` of growing size, error against the output on the graphon. The
# MPNN's error goes to 0; the IWN's plateaus (it reads the 0/1 edge weights, whose law differs
# from :math:`W = 1/2`), while the spread of its outputs still shrinks (transferability).
from graphon.nn.plot import plot_convergence
from graphon.nn.transfer import ConvergenceConfig, untrained_convergence

config = ConvergenceConfig(sizes=(25, 50, 100, 200), samples=4, batch_size=4)
result = untrained_convergence("erdos_renyi", config, seed=0)
for name, curve in result.curves.items():
    print(name, [f"{float(e):.2e}" for e in curve.mae])
import matplotlib.pyplot as plt

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4), layout="constrained")
plot_convergence(result, left, metric="mae")
plot_convergence(result, right, metric="spread")
