"""The QA record validator: silent on valid records, one named violation per broken rule."""

from __future__ import annotations

import copy
import json

import pytest
from test_marinelife_questions import ANSWERS, DISTRACTORS, TURTLE

from marinelife16k.annotations import read_annotations
from marinelife16k.questions import assemble_records
from marinelife16k.sample import sample_attributes_path, sample_qa_path
from marinelife16k.schema import check_records, validate_records

VID = "MVK--mvk-9001"


@pytest.fixture
def records():
    return assemble_records(TURTLE, DISTRACTORS, seed=1, answers=ANSWERS)


def _by_type(records, qtype):
    return next(r for r in records if r["type"] == qtype)


def _found(problems):
    return {(p.question_id, p.field) for p in problems}


def test_valid_records_have_no_violation(records):
    assert validate_records(records) == []
    assert validate_records(records, [TURTLE]) == []
    check_records(records, [TURTLE])  # does not raise


def test_bundled_sample_is_valid():
    with sample_qa_path().open(encoding="utf-8") as f:
        sample = [json.loads(line) for line in f]
    videos = read_annotations(sample_attributes_path())
    assert len(sample) == 203 and len(videos) == 24
    assert validate_records(sample, videos) == []


# Each case breaks one rule of one record; the violation must name that record and field.
@pytest.mark.parametrize(
    ("qtype", "field", "value"),
    [
        ("central_object", "task", "captioning"),
        ("central_object", "type", "central_thing"),
        ("central_object", "question_format", "open_ended"),
        ("central_object", "collection", "XYZ"),
        ("central_object", "video_path", "MVK/other.mp4"),
        ("central_object", "video_file", "MVK/mvk-9001.mp4"),
        ("central_object", "question", "What is the main object?"),
        ("central_object", "prompt", "What is the central object in the video?"),
        ("central_object", "answer", "E"),
        ("central_object", "answer_text", ""),
        ("central_object", "central_object", ""),
        ("caption", "answer", "A"),
        ("environment", "evidence_attributes", {"environment": "shallow reef", "colour": "green"}),
    ],
)
def test_each_field_rule(records, qtype, field, value):
    record = _by_type(records, qtype)
    record[field] = value
    problems = validate_records(records)
    assert problems, f"breaking {field} went unnoticed"
    fields = {p.field.split(".")[0] for p in problems if p.question_id == record["question_id"]}
    assert field in fields


def test_id_must_match_collection_and_file(records):
    records[0]["id"] = "MVK--other"
    problems = validate_records(records)
    assert ("MVK--mvk-9001--q1", "id") in _found(problems)


def test_question_id_pattern(records):
    records[1]["question_id"] = "MVK--mvk-9001-q2"
    assert ("MVK--mvk-9001-q2", "question_id") in _found(validate_records(records))


def test_indices_must_be_sequential(records):
    last = records[-1]
    last["question_id"] = last["question_id"].replace("--q8", "--q9")
    problems = validate_records(records)
    assert [str(p) for p in problems] == [
        f"{VID}: question_id: indices must run q1..q8 without gaps; missing [8]"
    ]


def test_duplicate_question_ids(records):
    records[2]["question_id"] = records[1]["question_id"]
    assert ("MVK--mvk-9001--q2", "question_id") in _found(validate_records(records))


def test_mcq_needs_four_options_labelled_a_to_d(records):
    record = _by_type(records, "central_object")
    del record["options"][3]
    record["prompt"] = "ignored"
    assert ("MVK--mvk-9001--q1", "options") in _found(validate_records(records))
    records2 = assemble_records(TURTLE, DISTRACTORS, seed=1, answers=ANSWERS)
    swapped = _by_type(records2, "central_object")["options"]
    swapped[0]["label"], swapped[1]["label"] = swapped[1]["label"], swapped[0]["label"]
    assert ("MVK--mvk-9001--q1", "options") in _found(validate_records(records2))


def test_answer_letter_must_point_at_the_ground_truth(records):
    record = _by_type(records, "camera_motion")
    record["answer"] = "ABCD"[("ABCD".index(record["answer"]) + 1) % 4]
    problems = [p for p in validate_records(records) if p.field == "answer"]
    assert len(problems) == 1 and problems[0].question_id == record["question_id"]
    assert "not the answer_text" in problems[0].message


def test_options_must_differ(records):
    record = _by_type(records, "environment")
    wrong = next(o for o in record["options"] if o["text"] != record["answer_text"])
    wrong["text"] = record["answer_text"].upper()
    assert (record["question_id"], "options") in _found(validate_records(records))


def test_open_ended_has_no_options(records):
    record = _by_type(records, "camera_object_open_ended")
    record["options"] = [{"label": "A", "text": "x"}]
    assert (record["question_id"], "options") in _found(validate_records(records))


def test_shape_errors_name_the_field(records):
    del records[0]["video_id"]
    records[1]["surprise"] = 1
    records[2]["options"] = "A, B"
    records[3]["evidence_attributes"] = {"color": 3}
    found = _found(validate_records(records))
    assert {
        ("MVK--mvk-9001--q1", "video_id"),
        ("MVK--mvk-9001--q2", "surprise"),
        ("MVK--mvk-9001--q3", "options"),
        ("MVK--mvk-9001--q4", "evidence_attributes.color"),
    } <= found
    assert _found(validate_records(["not a record"])) == {("<record 1>", "<record>")}


def test_mandatory_types_must_be_present(records):
    kept = [r for r in records if r["type"] != "camera_motion"]
    for index, r in enumerate(kept, start=1):  # renumber so only the missing type is wrong
        r["question_id"] = f"{VID}--q{index}"
    problems = validate_records(kept)
    assert [str(p) for p in problems] == [f"{VID}: type: mandatory type camera_motion is missing"]


def test_conditional_type_only_when_its_attribute_exists(records):
    # The video has no lighting: a lighting question is invalid.
    lighting = copy.deepcopy(_by_type(records, "environment"))
    lighting.update(type="lighting", question="How is the lighting in the video?", question_id=f"{VID}--q9")
    lighting["prompt"] = lighting["prompt"].replace("How is the environment", "How is the lighting")
    lighting["evidence_attributes"] = {"lighting": ""}
    problems = validate_records([*records, lighting])
    assert (f"{VID}--q9", "type") in _found(problems)  # no lighting in its evidence
    lighting["evidence_attributes"] = {"lighting": "bright"}
    assert validate_records([*records, lighting]) == []  # alone, the record looks plausible...
    against = validate_records([*records, lighting], [TURTLE])
    assert (VID, "type") in _found(against)  # ...but the video's attributes have no lighting
    assert any("lighting is present but lighting is empty" in p.message for p in against)


def test_conditional_type_missing_although_attribute_exists(records):
    kept = [r for r in records if r["type"] != "environment"]
    problems = validate_records(kept, [TURTLE])
    assert [str(p) for p in problems] == [
        f"{VID}: type: conditional type environment is missing although environment exists"
    ]
    # central_object_motion may be left out: the QA generation decides whether movement_behavior is
    # about the central object (the release records why not; tests/test_marinelife_obk.py)
    without_motion = [r for r in records if r["type"] != "central_object_motion"]
    for index, r in enumerate(without_motion, start=1):
        r["question_id"] = f"{VID}--q{index}"
    assert validate_records(without_motion, [TURTLE]) == []


def test_answers_are_recomputed_from_the_attributes(records):
    record = _by_type(records, "central_object")
    for option in record["options"]:
        if option["text"] == record["answer_text"]:
            option["text"] = "hawksbill sea turtle"
    record["answer_text"] = "hawksbill sea turtle"
    record["prompt"] = (
        record["question"]
        + " "
        + " ".join(f"({o['label']}) {o['text']}" for o in record["options"])
        + " Answer with the option letter only."
    )
    record["evidence_attributes"] = {"central_object": "green sea turtle"}
    assert validate_records(records) == []  # internally consistent...
    problems = validate_records(records, [TURTLE])
    assert [(p.question_id, p.field) for p in problems] == [(record["question_id"], "answer_text")]


def test_evidence_must_match_the_attributes(records):
    record = _by_type(records, "camera_motion")
    record["evidence_attributes"] = {"camera_position": "full scene"}
    assert _found(validate_records(records, [TURTLE])) == {(record["question_id"], "evidence_attributes")}


def test_records_and_videos_must_match(records):
    other = {**TURTLE, "video_id": "mvk-9002", "video_file": "mvk-9002.mp4"}
    found = _found(validate_records(records, [other]))
    assert (VID, "id") in found and ("MVK--mvk-9002", "id") in found


def test_check_records_lists_violations(records):
    records[0]["task"] = "x"
    records[1]["answer"] = "Z"
    with pytest.raises(ValueError) as err:
        check_records(records, source="qa.jsonl")
    text = str(err.value)
    assert text.startswith("qa.jsonl: 2 schema violation(s)")
    assert "MVK--mvk-9001--q1: task: must be 'qa'" in text and "MVK--mvk-9001--q2: answer:" in text


def test_caption_answer_is_the_videos_caption(records):
    caption = _by_type(records, "caption")
    caption["answer_text"] = "A turtle."
    assert _found(validate_records(records, [TURTLE])) == {(caption["question_id"], "answer_text")}
    problems = validate_records(records, [{**TURTLE, "caption": ""}])
    assert [str(p) for p in problems] == [
        f"{caption['question_id']}: answer_text: the video has no caption to check it against"
    ]
