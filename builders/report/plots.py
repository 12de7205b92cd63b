"""PNG figures for the reports: grouped bars with interval error bars, count heatmaps, and score scatters.

The one plot helper of every report, leaderboard, human-study and demo PNG. Drawn on matplotlib's Agg
canvas directly (no pyplot, no global backend state), so reports can be written from any thread and
on machines without a display. Every figure has a title, axis labels, a legend naming the models and,
on bars, the number of items behind each bar. What keeps every figure readable:

- a fixed canvas: the PNG is exactly the figure's size (no ``bbox_inches="tight"``, which grew one
  report's canvas to 878x1830 to hold an interval far off the scale); constrained layout fits the
  title, labels and legend inside it, and the figure is sized so that it can;
- values and intervals stay on the scale: an interval reaching past the axis (a t interval on n=2)
  is cut at the axis and its cut end marked with a triangle, named in the legend;
- labels drawn in the axes (``n=``, "no data") stay inside them.

Files are written through a temporary file and renamed, so a report folder never holds half a PNG.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from builders.files.jsonio import write_file_atomic

DPI = 120
BAR_HEIGHT = 4.8  # inches: every bar chart's canvas is this tall (576 px at DPI)
_LABEL_WIDTH = 16  # characters per line of a category label
_LEGEND_WIDTH = 28  # characters per line of a model's name in the legend


@dataclass(frozen=True)
class Bar:
    """One bar: its height, its interval (drawn as an error bar) and the items behind it."""

    value: float | None
    ci: Sequence[float] | None = None
    n: int | None = None


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)  # attach the Agg canvas explicitly: no dependence on the default backend
    # No bbox_inches="tight": the PNG is the figure's own size, whatever is drawn in it.
    return write_file_atomic(path, lambda tmp: fig.savefig(tmp, format="png", dpi=DPI))


def _wrap(label: str, width: int = _LABEL_WIDTH) -> str:
    """``label`` in lines of about ``width`` characters, broken at spaces and after underscores
    (``central_object_`` / ``appearance``), never inside a word: a long word keeps its own line."""
    lines = textwrap.wrap(label.replace("_", "_ "), width, break_long_words=False)
    return "\n".join(line.replace("_ ", "_") for line in lines) or label


def _clip(low: float, high: float, value: float) -> float:
    return min(max(value, low), high)


def grouped_bars(
    path: str | os.PathLike[str],
    *,
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[Bar]],
    xlabel: str,
    ylabel: str,
    ylim: tuple[float, float] | None = None,
    legend: str = "model",
) -> Path:
    """One group of bars per category, one bar per series (model), error bars from ``Bar.ci``.

    ``ylim``: the scale (e.g. 0-5 for judge scores); bars and intervals are cut to it, a cut interval
    end marked with a triangle. ``n=<items>`` is written above each bar; a bar without a value is
    marked "no data"; a bar of value 0 is a thick line on the axis (a 0.0 error rate is a result, and
    must not look like a missing bar). ``legend``: what the series are (the legend's title).
    """
    if not series:
        raise ValueError(f"{title}: nothing to plot")
    for name, bars in series.items():
        if len(bars) != len(categories):
            raise ValueError(
                f"{title}: series {name!r} has {len(bars)} bars for {len(categories)} categories"
            )
    n_series = len(series)
    width = 0.8 / n_series
    names = [_wrap(name, _LEGEND_WIDTH) for name in series]
    legend_inches = 0.9 + 0.075 * max(len(line) for name in names for line in name.split("\n"))
    fig_width = min(18.0, max(6.4, 1.2 + len(categories) * (0.45 * n_series + 0.5)) + legend_inches)
    fig = Figure(figsize=(fig_width, BAR_HEIGHT), layout="constrained", dpi=DPI)
    ax = fig.add_subplot()
    if ylim is not None:
        low, high = ylim
    else:
        low = 0.0
        high = max((b.ci[1] if b.ci else b.value or 0.0) for s in series.values() for b in s) or 1.0
    span = high - low
    many = len(categories) * n_series > 10
    clipped = False
    cut_below = any(b.value is not None and b.ci and b.ci[0] < low for s in series.values() for b in s)
    for k, (bars, label) in enumerate(zip(series.values(), names, strict=True)):
        xs = [i - 0.4 + width * (k + 0.5) for i in range(len(categories))]
        heights = [_clip(low, high, b.value) if b.value is not None else low for b in bars]
        ends = [
            (_clip(low, high, b.ci[0]), _clip(low, high, b.ci[1])) if b.value is not None and b.ci else None
            for b in bars
        ]
        errors = [
            [max(0.0, h - e[0]) if e else 0.0 for h, e in zip(heights, ends, strict=True)],
            [max(0.0, e[1] - h) if e else 0.0 for h, e in zip(heights, ends, strict=True)],
        ]
        drawn = ax.bar(
            xs, [h - low for h in heights], width * 0.92, bottom=low, label=label,
            yerr=errors if any(ends) else None, capsize=3, error_kw={"linewidth": 1},
        )  # fmt: skip
        color = drawn.patches[0].get_facecolor()
        for x, b, h in zip(xs, bars, heights, strict=True):
            if b.value is not None and h - low < 0.01 * span:  # too flat to see: a line on the axis
                ax.plot([x - width * 0.46, x + width * 0.46], [low, low], color=color, linewidth=4,
                        solid_capstyle="butt", clip_on=False, zorder=3)  # fmt: skip
        for x, b, h, e in zip(xs, bars, heights, ends, strict=True):
            if b.value is None:
                ax.text(x, low + 0.01 * span, "no data", ha="center", va="bottom", rotation=90, fontsize=7)
                continue
            for cut, edge, marker in (
                (b.ci and b.ci[1] > high, high, "^"),
                (b.ci and b.ci[0] < low, low, "v"),
            ):
                if cut:
                    clipped = True
                    ax.plot([x], [edge], marker=marker, color="black", markersize=5, clip_on=False, zorder=3)
            if b.n is not None:
                top = e[1] if e else h
                ax.text(x, top + 0.015 * span, f"n={b.n}", ha="center", va="bottom", fontsize=7,
                        rotation=90 if many else 0)  # fmt: skip
    ax.set_xticks(range(len(categories)), [_wrap(c) for c in categories], fontsize=8)
    # Wrapped to the axes' width: a long title is never clipped by the legend beside the axes.
    ax.set_title(textwrap.fill(title, width=int((fig_width - legend_inches) * 9)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    # Headroom above the scale for the n labels (taller when they stand on end).
    # Room below the scale only for the marks of intervals cut at its bottom.
    ax.set_ylim(low - (0.04 * span if cut_below else 0.0), high + (0.22 if many else 0.12) * span)
    ax.set_yticks([t for t in ax.get_yticks() if low - 1e-9 <= t <= high + 1e-9])  # no tick off the scale
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    handles, labels = ax.get_legend_handles_labels()
    if clipped:
        handles.append(Line2D([], [], marker="^", color="black", linestyle="none", markersize=5))
        labels.append(_wrap("interval cut at the axis", _LEGEND_WIDTH))
    fig.legend(handles, labels, title=legend, fontsize=8, title_fontsize=8, loc="outside right upper")
    return _save(fig, Path(path))


def heatmaps(
    path: str | os.PathLike[str],
    *,
    title: str,
    panels: Mapping[str, Sequence[Sequence[int]]],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    xlabel: str,
    ylabel: str,
    total_label: str = "total",
) -> Path:
    """One annotated count heatmap per panel (model), side by side on one colour scale.

    Each panel's title is its name and its total count (``total_label``).
    """
    if not panels:
        raise ValueError(f"{title}: nothing to plot")
    for name, matrix in panels.items():
        if len(matrix) != len(row_labels) or any(len(r) != len(col_labels) for r in matrix):
            raise ValueError(f"{title}: panel {name!r} is not {len(row_labels)} x {len(col_labels)}")
    vmax = max(1, max(max(r) for m in panels.values() for r in m))
    cell = 0.75
    fig = Figure(
        figsize=(min(20.0, 1.6 + len(panels) * (len(col_labels) * cell + 1.0)), 1.8 + len(row_labels) * cell),
        layout="constrained",
        dpi=DPI,
    )
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    images = []  # one per panel; all share vmin/vmax, so the colour bar of one is every panel's
    for ax, (name, matrix) in zip(axes, panels.items(), strict=True):
        images.append(ax.imshow(matrix, cmap="Blues", vmin=0, vmax=vmax, aspect="auto"))
        for i, row in enumerate(matrix):
            for j, count in enumerate(row):
                ax.text(
                    j, i, str(count), ha="center", va="center", fontsize=8,
                    color="white" if count > 0.6 * vmax else "black",
                )  # fmt: skip
        ax.set_xticks(range(len(col_labels)), col_labels, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(row_labels)), row_labels, fontsize=8)
        ax.set_title(_wrap(f"{name} ({total_label}: {sum(map(sum, matrix))})", _LEGEND_WIDTH), fontsize=9)
        ax.set_xlabel(xlabel)
    axes[0].set_ylabel(ylabel)
    bar = fig.colorbar(images[-1], ax=list(axes), label="count", shrink=0.8)
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    fig.suptitle(textwrap.fill(title, width=int(fig.get_figwidth() * 9)))
    return _save(fig, Path(path))


def scatter_panels(
    path: str | os.PathLike[str],
    *,
    title: str,
    panels: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    lim: tuple[float, float],
    notes: Mapping[str, str] | None = None,
) -> Path:
    """One scatter per panel (``{name: (xs, ys)}``) on a shared square scale with the y = x line;
    points that coincide are drawn once, sized by how many they are. ``notes``: a line per panel
    (e.g. its correlation), under its title."""
    if not panels:
        raise ValueError(f"{title}: nothing to plot")
    for name, (xs, ys) in panels.items():
        if len(xs) != len(ys):
            raise ValueError(f"{title}: panel {name!r} has {len(xs)} x and {len(ys)} y values")
    fig = Figure(figsize=(min(20.0, 0.8 + 3.4 * len(panels)), 3.9), layout="constrained", dpi=DPI)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (name, (xs, ys)) in zip(axes, panels.items(), strict=True):
        counts: dict[tuple[float, float], int] = {}
        for x, y in zip(xs, ys, strict=True):
            counts[(x, y)] = counts.get((x, y), 0) + 1
        ax.plot(lim, lim, color="0.6", linewidth=1, linestyle="--", zorder=0)
        if counts:
            points = list(counts)
            ax.scatter(
                [p[0] for p in points], [p[1] for p in points], s=[24 * counts[p] for p in points], alpha=0.7
            )
        ax.set_xlim(lim[0] - 0.2, lim[1] + 0.2)
        ax.set_ylim(lim[0] - 0.2, lim[1] + 0.2)
        ax.set_aspect("equal")
        label = _wrap(f"{name} (n={len(xs)})", _LEGEND_WIDTH)
        if notes and notes.get(name):
            label += "\n" + notes[name]
        ax.set_title(label, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    fig.suptitle(textwrap.fill(title, width=int(fig.get_figwidth() * 9)))
    return _save(fig, Path(path))


def frequency_panels(
    path: str | os.PathLike[str],
    *,
    title: str,
    panels: Mapping[str, Mapping[str, int]],
    top: int = 10,
    columns: int = 2,
    xlabel: str = "videos",
) -> Path:
    """One horizontal bar chart per panel (``{name: {value: count}}``, most frequent first): its
    ``top`` values with their counts written at the bars; the panel title says how many distinct
    values there are and how many the chart leaves out. A panel without values says so."""
    if not panels:
        raise ValueError(f"{title}: nothing to plot")
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(6.2 * columns, 0.3 + rows * (0.32 * top + 1.3)), layout="constrained", dpi=DPI)
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (name, counts) in zip(axes, panels.items(), strict=False):
        items = list(counts.items())[:top]
        shown = f"{len(counts)} distinct" + (f", top {top} shown" if len(counts) > top else "")
        ax.set_title(f"{name} ({shown})", fontsize=9)
        if not items:
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        labels = [textwrap.shorten(label, 42, placeholder="...") for label, _ in items]
        values = [count for _, count in items]
        positions = range(len(items))
        ax.barh(positions, values, color="tab:blue")
        ax.set_yticks(positions, labels, fontsize=7)
        ax.set_ylim(top - 0.5, -0.5)  # most frequent on top; bars as thick in every panel
        for y, value in zip(positions, values, strict=True):
            ax.text(value, y, f" {value}", va="center", fontsize=7)
        ax.set_xlim(0, max(values) * 1.18)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(xlabel, fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    for ax in axes[len(panels) :]:
        ax.set_axis_off()
    fig.suptitle(title)
    return _save(fig, Path(path))


def count_histograms(
    path: str | os.PathLike[str],
    *,
    title: str,
    panels: Mapping[str, tuple[Mapping[int, int], str]],
    ylabel: str = "captions",
    references: Mapping[str, tuple[float, str]] | None = None,
) -> Path:
    """One bar histogram per panel: ``{name: ({value: count}, xlabel)}`` (integer values, e.g. words
    or sentences per caption), each titled with its n and its mean drawn as a line; ``references``
    adds a labelled line per panel (e.g. the paper's mean)."""
    if not panels:
        raise ValueError(f"{title}: nothing to plot")
    fig = Figure(figsize=(5.6 * len(panels), 3.9), layout="constrained", dpi=DPI)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (name, (counts, xlabel)) in zip(axes, panels.items(), strict=True):
        n = sum(counts.values())
        if not n:
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(name, fontsize=9)
            continue
        mean = sum(k * c for k, c in counts.items()) / n
        ax.bar(list(counts), list(counts.values()), width=0.9, color="tab:blue")
        ax.axvline(mean, color="tab:red", linestyle="--", linewidth=1, label=f"mean {mean:.2f}")
        low: float = min(counts)
        high: float = max(counts)
        if references and name in references:
            value, label = references[name]
            ax.axvline(value, color="0.35", linestyle=":", linewidth=1.5, label=f"{label} {value:g}")
            low, high = min(low, value), max(high, value)
        ax.set_xlim(low - 1, high + 1)
        ax.set_title(f"{name} (n={n})", fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    fig.suptitle(title)
    return _save(fig, Path(path))
