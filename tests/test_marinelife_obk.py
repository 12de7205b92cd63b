"""Type 7 (``central_object_motion``, OBK) as the paper asks it: "Only generate this question if
movement_behavior describes the movement or state of the central_object", answer "the movement/state
of the central_object only".

QA generation runs against the real local chat server, which replies with hand-written JSON for
three hand-made videos (a kelp whose movement_behavior is about a garibaldi, a moray eel whose
movement_behavior also says what a cleaner shrimp does, a turtle whose movement is all its own).
Expected records are written here from the paper's rule, not computed by the code under test.
"""

from __future__ import annotations

import json

import pytest

from builders.llm import LLMClient, LLMSettings
from builders.pipelines.marinelife.qa_generation import run_qa
from builders.runs.steps import StepRecords
from builders.scripted.chat_requests import message_text, with_item_id
from marinelife16k.annotations import video_row
from marinelife16k.card import card_body
from marinelife16k.questions import assemble_records, motion_source_problems
from marinelife16k.schema import validate_records
from marinelife16k.workfolder import NOT_CENTRAL, read_release, write_release


def _video(video_id: str, central: str, others: tuple[str, str, str], movement: str, **extra) -> dict:
    row = video_row(
        {
            "video_id": video_id, "collection": "MVK", "video_file": f"{video_id}.mp4",
            "central_object": central, "object_2": others[0], "object_3": others[1], "object_4": others[2],
            "texture": "smooth", "color": "brown", "size_shape": "large, long body", "environment": "rocky reef",
            "lighting": "natural light", "video_clarity": "clear", "movement_behavior": movement,
            "camera_position": "full scene", "camera_angle": "eye-level, static",
            "caption": f"A {central} on a rocky reef.", **extra,
        }
    )  # fmt: skip
    return row


KELP = _video("mvk-7001", "kelp", ("garibaldi", "sea urchin", ""), "a garibaldi hovering between the fronds")
MORAY = _video(
    "mvk-7002", "giant moray eel", ("cleaner shrimp", "", ""),
    "resting in a crevice while a cleaner shrimp picks at its teeth",
)  # fmt: skip
TURTLE = _video("mvk-7003", "green sea turtle", ("hard coral", "", ""), "swimming slowly forward")
ROWS = [KELP, MORAY, TURTLE]

COMMON = {
    "central_object": ["dugong", "seahorse", "spiny lobster"],
    "central_object_appearance": [
        {"color": "bright yellow", "size_shape": "tiny, round body"},
        {"color": "silver", "size_shape": "small, flat disc"},
        {"color": "purple", "size_shape": "medium, star shape"},
    ],
    "object_detect": [["dugong"], ["jellyfish", "sea star"], ["parrotfish"]],
    "camera_motion": [
        {"camera_position": "close-up of the central object", "camera_angle": "top-down, static"},
        {"camera_position": "partial view of the central object", "camera_angle": "low angle, tilt up"},
        {"camera_position": "wide shot from a distance", "camera_angle": "eye-level, panning left"},
    ],
    "environment": ["kelp forest", "open blue water", "sandy lagoon"],
    "lighting": ["artificial dive light at night", "overcast, flat light", "strong backlight"],
}
WRONG_MOVES = ["swimming away quickly", "lying flat on the sand", "circling in a wide loop"]
# What a careful model replies per central object (hand-written); the first moray reply rewords.
CHECKS = {
    "kelp": {"describes_central_object": False, "subject": "garibaldi", "central_object_movement": ""},
    "giant moray eel": {
        "describes_central_object": True, "subject": "giant moray eel",
        "central_object_movement": "resting in a crevice",
    },
    "green sea turtle": {
        "describes_central_object": True, "subject": "green sea turtle",
        "central_object_movement": "swimming slowly forward",
    },
}  # fmt: skip


def _handler(body: dict) -> dict:
    text = message_text(body["messages"][0])
    central = next(name for name in CHECKS if f"- central_object: {name}\n" in text)
    first_attempt = len(body["messages"]) == 1
    check = dict(CHECKS[central])
    if central == "giant moray eel" and first_attempt:
        check["central_object_movement"] = "sleeping in a crevice"  # not movement_behavior's words
    reply = {
        **COMMON,
        "central_object_motion_check": check,
        "central_object_motion": WRONG_MOVES if check["describes_central_object"] else [],
        "camera_object_reference": f"The static camera shows the full scene with the {central}.",
    }
    return with_item_id(body, reply)  # a bound request: the reply names its video


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from builders.testing.chat_server import ChatServer

    work = tmp_path_factory.mktemp("obk-work")
    with ChatServer() as server:
        server.handler = _handler
        settings = LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=work / "cache.sqlite") as client:
            failures = run_qa(work, ROWS, client)
        requests = server.chat_requests
        assert server.errors == []
    items = {item["id"]: item for item in StepRecords(work, "qa").kept()}
    return {"work": work, "failures": failures, "items": items, "requests": requests}


def _types(item: dict) -> list[str]:
    return [r["type"] for r in item["records"]]


def test_not_asked_when_movement_behavior_describes_another_object(generated):
    assert generated["failures"] == {}
    kelp = generated["items"][KELP["id"]]
    assert "central_object_motion" not in _types(kelp)
    assert _types(kelp)[-2:] == ["environment", "lighting"]  # q7, q8: no gap in the indices
    assert [r["question_id"] for r in kelp["records"]][-1] == f"{KELP['id']}--q8"
    decision = kelp["central_object_motion"]
    assert decision["asked"] is False and "garibaldi" in decision["reason"] and "kelp" in decision["reason"]


def test_answer_is_the_central_objects_movement_only(generated):
    moray = {r["type"]: r for r in generated["items"][MORAY["id"]]["records"]}["central_object_motion"]
    assert moray["answer_text"] == "resting in a crevice"
    assert sorted(o["text"] for o in moray["options"]) == sorted([*WRONG_MOVES, "resting in a crevice"])
    assert {o["label"]: o["text"] for o in moray["options"]}[moray["answer"]] == "resting in a crevice"
    assert moray["evidence_attributes"]["movement_behavior"] == MORAY["movement_behavior"]
    turtle = {r["type"]: r for r in generated["items"][TURTLE["id"]]["records"]}["central_object_motion"]
    assert turtle["answer_text"] == "swimming slowly forward"


def test_a_reworded_movement_is_re_asked_with_the_problem(generated):
    moray = [
        r
        for r in generated["requests"]
        if "- central_object: giant moray eel\n" in message_text(r.body["messages"][0])
    ]
    assert len(moray) == 2  # the first reply said "sleeping", which movement_behavior does not
    reask = json.dumps(moray[1].body["messages"][1:])
    assert "sleeping" in reask and "does not" in reask
    others = [r for r in generated["requests"] if r not in moray]
    assert len(others) == 2  # kelp and turtle: right the first time


def test_schema_asks_for_the_check_only_where_there_is_a_movement(generated):
    first = generated["requests"][0].body
    schema = first["response_format"]["json_schema"]["schema"]
    assert "central_object_motion_check" in schema["properties"]
    check = schema["properties"]["central_object_motion_check"]
    check = schema.get("$defs", {}).get(check.get("$ref", "").rsplit("/", 1)[-1], check)
    assert set(check["properties"]) == {"describes_central_object", "subject", "central_object_movement"}


def test_the_release_records_why_it_was_not_asked(generated, tmp_path):
    records = [r for item in generated["items"].values() for r in item["records"]]
    reasons = {
        i: item["central_object_motion"]["reason"]
        for i, item in generated["items"].items()
        if not item["central_object_motion"]["asked"]
    }
    write_release(tmp_path, ROWS, records, motion_not_asked=reasons, splits={r["id"]: "test" for r in ROWS})
    release = read_release(tmp_path, check_videos=False)
    obk = [e for e in release.not_asked() if e["type"] == "central_object_motion"]
    assert obk == [
        {"id": KELP["id"], "type": "central_object_motion", "why": NOT_CENTRAL, "reason": reasons[KELP["id"]]}
    ]
    card = card_body(release)  # the card states the paper's rule and lists the video left out, with why
    assert "describes the movement or state of the central object" in card
    assert f"| `{KELP['id']}` | {reasons[KELP['id']]} |" in card
    with pytest.raises(ValueError, match="no recorded reason"):
        write_release(tmp_path / "other", ROWS, records, splits={r["id"]: "test" for r in ROWS})


@pytest.mark.parametrize(
    ("extract", "ok"),
    [
        ("resting in a crevice", True),
        ("Resting in a crevice.", True),
        ("resting crevice", True),  # words left out, none added
        ("resting in crevices", True),  # plural folded
        ("sleeping in a crevice", False),
        ("in a crevice resting", False),  # reordered
        ("", False),
    ],
)
def test_the_extract_must_come_from_movement_behavior(extract, ok):
    assert (motion_source_problems(extract, MORAY["movement_behavior"]) == []) is ok


def test_validator_refuses_an_answer_not_taken_from_movement_behavior():
    distractors = {
        k: [str(i) * 3 for i in range(1, 4)] for k in ("central_object", "environment", "lighting")
    }
    distractors |= {
        "central_object_appearance": ["color: a; size/shape: b", "color: c; size/shape: d", "color: e; size/shape: f"],
        "object_detect": ["dugong", "seahorse", "sea star"],
        "camera_motion": [f"camera position/view: p{i}; camera angle/movement: a{i}" for i in range(3)],
        "central_object_motion": WRONG_MOVES,
    }  # fmt: skip
    records = assemble_records(MORAY, distractors, answers={"central_object_motion": "resting in a crevice"})
    assert validate_records(records, [MORAY]) == []
    forged = [dict(r) for r in records]
    obk = next(r for r in forged if r["type"] == "central_object_motion")
    obk["options"] = [
        o if o["text"] != obk["answer_text"] else {**o, "text": "dozing off"} for o in obk["options"]
    ]
    obk["answer_text"] = "dozing off"
    obk["prompt"] = obk["prompt"].replace("resting in a crevice", "dozing off")
    problems = [str(v) for v in validate_records(forged, [MORAY])]
    assert len(problems) == 1 and "answer_text" in problems[0] and "dozing" in problems[0], problems
    with pytest.raises(ValueError, match="has words that movement_behavior"):
        assemble_records(MORAY, distractors, answers={"central_object_motion": "dozing in a crevice"})
