"""Wilson intervals and the chi-square test (scipy.stats underneath) against published values,
hand-worked examples and closed forms written out here; the cluster-robust interval and the paired
tests (exact McNemar, sign test) against hand-worked examples and statsmodels."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from builders.scoring.stats import (
    chi_square_independence,
    cluster_interval,
    mcnemar_exact,
    mean_interval,
    proportion,
    sign_test,
    wilson_interval,
)

Z95 = 1.959963984540054  # the 97.5% standard normal quantile


def wilson_by_formula(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson (1927), written out: centre (p + z^2/2n) / (1 + z^2/n), half-width
    z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)."""
    p, z2n = k / n, z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.mark.parametrize("n", [1, 2, 7, 30, 736, 1443])
def test_wilson_interval_matches_the_formula(n):
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        expected_low, expected_high = wilson_by_formula(k, n)
        low, high = wilson_interval(k, n)
        assert low == pytest.approx(expected_low, abs=1e-12)
        assert high == pytest.approx(expected_high, abs=1e-12)
        assert 0.0 <= low <= k / n <= high <= 1.0


@pytest.mark.parametrize(
    "k, n, published",
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score).
    [
        (81, 263, (0.2553, 0.3662)),
        (15, 148, (0.0624, 0.1605)),
        (0, 20, (0.0, 0.1611)),
        (1, 29, (0.0061, 0.1718)),
    ],
)
def test_wilson_interval_published_values(k, n, published):
    assert wilson_interval(k, n) == pytest.approx(published, abs=5e-5)


def test_wilson_interval_hand_worked():
    # 7 of 10 at 95%: z = 1.959964, centre (0.7 + z^2/20) / (1 + z^2/10), half-width per Wilson (1927).
    z = 1.959963984540054
    centre = (0.7 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.7 * 0.3 / 10 + z * z / 400)
    assert wilson_interval(7, 10) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert wilson_interval(7, 10, confidence=0.99)[0] < centre - half
    # At 99% only z changes (2.575829, the 99.5% quantile).
    assert wilson_interval(7, 10, confidence=0.99) == pytest.approx(
        wilson_by_formula(7, 10, 2.5758293035489), abs=1e-12
    )


def test_proportion_is_json_friendly_and_handles_empty():
    value, ci = proportion(3, 4)
    assert value == 0.75 and isinstance(ci, list) and len(ci) == 2
    assert all(type(bound) is float for bound in ci)
    assert proportion(0, 0) == (None, None)


@pytest.mark.parametrize("k, n, confidence", [(1, 0, 0.95), (5, 4, 0.95), (-1, 4, 0.95), (1, 4, 1.0)])
def test_wilson_interval_rejects_bad_input(k, n, confidence):
    with pytest.raises(ValueError):
        wilson_interval(k, n, confidence)


def test_chi_square_2x2_hand_worked():
    # Rows 30, 70; columns 40, 60; N = 100: expected 12, 18, 28, 42.
    # Statistic 4/12 + 4/18 + 4/28 + 4/42 = N (ad - bc)^2 / (r1 r2 c1 c2) = 100 * 200^2 / 5_040_000.
    result = chi_square_independence([[10, 20], [30, 40]])
    assert result.statistic == pytest.approx(4e6 / 5.04e6, rel=1e-12)
    assert result.dof == 1
    assert [e for row in result.expected for e in row] == pytest.approx([12, 18, 28, 42])
    assert result.min_expected == 12
    # One degree of freedom: P(X >= x) = erfc(sqrt(x / 2)).
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(result.statistic / 2)), rel=1e-12)


def test_chi_square_p_value_closed_forms_including_far_tail():
    # dof 1: erfc(sqrt(x/2)); dof 2: exp(-x/2); dof 4: exp(-x/2) (1 + x/2).
    sf = {
        1: lambda x: math.erfc(math.sqrt(x / 2)),
        2: lambda x: math.exp(-x / 2),
        4: lambda x: math.exp(-x / 2) * (1 + x / 2),
    }
    tables = {
        1: [[10, 20], [30, 25]],
        2: [[10, 20], [30, 25], [5, 9]],
        4: [[50, 150, 9], [10, 40, 30], [3, 1, 20]],
    }
    for dof, table in tables.items():
        result = chi_square_independence(table)
        assert result.dof == dof
        assert result.p_value == pytest.approx(sf[dof](result.statistic), rel=1e-10)
    far = chi_square_independence([[500, 10], [10, 500]])  # statistic ~941.6, p ~1e-206
    assert 0 < far.p_value < 1e-200
    assert far.p_value == pytest.approx(math.erfc(math.sqrt(far.statistic / 2)), rel=1e-10)


def test_chi_square_statistic_and_expected_by_definition():
    rng = random.Random(3)
    tables = [[[10, 20], [30, 25], [5, 9]], [[1, 3], [2, 1]], [[50, 150], [10, 40], [0, 7], [3, 1]]]
    tables += [[[rng.randint(1, 60) for _ in range(2)] for _ in range(rng.randint(2, 7))] for _ in range(10)]
    for table in tables:
        rows, cols = [sum(r) for r in table], [sum(c) for c in zip(*table, strict=True)]
        total = sum(rows)
        expected = [[r * c / total for c in cols] for r in rows]
        statistic = sum(
            (o - e) ** 2 / e
            for orow, erow in zip(table, expected, strict=True)
            for o, e in zip(orow, erow, strict=True)
        )
        ours = chi_square_independence(table)
        assert ours.statistic == pytest.approx(statistic, rel=1e-12)
        assert ours.dof == (len(rows) - 1) * (len(cols) - 1)
        assert ours.min_expected == pytest.approx(min(min(r) for r in expected), rel=1e-12)
        assert type(ours.statistic) is float and type(ours.p_value) is float


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


# --- cluster-robust interval, paired tests ----------------------------------------------------------
def test_cluster_interval_hand_worked():
    # 6 videos of 2: [1,1] [1,1] [1,0] [0,1] [0,0] [0,0]; p = 6/12; residual sums 1, 1, 0, 0, -1, -1.
    # var = G/(G-1) * (1 + 1 + 1 + 1) / n^2 = 6/5 * 4/144 = 1/30; half-width = z * sqrt(1/30).
    right = [1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    ci = cluster_interval(right, [v for v in "abcdef" for _ in range(2)])
    half = Z95 * math.sqrt(1 / 30)
    assert ci == pytest.approx([0.5 - half, 0.5 + half], abs=1e-12)
    # The same answers on 12 different videos: var = 12/11 * 12 * 0.25 / 144, narrower.
    alone = cluster_interval(right, list(range(12)))
    assert alone == pytest.approx(
        [0.5 - Z95 * math.sqrt(12 / 11 * 3 / 144), 0.5 + Z95 * math.sqrt(12 / 11 * 3 / 144)]
    )


def test_cluster_interval_matches_statsmodels_clustered_ols():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(7)
    videos = np.repeat(np.arange(40), rng.integers(6, 10, size=40))  # 6-9 questions per video
    skill = rng.normal(0, 1.2, size=40)[videos]  # answers on one video go together
    right = (rng.normal(size=videos.size) + skill > -0.3).astype(float)
    fit = sm.OLS(right, np.ones_like(right)).fit(cov_type="cluster", cov_kwds={"groups": videos})
    low, high = fit.conf_int(alpha=0.05)[0]
    ci = cluster_interval(right.astype(bool).tolist(), videos.tolist())
    assert ci == pytest.approx([max(0.0, low), min(1.0, high)], abs=1e-10)
    wilson = wilson_interval(int(right.sum()), right.size)
    assert ci[1] - ci[0] > wilson[1] - wilson[0]  # correlated answers: the honest interval is wider


def test_cluster_interval_needs_two_clusters():
    assert cluster_interval([True, False], ["v", "v"]) is None
    assert cluster_interval([], []) is None
    assert cluster_interval([False] * 4, ["a", "a", "b", "b"]) is None  # zero variance: no 0-width claim
    with pytest.raises(ValueError, match="3 outcomes but 2 cluster ids"):
        cluster_interval([True, True, False], ["a", "b"])


def test_mcnemar_exact_hand_worked_and_statsmodels():
    # only A right on 1 item, only B right on 6: p = 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * 8 / 128.
    a = [True] * 5 + [True] + [False] * 6 + [False] * 3
    b = [True] * 5 + [False] + [True] * 6 + [False] * 3
    result = mcnemar_exact(a, b)
    assert (result["both"], result["a_only"], result["b_only"], result["neither"]) == (5, 1, 6, 3)
    assert result["p_value"] == pytest.approx(0.125, abs=1e-12)
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    table = [[result["both"], result["a_only"]], [result["b_only"], result["neither"]]]
    assert result["p_value"] == pytest.approx(contingency.mcnemar(table, exact=True).pvalue, abs=1e-12)
    assert mcnemar_exact([True, False], [True, False])["p_value"] == 1.0  # nothing tells them apart


def test_sign_test_hand_worked():
    # A higher on 5 items, B on 0, one tie: p = 2 * (1/2)^5 = 0.0625.
    result = sign_test([4, 5, 3, 2, 5, 1], [3, 4, 2, 1, 4, 1])
    assert (result["a_higher"], result["b_higher"], result["ties"]) == (5, 0, 1)
    assert result["p_value"] == pytest.approx(0.0625, abs=1e-12)
    assert result["mean_difference"] == pytest.approx(5 / 6)
    assert sign_test([1, 2], [1, 2])["p_value"] == 1.0
    with pytest.raises(ValueError, match="paired scores need the same items: 2 against 1"):
        sign_test([1, 2], [1])


def test_mean_interval_is_students_t():
    values = [2.0, 3.5, 4.0, 1.5, 5.0]
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert mean_interval(values) == pytest.approx([low, high], abs=1e-12)
    assert mean_interval([3.0]) is None
