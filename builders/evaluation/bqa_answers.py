"""Asking a video LLM to answer a BQA question, and reading its reply: STEP4 and evaluation share it.

Two prompt styles, as in the paper: ``single_word`` (the emotion, in one word; STEP4 uses this)
and ``rationale`` (what the body language shows first, then a final ``Answer:`` line). Replies are
plain text, as most VideoLLM servers return, and are read with the project's one answer parser
(:data:`bqa.accuracy.BQA_PARSER`, with the vocabulary's label aliases): it never
guesses, so a reply naming no choice (or two) is *unparsed*, never counted as a choice, and it
says why (``reason``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bqa.accuracy import BQA_PARSER
from builders.llm import LLMRequest
from builders.llm.prompts import Prompt, load_prompt
from builders.runs.frames import Images, decode_images
from builders.scoring.answer_parsing import UNPARSED
from builders.video.frame_spec import FrameSpec
from builders.video.source import SourceLike

STYLES: tuple[str, ...] = ("single_word", "rationale")
#: Expected reply length per style, for cost estimates (a word; a few sentences and the answer).
OUTPUT_TOKENS: dict[str, int] = {"single_word": 4, "rationale": 150}
PROMPTS: dict[str, str] = {"single_word": "bqa_answer_single_word", "rationale": "bqa_answer_rationale"}
LETTERS = "ABCD"
# The last line that declares the answer ("Answer: X", "**Answer:** X") ends the rationale.
_ANSWER_LINE = re.compile(r"^[ \t*_#>]*(?:final\s+)?answer[ \t*_]*[:：]", re.IGNORECASE | re.MULTILINE)
_RATIONALE_LABEL = re.compile(r"^[ \t*_#>]*rationale[ \t*_]*[:：][ \t*_]*", re.IGNORECASE)


def answer_prompt(style: str) -> Prompt:
    if style not in PROMPTS:
        raise ValueError(f"unknown prompt style {style!r}; expected one of {list(STYLES)}")
    return load_prompt(PROMPTS[style])


def format_options(choices: Sequence[str]) -> str:
    """The choices as shown to the model, one per line: ``A. Surprise``."""
    if len(choices) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} choices, got {len(choices)}")
    return "\n".join(f"{letter}. {choice}" for letter, choice in zip(LETTERS, choices, strict=False))


def answer_request(
    question: str,
    choices: Sequence[str],
    video: SourceLike,
    frames: FrameSpec,
    style: str = "single_word",
    metadata: Mapping[str, Any] | None = None,
    images_of: Images = decode_images,
) -> LLMRequest:
    """A request asking for the answer to ``question`` about ``video`` (path or ``{"path","bytes"}``);
    ``images_of`` gives its frames (:mod:`builders.runs.frames`: decoded, cached, or probed)."""
    prompt = answer_prompt(style)
    images = images_of(video, frames)
    variables = {
        "frame_description": frames.describe(frames.frame_count(images)),
        "question": question,
        "options": format_options(choices),
    }
    request = LLMRequest.from_prompt(prompt, variables, images=images, metadata=metadata)
    return replace(request, output_tokens=OUTPUT_TOKENS[style])


@dataclass(frozen=True)
class ReadAnswer:
    """A reply, read: ``answer`` is the chosen choice's text or None (unparsed); ``rationale`` the
    reasoning before the final answer line (rationale style only); ``reason`` the parser's reason
    (:data:`builders.scoring.answer_parsing.REASONS`)."""

    answer: str | None
    rationale: str | None
    reason: str

    @property
    def parsed(self) -> str:
        """The answer, or :data:`~builders.scoring.answer_parsing.UNPARSED`."""
        return UNPARSED if self.answer is None else self.answer


def read_answer(raw: str | None, choices: Sequence[str], style: str = "single_word") -> ReadAnswer:
    """Parse one reply (see the module doc); ``rationale`` is None for the single-word style."""
    if style not in STYLES:
        raise ValueError(f"unknown prompt style {style!r}; expected one of {list(STYLES)}")
    parse = BQA_PARSER.parse(raw, list(choices))
    answer = None if parse.index is None else choices[parse.index]
    if style != "rationale" or raw is None:
        return ReadAnswer(answer, None, parse.reason)
    lines = list(_ANSWER_LINE.finditer(raw))
    text = raw[: lines[-1].start()] if lines else raw
    return ReadAnswer(answer, _RATIONALE_LABEL.sub("", text.strip(), count=1).strip() or None, parse.reason)
