"""BQA scoring: Easy/Hard/Total accuracy, demographic error breakdowns, error confusion, CoT leakage.

The paper reports accuracy on the test set split by difficulty (Table 1), error rates by gender,
age and ethnicity (Figure 4) and, for wrong answers, which emotion group the model chose instead,
with "Others" for replies that are not an emotion (Figure 6). Every rate here carries a 95% Wilson
interval and every demographic breakdown a chi-square test, so small groups are not over-read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from numbers import Integral
from pathlib import Path
from typing import Any

from bqa.vocabulary import (
    DEFAULT_DEMOGRAPHIC_CODES,
    DEFAULT_GROUP_MAPPING,
    DIFFICULTIES,
    EMOTIONS,
    LABEL_ALIASES_NAME,
    LABEL_FORMS,
    LABEL_PARTS,
    OTHERS,
    GroupMapping,
    load_group_mapping,
)
from builders.scoring.answer_parsing import DEFAULT_PARSER, Aliases, AnswerParser, get_parser, reason_counts
from builders.scoring.stats import MIN_EXPECTED_COUNT, chi_square_independence, proportion
from builders.scoring.validation import check_reply, check_same_length, is_missing

N_CHOICES = 4
LABEL_ALIASES = Aliases(LABEL_ALIASES_NAME, LABEL_PARTS, LABEL_FORMS)


@cache
def bqa_parser(name: str = DEFAULT_PARSER) -> AnswerParser:
    """The shared parser at ``name@version`` (any registered one), with the vocabulary's label
    aliases ("Confusion"): how BQA replies are read."""
    return get_parser(name, LABEL_ALIASES)


#: How BQA replies are read by default.
BQA_PARSER = bqa_parser()
DEMOGRAPHIC_FIELDS: tuple[str, ...] = ("gender", "age", "ethnicity")


def resolve_group_mapping(group_mapping: GroupMapping | str | Path | None) -> GroupMapping:
    """A GroupMapping, the default's name, or a JSON/YAML file read by ``load_group_mapping``."""
    if group_mapping is None or group_mapping == DEFAULT_GROUP_MAPPING.name:
        return DEFAULT_GROUP_MAPPING
    if isinstance(group_mapping, GroupMapping):
        return group_mapping
    path = Path(group_mapping)
    if not path.is_file():
        raise ValueError(
            f"group_mapping {str(group_mapping)!r} is neither the default mapping's name "
            f"({DEFAULT_GROUP_MAPPING.name!r}) nor a JSON/YAML mapping file"
        )
    return load_group_mapping(path)


def _check_item(i: int, reference: object, choices: object, difficulty: object) -> None:
    if not isinstance(choices, Sequence) or isinstance(choices, str) or len(choices) != N_CHOICES:
        raise ValueError(f"choices[{i}]: expected {N_CHOICES} emotion labels, got {choices!r}")
    for label in choices:
        if label not in EMOTIONS:
            raise ValueError(
                f"choices[{i}]: unknown emotion label {label!r} (expected one of the 26 BoLD emotions)"
            )
    if len(set(choices)) != N_CHOICES:
        raise ValueError(f"choices[{i}]: labels repeat: {list(choices)}")
    if reference not in EMOTIONS:
        raise ValueError(f"references[{i}]: unknown emotion label {reference!r}")
    if reference not in choices:
        raise ValueError(f"references[{i}]: {reference!r} is not among the item's choices {list(choices)}")
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty[{i}]: {difficulty!r} is not one of {list(DIFFICULTIES)}")


def _demographic_labels(field: str, values: Sequence[object], codes: Mapping[int, str]) -> list[str | None]:
    """Labels per item: label strings kept, BoLD integer codes decoded (numpy integers and whole
    floats too, as a pandas column gives them), None/empty/NaN = missing."""
    allowed = set(codes.values())
    labels: list[str | None] = []
    for i, value in enumerate(values):
        if is_missing(value) or value == "":
            labels.append(None)
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # a pandas code column with a missing value is float
        if isinstance(value, bool):
            raise ValueError(f"{field}[{i}]: expected a label or a BoLD code, got {value!r}")
        elif isinstance(value, Integral):
            value = int(value)
            if value not in codes:
                raise ValueError(f"{field}[{i}]: unknown BoLD {field} code {value} (known: {sorted(codes)})")
            labels.append(codes[value])
        elif isinstance(value, str) and value in allowed:
            labels.append(value)
        else:
            raise ValueError(
                f"{field}[{i}]: unknown {field} {value!r} (expected one of {list(codes.values())})"
            )
    return labels


def error_breakdown(
    labels: Sequence[str | None], wrong: Sequence[bool], order: Sequence[str] = (), confidence: float = 0.95
) -> dict:
    """Error rate per group with its interval, and how far apart the groups are.

    ``disparity`` holds the largest gap between group error rates and Pearson's chi-square test
    of independence between group and right/wrong (groups x {errors, correct}). Groups whose
    expected counts fall below 5 are named in ``small_groups``: the p-value is unreliable there.
    """
    counts: dict[str, list[int]] = {}
    for label, is_wrong in zip(labels, wrong, strict=True):
        if label is not None:
            cell = counts.setdefault(label, [0, 0])
            cell[0] += 1
            cell[1] += int(is_wrong)
    ordered = [g for g in order if g in counts] + sorted(g for g in counts if g not in order)
    groups: dict[str, dict[str, Any]] = {}
    for g in ordered:
        n, errors = counts[g]
        rate, ci = proportion(errors, n, confidence)
        groups[g] = {"n": n, "errors": errors, "error_rate": rate, "error_rate_ci95": ci}
    disparity: dict = {
        "max_gap": None,
        "highest": None,
        "lowest": None,
        "chi2": None,
        "dof": None,
        "p_value": None,
        "small_groups": [],
        "warning": None,
    }
    if len(groups) < 2:
        disparity["warning"] = f"{len(groups)} group(s) with data: nothing to compare"
        return {"groups": groups, "n_missing": sum(v is None for v in labels), "disparity": disparity}
    highest = max(groups, key=lambda g: groups[g]["error_rate"])
    lowest = min(groups, key=lambda g: groups[g]["error_rate"])
    disparity.update(
        highest=highest, lowest=lowest, max_gap=groups[highest]["error_rate"] - groups[lowest]["error_rate"]
    )
    table = [[counts[g][1], counts[g][0] - counts[g][1]] for g in ordered]
    if sum(r[0] for r in table) == 0 or sum(r[1] for r in table) == 0:
        disparity["warning"] = "every answer is right or every answer is wrong: no disparity to test"
    else:
        test = chi_square_independence(table)
        small = [g for g, row in zip(ordered, test.expected, strict=True) if min(row) < MIN_EXPECTED_COUNT]
        disparity.update(chi2=test.statistic, dof=test.dof, p_value=test.p_value, small_groups=small)
        if small:
            disparity["warning"] = (
                f"groups too small to judge (expected count below {MIN_EXPECTED_COUNT:g}): {small}; "
                "the chi-square p-value is unreliable, compare their intervals instead"
            )
    return {"groups": groups, "n_missing": sum(v is None for v in labels), "disparity": disparity}


def bqa_accuracy(
    predictions: Sequence[str | None],
    references: Sequence[str],
    choices: Sequence[Sequence[str]],
    difficulty: Sequence[str],
    gender: Sequence[str | int | None] | None = None,
    age: Sequence[str | int | None] | None = None,
    ethnicity: Sequence[str | int | None] | None = None,
    rationales: Sequence[str | None] | None = None,
    group_mapping: GroupMapping | str | Path | None = None,
    demographic_codes: Mapping[str, Mapping[int, str]] | None = None,
    confidence: float = 0.95,
    answer_parser: str | None = None,
) -> dict:
    """Score raw model replies on BQA items; see the metric card for every key of the result.

    ``predictions`` are raw replies (a letter A-D in choice order or the emotion's name);
    ``references`` the correct labels; ``choices`` the four labels per item; ``difficulty``
    Easy/Hard. ``gender``/``age``/``ethnicity`` take labels or BoLD integer codes (decoded with
    ``demographic_codes``, default ``DEFAULT_DEMOGRAPHIC_CODES``). ``rationales``: CoT rationales
    to check for answer leakage. ``answer_parser``: ``NAME@VERSION`` of the parser that reads the
    replies (default: the current default; an older version re-scores as old results were scored).
    """
    n = check_same_length(
        predictions=predictions,
        references=references,
        choices=choices,
        difficulty=difficulty,
        gender=gender,
        age=age,
        ethnicity=ethnicity,
        rationales=rationales,
    )
    mapping = resolve_group_mapping(group_mapping)
    codes = {**DEFAULT_DEMOGRAPHIC_CODES, **(demographic_codes or {})}
    for i in range(n):
        _check_item(i, references[i], choices[i], difficulty[i])

    parser = BQA_PARSER if answer_parser is None else bqa_parser(answer_parser)
    parses = [parser.parse(check_reply(i, predictions[i]), choices[i]) for i in range(n)]
    chosen: list[int | None] = [p.index for p in parses]
    correct = [c is not None and choices[i][c] == references[i] for i, c in enumerate(chosen)]
    wrong = [not c for c in correct]
    unparsed = [i for i, c in enumerate(chosen) if c is None]

    result: dict = {}
    for name, keep in (("", None), ("_easy", "Easy"), ("_hard", "Hard")):
        idx = [i for i in range(n) if keep is None or difficulty[i] == keep]
        value, ci = proportion(sum(correct[i] for i in idx), len(idx), confidence)
        result[f"accuracy{name}"] = value
        result[f"accuracy{name}_ci95"] = ci
    result["n"] = n
    result["n_easy"] = sum(d == "Easy" for d in difficulty)
    result["n_hard"] = n - result["n_easy"]
    result["n_unparsed"] = len(unparsed)
    result["unparsed_indices"] = unparsed
    result["parse_reasons"] = reason_counts(parses)
    result["answer_parser"] = parser.signature
    result["correct"] = correct

    for field, values in zip(DEMOGRAPHIC_FIELDS, (gender, age, ethnicity), strict=True):
        if values is None:
            result[f"by_{field}"] = None
            continue
        labels = _demographic_labels(field, values, codes[field])
        result[f"by_{field}"] = error_breakdown(labels, wrong, list(codes[field].values()), confidence)

    result["confusion"] = _confusion(predictions, references, choices, chosen, correct, mapping, parser)
    result["group_mapping"] = mapping.name
    result["leakage"] = (
        None if rationales is None else _leakage(rationales, references, choices, correct, confidence, parser)
    )
    return result


def _confusion(
    predictions: Sequence[str | None],
    references: Sequence[str],
    choices: Sequence[Sequence[str]],
    chosen: Sequence[int | None],
    correct: Sequence[bool],
    mapping: GroupMapping,
    parser: AnswerParser,
) -> dict[str, dict[str, int]]:
    """Wrong answers: true emotion group -> group of the emotion answered, or Others.

    A reply that names no choice may still name another of the 26 emotions; it then counts for
    that emotion's group, as in the paper, where "Others" is reserved for replies that are no emotion.
    """
    columns = [*mapping.group_names, OTHERS]
    table = {g: dict.fromkeys(columns, 0) for g in mapping.group_names}
    for i, ok in enumerate(correct):
        if ok:
            continue
        picked = chosen[i]
        if picked is not None:
            answered: str | None = choices[i][picked]
        else:
            anywhere = parser.parse(predictions[i], EMOTIONS, ()).index
            answered = None if anywhere is None else EMOTIONS[anywhere]
        predicted = OTHERS if answered is None else mapping.group_of[answered]
        table[mapping.group_of[references[i]]][predicted] += 1
    return table


def _leakage(
    rationales: Sequence[str | None],
    references: Sequence[str],
    choices: Sequence[Sequence[str]],
    correct: Sequence[bool],
    confidence: float,
    parser: AnswerParser,
) -> dict:
    """A rationale leaks when it names the correct label and no other choice (the paper's CoT caveat)."""
    leaking = []
    for i, rationale in enumerate(rationales):
        if rationale is not None and not isinstance(rationale, str):
            raise ValueError(f"rationales[{i}]: expected text or None, got {type(rationale).__name__}")
        named = parser.mentioned(rationale, choices[i])
        if named == {list(choices[i]).index(references[i])}:
            leaking.append(i)
    leak_set = set(leaking)
    clean = [i for i in range(len(correct)) if i not in leak_set]
    acc_clean, ci_clean = proportion(sum(correct[i] for i in clean), len(clean), confidence)
    acc_leak, ci_leak = proportion(sum(correct[i] for i in leaking), len(leaking), confidence)
    return {
        "n_leaking": len(leaking),
        "leak_rate": len(leaking) / len(correct),
        "leaking_indices": leaking,
        "n_non_leaking": len(clean),
        "accuracy_non_leaking": acc_clean,
        "accuracy_non_leaking_ci95": ci_clean,
        "accuracy_leaking": acc_leak,
        "accuracy_leaking_ci95": ci_leak,
    }
