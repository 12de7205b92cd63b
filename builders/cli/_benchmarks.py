"""The benchmark registry: the two entries by command-line name, ``bqa`` (:mod:`builders.cli.bqa`) and
``marinelife`` (:mod:`builders.cli.marinelife`), spelled so wherever a user types one (``vqabench
marinelife ...``, ``report marinelife``, ``leaderboard marinelife``, ``human-study make marinelife``);.

Argparse-level only: the benchmark modules are imported when a handler asks for one.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Any

from builders.cli import bqa, marinelife
from builders.cli._entry import Benchmark
from builders.cli._verbs import card_default_repo_id
from builders.hub.repo_ids import ChosenRepoId, choose_repo_id

#: The benchmarks, by command-line name: each entry holds what is its own (builders/cli/<key>.py).
REGISTRY: dict[str, Benchmark] = {entry.key: entry for entry in (bqa.ENTRY, marinelife.ENTRY)}

#: command-line name -> (benchmark module, card module)
MODULES = {key: entry.modules for key, entry in REGISTRY.items()}


def benchmark_key(text: str) -> str:
    """An argparse ``type``: a benchmark's command-line name."""
    if text in MODULES:
        return text
    raise argparse.ArgumentTypeError(f"unknown benchmark {text!r}; expected one of {', '.join(MODULES)}")


def add_benchmark_argument(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("benchmark", type=benchmark_key, metavar="{" + ",".join(MODULES) + "}", help=help)


@dataclass(frozen=True)
class Known:
    key: str
    benchmark: Any  # builders.hub.benchmark.Benchmark
    file_stem: str
    default_repo_id: str


def _load(key: str) -> Known:
    module = importlib.import_module(MODULES[key][0])  # lazy for start-up speed
    return Known(key, module.BENCHMARK, module.RESULTS_FILE_STEM, card_default_repo_id(REGISTRY[key]))


def by_key(key: str) -> Known:
    if key not in MODULES:
        raise ValueError(f"unknown benchmark {key!r}; expected one of {sorted(MODULES)}")
    return _load(key)


def by_name(name: object, where: str) -> Known:
    """The benchmark a report names in its ``benchmark`` field ("BQA", "MarineLife-16K")."""
    for key in MODULES:
        known = _load(key)
        if known.benchmark.name == name:
            return known
    names = [_load(k).benchmark.name for k in MODULES]
    raise ValueError(f"{where}: 'benchmark' is {name!r}, expected one of {names}")


def dataset_id(known: Known, given: str | None, recorded: str | None = None) -> ChosenRepoId:
    """The benchmark's dataset repo id (:func:`builders.hub.repo_ids.choose_repo_id`): ``given``
    (--dataset-id), the repo a report read (``recorded``), the environment's setting, the card's."""
    return choose_repo_id(known.benchmark.name, given=given, recorded=recorded, default=known.default_repo_id)
