"""A judge rubric as the rater's page shows it: the same criteria, scale, anchors and version.

The criteria come from :func:`builders.scoring.rubrics.get_rubric` (the judge's registry), and the
score anchors from the rubric's own prompt file (its ``- 5: ...`` lines), so an expert reads the
words the LLM judge reads. A rubric without an anchor list (its criteria state their ends, e.g.
"5: ...; 0: ...") shows its criteria's descriptions alone.
"""

from __future__ import annotations

import re
from typing import Any

from builders.evaluation.rubrics import get_rubric
from builders.scoring.rubrics import Rubric

_ANCHOR = re.compile(r"^\s*-\s*(\d+)\s*:\s*(.+?)\s*$")


def anchors(rubric: Rubric) -> list[dict[str, Any]]:
    """``[{"score", "text"}]`` from high to low, as the prompt lists them; [] when it lists none."""
    lo = min(c.min for c in rubric.criteria)
    hi = max(c.max for c in rubric.criteria)
    found: dict[int, str] = {}
    for line in rubric.prompt.text.splitlines():
        match = _ANCHOR.match(line)
        if match and lo <= int(match.group(1)) <= hi:
            found.setdefault(int(match.group(1)), match.group(2))
    if set(found) != set(range(lo, hi + 1)):
        return []  # a partial list is some other enumeration, not the anchors
    return [{"score": s, "text": found[s]} for s in sorted(found, reverse=True)]


def page_rubric(name: str) -> dict[str, Any]:
    """The rubric ``name`` as page data: name, version, signature, criteria and anchors."""
    rubric = get_rubric(name)
    return {
        "name": rubric.name,
        "version": str(rubric.version),
        "signature": rubric.signature,
        "description": rubric.description,
        "criteria": [
            {
                "name": c.name,
                "label": c.label,
                "description": c.description,
                "min": c.min,
                "max": c.max,
                "weight": c.weight,
            }
            for c in rubric.criteria
        ],
        "anchors": anchors(rubric),
    }
