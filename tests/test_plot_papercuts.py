"""Plot papercuts a newcomer saw in the reports (issue 42): a 0.0 error rate drew no bar, two equal
judge scores got a zero-width interval, the statistics' split legend was titled "model" and category
labels broke mid-word. Each figure is drawn for real and read back from its PNG or its Figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from PIL import Image

import builders.report.plots as plots
from builders.report.plots import Bar, grouped_bars
from builders.scoring.stats import mean_interval

FIRST_SERIES = tuple(round(255 * c) for c in to_rgb("C0"))  # matplotlib's first colour, #1f77b4


def series_pixels(path: Path) -> int:
    rgb = np.asarray(Image.open(path).convert("RGB")).astype(int)
    return int((np.abs(rgb - np.array(FIRST_SERIES)).sum(axis=2) <= 6).sum())


def test_a_zero_error_rate_draws_a_visible_bar(tmp_path):
    """Same canvas, same legend: the only difference in the first series' colour is the bar itself."""
    common = {"title": "error rate", "categories": ["Female", "Male"], "xlabel": "gender", "ylabel": "rate",
              "ylim": (0.0, 1.0)}  # fmt: skip
    zero = grouped_bars(tmp_path / "zero.png", series={"m": [Bar(0.0, (0.0, 0.4), 6), Bar(None)]}, **common)
    none = grouped_bars(tmp_path / "none.png", series={"m": [Bar(None), Bar(None)]}, **common)
    assert series_pixels(zero) >= series_pixels(none) + 30


def test_two_equal_scores_get_no_zero_width_interval():
    assert mean_interval([4.0, 4.0]) is None
    assert mean_interval([3.0, 3.0, 3.0]) is None
    low, high = mean_interval([3.0, 5.0])  # scipy.stats.t.interval(0.95, 1, loc=4, scale=1) = 4 -+ 12.706
    assert (low, high) == pytest.approx((4 - 12.7062047, 4 + 12.7062047), abs=1e-6)


def test_labels_wrap_between_words_and_the_legend_says_what_the_series_are(tmp_path, monkeypatch):
    figures = []
    save = plots._save
    monkeypatch.setattr(plots, "_save", lambda fig, path: (figures.append(fig), save(fig, path))[1])
    categories = ["central_object_appearance", "camera_object_open_ended", "lighting"]
    grouped_bars(tmp_path / "q.png", title="questions", categories=categories,
                 series={s: [Bar(3.0), Bar(1.0), Bar(2.0)] for s in ("train", "test")},
                 xlabel="question type", ylabel="questions", legend="split")  # fmt: skip
    (fig,) = figures
    (ax,) = fig.axes
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert [t.replace("\n", "") for t in ticks] == categories
    words = {w for c in categories for w in c.split("_")}
    for tick in ticks:  # every line is whole words joined by underscores
        for line in tick.split("\n"):
            assert all(part in words for part in line.split("_") if part), tick
    assert fig.legends[0].get_title().get_text() == "split"
