"""Agreement statistics against hand-worked values and the definitions written out here."""

from __future__ import annotations

import numpy as np
import pytest

from builders.scoring.agreement import (
    agreement,
    agreement_stats,
    mean_absolute_error,
    pearson,
    quadratic_weighted_kappa,
    spearman,
)


def test_kappa_against_a_hand_worked_confusion_matrix():
    # Scale 0-2 (k=3), weights (i-j)^2/4: w = [[0, .25, 1], [.25, 0, .25], [1, .25, 0]].
    # Pairs (judge, human): (0,0) (0,1) (1,1) (2,1) (2,2) (2,2), n=6.
    # Observed disagreement: (0 + .25 + 0 + .25 + 0 + 0) / 6 = 1/12.
    # Marginals judge (2,1,3)/6, human (1,3,2)/6; expected = sum p_i q_j w_ij
    #   = [2*(1*0 + 3*.25 + 2*1) + 1*(1*.25 + 0 + 2*.25) + 3*(1*1 + 3*.25 + 0)] / 36
    #   = [5.5 + 0.75 + 5.25] / 36 = 11.5/36. kappa = 1 - (1/12)/(11.5/36) = 1 - 3/11.5.
    judge, human = [0, 0, 1, 2, 2, 2], [0, 1, 1, 1, 2, 2]
    assert quadratic_weighted_kappa(judge, human, 0, 2) == pytest.approx(1 - 3 / 11.5)
    # On the 0-5 scale only the weights' denominator changes ((k-1)^2 = 25 instead of 4): same ratio.
    assert quadratic_weighted_kappa(judge, human) == pytest.approx(1 - 3 / 11.5)
    assert quadratic_weighted_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert quadratic_weighted_kappa([3, 3], [3, 3]) is None  # no expected disagreement: undefined
    # Averaged human scores are rounded half up before kappa: 2.5 -> 3, 2.33 -> 2.
    assert quadratic_weighted_kappa([3, 2, 0], [2.5, 2.33, 0.4]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"score 1 .* outside the scale 0-5"):
        quadratic_weighted_kappa([1, 7], [1, 5])


def test_mae_and_ranks_by_hand():
    assert mean_absolute_error([5, 3, 4, 1], [4, 3, 5, 1]) == 0.5
    # Spearman with ties by hand: [10, 20, 20, 5, 20] has average ranks [2, 4, 4, 1, 4] (the three
    # 20s share ranks 3-5); against [1..5]: deviations [-1, 1, 1, -2, 1] and [-2, -1, 0, 1, 2],
    # products sum to 1, squares to 8 and 10, so rho = 1 / sqrt(80).
    assert spearman([10, 20, 20, 5, 20], [1, 2, 3, 4, 5]) == pytest.approx(1 / np.sqrt(80), abs=1e-12)
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pearson([1, 1, 1], [1, 2, 3]) is None and spearman([2, 2], [1, 3]) is None


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Rank = 1 + (values below) + (other values equal) / 2: ties share the mean of their ranks."""
    return np.array([1 + (x < v).sum() + ((x == v).sum() - 1) / 2 for v in x])


def test_pearson_and_spearman_match_their_definitions():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(3, 60))
        judge = rng.integers(0, 6, n).astype(float)  # many ties, as on a 0-5 scale
        human = np.round(np.clip(judge + rng.normal(0, 1.2, n), 0, 5) * 3) / 3  # means of 3 raters
        if judge.std() == 0 or human.std() == 0:
            continue
        assert pearson(judge, human) == pytest.approx(np.corrcoef(judge, human)[0, 1], abs=1e-12)
        rho = np.corrcoef(_average_ranks(judge), _average_ranks(human))[0, 1]
        assert spearman(judge, human) == pytest.approx(rho, abs=1e-12)
        assert type(pearson(judge, human)) is float and type(spearman(judge, human)) is float


def test_agreement_per_criterion_from_columns_or_rows():
    judge_rows = [{"BEH": 5, "AH": 2}, {"BEH": 3, "AH": 3}, {"BEH": 1, "AH": 4}]
    human = {"BEH": [4.67, 3, 1.33], "AH": [2, 2.67, 4]}
    result = agreement(judge_rows, human)
    assert set(result) == {"BEH", "AH"}
    assert result["BEH"] == agreement_stats([5, 3, 1], [4.67, 3, 1.33])
    assert result["AH"]["mae"] == pytest.approx((0 + 0.33 + 0) / 3)
    assert result["AH"]["n"] == 3 and result["BEH"]["spearman"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="differ from human criteria"):
        agreement(judge_rows, {"BEH": [1, 2, 3]})
    with pytest.raises(ValueError, match="judge item 1 has criteria"):
        agreement([{"BEH": 1}, {"AH": 2}], human)
    with pytest.raises(ValueError, match="criterion 'AH': need two equally long"):
        agreement({"AH": [1, 2]}, {"AH": [1]})
    with pytest.raises(ValueError, match="score 1 is not a finite number"):
        agreement_stats([1, float("nan")], [1, 2])
