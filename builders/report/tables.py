"""Markdown tables and the number formats every report shares.

A rate is printed with its interval as ``0.800 [0.376, 0.964]``; a missing value (a group with no
items, a model without that result) as an en dash, never as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MISSING = "–"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]], align: str | None = None) -> str:
    """A GitHub-flavoured Markdown table; ``align`` is one letter per column (``l``, ``r``, ``c``).

    By default the first column is left-aligned and the others right-aligned (numbers).
    """
    width = len(header)
    if any(len(row) != width for row in rows):
        raise ValueError(f"every row needs {width} cells: {[len(r) for r in rows]}")
    align = align or "l" + "r" * (width - 1)
    if len(align) != width or set(align) - set("lrc"):
        raise ValueError(f"align needs one of l/r/c per column, got {align!r} for {width} columns")
    rule = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(_cell(h) for h in header) + " |",
        "| " + " | ".join(rule[a] for a in align) + " |",
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(value: object) -> str:
    text = MISSING if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def fmt_number(value: float | None, digits: int = 3) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def fmt_rate(value: float | None, ci: Sequence[float] | None, digits: int = 3) -> str:
    """``value [low, high]``; the interval is left out when there is none."""
    if value is None:
        return MISSING
    if ci is None:
        return fmt_number(value, digits)
    return f"{value:.{digits}f} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def fmt_p_value(p: float | None) -> str:
    if p is None:
        return MISSING
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def parse_reasons_table(reasons: Mapping[str, Mapping[str, int]], signature: str) -> list[str]:
    """Why replies were read as they were, one column per model (``reasons``: model -> reason counts)."""
    order = list(dict.fromkeys(r for counts in reasons.values() for r in counts))
    rows = [[r, *(counts.get(r, 0) for counts in reasons.values())] for r in order]
    note = (
        f"Replies are read by the answer parser `{signature}`; numbers from another parser version "
        "are not comparable. Unparsed replies (ambiguous, no_option, negated_only, empty) count as wrong."
    )
    return [note, markdown_table(["Reason", *reasons], rows)]
