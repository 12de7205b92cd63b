"""Command-line path arguments checked while the command line is parsed, before any heavy library loads.

A data command imports datasets, PyAV and numpy (seconds of CPU on a loaded machine) before it
reads its inputs; a mistyped path must not wait for that. These are ``argparse`` ``type=``
callables: the parser reports a missing input at once, naming the path and what was expected.
Argparse-level only (pathlib, os): cheap to import from every command module.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def _path(text: str) -> Path:
    return Path(os.path.expanduser(text))


def existing_file(text: str) -> Path:
    """An input file that must exist (a folder is refused)."""
    path = _path(text)
    if path.is_file():
        return path
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, expected a file")
    raise argparse.ArgumentTypeError(f"{text}: no such file")


def existing_folder(text: str) -> Path:
    """An input folder that must exist (a file is refused)."""
    path = _path(text)
    if path.is_dir():
        return path
    if path.exists():
        raise argparse.ArgumentTypeError(f"{text}: is not a folder")
    raise argparse.ArgumentTypeError(f"{text}: no such folder")


def existing_path(text: str) -> Path:
    """An input that may be a file or a folder, and must exist."""
    path = _path(text)
    if path.exists():
        return path
    raise argparse.ArgumentTypeError(f"{text}: no such file or folder")


def named_existing_file(text: str) -> str:
    """``NAME=FILE`` (or a bare ``FILE``) whose file must exist; the text is kept as given, for the
    command to split into name and path."""
    _, sep, path = text.partition("=")
    existing_file((path if sep else text).strip())
    return text
