"""What the README and the dataset cards promise a new user holds without a network (issue 29); the
commands themselves run from a fresh clone in ``tests/readme_check.py`` (``.ci/run``)."""

from __future__ import annotations

import re
from pathlib import Path

from readme_check import MARK, bash_blocks, checked_blocks, setup_command

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = [body for _, body in bash_blocks(README)]


def test_no_install_from_a_package_index_that_does_not_have_it():
    """`pip install videoqa-bench-tools` found no distribution: no command, card or hint offers it."""
    from bqa.card import card_body as _bqa_card  # noqa: F401 - imports the card's install text
    from builders import INSTALL_HINT

    offered = re.compile(r"`pip install videoqa-bench-tools`(?! finds nothing)")
    assert not offered.search(README) and not any("pip install videoqa-bench-tools" in c for c in COMMANDS)
    assert "not on PyPI" in INSTALL_HINT and "git+" in INSTALL_HINT
    for card in ("bqa/card.py", "marinelife16k/card.py"):
        source = (ROOT / card).read_text(encoding="utf-8")
        assert "pip install videoqa-bench-tools" not in source and "INSTALL_HINT" in source, card


def test_the_setup_installs_from_a_checkout_and_the_test_command_is_what_ci_runs():
    assert setup_command(README) == (
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && vqabench demo --out vqabench-demo"
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test = next(c for c in COMMANDS if "pytest" in c).strip()
    assert (
        test
        == 'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -q -n 2'
    )
    assert 'pip install -q -e ".[test]"' in ci and "\npython -m pytest -q -n 2\n" in ci
    assert "python tests/readme_check.py" in ci


def test_the_apt_line_runs_unattended_and_comes_before_the_tests_that_need_it():
    apt = [i for i, c in enumerate(COMMANDS) if "apt-get" in c]
    tests = next(i for i, c in enumerate(COMMANDS) if "pytest" in c)
    assert len(apt) == 1 and apt[0] < tests
    assert COMMANDS[apt[0]].strip() == "apt-get update && apt-get install -y chromium chromium-driver"
    assert "apt-get install chromium" not in README  # the old interactive form


def test_no_placeholder_repo_id_in_any_command():
    """MarineLife-16K's repo is one setting (VQABENCH_MARINELIFE16K_REPO_ID), not `<namespace>/...`."""
    assert "<namespace>/MarineLife-16K" not in README
    assert "export VQABENCH_MARINELIFE16K_REPO_ID=" in README
    assert not any("<namespace>" in command for command in COMMANDS)
    values = re.findall(r"--data \"?([^\s\"]+)", "\n".join(COMMANDS))
    marine = [v for v in values if "marine" in v.lower()]
    assert "$VQABENCH_MARINELIFE16K_REPO_ID" in marine  # by the setting ...
    assert all(v == "$VQABENCH_MARINELIFE16K_REPO_ID" or "hub/" in v for v in marine), (
        marine
    )  # ... or a folder


def test_the_offline_block_is_marked_and_runs_what_the_sections_above_describe():
    blocks = checked_blocks(README)
    assert len(blocks) == 1 and README.count(MARK) == 1
    block = blocks[0]
    for command in ("vqabench report bqa", "vqabench judge score", "vqabench results write", "--allow-sample",
                    "vqabench leaderboard bqa", "vqabench human-study make bqa", "vqabench push"):  # fmt: skip
        assert command in block, command
    # The human-study draws fit the samples they are run on (the papers' 100 need a full split).
    sizes = [int(n) for n in re.findall(r"--size (\d+)", block)]
    assert sizes and max(sizes) <= 10 and "1,443" in README
