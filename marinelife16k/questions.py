"""The deterministic half of MarineLife-16K's QA records: one implementation for the pipeline and the sample.

The paper's appendix fixes, per question type, the question text, the correct answer (built from the
expert attributes) and when a conditional type exists. Only the three wrong options of a multiple-choice
question (and, optionally, a more fluent open-ended reference sentence) come from an LLM; everything
else is computed here, so that a record's ids, option order, answer letter, prompt and evidence are
reproducible from the attributes, the distractors and a seed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from builders.scoring.phrases import stem, words
from marinelife16k.vocabulary import (
    ATTRIBUTES,
    MCQ_SUFFIX,
    MULTIPLE_CHOICE,
    OPTION_LABELS,
    QUESTION_TYPES,
    SECONDARY_OBJECTS,
)

TASK = "qa"
MOTION_TYPE, REFERENCE_TYPE = "central_object_motion", "camera_object_open_ended"
#: Types whose answer the QA-generation LLM writes (the validator checks where it comes from instead of
#: recomputing it): the camera-object reference sentence, and the central object's movement, cut out
#: of ``movement_behavior``.
LLM_ANSWER_TYPES: tuple[str, ...] = (REFERENCE_TYPE, MOTION_TYPE)

# The appendix's question texts, verbatim: they are dataset content (field values), not our prose.
# ``{central_object}`` is replaced by the video's central object.
QUESTION_TEXTS: dict[str, str] = {
    "central_object": "What is the central object in the video?",
    "central_object_appearance": "Which color and size or shape description best matches the {central_object}?",
    "object_detect": (
        "Which option lists only objects present in the video? "
        "An option is incorrect if it includes any object not shown."
    ),
    "camera_motion": "Which camera position or camera movement best matches the video?",
    "camera_object_open_ended": (
        "How do the camera movement and viewpoint capture the {central_object} "
        "and the visible object activity in the video?"
    ),
    "caption": (
        "Write one complete English video-captioning sentence that contains fewer than 80 words, describes "
        "the central object's identity, texture or pattern, color, size, and shape, includes up to three "
        "secondary objects, details the environment and lighting, mentions the video quality, describes "
        "the object motion, and defines the camera position and camera angle separately."
    ),
    "central_object_motion": "Which movement or state of the {central_object}, best matches the video?",
    "environment": "How is the environment in the video?",
    "lighting": "How is the lighting in the video?",
}

# Attributes each type's answer (and question) is built from, in the order they are reported.
_EVIDENCE: dict[str, tuple[str, ...]] = {
    "central_object": ("central_object",),
    "central_object_appearance": ("central_object", "color", "size_shape"),
    "object_detect": ("central_object", *SECONDARY_OBJECTS),
    "camera_motion": ("camera_position", "camera_angle"),
    "camera_object_open_ended": ("central_object", "movement_behavior", "camera_position", "camera_angle"),
    # The caption was reviewed (and refined) against every attribute: all of them are its evidence.
    "caption": ATTRIBUTES,
    "central_object_motion": ("central_object", "movement_behavior"),
    "environment": ("environment",),
    "lighting": ("lighting",),
}


def _value(attributes: Mapping[str, Any], name: str) -> str:
    value = attributes.get(name)
    return "" if value is None else str(value).strip()


def video_key(collection: str, video_file: str) -> str:
    """The record ``id`` of a video: ``{collection}--{video file name without extension}``."""
    stem = video_file.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    return f"{collection}--{stem}"


def question_id(collection: str, video_file: str, index: int) -> str:
    """``{collection}--{video file name without extension}--q{index}`` (indices start at 1)."""
    return f"{video_key(collection, video_file)}--q{index}"


def candidate_types(attributes: Mapping[str, Any]) -> list[str]:
    """The question types a video may get, in index order: the six mandatory ones, then each
    conditional type whose condition attribute is non-empty.

    ``environment`` and ``lighting`` are asked exactly when their attribute is non-empty. For
    ``central_object_motion`` a non-empty ``movement_behavior`` is necessary, not sufficient: the paper
    asks it "only if movement_behavior describes the movement or state of the central_object", a
    judgement the QA-generation LLM makes (:func:`applicable_types`).
    """
    return [
        name
        for name, qtype in QUESTION_TYPES.items()
        if qtype.mandatory or _value(attributes, qtype.condition_attribute or "")
    ]


def applicable_types(attributes: Mapping[str, Any], *, central_object_motion: bool) -> list[str]:
    """The question types a video gets, in index order: :func:`candidate_types`, with
    ``central_object_motion`` only when ``central_object_motion`` is true (``movement_behavior``
    describes the central object's movement or state, as decided at QA generation)."""
    return [t for t in candidate_types(attributes) if t != MOTION_TYPE or central_object_motion]


def motion_source_problems(extract: str, movement_behavior: str) -> list[str]:
    """Why ``extract`` is not the central object's movement *taken from* ``movement_behavior``
    (empty: it is).

    The paper's answer is "the movement/state of the central_object only", cut out of the annotation.
    Rule: every word of the extract is a word of ``movement_behavior`` (plurals folded, case and
    punctuation ignored) and they come in ``movement_behavior``'s order; words may be left out, none
    added or reordered. So the extract may drop what another object does, never say something the
    experts did not annotate.
    """
    extract_words = [stem(w) for w in words(extract)]
    source = [stem(w) for w in words(movement_behavior)]
    if not extract_words:
        return ["the central object's movement is empty"]
    added = [w for w in dict.fromkeys(extract_words) if w not in source]
    if added:
        return [
            f"the central object's movement {extract.strip()!r} has words that movement_behavior "
            f"({movement_behavior.strip()!r}) does not: {', '.join(added)}; copy its words, do not reword them"
        ]
    position = 0
    for w in extract_words:
        try:
            position = source.index(w, position) + 1
        except ValueError:
            return [
                f"the central object's movement {extract.strip()!r} changes the order of movement_behavior's "
                f"words ({movement_behavior.strip()!r}); keep them in their order"
            ]
    return []


def question_text(qtype: str, attributes: Mapping[str, Any]) -> str:
    """The appendix's question text for ``qtype``, with the video's central object inserted."""
    if qtype not in QUESTION_TEXTS:
        raise ValueError(f"unknown question type {qtype!r}; expected one of {list(QUESTION_TEXTS)}")
    return QUESTION_TEXTS[qtype].replace("{central_object}", _value(attributes, "central_object"))


def evidence_attributes(qtype: str, attributes: Mapping[str, Any]) -> dict[str, str]:
    """The ground-truth attributes a record of ``qtype`` is built from (non-empty ones only)."""
    if qtype not in _EVIDENCE:
        raise ValueError(f"unknown question type {qtype!r}; expected one of {list(_EVIDENCE)}")
    return {name: _value(attributes, name) for name in _EVIDENCE[qtype] if _value(attributes, name)}


def camera_object_reference(attributes: Mapping[str, Any]) -> str:
    """Default reference answer of ``camera_object_open_ended``: one sentence naming the camera
    position, the camera angle/movement, the central object and its movement or state.

    The paper had an LLM phrase this sentence; a pipeline may pass its own (``reference_answer``);
    this template is the reproducible default and keeps the attribute values verbatim.
    """
    obj = _value(attributes, "central_object")
    activity = _value(attributes, "movement_behavior")
    shown = f"the {obj}, whose visible activity is: {activity}" if activity else f"the {obj}"
    return (
        f"With the camera position/view '{_value(attributes, 'camera_position')}' and the camera "
        f"angle/movement '{_value(attributes, 'camera_angle')}', the video captures {shown}."
    )


def correct_answer(qtype: str, attributes: Mapping[str, Any], caption: str = "") -> str:
    """The ground-truth answer text of ``qtype`` (the reference answer for open-ended types)."""
    a = attributes
    if qtype in ("central_object", "environment", "lighting"):
        return _value(a, qtype)
    if qtype == "central_object_appearance":
        return f"color: {_value(a, 'color')}; size/shape: {_value(a, 'size_shape')}"
    if qtype == "object_detect":
        # Central object plus every non-empty secondary object; no fallback text when there are none.
        return ", ".join(_value(a, n) for n in ("central_object", *SECONDARY_OBJECTS) if _value(a, n))
    if qtype == "camera_motion":
        return (
            f"camera position/view: {_value(a, 'camera_position')}; "
            f"camera angle/movement: {_value(a, 'camera_angle')}"
        )
    if qtype == MOTION_TYPE:
        raise ValueError(
            "the central_object_motion answer is not a function of the attributes: it is the central object's "
            "movement cut out of movement_behavior at QA generation (pass it as answers['central_object_motion'])"
        )
    if qtype == "camera_object_open_ended":
        return camera_object_reference(a)
    if qtype == "caption":
        return caption.strip()
    raise ValueError(f"unknown question type {qtype!r}; expected one of {list(QUESTION_TYPES)}")


def build_prompt(question: str, options: Sequence[Mapping[str, str]]) -> str:
    """What a model is asked: the question, then ``(A) text (B) text ...`` and the MCQ instruction;
    for an open-ended question (no options) just the question."""
    if not options:
        return question
    listed = " ".join(f"({o['label']}) {o['text']}" for o in options)
    return f"{question} {listed} {MCQ_SUFFIX}"


def _shuffle_seed(seed: int, qid: str) -> str:
    # Seeded per question (not per run order) so one record can be rebuilt alone and still match.
    return f"marinelife16k:{seed}:{qid}"


def assemble_record(
    video: Mapping[str, Any],
    qtype: str,
    index: int,
    distractors: Sequence[str] | None = None,
    seed: int = 0,
    *,
    answer: str | None = None,
) -> dict[str, Any]:
    """One QA record in the appendix's JSONL schema.

    ``video`` holds ``video_id``, ``collection``, ``video_file``, the 13 attributes (flat keys, or
    under ``"attributes"``) and ``caption``. A multiple-choice type needs exactly three
    ``distractors``: the options are the correct answer plus them, shuffled with a generator seeded by
    ``seed`` and the question id, labelled A-D. ``answer`` is the answer of a type in
    :data:`LLM_ANSWER_TYPES`: for ``camera_object_open_ended`` a sentence replacing the template (an
    LLM's fluent one; optional), for ``central_object_motion`` the central object's movement taken
    from ``movement_behavior`` (required; :func:`motion_source_problems`). Raises ValueError on
    anything that would make an invalid record (missing caption, a distractor equal to the answer, ...).
    """
    if qtype not in QUESTION_TYPES:
        raise ValueError(f"unknown question type {qtype!r}; expected one of {list(QUESTION_TYPES)}")
    attributes = video.get("attributes") or video
    collection, video_file = str(video["collection"]), str(video["video_file"])
    qid = question_id(collection, video_file, index)
    if index < 1:
        raise ValueError(f"{qid}: question index must start at 1, got {index}")
    if answer is not None and qtype not in LLM_ANSWER_TYPES:
        raise ValueError(f"{qid}: an answer is only given for {', '.join(LLM_ANSWER_TYPES)}, not {qtype}")
    if qtype == MOTION_TYPE:
        if answer is None:
            raise ValueError(f"{qid}: central_object_motion needs the central object's movement (answer)")
        problems = motion_source_problems(answer, _value(attributes, "movement_behavior"))
        if problems:
            raise ValueError(f"{qid}: {'; '.join(problems)}")
        answer_text = answer.strip()
    elif answer is not None:
        answer_text = answer.strip()
    else:
        answer_text = correct_answer(qtype, attributes, str(video.get("caption") or ""))
    if not answer_text:
        source = "caption" if qtype == "caption" else ", ".join(_EVIDENCE[qtype])
        raise ValueError(f"{qid}: cannot build a {qtype} question: {source} is empty")
    question = question_text(qtype, attributes)
    options: list[dict[str, str]] = []
    answer_letter = ""
    if QUESTION_TYPES[qtype].question_format == MULTIPLE_CHOICE:
        wrong = [str(d).strip() for d in (distractors or [])]
        if len(wrong) != len(OPTION_LABELS) - 1:
            raise ValueError(f"{qid}: {qtype} needs exactly 3 distractors, got {len(wrong)}")
        texts = [answer_text, *wrong]
        folded = [t.casefold() for t in texts]
        if any(not t for t in wrong) or len(set(folded)) != len(folded):
            raise ValueError(
                f"{qid}: distractors must be non-empty and differ from each other and the answer"
            )
        random.Random(_shuffle_seed(seed, qid)).shuffle(texts)
        options = [{"label": label, "text": text} for label, text in zip(OPTION_LABELS, texts, strict=True)]
        answer_letter = OPTION_LABELS[texts.index(answer_text)]
    elif distractors:
        raise ValueError(f"{qid}: open-ended type {qtype} takes no distractors")
    return {
        "question_id": qid,
        "id": video_key(collection, video_file),
        "task": TASK,
        "type": qtype,
        "question_format": QUESTION_TYPES[qtype].question_format,
        "collection": collection,
        "video_id": str(video["video_id"]),
        "video_file": video_file,
        "video_path": f"{collection}/{video_file}",
        "central_object": _value(attributes, "central_object"),
        "question": question,
        "prompt": build_prompt(question, options),
        "options": options,
        "answer": answer_letter,
        "answer_text": answer_text,
        "evidence_attributes": evidence_attributes(qtype, attributes),
    }


def assemble_records(
    video: Mapping[str, Any],
    distractors: Mapping[str, Sequence[str]],
    seed: int = 0,
    *,
    answers: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """All records of one video: :func:`applicable_types` in order, indexed q1, q2, ... without gaps.

    ``distractors`` maps each applicable multiple-choice type to its three wrong options. ``answers``
    maps types of :data:`LLM_ANSWER_TYPES` to their answers: ``central_object_motion`` is asked exactly
    when it maps to the central object's movement (a non-empty text taken from ``movement_behavior``),
    ``camera_object_open_ended`` may map to a sentence replacing the template.
    """
    attributes = video.get("attributes") or video
    answers = dict(answers or {})
    unknown = set(answers) - set(LLM_ANSWER_TYPES)
    if unknown:
        raise ValueError(f"answers are only given for {list(LLM_ANSWER_TYPES)}, not {sorted(unknown)}")
    motion = (answers.get(MOTION_TYPE) or "").strip()
    return [
        assemble_record(
            video,
            qtype,
            index,
            distractors.get(qtype) if QUESTION_TYPES[qtype].question_format == MULTIPLE_CHOICE else None,
            seed,
            answer=answers.get(qtype),
        )
        for index, qtype in enumerate(
            applicable_types(attributes, central_object_motion=bool(motion)), start=1
        )
    ]
