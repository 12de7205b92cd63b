"""MarineLife-16K multiple-choice QA accuracy per evaluation dimension (0-100)."""

import datasets
import evaluate

from builders.scoring.validation import NamedInputs, text_column
from marinelife16k.accuracy import marinelife_accuracy

_CITATION = """\
@misc{marinelife16k,
    title = {MarineLife-16K: An Attribute-Rich Video-Text Dataset for Motion-Aware Marine Video Understanding},
    note = {Dataset paper; the QA schema, question types and evaluation dimensions follow its appendix},
}
"""

_DESCRIPTION = """\
Accuracy of a video-language model on the multiple-choice questions of MarineLife-16K, per
evaluation dimension of the paper's Table 3 (MBC-so, MBC-mo, PMT, PDO, OBK, SM-e, SM-l) and
overall, on a 0-100 scale. The whole `qa` split may be passed as the dataset gives it (its `answer`,
`type` or `dimension`, and `options` columns): open-ended questions are skipped and counted. Raw replies are parsed into an option letter (or, given the options,
an option text; negated options excluded, the last declaration wins); replies that name no option
or several are unparsed, counted as wrong and reported per dimension with a reason. Open-ended types (OEMU, captions) are scored by the judge metric.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str or None): raw model replies; None (no reply) counts as unparsed.
    references (list of str): the answer letters "A"-"D" (the dataset's `answer` field; None or ""
        for open-ended questions, which are skipped).
    question_types (list of str): the dataset's `type` field (e.g. "central_object",
        "camera_motion") or its `dimension` field (e.g. "MBC-so"); open-ended types and dimensions
        (camera_object_open_ended / OEMU, caption) are skipped and counted in n_open_ended_skipped.
    options (list, optional): per item the 4 option texts in A-D order, or the dataset's `options`
        records [{"label": "A", "text": ...}, ...]; lets replies give the option text instead of a
        letter (pass them: without, a reply that gives only the option's text is unparsed).
    videos (list of str, optional): the video of each question (the dataset's `id`); adds
        ci95_cluster, intervals robust to the 6-9 questions of one video being correlated.
    answer_parser (str, optional): NAME@VERSION of the answer parser (default "vqabench-choice@4";
        "vqabench-choice@3" / "@2" re-score with the parser's earlier versions).
Returns:
    MBC-so, MBC-mo, PMT, PDO, OBK, SM-e, SM-l, overall (float or None): accuracy in 0-100,
        None for a dimension without items;
    ci95 (dict): 95% Wilson interval per dimension and overall, in 0-100;
    ci95_cluster (dict, with videos): 95% cluster-robust interval (clustered by video), in 0-100;
    n (dict): items per dimension and overall;
    n_unparsed (dict): unparsed replies per dimension and overall;
    n_open_ended_skipped (int): open-ended questions left to the judge metric;
    correct (list of bool or None): per item, right or not (None: skipped), for paired tests;
    parse_reasons (dict): replies per parse reason (letter, option_text, declared, negation_resolved,
        ambiguous, no_option, negated_only, empty);
    answer_parser (str): the parser's signature, "vqabench-choice@4|aliases:none".
Examples:
    >>> from builders import metric_path
    >>> marine = evaluate.load(metric_path("marinelife_qa"))
    >>> result = marine.compute(
    ...     predictions=["A", "(C) A sea turtle", "B"],
    ...     references=["A", "C", "D"],
    ...     question_types=["camera_motion", "central_object", "central_object"],
    ... )
    >>> result["PDO"], result["MBC-so"], result["overall"]
    (100.0, 50.0, 66.66666666666666)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MarinelifeQa(NamedInputs, evaluate.Metric):  # NamedInputs: a missing input is named
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "question_types": datasets.Value("string"),
                }
            ),
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score (see the inputs description); text inputs are checked here, naming the bad item."""
        if predictions is not None:
            predictions = text_column("predictions", predictions, none_as="")
        if references is not None:
            references = text_column("references", references, none_as="")
        if kwargs.get("question_types") is not None:
            kwargs["question_types"] = text_column("question_types", kwargs["question_types"])
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(
        self, predictions, references, question_types, options=None, videos=None, answer_parser=None
    ):
        return marinelife_accuracy(
            predictions, references, question_types, options, videos, answer_parser=answer_parser
        ).to_dict()
