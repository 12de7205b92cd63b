"""The work folder contract between the BQA pipeline (which writes it) and the builder (which reads it).

Only the release part is read by :mod:`bqa.builder`; the pipeline keeps its step files elsewhere
in the same folder::

    <work>/clips/<id>.mp4                 clips as released: audio removed, one per record
    <work>/release/train.jsonl            final records, one JSON object per line (BQARecord.to_json):
    <work>/release/validation.jsonl         every feature of bqa.features.FEATURES except the video,
    <work>/release/test.jsonl               plus "clip", the clip's path relative to <work>
    <work>/release/meta.json              ReleaseMeta: group mapping, demographic codes, seed, ...

:func:`write_release` writes the split files first and ``meta.json`` last, each atomically, so a
folder with ``meta.json`` holds a finished release. :func:`read_release` checks every record
(fields, choices against the release's group mapping, demographics against its code tables,
unique ids, clip present) and reports all problems at once, each with file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from bqa.candidates import Candidates
from bqa.features import SPLITS
from bqa.records import BoLDAnnotation, BQARecord, Provenance
from bqa.vocabulary import DEFAULT_DEMOGRAPHIC_CODES, DEFAULT_GROUP_MAPPING, GroupMapping
from builders.files.folders import confined_path
from builders.files.jsonio import read_json_object, read_jsonl, write_jsonl_atomic, write_text_atomic

CLIPS_DIR, RELEASE_DIR, META_FILE = "clips", "release", "meta.json"


def split_path(work_dir: str | Path, split: str) -> Path:
    return Path(work_dir) / RELEASE_DIR / f"{split}.jsonl"


def meta_path(work_dir: str | Path) -> Path:
    return Path(work_dir) / RELEASE_DIR / META_FILE


def clip_relpath(record_id: str) -> str:
    """Where the pipeline puts a record's clip, relative to the work folder."""
    return f"{CLIPS_DIR}/{record_id}.mp4"


def make_record(
    annotation: BoLDAnnotation,
    candidates: Candidates,
    *,
    question: str,
    difficulty: str,
    provenance: Provenance,
    difficulty_reason: str,
    extra: Mapping[str, Any] | None = None,
) -> BQARecord:
    """Assemble a final row from its BoLD annotation, its STEP1 candidates and the LLM steps' results."""
    return BQARecord(
        id=annotation.id,
        clip=clip_relpath(annotation.id),
        question=question,
        choices=candidates.choices,
        answer=candidates.answer,
        answer_group=candidates.answer_group,
        choice_groups=candidates.choice_groups,
        difficulty=difficulty,
        gender=annotation.gender,
        age=annotation.age,
        ethnicity=annotation.ethnicity,
        emotions=dict(annotation.emotions),
        valence=annotation.valence,
        arousal=annotation.arousal,
        dominance=annotation.dominance,
        annotation_confidence=annotation.annotation_confidence,
        source=annotation.source(),
        provenance=provenance,
        difficulty_reason=difficulty_reason,
        extra=dict(extra or {}),
    )


@dataclass(frozen=True)
class ReleaseMeta:
    """Release-wide settings, recorded so that the card can state them and a rerun can match them."""

    group_mapping: GroupMapping = DEFAULT_GROUP_MAPPING
    demographic_codes: Mapping[str, Mapping[int, str]] = field(
        default_factory=lambda: DEFAULT_DEMOGRAPHIC_CODES
    )
    seed: int = 0
    source: str = "BoLD"  # what the clips and annotations came from
    split_rule: str = "by film, 6:2:2"
    extra: Mapping[str, Any] = field(default_factory=dict)  # anything else the pipeline wants on record

    def to_json(self) -> dict[str, Any]:
        return {
            "group_mapping": self.group_mapping.to_dict(),
            "demographic_codes": {
                k: {str(c): v for c, v in t.items()} for k, t in self.demographic_codes.items()
            },
            "seed": self.seed,
            "source": self.source,
            "split_rule": self.split_rule,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReleaseMeta:
        mapping = data.get("group_mapping") or DEFAULT_GROUP_MAPPING.to_dict()
        groups = {str(g): tuple(v) for g, v in mapping["groups"].items()}
        codes = data.get("demographic_codes") or DEFAULT_DEMOGRAPHIC_CODES
        return cls(
            group_mapping=GroupMapping(str(mapping.get("name", "custom")), groups),
            demographic_codes={k: {int(c): str(v) for c, v in t.items()} for k, t in codes.items()},
            seed=int(data.get("seed", 0)),
            source=str(data.get("source", "BoLD")),
            split_rule=str(data.get("split_rule", "")),
            extra=dict(data.get("extra") or {}),
        )


@dataclass
class Release:
    work_dir: Path
    meta: ReleaseMeta
    splits: dict[str, list[BQARecord]]

    def clip_path(self, record: BQARecord) -> Path:
        """The record's clip, which must lie inside the work folder (else a ValueError naming it)."""
        where = f"{self.work_dir / RELEASE_DIR}: record {record.id}, field 'clip'"
        return confined_path(self.work_dir, record.clip, where)


def write_release(work_dir: str | Path, splits: Mapping[str, Iterable[BQARecord]], meta: ReleaseMeta) -> Path:
    """Write the release part of a work folder (the three splits, then ``meta.json``); returns its folder."""
    if set(splits) != set(SPLITS):
        raise ValueError(f"a release has exactly the splits {SPLITS}, got {sorted(splits)}")
    work_dir = Path(work_dir)
    meta_path(work_dir).unlink(missing_ok=True)  # the release is unfinished until meta.json is back
    for split in SPLITS:
        write_jsonl_atomic(split_path(work_dir, split), (r.to_json() for r in splits[split]))
    # Not sorted: the order of the groups is part of the mapping (STEP1 draws in that order).
    write_text_atomic(meta_path(work_dir), json.dumps(meta.to_json(), ensure_ascii=False, indent=2) + "\n")
    return work_dir / RELEASE_DIR


def read_release(work_dir: str | Path, *, check_clips: bool = True) -> Release:
    """Read and check the release part of a work folder; ValueError lists every problem found."""
    work_dir = Path(work_dir)
    if not meta_path(work_dir).is_file():
        raise FileNotFoundError(
            f"{work_dir}: no finished release ({RELEASE_DIR}/{META_FILE} is missing); run the pipeline first"
        )
    try:
        meta = ReleaseMeta.from_json(read_json_object(meta_path(work_dir)))
    except (KeyError, TypeError, AttributeError) as err:
        raise ValueError(
            f"{meta_path(work_dir)}: malformed release metadata ({type(err).__name__}: {err})"
        ) from None
    problems: list[str] = []
    splits: dict[str, list[BQARecord]] = {}
    first_seen: dict[str, str] = {}
    for split in SPLITS:
        path = split_path(work_dir, split)
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        records = []
        for line, data in enumerate(read_jsonl(path), start=1):
            where = f"{path}, line {line}"
            try:
                record = BQARecord.from_json(data)
            except ValueError as err:
                problems.append(f"{where}: {err}")
                continue
            where += f" (id {record.id})"
            problems += [f"{where}: {p}" for p in record_problems(record, meta)]
            if record.id in first_seen:
                problems.append(f"{where}: duplicate id, first at {first_seen[record.id]}")
            first_seen.setdefault(record.id, where)
            clip = PurePosixPath(record.clip)
            if clip.is_absolute() or ".." in clip.parts:
                problems.append(f"{where}: clip {record.clip!r} must be a path inside the work folder")
            elif check_clips and not (work_dir / clip).is_file():
                problems.append(f"{where}: clip file {work_dir / clip} is missing")
            records.append(record)
        splits[split] = records
    if problems:
        shown = "\n  - ".join(problems[:50])
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        raise ValueError(f"{work_dir}: the release has {len(problems)} problem(s):\n  - {shown}{more}")
    return Release(work_dir=work_dir, meta=meta, splits=splits)


def record_problems(record: BQARecord, meta: ReleaseMeta) -> list[str]:
    """A record's problems under a release's mapping and demographic tables."""
    problems = record.problems(meta.group_mapping)
    for key in ("gender", "age", "ethnicity"):
        allowed = set(meta.demographic_codes[key].values())
        if getattr(record, key) not in allowed:
            problems.append(f"{key} {getattr(record, key)!r} is not one of {sorted(allowed)}")
    return problems
