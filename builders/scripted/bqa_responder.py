"""A scripted stand-in for the LLM of the BQA pipeline and evaluation runner (tests and bundled replies).

It is a deterministic function of the request, served by :class:`~builders.testing.chat_server.ChatServer`
(``server.handler = BQAResponder(...)``). It recognises the request by its response schema name
(``BQAQuestion`` for STEP2, ``BQAFilterVerdict`` for STEP3) or, for plain-text requests, by the
``Question:``/``Options:`` lines of the answer prompts, and reads what it needs from the prompt text
(the first user turn, so that a re-ask gets the same reply as the original request). Every draw is a
hash of that text, so the same request always gets the same reply, across runs and machines.

What it answers (the shares are the defaults):

* STEP2: a plausible question about "the <person>"; about 8% end without ``?``, 6% span two lines,
  8% name a candidate (sometimes inflected: "angry"), all of which the rule filter must catch.
* STEP3: a pass with a reason; about 8% "leaks the answer", 4% "not objective", 2% "harmful".
* Answer prompts: with ``answers`` (choices tuple -> correct label, as a maintainer's oracle) the
  correct label with probability ``accuracy``, else a distractor; without, a choice drawn uniformly.
  About 4% of replies name no choice ("I cannot tell ..."), which the answer parser must leave
  unparsed. The rationale style writes a sentence, then ``Answer: <label>``.

It is not a model: replies recorded from it exercise the tooling, they say nothing about emotions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from builders.scripted.chat_requests import message_text, with_item_id, without_item_id

QUESTION_SCHEMA, FILTER_SCHEMA = "BQAQuestion", "BQAFilterVerdict"

PEOPLE = (
    "man on the left", "woman in the dark coat", "person at the centre of the frame", "young man",
    "older woman", "man wearing a hat", "woman standing near the door", "person in the foreground",
    "man in the striped shirt", "girl on the right",
)  # fmt: skip
TEMPLATES = (
    "Which emotion best describes how the {who} is feeling?",
    "What emotion does the {who} appear to express through their posture?",
    "Judging by the body language of the {who}, which emotion fits best?",
    "Which emotional state does the {who} convey with their gestures in this clip?",
    "What is the {who} most likely feeling during this scene?",
    "Based on how the {who} moves, which emotion are they showing?",
)
# Forms a careless generator might use (the rule filter knows many more).
CARELESS_FORMS = {"Anger": "angry", "Sadness": "sad", "Happiness": "happy", "Surprise": "surprised",
                  "Fear": "fearful", "Doubt/Confusion": "confused", "Excitement": "excited"}  # fmt: skip
GARBAGE = "I cannot tell from these frames what this person is feeling."

_CANDIDATES = re.compile(r"^Candidate emotions:\s*(.+)$", re.MULTILINE)
_QUESTION = re.compile(r"^Question:\s*(.+)$", re.MULTILINE)
_CHOICES = re.compile(r"^Choices:\s*(.+)$", re.MULTILINE)
_ANSWER = re.compile(r"^Correct choice[^:]*:\s*(.+)$", re.MULTILINE)
_OPTION = re.compile(r"^([A-D])\.\s*(.+)$", re.MULTILINE)


def draw(text: str, salt: str) -> float:
    """A number in [0, 1) fixed by ``text`` and ``salt``."""
    digest = hashlib.sha256(f"{salt}\x00{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(options: Sequence[Any], text: str, salt: str) -> Any:
    return options[int(draw(text, salt) * len(options))]


def first_user_text(body: Mapping[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return without_item_id(message_text(users[0])) if users else ""


def is_answer_prompt(text: str) -> bool:
    """Whether ``text`` asks a BQA question with lettered choices (STEP4's and the evaluation's prompts)."""
    return bool(_QUESTION.search(text) and _OPTION.search(text))


def schema_name(body: Mapping[str, Any]) -> str | None:
    fmt = body.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name") if fmt.get("type") == "json_schema" else None


class BQAResponder:
    """``responder(body)`` -> the reply content (see the module doc). ``answers`` maps a tuple of the
    four choices (in the order shown) to the correct label."""

    def __init__(
        self,
        answers: Mapping[tuple[str, ...], str] | None = None,
        accuracy: float = 0.6,
        bad_question_rate: float = 0.22,
        reject_rate: float = 0.14,
        garbage_rate: float = 0.04,
    ) -> None:
        self.answers = dict(answers or {})
        self.accuracy = accuracy
        self.bad_question_rate = bad_question_rate
        self.reject_rate = reject_rate
        self.garbage_rate = garbage_rate

    def __call__(self, body: Mapping[str, Any]) -> Any:
        text = first_user_text(body)
        name = schema_name(body)
        if name == QUESTION_SCHEMA:
            return with_item_id(body, {"question": self.question(text)})
        if name == FILTER_SCHEMA:
            return with_item_id(body, self.verdict(text))
        if is_answer_prompt(text):
            return self.answer(text)
        raise ValueError(f"BQAResponder: not a BQA request (schema {name!r}, text {text[:80]!r})")

    # -- STEP2 -------------------------------------------------------------------------------
    def question(self, text: str) -> str:
        match = _CANDIDATES.search(text)
        if match is None:
            raise ValueError("BQAResponder: STEP2 prompt without a 'Candidate emotions:' line")
        candidates = [c.strip() for c in match.group(1).split(",")]
        who = pick(PEOPLE, text, "who")
        good = pick(TEMPLATES, text, "template").format(who=who)
        u, r = draw(text, "bad"), self.bad_question_rate
        if u < r * 8 / 22:
            return good.rstrip("?") + "."
        if u < r * 14 / 22:
            return f"Look closely at the {who}.\nWhich emotion fits their body language best?"
        if u < r:
            label = pick(candidates, text, "named")
            word = CARELESS_FORMS.get(label, label.lower())
            return f"Does the {who} look {word}, or is another emotion shown?"
        return good

    # -- STEP3 -------------------------------------------------------------------------------
    def verdict(self, text: str) -> dict[str, Any]:
        question = _QUESTION.search(text)
        if question is None or _CHOICES.search(text) is None or _ANSWER.search(text) is None:
            raise ValueError("BQAResponder: STEP3 prompt without Question/Choices/Correct choice lines")
        u, r = draw(text, "verdict"), self.reject_rate
        verdict = {"objective": True, "leaks_answer": False, "harmful": False,
                   "reason": "The question is objective, keeps the answer hidden and is harmless."}  # fmt: skip
        if u < r * 8 / 14:
            verdict.update(leaks_answer=True, reason="The wording points to the correct emotion.")
        elif u < r * 12 / 14:
            verdict.update(
                objective=False, reason="The question assumes an interpretation the clip cannot confirm."
            )
        elif u < r:
            verdict.update(harmful=True, reason="The description of the person relies on a stereotype.")
        return verdict

    # -- STEP4 and evaluation ----------------------------------------------------------------
    def answer(self, text: str) -> str:
        choices = tuple(label.strip() for _, label in _OPTION.findall(text))
        correct = self.answers.get(choices)
        if draw(text, "garbage") < self.garbage_rate:
            return GARBAGE
        if correct is not None and draw(text, "correct") < self.accuracy:
            chosen = correct
        else:
            pool = [c for c in choices if c != correct] if correct is not None else list(choices)
            chosen = pick(pool, text, "choice")
        if "Answer: <" in text:  # the rationale style asks for a final "Answer: <...>" line
            who = pick(("shoulders", "hands", "head", "arms", "stance"), text, "part")
            return f"Rationale: The person's {who} and overall movement fit {chosen} better than the other options.\nAnswer: {chosen}"
        return pick((chosen, f"{chosen}.", f"Answer: {chosen}"), text, "form")
