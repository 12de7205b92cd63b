"""Proportions with Wilson and cluster-robust intervals, Pearson's chi-square test of independence,
and paired tests between two models on the same items (exact McNemar, sign test), on scipy.stats.

Thin wrappers that fix the project's conventions: plain floats and lists (metric results stay
JSON-serializable), ``(None, None)`` for an empty group, and errors that say what is wrong with a
table instead of scipy's generic ones.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


def interval_key(confidence: float) -> str:
    """The key naming an interval by its level: ``ci95`` at 0.95, ``ci90`` at 0.9, ``ci99.5`` at 0.995.

    Metric results write ``<name>_<key>``, so a result computed at another confidence never reads as
    a 95% interval."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return f"ci{round(confidence * 100, 6):g}"


def interval_in(data: Mapping[str, Any], stem: str, confidence: float) -> list[float] | None:
    """The ``stem`` interval of a stored result at ``confidence`` (``<stem>_ci95``...); None if absent.
    ``stem`` "" reads the bare key (``ci95``)."""
    key = interval_key(confidence)
    value = data.get(f"{stem}_{key}" if stem else key)
    return None if value is None else [float(x) for x in value]


@dataclass(frozen=True)
class Rate:
    """A proportion over ``n`` items with its interval at the result's confidence: ``value`` and
    ``interval`` are None when ``n`` is 0."""

    value: float | None
    interval: list[float] | None
    n: int

    @classmethod
    def of(cls, successes: int, n: int, confidence: float = 0.95) -> Rate:
        value, interval = proportion(successes, n, confidence)
        return cls(value, interval, n)


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


def cluster_interval(
    successes: Sequence[bool], clusters: Sequence[Hashable], confidence: float = 0.95
) -> list[float] | None:
    """Cluster-robust (sandwich) normal interval for the proportion of ``successes`` when items come
    in ``clusters`` (MarineLife-16K asks 6-9 questions of one video: they are not independent).

    The variance is that of an intercept-only regression with standard errors clustered by
    ``clusters`` and the usual small-sample factor G/(G-1) (what ``statsmodels`` OLS with
    ``cov_type="cluster"`` gives): ``G/(G-1) * sum_g (sum_{i in g} (y_i - p))^2 / n^2``. Clipped to
    [0, 1]. None when there are no items, fewer than 2 clusters, or every item is right (or every
    one wrong): the sandwich variance is then 0 and a zero-width interval would claim certainty the
    Wilson interval rightly does not. With few clusters (tens) it is itself only approximate.
    """
    if len(successes) != len(clusters):
        raise ValueError(f"{len(successes)} outcomes but {len(clusters)} cluster ids")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = len(successes)
    if n == 0:
        return None
    p = sum(bool(y) for y in successes) / n
    if p in (0.0, 1.0):
        return None
    residuals: dict[Hashable, float] = {}
    for y, g in zip(successes, clusters, strict=True):
        residuals[g] = residuals.get(g, 0.0) + (float(bool(y)) - p)
    groups = len(residuals)
    if groups < 2:
        return None
    variance = groups / (groups - 1) * sum(r * r for r in residuals.values()) / (n * n)
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * math.sqrt(variance)
    return [max(0.0, p - half), min(1.0, p + half)]


def _paired(a: Sequence[object], b: Sequence[object], what: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"paired {what} need the same items: {len(a)} against {len(b)}")


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> dict:
    """Exact McNemar test of two models' right/wrong answers on the same items: under "equally
    accurate" the items only one model got right split 50/50, so the p-value is the two-sided
    binomial test of ``a_only`` successes in ``a_only + b_only`` trials
    (``scipy.stats.binomtest(a_only, a_only + b_only, 0.5)``); 1.0 when no item tells them apart."""
    _paired(a_correct, b_correct, "accuracies")
    both = sum(bool(x) and bool(y) for x, y in zip(a_correct, b_correct, strict=True))
    a_only = sum(bool(x) and not y for x, y in zip(a_correct, b_correct, strict=True))
    b_only = sum(bool(y) and not x for x, y in zip(a_correct, b_correct, strict=True))
    discordant = a_only + b_only
    p = float(stats.binomtest(a_only, discordant, 0.5).pvalue) if discordant else 1.0
    return {
        "test": "exact McNemar (two-sided binomial on discordant items)",
        "n": len(a_correct),
        "both": both,
        "a_only": a_only,
        "b_only": b_only,
        "neither": len(a_correct) - both - discordant,
        "p_value": p,
    }


def sign_test(a_scores: Sequence[float], b_scores: Sequence[float]) -> dict:
    """Two-sided sign test of two models' scores on the same items (e.g. judge scores): ties are
    dropped, and under "neither is better" the items where A scores higher are Binomial(m, 1/2)
    among the m untied ones (``scipy.stats.binomtest``); 1.0 when every item ties.
    ``mean_difference`` is mean(A - B) over all items."""
    _paired(a_scores, b_scores, "scores")
    a_higher = sum(x > y for x, y in zip(a_scores, b_scores, strict=True))
    b_higher = sum(y > x for x, y in zip(a_scores, b_scores, strict=True))
    untied = a_higher + b_higher
    n = len(a_scores)
    return {
        "test": "sign test (two-sided, ties dropped)",
        "n": n,
        "a_higher": a_higher,
        "b_higher": b_higher,
        "ties": n - untied,
        "mean_difference": sum(x - y for x, y in zip(a_scores, b_scores, strict=True)) / n if n else None,
        "p_value": float(stats.binomtest(a_higher, untied, 0.5).pvalue) if untied else 1.0,
    }


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> list[float] | None:
    """Student-t interval for the mean of ``values`` (e.g. judge scores):
    ``mean +- t_{n-1} * sd / sqrt(n)`` (``scipy.stats.t``); None with fewer than 2 values, or when
    they are all equal (two judge scores of 4: sd 0, and a zero-width interval would claim a
    certainty two items cannot give, as :func:`cluster_interval` says of its own)."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    if sd == 0.0:
        return None
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return [mean - half, mean + half]
