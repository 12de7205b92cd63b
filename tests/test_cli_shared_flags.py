"""Both benchmarks speak one command-line language: a flag the two share is spelled the same and
explained the same on ``vqabench bqa <verb> --help`` and ``vqabench marinelife <verb> --help``; the
benchmark is spelled one way wherever it is typed, and old spellings get a one-line hint."""

from __future__ import annotations

import argparse

import pytest

from builders.cli import build_parser, main
from builders.cli._benchmarks import registry
from builders.cli._verbs import VERB_FLOWS

#: Verbs both benchmarks have, from the registry (a verb one entry lacks, such as judge, is not compared).
VERBS = sorted(set.intersection(*(set(entry.verbs()) for entry in registry().values())))
#: Flags every LLM command of both benchmarks takes, explained alike.
LLM_COMMAND_FLAGS = {
    "--ahead", "--reject-llm-failures", "--estimate", "--max-cost", "--price-in", "--price-out", "--price-table",
    "--llm-model", "--llm-base-url", "--llm-api-key-env", "--llm-cache", "--llm-mode", "--llm-replies",
    "--llm-concurrency", "--llm-timeout", "--llm-max-retries", "--llm-max-validation-retries",
    "--llm-temperature", "--llm-seed", "--llm-max-tokens", "--llm-extra-body",
}  # fmt: skip
#: Where the same flag legitimately says something of its own benchmark (its unit, its input, its
#: default), and why; every other shared flag must read the same.
OWN_WORDS = {
    "--limit": "counts the benchmark's own items (BoLD rows, videos, questions)",
    "--work": "names the benchmark's own work folder contents",
    "--sample": "names the benchmark's own bundled sample",
    "--repo-id": "names the benchmark's own default repo",
    "--seed": "seeds the benchmark's own draws",
    "--export": "names the benchmark's own release folder",
    "--data": "names the benchmark's own dataset",
    "--out": "names what the verb writes for this benchmark",
    "--num-frames": "the benchmark's own default frame count",
    "--fps": "the benchmark's own default frame rate",
    "--videos": "names the benchmark's own unit of video (BQA's clips are rows)",
    "--video-sample": "names the benchmark's own unit of video (BQA's clips are rows)",
}


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise KeyError(name)


def flags(benchmark: str, verb: str, command: str | None = None) -> dict[str, str]:
    """Each long flag of ``vqabench BENCHMARK VERB`` (``vqabench report BENCHMARK`` with ``command``)
    and its help text as ``--help`` shows it."""
    parser = (
        _sub(_sub(build_parser(), command), benchmark)
        if command
        else _sub(_sub(build_parser(), benchmark), verb)
    )
    return {
        option: " ".join((action.help or "").split()) % {"default": action.default}
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


@pytest.mark.parametrize("verb", VERBS)
def test_shared_flags_read_the_same_for_both_benchmarks(verb, capsys):
    bqa, marine = flags("bqa", verb), flags("marinelife", verb)
    differ = {
        f: (bqa[f], marine[f]) for f in set(bqa) & set(marine) if f not in OWN_WORDS and bqa[f] != marine[f]
    }
    assert differ == {}
    for benchmark in ("bqa", "marinelife"):  # what --help prints is what the parser holds
        with pytest.raises(SystemExit):
            main([benchmark, verb, "--help"])
        shown = capsys.readouterr().out
        assert all(f in shown for f in (bqa if benchmark == "bqa" else marine))


def test_every_verb_both_benchmarks_have_is_compared():
    # The registry's verbs, not a hand list: a verb added to both entries is compared from then on.
    assert VERBS == ["build", "evaluate", "export", "stats"]
    assert "judge" in registry()["marinelife"].verbs() and "judge" not in registry()["bqa"].verbs()


def test_report_reads_the_same_for_both_benchmarks(capsys):
    bqa, marine = flags("bqa", "", "report"), flags("marinelife", "", "report")
    shared = set(bqa) & set(marine)
    assert {"--data", "--split", "--out", "--predictions", "--model", "--allow-missing", "--allow-mixed",
            "--parser", "--videos", "--video-sample"} <= shared  # fmt: skip
    assert {f: (bqa[f], marine[f]) for f in shared if f not in OWN_WORDS and bqa[f] != marine[f]} == {}
    assert set(bqa) - shared == {"--human", "--group-mapping"}
    assert set(marine) - shared == {"--judge-results", "--models"}


def test_each_verb_has_one_flow_for_every_benchmark():
    """Each verb's handler is the one shared flow bound to the entry (a benchmark cannot bring its own)."""
    for key, entry in registry().items():
        commands = _sub(build_parser(), key)
        for verb in entry.verbs():
            func = _sub(commands, verb).get_default("func")
            assert func.func is VERB_FLOWS[verb] and func.args == (entry,), (key, verb)
        report = _sub(_sub(build_parser(), "report"), key).get_default("func")
        assert report.func.__qualname__ == "_report" and report.args == (entry,)
    # The shared --replay now means the same on both builds: no exception in OWN_WORDS.
    assert flags("bqa", "build")["--replay"] == flags("marinelife", "build")["--replay"]


def test_marinelife_build_takes_the_shared_frame_flags():
    frame_flags = {"--num-frames", "--fps", "--max-side", "--frame-rule", "--video-input", "--max-frames"}
    bqa, marine = flags("bqa", "build"), flags("marinelife", "build")
    assert frame_flags <= set(marine)
    assert {f: (bqa[f], marine[f]) for f in frame_flags if bqa[f] != marine[f]} == {}


@pytest.mark.parametrize("verb", ["build", "evaluate"])
def test_every_llm_command_takes_the_same_llm_flags(verb):
    for benchmark in ("bqa", "marinelife"):
        assert LLM_COMMAND_FLAGS <= set(flags(benchmark, verb)), (benchmark, verb)


def test_evaluate_takes_the_shared_frame_flags_on_both():
    frame_flags = {"--num-frames", "--fps", "--max-side", "--frame-rule", "--video-input", "--max-frames"}
    assert frame_flags <= set(flags("bqa", "evaluate")) and frame_flags <= set(
        flags("marinelife", "evaluate")
    )


@pytest.mark.parametrize(
    "argv",
    [["leaderboard", "marinelife16k", "--out", "x"], ["human-study", "make", "marinelife16k", "--out", "x"]],
)
def test_one_spelling_of_the_benchmark(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert errors[0].endswith("unknown benchmark 'marinelife16k'; expected one of bqa, marinelife")


def test_no_old_reject_flag(capsys):
    with pytest.raises(SystemExit) as done:
        main(["marinelife", "build", "--sample", "--work", "w", "--reject-failures"])
    assert done.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "error: unrecognized arguments: --reject-failures" in errors[0]
