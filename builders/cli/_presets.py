"""Named presets: a paper's settings filled into a command's options, and recorded.

A preset sets the options a user left unset (an option given on the command line wins, and is
listed in the record as ``overridden``) and returns a record of what it set, which the command
stores in its provenance (``<work>/eval.json`` and every predictions line; ``build.json``, the
release and its card). Presets are registered per command (``bqa build``, ``bqa evaluate``, ...);
``--preset`` lists the ones a command has. Argparse only: every command's ``--help`` builds these.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Preset:
    """``apply(args, command, fill)`` sets the preset's defaults through ``fill(dest, value)`` and
    returns what the record adds (models, safety settings...)."""

    name: str
    help: str
    commands: tuple[str, ...]
    apply: Callable[[argparse.Namespace, str, Callable[[str, Any], None]], dict[str, Any]]


PRESETS: dict[str, Preset] = {}


def register_preset(preset: Preset) -> Preset:
    if preset.name in PRESETS:
        raise ValueError(f"preset {preset.name!r} is registered twice")
    PRESETS[preset.name] = preset
    return preset


def add_preset_argument(parser: argparse.ArgumentParser, command: str) -> None:
    """``--preset NAME`` with the presets registered for ``command`` (nothing when there are none)."""
    names = [p for p in PRESETS.values() if command in p.commands]
    if not names:
        return
    parser.add_argument(
        "--preset",
        choices=[p.name for p in names],
        help="set a paper's settings for every option left unset, and record them (and any option that "
        "overrides them) in the run's provenance: " + "; ".join(f"{p.name}: {p.help}" for p in names),
    )


@dataclass
class _Filled:
    args: argparse.Namespace
    set: dict[str, Any] = field(default_factory=dict)
    overridden: list[str] = field(default_factory=list)

    def __call__(self, dest: str, value: Any) -> None:
        """Set ``dest`` to ``value`` if the user left it unset; else record it as overridden when the
        user's value differs (``value`` None: the preset has no value for it; a given one overrides)."""
        given = getattr(self.args, dest, None)
        if given is None and value is not None:
            setattr(self.args, dest, value)
            self.set[dest] = value
        elif given != value:
            self.overridden.append("--" + dest.replace("_", "-"))


def apply_preset(args: argparse.Namespace, command: str) -> dict[str, Any] | None:
    """Apply ``args.preset`` (if any) to ``args``; the record to store in the run's provenance."""
    name = getattr(args, "preset", None)
    if not name:
        return None
    preset = PRESETS[name]
    if command not in preset.commands:
        raise ValueError(f"preset {name!r} is for {', '.join(preset.commands)}, not {command}")
    fill = _Filled(args)
    extra = preset.apply(args, command, fill)
    options = {"--" + k.replace("_", "-"): v for k, v in fill.set.items()}
    return {"name": name, **extra, "options_set": options, "overridden": fill.overridden}


def extra_body_path(extra_body: Any, keys: tuple[str, ...], path: str = "") -> str | None:
    """Where in a request's extra fields one of ``keys`` sits (``"extra_body.google.safety_settings"``),
    or None."""
    if isinstance(extra_body, Mapping):
        for key, value in extra_body.items():
            here = f"{path}.{key}" if path else str(key)
            if key in keys:
                return here
            found = extra_body_path(value, keys, here)
            if found:
                return found
    return None


def given_extra_body(args: argparse.Namespace, env_prefix: str = "VQABENCH_LLM_") -> Any:
    """The ``--llm-extra-body`` object, or its environment variable's (None: neither)."""
    if getattr(args, "llm_extra_body", None) not in (None, "none"):
        return args.llm_extra_body
    raw = os.environ.get(env_prefix + "EXTRA_BODY")
    try:
        return json.loads(raw) if raw and raw.strip().lower() != "none" else None
    except json.JSONDecodeError:
        return None  # the settings report it when they read it
