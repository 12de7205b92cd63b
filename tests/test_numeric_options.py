"""Numeric options are checked when the command line is parsed (issue 32, case 11).

``--limit -2`` scored 3 of 5 rows (a Python slice), ``--limit 0`` all of them, ``--max-cost nan`` set
no limit. Now every numeric option has a range, and a value outside it is argparse's usage error,
exit 2, before anything is read or sent.
"""

from __future__ import annotations

import pytest
from processes import vqabench

from builders.cli import main as cli_main
from builders.testing.chat_server import ChatServer

EVALUATE = ["bqa", "evaluate", "--data", "DATA", "--out", "p.jsonl", "--llm-model", "m"]
BUILD = ["bqa", "build", "--sample", "--work", "W"]
MARINE = ["marinelife", "build", "--sample", "--work", "W"]
STUDY = ["human-study", "make", "bqa", "--data", "DATA", "--out", "S"]
FRAMES = ["frames", "clip.mp4", "--num-frames", "4"]


@pytest.mark.parametrize(
    ("command", "option", "value", "says"),
    [
        (EVALUATE, "--limit", "-2", "at least 1"),
        (EVALUATE, "--limit", "0", "at least 1"),
        (EVALUATE, "--limit", "2.5", "expected a whole number"),
        (EVALUATE, "--max-cost", "nan", "expected a finite number"),
        (EVALUATE, "--max-cost", "-1", "at least 0"),
        (EVALUATE, "--max-cost", "inf", "expected a finite number"),
        (EVALUATE, "--price-in", "-0.5", "at least 0"),
        (EVALUATE, "--ahead", "0", "at least 1"),
        (EVALUATE, "--fps", "0", "above 0"),
        (EVALUATE, "--fps", "nan", "finite"),
        (EVALUATE, "--num-frames", "-4", "at least 1"),
        (EVALUATE, "--max-side", "0", "at least 1"),
        (EVALUATE, "--llm-timeout", "0", "above 0"),
        (EVALUATE, "--llm-timeout", "nan", "finite"),
        (EVALUATE, "--llm-concurrency", "0", "at least 1"),
        (EVALUATE, "--llm-max-retries", "-1", "at least 0"),
        (EVALUATE, "--llm-temperature", "nan", "finite"),
        (EVALUATE, "--llm-max-tokens", "0", "at least 1"),
        (BUILD, "--limit", "-3", "at least 1"),
        (MARINE, "--tau", "nan", "finite"),
        (MARINE, "--num-frames", "0", "at least 1"),
        (STUDY, "--size", "0", "at least 1"),
        (STUDY, "--ratings-per-item", "-1", "at least 1"),
        (FRAMES, "--quality", "100", "from 1 to 95"),
    ],
)  # fmt: skip
def test_out_of_range_values_are_usage_errors(command, option, value, says, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the input paths exist: paths are checked at parse time too, and first
    (tmp_path / "DATA").mkdir()
    (tmp_path / "clip.mp4").write_bytes(b"")
    with pytest.raises(SystemExit) as done:
        cli_main([*command, f"{option}={value}"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err and says in err, err


def test_limit_minus_two_sends_nothing(built_samples, tmp_path):
    with ChatServer(model=None) as server:
        done = vqabench(["bqa", "evaluate", "--data", str(built_samples["bqa"].hub), "--split", "test",
                         "--limit", "-2", "--out", str(tmp_path / "p.jsonl"), "--llm-model", "m", "--llm-base-url",
                         server.url, "--llm-api-key-env", "none"])  # fmt: skip
        assert server.chat_requests == []
    assert (
        done.returncode == 2
        and "argument --limit: expected a whole number at least 1, got '-2'" in done.stderr
    )
    assert not (tmp_path / "p.work").exists()
