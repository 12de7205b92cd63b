"""BQA accuracy: Easy/Hard/Total with intervals, demographic error breakdowns, error confusion, leakage."""

import datasets
import evaluate

from bqa.accuracy import bqa_accuracy
from bqa.card import CITATION
from builders.scoring.validation import NamedInputs, text_column

_CITATION = CITATION  # the dataset card's entry

_DESCRIPTION = """\
Accuracy of a VideoLLM on BQA, the body-language emotion QA benchmark built from BoLD. Raw model
replies are parsed into one of the four choices (a standalone letter A-D, the emotion's name or a
vocabulary alias; negated options are excluded, the last declaration wins; ambiguous replies are
not guessed: they count as wrong and are reported with a reason). Reports the paper's Easy, Hard and
Total accuracy with 95% Wilson intervals, error rates by gender, age and ethnicity with a
chi-square disparity test, the emotion-group confusion of wrong answers ("Others" for replies that
are no emotion) and, given chain-of-thought rationales, answer leakage. Chance level is 0.25.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str or None): raw model replies; None (no reply) counts as unparsed, like "".
    references (list of str): correct emotion labels (BoLD spelling, e.g. "Doubt/Confusion").
    choices (list of list of str): the four candidate labels per item, in the order shown (A-D).
    difficulty (list of str): "Easy" or "Hard" per item.
    gender, age, ethnicity (list of str or int, optional): labels (e.g. "Female", "Adult") or BoLD
        integer codes (numpy integers and whole floats too, as pandas columns hold them); None, "" and
        NaN (pandas' missing value) mark a missing value, left out of that breakdown and counted.
    rationales (list of str, optional): chain-of-thought rationales, checked for answer leakage.
    group_mapping (optional): a bqa.vocabulary.GroupMapping or a JSON/YAML mapping file.
    demographic_codes (optional): code -> label tables, as bqa.vocabulary.load_demographic_codes returns.
    answer_parser (str, optional): NAME@VERSION of the answer parser (default "vqabench-choice@4";
        "vqabench-choice@3" / "@2" re-score with the parser's earlier versions).
Returns:
    accuracy, accuracy_easy, accuracy_hard (float) and their intervals [low, high], keyed by level:
        *_ci95 at the default confidence 0.95, *_ci90 at 0.9 (confidence (float) is in the result too);
    n, n_easy, n_hard, n_unparsed (int), unparsed_indices (list of int), correct (list of bool);
    parse_reasons (dict): replies per parse reason (letter, option_text, declared, negation_resolved,
        ambiguous, no_option, negated_only, empty);
    answer_parser (str): the parser's signature, e.g. "vqabench-choice@4|aliases:bqa-labels-v1";
    by_gender, by_age, by_ethnicity (dict or None): per group n, errors, error_rate, error_rate_ci95,
        plus n_missing and disparity (max_gap, highest, lowest, chi2, dof, p_value, small_groups, warning);
    confusion (dict): true group -> {predicted group or "Others": count} over wrong answers;
    group_mapping (str): name of the emotion grouping used;
    leakage (dict or None): n_leaking, leak_rate, leaking_indices, n_non_leaking,
        accuracy_non_leaking(_ci95), accuracy_leaking(_ci95).
Examples:
    >>> from builders import metric_path
    >>> bqa = evaluate.load(metric_path("bqa_accuracy"))
    >>> result = bqa.compute(
    ...     predictions=["Surprise", "The answer is B."],
    ...     references=["Surprise", "Anger"],
    ...     choices=[["Surprise", "Confidence", "Anger", "Embarrassment"], ["Peace", "Excitement", "Anger", "Fatigue"]],
    ...     difficulty=["Easy", "Hard"],
    ... )
    >>> result["accuracy"], result["accuracy_easy"], result["accuracy_hard"]
    (0.5, 1.0, 0.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BqaAccuracy(NamedInputs, evaluate.Metric):  # NamedInputs: a missing input is named
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "choices": datasets.List(datasets.Value("string")),
                    "difficulty": datasets.Value("string"),
                }
            ),
            reference_urls=["https://huggingface.co/datasets/naist-nlp/BQA"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score (see the inputs description); text inputs are checked here, naming the bad item."""
        if predictions is not None:
            predictions = text_column("predictions", predictions, none_as="")
        if references is not None:
            references = text_column("references", references)
        if kwargs.get("difficulty") is not None:
            kwargs["difficulty"] = text_column("difficulty", kwargs["difficulty"])
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, choices, difficulty, **kwargs):
        return bqa_accuracy(predictions, references, choices, difficulty, **kwargs).to_dict()
