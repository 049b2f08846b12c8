"""Fault injection for spatial: bad edge weights, NaN expression, numeric options, divergence.

The old code accepted NaN and negative neighbour-graph weights (a negative weight flips the sign
of W_inter; one NaN turned every normalised weight into NaN), infinite learning rates and
horizons, NaN coupling matrices and step sizes; each probe asserts the clear error instead.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdata.errors import GraphDataError
from spatial._messages import edge_weights
from spatial.celcomen import Celcomen, CelcomenConfig
from spatial.counterfactual import auto_step_size, relax, ring_index, simulate_intervention
from spatial.model import CelcomenEnergy
from spatial.simulate import hex_grid, langevin_sample, random_couplings, simulate_tissue

NON_FINITE = [math.nan, math.inf, -math.inf]
RING = torch.tensor([[1, 2, 0, 3], [0, 0, 1, 2]])  # 1->0, 2->0, 0->1, 3->2


@pytest.fixture(scope="module")
def tissue():
    return simulate_tissue(40, 3, steps=30, seed=0)


@pytest.mark.parametrize("bad", [*NON_FINITE, -1.0])
@pytest.mark.parametrize("normalization", ["gcn", "mean", "none"])
def test_edge_weights_refuse_nan_and_negative_weights(bad, normalization):
    weight = torch.tensor([1.0, bad, 1.0, 1.0])
    with pytest.raises(GraphDataError, match=r"edge_weight: expected finite non-negative .*\[1\]"):
        edge_weights(RING, 4, edge_weight=weight, normalization=normalization)


def test_edge_weights_refuse_a_wrong_length():
    with pytest.raises(GraphDataError, match=r"edge_weight: expected a tensor \[E\] = \[4\]"):
        edge_weights(RING, 4, edge_weight=torch.ones(3))


def test_valid_weights_keep_the_gcn_values():
    # d = (2, 1, 1, 0) weighted by (2, 1, 1, 1): d = (3, 1, 1, 0) -> 2/sqrt(3*1), 1/sqrt(3*1), ...
    out = edge_weights(RING, 4, edge_weight=torch.tensor([2.0, 1.0, 1.0, 1.0]))
    expected = torch.tensor([2 / math.sqrt(3), 1 / math.sqrt(3), 1 / math.sqrt(3), 1.0])
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("bad", [math.nan, -0.5])
def test_fit_refuses_bad_edge_weights(tissue, bad):
    weight = torch.ones(tissue.edge_index.shape[1])
    weight[7] = bad
    est = Celcomen(epochs=2, progress=False)
    with pytest.raises(GraphDataError, match="edge_weight: expected finite non-negative"):
        est.fit(tissue.x, tissue.edge_index, edge_weight=weight)


def test_fit_refuses_bad_weights_stored_in_anndata(tissue):
    adata = tissue.to_anndata()
    graph = adata.obsp["spatial_connectivities"].tocsr(copy=True)
    graph.data[3] = -1.0
    adata.obsp["spatial_connectivities"] = graph
    with pytest.raises(GraphDataError, match="edge_weight: expected finite non-negative"):
        Celcomen(epochs=2, progress=False).fit(adata, allow_negative=True)


@pytest.mark.parametrize("bad", NON_FINITE)
def test_fit_refuses_non_finite_expression(tissue, bad):
    x = tissue.x.clone()
    x[5, 1] = bad
    with pytest.raises(GraphDataError, match="data: expected finite expression, got 1 NaN/inf"):
        Celcomen(epochs=2, progress=False).fit(x, tissue.edge_index)
    with pytest.raises(GraphDataError, match="x: expected finite expression"):
        model = CelcomenEnergy(3)
        simulate_intervention(
            model,
            x,
            tissue.edge_index,
            torch.ones(tissue.edge_index.shape[1]),
            {0: 0.0},
            torch.ones(40, dtype=torch.bool),
        )


@pytest.mark.parametrize(
    ("field", "value"),
    [("lr", math.inf), ("lr", math.nan), ("lr", 0.0), ("weight_decay", math.inf),
     ("weight_decay", -1.0), ("seed", 1.5), ("seed", -1), ("epochs", 0), ("batch_size", 0),
     ("progress", "yes"), ("epochs", 2**63), ("n_neighbors", 2**63), ("batch_size", 2**63),
     ("batch_size", True), ("seed", 2**63)],
)  # fmt: skip
def test_config_fields_are_validated(field, value):
    with pytest.raises(GraphDataError, match=f"{field}: expected"):
        CelcomenConfig(**{field: value})


@pytest.mark.parametrize("bad", [*NON_FINITE, 0.0, -0.1])
def test_reference_beta_is_validated_for_the_reference_objective(bad):
    # The old check only looked at reference_beta for the other objectives.
    with pytest.raises(GraphDataError, match="reference_beta: expected a finite number > 0"):
        CelcomenConfig.reference(reference_beta=bad)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["lr", "weight_decay"]), st.sampled_from(NON_FINITE))
def test_non_finite_config_floats_are_always_refused(field, bad):
    with pytest.raises(GraphDataError, match=f"{field}: expected a finite number"):
        CelcomenConfig(**{field: bad})


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-6, 10.0), st.floats(0.0, 10.0), st.floats(1e-3, 1.0))
def test_in_range_config_floats_are_accepted(lr, weight_decay, beta):
    cfg = CelcomenConfig(lr=lr, weight_decay=weight_decay)
    assert (cfg.lr, cfg.weight_decay) == (lr, weight_decay)
    assert CelcomenConfig.reference(reference_beta=beta).reference_beta == beta


def test_a_diverging_fit_raises_instead_of_returning_garbage(tissue):
    # SGD at lr 1e30: the parameters overflow in the first steps.
    est = Celcomen(epochs=5, lr=1e30, optimizer="sgd", progress=False)
    with pytest.raises(GraphDataError, match=r"lr: the fit diverged .*lower lr"):
        est.fit(tissue.x, tissue.edge_index)


@pytest.mark.parametrize("bad", NON_FINITE)
def test_set_matrices_refuses_non_finite_couplings(bad):
    w = torch.eye(3)
    w[0, 1] = bad
    with pytest.raises(GraphDataError, match="W_intra: expected finite couplings"):
        Celcomen.from_matrices(w, torch.zeros(3, 3))


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("horizon", lambda m, e, w: auto_step_size(m, e, w, 4, horizon=math.inf)),
        ("steps", lambda m, e, w: auto_step_size(m, e, w, 4, steps=2.5)),
        (
            "step_size",
            lambda m, e, w: relax(m, torch.eye(4, 3)[:, :3] + 0.1, e, w, step_size=math.nan),
        ),
        (
            "step_size",
            lambda m, e, w: simulate_intervention(
                m,
                torch.ones(4, 3),
                e,
                w,
                {0: 0.0},
                torch.tensor([True, False, False, False]),
                step_size=math.inf,
            ),
        ),
        (
            "steps",
            lambda m, e, w: simulate_intervention(
                m,
                torch.ones(4, 3),
                e,
                w,
                {0: 0.0},
                torch.tensor([True, False, False, False]),
                steps=0,
            ),
        ),
        (
            "genes[0]",
            lambda m, e, w: simulate_intervention(
                m, torch.ones(4, 3), e, w, {0: math.nan}, torch.tensor([True, False, False, False])
            ),
        ),
    ],
    ids=["horizon", "steps-float", "relax-step", "cf-step", "cf-steps", "cf-gene-nan"],
)
def test_counterfactual_options_are_validated(name, call):
    model = CelcomenEnergy(3)
    model.set_matrices(torch.eye(3), torch.zeros(3, 3))
    with pytest.raises(GraphDataError, match=rf"{name.replace('[', '.').replace(']', '.')}: "):
        call(model, RING, torch.ones(4))


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("n_cells", lambda: simulate_tissue(1.5, 3)),
        ("n_neighbors", lambda: simulate_tissue(10, 3, n_neighbors=10)),
        ("step_size", lambda: simulate_tissue(10, 3, step_size=math.nan, steps=2)),
        ("steps", lambda: simulate_tissue(10, 3, steps=-1)),
        ("strength", lambda: random_couplings(3, strength=math.inf)),
        ("density", lambda: random_couplings(3, density=math.nan)),
        ("seed", lambda: random_couplings(3, seed=0.5)),
        ("spacing", lambda: hex_grid(4, spacing=math.nan)),
        (
            "step_size",
            lambda: langevin_sample(CelcomenEnergy(2), RING, torch.ones(4), 4, step_size=-1.0),
        ),
    ],
    ids=[
        "n_cells",
        "n_neighbors",
        "step_size",
        "steps",
        "strength",
        "density",
        "seed",
        "spacing",
        "langevin-step",
    ],
)
def test_simulation_options_are_validated(name, call):
    with pytest.raises(GraphDataError, match=f"{name}: expected"):
        call()


def test_a_diverging_relaxation_raises():
    model = CelcomenEnergy(3)
    model.set_matrices(torch.full((3, 3), 1e38), torch.zeros(3, 3))
    x = torch.nn.functional.normalize(torch.rand(4, 3, generator=torch.Generator().manual_seed(0)))
    with pytest.raises(GraphDataError, match="step_size: the relaxation diverged"):
        relax(model, x, RING, torch.ones(4), steps=3, step_size=1e30)


def test_unit_rows_keep_the_direction_when_the_squares_overflow_or_underflow():
    from spatial._inputs import unit_rows

    x = torch.tensor([[3e30, 4e30], [3e-30, 4e-30], [0.0, 2.0]])  # float32: 9e60 is inf
    expected = torch.tensor([[0.6, 0.8], [0.6, 0.8], [0.0, 1.0]])
    torch.testing.assert_close(unit_rows(x), expected)
    y = x.clone()
    assert unit_rows(y, inplace=True) is y
    torch.testing.assert_close(y, expected)


def test_a_cell_with_huge_values_fits_as_its_direction(tissue):
    # Sphere coordinates are scale-free per cell: multiplying one row by 1e25 (finite float32,
    # squares past float max) must not turn it into a zero row.
    x = tissue.x.abs() + 0.01  # non-negative, the "sphere" route
    big = x.clone()
    big[3] *= 1e25
    fits = [Celcomen(epochs=5, progress=False).fit(d, tissue.edge_index) for d in (x, big)]
    torch.testing.assert_close(fits[1].W_inter_, fits[0].W_inter_, rtol=1e-4, atol=1e-5)


def test_a_huge_gradient_step_keeps_the_rows_on_the_sphere():
    model = CelcomenEnergy(3)
    model.set_matrices(torch.eye(3) * 2.0, torch.full((3, 3), 0.5))
    x = torch.nn.functional.normalize(torch.tensor([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]), dim=-1)
    edges = torch.tensor([[0, 1], [1, 0]])
    out = relax(model, x, edges, torch.ones(2), steps=3, step_size=1e30, progress=False)
    torch.testing.assert_close(out.norm(dim=-1), torch.ones(2))  # not rows of zeros


def test_a_clamp_whose_square_overflows_is_not_a_knock_out(tissue):
    est = Celcomen(epochs=5, progress=False).fit(tissue.x, tissue.edge_index)
    cells = torch.zeros(tissue.x.shape[0], dtype=torch.bool)
    cells[0] = True
    high = est.intervene(tissue.x, {0: 1e30}, cells, edge_index=tissue.edge_index, progress=False)
    knock = est.intervene(tissue.x, {0: 0.0}, cells, edge_index=tissue.edge_index, progress=False)
    assert float(high.perturbed[0, 0]) == pytest.approx(1.0, abs=1e-5)  # the row, normalised
    assert float(knock.perturbed[0, 0]) == 0.0


@pytest.mark.parametrize(
    ("counts", "what"),
    [(True, "with the same count in every cell"), (False, "zero in every cell")],
)
def test_genes_without_variation_are_refused(tissue, counts, what):
    import anndata
    import numpy as np

    rng = np.random.default_rng(0)
    n = tissue.x.shape[0]
    x = rng.poisson(3.0, (n, 4)).astype(np.float32)
    if counts:
        x[:, 2] = 4.0  # the log-counts route: a constant count is 0 once centred
    else:
        x = np.log1p(x) + 0.5  # normalised expression: the sphere route
        x[:, 2] = 0.0
    adata = anndata.AnnData(x, obsm={"spatial": hex_grid(n).numpy()})
    adata.var_names = ["a", "b", "flat", "d"]
    with pytest.raises(
        GraphDataError, match=rf"adata.X: expected genes that vary .* {what} .*'flat'"
    ):
        Celcomen(epochs=3, progress=False).fit(adata)
    Celcomen(epochs=3, progress=False).fit(adata, mask_var=np.array([1, 1, 0, 1], dtype=bool))


def _graph_calls(tissue, edge_index):
    """Every public function that builds the sparse neighbour operator from an edge list."""
    model = CelcomenEnergy(3)
    model.set_matrices(tissue.W_intra, tissue.W_inter)
    x, n = tissue.x, tissue.x.shape[0]
    weight = torch.ones(edge_index.shape[1], dtype=x.dtype)
    cells = torch.zeros(n, dtype=torch.bool)
    cells[0] = True
    return {
        "auto_step_size": lambda: auto_step_size(model, edge_index, weight, n, steps=5),
        "relax": lambda: relax(model, x, edge_index, weight, steps=3, progress=False),
        "langevin_sample": lambda: langevin_sample(model, edge_index, weight, n, steps=3),
        "mean_field": lambda: simulate_intervention(
            model, x, edge_index, weight, {0: 0.5}, cells, progress=False
        ),
        "gradient": lambda: simulate_intervention(
            model, x, edge_index, weight, {0: 0.5}, cells, method="gradient", progress=False
        ),
        "ring_index": lambda: ring_index(edge_index, cells, n),
    }


@pytest.mark.parametrize("bad", [40, -1])
@pytest.mark.parametrize(
    "name", ["auto_step_size", "relax", "langevin_sample", "mean_field", "gradient", "ring_index"]
)
def test_graph_functions_refuse_edge_ids_outside_the_cells(tissue, name, bad):
    # The sparse operator is built without torch's index checks: the old code returned a result
    # for an id of N (40 cells) or -1 (read outside the buffer), and an id of 2**40 crashed the
    # process (segmentation fault). N was never checked.
    edge_index = tissue.edge_index.clone()
    edge_index[0, 3] = bad
    with pytest.raises(GraphDataError, match=r"edge_index: expected node indices in \[0, 40\)"):
        _graph_calls(tissue, edge_index)[name]()


def test_counterfactual_refuses_nan_weights_and_a_weight_count_off_the_edges(tissue):
    model = CelcomenEnergy(3)
    model.set_matrices(tissue.W_intra, tissue.W_inter)
    weight = torch.ones(tissue.edge_index.shape[1])
    weight[2] = math.nan  # the old code blamed step_size: 'the relaxation diverged'
    with pytest.raises(GraphDataError, match=r"weight: expected finite non-negative"):
        relax(model, tissue.x, tissue.edge_index, weight, steps=3, progress=False)
    # One weight short: torch's "indices and values must have same nnz".
    with pytest.raises(GraphDataError, match=r"weight: expected a tensor \[E\]"):
        relax(model, tissue.x, tissue.edge_index, weight[:-1], steps=3, progress=False)


def test_simulate_intervention_refuses_cell_ids_and_gene_columns_outside_the_genes(tissue):
    model = CelcomenEnergy(3)
    model.set_matrices(tissue.W_intra, tissue.W_inter)
    weight = torch.ones(tissue.edge_index.shape[1])
    args = (model, tissue.x, tissue.edge_index, weight)
    # Ids [0, 5] where a mask is due: the old code clamped cell 1 (the position of the nonzero 5).
    with pytest.raises(GraphDataError, match=r"cells: expected a bool mask \[N\] = \[40\]"):
        simulate_intervention(*args, {0: 0.5}, torch.tensor([0, 5]), progress=False)
    cells = torch.zeros(40, dtype=torch.bool)
    cells[[0, 5]] = True
    # Column -1 clamped the last gene (2); column 3 of 3 genes raised torch's IndexError.
    for column in (-1, 3):
        with pytest.raises(GraphDataError, match=r"genes \(a key\): expected an int in \[0, 2\]"):
            simulate_intervention(*args, {column: 0.5}, cells, progress=False)


def test_ring_index_refuses_ids_for_the_source_mask():
    # Long ids [0, 1] were used as indices: every node at distance 1 of node 1 got ring 1.
    with pytest.raises(GraphDataError, match=r"sources: expected a bool mask \[N\] = \[5\]"):
        ring_index(torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]]), torch.tensor([0, 1]), 5)
