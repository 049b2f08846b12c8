"""bench_explain_faithful's summary and table: an undefined figure is None (JSON null, n/a)."""

import json
import math

from scipy.stats import spearmanr

from benchmarks.bench_explain_faithful import (
    bootstrap,
    faithful_summary,
    markdown,
    rank_correlation,
)


def test_rank_correlation_is_none_where_a_side_is_constant():
    # a method whose F1 is 0 on every target (the random baseline on maritime, session 28)
    assert rank_correlation([0.0, 0.5, 3.0], [0.0, 0.0, 0.0]) is None
    assert rank_correlation([1.0, 1.0], [0.2, 0.4]) is None
    nec, f1 = [0.0, 0.5, 3.0, 2.0], [0.1, 0.4, 0.9, 0.3]
    assert math.isclose(rank_correlation(nec, f1), spearmanr(nec, f1).statistic)


def _row(n, nec, suf):
    return {
        "n": n,
        "necessity": {"kgexplainer": nec, "random": 0.0},
        "sufficiency": {"kgexplainer": suf, "random": 300.0},
        "original_rank": 1.0,
        "control_rank": 1.0,
        "none_rank": 500.0,
    }


def test_a_world_without_explained_targets_gives_nulls_and_a_table_of_n_a():
    summary = faithful_summary([_row(0, 0.0, 1.0)], ["kgexplainer", "random"], seed=0)
    assert summary["explained"] == 0
    assert summary["kgexplainer"]["necessity_mean"] is None
    assert summary["random"]["paired_necessity_ci"] == (None, None)
    assert summary["mean_control_rank"] is None
    summary["kgexplainer"]["spearman_necessity_f1"] = None
    summary["kgexplainer"]["f1_mean"] = None
    table = markdown([{"world": "w", "summary": summary}])
    assert "nan" not in table.lower()
    assert "| w (0) | kgexplainer | n/a (n/a) | - | n/a (n/a) | - | n/a | n/a |" in table
    json.dumps(summary, allow_nan=False)  # no NaN left to refuse


def test_defined_figures_are_numbers_in_the_table():
    rows = [_row(1, 2.0, 3.0), _row(2, 4.0, 5.0)]
    summary = faithful_summary(rows, ["kgexplainer", "random"], seed=0)
    assert summary["kgexplainer"]["necessity_mean"] == 3.0
    assert summary["random"]["paired_necessity_diff"] == 3.0
    lo, hi = bootstrap([2.0, 4.0], seed=0)
    assert 2.0 <= lo <= hi <= 4.0
    table = markdown([{"world": "w", "summary": summary}])
    assert "| w (2) | random | 0.0 (0.0) | +3.0 [" in table
