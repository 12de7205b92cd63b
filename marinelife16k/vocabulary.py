"""Everything MarineLife-16K's labels *are*: attributes, question types, dimensions, camera kinds."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The 13 expert attributes of a video, in the paper's order.
ATTRIBUTES: tuple[str, ...] = (
    "central_object", "object_2", "object_3", "object_4", "texture", "color", "size_shape",
    "environment", "lighting", "video_clarity", "movement_behavior", "camera_position", "camera_angle",
)  # fmt: skip
SECONDARY_OBJECTS: tuple[str, ...] = ("object_2", "object_3", "object_4")

COLLECTIONS: tuple[str, ...] = ("MVK", "MSC")
SPLIT_SIZES: dict[str, int] = {"train": 1300, "validation": 200, "test": 500}

MULTIPLE_CHOICE = "multiple_choice"
OPEN_ENDED = "open_ended"
OPTION_LABELS: tuple[str, ...] = ("A", "B", "C", "D")
MCQ_SUFFIX = "Answer with the option letter only."


@dataclass(frozen=True)
class QuestionType:
    """One QA type of the paper's appendix: its format, evaluation dimension and condition."""

    name: str
    question_format: str
    dimension: str
    mandatory: bool
    # For conditional types: the attribute that must be non-empty for the question to exist.
    condition_attribute: str | None = None


QUESTION_TYPES: dict[str, QuestionType] = {
    t.name: t
    for t in (
        QuestionType("central_object", MULTIPLE_CHOICE, "MBC-so", True),
        QuestionType("central_object_appearance", MULTIPLE_CHOICE, "PMT", True),
        QuestionType("object_detect", MULTIPLE_CHOICE, "MBC-mo", True),
        QuestionType("camera_motion", MULTIPLE_CHOICE, "PDO", True),
        QuestionType("camera_object_open_ended", OPEN_ENDED, "OEMU", True),
        QuestionType("caption", OPEN_ENDED, "caption", True),
        QuestionType("central_object_motion", MULTIPLE_CHOICE, "OBK", False, "movement_behavior"),
        QuestionType("environment", MULTIPLE_CHOICE, "SM-e", False, "environment"),
        QuestionType("lighting", MULTIPLE_CHOICE, "SM-l", False, "lighting"),
    )
}
MANDATORY_TYPES: tuple[str, ...] = tuple(n for n, t in QUESTION_TYPES.items() if t.mandatory)

# Dimensions in the paper's Table 3 order; the multiple-choice ones are scored by accuracy.
DIMENSIONS: tuple[str, ...] = ("MBC-so", "MBC-mo", "PMT", "PDO", "OBK", "SM-e", "SM-l", "OEMU")
MCQ_DIMENSIONS: tuple[str, ...] = tuple(
    t.dimension for t in QUESTION_TYPES.values() if t.question_format == MULTIPLE_CHOICE
)
DIMENSION_OF_TYPE: dict[str, str] = {n: t.dimension for n, t in QUESTION_TYPES.items()}
# A caption is one sentence of fewer than this many words (the paper's caption engine).
MAX_CAPTION_WORDS = 80
# Caption judge criteria (paper's captioning table).
CAPTION_CRITERIA: tuple[str, ...] = ("BEH", "AH", "ECF")
#: The one definition of each caption criterion, used by the judge's rubric, the dataset card and
#: eval.yaml alike. The paper names them in its captioning benchmark (the full name) and asks its
#: judge for them as three dimensions (the title); the definition says what each scores, 0-5.
CAPTION_CRITERION_NAMES: dict[str, str] = {
    "BEH": "Biological Entity Hallucination",
    "AH": "Action Hallucination",
    "ECF": "Environmental Context Fabrication",
}
CAPTION_CRITERION_TITLES: dict[str, str] = {
    "BEH": "Subject correspondence",
    "AH": "Temporal description",
    "ECF": "Hallucination detection",
}
CAPTION_CRITERION_DEFINITIONS: dict[str, str] = {
    "BEH": "Are the subjects (organisms, divers, objects) of the caption the ones of the reference? "
    "5: the same subjects; 0: unrelated subjects.",
    "AH": "Does the caption's account of how the objects move, and how the camera moves or is placed, "
    "agree with the reference? 5: fully consistent; 0: unrelated or contradicted.",
    "ECF": "Does the caption add facts, actions or scene elements that are not there (imagined "
    "details, wrong inferences)? 5: nothing fabricated; 0: severe fabrication.",
}

STATIC, MOVING = "static", "moving"
CAMERA_KINDS: tuple[str, ...] = (STATIC, MOVING)

# The paper names pan (left/right), tilt (up/down) and dolly/translation as camera movements.
# Words that name a movement *of the camera*. A bare "moving"/"moves" is not among them: camera
# attributes often describe the subject ("full scene of a moving school of fish"); only "camera
# moves ..." or "moves/moving <direction>" count.
_DIRECTIONS = r"(left|right|forward|forwards|backward|backwards|up|down|closer|away|along|around|in|out|toward|towards|with)"
_MOVING_WORDS = re.compile(
    r"\b(pan(s|ned|ning)?|tilt(s|ed|ing)?|doll(y|ies|ied|ying)|track(s|ed|ing)?|follow(s|ed|ing)?"
    r"|zoom(s|ed|ing)?|translat\w*|orbit\w*|handheld|hand-held|drift\w*|sweep\w*|truck(s|ed|ing)?"
    r"|pedestal\w*|camera\s+(is\s+)?(mov|glid)\w*|mov(e|es|ed|ing)\s+" + _DIRECTIONS + r")\b",
    re.IGNORECASE,
)
# A movement word right after a negation ("no panning", "not tracking", "without any zoom") does not count.
_NEGATION_BEFORE = re.compile(r"\b(no|not|without|never|nor|non)\W+(\w+\W+)?$", re.IGNORECASE)


def camera_kind(camera_position: str | None, camera_angle: str | None) -> str:
    """Static or moving camera, from the two camera attributes.

    Rule: the camera is *moving* when either attribute names a camera movement (pan, tilt, dolly,
    tracking/following, zoom, translation, orbit, handheld, drift, sweep, truck, pedestal, "camera
    moves/glides", "moves left/closer/...") that is not negated within the two words before it ("no
    panning", "without any zoom"); otherwise *static*. "Static", "fixed", "steady" and the like need
    no word of their own: "steady pan to the right" is moving, "static, no tilt" is static.
    The paper reports caption scores for both kinds but does not publish its rule; this one is ours.
    """
    for text in (camera_angle or "", camera_position or ""):
        for match in _MOVING_WORDS.finditer(text):
            if not _NEGATION_BEFORE.search(text[: match.start()]):
                return MOVING
    return STATIC


# Attributes every video must have: the six mandatory question types are built from them.
REQUIRED_ATTRIBUTES: tuple[str, ...] = (
    "central_object",
    "color",
    "size_shape",
    "camera_position",
    "camera_angle",
)
