"""``--prompt NAME=PATH``: any packaged prompt replaced by a file, on every LLM command; the file's text
hash is the prompt version in every record, and reports refuse to mix runs made with other texts."""

from __future__ import annotations

import argparse
import hashlib
import re

import pytest

from builders.cli import build_parser
from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl
from builders.llm.prompts import load_prompt, prompt_from_file, prompt_overrides, set_prompt_overrides
from builders.report import write_bqa_report
from builders.scripted.bqa_responder import first_user_text
from builders.testing.chat_server import ChatServer

PAPER_WORDING = """Watch the {{ frame_description }} above (no sound).
{{ question }}
Choose one of:
{{ options }}
Reply with the emotion only, in one word."""


@pytest.fixture(autouse=True)
def packaged_prompts():
    yield
    set_prompt_overrides({})  # the overrides are per process: leave none behind


def first_option(body) -> str:
    return re.findall(r"^A\. (.+)$", first_user_text(body), re.M)[0]


def version_of(text: str) -> str:  # independent of the code under test: sha256 of the text, 16 hex digits
    return "sha256-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def test_a_file_replaces_a_prompt_and_its_hash_is_the_version(tmp_path):
    plain = tmp_path / "mine.md"
    plain.write_text(PAPER_WORDING + "\n", encoding="utf-8")
    assert set_prompt_overrides({"bqa_answer_single_word": plain}) == {
        "bqa_answer_single_word": version_of(PAPER_WORDING)
    }
    prompt = load_prompt("bqa_answer_single_word")
    assert (prompt.text, prompt.version) == (PAPER_WORDING, version_of(PAPER_WORDING))
    assert load_prompt("bqa_question").version == "2"  # the others stay packaged
    fronted = tmp_path / "fronted.md"
    fronted.write_text(
        "---\nname: bqa_answer_single_word\nversion: 7\n---\n" + PAPER_WORDING, encoding="utf-8"
    )
    assert prompt_from_file("bqa_answer_single_word", fronted).version == version_of(PAPER_WORDING)  # not "7"
    set_prompt_overrides({})
    assert prompt_overrides() == {} and load_prompt("bqa_answer_single_word").version == "1"


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("bqa_answer_single_word", "{{ question }} {{ options }}", r"missing \['frame_description'\]"),
        ("bqa_answer_single_word", PAPER_WORDING + " {{ answer }}", r"unknown \['answer'\]"),
        ("no_such_prompt", PAPER_WORDING, "no prompt 'no_such_prompt'"),
        ("bqa_question", "---\nname: bqa_filter\nversion: 1\n---\ntext", "names prompt 'bqa_filter'"),
        ("bqa_answer_single_word", "   \n", "empty"),
    ],
)
def test_a_bad_replacement_is_refused_before_anything_runs(tmp_path, name, text, error):
    path = tmp_path / "p.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises((ValueError, FileNotFoundError), match=error):
        set_prompt_overrides({name: path})
    assert prompt_overrides() == {}  # nothing half-applied


def _subcommands(parser: argparse.ArgumentParser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommands(sub, (*path, name))
    yield path, parser


def test_every_llm_command_takes_prompt_files():
    llm_commands = []
    for path, parser in _subcommands(build_parser()):
        flags = {s for a in parser._actions for s in a.option_strings}
        if "--llm-model" in flags:
            llm_commands.append(" ".join(path))
            assert "--prompt" in flags, path
    assert {"bqa build", "bqa evaluate", "marinelife build", "marinelife evaluate", "marinelife judge",
            "judge score"} <= set(llm_commands)  # fmt: skip


def test_an_overridden_run_records_its_version_and_a_report_refuses_to_mix_it(built_samples, tmp_path):
    hub = built_samples["bqa"].hub
    mine = tmp_path / "mine.md"
    mine.write_text(PAPER_WORDING, encoding="utf-8")
    runs = {}
    with ChatServer(model=None) as server:
        server.handler = first_option
        for name, extra in (
            ("packaged", []),
            ("paper-wording", ["--prompt", f"bqa_answer_single_word={mine}"]),
        ):
            out = tmp_path / f"{name}.jsonl"
            args = ["bqa", "evaluate", "--data", str(hub), "--split", "test", "--out", str(out), "--num-frames",
                    "2", "--llm-model", "m", "--llm-base-url", server.url, "--llm-api-key-env", "none", *extra]  # fmt: skip
            assert cli_main(args) == 0
            runs[name] = (out, [first_user_text(r.body) for r in server.chat_requests])
            server.reset()
        set_prompt_overrides({})
        # the same work folder with another text of the prompt is refused, not mixed
        with pytest.raises(ValueError, match="prompts"):
            cli_main(["-v", *args[:-2]])
    assert all(t.startswith("Watch the 2 frames") for t in runs["paper-wording"][1])
    assert not any(t.startswith("Watch") for t in runs["packaged"][1])
    lines = read_jsonl(runs["paper-wording"][0])
    assert {(p["prompt"], p["prompt_version"]) for p in lines} == {
        ("bqa_answer_single_word", version_of(PAPER_WORDING))
    }
    assert {p["prompt_version"] for p in read_jsonl(runs["packaged"][0])} == {"1"}
    both = {name: path for name, (path, _) in runs.items()}
    with pytest.raises(ValueError, match=r"not made the same way.*prompt"):
        write_bqa_report(hub, "test", both, tmp_path / "report")
    report = write_bqa_report(hub, "test", both, tmp_path / "report", allow_mixed=True)
    assert (
        "Mixed settings" in report.markdown.read_text()
        and version_of(PAPER_WORDING) in report.markdown.read_text()
    )
