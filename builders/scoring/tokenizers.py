"""Tokenizers for text metrics, by name; none of them needs a download.

``nltk.word_tokenize`` would need the punkt data package, so "nltk" is its word-level part,
``NLTKWordTokenizer`` (Treebank rules, no sentence splitting). "13a" is sacrebleu's mteval-v13a
tokenizer, "whitespace" plain ``str.split``.
"""

from __future__ import annotations

from collections.abc import Callable


class Tokenizer:
    """A named text -> tokens function; the name goes into metric signatures."""

    name: str = ""

    def __call__(self, text: str) -> list[str]:
        raise NotImplementedError


class NLTKTokenizer(Tokenizer):
    name = "nltk"

    def __init__(self) -> None:
        from nltk.tokenize import NLTKWordTokenizer  # imported on use: nltk takes a second to import

        self._tokenize = NLTKWordTokenizer().tokenize

    def __call__(self, text: str) -> list[str]:
        return self._tokenize(text)


class Tokenizer13a(Tokenizer):
    name = "13a"

    def __init__(self) -> None:
        from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a as _Sacrebleu13a

        self._tokenize = _Sacrebleu13a()

    def __call__(self, text: str) -> list[str]:
        return self._tokenize(text).split()


class WhitespaceTokenizer(Tokenizer):
    name = "whitespace"

    def __call__(self, text: str) -> list[str]:
        return text.split()


TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    t.name: t for t in (NLTKTokenizer, Tokenizer13a, WhitespaceTokenizer)
}


def get_tokenizer(name: str) -> Tokenizer:
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}")
    return TOKENIZERS[name]()
