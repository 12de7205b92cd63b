"""Mechanical checks of LLM-written text: caption shape, "does it name X", "are these the same option".

Each check returns problems as short sentences (empty: fine). They are sent back to the model in a
re-ask, so they say what is wrong and what is wanted. One implementation serves the captioner, the
refiner and the QA generation; the word matching under them is :mod:`builders.scoring.phrases`.
"""

from __future__ import annotations

from builders.scoring.phrases import head_noun, normalized, stem, words
from marinelife16k.vocabulary import MAX_CAPTION_WORDS

# Words that open a noun phrase: an option starting with one names a subject.
_DETERMINERS = frozenset(
    "a an the another other some several two three four many few this that these those".split()
)


def caption_problems(caption: str) -> list[str]:
    """A caption must be one line of fewer than :data:`MAX_CAPTION_WORDS` words."""
    text = caption.strip()
    if not text:
        return ["the caption is empty"]
    problems = []
    count = len(text.split())
    if count >= MAX_CAPTION_WORDS:
        problems.append(f"the caption has {count} words; write fewer than {MAX_CAPTION_WORDS}")
    if "\n" in text:
        problems.append("the caption spans several lines; write one sentence on one line")
    return problems


def option_problems(name: str, answer: str, options: list[str]) -> list[str]:
    """Distractors of one question: non-empty, none equal to the answer, none equal to another."""
    problems = []
    seen: dict[str, int] = {}
    for i, option in enumerate(options, start=1):
        key = normalized(option)
        if not key:
            problems.append(f"{name} distractor {i} is empty")
        elif key == normalized(answer):
            problems.append(f"{name} distractor {i} ({option!r}) is the correct answer; write a wrong option")
        elif key in seen:
            problems.append(
                f"{name} distractors {seen[key]} and {i} are the same ({option!r}); make them differ"
            )
        else:
            seen[key] = i
    return problems


def foreign_subject(option: str, central_object: str, other_objects: list[str]) -> str | None:
    """The subject an option about the central object's movement gives to something else, if any.

    Options are verb phrases ("resting in a crevice") or name the central object ("the eel resting").
    Flagged: an option that starts with another annotated object, or with a noun phrase (a
    determiner) whose first five words do not contain the central object's head noun
    ("a reef shark circling"). A check, not a parser: it catches the common way of breaking the rule.
    """
    lead = words(option)
    for other in other_objects:
        other_words = words(other)
        start = lead[1:] if lead[:1] and lead[0] in _DETERMINERS else lead
        if other_words and start[: len(other_words)] == other_words:
            return other
    if lead and lead[0] in _DETERMINERS:
        head = head_noun(central_object)
        if head not in {stem(w) for w in lead[:5]}:
            return " ".join(lead[:4])
    return None
