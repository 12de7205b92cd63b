"""Typed records that BQA's reader, pipeline, builder and statistics pass to one another.

* :class:`BoLDAnnotation`: one row of a BoLD annotation CSV, decoded (labels, not codes).
* :class:`SourceClip`: where a BQA row comes from in BoLD (clip path, film, person, frame range).
* :class:`Provenance`: which model and prompt (name + version) produced each LLM-made part.
* :class:`BQARecord`: one final row of a release, everything but the video bytes. It is what the
  pipeline writes to ``<work>/release/<split>.jsonl`` (:meth:`BQARecord.to_json`) and what the
  builder turns into an example of :data:`bqa.features.FEATURES` (:meth:`BQARecord.to_example`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bqa.vocabulary import (
    DEFAULT_GROUP_MAPPING,
    DIFFICULTIES,
    DIFFICULTY_REASONS,
    EMOTIONS,
    GroupMapping,
)

#: Number of choices of every question: the answer plus one distractor from each of 3 other groups.
NUM_CHOICES = 4


def film_of(video: str) -> str:
    """The source film of a BoLD clip path: its parent folder (``003/IzvOYVMltkI.mp4/0114.mp4`` ->
    ``IzvOYVMltkI.mp4``). Clips of one film share actors and scenes, so splits are made by film."""
    parts = PurePosixPath(video).parts
    if len(parts) < 2:
        raise ValueError(
            f"BoLD clip path {video!r} has no film folder (expected like 003/<film>.mp4/0114.mp4)"
        )
    return parts[-2]


def clip_id(video: str, person_id: int) -> str:
    """A file-name-safe id for one (clip, person) annotation: ``003/IzvOYVMltkI.mp4/0114.mp4``, person 2
    -> ``003_IzvOYVMltkI_0114_p2``. BoLD annotates each tracked person of a clip separately."""
    parts = [PurePosixPath(p).stem if p.endswith(".mp4") else p for p in PurePosixPath(video).parts]
    return "_".join([*parts, f"p{person_id}"])


@dataclass(frozen=True)
class SourceClip:
    """Reference to the BoLD annotation a BQA row was made from."""

    bold_video: str  # path relative to the BoLD video root, as in the CSV
    bold_split: str  # the BoLD annotation file it came from: "train" or "val"
    film_id: str
    person_id: int
    min_frame: int
    max_frame: int

    def to_json(self) -> dict[str, Any]:
        return {
            "bold_video": self.bold_video,
            "bold_split": self.bold_split,
            "film_id": self.film_id,
            "person_id": self.person_id,
            "min_frame": self.min_frame,
            "max_frame": self.max_frame,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SourceClip:
        return cls(
            bold_video=_str(data, "bold_video"),
            bold_split=_str(data, "bold_split"),
            film_id=_str(data, "film_id"),
            person_id=_int(data, "person_id"),
            min_frame=_int(data, "min_frame"),
            max_frame=_int(data, "max_frame"),
        )


@dataclass(frozen=True)
class BoLDAnnotation:
    """One decoded row of a BoLD annotation CSV (``line`` is 1-based, for error messages)."""

    video: str
    person_id: int
    min_frame: int
    max_frame: int
    emotions: Mapping[str, float]  # the 26 scores, keys in BoLD order
    valence: float
    arousal: float
    dominance: float
    gender: str
    age: str
    ethnicity: str
    annotation_confidence: float
    bold_split: str
    source_file: str
    line: int
    clip_path: Path | None = None  # resolved under the BoLD video root

    @property
    def film_id(self) -> str:
        return film_of(self.video)

    @property
    def id(self) -> str:
        return clip_id(self.video, self.person_id)

    def source(self) -> SourceClip:
        return SourceClip(
            bold_video=self.video,
            bold_split=self.bold_split,
            film_id=self.film_id,
            person_id=self.person_id,
            min_frame=self.min_frame,
            max_frame=self.max_frame,
        )


@dataclass(frozen=True)
class StepProvenance:
    """The model that answered one LLM step (as the server reported it) and the prompt it was given."""

    model: str
    prompt: str
    prompt_version: str

    def to_json(self) -> dict[str, str]:
        return {"model": self.model, "prompt": self.prompt, "prompt_version": self.prompt_version}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StepProvenance:
        return cls(_str(data, "model"), _str(data, "prompt"), _str(data, "prompt_version"))


#: The LLM steps of the paper: STEP2 writes the question, STEP3 filters it, STEP4 answers it (Easy/Hard).
PROVENANCE_STEPS: tuple[str, ...] = ("question", "filter", "difficulty")


@dataclass(frozen=True)
class Provenance:
    question: StepProvenance
    filter: StepProvenance
    difficulty: StepProvenance

    def to_json(self) -> dict[str, dict[str, str]]:
        return {step: getattr(self, step).to_json() for step in PROVENANCE_STEPS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        return cls(**{step: StepProvenance.from_json(_map(data, step)) for step in PROVENANCE_STEPS})


@dataclass(frozen=True)
class BQARecord:
    """One final BQA row, without the video bytes; ``clip`` is the clip's path relative to the work folder."""

    id: str
    clip: str
    question: str
    choices: tuple[str, ...]
    answer: str
    answer_group: str
    choice_groups: tuple[str, ...]
    difficulty: str
    gender: str
    age: str
    ethnicity: str
    emotions: Mapping[str, float]
    valence: float
    arousal: float
    dominance: float
    annotation_confidence: float
    source: SourceClip
    provenance: Provenance
    difficulty_reason: str  # why STEP4 gave this difficulty (:data:`bqa.vocabulary.DIFFICULTY_REASONS`)
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)  # ignored by the builder

    __hash__ = None  # type: ignore[assignment]  # mutable mappings inside: never hashable

    def problems(self, mapping: GroupMapping = DEFAULT_GROUP_MAPPING) -> list[str]:
        """What makes this row inconsistent (empty when it is valid) under ``mapping``."""
        out = []
        if len(self.choices) != NUM_CHOICES or len(set(self.choices)) != NUM_CHOICES:
            out.append(f"choices must be {NUM_CHOICES} distinct labels, got {list(self.choices)}")
        unknown = [c for c in self.choices if c not in mapping.group_of]
        if unknown:
            out.append(f"choices {unknown} are not BoLD emotions")
        if self.answer not in self.choices:
            out.append(f"answer {self.answer!r} is not one of the choices {list(self.choices)}")
        if len(self.choice_groups) != len(self.choices):
            out.append("choice_groups must have one group per choice")
        elif not unknown:
            expected = tuple(mapping.group_of[c] for c in self.choices)
            if tuple(self.choice_groups) != expected:
                out.append(
                    f"choice_groups {list(self.choice_groups)} != {list(expected)} under {mapping.name!r}"
                )
            if len(set(expected)) != len(expected):
                out.append(f"two choices share a group: {list(expected)}")
        if self.answer in mapping.group_of and self.answer_group != mapping.group_of[self.answer]:
            out.append(f"answer_group {self.answer_group!r} != {mapping.group_of[self.answer]!r}")
        if self.difficulty not in DIFFICULTIES:
            out.append(f"difficulty {self.difficulty!r} is not one of {DIFFICULTIES}")
        elif DIFFICULTY_REASONS.get(self.difficulty_reason) != self.difficulty:
            out.append(
                f"difficulty_reason {self.difficulty_reason!r} does not give difficulty {self.difficulty!r} "
                f"(reasons: {DIFFICULTY_REASONS})"
            )
        if list(self.emotions) != list(EMOTIONS):
            out.append("emotions must hold the 26 BoLD scores in BoLD order")
        if not self.question.strip():
            out.append("empty question")
        return out

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "clip": self.clip,
            "question": self.question,
            "choices": list(self.choices),
            "answer": self.answer,
            "answer_group": self.answer_group,
            "choice_groups": list(self.choice_groups),
            "difficulty": self.difficulty,
            "difficulty_reason": self.difficulty_reason,
            "gender": self.gender,
            "age": self.age,
            "ethnicity": self.ethnicity,
            "emotions": dict(self.emotions),
            "valence": self.valence,
            "arousal": self.arousal,
            "dominance": self.dominance,
            "annotation_confidence": self.annotation_confidence,
            "source": self.source.to_json(),
            "provenance": self.provenance.to_json(),
        }
        if self.extra:
            data["extra"] = dict(self.extra)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BQARecord:
        """Inverse of :meth:`to_json`; a missing or mistyped field raises ValueError naming it."""
        emotions = _map(data, "emotions")
        missing = [e for e in EMOTIONS if e not in emotions]
        if missing:
            raise ValueError(f"field 'emotions' lacks scores for {missing}")
        return cls(
            id=_str(data, "id"),
            clip=_str(data, "clip"),
            question=_str(data, "question"),
            choices=tuple(_str_list(data, "choices")),
            answer=_str(data, "answer"),
            answer_group=_str(data, "answer_group"),
            choice_groups=tuple(_str_list(data, "choice_groups")),
            difficulty=_str(data, "difficulty"),
            difficulty_reason=_str(data, "difficulty_reason"),
            gender=_str(data, "gender"),
            age=_str(data, "age"),
            ethnicity=_str(data, "ethnicity"),
            emotions={e: _float(emotions, e) for e in EMOTIONS},
            valence=_float(data, "valence"),
            arousal=_float(data, "arousal"),
            dominance=_float(data, "dominance"),
            annotation_confidence=_float(data, "annotation_confidence"),
            source=SourceClip.from_json(_map(data, "source")),
            provenance=Provenance.from_json(_map(data, "provenance")),
            extra=dict(data.get("extra") or {}),
        )

    def to_example(self, video: Any) -> dict[str, Any]:
        """This row as an example of :data:`bqa.features.FEATURES`, with ``video`` as the video value."""
        data = self.to_json()
        del data["clip"]
        data.pop("extra", None)
        return {"id": data.pop("id"), "video": video, **data}


def _get(data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        raise ValueError(f"missing field {key!r}")
    return data[key]


def _str(data: Mapping[str, Any], key: str) -> str:
    value = _get(data, key)
    if not isinstance(value, str):
        raise ValueError(f"field {key!r} must be a string, got {value!r}")
    return value


def _int(data: Mapping[str, Any], key: str) -> int:
    value = _get(data, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"field {key!r} must be an integer, got {value!r}")
    return value


def _float(data: Mapping[str, Any], key: str) -> float:
    value = _get(data, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"field {key!r} must be a finite number, got {value!r}")
    return float(value)


def _map(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = _get(data, key)
    if not isinstance(value, Mapping):
        raise ValueError(f"field {key!r} must be an object, got {value!r}")
    return value


def _str_list(data: Mapping[str, Any], key: str) -> list[str]:
    value = _get(data, key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {key!r} must be a list of strings, got {value!r}")
    return value
