"""Agreement of LLM-judge scores with human scores: Pearson, Spearman, quadratic-weighted kappa, MAE."""

import datasets
import evaluate

from builders.scoring.agreement import agreement, agreement_stats
from builders.scoring.validation import NamedInputs

_CITATION = """\
@misc{marinelife16k,
    title = {MarineLife-16K: An Attribute-Rich Video-Text Dataset for Motion-Aware Marine Video Understanding},
    note = {Dataset paper; its human study compares LLM-judge scores with experts' scores},
}
"""

_DESCRIPTION = """\
Compares an LLM judge's scores with human scores on the same items, as a human study of a judge
reports: Pearson r, Spearman rho (average ranks for ties), Cohen's kappa with quadratic weights on
the integer scale (scores rounded half up first, so averaged human scores can be used), mean
absolute error and n. With `criteria`, the statistics are given per criterion.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of float): the judge's scores.
    references (list of float): the human scores (e.g. the mean of three raters).
    criteria (list of str, optional): the criterion of each item; results per criterion.
    min_score, max_score (int, optional): the scale for kappa (default 0 and 5).
Returns:
    pearson, spearman, kappa (float or None: undefined when a side is constant), mae (float), n (int);
    with `criteria`: {criterion: {pearson, spearman, kappa, mae, n}}.
Examples:
    >>> from builders import metric_path
    >>> agree = evaluate.load(metric_path("judge_agreement"))
    >>> result = agree.compute(predictions=[5, 3, 4, 1], references=[4, 3, 5, 1])
    >>> result["n"], result["mae"], round(result["pearson"], 4), round(result["kappa"], 4)
    (4, 0.5, 0.8857, 0.8857)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class JudgeAgreement(NamedInputs, evaluate.Metric):  # NamedInputs: a missing input is named
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
        )

    def _compute(self, predictions, references, criteria=None, min_score=0, max_score=5):
        if criteria is None:
            return agreement_stats(predictions, references, min_score, max_score)
        if len(criteria) != len(predictions):
            raise ValueError(f"criteria has {len(criteria)} items but predictions has {len(predictions)}")
        judge, human = {}, {}
        for name, j, h in zip(criteria, predictions, references, strict=True):
            judge.setdefault(name, []).append(j)
            human.setdefault(name, []).append(h)
        return agreement(judge, human, min_score, max_score)
