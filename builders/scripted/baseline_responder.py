"""A scripted "baseline model" and a scripted judge for the demo's bundled predictions (no model anywhere).

Both are deterministic functions of the request, served by
:class:`~builders.testing.chat_server.ChatServer` (``server.handler = BaselineModel(...)``). Every
draw is a hash of the request's text (and frames), so the same request always gets the same reply.
They exist so that ``vqabench demo`` can score *something* offline with every metric: what they
write reads plausibly but is not model output, and says nothing about any model.

:class:`BaselineModel` answers the evaluation runners' requests, knowing the right answers (an
oracle built from the dataset being evaluated) and getting some wrong on purpose:

* BQA (``builders.evaluation.bqa_answers`` prompts, found by their ``Question:``/``A. <label>`` lines):
  right with probability ``easy``/``hard`` by the item's difficulty, else a distractor; about 6% of
  replies name no single choice (unparsed). Single-word replies vary in form ("Anger", "anger.",
  "Answer: Anger", "C"). Rationales either name the chosen emotion only (a leak when it is right),
  describe the body language without naming any choice, or weigh two choices. In the two-stage
  styles, stage 1 told the answer names it three times in four (the leak the paper describes), and
  stage 2 mostly answers what a rationale naming one choice names.
* MarineLife-16K (``builders.evaluation.marinelife`` prompts, whose frames it recognises by their digest):
  multiple choice right with a per-type probability (:data:`MCQ_ACCURACY`), about 6% unparsed;
  open-ended camera-object answers and captions written from the video's attributes at four levels
  of quality (complete, activity or camera only / partial, wrong or hallucinating, vague).

:class:`ScriptedJudge` scores the judge metric's ``marinelife_open_ended`` and ``marinelife_caption``
requests from word overlap between the answer and the ground truth shown in the prompt, so better
answers get higher scores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from builders.scoring.phrases import content_words, words
from builders.scripted.bqa_responder import draw, first_user_text, pick, schema_name
from builders.scripted.chat_requests import frames_digest, image_urls, with_item_id
from builders.scripted.marinelife_responder import caption_from, parse_attributes
from marinelife16k.vocabulary import ATTRIBUTES, MULTIPLE_CHOICE, OPTION_LABELS

#: Share of right answers per MarineLife-16K multiple-choice type: an imperfect, uneven model.
MCQ_ACCURACY: dict[str, float] = {
    "central_object": 0.8,
    "central_object_appearance": 0.55,
    "object_detect": 0.5,
    "camera_motion": 0.4,
    "central_object_motion": 0.6,
    "environment": 0.7,
    "lighting": 0.65,
}
BQA_NO_CHOICE = ("I cannot tell from these frames what this person is feeling.", "Either {a} or {b}.")
MCQ_NO_CHOICE = "It is hard to tell from these frames."
BODY_PARTS = ("shoulders", "hands", "head", "arms", "stance", "gait")
# Observations that name no emotion (a rationale built on one gives nothing away).
OBSERVATIONS = (
    "The shoulders are raised and stiff", "The hands stay close to the body", "The head is lowered",
    "The arms move quickly and abruptly", "The stance is closed and turned away", "The gait is slow and heavy",
)  # fmt: skip

_OPTION = re.compile(r"^([A-D])\.\s*(.+)$", re.MULTILINE)
_CORRECT_ANSWER = re.compile(r"^Correct answer:\s*(.+)$", re.MULTILINE)
_RATIONALE = re.compile(r"^Rationale:\s*(.+)$", re.MULTILINE)
OEMU_SCHEMA, CAPTION_SCHEMA = "marinelife_open_ended_scores", "marinelife_caption_scores"
_BETWEEN = r"\s*\n(.*?)\n\s*\n"
_OEMU_ANSWER = re.compile(r"Answer to grade:" + _BETWEEN, re.DOTALL)
_CAPTION_REFERENCE = re.compile(r"Reference caption:" + _BETWEEN, re.DOTALL)
_CAPTION_GENERATED = re.compile(r"Generated caption:" + _BETWEEN, re.DOTALL)
# Word starts that describe movement (of an animal or of the camera), for the caption judge's AH.
_MOTION = ("swim", "drift", "rest", "hover", "feed", "turn", "dart", "glid", "circl", "pan", "tilt",
           "track", "zoom", "static", "follow", "mov", "still", "surfac", "hid", "crawl", "flap", "sway")  # fmt: skip
_RELATION = frozenset({"keep", "keeps", "follow", "follows", "track", "tracks", "frame", "frames", "capture",
                       "captures", "record", "records", "reveal", "reveals", "shows"})  # fmt: skip


class BaselineModel:
    """Handler answering evaluation requests (see the module doc).

    ``bqa``: the four choices in the order shown -> (correct label, difficulty). ``marine_videos``:
    frames digest (:func:`frames_digest` of the frames the runner sends) -> ``(video row, QA records
    of that video)``.
    """

    def __init__(
        self,
        bqa: Mapping[tuple[str, ...], tuple[str, str]] | None = None,
        marine_videos: Mapping[str, tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]] | None = None,
        *,
        easy: float = 0.8,
        hard: float = 0.4,
        unparsed: float = 0.06,
    ) -> None:
        self.bqa = dict(bqa or {})
        self.marine_videos = dict(marine_videos or {})
        self.easy, self.hard, self.unparsed = easy, hard, unparsed

    def __call__(self, body: Mapping[str, Any]) -> Any:
        text = first_user_text(body)
        video = self.marine_videos.get(frames_digest(image_urls(body)))
        if video is not None:
            return self.marine(text, *video)
        choices = tuple(label.strip() for _, label in _OPTION.findall(text))
        if choices in self.bqa:
            return self.bqa_answer(text, choices, *self.bqa[choices])
        raise ValueError(f"BaselineModel: unknown request (frames not recognised, choices {choices})")

    # -- BQA -----------------------------------------------------------------------------------
    def bqa_answer(self, text: str, choices: tuple[str, ...], answer: str, difficulty: str) -> str:
        if _CORRECT_ANSWER.search(text) or "Write a rationale" in text:
            return self.bqa_stage1(text, choices, answer)
        given = _RATIONALE.search(text)
        if (
            given and draw(text, "follows-rationale") < 0.95
        ):  # stage 2 mostly follows a rationale naming one choice
            named = [c for c in choices if c in given.group(1)]
            if len(named) == 1:
                return pick((named[0], f"{named[0]}.", f"Answer: {named[0]}"), text, "form")
        rationale = "Answer: <" in text  # the one-request style asks for a final "Answer: <...>" line
        if draw(text, "no-choice") < self.unparsed:
            return pick(BQA_NO_CHOICE, text, "no-choice-form").format(a=choices[0], b=choices[-1])
        right = self.easy if difficulty == "Easy" else self.hard
        chosen = (
            answer
            if draw(text, "right") < right
            else pick([c for c in choices if c != answer], text, "wrong")
        )
        if not rationale:
            letter = OPTION_LABELS[choices.index(chosen)]
            return pick((chosen, f"{chosen.lower()}.", f"Answer: {chosen}", letter), text, "form")
        part = pick(BODY_PARTS, text, "part")
        u = draw(text, "rationale")
        if u < 0.4:  # names the chosen label only: gives the answer away when it is right
            why = f"The person's {part} and overall movement point to {chosen}."
        elif u < 0.8:  # describes without naming a choice
            why = f"{pick(OBSERVATIONS, text, 'observation')}, which is what decides my choice."
        else:  # weighs two choices
            other = pick([c for c in choices if c != chosen], text, "other")
            why = f"The {part} could suggest {other}, but the rest of the body language fits {chosen} better."
        return f"Rationale: {why}\nAnswer: {chosen}"

    def bqa_stage1(self, text: str, choices: tuple[str, ...], answer: str) -> str:
        """A two-stage style's rationale. Told the answer (multimodal_cot), it names it most of the time,
        as the paper saw its rationales do; not told, it names its own pick or none."""
        part = pick(BODY_PARTS, text, "part")
        known = _CORRECT_ANSWER.search(text)
        chosen = known.group(1).strip() if known else pick(choices, text, "blind")
        u = draw(text, "stage1")
        if u < (0.75 if known else 0.35):
            return f"The person's {part} and overall movement point to {chosen}, not to the other options."
        if u < 0.9:
            return f"{pick(OBSERVATIONS, text, 'observation')}, which is what the clip shows."
        other = pick([c for c in choices if c != chosen], text, "other")
        return f"The {part} could suggest {other}, but the rest of the body language fits {chosen} better."

    # -- MarineLife-16K ------------------------------------------------------------------------
    def marine(self, text: str, video: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
        asked = [r for r in records if r["prompt"] in text]
        if not asked:
            raise ValueError(f"BaselineModel: no QA record of video {video['id']} matches {text[-120:]!r}")
        record = max(asked, key=lambda r: len(r["prompt"]))
        key = f"{record['question_id']}\x00{text}"
        if record["question_format"] == MULTIPLE_CHOICE:
            return self.mcq(key, record)
        if record["type"] == "caption":
            return self.caption(key, video)
        return self.camera_object(key, video)

    def mcq(self, key: str, record: Mapping[str, Any]) -> str:
        if draw(key, "no-choice") < self.unparsed:
            return MCQ_NO_CHOICE
        right = draw(key, "right") < MCQ_ACCURACY.get(record["type"], 0.5)
        letters = [o["label"] for o in record["options"]]
        letter = (
            record["answer"] if right else pick([x for x in letters if x != record["answer"]], key, "wrong")
        )
        text = next(o["text"] for o in record["options"] if o["label"] == letter)
        forms = (
            letter,
            letter,
            f"({letter})",
            f"{letter}. {text}",
            f"The answer is {letter}.",
        )  # bare: 2 in 5
        return pick(forms, key, "form")

    def camera_object(self, key: str, video: Mapping[str, Any]) -> str:
        obj, movement = video["central_object"], video["movement_behavior"] or "staying in view"
        position, angle = video["camera_position"], video["camera_angle"]
        u = draw(key, "quality")
        if u < 0.35:
            return (f"Filmed as a {position} with the camera {angle}, the video keeps the {obj} in frame while "
                    f"it is {movement}, so the viewpoint follows the activity.")  # fmt: skip
        if u < 0.6:
            return f"The {obj} is {movement}."
        if u < 0.8:
            return f"It is a {position} shot, filmed {angle}."
        return f"The camera pans quickly across the reef while the {obj} stays hidden."

    def caption(self, key: str, video: Mapping[str, Any]) -> str:
        attributes = {name: video.get(name) or "" for name in ATTRIBUTES}
        u = draw(key, "quality")
        if u < 0.3:
            return caption_from(attributes)
        if u < 0.6:
            return caption_from(
                attributes, ("object_2", "object_3", "object_4", "texture", "video_clarity", "lighting")
            )
        if u < 0.8:
            return (
                caption_from(attributes, ("lighting",))[:-1]
                + ", while a scuba diver follows it with a torch at night."
            )
        return caption_from(attributes, ("all",))


def _coverage(text: str, phrase: str) -> float:
    """Share of the identifying words of ``phrase`` that occur in ``text`` (0 when it has none)."""
    needed = set(content_words(phrase))
    return len(needed & set(content_words(text))) / len(needed) if needed else 0.0


def _scale(share: float) -> int:
    return max(0, min(5, round(5 * share)))


class ScriptedJudge:
    """Handler for the judge metric's ``marinelife_open_ended`` and ``marinelife_caption`` requests."""

    def __call__(self, body: Mapping[str, Any]) -> Any:
        text, name = first_user_text(body), schema_name(body)
        if name == OEMU_SCHEMA:
            return with_item_id(body, self.open_ended(text))
        if name == CAPTION_SCHEMA:
            return with_item_id(body, self.caption(text))
        raise ValueError(f"ScriptedJudge: not a judge request it knows (schema {name!r})")

    @staticmethod
    def _part(pattern: re.Pattern[str], text: str, what: str) -> str:
        match = pattern.search(text)
        if match is None:
            raise ValueError(f"ScriptedJudge: no {what} in the prompt")
        return match.group(1).strip()

    def open_ended(self, text: str) -> dict[str, int]:
        evidence = parse_attributes(text)
        answer = self._part(_OEMU_ANSWER, text, "answer to grade")
        camera = _scale(_coverage(answer, f"{evidence['camera_position']} {evidence['camera_angle']}"))
        activity = _scale(_coverage(answer, evidence["movement_behavior"] or evidence["central_object"]))
        related = bool(_RELATION & set(words(answer)))
        relation = min(5, min(camera, activity) + (2 if related and camera and activity else 0))
        return {"camera": camera, "activity": activity, "relation": relation}

    def caption(self, text: str) -> dict[str, Any]:
        reference = set(content_words(self._part(_CAPTION_REFERENCE, text, "reference caption")))
        generated = set(content_words(self._part(_CAPTION_GENERATED, text, "generated caption")))
        shared = reference & generated
        beh = _scale(min(1.0, 1.2 * len(shared) / max(1, len(reference))))
        motion_ref = {w for w in reference if w.startswith(_MOTION)}
        motion_gen = {w for w in generated if w.startswith(_MOTION)}
        ah = (
            _scale(len(motion_ref & motion_gen) / len(motion_ref))
            if motion_ref
            else (5 if not motion_gen else 3)
        )
        unsupported = generated - reference
        ecf = _scale(1 - 1.5 * len(unsupported) / max(1, len(generated)))
        return {
            "BEH_explanation": f"{len(shared)} of the reference's {len(reference)} content words are in the caption.",
            "BEH": beh,
            "AH_explanation": f"{len(motion_ref & motion_gen)} of {len(motion_ref)} movement words agree.",
            "AH": ah,
            "ECF_explanation": f"{len(unsupported)} content words have no support in the reference.",
            "ECF": ecf,
        }
