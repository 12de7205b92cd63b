"""A run's number beside a published cell: the difference, both 95% intervals, a test and a verdict.

An accuracy cell with a given n (BQA: Table 3's split sizes) is a proportion of a count: the paper's
count is taken as ``round(value x n)`` (the nearest count its printed value allows), its Wilson
interval follows, and a two-sided two-proportion z-test (pooled; the same p as Pearson's chi-square on
the 2x2 table without continuity correction) asks whether the run and the paper differ: ``consistent``
at p >= 0.05, else ``differs``. Where the n is only inferred (MarineLife-16K), or absent, or the cell
is a mean judge score, the same numbers are at best rough and the verdict says so
(``no n: rough only``). A cell the paper contradicts itself on is ``flagged`` whatever the test says.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats

from builders.scoring.paper_values import PaperCell
from builders.scoring.stats import wilson_interval

ALPHA = 0.05
CONSISTENT, DIFFERS, ROUGH, FLAGGED = "consistent", "differs", "no n: rough only", "flagged"


def two_proportion_p(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided p of the pooled two-proportion z-test of ``k1/n1`` against ``k2/n2``."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError(f"two-proportion test needs n >= 1 on both sides, got {n1} and {n2}")
    pooled = (k1 + k2) / (n1 + n2)
    spread = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if spread == 0:  # both all right or all wrong: the same
        return 1.0
    z = (k1 / n1 - k2 / n2) / math.sqrt(spread)
    return float(2 * stats.norm.sf(abs(z)))


@dataclass(frozen=True)
class RunValue:
    """The run's side of a cell, on the cell's scale: a proportion's count and n, or a mean and its interval."""

    value: float | None
    n: int
    successes: int | None = None  # accuracy cells
    interval: tuple[float, float] | None = None  # mean judge scores: the result's own interval


@dataclass(frozen=True)
class CellComparison:
    table: str
    paper_row: str
    column: str
    paper: float
    paper_n: int | None
    n_inferred: bool
    paper_interval: list[float] | None
    run: float | None
    run_n: int
    run_interval: list[float] | None
    difference: float | None  # run minus paper, on the cell's scale
    p_value: float | None
    verdict: str
    flag: str | None
    line: int
    scale_top: float  # the top of the cell's scale: 1 (proportion), 100 (percent), 5 (judge score)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(cell: PaperCell, run: RunValue) -> CellComparison:
    """The run beside one published cell (see the module's docstring for the rules)."""
    top = cell.scale[1] if cell.scale else 1.0
    paper_interval = run_interval = p_value = None
    if run.successes is not None and run.n > 0:
        run_interval = [top * x for x in wilson_interval(run.successes, run.n)]
    elif run.interval is not None:
        run_interval = list(run.interval)
    if cell.measure == "accuracy" and cell.n:
        paper_k = round(cell.value / top * cell.n)
        paper_interval = [top * x for x in wilson_interval(paper_k, cell.n)]
        if run.successes is not None and run.n > 0:
            p_value = two_proportion_p(run.successes, run.n, paper_k, cell.n)
    if cell.flag:
        verdict = FLAGGED
    elif p_value is None or cell.n_inferred:
        verdict = ROUGH
    else:
        verdict = CONSISTENT if p_value >= ALPHA else DIFFERS
    return CellComparison(
        table=cell.table,
        paper_row=cell.row,
        column=cell.column,
        paper=cell.value,
        paper_n=cell.n,
        n_inferred=cell.n_inferred,
        paper_interval=paper_interval,
        run=run.value,
        run_n=run.n,
        run_interval=run_interval,
        difference=None if run.value is None else run.value - cell.value,
        p_value=p_value,
        verdict=verdict,
        flag=cell.flag,
        line=cell.line,
        scale_top=top,
    )
