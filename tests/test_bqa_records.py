"""Records, the schema and the work folder contract: round trips, checks, and precise errors."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import datasets
import pytest

from bqa.bold import read_bold
from bqa.candidates import extract_candidates
from bqa.card import FIELD_DESCRIPTIONS
from bqa.features import FEATURES, SPLITS, TEXT_COLUMNS
from bqa.records import BQARecord, Provenance, StepProvenance
from bqa.sample import sample_root
from bqa.vocabulary import DEFAULT_GROUP_MAPPING, EMOTION_GROUPS, GroupMapping
from bqa.workfolder import ReleaseMeta, make_record, meta_path, read_release, split_path, write_release

PROVENANCE = Provenance(
    question=StepProvenance("gen-model-001", "bqa-question", "2"),
    filter=StepProvenance("filter-model", "bqa-filter", "1"),
    difficulty=StepProvenance("gen-model-001", "bqa-difficulty", "1"),
)


def _records(n: int | None = None) -> list[BQARecord]:
    annotations = read_bold(sample_root()).annotations[:n]
    return [
        make_record(
            a,
            extract_candidates(a.emotions, key=a.id, seed=3),
            question=f"Which feeling does the person in {a.id} show?",
            difficulty="Hard" if i % 2 else "Easy",
            difficulty_reason="wrong_choice" if i % 2 else "right_choice",
            provenance=PROVENANCE,
        )
        for i, a in enumerate(annotations)
    ]


def test_record_json_round_trip_and_fields():
    for record in _records():
        data = json.loads(json.dumps(record.to_json()))
        assert BQARecord.from_json(data) == record
        assert record.problems() == []
        assert record.clip == f"clips/{record.id}.mp4"
        assert record.source.film_id == record.source.bold_video.split("/")[1]


def test_schema_matches_records():
    record = _records(1)[0]
    example = record.to_example("/some/clip.mp4")
    assert list(example) == list(FEATURES)  # same fields, same order
    encoded = FEATURES.encode_example(example)  # raises if a value does not fit its feature
    assert encoded["video"] == {"path": "/some/clip.mp4", "bytes": None}
    assert encoded["emotions"]["Doubt/Confusion"] == pytest.approx(record.emotions["Doubt/Confusion"])
    assert set(FIELD_DESCRIPTIONS) == set(FEATURES)  # the card documents every field
    assert TEXT_COLUMNS == tuple(n for n in FEATURES if n != "video")
    assert isinstance(FEATURES["video"], datasets.Video)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"choices": ("Anger", "Anger", "Peace", "Fatigue")}, "4 distinct labels"),
        ({"answer": "Joy"}, "answer 'Joy' is not one of the choices"),
        ({"difficulty": "Medium"}, "difficulty 'Medium'"),
        ({"answer_group": "Sadness"}, "answer_group 'Sadness'"),
        ({"choice_groups": ("Anger",)}, "one group per choice"),
        ({"question": "  "}, "empty question"),
    ],
)
def test_record_problems(change, problem):
    record = _records(1)[0]
    if "answer_group" in change and record.answer_group == "Sadness":
        change = {"answer_group": "Anger"}
        problem = "answer_group 'Anger'"
    bad = dataclasses.replace(record, **change)
    assert any(problem in p for p in bad.problems()), bad.problems()


def test_from_json_names_the_bad_field():
    data = _records(1)[0].to_json()
    del data["question"]
    with pytest.raises(ValueError, match="missing field 'question'"):
        BQARecord.from_json(data)
    data = _records(1)[0].to_json()
    data["source"]["person_id"] = "one"
    with pytest.raises(ValueError, match="field 'person_id' must be an integer"):
        BQARecord.from_json(data)
    data = _records(1)[0].to_json()
    del data["emotions"]["Fear"]
    with pytest.raises(ValueError, match=r"lacks scores for \['Fear'\]"):
        BQARecord.from_json(data)


def _release(tmp_path: Path, meta: ReleaseMeta | None = None) -> dict[str, list[BQARecord]]:
    records = _records()
    splits = {"train": records[:20], "validation": records[20:30], "test": records[30:]}
    for record in records:
        (tmp_path / record.clip).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / record.clip).write_bytes(b"not read by read_release")
    write_release(tmp_path, splits, meta or ReleaseMeta(seed=3))
    return splits


def test_release_round_trip_keeps_the_mapping_order(tmp_path):
    groups = {g: EMOTION_GROUPS[g] for g in ("Sadness", "Anger", "Pleasure", "Happiness")}
    meta = ReleaseMeta(group_mapping=GroupMapping("reversed", groups), seed=3, extra={"note": "x"})
    splits = _release(tmp_path, meta)
    release = read_release(tmp_path)
    assert release.splits == splits
    assert release.meta.group_mapping.group_names == ("Sadness", "Anger", "Pleasure", "Happiness")
    assert release.meta.group_mapping.name == "reversed"
    assert release.meta.demographic_codes == meta.demographic_codes
    assert (release.meta.seed, release.meta.extra) == (3, {"note": "x"})
    assert release.clip_path(splits["test"][0]) == tmp_path / splits["test"][0].clip


def test_read_release_lists_every_problem_with_file_and_line(tmp_path):
    splits = _release(tmp_path)
    lines = split_path(tmp_path, "validation").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["answer"] = "Nothing"
    bad["ethnicity"] = "Martian"
    lines[1] = json.dumps(bad)
    lines[2] = json.dumps(splits["train"][0].to_json())  # duplicate id
    split_path(tmp_path, "validation").write_text("\n".join(lines) + "\n")
    (tmp_path / splits["test"][0].clip).unlink()
    with pytest.raises(ValueError) as info:
        read_release(tmp_path)
    message = str(info.value)
    where = f"{split_path(tmp_path, 'validation')}, line"
    assert f"{where} 2 (id {bad['id']}): answer 'Nothing' is not one of the choices" in message
    assert f"{where} 2 (id {bad['id']}): ethnicity 'Martian' is not one of" in message
    assert (
        f"{where} 3 (id {splits['train'][0].id}): duplicate id, first at {split_path(tmp_path, 'train')}, line 1"
        in message
    )
    assert f"clip file {tmp_path / splits['test'][0].clip} is missing" in message
    assert "4 problem(s)" in message


def test_unfinished_release_and_wrong_splits(tmp_path):
    _release(tmp_path)
    meta_path(tmp_path).unlink()
    with pytest.raises(FileNotFoundError, match="no finished release"):
        read_release(tmp_path)
    with pytest.raises(ValueError, match="exactly the splits"):
        write_release(tmp_path, {"train": [], "valid": [], "test": []}, ReleaseMeta())
    assert SPLITS == ("train", "validation", "test")
    assert DEFAULT_GROUP_MAPPING.name == ReleaseMeta().group_mapping.name
