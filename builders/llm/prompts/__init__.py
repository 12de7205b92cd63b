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

Any packaged prompt can be replaced by a file of one's own (the paper's appendix wording, say):
:func:`set_prompt_overrides` (``--prompt NAME=PATH`` on every LLM command). The file is the template
text (front matter optional); its version becomes ``sha256-<16 hex digits of the text>``, so every
record, cache key and report names exactly which text was sent, and reports refuse to lay runs made
with different texts side by side.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from builders.files.jsonio import read_text

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
    """The prompt ``<directory>/<name>.md`` (default: this package's folder, or the file that
    replaces it: :func:`set_prompt_overrides`)."""
    if directory is None and name in _overrides:
        return _overrides[name]
    return _load(name, str(Path(directory) if directory is not None else PROMPT_DIR))


#: Packaged prompts replaced by files, for this process (:func:`set_prompt_overrides`).
_overrides: dict[str, Prompt] = {}
OVERRIDE_VERSION_PREFIX = "sha256-"
MAX_PROMPT_BYTES = 1 << 20  # a prompt file larger than 1 MiB is a mistake (a device, a video), not a prompt


def prompt_from_file(name: str, path: str | Path) -> Prompt:
    """The packaged prompt ``name`` with its text replaced by the file at ``path``.

    The file holds the template (``{{ variable }}`` placeholders), with or without front matter; a
    front-matter ``name`` must be ``name``. It must use exactly the variables of the prompt it
    replaces (the callers fill those and no others). The version is the text's sha256 (16 hex
    digits), whatever a front matter says: the text is what the model sees; the packaged text itself is
    the packaged prompt (its version). At most :data:`MAX_PROMPT_BYTES` are read, as UTF-8."""
    original = _load(name, str(PROMPT_DIR))  # an unknown name is an error listing the known ones
    file = Path(path)
    try:
        raw = read_text(file, limit=MAX_PROMPT_BYTES, what=f"a prompt file (--prompt {name})")
    except OSError as err:
        raise FileNotFoundError(f"--prompt {name}={path}: cannot read the file ({err.strerror})") from None
    if raw.lstrip().startswith("---"):
        parsed = parse_prompt(raw, source=str(file))
        if parsed.name != name:
            raise ValueError(f"{file}: front matter names prompt {parsed.name!r}, but it replaces {name!r}")
        text, description = parsed.text, parsed.description
    else:
        text, description = raw.strip("\n"), f"replaced by {file.name}"
    if not text.strip():
        raise ValueError(f"{file}: the prompt text is empty")
    if text == original.text:  # the packaged text itself: the packaged prompt, under its own version
        return original
    prompt = Prompt(
        name=name,
        version=OVERRIDE_VERSION_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
        text=text,
        description=description or original.description,
    )
    missing, unknown = original.variables - prompt.variables, prompt.variables - original.variables
    if missing or unknown:
        raise ValueError(
            f"{file}: a replacement for prompt {name!r} must use its variables {sorted(original.variables)} "
            "as {{ name }}; "
            + "; ".join(p for p in (f"missing {sorted(missing)}" if missing else "",
                                    f"unknown {sorted(unknown)}" if unknown else "") if p)
        )  # fmt: skip
    return prompt


def set_prompt_overrides(files: Mapping[str, str | Path]) -> dict[str, str]:
    """Replace packaged prompts by files (``{name: path}``) for this process, all checked before
    any is used; an empty mapping restores the packaged prompts. Returns ``{name: version}``."""
    loaded = {name: prompt_from_file(name, path) for name, path in files.items()}
    _overrides.clear()
    _overrides.update(loaded)
    return prompt_overrides()


def prompt_overrides() -> dict[str, str]:
    """``{name: version}`` of the prompts replaced by files in this process (sorted by name); what a
    work folder is bound to, so one folder never mixes two texts of a prompt."""
    return {name: _overrides[name].version for name in sorted(_overrides)}


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
