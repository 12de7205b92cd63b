"""Rubrics: registry, signatures, reply models (ranges, completeness), prompts, scores, custom files."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from builders.evaluation.rubrics import RUBRICS, get_rubric
from builders.llm import LLMRequest
from builders.scoring.rubric_files import CustomRubric
from builders.scoring.rubrics import Criterion, Rubric, RubricRegistry
from marinelife16k.rubrics import MarineLifeCaption, MarineLifeCaptionReview, MarineLifeOpenEnded
from marinelife16k.vocabulary import ATTRIBUTES, CAPTION_CRITERIA

ATTRS = {
    "central_object": "green sea turtle",
    "object_2": "reef fish",
    "color": "olive brown shell",
    "camera_position": "camera follows the turtle from behind",
    "camera_angle": "eye level",
    "video_id": "not an attribute",
}


def test_registry_and_signatures():
    assert set(RUBRICS) == {
        "marinelife_open_ended",
        "marinelife_caption",
        "marinelife_caption_review",
        "custom",
    }
    oe = get_rubric("marinelife_open_ended")
    assert oe.signature == (
        "rubric:marinelife_open_ended|v:2|prompt:judge_marinelife_open_ended@2|scale:0-5"
        "|w:camera=0.35,activity=0.3,relation=0.35|explain:none"
    )
    caption = get_rubric("marinelife_caption")
    assert caption.criterion_names == CAPTION_CRITERIA
    assert "explain:each" in caption.signature and "w:BEH=1,AH=1,ECF=1" in caption.signature
    review = get_rubric("marinelife_caption_review")
    assert review.criterion_names == ("alignment",) and review.version == "2"
    with pytest.raises(ValueError, match="unknown rubric 'oemu'.*marinelife_open_ended"):
        get_rubric("oemu")
    with pytest.raises(ValueError, match="needs a rubric file"):
        get_rubric("custom")
    with pytest.raises(ValueError, match="built in"):
        get_rubric("marinelife_caption", path="x.yaml")


@pytest.mark.parametrize("name", ["marinelife_open_ended", "marinelife_caption", "marinelife_caption_review"])
def test_reply_model_rejects_out_of_range_missing_and_non_integers(name):
    rubric = get_rubric(name)
    good = {f: "why" for f in rubric.reply_model.model_fields} | {c: 3 for c in rubric.criterion_names}
    assert rubric.score(good)["criteria"] == {c: 3 for c in rubric.criterion_names}
    first = rubric.criterion_names[0]
    for bad in (6, -1, 3.5, "4", True, None):
        with pytest.raises(ValidationError):
            rubric.reply_model.model_validate({**good, first: bad})
    with pytest.raises(ValidationError):
        rubric.reply_model.model_validate({k: v for k, v in good.items() if k != first})
    schema = rubric.reply_model.model_json_schema()
    assert set(schema["required"]) == set(rubric.reply_model.model_fields)
    assert all(schema["properties"][c]["maximum"] == 5 for c in rubric.criterion_names)


def test_weighted_score_and_review_contract():
    oe = get_rubric("marinelife_open_ended")
    assert oe.score({"camera": 5, "activity": 0, "relation": 5}) == {
        "criteria": {"camera": 5, "activity": 0, "relation": 5},
        "score": 3.5,
    }
    assert oe.score({"camera": 0, "activity": 5, "relation": 0})["score"] == pytest.approx(1.5, abs=1e-12)
    caption = get_rubric("marinelife_caption")
    reply = {"BEH": 5, "AH": 1, "ECF": 3} | {f"{c}_explanation": f"about {c}" for c in CAPTION_CRITERIA}
    assert caption.score(reply)["score"] == pytest.approx(3.0)
    assert caption.explanations(reply) == {f"{c}_explanation": f"about {c}" for c in CAPTION_CRITERIA}
    review = get_rubric("marinelife_caption_review")
    value = review.reply_model.model_validate({"justification": "colour is wrong", "alignment": 3})
    assert review.score(value) == {"criteria": {"alignment": 3}, "score": 3.0}
    assert isinstance(review.score(value)["score"], float)


def test_requests_render_the_rubric_and_key_on_name_and_version():
    oe = get_rubric("marinelife_open_ended")
    req = oe.request(
        "The camera tracks the turtle.",
        "The camera follows the turtle as it swims.",
        "How does the camera relate to the turtle?",
        evidence=ATTRS,
        metadata={"index": 7},
        item_id="j7",
    )
    assert isinstance(req, LLMRequest) and req.prompt_ref == ("marinelife_open_ended", "2")
    assert req.item_id == "j7" and req.messages[0]["content"].startswith("Item id: j7\n")
    assert req.metadata == {"index": 7} and req.schema is oe.reply_model
    text = req.messages[0]["content"]
    for piece in (
        "The camera tracks the turtle.",
        "The camera follows the turtle as it swims.",
        "How does the camera relate to the turtle?",
        'field "camera", integer 0-5, weight 35%',
        'field "activity", integer 0-5, weight 30%',
        "- central_object: green sea turtle",
        "- object_3: (none annotated)",
        '{"item_id": "j7", "camera": <integer>, "activity": <integer>, "relation": <integer>}',
    ):
        assert piece in text
    assert "not an attribute" not in text
    # The same item through a reference mapping renders the same prompt.
    same = oe.request(
        "The camera tracks the turtle.",
        {"answer": "The camera follows the turtle as it swims.", "evidence": ATTRS},
        "How does the camera relate to the turtle?",
        item_id="j7",
    )
    assert same.messages == req.messages
    review = get_rubric("marinelife_caption_review").request(
        "A turtle swims over a reef.", ATTRS, item_id="v1"
    )
    review_text = review.messages[0]["content"]
    assert "8 dimensions" in review_text and "Camera position" in review_text
    assert all(f"- {a}:" in review_text for a in ATTRIBUTES)
    assert review_text.endswith('{"item_id": "v1", "justification": <string>, "alignment": <integer>}')
    with pytest.raises(TypeError, match="mapping of expert attributes"):
        get_rubric("marinelife_caption_review").request("caption", "a reference string", item_id="v1")
    with pytest.raises(ValueError, match="no MarineLife attributes"):
        get_rubric("marinelife_caption_review").request("caption", {"video_id": "v1"}, item_id="v1")
    with pytest.raises(ValueError, match="reference is empty"):
        get_rubric("marinelife_caption").request("caption", "   ", item_id="v1")
    empty = get_rubric("marinelife_caption").request("", "A ray glides.", item_id="v1")
    assert "(empty answer)" in empty.messages[0]["content"]


CUSTOM = {
    "name": "clarity",
    "version": 2,
    "instructions": "Grade answers about reef surveys.",
    "scale": {"min": 1, "max": 10},
    "explanations": "overall",
    "criteria": [
        {"name": "correct", "description": "Is it right?", "weight": 0.6},
        {"name": "complete", "description": "Is anything missing?", "weight": 0.4, "max": 4},
    ],
}


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_custom_rubric_from_file(tmp_path, suffix):
    path = tmp_path / f"rubric{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(CUSTOM))
    else:
        import yaml

        path.write_text(yaml.safe_dump(CUSTOM))
    rubric = get_rubric("custom", path=path)
    assert isinstance(rubric, CustomRubric) and rubric.name == "custom:clarity" and rubric.version == "2"
    assert rubric.signature == (
        "rubric:custom:clarity|v:2|prompt:judge_custom@2|scale:correct=1-10,complete=1-4"
        "|w:correct=0.6,complete=0.4|explain:overall"
    )
    assert rubric.score({"justification": "ok", "correct": 10, "complete": 1})["score"] == pytest.approx(6.4)
    with pytest.raises(ValidationError):
        rubric.reply_model.model_validate({"justification": "ok", "correct": 0, "complete": 1})
    with pytest.raises(ValidationError):
        rubric.reply_model.model_validate({"justification": "ok", "correct": 5, "complete": 5})
    req = rubric.request("pred", "ref", "q?", item_id="i1")
    text = req.messages[0]["content"]
    assert req.prompt_ref == ("custom:clarity", "2")
    assert "Grade answers about reef surveys." in text and "weight 60%" in text and "integer 1-4" in text


@pytest.mark.parametrize(
    "change, message",
    [
        ({"criteria": []}, "criteria must be a non-empty list"),
        ({"criteria": [{"name": "a"}]}, r"criteria\[0\] needs name and description"),
        ({"criteria": [{"name": "a", "description": "d", "weight": -1}]}, r"criteria\[0\]: .*weight"),
        ({"criteria": [{"name": "a b", "description": "d"}]}, r"criteria\[0\]: criterion name"),
        ({"criteria": [{"name": "a", "description": "d", "min": 5, "max": 5}]}, "min < max"),
        ({"criteria": [{"name": "a", "description": "d"}] * 2}, "repeat"),
        ({"scale": {"min": 0, "max": 2.5}}, "integers"),
        ({"explanations": "some"}, "explanations must be"),
        ({"weights": {}}, r"unknown \['weights'\]"),
    ],
)
def test_custom_rubric_errors_name_the_file_and_field(tmp_path, change, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**CUSTOM, **change}))
    with pytest.raises(ValueError, match=message) as info:
        get_rubric("custom", path=path)
    assert str(path) in str(info.value)


def test_custom_rubric_missing_or_unparsable_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no rubric file"):
        get_rubric("custom", path=tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        get_rubric("custom", path=bad)


def test_criterion_checks():
    assert Criterion("x", "d").label == "x"
    with pytest.raises(ValueError, match="weight"):
        Criterion("x", "d", weight=float("nan"))


def test_registry_is_explicit_and_refuses_a_second_class_under_a_name():
    assert list(RUBRICS.items()) == [
        ("marinelife_open_ended", MarineLifeOpenEnded),
        ("marinelife_caption", MarineLifeCaption),
        ("marinelife_caption_review", MarineLifeCaptionReview),
        ("custom", CustomRubric),
    ]
    registry = RubricRegistry(MarineLifeCaption)
    assert registry.register(MarineLifeCaption) is MarineLifeCaption  # registering again is a no-op

    class Impostor(Rubric):
        name = "marinelife_caption"

    with pytest.raises(
        ValueError, match="'marinelife_caption' is already registered by marinelife16k.rubrics"
    ):
        registry.register(Impostor)
    with pytest.raises(ValueError, match="no name"):
        registry.register(type("Nameless", (Rubric,), {}))
    assert registry["marinelife_caption"] is MarineLifeCaption and list(registry) == ["marinelife_caption"]
    with pytest.raises(ValueError, match="unknown rubric 'oemu'; registered: ") as info:
        get_rubric("oemu")
    assert all(f"{name}," in str(info.value) or str(info.value).endswith(name) for name in RUBRICS)


def test_caption_criteria_are_defined_once_as_the_paper_names_them(tmp_path):
    """Issue 29: BEH/AH/ECF read differently in the card, the rubric and eval.yaml; the paper (its
    captioning benchmark) is the spec: BEH the objects, AH object motion and camera pose, ECF facts or
    elements not in the video."""
    from marinelife16k.benchmark import BENCHMARK
    from marinelife16k.card import card_body
    from marinelife16k.sample import write_sample_work_folder
    from marinelife16k.workfolder import read_release

    paper = {  # the paper's full names, and a word each definition must carry
        "BEH": ("Biological Entity Hallucination", "subjects"),
        "AH": ("Action Hallucination", "camera"),
        "ECF": ("Environmental Context Fabrication", "not there"),
    }
    rubric = MarineLifeCaption()
    body = card_body(read_release(write_sample_work_folder(tmp_path / "work")))
    tasks = {t.id: t.description for t in BENCHMARK.tasks}
    for criterion in rubric.criteria:
        name, word = paper[criterion.name]
        assert word in criterion.description
        assert (
            f"{criterion.name}, {name}" in body and criterion.description in body
        )  # the card: the same words
        assert (
            criterion.description in tasks[f"caption_{criterion.name.lower()}"]
        )  # eval.yaml: the same words
        assert name in tasks[f"caption_{criterion.name.lower()}_static"]
    assert body.lstrip().startswith(
        "# MarineLife-16K (sample)\n\n**This is a sample, not the dataset**: 24 videos"
    )


def test_no_rubric_registers_itself_on_import():
    """A fresh interpreter that imports only the core and the rubric modules has an empty registry
    there: the rubrics the tools know are the explicit list, whatever was imported before."""
    import subprocess
    import sys

    probe = (
        "import builders.scoring.rubrics as core, builders.scoring.rubric_files, marinelife16k.rubrics\n"
        "print([n for n in vars(core) if n in ('RUBRICS', 'register_rubric', 'get_rubric')])"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
