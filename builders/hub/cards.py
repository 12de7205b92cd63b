"""A dataset card's YAML block, read without loading ``datasets``: what a command needs to know about a
folder (is it a bundled sample's release?) while its arguments are checked.

:mod:`builders.hub.layout` writes cards; this module only reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CARD_FILE = "README.md"


def read_card(folder: str | Path) -> tuple[dict[str, Any], str]:
    """Split a folder's README.md into (YAML metadata, Markdown body)."""
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        raise ValueError(f"{folder}: no {CARD_FILE} dataset card")
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ValueError(f"{path}: the card does not start with a YAML block ('---')")
    end = text.find("\n---", 4)
    if end < 0:
        raise ValueError(f"{path}: the card's YAML block is not closed")
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError as err:
        raise ValueError(
            f"{path}: the card's YAML block is not valid YAML ({' '.join(str(err).split())})"
        ) from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: the card's YAML block is not a mapping")
    return meta, text[end + 4 :].lstrip("-\n")
