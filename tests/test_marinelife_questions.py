"""The deterministic half of MarineLife-16K's QA records, and the camera-kind rule."""

from __future__ import annotations

import pytest

from marinelife16k.annotations import video_row
from marinelife16k.questions import (
    QUESTION_TEXTS,
    applicable_types,
    assemble_record,
    assemble_records,
    camera_object_reference,
    candidate_types,
)
from marinelife16k.vocabulary import MOVING, QUESTION_TYPES, STATIC, camera_kind

TURTLE = video_row(
    {
        "video_id": "mvk-9001",
        "collection": "MVK",
        "video_file": "mvk-9001.mp4",
        "central_object": "green sea turtle",
        "object_2": "hard coral",
        "object_3": "",
        "object_4": "yellow tang",
        "texture": "patterned scutes",
        "color": "olive green",
        "size_shape": "large, oval shell",
        "environment": "shallow reef",
        "lighting": "",
        "video_clarity": "clear",
        "movement_behavior": "swimming slowly forward",
        "camera_position": "full scene",
        "camera_angle": "eye-level, slow pan to the left",
        "caption": "A green sea turtle swims slowly forward over a shallow reef.",
    }
)
DISTRACTORS = {
    "central_object": ["hawksbill turtle", "manta ray", "reef shark"],
    "central_object_appearance": [
        "color: brown; size/shape: large, oval shell",
        "color: olive green; size/shape: small, round body",
        "color: black; size/shape: long, slender body",
    ],
    "object_detect": [
        "green sea turtle, sponge",
        "green sea turtle, hard coral, diver",
        "manta ray, yellow tang",
    ],
    "camera_motion": [
        "camera position/view: close-up; camera angle/movement: eye-level, slow pan to the left",
        "camera position/view: full scene; camera angle/movement: top-down, static",
        "camera position/view: partial view; camera angle/movement: low angle, tilting up",
    ],
    "central_object_motion": ["resting on the sand", "surfacing to breathe", "feeding on seagrass"],
    "environment": ["kelp forest", "open water", "sandy lagoon"],
}
# The central object's movement, as the QA generation cuts it out of movement_behavior.
ANSWERS = {"central_object_motion": "swimming slowly forward"}


def test_applicable_types_follow_the_conditional_attributes():
    # lighting is empty here, so its question is not asked; environment and movement are present.
    assert (
        applicable_types(TURTLE, central_object_motion=True)
        == candidate_types(TURTLE)
        == [
            "central_object",
            "central_object_appearance",
            "object_detect",
            "camera_motion",
            "camera_object_open_ended",
            "caption",
            "central_object_motion",
            "environment",
        ]
    )
    # movement_behavior not about the turtle: the QA generation decides, no question
    assert applicable_types(TURTLE, central_object_motion=False)[6:] == ["environment"]
    bare = {**TURTLE, "movement_behavior": "  ", "environment": None, "lighting": "dim"}
    assert candidate_types(bare)[6:] == ["lighting"]
    assert applicable_types(bare, central_object_motion=True)[6:] == ["lighting"]


def test_correct_answers_follow_the_appendix_formats():
    records = {r["type"]: r for r in assemble_records(TURTLE, DISTRACTORS, seed=3, answers=ANSWERS)}
    assert records["central_object"]["answer_text"] == "green sea turtle"
    assert (
        records["central_object_appearance"]["answer_text"]
        == "color: olive green; size/shape: large, oval shell"
    )
    # central object then the non-empty secondary objects, comma-separated (object_3 is empty).
    assert records["object_detect"]["answer_text"] == "green sea turtle, hard coral, yellow tang"
    assert records["camera_motion"]["answer_text"] == (
        "camera position/view: full scene; camera angle/movement: eye-level, slow pan to the left"
    )
    assert records["central_object_motion"]["answer_text"] == "swimming slowly forward"
    assert records["environment"]["answer_text"] == "shallow reef"
    assert records["caption"]["answer_text"] == TURTLE["caption"]
    assert records["central_object_appearance"]["question"] == (
        "Which color and size or shape description best matches the green sea turtle?"
    )
    assert records["central_object_motion"]["question"] == (
        "Which movement or state of the green sea turtle, best matches the video?"
    )
    assert records["object_detect"]["evidence_attributes"] == {
        "central_object": "green sea turtle",
        "object_2": "hard coral",
        "object_4": "yellow tang",
    }
    # Without secondary objects the answer is the central object alone, no fallback text.
    alone = {**TURTLE, "object_2": "", "object_4": ""}
    assert (
        assemble_record(alone, "object_detect", 3, DISTRACTORS["object_detect"])["answer_text"]
        == "green sea turtle"
    )


def test_multiple_choice_record_layout():
    records = assemble_records(TURTLE, DISTRACTORS, seed=3, answers=ANSWERS)
    assert [r["question_id"] for r in records] == [f"MVK--mvk-9001--q{i}" for i in range(1, 9)]
    for r in records:
        assert r["id"] == "MVK--mvk-9001" and r["video_path"] == "MVK/mvk-9001.mp4"
        assert r["question_format"] == QUESTION_TYPES[r["type"]].question_format
        if r["question_format"] == "multiple_choice":
            assert [o["label"] for o in r["options"]] == ["A", "B", "C", "D"]
            texts = [o["text"] for o in r["options"]]
            assert sorted(texts) == sorted([r["answer_text"], *DISTRACTORS[r["type"]]])
            assert texts["ABCD".index(r["answer"])] == r["answer_text"]
            listed = " ".join(f"({o['label']}) {o['text']}" for o in r["options"])
            assert r["prompt"] == f"{r['question']} {listed} Answer with the option letter only."
        else:
            assert r["options"] == [] and r["answer"] == "" and r["prompt"] == r["question"]


def test_option_order_is_seeded_per_question():
    first = assemble_record(TURTLE, "central_object", 1, DISTRACTORS["central_object"], seed=7)
    again = assemble_record(TURTLE, "central_object", 1, DISTRACTORS["central_object"], seed=7)
    assert first == again
    orders = {
        tuple(
            o["text"]
            for o in assemble_record(TURTLE, "central_object", 1, DISTRACTORS["central_object"], s)["options"]
        )
        for s in range(20)
    }
    assert len(orders) > 3  # the seed really moves the answer around
    letters = {
        r["answer"]
        for s in range(40)
        for r in [assemble_record(TURTLE, "environment", 8, DISTRACTORS["environment"], s)]
    }
    assert letters == {"A", "B", "C", "D"}


def test_open_ended_reference_answer():
    reference = camera_object_reference(TURTLE)
    for value in (
        "green sea turtle",
        "swimming slowly forward",
        "full scene",
        "eye-level, slow pan to the left",
    ):
        assert value in reference
    record = assemble_record(TURTLE, "camera_object_open_ended", 5)
    assert record["answer_text"] == reference
    assert record["question"] == QUESTION_TEXTS["camera_object_open_ended"].replace(
        "{central_object}", "green sea turtle"
    )
    fluent = "The camera pans left past the turtle as it swims slowly forward."
    assert assemble_record(TURTLE, "camera_object_open_ended", 5, answer=fluent)["answer_text"] == fluent


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"qtype": "central_object", "distractors": ["a", "b"]}, "exactly 3 distractors"),
        ({"qtype": "central_object", "distractors": ["a", "Green Sea Turtle", "b"]}, "differ"),
        ({"qtype": "central_object", "distractors": ["a", "a", "b"]}, "differ"),
        ({"qtype": "caption", "distractors": ["a", "b", "c"]}, "takes no distractors"),
        ({"qtype": "lighting", "distractors": ["a", "b", "c"]}, "lighting is empty"),
        ({"qtype": "flying", "distractors": None}, "unknown question type"),
        ({"qtype": "environment", "distractors": ["a", "b", "c"], "index": 0}, "start at 1"),
        (
            {"qtype": "central_object_motion", "distractors": ["a", "b", "c"]},
            "needs the central object's movement",
        ),
    ],
)
def test_assemble_record_rejects_what_would_be_invalid(kwargs, message):
    index = kwargs.pop("index", 1)
    with pytest.raises(ValueError, match=message):
        assemble_record(TURTLE, kwargs["qtype"], index, kwargs["distractors"])


def test_caption_question_needs_a_caption():
    with pytest.raises(ValueError, match="caption is empty"):
        assemble_record({**TURTLE, "caption": ""}, "caption", 6)


@pytest.mark.parametrize(
    ("position", "angle", "kind"),
    [
        ("full scene, wide view", "eye-level, static", STATIC),
        ("close-up of the central object", "slow pan to the right", MOVING),
        ("single viewing angle", "steady pan left", MOVING),  # "steady" qualifies the pan
        ("partial view", "fixed, top-down", STATIC),
        (
            "full scene of a moving school of fish",
            "eye-level, static",
            STATIC,
        ),  # the fish move, not the camera
        ("following the diver", "level", MOVING),
        ("close-up", "camera still, no panning", STATIC),
        ("wide", "tilts down toward the seabed", MOVING),
        ("full scene", "without any zoom", STATIC),
        ("full scene", "camera moves closer to the reef", MOVING),
        ("full scene", "high angle, handheld drift", MOVING),
        ("full scene", "the camera glides over the reef", MOVING),
        ("full scene of a manta ray gliding", "eye-level, static", STATIC),
        ("", "", STATIC),
    ],
)
def test_camera_kind(position, angle, kind):
    assert camera_kind(position, angle) == kind
