"""The prompt registry: every prompt the pipelines and judges send is a file in this folder.

A prompt is ``builders/llm/prompts/<name>.md``: YAML front matter, then the template text::

    ---
    name: bqa_question          # must equal the file name
    version: 1                  # bump on ANY change of the text: it is part of the LLM cache key
    description: One line on what the prompt asks for.
    ---
    Write one question about the person in these {{ n_frames }} frames ...

Variables are ``{{ name }}`` (letters, digits, underscores). Rendering is strict both ways: a
variable the template uses but the caller omits, or one the caller passes that the template never
uses, is an error. Any other braces (JSON examples) are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

PROMPT_DIR = Path(__file__).parent
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NAME = re.compile(r"[a-z0-9][a-z0-9_\-]*")


@dataclass(frozen=True)
class Prompt:
    """One versioned prompt template. ``name`` and ``version`` go into the LLM cache key."""

    name: str
    version: str
    text: str
    description: str = ""

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(_VARIABLE.findall(self.text))

    def render(self, **variables: Any) -> str:
        """The text with every ``{{ var }}`` replaced by ``str(value)``; strict (see module doc)."""
        missing = self.variables - variables.keys()
        unused = variables.keys() - self.variables
        if missing or unused:
            raise ValueError(
                f"prompt {self.name!r} (version {self.version}): "
                + "; ".join(
                    part
                    for part in (
                        f"missing variables {sorted(missing)}" if missing else "",
                        f"unknown variables {sorted(unused)}" if unused else "",
                    )
                    if part
                )
                + f" (it uses {sorted(self.variables)})"
            )
        return _VARIABLE.sub(lambda m: str(variables[m.group(1)]), self.text)

    @property
    def ref(self) -> tuple[str, str]:
        return (self.name, self.version)


def parse_prompt(text: str, source: str = "<string>") -> Prompt:
    """A :class:`Prompt` from a file's contents; errors name ``source``."""
    match = re.match(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?\n?(.*)\Z", text, re.DOTALL)
    if match is None:
        raise ValueError(f"{source}: a prompt file starts with YAML front matter between '---' lines")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{source}: front matter is not valid YAML: {err}") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{source}: front matter must be a mapping")
    unknown = meta.keys() - {"name", "version", "description"}
    missing = {"name", "version"} - meta.keys()
    if unknown or missing:
        raise ValueError(f"{source}: front matter needs name and version (optional description); "
                         f"missing {sorted(missing)}, unknown {sorted(unknown)}")  # fmt: skip
    name, version = str(meta["name"]), str(meta["version"])
    if not _NAME.fullmatch(name):
        raise ValueError(f"{source}: prompt name {name!r} must be lower-case letters, digits, '_' or '-'")
    body = match.group(2).strip("\n")
    if not body.strip():
        raise ValueError(f"{source}: prompt {name!r} has no text")
    return Prompt(name=name, version=version, text=body, description=str(meta.get("description", "")))


def load_prompt(name: str, directory: str | Path | None = None) -> Prompt:
    """The prompt ``<directory>/<name>.md`` (default: this package's folder)."""
    return _load(name, str(Path(directory) if directory is not None else PROMPT_DIR))


@cache
def _load(name: str, directory: str) -> Prompt:
    path = Path(directory) / f"{name}.md"
    if not _NAME.fullmatch(name) or not path.is_file():
        known = ", ".join(list_prompts(directory)) or "none"
        raise FileNotFoundError(f"no prompt {name!r} at {path} (known prompts: {known})")
    prompt = parse_prompt(path.read_text(encoding="utf-8"), source=str(path))
    if prompt.name != name:
        raise ValueError(f"{path}: front matter name {prompt.name!r} differs from the file name {name!r}")
    return prompt


def list_prompts(directory: str | Path | None = None) -> list[str]:
    """Names of the prompt files in ``directory`` (default: this package's folder), sorted."""
    folder = Path(directory) if directory is not None else PROMPT_DIR
    return sorted(p.stem for p in folder.glob("*.md") if p.stem.lower() != "readme")
