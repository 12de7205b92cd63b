"""What ``vqabench serve`` answers: every request the project's commands send, by the responder that knows it.

The BQA pipeline's generator and filter (:class:`~.bqa_responder.BQAResponder`), the MarineLife-16K
caption engine and QA generation (:class:`~.marinelife_responder.MarineLifeResponder`), the judge's
MarineLife-16K rubrics (:class:`~.baseline_responder.ScriptedJudge`), and as a VideoLLM: BQA answer
prompts by :meth:`BQAResponder.answer` (a choice drawn from the prompt's hash), MarineLife-16K
questions by a drawn option letter or a plain sentence. Any other structured request (a custom rubric,
a new step) gets a value valid against its schema. A bound request's reply names its ``item_id``
(copied from the request's ``Item id:`` line), so the item binding accepts it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from builders.scripted.baseline_responder import CAPTION_SCHEMA, OEMU_SCHEMA, ScriptedJudge
from builders.scripted.bqa_responder import (
    FILTER_SCHEMA,
    QUESTION_SCHEMA,
    BQAResponder,
    first_user_text,
    is_answer_prompt,
    pick,
    schema_name,
)
from builders.scripted.chat_requests import response_schema, with_item_id
from builders.scripted.marinelife_responder import DRAFT, QA, REFINE, REVIEW, MarineLifeResponder
from builders.scripted.schema_examples import example_for_schema

_LETTERED = re.compile(r"\(([A-H])\)")
CAPTION = (
    "A small reef fish swims slowly over a coral reef in clear blue water under natural light, "
    "filmed as a medium shot with the camera level and still."
)
ANSWER = "The central animal moves slowly across the frame while the camera stays level and follows it."


class ServedModel:
    """``model(body)`` -> the reply content: a ``str`` or a JSON value (see the module doc)."""

    def __init__(self) -> None:
        self.bqa = BQAResponder()
        self.marine = MarineLifeResponder()
        self.judge = ScriptedJudge()

    def __call__(self, body: Mapping[str, Any]) -> Any:
        name = schema_name(body)
        if name in (QUESTION_SCHEMA, FILTER_SCHEMA):
            return self.bqa(body)
        if name in (DRAFT, REVIEW, REFINE, QA):
            return with_item_id(body, self.marine(body))
        if name in (OEMU_SCHEMA, CAPTION_SCHEMA):
            return with_item_id(body, self.judge(body))
        schema = response_schema(body)
        if schema is not None:
            return with_item_id(body, example_for_schema(schema))
        text = first_user_text(body)
        if is_answer_prompt(text):
            return self.bqa.answer(text)
        letters = _LETTERED.findall(text)
        if letters:
            return pick(letters, text, "letter")
        return CAPTION if "caption" in text.lower() else ANSWER
