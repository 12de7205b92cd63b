"""Two harnesses' answer extractors, rewritten from their public source for comparison only.

Not shipped in the package and not used to score anything: ``benchmarks/answer_corpora.py``
measures them beside the project's parser on the hand-labelled corpora. Each function returns the
chosen letter, or None where the harness would leave the reply unmatched (VLMEvalKit then asks a
GPT judge; lmms-eval scores it wrong).

- VLMEvalKit ``vlmeval/utils/matching_util.py::can_infer`` (read at open-compass/VLMEvalKit
  e8e78f05, 2026-08-18): a letter that is the only choice letter among the reply's tokens once
  ``.()[],:;!*#{}`` are blanked, and since PR #1175 (2025-08) only if it is among the last five
  tokens; since PR #1552 (2026-06) else "answer is X"; else the only option text contained in the
  reply, and since #1175 only if the reply is at most twice as long as all option texts together.
  ``before_1175=True`` gives the rules that most published VLMEvalKit numbers were scored with.
- lmms-eval ``lmms_eval/tasks/videomme/utils.py::extract_characters_regex`` (read at
  EvolvingLMMs-Lab/lmms-eval 06965734): delete a few answer prefixes, then take the first capital
  A, B, C or D anywhere in the reply (inside a word too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_BLANKED = str.maketrans(dict.fromkeys(".()[],:;!*#{}", " "))
_DECLINED = (  # VLMEvalKit answers these with "Z" (no option)
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_ANSWER_IS = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


def vlmevalkit_can_infer(
    reply: str | None, choices: Mapping[str, str | None], *, before_1175: bool = False
) -> str | None:
    """``choices``: letter -> option text (None where the text is unknown: letters only)."""
    reply = "" if reply is None else str(reply)
    if "Failed to obtain answer via API" in reply or any(s in reply for s in _DECLINED):
        return None
    tokens = reply.translate(_BLANKED).split()
    named = [c for c in choices if c in tokens]
    if len(named) == 1:
        (letter,) = named
        if before_1175 or tokens.index(letter) > len(tokens) - 5:
            return letter
    elif not named and "Z" in tokens:
        return None
    if not before_1175:
        m = _ANSWER_IS.search(reply)
        if m and m.group(1).upper() in choices:
            return m.group(1).upper()
    texts = {c: str(t).lower() for c, t in choices.items() if t is not None}
    if not texts:
        return None
    if not before_1175 and len(reply) > 2 * sum(len(t) for t in texts.values()):
        return None
    found = [c for c, t in texts.items() if t in reply.lower()]
    return found[0] if len(found) == 1 else None


# The prefixes lmms-eval deletes. Two pairs lack a comma in its source and so are concatenated.
_LMMS_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",
    "Best answer:Best option:",
)
_ABCD = re.compile(r"[ABCD]")


def lmms_eval_extract(reply: str | None) -> str | None:
    text = "" if reply is None else str(reply).strip()
    for prefix in _LMMS_PREFIXES:
        text = text.replace(prefix, "")
    m = _ABCD.search(text)
    return m.group() if m else None
