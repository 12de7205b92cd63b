"""Small statistics without scipy: Wilson intervals, the chi-square survival function and test.

scipy is only a test dependency; the incomplete gamma function below is checked against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

# Cochran's rule: the chi-square approximation is unreliable when an expected cell count is below 5.
MIN_EXPECTED_COUNT = 5.0


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    Unlike the normal (Wald) interval it stays inside [0, 1] and is sensible at 0 or n successes,
    which matters for small demographic groups.
    """
    if n <= 0:
        raise ValueError(f"Wilson interval needs n >= 1, got n={n}")
    if not 0 <= successes <= n:
        raise ValueError(f"Wilson interval needs 0 <= successes <= n, got {successes} of {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    z2n = z * z / n
    center = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    return max(0.0, center - half), min(1.0, center + half)


def proportion(successes: int, n: int, confidence: float = 0.95) -> tuple[float | None, list[float] | None]:
    """``(successes / n, [low, high])`` with the Wilson interval; ``(None, None)`` when n is 0.

    Lists and plain floats, so that metric results stay JSON-serializable.
    """
    if n == 0:
        return None, None
    return successes / n, list(wilson_interval(successes, n, confidence))


def regularized_gamma_q(a: float, x: float) -> float:
    """Upper regularized incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a).

    Series for P when x < a + 1, Lentz's continued fraction for Q otherwise (Numerical Recipes 6.2);
    both converge fast in their region, so Q keeps full relative precision in the far tail.
    """
    if a <= 0:
        raise ValueError(f"Q(a, x) needs a > 0, got a={a}")
    if x < 0:
        raise ValueError(f"Q(a, x) needs x >= 0, got x={x}")
    if x == 0:
        return 1.0
    log_prefactor = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        denom = a
        for _ in range(10_000):
            denom += 1.0
            term *= x / denom
            total += term
            if abs(term) < abs(total) * 1e-17:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return math.exp(log_prefactor) * h


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X ~ chi-square with ``dof`` degrees of freedom."""
    if dof < 1:
        raise ValueError(f"chi-square needs dof >= 1, got {dof}")
    return regularized_gamma_q(dof / 2.0, max(0.0, statistic) / 2.0)


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
    """Pearson's test that rows and columns of a contingency table of counts are independent.

    Equals ``scipy.stats.chi2_contingency(table, correction=False)``. Every row and column needs a
    positive total: an all-zero row or column has no expected count to compare against.
    """
    rows = [list(r) for r in table]
    if len(rows) < 2 or len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
        raise ValueError("chi-square test needs a rectangular table of at least 2 x 2 counts")
    if any(c < 0 for r in rows for c in r):
        raise ValueError("chi-square test needs non-negative counts")
    row_totals = [sum(r) for r in rows]
    col_totals = [sum(col) for col in zip(*rows, strict=True)]
    total = sum(row_totals)
    if 0 in row_totals or 0 in col_totals:
        raise ValueError(
            f"chi-square test is undefined with an all-zero row or column "
            f"(row totals {row_totals}, column totals {col_totals})"
        )
    expected = tuple(tuple(rt * ct / total for ct in col_totals) for rt in row_totals)
    statistic = math.fsum(
        (o - e) ** 2 / e for r, er in zip(rows, expected, strict=True) for o, e in zip(r, er, strict=True)
    )
    dof = (len(rows) - 1) * (len(col_totals) - 1)
    return ChiSquareResult(statistic, dof, chi2_sf(statistic, dof), expected)
