"""BQA scoring: Easy/Hard/Total accuracy, demographic error breakdowns, error confusion, CoT leakage.

The paper reports accuracy on the test set split by difficulty (Table 1), error rates by gender,
age and ethnicity (Figure 4) and, for wrong answers, which emotion group the model chose instead,
with "Others" for replies that are not an emotion (Figure 6). Every rate here carries a 95% Wilson
interval and every demographic breakdown a chi-square test, so small groups are not over-read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
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
from builders.scoring.stats import (
    MIN_EXPECTED_COUNT,
    Rate,
    chi_square_independence,
    interval_in,
    interval_key,
)
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


@dataclass(frozen=True)
class Disparity:
    """How far apart a breakdown's groups are: the largest gap between their error rates and Pearson's
    chi-square test of group x {wrong, right}; ``small_groups``: groups whose expected counts fall
    below 5 (the p-value is unreliable there); ``warning`` says why a field is None."""

    max_gap: float | None = None
    highest: str | None = None
    lowest: str | None = None
    chi2: float | None = None
    dof: int | None = None
    p_value: float | None = None
    small_groups: list[str] = field(default_factory=list)
    warning: str | None = None


@dataclass(frozen=True)
class GroupErrors:
    """One demographic group: its wrong answers and error rate (``rate.n`` items)."""

    errors: int
    rate: Rate

    @property
    def n(self) -> int:
        return self.rate.n


@dataclass(frozen=True)
class ErrorBreakdown:
    """Error rate per group of one demographic field, with intervals at ``confidence``."""

    groups: dict[str, GroupErrors]
    n_missing: int  # items without a label for the field (left out)
    disparity: Disparity
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        ci = f"error_rate_{interval_key(self.confidence)}"
        groups = {
            g: {"n": e.n, "errors": e.errors, "error_rate": e.rate.value, ci: e.rate.interval}
            for g, e in self.groups.items()
        }
        return {"groups": groups, "n_missing": self.n_missing, "disparity": asdict(self.disparity)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], confidence: float = 0.95) -> ErrorBreakdown:
        groups = {
            g: GroupErrors(
                c["errors"], Rate(c["error_rate"], interval_in(c, "error_rate", confidence), c["n"])
            )
            for g, c in data["groups"].items()
        }
        return cls(groups, data["n_missing"], Disparity(**data["disparity"]), confidence)


def error_breakdown(
    labels: Sequence[str | None], wrong: Sequence[bool], order: Sequence[str] = (), confidence: float = 0.95
) -> ErrorBreakdown:
    """Error rate per group with its interval, and how far apart the groups are (:class:`Disparity`)."""
    counts: dict[str, list[int]] = {}
    for label, is_wrong in zip(labels, wrong, strict=True):
        if label is not None:
            cell = counts.setdefault(label, [0, 0])
            cell[0] += 1
            cell[1] += int(is_wrong)
    ordered = [g for g in order if g in counts] + sorted(g for g in counts if g not in order)
    groups = {g: GroupErrors(counts[g][1], Rate.of(counts[g][1], counts[g][0], confidence)) for g in ordered}
    n_missing = sum(v is None for v in labels)
    if len(groups) < 2:
        warning = f"{len(groups)} group(s) with data: nothing to compare"
        return ErrorBreakdown(groups, n_missing, Disparity(warning=warning), confidence)
    rate = {g: e.rate.value or 0.0 for g, e in groups.items()}
    highest, lowest = max(groups, key=rate.__getitem__), min(groups, key=rate.__getitem__)
    gap = Disparity(max_gap=rate[highest] - rate[lowest], highest=highest, lowest=lowest)
    table = [[counts[g][1], counts[g][0] - counts[g][1]] for g in ordered]
    if sum(r[0] for r in table) == 0 or sum(r[1] for r in table) == 0:
        warning = "every answer is right or every answer is wrong: no disparity to test"
        return ErrorBreakdown(groups, n_missing, replace(gap, warning=warning), confidence)
    test = chi_square_independence(table)
    small = [g for g, row in zip(ordered, test.expected, strict=True) if min(row) < MIN_EXPECTED_COUNT]
    disparity = replace(
        gap,
        chi2=test.statistic,
        dof=test.dof,
        p_value=test.p_value,
        small_groups=small,
        warning=(
            f"groups too small to judge (expected count below {MIN_EXPECTED_COUNT:g}): {small}; "
            "the chi-square p-value is unreliable, compare their intervals instead"
        )
        if small
        else None,
    )
    return ErrorBreakdown(groups, n_missing, disparity, confidence)


@dataclass(frozen=True)
class Leakage:
    """Chain-of-thought rationales that give the answer away (:func:`_leakage`), accuracy with and
    without those items, and the rationales the check cannot classify (``undetermined_indices``):
    while there are any, accuracy without the leaking items is no fairer comparison."""

    leaking_indices: list[int]
    leak_rate: float
    non_leaking: Rate
    leaking: Rate
    undetermined_indices: list[int]
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        ci = interval_key(self.confidence)
        return {
            "n_leaking": self.leaking.n,
            "leak_rate": self.leak_rate,
            "leaking_indices": self.leaking_indices,
            "n_non_leaking": self.non_leaking.n,
            "accuracy_non_leaking": self.non_leaking.value,
            f"accuracy_non_leaking_{ci}": self.non_leaking.interval,
            "accuracy_leaking": self.leaking.value,
            f"accuracy_leaking_{ci}": self.leaking.interval,
            "n_undetermined": len(self.undetermined_indices),
            "undetermined_indices": self.undetermined_indices,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], confidence: float = 0.95) -> Leakage:
        def rate(stem: str, n: str) -> Rate:
            return Rate(data[stem], interval_in(data, stem, confidence), data[n])

        return cls(
            list(data["leaking_indices"]), data["leak_rate"], rate("accuracy_non_leaking", "n_non_leaking"),
            rate("accuracy_leaking", "n_leaking"), list(data["undetermined_indices"]), confidence,
        )  # fmt: skip


#: The three accuracies of the paper's Table 1, by the result key's suffix ("" is Total).
_DIFFICULTY_KEYS = {"Easy": "_easy", "Hard": "_hard", "Total": ""}


@dataclass(frozen=True)
class BQAAccuracy:
    """The result of :func:`bqa_accuracy`; :meth:`to_dict` is what ``metrics/bqa_accuracy`` returns
    (intervals keyed by their level: ``accuracy_ci95`` at the default confidence, ``accuracy_ci90``
    at 0.9), :meth:`from_dict` reads such a dict back (a stored report's ``metrics.json``)."""

    accuracy: Rate  # Total
    easy: Rate
    hard: Rate
    n_unparsed: int
    unparsed_indices: list[int]
    parse_reasons: dict[str, int]
    answer_parser: str
    correct: list[bool]
    by_gender: ErrorBreakdown | None
    by_age: ErrorBreakdown | None
    by_ethnicity: ErrorBreakdown | None
    confusion: dict[str, dict[str, int]]
    group_mapping: str
    leakage: Leakage | None
    confidence: float = 0.95

    @property
    def n(self) -> int:
        return self.accuracy.n

    def by_difficulty(self) -> dict[str, Rate]:
        """``{"Easy": ..., "Hard": ..., "Total": ...}``, the paper's Table 1 columns."""
        return {"Easy": self.easy, "Hard": self.hard, "Total": self.accuracy}

    def breakdown(self, field_name: str) -> ErrorBreakdown | None:
        """The error breakdown by ``gender``, ``age`` or ``ethnicity`` (None: not given)."""
        return {"gender": self.by_gender, "age": self.by_age, "ethnicity": self.by_ethnicity}[field_name]

    def to_dict(self) -> dict[str, Any]:
        ci = interval_key(self.confidence)
        out: dict[str, Any] = {}
        for label, suffix in _DIFFICULTY_KEYS.items():
            rate = self.by_difficulty()[label]
            out[f"accuracy{suffix}"] = rate.value
            out[f"accuracy{suffix}_{ci}"] = rate.interval
        out.update(n=self.n, n_easy=self.easy.n, n_hard=self.hard.n, n_unparsed=self.n_unparsed)
        out.update(
            unparsed_indices=self.unparsed_indices,
            parse_reasons=self.parse_reasons,
            answer_parser=self.answer_parser,
            correct=self.correct,
        )
        for name in DEMOGRAPHIC_FIELDS:
            breakdown = self.breakdown(name)
            out[f"by_{name}"] = None if breakdown is None else breakdown.to_dict()
        out.update(confusion=self.confusion, group_mapping=self.group_mapping)
        out["leakage"] = None if self.leakage is None else self.leakage.to_dict()
        out["confidence"] = self.confidence
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BQAAccuracy:
        """A result dict (this version's, or an older one without ``confidence``: 95% intervals)."""
        confidence = float(data.get("confidence", 0.95))
        rates = {
            label: Rate(
                data[f"accuracy{suffix}"],
                interval_in(data, f"accuracy{suffix}", confidence),
                data[f"n{suffix}"],
            )
            for label, suffix in _DIFFICULTY_KEYS.items()
        }
        breakdowns = {
            name: None
            if data.get(f"by_{name}") is None
            else ErrorBreakdown.from_dict(data[f"by_{name}"], confidence)
            for name in DEMOGRAPHIC_FIELDS
        }
        leakage = data.get("leakage")
        return cls(
            accuracy=rates["Total"], easy=rates["Easy"], hard=rates["Hard"], n_unparsed=data["n_unparsed"],
            unparsed_indices=list(data.get("unparsed_indices", [])), parse_reasons=dict(data.get("parse_reasons", {})),
            answer_parser=data.get("answer_parser", ""), correct=list(data.get("correct", [])),
            by_gender=breakdowns["gender"], by_age=breakdowns["age"], by_ethnicity=breakdowns["ethnicity"],
            confusion=data.get("confusion", {}), group_mapping=data.get("group_mapping", ""),
            leakage=None if leakage is None else Leakage.from_dict(leakage, confidence), confidence=confidence,
        )  # fmt: skip


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
) -> BQAAccuracy:
    """Score raw model replies on BQA items (:meth:`BQAAccuracy.to_dict`: the metric card's keys).

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

    rates = {}
    for label, keep in (("Total", None), ("Easy", "Easy"), ("Hard", "Hard")):
        idx = [i for i in range(n) if keep is None or difficulty[i] == keep]
        rates[label] = Rate.of(sum(correct[i] for i in idx), len(idx), confidence)
    breakdowns = {}
    for name, values in zip(DEMOGRAPHIC_FIELDS, (gender, age, ethnicity), strict=True):
        if values is not None:
            labels = _demographic_labels(name, values, codes[name])
            breakdowns[name] = error_breakdown(labels, wrong, list(codes[name].values()), confidence)
    return BQAAccuracy(
        accuracy=rates["Total"],
        easy=rates["Easy"],
        hard=rates["Hard"],
        n_unparsed=len(unparsed),
        unparsed_indices=unparsed,
        parse_reasons=reason_counts(parses),
        answer_parser=parser.signature,
        correct=correct,
        by_gender=breakdowns.get("gender"),
        by_age=breakdowns.get("age"),
        by_ethnicity=breakdowns.get("ethnicity"),
        confusion=_confusion(predictions, references, choices, chosen, correct, mapping, parser),
        group_mapping=mapping.name,
        leakage=None
        if rationales is None
        else _leakage(rationales, references, choices, correct, confidence, parser),
        confidence=confidence,
    )


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


# A clause ends at sentence punctuation, a colon or semicolon, or a contrast ("but", "while"...).
_CLAUSES = re.compile(r"[.;:!?\n]+|\b(?:but|while|whereas|however|although)\b", re.IGNORECASE)
# Words that rule out the options a clause names (or, in a clause that also names the answer, the
# options after them): "Anticipation and Disapproval fit less well", "Fear, not Sadness".
_RULED_OUT = re.compile(
    r"\b(?:not|no|less|than|instead of|unlike|unlikely|rules? out|ruled out|weaker|worse|poorer|"
    r"does not|do not|doesn't|don't|isn't|aren't)\b",
    re.IGNORECASE,
)
# An option given by its letter: "The correct option is (C).", "answer: B", "(D)".
_LETTER = re.compile(
    r"\b(?:option|answer|choice)\s*(?:is|would be|:)?\s*\(?([A-D])\)?(?![A-Za-z])|\(([A-D])\)"
)


def _affirmed(rationale: str, choices: Sequence[str], answer: int, parser: AnswerParser) -> set[int]:
    """The options a rationale points to: named (by text, alias or letter) and not ruled out (module
    doc of :func:`_leakage`)."""
    pointed: set[int] = set()
    for clause in _CLAUSES.split(rationale):
        if not clause or not clause.strip():
            continue
        cue = _RULED_OUT.search(clause)
        named = parser.mentioned(clause, choices)
        if cue is None:
            pointed |= named
        elif answer in named:  # "shows Fear, not Sadness": what comes before the cue is affirmed
            pointed |= parser.mentioned(clause[: cue.start()], choices)
    letters = {"ABCD".index(a or b) for a, b in _LETTER.findall(rationale)}
    return pointed | {i for i in letters if i < len(choices)}


def _leakage(
    rationales: Sequence[str | None],
    references: Sequence[str],
    choices: Sequence[Sequence[str]],
    correct: Sequence[bool],
    confidence: float,
    parser: AnswerParser,
) -> Leakage:
    """A rationale leaks when the one option it points to is the correct one (the paper's CoT caveat):
    it names the correct label and no other, or gives its letter ("The correct option is (C)."), or
    rules every other option out in the stage-1 prompt's own form ("... shows Happiness; Anticipation,
    Disconnection and Disapproval fit less well"). One that points to the correct option and to others
    is *undetermined*: the check cannot tell whether it gives the answer away."""
    leaking, undetermined = [], []
    for i, rationale in enumerate(rationales):
        if rationale is not None and not isinstance(rationale, str):
            raise ValueError(f"rationales[{i}]: expected text or None, got {type(rationale).__name__}")
        if not rationale:
            continue
        answer = list(choices[i]).index(references[i])
        pointed = _affirmed(rationale, choices[i], answer, parser)
        if pointed == {answer}:
            leaking.append(i)
        elif answer in pointed:
            undetermined.append(i)
    leak_set = set(leaking)
    clean = [i for i in range(len(correct)) if i not in leak_set]
    return Leakage(
        leaking_indices=leaking,
        leak_rate=len(leaking) / len(correct),
        non_leaking=Rate.of(sum(correct[i] for i in clean), len(clean), confidence),
        leaking=Rate.of(sum(correct[i] for i in leaking), len(leaking), confidence),
        undetermined_indices=undetermined,
        confidence=confidence,
    )
