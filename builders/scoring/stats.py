"""Proportions with Wilson intervals and Pearson's chi-square test of independence, on scipy.stats.

Thin wrappers that fix the project's conventions: plain floats and lists (metric results stay
JSON-serializable), ``(None, None)`` for an empty group, and errors that say what is wrong with a
table instead of scipy's generic ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

# Cochran's rule: the chi-square approximation is unreliable when an expected cell count is below 5.
MIN_EXPECTED_COUNT = 5.0


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``
    (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``).

    Unlike the normal (Wald) interval it stays inside [0, 1] and is sensible at 0 or n successes,
    which matters for small demographic groups.
    """
    if n <= 0:
        raise ValueError(f"Wilson interval needs n >= 1, got n={n}")
    if not 0 <= successes <= n:
        raise ValueError(f"Wilson interval needs 0 <= successes <= n, got {successes} of {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def proportion(successes: int, n: int, confidence: float = 0.95) -> tuple[float | None, list[float] | None]:
    """``(successes / n, [low, high])`` with the Wilson interval; ``(None, None)`` when n is 0.

    Lists and plain floats, so that metric results stay JSON-serializable.
    """
    if n == 0:
        return None, None
    return successes / n, list(wilson_interval(successes, n, confidence))


@dataclass(frozen=True)
class ChiSquareResult:
    """Pearson chi-square test of independence (no continuity correction)."""

    statistic: float
    dof: int
    p_value: float
    expected: tuple[tuple[float, ...], ...]

    @property
    def min_expected(self) -> float:
        return min(min(row) for row in self.expected)


def chi_square_independence(table: Sequence[Sequence[int]]) -> ChiSquareResult:
    """Pearson's test that rows and columns of a contingency table of counts are independent:
    ``scipy.stats.chi2_contingency(table, correction=False)``.

    Every row and column needs a positive total: an all-zero row or column has no expected count to
    compare against.
    """
    rows = [list(r) for r in table]
    if len(rows) < 2 or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
        raise ValueError("chi-square test needs a rectangular table of at least 2 x 2 counts")
    if any(c < 0 for r in rows for c in r):
        raise ValueError("chi-square test needs non-negative counts")
    row_totals = [sum(r) for r in rows]
    col_totals = [sum(col) for col in zip(*rows, strict=True)]
    if 0 in row_totals or 0 in col_totals:
        raise ValueError(
            f"chi-square test is undefined with an all-zero row or column "
            f"(row totals {row_totals}, column totals {col_totals})"
        )
    result = stats.chi2_contingency(rows, correction=False)
    expected = tuple(tuple(float(e) for e in row) for row in result.expected_freq)
    return ChiSquareResult(float(result.statistic), int(result.dof), float(result.pvalue), expected)
