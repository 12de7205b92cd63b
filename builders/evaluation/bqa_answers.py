"""Asking a video LLM to answer a BQA question, and reading its reply: STEP4 and evaluation share it.

The evaluation styles, one registry (:data:`STYLES`), each named for what it does:

- ``single_word`` (the paper's main setting; STEP4 uses it too): the frames, the question and the
  four choices; the answer in one word.
- ``multimodal_cot`` (the paper's CoT column, Multimodal CoT after Zhang et al. 2024b, as BQA ran it,
  A.7): two requests per item. Stage 1 gets the frames, the question, the choices **and the correct
  answer** and writes a rationale; stage 2 gets the frames, the question, the choices and that
  rationale and answers in one word. Stage 1 knows the answer, so its rationale often gives it away:
  the paper's 0.92-0.98 CoT scores rest on that. Every record and report marks it answer-leaking.
- ``multimodal_cot_no_answer``: the same two stages, stage 1 *not* given the answer (a rationale from
  the frames, question and choices alone): the two-stage pipeline without the leak.
- ``reason_then_answer``: one request, "reason first, then a final ``Answer:`` line" (zero-shot
  chain of thought). Not the paper's CoT.

Replies are plain text, as most VideoLLM servers return, and are read with the project's one answer
parser (:data:`bqa.accuracy.BQA_PARSER`, with the vocabulary's label aliases): it never guesses, so a
reply naming no choice (or two) is *unparsed*, never counted as a choice, and it says why (``reason``).
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

SINGLE_WORD, MULTIMODAL_COT, MULTIMODAL_COT_NO_ANSWER, REASON_THEN_ANSWER = (
    "single_word", "multimodal_cot", "multimodal_cot_no_answer", "reason_then_answer",
)  # fmt: skip
LETTERS = "ABCD"
# The last line that declares the answer ("Answer: X", "**Answer:** X") ends the rationale.
_ANSWER_LINE = re.compile(r"^[ \t*_#>]*(?:final\s+)?answer[ \t*_]*[:：]", re.IGNORECASE | re.MULTILINE)
_RATIONALE_LABEL = re.compile(r"^[ \t*_#>]*rationale[ \t*_]*[:：][ \t*_]*", re.IGNORECASE)


@dataclass(frozen=True)
class Style:
    """One evaluation style. ``prompt``: the request that gets the answer (stage 2 of a two-stage
    style); ``rationale_prompt``: stage 1 (None: one request); ``answer_to_rationale``: stage 1 sees the
    correct answer (the answer may leak); ``reply_rationale``: the answer's reply holds a rationale
    before its ``Answer:`` line; ``output_tokens``: expected reply lengths (answer, rationale), for
    cost estimates."""

    name: str
    summary: str
    prompt: str
    rationale_prompt: str | None = None
    answer_to_rationale: bool = False
    reply_rationale: bool = False
    paper: str | None = None  # where the paper uses it
    output_tokens: tuple[int, int] = (4, 0)

    @property
    def two_stage(self) -> bool:
        return self.rationale_prompt is not None

    @property
    def answer_leaking(self) -> bool:
        """Stage 1 was given the correct answer: scores are not the model's own (the paper's caveat)."""
        return self.answer_to_rationale


STYLES: dict[str, Style] = {
    s.name: s
    for s in (
        Style(
            SINGLE_WORD,
            "frames, question and 4 choices; the answer in one word",
            "bqa_answer_single_word",
            paper="Table 1 and Table 4 (and STEP4)",
        ),
        Style(
            MULTIMODAL_COT,
            "two requests: stage 1 gets frames, question, choices AND the correct answer and writes a "
            "rationale; stage 2 answers in one word given that rationale (answer-leaking)",
            "bqa_cot_answer",
            rationale_prompt="bqa_cot_rationale",
            answer_to_rationale=True,
            paper="Table 1, Test (CoT): Multimodal CoT (Zhang et al. 2024b), A.7",
            output_tokens=(4, 150),
        ),
        Style(
            MULTIMODAL_COT_NO_ANSWER,
            "the same two stages, but stage 1 is not given the correct answer",
            "bqa_cot_answer",
            rationale_prompt="bqa_cot_rationale_no_answer",
            output_tokens=(4, 150),
        ),
        Style(
            REASON_THEN_ANSWER,
            "one request: a short rationale, then a final 'Answer:' line (zero-shot CoT, not the paper's)",
            "bqa_answer_rationale",
            reply_rationale=True,
            output_tokens=(150, 0),
        ),
    )
}
ANSWER_LEAK_NOTE = (
    "answer-leaking: stage 1 was given the correct answer (the paper's Multimodal CoT), so its rationale "
    "can give the answer away; not comparable with plain scores"
)


def get_style(name: str) -> Style:
    """The style called ``name``."""
    if name not in STYLES:
        raise ValueError(f"unknown style {name!r}; expected one of {list(STYLES)}")
    return STYLES[name]


def answer_prompt(style: str) -> Prompt:
    """The prompt that asks for the answer in ``style`` (stage 2 of a two-stage style)."""
    return load_prompt(get_style(style).prompt)


def format_options(choices: Sequence[str]) -> str:
    """The choices as shown to the model, one per line: ``A. Surprise``."""
    if len(choices) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} choices, got {len(choices)}")
    return "\n".join(f"{letter}. {choice}" for letter, choice in zip(LETTERS, choices, strict=False))


def _request(
    prompt: Prompt, frames: FrameSpec, images: Sequence[str], output_tokens: int, **variables: Any
) -> LLMRequest:
    variables = {"frame_description": frames.describe(frames.frame_count(list(images))), **variables}
    # The frames travel with the request (metadata is not part of the cache key), so a later stage of
    # the same item shows the very same frames without decoding the clip again.
    request = LLMRequest.from_prompt(prompt, variables, images=images, metadata={"images": list(images)})
    return replace(request, output_tokens=output_tokens)


def answer_request(
    question: str,
    choices: Sequence[str],
    video: SourceLike,
    frames: FrameSpec,
    style: str = SINGLE_WORD,
    metadata: Mapping[str, Any] | None = None,
    images_of: Images = decode_images,
) -> LLMRequest:
    """The first request for ``question`` about ``video`` (path or ``{"path","bytes"}``) in ``style``:
    the answer itself, or, for a two-stage style, stage 1 (:func:`rationale_request`'s). ``images_of``
    gives its frames (:mod:`builders.runs.frames`: decoded, cached, or probed)."""
    s = get_style(style)
    images = list(images_of(video, frames))
    if s.two_stage:
        raise ValueError(f"style {s.name!r} asks in two stages: use rationale_request, then stage2_request")
    request = _request(
        load_prompt(s.prompt), frames, images, s.output_tokens[0],
        question=question, options=format_options(choices),
    )  # fmt: skip
    return replace(request, metadata={**request.metadata, **(metadata or {})})


def rationale_request(
    question: str,
    choices: Sequence[str],
    answer: str,
    video: SourceLike,
    frames: FrameSpec,
    style: str,
    images_of: Images = decode_images,
) -> LLMRequest:
    """Stage 1 of a two-stage style: the rationale (``answer`` is shown only when the style says so)."""
    s = get_style(style)
    if not s.two_stage:
        raise ValueError(f"style {s.name!r} has no rationale stage")
    images = list(images_of(video, frames))
    variables: dict[str, Any] = {"question": question, "options": format_options(choices)}
    if s.answer_to_rationale:
        variables["answer"] = answer
    return _request(load_prompt(s.rationale_prompt or ""), frames, images, s.output_tokens[1], **variables)


def stage2_request(
    stage1: LLMRequest, rationale: str, question: str, choices: Sequence[str], frames: FrameSpec, style: str
) -> LLMRequest:
    """Stage 2 of a two-stage style: the answer, given stage 1's rationale, over stage 1's own frames
    (taken from its request: one decode serves both stages)."""
    s = get_style(style)
    images = stage1.metadata["images"]
    return _request(
        load_prompt(s.prompt), frames, images, s.output_tokens[0],
        question=question, options=format_options(choices), rationale=rationale.strip(),
    )  # fmt: skip


@dataclass(frozen=True)
class ReadAnswer:
    """A reply, read: ``answer`` is the chosen choice's text or None (unparsed); ``rationale`` the
    reasoning before the final answer line (``reason_then_answer`` only); ``reason`` the parser's
    reason (:data:`builders.scoring.answer_parsing.REASONS`)."""

    answer: str | None
    rationale: str | None
    reason: str

    @property
    def parsed(self) -> str:
        """The answer, or :data:`~builders.scoring.answer_parsing.UNPARSED`."""
        return UNPARSED if self.answer is None else self.answer


def read_answer(raw: str | None, choices: Sequence[str], style: str = SINGLE_WORD) -> ReadAnswer:
    """Parse one answer reply (see the module doc); ``rationale`` is read from the reply only in the
    ``reason_then_answer`` style (a two-stage style's rationale is stage 1's reply)."""
    s = get_style(style)
    parse = BQA_PARSER.parse(raw, list(choices))
    answer = None if parse.index is None else choices[parse.index]
    if not s.reply_rationale or raw is None:
        return ReadAnswer(answer, None, parse.reason)
    lines = list(_ANSWER_LINE.finditer(raw))
    text = raw[: lines[-1].start()] if lines else raw
    return ReadAnswer(answer, _RATIONALE_LABEL.sub("", text.strip(), count=1).strip() or None, parse.reason)
