"""The one plot helper keeps every figure on its canvas (issue 29): intervals cut to the scale and
marked, ``n=`` labels inside the axes, a PNG exactly the figure's size, no layout warning. The
figures are checked as drawn by tests/plot_checks.py, which reads matplotlib's geometry only.

Every report, leaderboard, human-study and demo PNG goes through this helper: no other module draws
with matplotlib (checked below), and the report, leaderboard, human-study and demo tests check the
figures they write with the same ``plot_record`` spy.
"""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image
from plot_checks import assert_figures_fit

from builders.report.plots import DPI, Bar, grouped_bars, heatmaps, scatter_panels

ROOT = Path(__file__).resolve().parent.parent


def test_a_t_interval_far_off_the_scale_stays_inside_a_fixed_canvas(tmp_path, plot_record):
    # The demo's caption figure: n=2 gives a t interval of [-15.6, 22.6] on a 0-5 scale.
    criteria = ["static BEH", "static AH", "static ECF", "moving BEH", "moving AH", "moving ECF"]
    bars = [Bar(5.0, (5.0, 5.0), 2), Bar(3.5, (-15.56, 22.56), 2), Bar(4.0, (4.0, 4.0), 2),
            Bar(4.75, (3.95, 5.55), 4), Bar(5.0, (5.0, 5.0), 4), Bar(None, None, 0)]  # fmt: skip
    path = grouped_bars(
        tmp_path / "judge.png", title="MarineLife-16K caption judge scores by camera (BEH, AH, ECF), test split, "
        "n=6 judged (95% t intervals)", categories=criteria, series={"scripted-baseline": bars},
        xlabel="camera and criterion", ylabel="judge score (0-5)", ylim=(0.0, 5.0),
    )  # fmt: skip
    assert_figures_fit(plot_record, expected=1)
    with Image.open(path) as png:
        assert png.size[1] == round(4.8 * DPI)  # was 1830 px tall with bbox_inches="tight"


def test_many_models_long_names_and_cut_intervals_at_both_ends(tmp_path, plot_record):
    categories = [f"category number {i} with a long name" for i in range(12)]
    series = {
        f"organisation/a-very-long-model-name-{k}-Instruct-with-lora": [
            Bar(0.5 + 0.04 * i if i % 5 else None, (-0.3, 1.4), 12080) for i in range(12)
        ]
        for k in range(4)
    }
    grouped_bars(tmp_path / "many.png", title="a title " * 30, categories=categories, series=series,
                 xlabel="x", ylabel="rate", ylim=(0.0, 1.0))  # fmt: skip
    heatmaps(
        tmp_path / "heat.png", title="confusion " * 20, panels={name: [[i * j for j in range(5)] for i in range(5)]
                                                                for name in list(series)[:3]},
        row_labels=[f"row {i}" for i in range(5)], col_labels=[f"column {j} label" for j in range(5)],
        xlabel="predicted", ylabel="answer",
    )  # fmt: skip
    scatter_panels(
        tmp_path / "scatter.png", title="judge vs experts " * 10,
        panels={name: ([0, 1, 5, 5], [0, 2, 5, 4]) for name in list(series)[:3]}, xlabel="judge",
        ylabel="experts", lim=(0.0, 5.0), notes={name: "Spearman 0.8" for name in series},
    )  # fmt: skip
    assert_figures_fit(plot_record, expected=3)


def test_every_png_is_drawn_by_the_one_helper():
    """No module but builders/report/plots.py draws with matplotlib."""
    drawing = re.compile(r"^\s*(?:import matplotlib|from matplotlib)", re.M)
    users = sorted(
        str(path.relative_to(ROOT))
        for folder in ("builders", "bqa", "marinelife16k", "metrics")
        for path in (ROOT / folder).rglob("*.py")
        if drawing.search(path.read_text(encoding="utf-8"))
    )
    assert users == ["builders/report/plots.py"]


def test_a_bar_without_a_number_is_no_data_inside_the_axes(tmp_path, plot_record):
    grouped_bars(tmp_path / "x.png", title="t", categories=["a", "b"], series={"m": [Bar(None), Bar(0.5)]},
                 xlabel="x", ylabel="y", ylim=(0.0, 1.0))  # fmt: skip
    assert_figures_fit(plot_record, expected=1)


def test_long_category_labels_do_not_overlap(tmp_path, plot_record):
    # BQA's ethnicity groups with one model: the narrowest figure with the longest labels.
    groups = ["White", "Black or African American", "American Indian or Alaska Native", "Asian",
              "Native Hawaiian or Other Pacific Islander", "Hispanic or Latino", "Other"]  # fmt: skip
    grouped_bars(tmp_path / "ethnicity.png", title="BQA error rate by ethnicity", categories=groups,
                 series={"m": [Bar(0.5, (0.2, 0.8), 3)] * len(groups)}, xlabel="ethnicity", ylabel="error rate",
                 ylim=(0.0, 1.0))  # fmt: skip
    assert_figures_fit(plot_record, expected=1)
