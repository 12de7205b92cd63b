"""MkDocs hook: the pages' generated parts, so that nothing is written twice.

- ``<!-- cli-reference -->`` (docs/cli.md) becomes every ``vqabench`` command's ``--help``, read from
  the argparse parsers themselves (:func:`builders.cli.build_parser`);
- ``<!-- metric-card: NAME -->`` (docs/metrics.md) becomes the metric card ``metrics/NAME/README.md``
  (the file ``evaluate`` shows), without its YAML header and one heading level down.

``mkdocs build --strict`` (``.ci/run``) fails on a marker naming no card.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
_CARD = re.compile(r"<!-- metric-card: (\w+) -->")
WIDTH = "100"  # argparse wraps --help at $COLUMNS: one width, whatever terminal builds the site


def _parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _parsers(sub, (*path, name))
    return found


def cli_reference() -> str:
    from builders.cli import build_parser

    os.environ["COLUMNS"] = WIDTH
    blocks = []
    for path, parser in _parsers(build_parser(), ("vqabench",)):
        level = "#" * min(len(path) + 1, 4)
        blocks.append(f"{level} `{' '.join(path)}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(blocks)


def metric_card(name: str) -> str:
    path = ROOT / "metrics" / name / "README.md"
    if not path.is_file():
        raise ValueError(f"docs: <!-- metric-card: {name} -->: no metric card {path}")
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = text[text.index("\n---\n", 4) + 5 :]
    return re.sub(r"^(#+) ", r"#\1 ", text.strip(), flags=re.MULTILINE) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if "<!-- cli-reference -->" in markdown:
        markdown = markdown.replace("<!-- cli-reference -->", cli_reference())
    return _CARD.sub(lambda m: metric_card(m.group(1)), markdown)
