"""MarineLife-16K multiple-choice scoring: accuracy per dimension on the paper's 0-100 scale (Table 3)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from builders.scoring.answer_parsing import AnswerParser, get_parser, reason_counts
from builders.scoring.stats import Rate, cluster_interval, interval_key
from builders.scoring.validation import check_reply, check_same_length
from marinelife16k.vocabulary import (
    DIMENSIONS,
    MCQ_DIMENSIONS,
    MULTIPLE_CHOICE,
    OPTION_LABELS,
    QUESTION_TYPES,
)

OVERALL = "overall"
#: How MarineLife-16K replies are read: the shared parser; option texts are per item, so no aliases.
MARINELIFE_PARSER = get_parser()


def marinelife_parser(name: str | None = None) -> AnswerParser:
    """The shared parser at ``name@version`` (default: the current default), as MarineLife-16K reads replies."""
    return MARINELIFE_PARSER if name is None else get_parser(name)


# Table 3 column order.
ACCURACY_DIMENSIONS: tuple[str, ...] = tuple(d for d in DIMENSIONS if d in MCQ_DIMENSIONS)


_OPEN_ENDED_DIMENSIONS = frozenset(
    t.dimension for t in QUESTION_TYPES.values() if t.question_format != MULTIPLE_CHOICE
)


def _dimension(i: int, question_type: object) -> str | None:
    """The accuracy dimension of a question given by its ``type`` or its ``dimension`` (the
    dataset's two columns); None for an open-ended one (the judge's, skipped here)."""
    if question_type in ACCURACY_DIMENSIONS:
        return str(question_type)
    if question_type in _OPEN_ENDED_DIMENSIONS:
        return None
    spec = QUESTION_TYPES.get(question_type) if isinstance(question_type, str) else None
    if spec is None:
        raise ValueError(
            f"question_types[{i}]: unknown question type or dimension {question_type!r} (types: "
            f"{list(QUESTION_TYPES)}; dimensions: {list(DIMENSIONS)})"
        )
    return spec.dimension if spec.question_format == MULTIPLE_CHOICE else None


def _option_texts(i: int, options: object) -> tuple[str, ...]:
    """Option texts in A-D order, from plain texts or the dataset's ``[{label, text}]`` records."""
    if not isinstance(options, Sequence) or isinstance(options, str) or len(options) != len(OPTION_LABELS):
        raise ValueError(f"options[{i}]: expected {len(OPTION_LABELS)} options in A-D order, got {options!r}")
    texts = []
    for label, option in zip(OPTION_LABELS, options, strict=True):
        if isinstance(option, Mapping):
            if option.get("label") != label:
                raise ValueError(f"options[{i}]: expected label {label!r} in this position, got {option!r}")
            option = option.get("text")
        if not isinstance(option, str) or not option.strip():
            raise ValueError(f"options[{i}]: option {label} has no text: {option!r}")
        texts.append(option)
    return tuple(texts)


def _percent(interval: Sequence[float] | None) -> list[float] | None:
    return None if interval is None else [100.0 * x for x in interval]


@dataclass(frozen=True)
class MarineLifeAccuracy:
    """The result of :func:`marinelife_accuracy`, in 0-100. :meth:`to_dict` is what
    ``metrics/marinelife_qa`` returns (intervals under a key naming their level: ``ci95`` at the
    default confidence, ``ci90`` at 0.9); :meth:`from_dict` reads such a dict back."""

    rates: dict[str, Rate]  # per dimension of ACCURACY_DIMENSIONS, and OVERALL
    n_unparsed: dict[str, int]
    clustered: dict[str, list[float] | None] | None  # cluster-robust intervals by video (with videos)
    n_open_ended_skipped: int
    parse_reasons: dict[str, int]
    answer_parser: str
    correct: list[bool | None]  # per item; None for an open-ended question (not scored here)
    confidence: float = 0.95

    @property
    def overall(self) -> Rate:
        return self.rates[OVERALL]

    def to_dict(self) -> dict[str, Any]:
        ci = interval_key(self.confidence)
        out: dict[str, Any] = {key: rate.value for key, rate in self.rates.items()}
        out[ci] = {key: rate.interval for key, rate in self.rates.items()}
        if self.clustered is not None:
            out[f"{ci}_cluster"] = dict(self.clustered)
        out.update(
            n={key: rate.n for key, rate in self.rates.items()},
            n_unparsed=dict(self.n_unparsed),
            n_open_ended_skipped=self.n_open_ended_skipped,
            parse_reasons=self.parse_reasons,
            answer_parser=self.answer_parser,
            correct=self.correct,
            confidence=self.confidence,
        )
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MarineLifeAccuracy:
        """A result dict (this version's, or an older one without ``confidence``: 95% intervals)."""
        confidence = float(data.get("confidence", 0.95))
        ci = interval_key(confidence)
        keys = (*ACCURACY_DIMENSIONS, OVERALL)
        intervals = data.get(ci) or {}
        return cls(
            rates={k: Rate(data.get(k), intervals.get(k), data["n"][k]) for k in keys},
            n_unparsed=dict(data["n_unparsed"]),
            clustered=data.get(f"{ci}_cluster"),
            n_open_ended_skipped=data.get("n_open_ended_skipped", 0),
            parse_reasons=dict(data.get("parse_reasons", {})),
            answer_parser=data.get("answer_parser", ""),
            correct=list(data.get("correct", [])),
            confidence=confidence,
        )


def marinelife_accuracy(
    predictions: Sequence[str | None],
    references: Sequence[str],
    question_types: Sequence[str],
    options: Sequence[Sequence[str | Mapping[str, str]]] | None = None,
    videos: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
    answer_parser: str | None = None,
) -> MarineLifeAccuracy:
    """Accuracy (0-100) per multiple-choice dimension and overall, with counts and unparsed replies.

    ``predictions`` are raw replies; ``references`` the answer letters A-D; ``question_types`` the
    dataset's ``type`` or ``dimension`` field. The whole ``qa`` split may be given: open-ended
    questions (OEMU, captions; the judge's) are skipped and counted in ``n_open_ended_skipped``.
    Without ``options`` only letters are read from the replies; with them (texts in A-D order, or
    the dataset's ``options`` records) an option's text counts too. ``videos`` (the dataset's
    ``id``): adds ``ci95_cluster``, intervals robust to the questions of one video being correlated.
    ``answer_parser``: ``NAME@VERSION`` of the parser that reads the replies (default: the current
    default; an older version re-scores as old results were scored).
    """
    parser = marinelife_parser(answer_parser)
    n = check_same_length(
        predictions=predictions,
        references=references,
        question_types=question_types,
        options=options,
        videos=videos,
    )
    totals = {d: [0, 0, 0] for d in (*ACCURACY_DIMENSIONS, OVERALL)}  # items, correct, unparsed
    parses = []
    correct: list[bool | None] = []
    outcomes: dict[str, tuple[list[bool], list[Hashable]]] = {k: ([], []) for k in totals}
    for i in range(n):
        dimension = _dimension(i, question_types[i])
        if dimension is None:
            correct.append(None)
            continue
        if references[i] not in OPTION_LABELS:
            raise ValueError(
                f"references[{i}]: {references[i]!r} is not an option letter {list(OPTION_LABELS)}"
            )
        texts = None if options is None else _option_texts(i, options[i])
        parses.append(parser.parse(check_reply(i, predictions[i]), texts, OPTION_LABELS))
        chosen = parses[-1].index
        hit = chosen is not None and OPTION_LABELS[chosen] == references[i]
        correct.append(hit)
        for key in (dimension, OVERALL):
            totals[key][0] += 1
            totals[key][1] += int(hit)
            totals[key][2] += int(chosen is None)
            if videos is not None:
                outcomes[key][0].append(hit)
                outcomes[key][1].append(videos[i])

    rates = {}
    for key, (items, hits, _) in totals.items():
        rate = Rate.of(hits, items, confidence)
        rates[key] = Rate(None if rate.value is None else 100.0 * rate.value, _percent(rate.interval), items)
    clustered = None
    if videos is not None:
        clustered = {
            key: _percent(cluster_interval(ys, gs, confidence)) for key, (ys, gs) in outcomes.items()
        }
    return MarineLifeAccuracy(
        rates=rates,
        n_unparsed={key: t[2] for key, t in totals.items()},
        clustered=clustered,
        n_open_ended_skipped=correct.count(None),
        parse_reasons=reason_counts(parses),
        answer_parser=parser.signature,
        correct=correct,
        confidence=confidence,
    )
