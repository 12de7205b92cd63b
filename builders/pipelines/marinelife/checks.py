"""Mechanical checks of LLM-written text: caption shape, "does it name X", "are these the same option".

Each check returns problems as short sentences (empty: fine). They are sent back to the model in a
re-ask, so they say what is wrong and what is wanted. One implementation serves the refiner, the QA
generation and the scripted test responder.
"""

from __future__ import annotations

import re

MAX_CAPTION_WORDS = 80  # the paper: "fewer than 80 words"

# Words that carry no identity in an object name ("school of bigeye trevally" -> school, bigeye, trevally).
_FUNCTION_WORDS = frozenset(
    "a an the of and or with in on at to from by for its it their this that some".split()
)
# Words that open a noun phrase: an option starting with one names a subject.
_DETERMINERS = frozenset(
    "a an the another other some several two three four many few this that these those".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def normalized(text: str) -> str:
    """Case-, space- and end-punctuation-insensitive form: what makes two options "the same"."""
    return " ".join(text.casefold().split()).strip(" .;,:!")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _stem(word: str) -> str:
    # Enough plural folding for names: trevallies/trevally, fishes/fish, eels/eel, glass stays glass.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(phrase: str) -> list[str]:
    """The stemmed words of ``phrase`` that identify it (function words dropped)."""
    return [_stem(w) for w in words(phrase) if w not in _FUNCTION_WORDS]


def mentions(text: str, phrase: str) -> bool:
    """True when every identifying word of ``phrase`` occurs in ``text`` (plurals folded)."""
    needed = content_words(phrase)
    present = {_stem(w) for w in words(text)}
    return bool(needed) and all(w in present for w in needed)


def head_noun(phrase: str) -> str:
    """The last identifying word of a name ("giant moray eel" -> "eel"), stemmed."""
    found = content_words(phrase)
    return found[-1] if found else ""


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
        if head not in {_stem(w) for w in lead[:5]}:
            return " ".join(lead[:4])
    return None
