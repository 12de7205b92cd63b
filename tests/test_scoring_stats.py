"""Wilson intervals and the chi-square test, checked against scipy (a test-only dependency)."""

from __future__ import annotations

import math
import random

import pytest
from scipy import special, stats

from builders.scoring.stats import (
    chi2_sf,
    chi_square_independence,
    proportion,
    regularized_gamma_q,
    wilson_interval,
)


@pytest.mark.parametrize("n", [1, 2, 7, 30, 736, 1443])
def test_wilson_interval_matches_scipy(n):
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = wilson_interval(k, n)
        assert low == pytest.approx(expected.low, abs=1e-12)
        assert high == pytest.approx(expected.high, abs=1e-12)
        assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_interval_hand_worked():
    # 7 of 10 at 95%: z = 1.959964, centre (0.7 + z^2/20) / (1 + z^2/10), half-width per Wilson (1927).
    z = 1.959963984540054
    centre = (0.7 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.7 * 0.3 / 10 + z * z / 400)
    assert wilson_interval(7, 10) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert wilson_interval(7, 10, confidence=0.99)[0] < centre - half


def test_proportion_is_json_friendly_and_handles_empty():
    value, ci = proportion(3, 4)
    assert value == 0.75 and isinstance(ci, list) and len(ci) == 2
    assert proportion(0, 0) == (None, None)


@pytest.mark.parametrize("k, n, confidence", [(1, 0, 0.95), (5, 4, 0.95), (-1, 4, 0.95), (1, 4, 1.0)])
def test_wilson_interval_rejects_bad_input(k, n, confidence):
    with pytest.raises(ValueError):
        wilson_interval(k, n, confidence)


def test_regularized_gamma_q_matches_scipy():
    for a in (0.5, 1.0, 1.5, 2.0, 3.0, 5.5, 10.0, 50.0, 200.0):
        for x in (1e-8, 0.01, 0.5, 1.0, 2.0, max(0.1, a - 1), a, a + 1, a + 3, 2 * a, 5 * a + 10, 300.0):
            expected = special.gammaincc(a, x)
            if expected > 1e-290:
                assert regularized_gamma_q(a, x) == pytest.approx(expected, rel=1e-10), (a, x)
    assert regularized_gamma_q(3.0, 0.0) == 1.0


def test_chi2_sf_matches_scipy_including_far_tail():
    for dof in (1, 2, 3, 6, 10, 25):
        for statistic in (0.0, 0.01, 0.5, 1.0, 3.84, 7.8, 20.0, 60.0, 150.0):
            assert chi2_sf(statistic, dof) == pytest.approx(
                stats.chi2.sf(statistic, dof), rel=1e-10, abs=1e-300
            )
    assert chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-12)


def test_chi_square_independence_matches_scipy():
    rng = random.Random(3)
    tables = [[[10, 20], [30, 25], [5, 9]], [[1, 3], [2, 1]], [[50, 150], [10, 40], [0, 7], [3, 1]]]
    tables += [[[rng.randint(1, 60) for _ in range(2)] for _ in range(rng.randint(2, 7))] for _ in range(10)]
    for table in tables:
        ours = chi_square_independence(table)
        ref = stats.chi2_contingency(table, correction=False)
        assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert ours.dof == ref.dof
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert ours.min_expected == pytest.approx(ref.expected_freq.min(), rel=1e-12)


@pytest.mark.parametrize(
    "table, message",
    [
        ([[1, 2]], "at least 2 x 2"),
        ([[1, 2], [3]], "rectangular"),
        ([[0, 0], [1, 2]], "all-zero"),
        ([[1, 0], [2, 0]], "all-zero"),
        ([[1, -1], [2, 3]], "non-negative"),
    ],
)
def test_chi_square_rejects_degenerate_tables(table, message):
    with pytest.raises(ValueError, match=message):
        chi_square_independence(table)
