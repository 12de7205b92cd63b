"""Self-BLEU: diversity of a set of generated sentences (Zhu et al. 2018, Texygen)."""

import datasets
import evaluate

from builders.scoring.self_bleu import self_bleu
from builders.scoring.validation import NamedInputs

_CITATION = """\
@inproceedings{zhu2018texygen,
    title = {Texygen: A Benchmarking Platform for Text Generation Models},
    author = {Zhu, Yaoming and Lu, Sidi and Zheng, Lei and Guo, Jiaxian and Zhang, Weinan and Wang, Jun and Yu, Yong},
    booktitle = {The 41st International ACM SIGIR Conference on Research \\& Development in Information Retrieval},
    pages = {1097--1100},
    year = {2018}
}
"""

_DESCRIPTION = """\
Self-BLEU scores every sentence with BLEU against all the other sentences of the same set and
averages the scores. A high value means the sentences repeat each other's n-grams (low
diversity); a low value means diverse sentences. The BQA paper reports the 4-gram Self-BLEU of
its generated questions per split (train 0.87, valid 0.86, test 0.85). Values equal nltk's
sentence_bleu with uniform weights and SmoothingFunction().method1, computed in linear time.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the sentences of one set (at least 2), e.g. the questions of a split.
    max_order (int): largest n-gram order, with uniform weights 1/max_order. Default 4.
    tokenizer (str): "nltk" (NLTKWordTokenizer, default), "13a" (sacrebleu) or "whitespace".
    smoothing (str): "method1" (nltk SmoothingFunction().method1, epsilon 0.1, default) or "method0".
    lowercase (bool): lowercase before tokenizing. Default False.
    return_scores (bool): also return the per-sentence scores. Default False.
Returns:
    self_bleu (float): mean leave-one-out BLEU, in [0, 1].
    signature (str): every setting that produced the number.
    scores (list of float): per-sentence scores, only with return_scores=True.
Examples:
    >>> from builders import metric_path
    >>> self_bleu = evaluate.load(metric_path("self_bleu"))
    >>> result = self_bleu.compute(predictions=["what is he doing ?", "what is she doing ?", "why ?"])
    >>> round(result["self_bleu"], 4)
    0.1182
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SelfBleu(NamedInputs, evaluate.Metric):  # NamedInputs: a missing input is named
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
            codebase_urls=["https://github.com/geek-ai/Texygen/blob/master/utils/metrics/SelfBleu.py"],
            reference_urls=["https://arxiv.org/abs/1802.01886"],
        )

    def _compute(
        self,
        predictions,
        max_order=4,
        tokenizer="nltk",
        smoothing="method1",
        lowercase=False,
        return_scores=False,
    ):
        result = self_bleu(predictions, max_order, tokenizer, smoothing, lowercase)
        out = {"self_bleu": result.score, "signature": result.signature}
        if return_scores:
            out["scores"] = result.scores
        return out
