"""Matching short English phrases word by word: the form that makes two options "the same", the
words that identify a name (plurals folded), and "does this text mention that phrase".

Generic text rules with no dataset in them: the MarineLife-16K pipeline's checks use them on LLM
replies, and the scripted test responders use them to write replies that pass or fail on purpose.
"""

from __future__ import annotations

import re

# Words that carry no identity in an object name ("school of bigeye trevally" -> school, bigeye, trevally).
_FUNCTION_WORDS = frozenset(
    "a an the of and or with in on at to from by for its it their this that some".split()
)
_WORD = re.compile(r"[a-z0-9]+")


def normalized(text: str) -> str:
    """Case-, space- and end-punctuation-insensitive form: what makes two options "the same"."""
    return " ".join(text.casefold().split()).strip(" .;,:!")


def words(text: str) -> list[str]:
    """The lower-case runs of letters and digits of ``text``."""
    return _WORD.findall(text.casefold())


def stem(word: str) -> str:
    """Enough plural folding for names: trevallies/trevally, fishes/fish, eels/eel, glass stays glass."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(phrase: str) -> list[str]:
    """The stemmed words of ``phrase`` that identify it (function words dropped)."""
    return [stem(w) for w in words(phrase) if w not in _FUNCTION_WORDS]


def mentions(text: str, phrase: str) -> bool:
    """True when every identifying word of ``phrase`` occurs in ``text`` (plurals folded)."""
    needed = content_words(phrase)
    present = {stem(w) for w in words(text)}
    return bool(needed) and all(w in present for w in needed)


def head_noun(phrase: str) -> str:
    """The last identifying word of a name ("giant moray eel" -> "eel"), stemmed."""
    found = content_words(phrase)
    return found[-1] if found else ""
