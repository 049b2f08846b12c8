"""The Celcomen estimator: lifecycle, seeds, protocols, and recovery against baselines."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from graphdata.errors import GraphDataError, NotFittedError, UnknownLabelError
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import ring_index
from spatial.simulate import simulate_tissue


@pytest.fixture(scope="module")
def tissue():
    return simulate_tissue(200, 4, steps=300, step_size=0.005, seed=0)


def _offdiag(a) -> np.ndarray:
    a = np.asarray(a)
    return a[np.triu_indices(a.shape[0], 1)]


def test_not_fitted_before_fit(tissue):
    est = Celcomen(epochs=2, progress=False)
    with pytest.raises(NotFittedError, match="not fitted yet; call fit"):
        est.matrices()
    with pytest.raises(NotFittedError, match="not fitted yet"):
        est.intervene(tissue.x, {0: 0.0}, [0], edge_index=tissue.edge_index)


def test_fit_returns_self_and_is_seeded(tissue):
    # The seed orders Adam's mini-batches (the default CG solver is deterministic).
    kw = {"epochs": 20, "batch_size": 64, "optimizer": "adam", "progress": False}
    est = Celcomen(seed=3, **kw)
    assert est.fit(tissue.x, tissue.edge_index) is est
    again = Celcomen(seed=3, **kw).fit(tissue.x, tissue.edge_index)
    other = Celcomen(seed=4, **kw).fit(tissue.x, tissue.edge_index)
    assert torch.equal(est.W_inter_, again.W_inter_) and est.losses_ == again.losses_
    assert not torch.equal(est.W_inter_, other.W_inter_)
    assert len(est.losses_) == 20 and np.isfinite(est.losses_).all()
    assert torch.equal(est.W_intra_, est.W_intra_.T)
    assert abs(float(est.W_intra_.diagonal().sum())) < 1e-5  # reported with zero trace
    # Adam stops after `epochs` with no gradient-norm criterion: the relative gradient is
    # undefined (None; was NaN), and the deterministic CG fit reports a finite one.
    assert est.relative_gradient_ is None and est.n_iter_ == 20
    cg = Celcomen(epochs=5, progress=False)
    with pytest.warns(UserWarning, match="fit has not converged"):
        cg.fit(tissue.x, tissue.edge_index)
    assert cg.relative_gradient_ is not None and 0 < cg.relative_gradient_ < float("inf")


def test_minibatch_and_full_batch_reach_the_same_convex_optimum(tissue):
    full = Celcomen(epochs=300, progress=False).fit(tissue.x, tissue.edge_index)
    mini = Celcomen(epochs=300, batch_size=50, lr=0.01, progress=False).fit(
        tissue.x, tissue.edge_index
    )
    for a, b in ((full.W_intra_, mini.W_intra_), (full.W_inter_, mini.W_inter_)):
        assert np.corrcoef(_offdiag(a), _offdiag(b))[0, 1] > 0.97


def test_reference_protocol_clips_to_unit_interval_with_unit_diagonal(tissue):
    est = Celcomen(CelcomenConfig.reference(epochs=10, progress=False)).fit(
        tissue.x, tissue.edge_index
    )
    for w in est.matrices():
        assert torch.all((w >= 0) & (w <= 1)) and torch.all(w.diagonal() == 1)
        assert torch.equal(w, w.T)


def test_mean_field_objective_decreases_and_an_unfinished_fit_warns(tissue):
    with pytest.warns(UserWarning, match="fit has not converged: raise epochs or lr"):
        est = Celcomen(objective="mean_field", epochs=50, progress=False).fit(
            tissue.x, tissue.edge_index
        )
    assert est.losses_[-1] < est.losses_[0]


def test_fit_on_device(tissue, device):
    est = Celcomen(epochs=3, progress=False).fit(tissue.x.to(device), tissue.edge_index.to(device))
    assert est.W_inter_.device.type == device.type


def test_recovery_beats_correlation_baselines_and_predicts_knockouts():
    """Paired over 4 seeded tissues (400 cells, 8 genes): score matching vs plain correlation
    (intra) and correlation with the neighbour average (inter), off-diagonal Spearman."""
    gains = {"intra": [], "inter": []}
    for seed in range(4):
        tissue = simulate_tissue(400, 8, steps=1000, step_size=0.005, seed=seed)
        x = tissue.x.numpy()
        neighbour_mean = np.zeros_like(x)
        np.add.at(neighbour_mean, tissue.edge_index[1].numpy(), x[tissue.edge_index[0].numpy()])
        cross = np.corrcoef(x.T, neighbour_mean.T)[:8, 8:]
        baselines = {"intra": np.corrcoef(x.T), "inter": (cross + cross.T) / 2}
        est = Celcomen(epochs=200, progress=False).fit(tissue.x, tissue.edge_index)
        for which, fitted, truth in (
            ("intra", est.W_intra_, tissue.W_intra),
            ("inter", est.W_inter_, tissue.W_inter),
        ):
            ours = spearmanr(_offdiag(fitted), _offdiag(truth)).statistic
            base = spearmanr(_offdiag(baselines[which]), _offdiag(truth)).statistic
            gains[which].append(ours - base)
        if seed == 0:
            centre = torch.zeros(400, dtype=torch.bool)
            centre[210] = True
            cells = ring_index(tissue.edge_index, centre, 400) <= 1
            kwargs = {"edge_index": tissue.edge_index}
            predicted = est.intervene(tissue.x, {1: 0.0}, cells, **kwargs)
            truth = Celcomen.from_matrices(tissue.W_intra, tissue.W_inter).intervene(
                tissue.x, {1: 0.0}, cells, **kwargs
            )
            keep = (truth.ring <= 2).unsqueeze(1) & ~truth.clamped
            r = np.corrcoef(predicted.delta[keep].numpy(), truth.delta[keep].numpy())[0, 1]
            # The benchmark asks >= 0.9 at 1000 cells; this small tissue gives about 0.90.
            assert r >= 0.8
    # 7 or 8 wins in 8 paired comparisons: p <= 0.035 under a fair coin (one-sided sign test).
    assert sum(g > 0 for gain in gains.values() for g in gain) >= 7, gains
    for which, gain in gains.items():
        assert np.mean(gain) > 0.01, (which, gain)


def test_bad_config():
    with pytest.raises(UnknownLabelError, match="Closest known parameter labels: 'epochs'"):
        Celcomen(epoch=3)
    with pytest.raises(GraphDataError, match="objective: expected one of"):
        CelcomenConfig(objective="ml")
    with pytest.raises(GraphDataError, match="reference_beta: only the 'reference' objective"):
        CelcomenConfig(reference_beta=0.5)
    with pytest.raises(GraphDataError, match=r"batch_size: expected None or an integer in \[1, "):
        CelcomenConfig(batch_size=0)


def test_bad_tensor_input(tissue):
    est = Celcomen(epochs=2, progress=False)
    with pytest.raises(GraphDataError, match="edge_index: required with tensor expression"):
        est.fit(tissue.x)
    with pytest.raises(GraphDataError, match=r"edge_index: expected node indices in \[0, 200\)"):
        est.fit(tissue.x, tissue.edge_index + 1)
    bad = tissue.x.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(GraphDataError, match="expected finite expression, got 1 NaN"):
        est.fit(bad, tissue.edge_index)
    zero = tissue.x.clone()
    zero[5] = 0
    with pytest.raises(GraphDataError, match="1 cells have zero expression in every gene"):
        est.fit(zero, tissue.edge_index)


def test_isolated_cells_are_documented_and_finite(tissue):
    keep = (tissue.edge_index != 7).all(0)  # cut cell 7 off
    with pytest.warns(UserWarning, match="1 of 200 cells have no edges"):
        est = Celcomen(epochs=20, progress=False).fit(tissue.x, tissue.edge_index[:, keep])
    assert all(torch.isfinite(w).all() for w in est.matrices())
    assert np.isfinite(est.losses_).all()


def test_diverging_fit_says_what_to_do(tissue):
    with pytest.raises(GraphDataError, match="fit diverged .* lower lr"):
        Celcomen(optimizer="sgd", lr=1e12, epochs=30, progress=False).fit(
            tissue.x, tissue.edge_index
        )


def test_simulated_anndata_fits_with_allow_negative_and_is_refused_without():
    from spatial import Celcomen, simulate_tissue

    tissue = simulate_tissue(60, 4, steps=200, seed=1)
    adata = tissue.to_anndata()
    with pytest.raises(ValueError, match="negative values.*allow_negative=True"):
        Celcomen(epochs=2, progress=False).fit(adata)
    model = Celcomen(epochs=30, seed=0, progress=False).fit(adata, allow_negative=True)
    direct = Celcomen(epochs=30, seed=0, progress=False).fit(tissue.x, tissue.edge_index)
    # The AnnData path reads the same points and the same kNN graph as the tensor path.
    assert torch.allclose(model.W_intra_, direct.W_intra_, atol=1e-5)
    assert torch.allclose(model.W_inter_, direct.W_inter_, atol=1e-5)
