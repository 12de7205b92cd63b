"""QA generation: one LLM request per video writes the distractors; the code builds the records.

Why one request per video (not one per question type): every type needs the same context (the 13
attributes and the caption), so it is sent once instead of up to seven times; the model sees all
correct answers at once and can keep each type's distractors apart from the others; and the paper
generated a video's questions in one prompt. A reply with one bad distractor is re-asked as a
whole, but the re-ask carries the previous reply and the exact problem, so the model fixes that part.

What the LLM writes: three distractors per applicable multiple-choice type (structured: colour and
size/shape, camera position and angle, object lists, are separate fields so that the code formats
them exactly like the answer), by default the fluent ``camera_object_open_ended`` reference
sentence, and, for a video with a ``movement_behavior``, the paper's condition of type 7
(``central_object_motion``) in a field of its own (:class:`MotionCheck`): does ``movement_behavior``
describe the movement or state of the central object, and which words of it do. The question is
asked only if it does, and its answer is that movement alone (the paper: "the movement/state of the
central_object only"), which must be cut out of ``movement_behavior``
(:func:`marinelife16k.questions.motion_source_problems`); when it does not, the record says why. What the code owns (:mod:`marinelife16k.questions`): ids, indices, question texts, the
correct option (the ground-truth value in the paper's format), the seeded option order and answer
letter, the prompt string and the evidence attributes. The caption question's reference answer is
the video's *final caption* from the caption engine: the paper's "video captions from the dataset
GT" are that caption.

The validator re-asks (bounded by the client's ``max_validation_retries``) when a distractor is
empty, equals the answer or another distractor (case, spacing and end punctuation ignored), is a
shorter or longer name of the answer, an ``object_detect`` list has no absent object (it would be
correct too), a ``central_object_motion`` option gives the movement to another subject, the central
object's movement is not taken from ``movement_behavior`` (or is given although the check says
``movement_behavior`` is about something else, or distractors come with no question to ask), or the
reference sentence does not name the central object; and when the assembled records fail
:func:`marinelife16k.schema.check_records`. A reply still invalid after that is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from builders.llm import LLMClient, LLMRequest, LLMResult, user_message
from builders.llm.prompts import load_prompt
from builders.llm.schema import ITEM_ID_FIELD
from builders.pipelines.marinelife.checks import foreign_subject, option_problems
from builders.pipelines.marinelife.outcomes import call_cost
from builders.runs.llm_step import Outcome, run_llm_step
from builders.runs.steps import StepRecords
from builders.scoring.phrases import mentions, normalized
from marinelife16k.questions import (
    MOTION_TYPE,
    assemble_records,
    candidate_types,
    motion_source_problems,
)
from marinelife16k.questions import correct_answer as ground_truth
from marinelife16k.rubrics import format_attributes
from marinelife16k.schema import check_records
from marinelife16k.vocabulary import MULTIPLE_CHOICE, QUESTION_TYPES, SECONDARY_OBJECTS

STEP = "qa"
PROMPT_NAME = "marinelife_qa_distractors"
SCHEMA_NAME = "marinelife_qa_distractors"
REFERENCE_FIELD = "camera_object_reference"
REFERENCE_TYPE = "camera_object_open_ended"
MOTION_CHECK_FIELD = "central_object_motion_check"
DISTRACTORS = 3


class MotionCheck(BaseModel):
    """The paper's condition of ``central_object_motion``, decided by the LLM in its own field."""

    model_config = ConfigDict(extra="ignore")
    describes_central_object: bool = Field(
        description="does movement_behavior describe the movement or state of the central object"
    )
    subject: str = Field(description="whom or what movement_behavior describes")
    central_object_movement: str = Field(
        description="the central object's movement or state only, copied from movement_behavior; '' if none"
    )


class AppearanceOption(BaseModel):
    model_config = ConfigDict(extra="ignore")
    color: str
    size_shape: str


class CameraOption(BaseModel):
    model_config = ConfigDict(extra="ignore")
    camera_position: str
    camera_angle: str


_ObjectList = Annotated[list[str], Field(min_length=1, max_length=6)]
# The reply field of each multiple-choice type: what one distractor is.
_OPTION_TYPES: dict[str, Any] = {
    "central_object": str,
    "central_object_appearance": AppearanceOption,
    "object_detect": _ObjectList,
    "camera_motion": CameraOption,
    "central_object_motion": str,
    "environment": str,
    "lighting": str,
}
# How each field looks in the prompt's reply format (for servers that ignore the schema).
_FIELD_FORMATS: dict[str, str] = {
    "central_object": "[3 strings]",
    "central_object_appearance": '[3 objects {"color": string, "size_shape": string}]',
    "object_detect": "[3 lists of object names]",
    "camera_motion": '[3 objects {"camera_position": string, "camera_angle": string}]',
    "central_object_motion": "[3 strings]",
    "environment": "[3 strings]",
    "lighting": "[3 strings]",
}
# Types whose distractors must not merely extend or shorten the answer's name ("sea turtle" for
# "green sea turtle", "coral reef" for "shallow coral reef").
_NAME_TYPES = ("central_object", "central_object_motion", "environment", "lighting")


def mcq_types(row: Mapping[str, Any]) -> list[str]:
    """The video's candidate multiple-choice types, in index order (``central_object_motion`` whenever
    ``movement_behavior`` is non-empty: the reply decides whether it is asked)."""
    return [t for t in candidate_types(row) if QUESTION_TYPES[t].question_format == MULTIPLE_CHOICE]


@cache
def reply_model(types: tuple[str, ...], reference: bool) -> type[BaseModel]:
    """The reply schema for a set of types: one field of exactly three distractors per type (plus
    the reference sentence). ``central_object_motion`` comes with :class:`MotionCheck` and takes
    three distractors or none (the question is not asked); the validator ties the count to the check.
    Cached: one class per combination, so the schema sent is stable."""
    fields: dict[str, Any] = {}
    for t in types:
        low = 0 if t == MOTION_TYPE else DISTRACTORS
        # A type chosen at run time from a table: mypy checks no such type expression. (pydantic's conlist
        # would type-check but drops minItems 0 from the schema sent, which is part of every request's key.)
        option_list = list[_OPTION_TYPES[t]]  # type: ignore[valid-type]
        fields[t] = (Annotated[option_list, Field(min_length=low, max_length=DISTRACTORS)], ...)
        if t == MOTION_TYPE:
            fields[MOTION_CHECK_FIELD] = (MotionCheck, ...)
    if reference:
        fields[REFERENCE_FIELD] = (str, Field(min_length=1, description="one sentence"))
    return create_model("MarineLifeDistractors", __config__=ConfigDict(extra="ignore"), **fields)


def central_motion(row: Mapping[str, Any], value: BaseModel) -> str | None:
    """The central object's movement the reply extracted ("" when the check says movement_behavior
    is about something else); None when the video has no movement_behavior to check."""
    check = getattr(value, MOTION_CHECK_FIELD, None)
    if check is None:
        return None
    return check.central_object_movement.strip() if check.describes_central_object else ""


def motion_decision(row: Mapping[str, Any], value: BaseModel) -> dict[str, Any] | None:
    """What the step records about type 7: asked with its answer, or not asked and why (None: the
    video has no movement_behavior)."""
    check = getattr(value, MOTION_CHECK_FIELD, None)
    if check is None:
        return None
    if check.describes_central_object:
        return {
            "asked": True,
            "answer": check.central_object_movement.strip(),
            "subject": check.subject.strip(),
        }
    reason = (
        f"movement_behavior ({str(row['movement_behavior']).strip()!r}) describes {check.subject.strip()!r}, "
        f"not the movement or state of the central object ({str(row['central_object']).strip()!r})"
    )
    return {"asked": False, "reason": reason, "subject": check.subject.strip()}


def present_objects(row: Mapping[str, Any]) -> list[str]:
    return [
        str(row[n]).strip() for n in ("central_object", *SECONDARY_OBJECTS) if str(row.get(n) or "").strip()
    ]


def prompt_answers(row: Mapping[str, Any]) -> dict[str, Any]:
    """The correct answers as the prompt shows them: structured where the reply is structured."""
    out: dict[str, Any] = {}
    for t in mcq_types(row):
        if t == MOTION_TYPE:
            continue  # decided by the reply (central_object_motion_check)
        if t == "central_object_appearance":
            out[t] = {"color": row["color"], "size_shape": row["size_shape"]}
        elif t == "camera_motion":
            out[t] = {"camera_position": row["camera_position"], "camera_angle": row["camera_angle"]}
        elif t == "object_detect":
            out[t] = present_objects(row)
        else:
            out[t] = ground_truth(t, row)
    return out


def option_text(qtype: str, option: Any) -> str:
    """One distractor as option text, in exactly the format of the type's correct answer ("" when a
    part is blank, which the checks report as an empty distractor)."""
    if qtype == "central_object_appearance":
        parts = {"color": option.color.strip(), "size_shape": option.size_shape.strip()}
    elif qtype == "camera_motion":
        parts = {
            "camera_position": option.camera_position.strip(),
            "camera_angle": option.camera_angle.strip(),
        }
    elif qtype == "object_detect":
        names = [name.strip() for name in option]
        return ", ".join(names) if all(names) else ""
    else:
        return str(option).strip()
    return ground_truth(qtype, parts) if all(parts.values()) else ""


def distractor_texts(row: Mapping[str, Any], value: BaseModel) -> dict[str, list[str]]:
    """The distractors of each type the video is asked (``central_object_motion`` only if asked)."""
    return {
        t: [option_text(t, o) for o in getattr(value, t)]
        for t in mcq_types(row)
        if t != MOTION_TYPE or central_motion(row, value)
    }


def _motion_problems(row: Mapping[str, Any], value: BaseModel) -> list[str]:
    """The check of type 7 against movement_behavior and its distractors' count."""
    check, given = getattr(value, MOTION_CHECK_FIELD), getattr(value, MOTION_TYPE)
    central = str(row["central_object"]).strip()
    movement = check.central_object_movement.strip()
    if not check.describes_central_object:
        problems = []
        if movement:
            problems.append(
                f"{MOTION_CHECK_FIELD}: describes_central_object is false but central_object_movement is "
                f"{movement!r}; leave it empty, or set describes_central_object to true"
            )
        if given:
            problems.append(
                f"{MOTION_TYPE}: the question is not asked (movement_behavior does not describe the {central}), "
                "so leave its distractors empty ([])"
            )
        if not check.subject.strip():
            problems.append(f"{MOTION_CHECK_FIELD}: name whom or what movement_behavior describes (subject)")
        return problems
    problems = [
        f"{MOTION_CHECK_FIELD}: {p}" for p in motion_source_problems(movement, row["movement_behavior"])
    ]
    if len(given) != DISTRACTORS:
        problems.append(
            f"{MOTION_TYPE} needs exactly {DISTRACTORS} distractors when it is asked, got {len(given)}"
        )
    return problems


def reply_problems(row: Mapping[str, Any], value: BaseModel) -> list[str]:
    """Everything wrong with a reply for this video (empty: usable)."""
    problems: list[str] = []
    central = str(row["central_object"]).strip()
    present = present_objects(row)
    if MOTION_TYPE in mcq_types(row):
        problems += _motion_problems(row, value)
        if problems:
            return problems  # the distractors below are checked against a movement that is not settled
    for qtype, options in distractor_texts(row, value).items():
        answer = central_motion(row, value) if qtype == MOTION_TYPE else ground_truth(qtype, row)
        if answer is None:  # the reply model of a video with movement_behavior requires the check
            problems.append(f"{qtype}: the reply has no {MOTION_CHECK_FIELD}")
            continue
        problems += option_problems(qtype, answer, options)
        if qtype in _NAME_TYPES:
            for i, option in enumerate(options, start=1):
                if normalized(option) != normalized(answer) and (
                    mentions(option, answer) or mentions(answer, option)
                ):
                    problems.append(
                        f"{qtype} distractor {i} ({option!r}) only rewords the correct answer {answer!r}; "
                        "write a clearly different option"
                    )
        if qtype == "object_detect":
            for i, names in enumerate(getattr(value, qtype), start=1):
                absent = [n for n in names if not any(mentions(n, p) or mentions(p, n) for p in present)]
                if not absent:
                    problems.append(
                        f"object_detect list {i} ({', '.join(names)}) names only objects the video shows, so it "
                        "would be correct too; add at least one object that is not in the video"
                    )
        if qtype == "central_object_motion":
            others = [p for p in present if p != central]
            for i, option in enumerate(options, start=1):
                subject = foreign_subject(option, central, others)
                if subject:
                    problems.append(
                        f"central_object_motion distractor {i} ({option!r}) is about {subject!r}; every option "
                        f"must describe a movement or state of the {central} itself"
                    )
    reference = getattr(value, REFERENCE_FIELD, None)
    if reference is not None:
        if "\n" in reference.strip():
            problems.append(f"{REFERENCE_FIELD} must be one sentence on one line")
        if not mentions(reference, central):
            problems.append(f"{REFERENCE_FIELD} must name the central object, the {central}")
    return problems


def build_records(row: Mapping[str, Any], value: BaseModel, seed: int = 0) -> list[dict[str, Any]]:
    """The video's QA records from a reply, checked by the dataset's validator (ValueError if not)."""
    reference = getattr(value, REFERENCE_FIELD, None)
    answers = {REFERENCE_TYPE: reference.strip()} if reference is not None else {}
    motion = central_motion(row, value)
    if motion:
        answers[MOTION_TYPE] = motion
    records = assemble_records(row, distractor_texts(row, value), seed, answers=answers)
    check_records(records, [row], source=f"QA records of video {row['id']}")
    return records


def _validator(row: Mapping[str, Any]) -> Callable[[BaseModel], None]:
    def check(value: BaseModel) -> None:
        problems = reply_problems(row, value)
        if problems:
            raise ValueError("; ".join(problems))
        build_records(row, value)

    return check


def qa_request(row: Mapping[str, Any], *, reference: bool = True) -> LLMRequest:
    """The distractor request of one video row; ``row["caption"]`` must hold its final caption."""
    if not str(row.get("caption") or "").strip():
        raise ValueError(f"video {row['id']}: no final caption; run the caption engine first")
    types = tuple(mcq_types(row))
    model = reply_model(types, reference)
    item_id = str(row["id"])
    formats = {ITEM_ID_FIELD: json.dumps(item_id), **{t: _FIELD_FORMATS[t] for t in types}}
    if MOTION_TYPE in types:
        formats[MOTION_TYPE] = "[3 strings, or [] when describes_central_object is false]"
        formats[MOTION_CHECK_FIELD] = (
            '{"describes_central_object": boolean, "subject": string, "central_object_movement": string}'
        )
    if reference:
        formats[REFERENCE_FIELD] = "string"
    prompt = load_prompt(PROMPT_NAME)
    text = prompt.render(
        attributes=format_attributes(row),
        caption=str(row["caption"]).strip(),
        answers=json.dumps(prompt_answers(row), ensure_ascii=False),
        central_object=str(row["central_object"]).strip(),
        movement_behavior=str(row.get("movement_behavior") or "").strip() or "(none annotated)",
        fields="{" + ", ".join(f'"{name}": {fmt}' for name, fmt in formats.items()) + "}",
        item_id=item_id,
    )
    return LLMRequest(
        [user_message(text)],
        schema=model,
        prompt=prompt,
        validator=_validator(row),
        schema_name=SCHEMA_NAME,
        item_id=item_id,
    )


def run_qa(
    work_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    client: LLMClient,
    *,
    seed: int = 0,
    reference: bool = True,
    ahead: int | None = None,
    reject_failures: bool = False,
) -> dict[str, str]:
    """QA for ``rows`` (video rows with their final ``caption``); finishes the step when nothing
    failed and returns ``{id: error}``. ``reference=False`` uses the template reference sentence
    (:func:`marinelife16k.questions.camera_object_reference`) instead of the LLM's.

    Record: ``{"id", "records": [QA records], "distractors": {type: [3 texts]},
    "central_object_motion": {"asked": true, "answer", "subject"} | {"asked": false, "reason",
    "subject"} | null (no movement_behavior), "reference_source": "llm" | "template", "llm": cost}``.
    """
    records = StepRecords(work_dir, STEP)

    def outcome(row: Mapping[str, Any], request: LLMRequest, result: LLMResult) -> Outcome:
        return Outcome(
            {
                "id": row["id"],
                "records": build_records(row, result.value, seed),
                "distractors": distractor_texts(row, result.value),
                MOTION_TYPE: motion_decision(row, result.value),
                "reference_source": "llm" if reference else "template",
                "llm": call_cost(client, result),
            }
        )

    failures = run_llm_step(
        records, rows, client, lambda row: qa_request(row, reference=reference), outcome,
        ahead=ahead, reject_failures=reject_failures, desc="QA distractors",
    )  # fmt: skip
    if not failures:
        records.finish(row["id"] for row in rows)
    return failures
