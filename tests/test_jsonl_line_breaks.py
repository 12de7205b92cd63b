"""JSONL records end at "\\n" and nowhere else (issue 32, case 2).

``str.splitlines`` also breaks at U+2028, U+2029, U+0085, \\x1c-\\x1e, \\v and \\f, and
``json.dumps(ensure_ascii=False)`` leaves the first three raw inside strings. One such character in
an LLM reply used to cut its step record in two: ``bqa evaluate`` then failed on "line 1: not valid
JSON" at every rerun, and ``report`` refused a valid file written by Python's own ``json.dumps``.
"""

from __future__ import annotations

import json

from processes import vqabench

from builders.cli import main as cli_main
from builders.files.jsonio import dumps_line, read_jsonl, write_jsonl_atomic
from builders.llm.cache import CachedReply, ReplyCache, export_replies, read_replies
from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_server import ChatServer

# Every character str.splitlines breaks at, besides "\n" and "\r".
BREAKS = "\u2028\u2029\u0085\x1c\x1d\x1e\x0b\x0c"
REPLY = "A.\u2028Her arms\u0085are raised\u2029in joy\x1c\x0b\x0c\r\nso A"


def test_every_string_round_trips_through_the_pair(tmp_path):
    records = [{"id": f"r{i}", "text": f"x{c}y", "all": BREAKS} for i, c in enumerate(BREAKS + "\r\n")]
    path = write_jsonl_atomic(tmp_path / "ours.jsonl", records)
    assert read_jsonl(path) == records
    # What we write reads back even through a splitlines reader (an older vqabench, another tool).
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == records
    assert "é" in dumps_line({"t": "é"})  # still UTF-8, not \u-escaped
    # A file as Python's json.dumps(ensure_ascii=False) writes it (raw U+2028 etc.) reads as written.
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    assert read_jsonl(theirs) == records


def test_recorded_replies_round_trip(tmp_path):
    reply = CachedReply(
        key="k" * 64, model="m", model_reported="m", prompt_name=None, prompt_version=None, raw=REPLY,
        value={"answer": REPLY}, prompt_tokens=1, completion_tokens=2, attempts=1, created="", elapsed=0.0,
    )  # fmt: skip
    with ReplyCache(tmp_path / "cache.sqlite") as cache:
        cache.put_many([reply])
    export_replies(tmp_path / "cache.sqlite", tmp_path / "replies.jsonl")
    assert read_replies(tmp_path / "replies.jsonl") == [reply]


def test_evaluate_keeps_a_reply_with_line_separators_and_resumes(built_samples, tmp_path):
    out = tmp_path / "preds.jsonl"
    with ChatServer(model=None) as server:
        server.handler = lambda body: REPLY
        args = ["bqa", "evaluate", "--data", str(built_samples["bqa"].hub), "--split", "test",
                "--out", str(out), "--num-frames", "2", "--llm-model", "m", "--llm-base-url", server.url,
                "--llm-api-key-env", "none"]  # fmt: skip
        first = vqabench(args)  # a real process, as the issue measured it
        assert first.returncode == 0, first.stderr
        sent = len(server.chat_requests)
        out.unlink()  # the rerun rebuilds the file from the finished step's records, asking nothing
        assert cli_main(args) == 0
        assert len(server.chat_requests) == sent == 6  # the sample's test split (STEP4 keeps every row)
    lines = read_jsonl(out)
    assert len(lines) == 6 and {line["raw_output"] for line in lines} == {REPLY}


def test_report_reads_a_file_written_by_json_dumps(built_samples, tmp_path):
    rows = built_samples["bqa"].loaded["default"]["test"].to_list()
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": r["id"], "raw_output": f"{r['answer']}\u2028{REPLY}"}, ensure_ascii=False) + "\n"
                for r in rows),
        encoding="utf-8",
    )  # fmt: skip
    assert cli_main(["report", "bqa", "--data", str(built_samples["bqa"].hub), "--split", "test",
                     "--predictions", f"m={predictions}", "--out", str(tmp_path / "report")]) == 0  # fmt: skip
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["models"]["m"]["metrics"]["n"] == len(rows) == 6


def test_build_keeps_replies_with_line_separators_and_resumes(tmp_path):
    """``bqa build`` as the issue measured it: a STEP3 reason and STEP4 replies holding U+2028/U+0085."""
    responder = BQAResponder()

    def reply(body):
        value = responder(body)
        if isinstance(value, dict) and "reason" in value:
            return {**value, "reason": value["reason"].replace(" ", "\u2028", 1).replace(" ", "\u0085", 1)}
        return value if isinstance(value, dict) else f"{value}\u2028\u0085\u2029"

    work = tmp_path / "work"
    with ChatServer(model=None) as server:
        server.handler = reply
        args = ["bqa", "build", "--sample", "--limit", "3", "--work", str(work), "--llm-model", "m",
                "--llm-base-url", server.url, "--llm-api-key-env", "none"]  # fmt: skip
        assert cli_main(args) == 0
        sent = len(server.chat_requests)
        released = {p.name: p.read_bytes() for p in (work / "release").glob("*.jsonl")}
        assert cli_main(args) == 0  # the rerun reads every step record back, asking nothing
        assert len(server.chat_requests) == sent > 0
    assert {p.name: p.read_bytes() for p in (work / "release").glob("*.jsonl")} == released
    kept = json.dumps([read_jsonl(p) for p in sorted((work / "steps").glob("*.jsonl"))], ensure_ascii=False)
    assert "\u2028" in kept and "\u0085" in kept  # the characters were recorded, and read back
