"""``--preset bqa-paper``: the paper's models, frames and Gemini safety settings, set for the options
left unset and recorded in provenance (with the options that overrode them)."""

from __future__ import annotations

import json

import pytest

from bqa.paper import GEMINI_SAFETY_SETTINGS, MODELS
from bqa.workfolder import read_release
from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl
from builders.scripted.bqa_responder import BQAResponder
from builders.scripted.chat_requests import image_count
from builders.testing.chat_server import ChatServer
from builders.testing.samples.record_bqa_pipeline import oracle

SAFETY_BODY = {"extra_body": {"google": {"safety_settings": [dict(s) for s in GEMINI_SAFETY_SETTINGS[1:]]}}}


def evaluate(hub, out, server, *extra, verbose=False):
    args = [*(["-v"] if verbose else []), "bqa", "evaluate", "--data", str(hub), "--split", "test", "--out", str(out), "--preset", "bqa-paper",
            "--llm-base-url", server.url, "--llm-api-key-env", "none", *extra]  # fmt: skip
    return cli_main(args)


def test_the_paper_settings_per_model(built_samples, tmp_path):
    hub = built_samples["bqa"].hub
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        seen = {}
        for name, extra in (
            ("gpt", ["--llm-model", "GPT-4o"]),  # Table 1's label
            ("qwen", ["--llm-model", "Qwen/Qwen2-VL-7B-Instruct"]),
            ("gemini", ["--llm-model", "gemini-1.5-pro"]),
            (
                "gemini-safety",
                ["--llm-model", "gemini", "--llm-extra-body", json.dumps(SAFETY_BODY), "--fps", "2"],
            ),
        ):
            assert evaluate(hub, tmp_path / f"{name}.jsonl", server, *extra) == 0
            seen[name] = [r.body for r in server.chat_requests]
            server.reset()
        with pytest.raises(ValueError, match="not one of the paper's models"):
            evaluate(hub, tmp_path / "x.jsonl", server, "--llm-model", "gpt-4o-mini", verbose=True)
        with pytest.raises(ValueError, match="pass --llm-model with one of"):
            evaluate(hub, tmp_path / "y.jsonl", server, verbose=True)
    # API models at 1 fps (the sample's clips are 5 s: 5 frames), open models at 16 frames
    assert {b["model"] for b in seen["gpt"]} == {"gpt-4o-2024-08-06"}
    assert {image_count(b) for b in seen["gpt"]} == {5} and {image_count(b) for b in seen["qwen"]} == {16}
    assert {b["model"] for b in seen["gemini"]} == {"gemini-1.5-pro"}
    assert {image_count(b) for b in seen["gemini-safety"]} == {10}  # --fps 2 given: it wins, recorded below
    assert all(b["extra_body"] == SAFETY_BODY["extra_body"] for b in seen["gemini-safety"])
    records = {name: read_jsonl(tmp_path / f"{name}.jsonl")[0]["provenance"]["preset"] for name in seen}
    gpt = records["gpt"]
    assert (gpt["name"], gpt["paper_model"], gpt["model_id"], gpt["frames"]) == (
        "bqa-paper",
        "GPT-4o",
        "gpt-4o-2024-08-06",
        "*",
    )
    assert gpt["options_set"] == {"--llm-model": "gpt-4o-2024-08-06", "--fps": 1.0}
    assert (
        set(gpt["overridden"]) == {"--llm-base-url", "--llm-api-key-env"}
        and "gemini_safety_settings" not in gpt
    )
    assert records["qwen"]["options_set"] == {"--llm-model": "Qwen/Qwen2-VL-7B-Instruct", "--num-frames": 16}
    safety = records["gemini"]["gemini_safety_settings"]
    assert safety["requested"] == [dict(s) for s in GEMINI_SAFETY_SETTINGS] and len(safety["requested"]) == 5
    assert {s["threshold"] for s in safety["requested"]} == {"BLOCK_NONE"}
    assert safety["sent"] is False and "OpenAI-compatible endpoint" in safety["note"]
    sent = records["gemini-safety"]["gemini_safety_settings"]
    assert sent["sent"] is True and sent["where"] == "request body: extra_body.google.safety_settings"
    assert "--fps" in records["gemini-safety"]["overridden"]


def test_the_build_preset_asks_gemini_and_records_it_in_the_release(tmp_path):
    work = tmp_path / "work"
    with ChatServer(model=None) as server:
        server.handler = BQAResponder(answers=oracle())
        args = ["bqa", "build", "--sample", "--limit", "12", "--work", str(work), "--preset", "bqa-paper",
                "--llm-base-url", server.url, "--llm-api-key-env", "none"]  # fmt: skip
        assert cli_main(args) == 0
        models = {r.body["model"] for r in server.chat_requests}
        frames = {image_count(r.body) for r in server.chat_requests if image_count(r.body)}
    assert models == {MODELS[0].model_id} == {"gemini-1.5-pro"} and frames == {5}  # 1 fps
    preset = read_release(work).meta.extra["preset"]
    assert (preset["name"], preset["steps"], preset["model_id"]) == ("bqa-paper", "STEP2-4", "gemini-1.5-pro")
    assert preset["gemini_safety_settings"]["sent"] is False
    bound = json.loads((work / "build.json").read_text())
    assert bound["data"]["preset"] == preset  # a rerun without the preset's record is refused, not mixed
    with pytest.raises(ValueError, match="preset"):
        cli_main(["-v", "bqa", "build", "--sample", "--limit", "12", "--work", str(work), "--llm-model", "gemini-1.5-pro",
                  "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-api-key-env", "none", "--fps", "1"])  # fmt: skip


def test_the_help_names_the_paper_models():
    from bqa.paper import GENERATION_MODEL
    from builders.cli._bqa_paper import GENERATION_MODEL_ID, PAPER_MODEL_LABELS

    assert (
        PAPER_MODEL_LABELS == tuple(m.label for m in MODELS)
        and GENERATION_MODEL_ID == GENERATION_MODEL.model_id
    )
