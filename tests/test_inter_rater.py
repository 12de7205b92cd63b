"""Inter-rater agreement (builders.scoring.inter_rater) against published worked examples and two
independent implementations: ``statsmodels`` (Fleiss' kappa) and ``krippendorff`` (alpha)."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from builders.scoring.inter_rater import category_counts, fleiss_kappa, krippendorff_alpha, observed_agreement

# Fleiss (1971) as worked on Wikipedia's "Fleiss' kappa" page: 10 items, 14 raters, 5 categories;
# P-bar = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers, 12 units,
# missing values; alpha = 0.743 (nominal) and 0.849 (interval).
N = None
KRIPPENDORFF_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def test_fleiss_kappa_matches_the_worked_example():
    assert observed_agreement(FLEISS_TABLE) == pytest.approx(0.378, abs=5e-4)
    assert fleiss_kappa(FLEISS_TABLE) == pytest.approx(0.210, abs=5e-4)


def test_krippendorff_alpha_matches_the_published_example():
    assert krippendorff_alpha(KRIPPENDORFF_C, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(KRIPPENDORFF_C, "interval") == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("seed", range(8))
def test_against_statsmodels_and_krippendorff_on_random_ratings(seed):
    rng = random.Random(seed)
    raters, items, categories = rng.randint(2, 6), rng.randint(5, 40), rng.randint(2, 6)
    truth = [rng.randrange(categories) for _ in range(items)]
    ratings = [[t if rng.random() < 0.6 else rng.randrange(categories) for t in truth] for _ in range(raters)]
    table = category_counts([list(col) for col in zip(*ratings, strict=True)], categories)
    assert fleiss_kappa(table) == pytest.approx(statsmodels_fleiss_kappa(np.array(table)), abs=1e-12)
    with_gaps = [[v if rng.random() > 0.2 else None for v in row] for row in ratings]
    data = np.array([[np.nan if v is None else v for v in row] for row in with_gaps], dtype=float)
    for level in ("nominal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(with_gaps, level) == pytest.approx(expected, abs=1e-12)


def test_undefined_and_malformed_inputs():
    assert fleiss_kappa([[3, 0], [3, 0]]) is None  # every rating in one category: chance agreement 1
    assert krippendorff_alpha([[2, 2], [2, 2]], "interval") is None
    with pytest.raises(ValueError, match="same number of ratings per item: item 0 has 3, item 1 has 2"):
        fleiss_kappa([[3, 0], [1, 1]])
    with pytest.raises(ValueError, match="item 1: category 4 is not in 0..3"):
        category_counts([[0, 1], [4, 0]], 4)
    with pytest.raises(ValueError, match="no item has two or more ratings"):
        krippendorff_alpha([[1, None], [None, 2]])
    with pytest.raises(ValueError, match="level must be"):
        krippendorff_alpha([[1, 2], [1, 2]], "ordinal")  # type: ignore[arg-type]
