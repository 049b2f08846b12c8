"""Public API of ``spatial``: exported names and signatures (as scanpy's package-structure test)."""

from __future__ import annotations

import inspect

import pytest

import spatial
from spatial import plot, tools


def test_all_names_resolve():
    for name in spatial.__all__:
        assert getattr(spatial, name) is not None, name
    assert sorted(spatial.__all__) == sorted(set(spatial.__all__))


@pytest.mark.parametrize(
    "fn",
    [
        tools.celcomen,
        tools.intervene,
        plot.interaction_heatmap,
        plot.delta_map,
        plot.ring_summary,
        plot.recovery_scatter,
    ],
)
def test_anndata_functions_take_adata_first_and_at_most_two_more_positionals(fn):
    params = list(inspect.signature(fn).parameters.values())
    assert params[0].name == "adata"
    positional = [p for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert len(positional) <= 3, fn.__name__


def test_wrappers_return_none_and_plots_return_axes():
    for fn in (tools.celcomen, tools.intervene, tools.store_fit, tools.store_counterfactual):
        assert inspect.signature(fn).return_annotation in (None, "None")
    for fn in (plot.interaction_heatmap, plot.delta_map, plot.ring_summary, plot.recovery_scatter):
        assert inspect.signature(fn).return_annotation in ("Axes",)


def test_estimator_follows_the_scikit_learn_lifecycle():
    fit = inspect.signature(spatial.Celcomen.fit)
    assert fit.return_annotation == "Celcomen"
    assert [p for p in fit.parameters][:3] == ["self", "data", "edge_index"]
    init = inspect.signature(spatial.Celcomen.__init__)
    assert list(init.parameters) == ["self", "config", "params"]
    est = spatial.Celcomen()
    assert not any(name.endswith("_") and not name.startswith("_") for name in vars(est))
