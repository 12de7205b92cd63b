"""What the README and the guide promise a new user holds without a network (issues 29, 42); their
commands run from a fresh clone, offline, in ``tests/readme_check.py`` (``.ci/run``), and the site
builds with ``mkdocs build --strict`` there."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from readme_check import (
    PAGES,
    RUNNABLE,
    bash_blocks,
    checked_blocks,
    runnable_pages,
    setup_command,
    skip_reason,
)

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {name: (ROOT / "docs" / name).read_text(encoding="utf-8") for name in PAGES}
CONTRIBUTING = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
COMMANDS = [body for _, body in bash_blocks(README)]
OUTPUT_FLAGS = ("--out", "--output", "--work", "--export", "--out-dir")
INPUT_FLAGS = ("--data", "--judge-results", "--human", "--models")
HUB_REPOS = ("naist-nlp/",)  # the repo ids the pages read from the Hub (MarineLife-16K's is a variable)


def test_no_install_from_a_package_index_that_does_not_have_it():
    """`pip install videoqa-bench-tools` found no distribution: no command, card or hint offers it,
    and the hint names no address to guess (`git+<repository URL>`)."""
    from bqa.card import card_body as _bqa_card  # noqa: F401 - imports the card's install text
    from builders import INSTALL_HINT

    offered = re.compile(r"`pip install videoqa-bench-tools`(?!\s+finds\s+nothing)")
    for name, text in {"README.md": README, **DOCS}.items():
        assert not offered.search(text), name
        assert "videoqa-bench-tools[" not in text and "git+" not in text, name  # extras from the checkout
    assert "not on PyPI" in INSTALL_HINT and "pip install -e ." in INSTALL_HINT and "<" not in INSTALL_HINT
    for card in ("bqa/card.py", "marinelife16k/card.py"):
        source = (ROOT / card).read_text(encoding="utf-8")
        assert "pip install videoqa-bench-tools" not in source and "INSTALL_HINT" in source, card


def test_the_readme_is_short_and_names_nothing_a_user_must_guess():
    assert len(README.splitlines()) <= 150
    for placeholder in ("<repository URL>", "your-org", "<namespace>", "<model>", "<date>"):
        assert placeholder not in README, placeholder
    for command in COMMANDS:
        assert "..." not in shlex.split(command, comments=True), command  # e.g. `--llm-model ...`


def test_the_setup_installs_from_a_checkout_and_the_test_command_is_what_ci_runs():
    assert setup_command(README) == (
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && vqabench demo --out vqabench-demo"
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test = next(c for _, c in bash_blocks(CONTRIBUTING) if "pytest" in c).strip()
    assert (
        test
        == 'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -q -n 2'
    )
    assert 'pip install -q -e ".[test]"' in ci and "\npython -m pytest -q -n 2\n" in ci
    assert "python tests/readme_check.py" in ci and "mkdocs build --strict" in ci and '".[docs]"' in ci


def test_the_apt_line_runs_unattended_and_comes_before_the_tests_that_need_it():
    commands = [c for _, c in bash_blocks(CONTRIBUTING)]
    apt = [i for i, c in enumerate(commands) if "apt-get" in c]
    tests = next(i for i, c in enumerate(commands) if "pytest" in c)
    assert len(apt) == 1 and apt[0] < tests
    assert commands[apt[0]].strip() == "apt-get update && apt-get install -y chromium chromium-driver"


def test_every_readme_block_runs_in_the_check_but_the_one_real_endpoint_command():
    """The tour (against `vqabench serve`) is checked; only the real-endpoint example is not, and it
    says why."""
    blocks = bash_blocks(README)
    skipped = [(before, body) for before, body in blocks if skip_reason(before) is not None]
    assert len(skipped) == 1 and "OPENAI_API_KEY" in skipped[0][1] and "API key" in str(skipped[0][0])
    assert len(checked_blocks(README, readme=True)) == len(blocks) - 2  # the set-up runs on its own
    tour = "".join(checked_blocks(README, readme=True))
    for command in ("vqabench serve --port 8765 --detach", "vqabench bqa build --bold-root bqa/sample/bold",
                    "vqabench bqa evaluate", "vqabench marinelife build", "vqabench marinelife judge",
                    "vqabench report marinelife", "vqabench serve --port 8765 --stop"):  # fmt: skip
        assert command in tour, command


def test_the_getting_started_page_is_runnable_and_first():
    assert runnable_pages(ROOT)[0].name == "getting-started.md"
    assert RUNNABLE in DOCS["getting-started.md"]
    sizes = [int(n) for n in re.findall(r"--size (\d+)", DOCS["getting-started.md"])]
    assert sizes and max(sizes) <= 10  # the demo's splits hold 4 to 15 BQA rows


def commands_of(text: str) -> list[tuple[str, list[str]]]:
    """Each command of a page's bash blocks (continuation lines joined): its text and its words."""
    out = []
    for _, body in bash_blocks(text):
        for line in body.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|", line):
                try:
                    words = shlex.split(part, comments=True)
                except ValueError:  # a line of an inline Python script
                    words = []
                out.append((part, words))
    return out


def composition_problems(text: str) -> list[str]:
    """Where a page's blocks, read in order, do not compose: one output written by two different
    commands, or a local input no earlier command wrote (repo ids, variables, globs, the demo's
    folder and the bundled samples are inputs a reader has)."""
    problems, written, writer = [], ["vqabench-demo/", "bqa/sample/", "marinelife16k/sample/"], {}
    for part, words in commands_of(text):
        written += re.findall(r'open\("([^"]+)", "w"\)', part)  # an inline script's file
        written += [words[i + 1] for i, word in enumerate(words[:-1]) if word == ">"]  # a shell redirect
        if not words or words[0] != "vqabench":
            continue
        command = " ".join(words)
        for i, word in enumerate(words[:-1]):
            value = words[i + 1]
            if word in INPUT_FLAGS or word == "--predictions":
                path = value.split("=", 1)[-1]
                hub = path.startswith(HUB_REPOS) or any(
                    c in path for c in "$*"
                )  # a repo id, a variable, a glob
                if not hub and not any(path.startswith(w) for w in written):
                    problems.append(f"{word} {path}: no earlier command wrote it ({command})")
        outputs = [words[i + 1] for i, word in enumerate(words[:-1]) if word in OUTPUT_FLAGS]
        if len(words) >= 5 and words[2] == "export":  # vqabench BENCHMARK export WORK OUT
            outputs.append(words[4])
        for output in outputs:
            path = output.rstrip("/")
            if writer.setdefault(path, command) != command:
                problems.append(f"{path} written by two commands: {writer[path]!r} and {command!r}")
            written.append(path)
    return problems


def test_the_pages_examples_compose():
    """Issue 42: `--out gpt4o.jsonl` used by two different runs, `--predictions qwen=` against a
    models.csv of other names, inputs (`other.jsonl`, `gemini.jsonl`, `hub/BQA`) nothing wrote."""
    for name, text in {"README.md": README, **DOCS}.items():
        assert composition_problems(text) == [], name


def test_the_composition_check_finds_what_the_old_readme_had():
    old = "\n".join([
        "```bash",
        "vqabench bqa evaluate --data naist-nlp/BQA --split test --out gpt4o.jsonl --fps 1",
        "vqabench bqa evaluate --data naist-nlp/BQA --preset bqa-paper --out gpt4o.jsonl",
        "vqabench report bqa --data naist-nlp/BQA --predictions gemini=gemini.jsonl --out report/",
        "vqabench bqa finetune-data --data hub/BQA --split train --out ft/",
        "```",
    ])  # fmt: skip
    problems = composition_problems(old)
    assert len(problems) == 3
    assert any("gpt4o.jsonl written by two commands" in p for p in problems)
    assert any("gemini.jsonl" in p for p in problems) and any("hub/BQA" in p for p in problems)


def _hook():
    spec = importlib.util.spec_from_file_location("docs_generated", ROOT / "docs" / "hooks" / "generated.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_generated_from_every_parser():
    from builders.cli import build_parser

    reference = _hook().cli_reference()

    def paths(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[str]:
        found = [" ".join(path)]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += paths(sub, (*path, name))
        return found

    for path in paths(build_parser(), ("vqabench",)):
        assert f"`{path}`" in reference, path
    assert "<!-- cli-reference -->" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_every_metric_card_is_on_the_metrics_page_included_not_copied():
    page = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    cards = sorted(p.name for p in (ROOT / "metrics").iterdir() if (p / "README.md").is_file())
    assert sorted(re.findall(r"<!-- metric-card: (\w+) -->", page)) == cards
    included = _hook().metric_card("bqa_accuracy")
    assert not included.startswith("---") and included.startswith("## Metric Card for BQA Accuracy")
    with pytest.raises(ValueError, match="no metric card"):
        _hook().metric_card("no_such_metric")


def test_no_page_links_outside_the_site():
    """Every page link is to another page of the site (mkdocs --strict checks they exist)."""
    for name, text in DOCS.items():
        for target in re.findall(r"\]\(([^)#]+)", text):
            assert (
                target.endswith(".md") and not target.startswith(("/", "..")) or target.startswith("http")
            ), (name, target)
