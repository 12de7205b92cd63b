"""The bundled sample rebuilds offline from its recorded replies, sending no request, and the
recorded replies are exactly what recording them again today gives."""

from __future__ import annotations

import json

import datasets
import pytest
from http_trap import http_trap

from bqa.sample import sample_root
from bqa.workfolder import read_release
from builders.cli import main as cli_main
from builders.demo.bqa_sample import SAMPLE_DIR, SCRIPTED_NOTE, load_recording
from builders.llm import ReplayMissError, read_replies
from builders.llm.cache import ReplyCache
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer
from builders.testing.samples.record_bqa_pipeline import RECORDING, record


def _release(work) -> dict[str, bytes]:
    names = ("train.jsonl", "validation.jsonl", "test.jsonl", "meta.json")  # not the export's stats.json
    return {name: (work / "release" / name).read_bytes() for name in names}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """``vqabench bqa build --sample --replay --export``, with every plain-HTTP request of this process
    routed to a listening test server, whose log must stay empty."""
    root = tmp_path_factory.mktemp("replay")
    with http_trap() as server:
        code = cli_main(["bqa", "build", "--sample", "--replay", "--work", str(root / "work"),
                         "--export", str(root / "hub")])  # fmt: skip
        assert code == 0
        assert server.requests == []
    return root


def test_replay_rebuilds_the_sample_release_sending_nothing(replayed, capsys):
    release = read_release(replayed / "work")
    rows = [r for rs in release.splits.values() for r in rs]
    assert rows and all(s for s in release.splits.values())
    assert release.meta.source == SCRIPTED_NOTE
    assert {r.provenance.question.model for r in rows} == {RECORDING.settings.model}
    summary = json.loads((replayed / "work" / "summary.json").read_text())
    run = summary["this_run"]
    assert run["api_calls"] == 0 and run["cache_hits"] == run["items"] == len(
        read_replies(RECORDING.replies_path)
    )
    assert sum(s["rows"] for s in summary["release"]["splits"].values()) == len(rows)
    # The exported folder loads with datasets, split for split.
    hub = datasets.load_dataset(str(replayed / "hub"), cache_dir=str(replayed / "cache"))
    assert {s: hub[s]["id"] for s in hub} == {s: [r.id for r in rs] for s, rs in release.splits.items()}


def test_recorded_replies_are_current(replayed, tmp_path):
    """Recording again (scripted responder, fixed settings) gives the same replies and the same release."""
    summary, server = record(out_dir=tmp_path, work_dir=tmp_path / "work")
    assert summary.ok and server.chat_requests  # this one did talk to the server
    assert all(r.path.startswith("http://scripted-bqa-sample.invalid/v1/") for r in server.chat_requests)

    def rows(path):
        return sorted(
            (r.key, r.prompt_name, r.raw, json.dumps(r.value, sort_keys=True)) for r in read_replies(path)
        )

    again = load_recording(tmp_path)
    assert rows(again.replies_path) == rows(RECORDING.replies_path)
    assert json.loads(again.settings_path.read_text()) == RECORDING.to_json()
    assert again.to_json() == load_recording(SAMPLE_DIR).to_json() == RECORDING.to_json()
    assert again.replies_path.read_bytes() == RECORDING.replies_path.read_bytes()  # stable export
    assert _release(tmp_path / "work") == _release(replayed / "work")


def test_replay_refuses_other_settings(tmp_path):
    with pytest.raises(
        ValueError, match="--replay uses the settings the sample was recorded with; drop --fps"
    ):
        cli_main(["-v", "bqa", "build", "--sample", "--replay", "--work", str(tmp_path), "--fps", "2"])
    with pytest.raises(ValueError, match="recorded with; drop --llm-model, --llm-temperature"):
        cli_main(["-v", "bqa", "build", "--sample", "--replay", "--work", str(tmp_path), "--llm-model", "m",
                  "--llm-temperature", "0.7"])  # fmt: skip
    # Replies recorded at 1 fps do not answer requests made at 2 fps: a miss, and nothing is sent.
    recorded = RECORDING.replies_path
    args = ["-v", "bqa", "build", "--sample", "--work", str(tmp_path / "w"), "--fps", "2", "--limit", "3",
            "--llm-model", RECORDING.settings.model, "--llm-base-url", RECORDING.settings.base_url,
            "--llm-api-key-env", "none", "--llm-replies", str(recorded)]  # fmt: skip
    with pytest.raises(ReplayMissError, match="3 of 3 requests have no recorded reply"):
        cli_main(args)


def test_replay_without_sample_answers_from_the_reply_cache_only(tmp_path, capsys):
    """``--replay`` means one thing on both builds: without --sample it answers from the reply cache
    (--llm-mode replay) and sends nothing; BQA once refused it without --sample."""
    llm = ["--llm-model", "scripted-bqa", "--llm-api-key-env", "none"]
    source = ["bqa", "build", "--bold-root", str(sample_root()), "--limit", "4"]
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        assert (
            cli_main([*source, "--work", str(tmp_path / "filled"), *llm, "--llm-base-url", server.url]) == 0
        )
        sent = len(server.chat_requests)
        assert sent > 0
        # A fresh work folder over the filled cache: rebuilt, every reply from the cache, nothing sent.
        cache = str(tmp_path / "filled" / "llm-cache.sqlite")
        again = [*source, "--work", str(tmp_path / "again"), *llm, "--llm-base-url", server.url, "--replay"]
        assert cli_main([*again, "--llm-cache", cache]) == 0
        assert len(server.chat_requests) == sent
        assert _release(tmp_path / "again") == _release(tmp_path / "filled")
        capsys.readouterr()
        # An empty cache: the replay misses named (how many, the first item), nothing sent.
        ReplyCache(tmp_path / "empty" / "llm-cache.sqlite").close()
        empty = [*source, "--work", str(tmp_path / "empty"), *llm, "--llm-base-url", server.url, "--replay"]
        with pytest.raises(ReplayMissError, match="4 of 4 requests have no recorded reply .first: item 0"):
            cli_main(["-v", *empty])
        assert cli_main(empty) == 2  # without -v: the one line, and an error status
        assert len(server.chat_requests) == sent
    assert "4 of 4 requests have no recorded reply" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--replay sends nothing; it cannot go with --llm-mode refresh"):
        cli_main(["-v", *again, "--llm-cache", cache, "--llm-mode", "refresh"])
