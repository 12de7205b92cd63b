"""What every PNG a report or the demo writes must satisfy, checked on the figure as drawn (issue 29:
a 878x1830 caption figure, mostly blank, an interval far off the 0-5 axis, ``n=`` labels above the
title, "constrained_layout not applied").

:func:`figure_problems` reads only matplotlib's own geometry of a drawn figure (window extents, data
limits), never the plot helper's code, and :func:`spy_on_figures` records it for every figure the
helper saves, with the warnings raised while drawing: in-process through a pytest fixture
(``plot_record`` in conftest.py) or in a subprocess (``python tests/plot_probe.py RECORD.json ARGS``).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from matplotlib.collections import LineCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.text import Text
from PIL import Image

TOLERANCE_PX = 1.0


def _inside(inner, outer, tol: float = TOLERANCE_PX) -> bool:
    return (
        inner.x0 >= outer.x0 - tol
        and inner.y0 >= outer.y0 - tol
        and inner.x1 <= outer.x1 + tol
        and inner.y1 <= outer.y1 + tol
    )


def figure_problems(fig: Figure) -> list[str]:
    """Everything drawn outside the figure, axes labels outside their axes, intervals off the scale."""
    renderer = fig.canvas.get_renderer()
    problems = []
    whole = fig.bbox
    drawn = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)  # inches -> pixels
    if not _inside(drawn, whole):
        problems.append(
            f"artists reach outside the {whole.width:.0f}x{whole.height:.0f} figure: {drawn.bounds}"
        )
    for child in fig.get_children():
        if (
            isinstance(child, Text)
            and child.get_text()
            and not _inside(child.get_window_extent(renderer), whole)
        ):
            problems.append(f"figure text {child.get_text()!r} outside the figure")
    for number, ax in enumerate(fig.axes):
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        box = ax.get_window_extent(renderer)
        ticks = [
            t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_visible() and t.get_text()
        ]
        for left, right in zip(ticks, ticks[1:], strict=False):
            if left.x1 > right.x0 + TOLERANCE_PX and left.y1 > right.y0 and right.y1 > left.y0:
                problems.append(f"axes {number}: x tick labels overlap")
        for text in ax.texts:
            if text.get_text() and not _inside(text.get_window_extent(renderer), box):
                problems.append(f"axes {number}: label {text.get_text()!r} outside the axes")
        low, high = sorted(ax.get_ylim())
        for container in ax.containers:
            if isinstance(container, ErrorbarContainer):
                for part in container.lines[2]:
                    if isinstance(part, LineCollection):
                        ys = [y for segment in part.get_segments() for _, y in segment]
                        if ys and (min(ys) < low - 1e-9 or max(ys) > high + 1e-9):
                            problems.append(
                                f"axes {number}: an interval runs off the axis ({min(ys)}..{max(ys)})"
                            )
        for line in ax.lines:  # markers (interval caps, cut marks): their points on the axes' scale
            ys = [float(y) for y in line.get_ydata()]
            marked = line.get_marker() not in (None, "None", "")
            if marked and ys and (min(ys) < low - 1e-9 or max(ys) > high + 1e-9):
                problems.append(f"axes {number}: a marker off the axis ({min(ys)}..{max(ys)})")
        for patch in ax.patches:
            if not _inside(patch.get_window_extent(renderer), box):
                problems.append(f"axes {number}: a bar outside the axes")
    return problems


def record_figure(fig: Figure, path: Path, caught: list[warnings.WarningMessage]) -> dict[str, Any]:
    """One figure's record: the PNG's size, the figure's own size at its dpi, its problems."""
    with Image.open(path) as png:
        size = list(png.size)
    intended = [round(fig.get_figwidth() * fig.dpi), round(fig.get_figheight() * fig.dpi)]
    return {
        "path": str(path),
        "size": size,
        "intended": intended,
        "problems": figure_problems(fig),
        "warnings": [str(w.message) for w in caught],
        "legend_titles": [legend.get_title().get_text() for legend in fig.legends],
    }


def spy_on_figures(plots_module: Any, setattr_: Callable[[Any, str, Any], None], record: list) -> None:
    """Wrap ``plots_module._save`` (the one place figures become PNG files) so that every figure saved
    is checked after it is written; ``setattr_`` is monkeypatch.setattr or setattr."""
    save = plots_module._save

    def checked_save(fig: Figure, path: Path) -> Path:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            written = save(fig, path)
            entry = record_figure(fig, Path(written), caught)
        record.append(entry)
        return written

    setattr_(plots_module, "_save", checked_save)


def assert_figures_fit(record: list[dict[str, Any]], expected: int | None = None) -> None:
    """Every recorded PNG is exactly its intended size, with no problem and no warning."""
    assert record, "no figure was written"
    if expected is not None:
        assert len(record) == expected, [r["path"] for r in record]
    for entry in record:
        assert entry["size"] == entry["intended"], entry
        assert entry["problems"] == [], entry
        assert entry["warnings"] == [], entry


def read_record(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))
