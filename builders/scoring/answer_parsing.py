"""From a model's raw reply to one of the offered choices, or to nothing.

One parser serves every multiple-choice metric. It accepts an option letter or the option text,
ignores markdown, code fences and ``<think>`` blocks, prefers the *last* explicit declaration
("the answer is C", "Answer: C", "I would choose C", "C is correct", ``\\boxed{C}``), and otherwise
takes the only option the reply names. It never guesses: a reply that names two different options
without a declaration, declares two at once ("B or C"), or ends on a negated declaration ("the
answer is not A") is unparsed, and an unparsed answer is scored as wrong and reported.

Matching is whole-word and case-insensitive for option texts ("surprise" matches ``Surprise``,
"surprised" does not). Letters are recognised in answer positions ("C", "(C)", "option C", after a
declaration); a capital "A" followed by an ordinary word is read as the English article
("A man is walking away") rather than as option A.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from string import ascii_uppercase

UNPARSED = "unparsed"
_AMBIGUOUS = -1  # a declaration naming two options at once
_NEGATED = -2  # "the answer is not A": says what the answer is not, so nothing is chosen
_NEVER = re.compile(r"(?!)")

# --- cleaning ---------------------------------------------------------------------------------------
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?([^{}]*)\}?\s*\}")
_TAG = re.compile(r"</?[A-Za-z][\w-]*\s*>")
_FENCE = re.compile(r"```[\w+-]*")
_EMPHASIS = re.compile(r"\*+|`+|~~|(?<!\w)_+|_+(?!\w)")
_LINE_MARKUP = re.compile(r"^[ \t]*(?:#+|>+|[-+•][ \t])[ \t]*", re.MULTILINE)


def clean_reply(text: str) -> str:
    """Drop reasoning blocks, markdown and fences; rewrite ``\\boxed{X}`` as a declaration."""
    text = _THINK.sub(" ", text)
    text = _BOXED.sub(lambda m: f" Answer: {m.group(1)} \n", text)
    text = _TAG.sub(" ", text)
    text = _FENCE.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    return _LINE_MARKUP.sub("", text)


# --- declarations -----------------------------------------------------------------------------------
_FORWARD_DECLARATION = re.compile(
    r"\banswer[\"']?\s*[:=]"
    r"|\banswer\s+(?:is(?:n['’]t)?|would\s+be|will\s+be|should\s+be|must\s+be|seems\s+to\s+be|appears\s+to\s+be)\b\s*:?"
    r"|\b(?:correct|right|best|final)\s+(?:option|choice|letter|emotion|label)\s+(?:is|would\s+be)\b\s*:?"
    r"|\bI\s*(?:would\s+|will\s+|'d\s+|’d\s+)?(?:choose|pick|select|go\s+with)\b\s*:?",
    re.IGNORECASE,
)
_BACKWARD_DECLARATION = re.compile(
    r"\s+is\s+(?:the\s+)?(?:correct|right|best|answer)\b",
    re.IGNORECASE,
)
# Between a declaration and its target: quotes, brackets, and words like "option".
_TARGET_LEAD = re.compile(r"[\s\"'“”‘’(\[]*(?:(?:the\s+)?(?:option|choice|letter)\s+)?", re.IGNORECASE)
_NEGATION = re.compile(r"not\b", re.IGNORECASE)
# A target followed by another option in one breath is a double answer ("B or C", "C (Anger)").
_FOLLOW_ANY = re.compile(
    r"\s*(?:,?\s*(?:or|and|nor|vs\.?|versus)\s+|/\s*|\(\s*)(?:(?:option|choice)\s+)?", re.IGNORECASE
)
_FOLLOW_TEXT_AFTER_LETTER = re.compile(r"\s*(?:[.):\-–—]\s*)?")

# Words after a capital "A" that make it the option letter rather than the article.
_LETTER_A_FOLLOWERS = frozenset(
    "or and nor but vs versus because since is was seems looks appears fits matches would could might may "
    "can then best".split()
)


def _normalize_option(text: str) -> str:
    return " ".join(text.split()).rstrip(".").strip()


class _Matcher:
    """The options of one item, compiled once; :meth:`parse` maps a reply to an option index."""

    def __init__(self, options: tuple[str, ...] | None, letters: tuple[str, ...] | None):
        if options is None and not letters:
            raise ValueError("give the option texts, the option letters, or both")
        n = len(options) if options is not None else len(letters)  # type: ignore[arg-type]
        if letters is None:
            letters = tuple(ascii_uppercase[:n])
        if letters and len(letters) != n:
            raise ValueError(f"{len(letters)} letters for {n} options")
        self.letters = tuple(s.upper() for s in letters)
        if any(len(s) != 1 or not s.isalpha() for s in self.letters) or len(set(self.letters)) != len(
            letters
        ):
            raise ValueError(f"option letters must be distinct single letters, got {list(letters)}")
        self.text_patterns: list[re.Pattern[str]] = []
        if options is not None:
            normalized = [_normalize_option(str(o)) for o in options]
            if any(not o for o in normalized):
                raise ValueError(f"empty option text in {list(options)}")
            if len({o.casefold() for o in normalized}) != n:
                raise ValueError(f"option texts must be distinct, got {list(options)}")
            for option in normalized:
                body = r"\s+".join(re.escape(word) for word in option.split())
                self.text_patterns.append(re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE))
        if not self.letters:  # option texts only
            self.target_letter = self.free_letter = _NEVER
            return
        letter_class = "".join(self.letters)
        lower_class = letter_class.lower()
        # A letter where an answer is expected: right after a declaration. Lower case only when
        # nothing follows it ("answer: b."), so "the answer is a bit unclear" names nothing.
        self.target_letter = re.compile(
            rf"\(?([{letter_class}])\)?(?![\w'’])|\(?([{lower_class}])\)?(?=\s*(?:[.)\]:,;!?]|$))"
        )
        # A letter anywhere else: only in forms that cannot be ordinary words.
        self.free_letter = re.compile(
            rf"[(\[]([{letter_class}{lower_class}])[)\]]"
            rf"|\b(?i:option|choice|letter)\s+([{letter_class}{lower_class}])(?![\w'’])"
            rf"|(?<![\w'’\-])([{letter_class}])(?![\w'’\-])"
        )

    def _text_mentions(self, text: str) -> list[tuple[int, int, int]]:
        """(start, end, option index) of every option text in ``text``."""
        found = [(m.start(), m.end(), i) for i, p in enumerate(self.text_patterns) for m in p.finditer(text)]
        # "reef fish" inside "small reef fish" names the longer option only.
        return [
            a
            for a in found
            if not any(
                b[2] != a[2] and b[0] <= a[0] and a[1] <= b[1] and b[1] - b[0] > a[1] - a[0] for b in found
            )
        ]

    def _mentions(self, text: str, texts: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Option texts plus letters in unmistakable forms, in reading order."""
        letters = []
        for m in self.free_letter.finditer(text):
            group = next(g for g in (1, 2, 3) if m.group(g))
            start, end = m.span(group)
            letter = m.group(group).upper()
            if group == 3 and letter == "A":
                follower = re.match(r"\s+([A-Za-z]+)", text[end:])
                if follower and follower.group(1).lower() not in _LETTER_A_FOLLOWERS:
                    continue  # the article: "A man is walking away"
            if any(s <= start and end <= e for s, e, _ in texts):
                continue  # a capital letter inside an option's own text
            letters.append((start, end, self.letters.index(letter)))
        return sorted(texts + letters)

    def _target_at(
        self, text: str, pos: int, texts: list[tuple[int, int, int]]
    ) -> tuple[int, int, bool] | None:
        """(index, end, is_letter) of the option named exactly at ``pos``."""
        for s, e, i in texts:
            if s == pos:
                return i, e, False
        m = self.target_letter.match(text, pos)
        if m:
            return self.letters.index((m.group(1) or m.group(2)).upper()), m.end(), True
        return None

    def _declared_at(
        self, text: str, pos: int, texts: list[tuple[int, int, int]], negated: bool = False
    ) -> int | None:
        """Index declared at ``pos``; ``_AMBIGUOUS`` / ``_NEGATED``; None if nothing is named."""
        pos = _TARGET_LEAD.match(text, pos).end()
        if _NEGATION.match(text, pos):
            negated, pos = True, _TARGET_LEAD.match(text, _NEGATION.match(text, pos).end()).end()
        first = self._target_at(text, pos, texts)
        if first is None:
            return None
        index, end, is_letter = first
        follow = _FOLLOW_ANY.match(text, end)
        second = self._target_at(text, follow.end(), texts) if follow else None
        if second is None and is_letter:
            # "B. Surprise", "B) Surprise": a letter and then an option text.
            after = _FOLLOW_TEXT_AFTER_LETTER.match(text, end).end()
            second = next(((i, e, False) for s, e, i in texts if s == after), None)
        if negated:
            return _NEGATED
        if second is not None and second[0] != index:
            return _AMBIGUOUS
        return index

    def parse(self, reply: str | None) -> int | None:
        if reply is None:
            return None
        text = clean_reply(str(reply))
        bare = text.strip(" \t\r\n\"'“”‘’.()[]:!")
        if len(bare) == 1 and bare.upper() in self.letters:
            return self.letters.index(bare.upper())
        texts = self._text_mentions(text)
        mentions = self._mentions(text, texts)
        declared: list[tuple[int, int]] = []
        for m in _FORWARD_DECLARATION.finditer(text):
            negated = m.group().rstrip(" \t\n:").lower().endswith(("n't", "n’t"))
            index = self._declared_at(text, m.end(), texts, negated)
            if index is not None:
                declared.append((m.start(), index))
        declared += [(s, i) for s, e, i in mentions if _BACKWARD_DECLARATION.match(text, e)]
        if declared:
            _, index = max(declared, key=lambda d: d[0])  # the last declaration wins
            return None if index in (_AMBIGUOUS, _NEGATED) else index
        named = {i for _, _, i in mentions}
        return named.pop() if len(named) == 1 else None


@lru_cache(maxsize=4096)
def _matcher(options: tuple[str, ...] | None, letters: tuple[str, ...] | None) -> _Matcher:
    return _Matcher(options, letters)


def parse_choice(
    reply: str | None, options: Sequence[str] | None = None, letters: Sequence[str] | None = None
) -> int | None:
    """Index of the option a reply chooses, or None when it names none or is ambiguous.

    ``options`` are the option texts in order; ``letters`` the labels shown with them (default
    "A", "B", ... one per option; ``()`` for texts only). With ``options=None`` only letters count.
    """
    return _matcher(
        None if options is None else tuple(options), None if letters is None else tuple(letters)
    ).parse(reply)


def parse_answer(reply: str | None, choices: Sequence[str], letters: Sequence[str] | None = None) -> str:
    """The chosen option's text, or :data:`UNPARSED`."""
    index = parse_choice(reply, choices, letters)
    return UNPARSED if index is None else choices[index]


def mentioned_options(text: str | None, options: Sequence[str]) -> set[int]:
    """Indices of the option texts that ``text`` names as whole words (letters are not counted)."""
    if not text:
        return set()
    return {i for _, _, i in _matcher(tuple(options), ())._text_mentions(clean_reply(text))}
