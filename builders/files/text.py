"""Counts in messages and reports, worded right: "1 film", "2 films" (never "1 films")."""

from __future__ import annotations


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``"<n> <word>"`` with the word in the number it takes (``plural_form`` for irregular words)."""
    return f"{n} {singular if n == 1 else plural_form or singular + 's'}"
