"""QA generation's deterministic half: the reply schema per video, the distractor checks, the records."""

from __future__ import annotations

import json
import re

import pytest

from builders.llm.schema import ReplyError, ReplySchema, check_value
from builders.pipelines.marinelife.checks import caption_problems, foreign_subject, option_problems
from builders.pipelines.marinelife.qa_generation import (
    MOTION_CHECK_FIELD,
    REFERENCE_FIELD,
    build_records,
    mcq_types,
    qa_request,
    reply_model,
    reply_problems,
)
from builders.pipelines.marinelife.refiner import refine_request
from builders.pipelines.marinelife.reviewer import review_request, review_score
from builders.scoring.phrases import mentions, normalized
from marinelife16k.annotations import read_annotations
from marinelife16k.sample import sample_attributes_path
from marinelife16k.schema import validate_records


@pytest.fixture(scope="module")
def rows():
    return {row["video_id"]: row for row in read_annotations(sample_attributes_path())}


def _full(rows):
    """A sample video with every conditional attribute, and one without lighting."""
    full = next(r for r in rows.values() if r["movement_behavior"] and r["environment"] and r["lighting"])
    partial = next(r for r in rows.values() if not r["lighting"])
    return full, partial


def _good_reply(row, **overrides):
    """A valid reply written by hand for ``row`` (independent of the scripted responder)."""
    data = {
        "central_object": ["whitetip reef shark", "common octopus", "spotted eagle ray"],
        "central_object_appearance": [
            {"color": "bright yellow with black stripes", "size_shape": "tiny, tube-shaped"},
            {"color": "translucent white", "size_shape": "large, flat disc shape"},
            {"color": row["color"], "size_shape": "small, star-shaped with five arms"},
        ],
        "object_detect": [[row["central_object"], "dugong"], ["barracuda"], ["giant clam", "sea star"]],
        "camera_motion": [
            {"camera_position": "wide shot from a distance", "camera_angle": "top-down, slow zoom out"},
            {"camera_position": row["camera_position"], "camera_angle": "high angle looking down, static"},
            {"camera_position": "partial view of the central object", "camera_angle": "low angle, tilt up"},
        ],
        "central_object_motion": ["resting motionless", "darting away from the camera", "hovering in place"],
        MOTION_CHECK_FIELD: {
            "describes_central_object": True,
            "subject": row["central_object"],
            "central_object_movement": row["movement_behavior"],
        },
        "environment": ["kelp forest", "muddy harbour bottom", "mangrove roots"],
        "lighting": ["artificial dive light at night", "overcast, flat light", "strong backlight"],
        REFERENCE_FIELD: f"The camera follows the {row['central_object']} as it moves.",
    }
    data.update(overrides)
    types = tuple(mcq_types(row))
    extra = (REFERENCE_FIELD, MOTION_CHECK_FIELD) if "central_object_motion" in types else (REFERENCE_FIELD,)
    keep = {k: v for k, v in data.items() if k in types or k in extra}
    return reply_model(types, True).model_validate(keep)


def test_reply_schema_has_exactly_the_videos_types(rows):
    full, partial = _full(rows)
    for row in (full, partial):
        request = qa_request({**row, "caption": "A caption."})
        fields = set(request.schema.model_json_schema()["properties"])
        check = {MOTION_CHECK_FIELD} if row["movement_behavior"] else set()
        assert fields == {*mcq_types(row), REFERENCE_FIELD, *check}
        assert ("lighting" in fields) == bool(row["lighting"])
        assert request.schema_name == "marinelife_qa_distractors"
        schema = request.schema.model_json_schema()
        assert schema["properties"]["central_object"]["minItems"] == 3
        assert schema["properties"]["central_object"]["maxItems"] == 3
    text = qa_request({**full, "caption": "A caption."}).messages[0]["content"]
    answers = json.loads(
        text.split("Correct answers, by question type (JSON):", 1)[1].strip().splitlines()[0]
    )
    assert answers["central_object_appearance"] == {"color": full["color"], "size_shape": full["size_shape"]}
    assert answers["lighting"] == full["lighting"]
    template = qa_request({**full, "caption": "A caption."}, reference=False)
    assert REFERENCE_FIELD not in template.schema.model_json_schema()["properties"]


def test_qa_request_needs_the_final_caption(rows):
    full, _ = _full(rows)
    with pytest.raises(ValueError, match="no final caption"):
        qa_request({**full, "caption": ""})


def test_valid_reply_gives_valid_records_in_the_papers_format(rows):
    full, partial = _full(rows)
    for row in (full, partial):
        row = {**row, "caption": "A final caption."}
        reply = _good_reply(row)
        assert reply_problems(row, reply) == []
        records = build_records(row, reply, seed=7)
        assert validate_records(records, [row]) == []
        by_type = {r["type"]: r for r in records}
        assert [r["question_id"] for r in records] == [
            f"{row['id']}--q{i}" for i in range(1, len(records) + 1)
        ]
        appearance = by_type["central_object_appearance"]
        expected = f"color: {row['color']}; size/shape: {row['size_shape']}"
        assert appearance["answer_text"] == expected
        assert [o["text"] for o in appearance["options"]].count(expected) == 1
        letter = next(o["label"] for o in appearance["options"] if o["text"] == expected)
        assert appearance["answer"] == letter
        assert appearance["prompt"].endswith("Answer with the option letter only.")
        # distractors keep the answer's format, so the format does not give the answer away
        assert all(
            o["text"].startswith("color: ") and "; size/shape: " in o["text"] for o in appearance["options"]
        )
        assert by_type["caption"]["answer_text"] == "A final caption."
        assert by_type["camera_object_open_ended"]["answer_text"] == getattr(reply, REFERENCE_FIELD)
        assert ("lighting" in by_type) == bool(row["lighting"])
        # the option order is a seeded shuffle: the same seed gives the same records, another may not
        assert build_records(row, reply, seed=7) == records
        orders = {tuple(o["text"] for o in build_records(row, reply, seed=s)[0]["options"]) for s in range(8)}
        assert len(orders) > 1


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"central_object": ["GREEN  Sea Turtle.", "dugong", "seahorse"]}, "is the correct answer"),
        ({"central_object": ["dugong", "Dugong", "seahorse"]}, "are the same"),
        ({"central_object": ["sea turtle", "dugong", "seahorse"]}, "only rewords the correct answer"),
        (
            {"object_detect": [["green sea turtle"], ["dugong"], ["seahorse"]]},
            "names only objects the video shows",
        ),
        (
            {"central_object_motion": ["a reef shark circling the area", "resting", "hovering in place"]},
            "must describe a movement or state of the green sea turtle",
        ),
        ({REFERENCE_FIELD: "The camera pans across the reef."}, "must name the central object"),
        (
            {"object_detect": [["dugong", " "], ["barracuda"], ["giant clam"]]},
            "object_detect distractor 1 is empty",
        ),
        (
            {"camera_motion": [{"camera_position": "full scene", "camera_angle": ""}] * 3},
            "camera_motion distractor 1 is empty",
        ),
    ],
)
def test_bad_distractors_are_named(rows, override, expected):
    row = {**rows["mvk-0103"], "caption": "A caption."}
    assert row["central_object"] == "green sea turtle" and row["movement_behavior"]
    reply = _good_reply(row, **override)
    problems = reply_problems(row, reply)
    assert any(expected in p for p in problems), problems
    request = qa_request(row)
    with pytest.raises(ValueError, match=re.escape(expected)):
        request.validator(reply)


def test_validator_accepts_a_good_reply_and_builds_nothing_invalid(rows):
    row = {**rows["mvk-0103"], "caption": "A caption."}
    qa_request(row).validator(_good_reply(row))  # no exception


def test_text_checks():
    assert normalized("  Green  Sea Turtle. ") == "green sea turtle"
    assert mentions("a school of bigeye trevallies circles", "school of bigeye trevally")
    assert not mentions("a school of jacks", "school of bigeye trevally")
    assert option_problems("x", "Reef", ["reef ", "a", "A"]) == [
        "x distractor 1 ('reef ') is the correct answer; write a wrong option",
        "x distractors 2 and 3 are the same ('A'); make them differ",
    ]
    assert foreign_subject("resting in a crevice", "giant moray eel", ["cleaner shrimp"]) is None
    assert foreign_subject("the eel sliding out of its hole", "giant moray eel", []) is None
    assert foreign_subject("a grouper swimming past", "giant moray eel", []) == "a grouper swimming past"
    assert foreign_subject("cleaner shrimp picking at its teeth", "giant moray eel", ["cleaner shrimp"]) == (
        "cleaner shrimp"
    )
    assert caption_problems("") == ["the caption is empty"]
    assert caption_problems(" ".join(["word"] * 80))[0].startswith("the caption has 80 words")
    assert caption_problems(" ".join(["word"] * 79)) == []
    assert caption_problems("one line\nanother") == [
        "the caption spans several lines; write one sentence on one line"
    ]


def test_reviewer_and_refiner_requests(rows):
    row = rows["mvk-0103"]
    review = review_request("A turtle swims.", row, "mvk-0103")
    assert review.prompt_ref == ("marinelife_caption_review", "2") and review.item_id == "mvk-0103"
    text = review.messages[0]["content"]
    assert f"- central_object: {row['central_object']}" in text and "A turtle swims." in text
    assert "- object_4: (none annotated)" in text  # the empty attribute is shown as such
    assert review_score({"justification": "close", "alignment": 3}) == (3, "close")
    refine = refine_request("A turtle swims.", 2, 3.5, row)
    text = refine.messages[0]["content"]
    assert "scored their agreement 2 out of 5" in text and "threshold of 3.5" in text
    assert f"- movement_behavior: {row['movement_behavior']}" in text
    schema = ReplySchema.of(refine.schema, refine.schema_name)
    with pytest.raises(ReplyError, match="must name the central object"):
        check_value({"caption": "A fish swims."}, schema, refine.validator)
    assert check_value({"caption": "A green sea turtle swims."}, schema, refine.validator).caption
