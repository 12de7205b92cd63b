"""The benchmark registry: every :class:`~builders.cli._entry.Benchmark` an installed distribution
declares in the ``vqabench.benchmarks`` entry-point group (``key = "module:ENTRY"``), by command-line
name. This project declares ``bqa`` and ``marinelife`` in pyproject.toml; a third benchmark is one
package and one entry, in this distribution or another. The names are spelled so wherever a user types
one (``vqabench marinelife ...``, ``report marinelife``, ``leaderboard marinelife``...).

Argparse level: an entry's heavy modules are imported when a handler asks for them.
"""

from __future__ import annotations

import argparse
from functools import cache
from importlib.metadata import entry_points

from builders.cli._entry import Benchmark, Published
from builders.hub.repo_ids import ChosenRepoId, choose_repo_id

#: The entry-point group a benchmark registers under.
GROUP = "vqabench.benchmarks"


@cache
def registry() -> dict[str, Benchmark]:
    """The installed benchmarks by command-line name (sorted). An entry point that does not name a
    :class:`Benchmark` of its own name is refused, naming the entry point."""
    found: dict[str, Benchmark] = {}
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        entry = point.load()
        where = f"entry point {point.name} = {point.value} (group {GROUP})"
        if not isinstance(entry, Benchmark):
            raise RuntimeError(
                f"{where}: expected a builders.cli._entry Benchmark, got {type(entry).__name__}"
            )
        if entry.key != point.name or point.name in found:
            raise RuntimeError(f"{where}: the entry's key is {entry.key!r}; a name is one entry's key")
        found[point.name] = entry
    if not found:
        raise RuntimeError(f"no benchmark is registered in {GROUP}: reinstall the package (pip install -e .)")
    return found


def add_benchmark_argument(parser: argparse.ArgumentParser, help: str, keys: list[str] | None = None) -> None:
    """The positional ``benchmark``: one of ``keys`` (default: every registered one)."""
    keys = list(registry()) if keys is None else keys

    def key(text: str) -> str:
        if text in keys:
            return text
        raise argparse.ArgumentTypeError(f"unknown benchmark {text!r}; expected one of {', '.join(keys)}")

    parser.add_argument("benchmark", type=key, metavar="{" + ",".join(keys) + "}", help=help)


def by_name(name: object, where: str) -> Published:
    """What the benchmark a report names in its ``benchmark`` field ("BQA", "MarineLife-16K") publishes."""
    for entry in registry().values():
        if entry.name == name:
            return entry.published()
    names = [entry.name for entry in registry().values()]
    raise ValueError(f"{where}: 'benchmark' is {name!r}, expected one of {names}")


def dataset_id(published: Published, given: str | None, recorded: str | None = None) -> ChosenRepoId:
    """The benchmark's dataset repo id (:func:`builders.hub.repo_ids.choose_repo_id`): ``given``
    (--dataset-id), the repo a report read (``recorded``), the environment's setting, the card's."""
    default = published.default_repo_id
    return choose_repo_id(published.eval_yaml.name, given=given, recorded=recorded, default=default)
