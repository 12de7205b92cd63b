"""The judge's results as types: what :func:`builders.scoring.judge.judge_predictions` returns, what
``metrics/judge`` gives as :meth:`JudgeResult.to_dict`, and what every reader (reports, leaderboard
entries, the human study, the harness bridges) reads back with :meth:`JudgeResult.from_dict`.

Intervals are keyed by their level, as the accuracy results are (:func:`builders.scoring.stats.interval_key`):
``score_ci95``/``criteria_ci95`` at the default confidence, ``score_ci90`` at 0.9; the result records
its ``confidence``. A file written before the level was recorded has no ``confidence``: its
``score_ci95`` intervals were 95% ones, and it reads as such. A malformed result is refused with the
field named (``<where>.by_camera.static.score: expected a number``), never read as something else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from builders.scoring.stats import interval_key, mean_interval

SCORE, CRITERIA = "score", "criteria"
_INTERVAL_KEY = re.compile(r"^(score|criteria)_ci[\d.]+$")


# -- checking a stored result ----------------------------------------------------------------------
def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{where}: expected a number or null, got {value!r}")
    return float(value)


def _whole(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: expected a whole number, got {value!r}")
    return value


def _mapping(value: object, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected {what}, got {value!r}")
    return value


def _interval(value: object, where: str) -> list[float] | None:
    if value is None:
        return None
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or len(value) != 2
        or any(_number(x, where) is None for x in value)
    ):
        raise ValueError(f"{where}: expected an interval [low, high] or null, got {value!r}")
    return [float(x) for x in value]


def _check_levels(data: Mapping[str, Any], ci: str, where: str) -> None:
    """An interval key at another level than the result's confidence: the file says two things."""
    other = [k for k in data if _INTERVAL_KEY.match(k) and not k.endswith(f"_{ci}")]
    if other:
        raise ValueError(
            f"{where}.{other[0]}: an interval at another level than the result's confidence "
            f"(expected {ci} keys; 'confidence' says which level the intervals are at)"
        )


# -- the parts -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeScores:
    """Means over a set of judged items: the weighted ``score`` and each criterion's, with their
    Student-t intervals (None below 2 items), and ``n`` the items in the means."""

    score: float | None
    score_interval: list[float] | None
    criteria: dict[str, float | None]
    criteria_intervals: dict[str, list[float] | None]
    n: int

    @classmethod
    def of(
        cls, criterion_names: Sequence[str], items: Sequence[JudgedItem], confidence: float = 0.95
    ) -> JudgeScores:
        if not items:
            return cls(None, None, dict.fromkeys(criterion_names), dict.fromkeys(criterion_names), 0)
        n = len(items)
        columns = {c: [item.criteria[c] for item in items] for c in criterion_names}
        scores = [item.score for item in items]
        return cls(
            score=math.fsum(scores) / n,
            score_interval=mean_interval(scores, confidence),
            criteria={c: math.fsum(v) / n for c, v in columns.items()},
            criteria_intervals={c: mean_interval(v, confidence) for c, v in columns.items()},
            n=n,
        )

    def to_dict(self, confidence: float = 0.95) -> dict[str, Any]:
        ci = interval_key(confidence)
        return {
            SCORE: self.score,
            f"{SCORE}_{ci}": self.score_interval,
            CRITERIA: dict(self.criteria),
            f"{CRITERIA}_{ci}": dict(self.criteria_intervals),
            "n": self.n,
        }

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], confidence: float = 0.95, where: str = "judge scores"
    ) -> JudgeScores:
        ci = interval_key(confidence)
        _check_levels(data, ci, where)
        criteria = _mapping(data.get(CRITERIA) or {}, f"{where}.{CRITERIA}", "an object of criterion scores")
        intervals = _mapping(
            data.get(f"{CRITERIA}_{ci}") or {}, f"{where}.{CRITERIA}_{ci}", "an object of criterion intervals"
        )
        return cls(
            score=_number(data.get(SCORE), f"{where}.{SCORE}"),
            score_interval=_interval(data.get(f"{SCORE}_{ci}"), f"{where}.{SCORE}_{ci}"),
            criteria={k: _number(v, f"{where}.{CRITERIA}.{k}") for k, v in criteria.items()},
            criteria_intervals={
                k: _interval(v, f"{where}.{CRITERIA}_{ci}.{k}") for k, v in intervals.items()
            },
            n=_whole(data.get("n"), f"{where}.n"),
        )


@dataclass(frozen=True)
class JudgedItem:
    """One prediction the judge scored: its position among the inputs (``index``), the rubric's
    integer ``criteria`` and weighted ``score``, the reply's explanation fields, whether the reply
    came from the cache, and (when the caller knows it) the ``question_id`` it judged."""

    index: int
    criteria: dict[str, float]
    score: float
    explanations: dict[str, str] = field(default_factory=dict)
    cached: bool = False
    question_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            CRITERIA: dict(self.criteria),
            SCORE: self.score,
            "explanations": dict(self.explanations),
            "cached": self.cached,
        }
        if self.question_id is not None:
            out["question_id"] = self.question_id
        return out


@dataclass(frozen=True)
class FailedJudgement:
    """A prediction the judge could not score (excluded from every mean, never scored 0): why, and
    the start of the last reply, if there was one."""

    index: int
    error: str
    raw: str | None = None
    question_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "error": self.error, "raw": self.raw}
        if self.question_id is not None:
            out["question_id"] = self.question_id
        return out


def _question_id(data: Mapping[str, Any], where: str) -> str | None:
    value = data.get("question_id")
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}.question_id: expected text, got {value!r}")
    return value


def item_from_dict(data: object, where: str) -> JudgedItem | FailedJudgement:
    """One entry of a result's ``items`` (or ``failed``): a judged item, or a failed one (``error``)."""
    item = _mapping(data, where, "an object with index and score/criteria or error")
    index = _whole(item.get("index"), f"{where}.index")
    if "error" in item:
        raw = item.get("raw")
        return FailedJudgement(
            index, str(item["error"]), None if raw is None else str(raw), _question_id(item, where)
        )
    score = _number(item.get(SCORE), f"{where}.{SCORE}")
    if score is None:
        raise ValueError(f"{where}.{SCORE}: a judged item needs its score")
    criteria = _mapping(item.get(CRITERIA, {}), f"{where}.{CRITERIA}", "an object of criterion scores")
    values = {k: _number(v, f"{where}.{CRITERIA}.{k}") for k, v in criteria.items()}
    missing = [k for k, v in values.items() if v is None]
    if missing:
        raise ValueError(f"{where}.{CRITERIA}.{missing[0]}: a judged item needs every criterion's score")
    explanations = _mapping(item.get("explanations") or {}, f"{where}.explanations", "an object")
    return JudgedItem(
        index,
        dict(criteria),  # as written (the rubric's integers stay integers), each checked above
        score,
        {k: str(v) for k, v in explanations.items()},
        bool(item.get("cached", False)),
        _question_id(item, where),
    )


@dataclass(frozen=True)
class JudgeInfo:
    """Who judged and under which settings: enough to tell two result tables apart. ``model``
    and ``api_calls`` are known only when the result was computed with a client at hand."""

    rubric: str | None
    rubric_version: str | None
    signature: str | None
    model_reported: str | list[str] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    model: str | None = None
    api_calls: int | None = None

    @property
    def rubric_label(self) -> str | None:
        """``signature``, else ``rubric@version``; None when neither is recorded."""
        if self.signature:
            return self.signature
        return f"{self.rubric}@{self.rubric_version or '?'}" if self.rubric else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rubric": self.rubric,
            "rubric_version": self.rubric_version,
            "signature": self.signature,
            "model_reported": self.model_reported,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cache_hits": self.cache_hits,
        }
        if self.model is not None:
            out["model"] = self.model
        if self.api_calls is not None:
            out["api_calls"] = self.api_calls
        return out

    @classmethod
    def from_dict(cls, data: object, where: str) -> JudgeInfo:
        info = _mapping(data, where, "an object naming the rubric and the judge")

        def text(key: str) -> str | None:
            value = info.get(key)
            return None if value is None else str(value)

        def count(key: str) -> int:
            return _whole(info.get(key, 0), f"{where}.{key}")

        reported = info.get("model_reported")
        if reported is not None and not isinstance(reported, str):
            if not isinstance(reported, list) or not all(isinstance(m, str) for m in reported):
                raise ValueError(
                    f"{where}.model_reported: expected a model id or a list of them, got {reported!r}"
                )
        api_calls = info.get("api_calls")
        return cls(
            rubric=text("rubric"),
            rubric_version=text("rubric_version"),
            signature=text("signature"),
            model_reported=reported,
            prompt_tokens=count("prompt_tokens"),
            completion_tokens=count("completion_tokens"),
            cache_hits=count("cache_hits"),
            model=text("model"),
            api_calls=None if api_calls is None else _whole(api_calls, f"{where}.api_calls"),
        )


# -- the result ------------------------------------------------------------------------------------
_FIXED_KEYS = frozenset({"n_failed", "failed", "judge", "items", "provenance", "confidence"})


@dataclass(frozen=True)
class JudgeResult:
    """A judging run: the means over every judged item (``overall``), the failed judgements,
    ``breakdowns`` (``{"camera": {"static": JudgeScores, "moving": ...}}``, written ``by_camera``),
    who judged (``judge``), per-item scores when asked for (``items``), and the ``provenance`` a
    command adds (which predictions file, data and videos were judged)."""

    overall: JudgeScores
    failed: list[FailedJudgement]
    n_failed: int
    breakdowns: dict[str, dict[str, JudgeScores]] = field(default_factory=dict)
    judge: JudgeInfo | None = None
    items: list[JudgedItem | FailedJudgement] | None = None
    provenance: dict[str, Any] | None = None
    confidence: float = 0.95

    @property
    def score(self) -> float | None:
        return self.overall.score

    @property
    def criteria(self) -> dict[str, float | None]:
        return self.overall.criteria

    @property
    def n(self) -> int:
        return self.overall.n

    def by(self, name: str) -> dict[str, JudgeScores]:
        """The breakdown ``by_<name>`` (label -> means); {} when the run had none."""
        return self.breakdowns.get(name, {})

    def scores(self, name: str, label: str | None) -> JudgeScores | None:
        """The means of one label of a breakdown (``label`` None: over every item); None when the
        result does not report that label."""
        return self.overall if label is None else self.by(name).get(label)

    def judged_items(self) -> list[JudgedItem]:
        return [item for item in self.items or () if isinstance(item, JudgedItem)]

    def to_dict(self) -> dict[str, Any]:
        out = self.overall.to_dict(self.confidence)
        out["n_failed"] = self.n_failed
        out["failed"] = [f.to_dict() for f in self.failed]
        for name, cells in self.breakdowns.items():
            out[f"by_{name}"] = {label: cell.to_dict(self.confidence) for label, cell in cells.items()}
        if self.judge is not None:
            out["judge"] = self.judge.to_dict()
        if self.items is not None:
            out["items"] = [item.to_dict() for item in self.items]
        out["confidence"] = self.confidence
        if self.provenance is not None:
            out["provenance"] = dict(self.provenance)
        return out

    @classmethod
    def from_dict(cls, data: object, where: str = "judge result") -> JudgeResult:
        """A result dict: this version's, or one written before results recorded their
        ``confidence`` (95% intervals under ``score_ci95``). Only ``score``/``criteria``/``n`` are
        required; a missing ``failed`` list reads as none, ``n_failed`` as its length."""
        result = _mapping(data, where, "the judge metric's result (a JSON object)")
        confidence = _number(result.get("confidence", 0.95), f"{where}.confidence")
        if confidence is None or not 0.0 < confidence < 1.0:
            raise ValueError(
                f"{where}.confidence: expected a level in (0, 1), got {result.get('confidence')!r}"
            )
        overall = JudgeScores.from_dict(result, confidence, where)
        failed_data = result.get("failed") or []
        if not isinstance(failed_data, list):
            raise ValueError(f"{where}.failed: expected a list of failed judgements, got {failed_data!r}")
        failed = [item_from_dict(f, f"{where}.failed[{i}]") for i, f in enumerate(failed_data)]
        if any(isinstance(f, JudgedItem) for f in failed):
            raise ValueError(f"{where}.failed: an entry without an 'error'")
        n_failed = result.get("n_failed")
        n_failed = len(failed) if n_failed is None else _whole(n_failed, f"{where}.n_failed")
        if failed and n_failed != len(failed):
            raise ValueError(f"{where}.n_failed: {n_failed}, but 'failed' lists {len(failed)}")
        breakdowns = {}
        for key, cells in result.items():
            if not key.startswith("by_") or key in _FIXED_KEYS:
                continue
            if not isinstance(cells, Mapping):
                raise ValueError(f"{where}: {key!r} must be an object of per-{key[3:]} scores")
            breakdowns[key[3:]] = {
                label: JudgeScores.from_dict(
                    _mapping(cell, f"{where}.{key}.{label}", "{'score', 'criteria', 'n'} with an integer n"),
                    confidence,
                    f"{where}.{key}.{label}",
                )
                for label, cell in cells.items()
            }
        items = result.get("items")
        if items is not None and not isinstance(items, list):
            raise ValueError(f"{where}.items: expected a list of per-item scores, got {items!r}")
        provenance = result.get("provenance")
        if provenance is not None:
            provenance = dict(_mapping(provenance, f"{where}.provenance", "an object"))
        return cls(
            overall=overall,
            failed=[f for f in failed if isinstance(f, FailedJudgement)],
            n_failed=n_failed,
            breakdowns=breakdowns,
            judge=None
            if result.get("judge") is None
            else JudgeInfo.from_dict(result["judge"], f"{where}.judge"),
            items=None
            if items is None
            else [item_from_dict(x, f"{where}.items[{i}]") for i, x in enumerate(items)],
            provenance=provenance,
            confidence=confidence,
        )


def results_to_dict(results: Mapping[str, JudgeResult]) -> dict[str, dict[str, Any]]:
    """``{task: result.to_dict()}``: the JSON of a ``--judge-results`` file's model entry."""
    return {task: result.to_dict() for task, result in results.items()}


def results_from_dict(data: Iterable[tuple[str, object]], where: str) -> dict[str, JudgeResult]:
    """``{task: JudgeResult}`` from ``(task, result dict)`` pairs, each checked under ``<where>.<task>``."""
    return {task: JudgeResult.from_dict(result, f"{where}.{task}") for task, result in data}
