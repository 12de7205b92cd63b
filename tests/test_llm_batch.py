"""``--llm-mode batch`` against the local Batch API server (the real ``openai`` SDK, real sockets): the
same releases and predictions as synchronous runs with no synchronous request; kills at every stage
leave one batch per shard; foreign and swapped replies refused; the OpenAI batch file formats; the
offline round trip through ``llm batch write`` / ``llm batch read``; cost and providers without batches."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from bqa.data import open_split
from builders.cli import main as cli_main
from builders.llm import LLMClient, LLMRequest, LLMSettings, Status, user_message
from builders.scripted.bqa_responder import first_user_text
from builders.scripted.marinelife_responder import MarineLifeResponder
from builders.testing.batch_server import BatchServer

# The documented line shapes (platform.openai.com/docs/api-reference/batch: "The request input object",
# "The request output object"), written here from the docs, not from the code under test.
REQUEST_LINE = {
    "type": "object",
    "required": ["custom_id", "method", "url", "body"],
    "additionalProperties": False,
    "properties": {
        "custom_id": {"type": "string", "minLength": 1},
        "method": {"const": "POST"},
        "url": {"const": "/v1/chat/completions"},
        "body": {"type": "object", "required": ["model", "messages"]},
    },
}
OUTPUT_LINE = {
    "type": "object",
    "required": ["id", "custom_id", "response", "error"],
    "properties": {
        "id": {"type": "string"},
        "custom_id": {"type": "string"},
        "response": {
            "oneOf": [
                {"type": "null"},
                {"type": "object", "required": ["status_code", "request_id", "body"],
                 "properties": {"status_code": {"type": "integer"}, "request_id": {"type": "string"},
                                "body": {"type": "object"}}},
            ]
        },
        "error": {"oneOf": [{"type": "null"}, {"type": "object", "required": ["code", "message"]}]},
    },
}  # fmt: skip
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
          "additionalProperties": False}  # fmt: skip


@pytest.fixture(scope="module")
def bqa(built_samples):
    return built_samples["bqa"]


def evaluate_args(data, out, server, *extra):
    return ["bqa", "evaluate", "--data", str(data), "--split", "train", "--out", str(out), "--num-frames", "2",
            "--llm-model", "answer-model", "--llm-base-url", server.url, "--llm-api-key-env", "none",
            "--llm-batch-poll", "0.01", *extra]  # fmt: skip


def two_stage(body):
    """Stage 1 (it sees the answer) names it in a rationale; stage 2 answers what the rationale names."""
    text = first_user_text(body)
    if "Correct answer: " in text:
        return "It looks like " + text.split("Correct answer: ")[1].splitlines()[0]
    rationale = text.split("Rationale: ")[1].splitlines()[0]
    return rationale.removeprefix("It looks like ")


def test_a_two_stage_batch_evaluation_equals_the_synchronous_one_byte_for_byte(bqa, tmp_path, capsys):
    with BatchServer(model=None) as server:
        server.handler = two_stage
        sync, batch = tmp_path / "sync.jsonl", tmp_path / "batch.jsonl"
        assert cli_main(evaluate_args(bqa.hub, sync, server, "--style", "multimodal_cot")) == 0
        sync_bodies = sorted(json.dumps(r.body, sort_keys=True) for r in server.chat_requests)
        server.reset()
        capsys.readouterr()
        batch_args = evaluate_args(bqa.hub, batch, server, "--style", "multimodal_cot", "--llm-mode", "batch")
        assert cli_main(batch_args) == 0
        assert server.chat_requests == []  # not one synchronous request
        rows = len(open_split(bqa.hub, "train").rows)
        assert f"replies from batch: batch_1 ({rows}), batch_2 ({rows})" in capsys.readouterr().err
        assert len(server.batches) == 2  # stage 1, then stage 2: a round each
        sent = [
            json.loads(line)
            for b in server.batches.values()
            for line in server.files[b.input_file_id].splitlines()
        ]
    assert batch.read_bytes() == sync.read_bytes()
    for line in sent:
        jsonschema.validate(line, REQUEST_LINE)
    # the bodies the batches carried are the bodies the synchronous run sent
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in sent) == sync_bodies


def test_a_batch_build_equals_the_synchronous_release_byte_for_byte(tmp_path):
    from builders.pipelines.marinelife import captioner
    from marinelife16k.annotations import read_annotations
    from marinelife16k.sample import sample_attributes_path, sample_video_root

    rows = read_annotations(sample_attributes_path(), video_root=sample_video_root())
    with BatchServer() as server:
        server.handler = MarineLifeResponder(rows, sample_video_root(), captioner.frame_spec())
        common = ["marinelife", "build", "--sample", "--llm-model", "test-model", "--llm-base-url", server.url,
                  "--llm-api-key-env", "none", "--llm-batch-poll", "0.01"]  # fmt: skip
        assert cli_main([*common, "--work", str(tmp_path / "sync")]) == 0
        server.reset()
        assert cli_main([*common, "--work", str(tmp_path / "batch"), "--llm-mode", "batch"]) == 0
        assert server.chat_requests == []
        assert len(server.batches) >= 3  # captioner, reviewer, refiner, QA: a round each (and re-asks)
    sync_release, batch_release = tmp_path / "sync" / "release", tmp_path / "batch" / "release"
    names = sorted(p.relative_to(sync_release) for p in sync_release.rglob("*") if p.is_file())
    assert names and names == sorted(
        p.relative_to(batch_release) for p in batch_release.rglob("*") if p.is_file()
    )
    for name in names:
        assert (batch_release / name).read_bytes() == (sync_release / name).read_bytes(), name


def bound_requests(n: int) -> list[LLMRequest]:
    return [LLMRequest([user_message(f"Item id: item-{i}\nName a colour.")], schema=SCHEMA, schema_name="A",
                       item_id=f"item-{i}") for i in range(n)]  # fmt: skip


def batch_client(server: BatchServer, tmp_path: Path, **settings) -> LLMClient:
    client = LLMClient(
        LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False, **settings),
        cache_path=tmp_path / "cache.sqlite", mode="batch",
    )  # fmt: skip
    assert client.batch is not None
    client.batch.poll_seconds = 0.01
    return client


def test_an_unknown_custom_id_and_a_swapped_reply_are_refused_never_applied(tmp_path, capsys):
    with BatchServer() as server:

        def swap(body):  # item-1's request gets a reply naming item-2
            item = re.search(r"Item id: (item-\d+)", json.dumps(body)).group(1)
            return {"answer": "red", "item_id": "item-2" if item == "item-1" else item}

        server.handler = swap
        server.extra_lines = [{"id": "x", "custom_id": "f" * 64, "response": {"status_code": 200, "request_id": "r",
                               "body": {"choices": []}}, "error": None}]  # fmt: skip
        with batch_client(server, tmp_path, max_validation_retries=1) as client:
            results = client.run(bound_requests(3))
        assert len(server.batches) == 2  # the swapped one asked again (a re-ask round), then given up
        second = [json.loads(x) for x in server.files[server.batches["batch_2"].input_file_id].splitlines()]
    assert [r.status for r in results] == [Status.OK, Status.FAILED, Status.OK]
    assert "names item item-2" in str(results[1].error) or "item-2" in str(results[1].error)
    assert [line["custom_id"] for line in second] == [results[1].key]
    assert "re-ask" in json.dumps(second[0]["body"]) or len(second[0]["body"]["messages"]) == 3
    assert "was never sent" in capsys.readouterr().err
    with LLMClient(client.settings, cache_path=tmp_path / "cache.sqlite") as again:
        assert again.cache is not None and len(again.cache) == 2  # item-1 was never cached


def test_an_expired_batch_keeps_its_partial_results_and_requeues_the_rest(tmp_path, capsys):
    with BatchServer() as server:
        server.outcome, server.partial = "expired", 2  # every batch expires after answering 2 lines
        with batch_client(server, tmp_path) as client:
            results = client.run(
                [LLMRequest([user_message(f"q{i}")], schema=SCHEMA, schema_name="A") for i in range(5)]
            )
        counts = [len(server.files[b.input_file_id].splitlines()) for b in server.batches.values()]
    assert all(r.ok for r in results)
    assert counts == [5, 3, 1]  # what each expired batch answered was kept; only the rest asked again
    err = capsys.readouterr().err
    assert "batch batch_1" in err and "ended expired" in err


def test_a_provider_without_batches_is_one_line_naming_the_endpoint(bqa, tmp_path, capsys):
    with BatchServer() as server:
        server.no_batches = True
        code = cli_main(evaluate_args(bqa.hub, tmp_path / "p.jsonl", server, "--llm-mode", "batch"))
        assert server.chat_requests == [] and not server.files
        url = server.url
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"{url}/batches: HTTP 404" in err[0], err


def test_estimate_and_budget_know_the_batch_price(bqa, tmp_path, capsys):
    with BatchServer() as server:
        args = evaluate_args(
            bqa.hub, tmp_path / "p.jsonl", server, "--estimate", "--price-in", "2", "--price-out", "8"
        )
        assert cli_main(args) == 0
        sync_line = capsys.readouterr().out
        assert cli_main([*args, "--llm-mode", "batch"]) == 0
        batch_line = capsys.readouterr().out
        assert "$1 / $4 per million" in batch_line and "$2 / $8 per million" in sync_line
        # a budget below one shard's estimate: the shard is not submitted, nothing is paid
        code = cli_main(evaluate_args(bqa.hub, tmp_path / "p.jsonl", server, "--llm-mode", "batch", "--price-in", "2",
                                      "--price-out", "8", "--max-cost", "0.0001"))  # fmt: skip
        assert code == 1 and server.batches == {} and not server.files


def test_the_offline_round_trip_through_batch_write_and_batch_read(bqa, tmp_path, capsys):
    """What vLLM's run_batch does, done here from the documented formats: read each request line, answer
    its body, write an output line."""
    with BatchServer(model=None) as server:
        server.handler = two_stage
        sync = tmp_path / "sync.jsonl"
        assert cli_main(evaluate_args(bqa.hub, sync, server, "--style", "multimodal_cot")) == 0
        server.reset()
        out = tmp_path / "batch.jsonl"
        command = ["--", *evaluate_args(bqa.hub, out, server, "--style", "multimodal_cot")]
        for round_number in (1, 2):
            folder = tmp_path / f"round{round_number}"
            assert cli_main(["llm", "batch", "write", str(folder), *command]) == 0
            said = capsys.readouterr().out
            files = sorted(folder.glob("*.jsonl"))
            assert len(files) == 1 and str(files[0]) in said
            results = tmp_path / f"results{round_number}.jsonl"
            with results.open("w") as fh:
                for n, raw in enumerate(files[0].read_text().splitlines()):
                    line = json.loads(raw)
                    jsonschema.validate(line, REQUEST_LINE)
                    status, body = server.answer(line["body"])
                    output = {"id": f"vllm-{n}", "custom_id": line["custom_id"],
                              "response": {"status_code": status, "request_id": f"r{n}", "body": body}, "error": None}  # fmt: skip
                    jsonschema.validate(output, OUTPUT_LINE)
                    fh.write(json.dumps(output) + "\n")
            batches = said.split("--batches ")[1].split("'")[0]
            assert cli_main(["llm", "batch", "read", str(results), "--batches", batches]) == 0
        assert cli_main(["llm", "batch", "write", str(tmp_path / "round3"), *command]) == 0
        assert "finished" in capsys.readouterr().out
        assert server.chat_requests == [] and server.batches == {}
    assert out.read_bytes() == sync.read_bytes()


def test_kills_at_every_stage_then_a_rerun_leave_one_batch_for_the_shard(bqa, tmp_path):
    """A real vqabench process SIGKILLed while the server holds its upload, then (rerun) its create (the
    batch exists, its id never reached the client), then a poll, then the results download; the last
    rerun finishes with the one batch the first create made, and no synchronous request."""
    out = tmp_path / "p.jsonl"
    env = {k: v for k, v in os.environ.items()
           if "proxy" not in k.lower() and not k.startswith(("VQABENCH_LLM", "VQABENCH_JUDGE"))}  # fmt: skip
    with BatchServer(model=None) as server:
        args = evaluate_args(bqa.hub, out, server, "--llm-mode", "batch", "--num-frames", "1", "--limit", "3")
        for stage in ("upload", "create", "poll", "content"):
            server.hold = {stage}
            process = subprocess.Popen([sys.executable, "-m", "builders.cli", *args], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
            try:
                assert server.reached[stage].wait(240), (
                    process.stderr.read() if process.poll() is not None else stage
                )
            finally:
                process.kill()
                process.wait()
                process.stderr.close()
            assert len(server.batches) == (0 if stage == "upload" else 1), stage
        server.hold = set()
        assert cli_main(args) == 0
        assert len(server.batches) == 1  # never a second batch for the same requests
        assert server.chat_requests == []
    assert len(out.read_text().splitlines()) == 3


def test_ctrl_c_while_polling_leaves_the_batches_running_and_says_how_to_resume_or_cancel(bqa, tmp_path):
    with BatchServer(model=None) as server:
        args = evaluate_args(
            bqa.hub, tmp_path / "p.jsonl", server, "--llm-mode", "batch", "--num-frames", "1"
        )
        server.hold = {"poll"}
        process = subprocess.Popen([sys.executable, "-m", "builders.cli", *args], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert server.reached["poll"].wait(240)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
        finally:
            process.kill()
        assert process.returncode == 130
        assert (
            "keep running" in err and "Rerun the same command" in err and "vqabench llm batch cancel" in err
        )
        (record,) = server.batches.values()
        assert record.status != "cancelled"


LLM_COMMANDS = [("bqa", "build"), ("bqa", "evaluate"), ("marinelife", "build"), ("marinelife", "evaluate"),
                ("marinelife", "judge"), ("judge", "score")]  # fmt: skip


def test_every_llm_command_offers_batch_mode_with_one_help_text():
    import argparse

    from builders.cli import build_parser

    def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return sub.choices[name]

    seen = set()
    for path in LLM_COMMANDS:
        parser = build_parser()
        for name in path:
            parser = subcommand(parser, name)
        options = {o: a for a in parser._actions for o in a.option_strings}
        mode = options["--llm-mode"]
        assert "batch" in mode.choices, path
        seen.add((mode.help, *(options[f].help for f in ("--llm-batch-max-requests", "--llm-batch-max-mb",
                                                        "--llm-batch-poll"))))  # fmt: skip
    assert len(seen) == 1


def test_judge_score_in_batch_mode_gives_the_synchronous_scores(tmp_path):
    rows = [{"answer": f"answer {i}", "answer_ref": f"reference {i}", "question": "How?"} for i in range(4)]
    data = tmp_path / "predictions.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with BatchServer() as server:

        def argv(name, *extra):
            return ["judge", "score", str(data), "--prediction-key", "answer", "--reference-key", "answer_ref",
                    "--out", str(tmp_path / f"{name}.json"), "--items", "--llm-model", "judge-model",
                    "--llm-base-url", server.url, "--llm-api-key-env", "none",
                    "--llm-cache", str(tmp_path / f"{name}.sqlite"), "--llm-batch-poll", "0.01", *extra]  # fmt: skip

        assert cli_main(argv("sync")) == 0
        server.reset()
        assert cli_main(argv("batch", "--llm-mode", "batch")) == 0
        assert server.chat_requests == [] and len(server.batches) == 1
    sync, batch = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("sync", "batch"))
    assert len(sync["items"]) == 4 and (sync["judge"]["api_calls"], batch["judge"]["api_calls"]) == (4, 0)
    assert {**batch, "judge": {**batch["judge"], "api_calls": 4}} == sync  # only no synchronous call differs


@pytest.mark.parametrize("limits", [(3, 200.0), (50_000, 2500 / 2**20)], ids=["requests", "bytes"])
def test_a_round_is_sharded_to_the_request_and_size_limits_one_batch_per_shard(tmp_path, limits):
    requests = [
        LLMRequest([user_message(f"q{i} " + "x" * 400)], schema=SCHEMA, schema_name="A") for i in range(7)
    ]
    with BatchServer() as server:
        with batch_client(server, tmp_path) as client:
            assert client.batch is not None
            client.batch.max_requests, client.batch.max_mb = limits
            results = client.run(requests)
        files = [server.files[b.input_file_id] for b in server.batches.values()]
    assert all(r.ok for r in results)
    sizes = [len(f.splitlines()) for f in files]
    assert sum(sizes) == 7 and len(files) == len(server.batches) >= 3  # one batch per shard
    assert all(n <= limits[0] for n in sizes) and all(len(f) <= limits[1] * 2**20 for f in files)
