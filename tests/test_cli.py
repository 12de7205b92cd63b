"""The ``vqabench`` entry point: one module per command, every help page, ``--version``, and no heavy
library imported to build the parser (start-up time itself is measured in benchmarks/cli_startup.py)."""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import builders.cli
from builders import metric_path, metrics_dir
from builders.cli import build_parser, command_names, main

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "av", "numpy", "PIL", "pydantic", "datasets", "evaluate", "pyarrow")


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_commands_are_the_modules():
    modules = sorted(
        p.stem for p in Path(builders.cli.__file__).parent.glob("*.py") if not p.stem.startswith("_")
    )
    assert command_names() == modules
    assert sorted(_actions(build_parser())) == [m.replace("_", "-") for m in modules]
    assert modules == [
        "bqa", "demo", "frames", "human_study", "integrations", "judge", "leaderboard", "llm", "marinelife",
        "metrics", "push", "report", "results", "serve",
    ]  # fmt: skip


def test_dataset_commands_are_symmetric():
    commands = _actions(build_parser())
    # finetune-data: BQA only (its paper fine-tunes on its train split; MarineLife-16K's does not)
    assert sorted(_actions(commands["bqa"])) == [
        "build",
        "check",
        "evaluate",
        "export",
        "finetune-data",
        "stats",
    ]
    assert sorted(_actions(commands["marinelife"])) == [
        "build", "check-attributes", "evaluate", "export", "judge", "sample", "stats", "validate",
    ]  # fmt: skip


def _every_command_line() -> list[list[str]]:
    lines = [[]]
    for name, parser in _actions(build_parser()).items():
        lines.append([name])
        lines.extend([name, action] for action in _actions(parser))
    return lines


@pytest.mark.parametrize("argv", _every_command_line(), ids=lambda argv: " ".join(argv) or "vqabench")
def test_every_help_page_prints(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: vqabench {' '.join(argv)}".rstrip())


def test_version_is_the_package_version(capsys):
    # The version is no longer written by hand: setuptools-scm derives it from the git tags when the
    # package is installed, and the installed distribution's METADATA file holds it.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    expected = importlib.metadata.version("videoqa-bench-tools")  # METADATA, or PKG-INFO of an egg-info
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[\w.]+)?", expected)
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"vqabench {expected}"


def test_help_imports_no_heavy_library():
    """Command modules load openai, PyAV, numpy, datasets... inside their handlers only."""
    probe = (
        "import sys\nfrom builders.cli import build_parser\nbuild_parser()\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    assert loaded.stdout.strip() == ""


# Commands and their input paths, each given a path that is not there (issue 29): the parser refuses
# it, naming it, before any heavy library loads (seconds of CPU on a loaded machine).
MISSING_INPUTS = [
    ["bqa", "evaluate", "--data", "{missing}", "--out", "x.jsonl", "--llm-model", "m"],
    ["marinelife", "evaluate", "--data", "{missing}", "--out", "x.jsonl", "--llm-model", "m"],
    ["report", "bqa", "--data", "{missing}", "--predictions", "a=x.jsonl", "--out", "r"],
    ["report", "marinelife", "--data", "{here}", "--predictions", "a={missing}", "--out", "r"],
    ["marinelife", "judge", "{missing}", "--out", "j.json"],
    ["bqa", "stats", "--data", "{missing}"],
    ["bqa", "export", "{missing}", "out"],
    ["push", "{missing}", "me/data", "--dry-run"],
    ["results", "write", "{missing}", "--out", "m"],
    ["human-study", "score", "{missing}", "a.json", "--out", "r"],
    ["frames", "{missing}", "--num-frames", "4"],
]


@pytest.mark.parametrize("argv", MISSING_INPUTS, ids=lambda argv: " ".join(argv[:2]))
def test_a_missing_input_fails_at_parse_time_naming_it(argv, tmp_path):
    missing = tmp_path / "nonexistent"
    argv = [a.format(missing=missing, here=tmp_path) for a in argv]
    probe = (
        "import sys\nfrom builders.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit as done:\n    code = done.code\n"
        f"print(code, ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.split("\n")[0] == "2 ", done.stdout + done.stderr  # exit 2, nothing heavy loaded
    error = done.stderr.strip().splitlines()
    assert f"{missing}: no such" in error[0] and len(error) <= 4, done.stderr  # one line and a short usage


def test_metrics_path_names_the_checkout_folders(capsys):
    """In a checkout (editable install) the metrics are the repository's metrics/ folders; the wheel's
    copy inside the package is checked by tests/wheel_check.py in .ci/run."""
    names = sorted(p.name for p in (ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file())
    assert len(names) == 5 and metrics_dir() == ROOT / "metrics"
    assert main(["metrics", "path"]) == 0
    assert capsys.readouterr().out == f"{ROOT / 'metrics'}\n"
    for name in names:
        assert main(["metrics", "path", name]) == 0
        assert capsys.readouterr().out == f"{ROOT / 'metrics' / name}\n" and metric_path(name) == str(
            ROOT / "metrics" / name
        )
    assert main(["metrics", "list"]) == 0
    assert [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()] == names
    assert main(["metrics", "path", "bqa_acuracy"]) == 2
    assert "unknown metric 'bqa_acuracy'; known: bqa_accuracy, judge," in capsys.readouterr().err


def test_counts_are_worded_in_their_number():
    from builders.files.text import plural

    assert [plural(n, "film") for n in (0, 1, 2)] == ["0 films", "1 film", "2 films"]
    assert plural(1, "usable row") == "1 usable row" and plural(3, "child", "children") == "3 children"


@pytest.mark.parametrize(
    "argv", [["bqa", "build"], ["bqa", "evaluate"], ["marinelife", "build"], ["marinelife", "evaluate"]]
)
def test_one_look_ahead_option_and_no_old_flag(argv, capsys):
    """Every LLM command takes --ahead with the same help; --batch-size was never released: unknown."""
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "--ahead N items prepared (frames decoded, requests built) ahead of the LLM requests in flight"
        in text
    )
    assert "--batch-size" not in text
    parser = build_parser()._subparsers._group_actions[0].choices[argv[0]]
    parser = parser._subparsers._group_actions[0].choices[argv[1]]
    assert "--batch-size" not in parser._option_string_actions
