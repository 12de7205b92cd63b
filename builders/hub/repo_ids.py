"""Which Hub dataset repo holds each benchmark: a one-time setting, not a placeholder in every command.

BQA's paper names its repo (``naist-nlp/BQA``); MarineLife-16K's names none, so whoever hosts (or
mirrors) it says where, once: ``VQABENCH_MARINELIFE16K_REPO_ID=owner/MarineLife-16K`` in the
environment (``VQABENCH_BQA_REPO_ID`` overrides BQA's the same way), or ``--dataset-id`` on a command.
:func:`choose_repo_id` applies one order everywhere (results, leaderboard, export cards) and says
where the id came from, which the command records.

Argparse-level only (os).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")


@dataclass(frozen=True)
class ChosenRepoId:
    repo_id: str
    source: str  # where it came from: "--dataset-id", "VQABENCH_..._REPO_ID", "the report's data", ...

    def provenance(self) -> dict[str, str]:
        return {"dataset_id": self.repo_id, "dataset_id_from": self.source}


def repo_id_variable(benchmark: str) -> str:
    """The environment variable that sets a benchmark's dataset repo id: its name in capitals, letters
    and digits only (``MarineLife-16K`` -> ``VQABENCH_MARINELIFE16K_REPO_ID``), for any benchmark."""
    return f"VQABENCH_{re.sub(r'[^A-Z0-9]', '', benchmark.upper())}_REPO_ID"


def is_repo_id(text: str | None) -> bool:
    """``owner/name`` as the Hub spells repo ids (a placeholder such as ``<namespace>/...`` is not)."""
    return bool(text) and _REPO_ID.match(text or "") is not None


def configured_repo_id(benchmark: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The repo id set in the environment for ``benchmark`` (checked), or None."""
    variable = repo_id_variable(benchmark)
    value = (os.environ if environ is None else environ).get(variable, "").strip()
    if not value:
        return None
    if not is_repo_id(value):
        raise ValueError(f"{variable}={value!r}: expected a Hub dataset repo id, owner/name")
    return value


def choose_repo_id(
    benchmark: str,
    *,
    given: str | None = None,
    recorded: str | None = None,
    default: str | None = None,
    flag: str = "--dataset-id",
    environ: Mapping[str, str] | None = None,
) -> ChosenRepoId:
    """The benchmark's dataset repo id: ``given`` (the flag), else the one the data was read from
    (``recorded``: a report over a Hub repo), else the environment's, else ``default`` (the card's,
    when it is a real id). ValueError saying how to set it when there is none."""
    variable = repo_id_variable(benchmark)
    if given:
        if not is_repo_id(given):
            raise ValueError(f"{flag} {given!r}: expected a Hub dataset repo id, owner/name")
        return ChosenRepoId(given, flag)
    if is_repo_id(recorded):
        return ChosenRepoId(str(recorded), "the data the report read")
    configured = configured_repo_id(benchmark, environ)
    if configured:
        return ChosenRepoId(configured, variable)
    if is_repo_id(default):
        return ChosenRepoId(str(default), "the dataset card")
    raise ValueError(
        f"which Hub repo holds {benchmark}? Its paper names none: set it once with "
        f"`export {variable}=OWNER/NAME` (e.g. in your shell profile), or pass {flag} OWNER/NAME"
    )
