"""MarineLife-16K multiple-choice QA accuracy per evaluation dimension (0-100)."""

import datasets
import evaluate

from builders.scoring.validation import NamedInputs
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
overall, on a 0-100 scale. Raw replies are parsed into an option letter (or, given the options,
an option text; negated options excluded, the last declaration wins); replies that name no option
or several are unparsed, counted as wrong and reported per dimension with a reason. Open-ended types (OEMU, captions) are scored by the judge metric.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): raw model replies.
    references (list of str): the answer letters "A"-"D" (the dataset's `answer` field).
    question_types (list of str): the dataset's `type` field, e.g. "central_object", "camera_motion".
    options (list, optional): per item the 4 option texts in A-D order, or the dataset's `options`
        records [{"label": "A", "text": ...}, ...]; lets replies give the option text instead of a letter.
Returns:
    MBC-so, MBC-mo, PMT, PDO, OBK, SM-e, SM-l, overall (float or None): accuracy in 0-100,
        None for a dimension without items;
    ci95 (dict): 95% Wilson interval per dimension and overall, in 0-100;
    n (dict): items per dimension and overall;
    n_unparsed (dict): unparsed replies per dimension and overall;
    parse_reasons (dict): replies per parse reason (letter, option_text, declared, negation_resolved,
        ambiguous, no_option, negated_only, empty);
    answer_parser (str): the parser's signature, "vqabench-choice@2|aliases:none".
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

    def _compute(self, predictions, references, question_types, options=None):
        return marinelife_accuracy(predictions, references, question_types, options)
