"""``vqabench bqa evaluate``: a VideoLLM (the test server) answers a BQA split; predictions JSONL out.

The data is the bundled sample's release, rebuilt offline from its recorded replies, as a work
folder and as an exported Hub-layout folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from bqa.accuracy import BQA_PARSER
from bqa.data import open_split
from bqa.workfolder import read_release
from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl
from builders.report import PREDICTIONS_SCHEMA
from builders.scripted.bqa_responder import BQAResponder
from builders.scripted.chat_requests import image_count
from builders.testing.chat_faults import Fault
from builders.testing.chat_server import ChatServer

MODEL = "some-videollm"
SCHEMA = json.loads(PREDICTIONS_SCHEMA.read_text(encoding="utf-8"))
FIELDS = {"id", "style", "raw_output", "parsed_answer", "parse_reason", "answer_parser", "rationale", "answer_leaking", "reference",
          "choices", "difficulty", "gender", "age", "ethnicity", "correct", "model", "prompt", "prompt_version",
          "usage", "provenance"}  # fmt: skip


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bqa")
    assert (
        cli_main(
            [
                "bqa",
                "build",
                "--sample",
                "--replay",
                "--work",
                str(root / "work"),
                "--export",
                str(root / "hub"),
            ]
        )
        == 0
    )
    release = read_release(root / "work")
    answers = {tuple(r.choices): r.answer for rs in release.splits.values() for r in rs}
    return root, release, answers


def llm_args(server: ChatServer) -> list[str]:
    return ["--llm-model", MODEL, "--llm-base-url", server.url, "--llm-api-key-env", "none"]


def options_of(body: dict) -> tuple[str, ...]:
    text = body["messages"][0]["content"][-1]["text"]
    return tuple(re.findall(r"^[A-D]\. (.+)$", text, re.M))


def test_single_word_on_a_work_folder(data, tmp_path, capsys):
    root, release, answers = data
    out = tmp_path / "preds.jsonl"
    with ChatServer(model=None) as server:
        server.handler = responder = BQAResponder(answers=answers)
        args = [
            "bqa",
            "evaluate",
            "--data",
            str(root / "work"),
            "--split",
            "train",
            "--out",
            str(out),
            "--num-frames",
            "4",
        ]
        assert cli_main([*args, *llm_args(server)]) == 0
        bodies = [r.body for r in server.chat_requests]
    rows = release.splits["train"]
    predictions = read_jsonl(out)
    assert [p["id"] for p in predictions] == [r.id for r in rows]
    assert len(bodies) == len(rows) and {image_count(b) for b in bodies} == {4}
    replies = {options_of(b): responder(b) for b in bodies}
    for p, r in zip(predictions, rows, strict=True):
        assert set(p) == FIELDS and p["style"] == "single_word" and p["rationale"] is None
        assert (p["reference"], p["choices"], p["difficulty"], p["gender"]) == (
            r.answer,
            list(r.choices),
            r.difficulty,
            r.gender,
        )
        assert p["raw_output"] == replies[tuple(r.choices)]
        said = re.fullmatch(r"(?:Answer: )?(.+?)\.?", p["raw_output"]).group(1)
        assert p["parsed_answer"] == (said if said in r.choices else "unparsed")
        assert p["parse_reason"] in (("declared", "option_text") if said in r.choices else ("no_option",))
        assert p["answer_parser"] == BQA_PARSER.signature
        assert p["correct"] == (said == r.answer)
        assert (p["model"], p["prompt"]) == (MODEL, "bqa_answer_single_word")
        jsonschema.validate(p, SCHEMA)  # the documented predictions format
        run = p["provenance"]  # how the run was made, on every line
        assert run["tool"].startswith("videoqa-bench-tools ") and run["model_asked"] == MODEL
        assert run["data"]["folder"] == str((root / "work").resolve()) and run["data"]["fingerprint"]
        assert (run["split"], run["frames"]["num_frames"], run["frames"]["fps"]) == ("train", 4, None)
    right = sum(p["correct"] for p in predictions)
    assert 0 < right < len(predictions)
    assert f"accuracy {right / len(predictions):.3f}" in capsys.readouterr().out


def test_reason_then_answer_on_the_exported_folder_matches_the_work_folder(data, tmp_path):
    root, release, answers = data
    runs = {}
    with ChatServer(model=None) as server:
        server.handler = BQAResponder(answers=answers)
        for name, style in (("hub", "reason_then_answer"), ("work", "reason_then_answer")):
            out = tmp_path / f"{name}.jsonl"
            args = ["bqa", "evaluate", "--data", str(root / name), "--split", "test", "--out", str(out),
                    "--style", style, "--fps", "1"]  # fmt: skip
            assert cli_main([*args, *llm_args(server)]) == 0
            runs[name] = (read_jsonl(out), [r.body for r in server.chat_requests])
            server.reset()
    predictions, bodies = runs["hub"]
    assert [p["id"] for p in predictions] == [r.id for r in release.splits["test"]]
    assert {image_count(b) for b in bodies} == {5}  # 1 fps over 5 s, from the clip bytes in Parquet
    for p in predictions:
        rationale, answer = re.fullmatch(r"Rationale: (.+)\nAnswer: (.+)", p["raw_output"]).groups()
        assert (p["rationale"], p["parsed_answer"], p["style"]) == (rationale, answer, "reason_then_answer")
        assert p["prompt"] == "bqa_answer_rationale" and p["answer_leaking"] is False

    # The same frames reach the model from either folder: identical requests, identical predictions.
    def canonical(bodies):
        return sorted(json.dumps(b, sort_keys=True) for b in bodies)  # arrival order varies

    assert canonical(runs["hub"][1]) == canonical(runs["work"][1])

    # Identical predictions; only the recorded data source differs (each names its own folder).
    def without_source(lines):
        return [{**p, "provenance": {k: v for k, v in p["provenance"].items() if k != "data"}} for p in lines]

    assert without_source(runs["hub"][0]) == without_source(runs["work"][0])
    assert runs["hub"][0][0]["provenance"]["data"]["folder"] == str((root / "hub").resolve())


def test_failed_rows_are_retried_on_rerun_and_nothing_else(data, tmp_path, capsys):
    root, release, answers = data
    rows = release.splits["train"][:6]
    doomed = {tuple(r.choices) for r in rows[1:3]}
    responder, broken = BQAResponder(answers=answers), [True]

    def handler(body):
        return Fault.malformed() if broken[0] and options_of(body) in doomed else responder(body)

    out = tmp_path / "p.jsonl"
    with ChatServer(model=None) as server:
        server.handler = handler
        args = ["bqa", "evaluate", "--data", str(root / "work"), "--split", "train", "--out", str(out),
                "--limit", "6", "--num-frames", "2", *llm_args(server)]  # fmt: skip
        assert cli_main(args) == 1
        assert not out.exists() and "2 LLM call(s) failed" in capsys.readouterr().out
        answered = {json.dumps(r.body, sort_keys=True) for r in server.chat_requests if r.fault is None}
        assert len(answered) == 4
        server.reset()
        broken[0] = False
        assert cli_main(args) == 0
        again = [r.body for r in server.chat_requests]
        assert sorted(options_of(b) for b in again) == sorted(doomed)
        assert not answered & {json.dumps(b, sort_keys=True) for b in again}
        assert [p["id"] for p in read_jsonl(out)] == [r.id for r in rows]
        server.reset()
        assert cli_main(args) == 0 and server.chat_requests == []  # finished: nothing asked again
        with pytest.raises(ValueError, match=r"data.split: was 'train', now 'test'"):
            cli_main(["-v", *args[:5], "test", *args[6:]])


def test_bad_data_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither a BQA work folder"):
        open_split(tmp_path, "test")
    with pytest.raises(ValueError, match="unknown split 'valid'"):
        open_split(tmp_path, "valid")


def test_estimate_sends_nothing_and_counts_what_a_run_would_send(data, tmp_path, capsys, caplog):
    root, release, _ = data
    rows = release.splits["train"]
    args = ["bqa", "evaluate", "--data", str(root / "hub"), "--split", "train", "--out", str(tmp_path / "p.jsonl"),
            "--num-frames", "4", "--price-in", "2.5", "--price-out", "10"]  # fmt: skip
    with ChatServer(model=None) as server:
        assert cli_main([*args, *llm_args(server), "--estimate"]) == 0
        assert server.chat_requests == []
        out = capsys.readouterr().out
        assert f"{len(rows)} requests to send:" in out
        assert f"{4 * len(rows)} images" in out and "$" in out
        # A budget below one request's estimate: nothing is sent, the run stops cleanly and says so.
        assert cli_main([*args, *llm_args(server), "--max-cost", "0.000001"]) == 1
        assert server.chat_requests == []
        assert "--max-cost budget" in capsys.readouterr().out
        # Paid in full (HTTP request logs only with -v), then estimated again: nothing left to send.
        caplog.set_level("INFO")
        assert cli_main([*args, *llm_args(server)]) == 0
        assert server.chat_requests and not [
            r for r in caplog.records if r.name.startswith(("httpx", "openai"))
        ]
        assert "spent this run: tokens in " in capsys.readouterr().out
        capsys.readouterr()
        assert cli_main([*args, *llm_args(server), "--estimate"]) == 0
        assert "0 requests to send:" in capsys.readouterr().out


def test_a_clip_shared_by_rows_is_decoded_once_per_frame_spec(tmp_path, monkeypatch):
    # BoLD clips with several annotated persons are several rows (interleaved here, as a split may
    # order them), given as paths and as Hub-style embedded bytes; each row's request must carry
    # its clip's own frames, and each clip is decoded once per frame spec (decodes counted at the
    # sampler, in this process: a step with fewer clips than PROCESS_MIN_CLIPS starts no worker
    # process, however many rows it has).
    from bqa.data import BQASplitData
    from builders.evaluation.bqa import evaluate
    from builders.hub.split_data import by_id
    from builders.llm import LLMClient, LLMSettings
    from builders.runs.llm_step import PROCESS_MIN_CLIPS
    from builders.scripted.chat_requests import image_urls
    from builders.testing.clips import write_clip
    from builders.video.frame_spec import FrameSpec
    from builders.video.sampler import ClipReader

    clips = [write_clip(tmp_path / f"clip{k}.mp4", num_frames=30 + 10 * k, seed=k) for k in range(3)]
    sources = [clips[0], clips[1], {"path": "clip2.mp4", "bytes": clips[2].read_bytes()}]
    labels = ["Happiness", "Pleasure", "Anger", "Sadness"]
    rows = [
        {"id": f"r{i}", "question": f"How does person {i} feel?", "choices": labels, "answer": labels[i % 4],
         "difficulty": "Easy", "gender": "Female", "age": "Adult", "ethnicity": "White"}
        for i in range(40)
    ]  # fmt: skip
    assert len(rows) > PROCESS_MIN_CLIPS
    clip = {row["id"]: sources[i % 3] for i, row in enumerate(rows)}
    data = BQASplitData("bench", "test", rows, by_id(rows, "bench"), clip.__getitem__)
    decodes: list[tuple[str, int]] = []
    real = ClipReader.get_frames_at

    def counted(self, indices, **kwargs):
        decodes.append((Path(self.name.split(" ")[0]).name, len(indices)))
        return real(self, indices, **kwargs)

    for num_frames in (4, 6):
        spec = FrameSpec(fps=None, num_frames=num_frames)
        expected = {k: spec.data_urls(clips[k]) for k in range(3)}  # decoded here, independently
        monkeypatch.setattr(ClipReader, "get_frames_at", counted)
        with ChatServer(model=None) as server:
            server.handler = BQAResponder()
            settings = LLMSettings(model=MODEL, base_url=server.url, api_key_env=None, progress=False,
                                   max_concurrency=8)  # fmt: skip
            with LLMClient(settings, cache_path=tmp_path / f"cache{num_frames}.sqlite") as client:
                summary = evaluate(
                    data, client, tmp_path / f"work{num_frames}", tmp_path / "p.jsonl", frames=spec
                )
            assert summary.ok and len(server.chat_requests) == len(rows)
            for request in server.chat_requests:
                row = int(re.search(r"person (\d+)", request.body["messages"][0]["content"][-1]["text"])[1])
                assert image_urls(request.body) == expected[row % 3]
        assert sorted(decodes) == [(f"clip{k}.mp4", num_frames) for k in range(3)]
        decodes.clear()
        monkeypatch.undo()
