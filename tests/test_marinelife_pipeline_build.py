"""End to end: the MarineLife-16K pipeline against the real test chat server and the sample's real MP4s.

The server answers with the scripted responder (:mod:`builders.scripted.marinelife_responder`); the
tests check what the pipeline made of its replies against values computed here from the attributes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from http_trap import http_trap

from builders.cli import main as cli_main
from builders.llm import LLMClient, LLMSettings, ReplyCache
from builders.pipelines.marinelife import captioner
from builders.pipelines.marinelife.caption_engine import read_captions
from builders.pipelines.marinelife.runner import PipelineConfig, build, load_recording
from builders.scripted.chat_requests import message_text
from builders.scripted.marinelife_responder import MarineLifeResponder, parse_attributes, review_score
from builders.testing.chat_server import ChatServer
from builders.testing.samples.record_marinelife_pipeline import record
from marinelife16k.annotations import read_annotations
from marinelife16k.questions import applicable_types
from marinelife16k.sample import sample_attributes_path, sample_qa_path, sample_root, sample_video_root
from marinelife16k.vocabulary import ATTRIBUTES
from marinelife16k.workfolder import read_release

QA_SCHEMA, REFINE_SCHEMA = "marinelife_qa_distractors", "marinelife_caption_refined"


def _schema_name(request) -> str:
    return ((request.body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def _settings(server: ChatServer, **overrides) -> LLMSettings:
    return LLMSettings(model="test-model", base_url=server.url, api_key_env=None, progress=False, **overrides)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _subset(tmp_path: Path, rows: list[dict], video_ids: list[str]) -> Path:
    path = tmp_path / "attributes.jsonl"
    chosen = [r for r in rows if r["video_id"] in video_ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def rows():
    return read_annotations(sample_attributes_path(), video_root=sample_video_root())


@pytest.fixture(scope="module")
def responder(rows):
    return MarineLifeResponder(rows, sample_video_root(), captioner.frame_spec())


@pytest.fixture(scope="module")
def built(tmp_path_factory, responder):
    """The whole sample built once against the server: work folder, summary, the requests it sent."""
    work = tmp_path_factory.mktemp("marinelife-pipeline") / "work"
    with ChatServer() as server:
        server.handler = responder
        settings = _settings(server)
        with LLMClient(settings, cache_path=work / "llm-cache.sqlite") as client:
            result = build(work, client, attributes=sample_attributes_path(), video_root=sample_video_root())
        assert server.errors == []
        requests = server.chat_requests
    return work, result, requests, settings


def test_captions_take_both_paths_as_the_reviewer_scored(built, rows):
    work, result, requests, _ = built
    assert result.ok and result.failed == {}
    captions = {c["id"]: c for c in read_captions(work)}
    assert set(captions) == {r["id"] for r in rows}
    paths = Counter(c["path"] for c in captions.values())
    assert paths["kept"] > 0 and paths["refined"] > 0
    for row in rows:
        c = captions[row["id"]]
        # S_c is what the reviewer replied: the responder's coverage score, recomputed here
        assert c["s_c"] == review_score(c["draft_caption"], {n: row[n] for n in ATTRIBUTES})[0]
        assert c["tau"] == 3.5
        if c["s_c"] < 3.5:
            assert c["path"] == "refined" and c["final_caption"] == c["refined_caption"] != c["draft_caption"]
            assert row["central_object"] in c["final_caption"]
        else:
            assert (
                c["path"] == "kept"
                and c["final_caption"] == c["draft_caption"]
                and c["refined_caption"] is None
            )
            assert c["llm"]["refine"] is None
    refine_requests = [r for r in requests if _schema_name(r) == REFINE_SCHEMA]
    assert len(refine_requests) == paths["refined"]
    assert result.details.captions["kept"] == paths["kept"]
    assert result.details.captions["refined"] == paths["refined"]
    drafts = [r for r in requests if _schema_name(r) == "marinelife_caption_draft"]
    assert len(drafts) == len(rows)
    assert all(sum(p["type"] == "image_url" for p in r.body["messages"][0]["content"]) == 8 for r in drafts)


def test_qa_release_follows_the_attributes(built, rows):
    work, result, _, _ = built
    release = read_release(work)  # validates every record against the video rows
    captions = {c["id"]: c["final_caption"] for c in read_captions(work)}
    by_video: dict[str, list[dict]] = {}
    for qa_record in release.records:
        by_video.setdefault(qa_record["id"], []).append(qa_record)
    # The hand-written sample says which videos' movement_behavior is about the central object, and
    # which words are: the responder's replies must have led the pipeline to the same decisions.
    hand = {
        r["id"]: r["answer_text"] for r in _jsonl(sample_qa_path()) if r["type"] == "central_object_motion"
    }
    assert any(row["movement_behavior"] and row["id"] not in hand for row in rows)  # some are not asked
    assert any(
        row["id"] in hand and hand[row["id"]] != row["movement_behavior"] for row in rows
    )  # one is cut
    not_asked = {e["id"]: e for e in release.not_asked() if e["type"] == "central_object_motion"}
    without_conditional = 0
    for row in rows:
        records = by_video[row["id"]]
        assert [r["type"] for r in records] == applicable_types(row, central_object_motion=row["id"] in hand)
        expected_conditional = {
            t for t, a in (("central_object_motion", "movement_behavior"), ("environment", "environment"),
                           ("lighting", "lighting")) if row[a] and (t != "central_object_motion" or row["id"] in hand)
        }  # fmt: skip
        if row["id"] in hand:
            assert {r["type"]: r for r in records}["central_object_motion"]["answer_text"] == hand[row["id"]]
        else:
            reason = not_asked[row["id"]]
            assert reason["why"] == (
                "attribute empty" if not row["movement_behavior"] else "not about the central object"
            )
        assert {r["type"] for r in records} & {"central_object_motion", "environment", "lighting"} == (
            expected_conditional
        )
        without_conditional += len(expected_conditional) < 3
        kinds = {r["type"]: r for r in records}
        assert kinds["caption"]["answer_text"] == captions[row["id"]]
        assert kinds["camera_motion"]["answer_text"] == (
            f"camera position/view: {row['camera_position']}; camera angle/movement: {row['camera_angle']}"
        )
        for qa_record in records:
            if qa_record["options"]:
                texts = [o["text"] for o in qa_record["options"]]
                assert len({t.casefold().strip() for t in texts}) == 4
                chosen = {o["label"]: o["text"] for o in qa_record["options"]}[qa_record["answer"]]
                assert chosen == qa_record["answer_text"]
    assert without_conditional > 0
    per_type = Counter(r["type"] for r in release.records)
    assert result.details.qa["per_type"] == dict(per_type)
    assert result.details.qa["records"] == len(release.records)
    assert result.details.qa["central_object_motion"] == {
        "asked": len(hand),
        "movement_empty": sum(not row["movement_behavior"] for row in rows),
        "not_about_central_object": sum(
            bool(row["movement_behavior"]) and row["id"] not in hand for row in rows
        ),
    }
    assert release.meta["provenance"]["prompts"]["reviewer"].startswith("rubric:marinelife_caption_review")
    assert json.loads((work / "summary.json").read_text())["status"] == "complete"


def test_invalid_first_replies_were_reasked(built):
    work, result, requests, _ = built
    qa = [r for r in requests if _schema_name(r) == QA_SCHEMA]
    reasks = [r for r in qa if len(r.body["messages"]) == 3]
    assert reasks, "the responder spoils some first replies; they must be re-asked"
    assert result.details.llm["per_step"]["qa"]["reasks"] == len(reasks)
    items = _jsonl(work / "steps" / "qa.jsonl")
    for request in reasks:
        problem = message_text(request.body["messages"][2])
        bad = json.loads(request.body["messages"][1]["content"])
        central = parse_attributes(message_text(request.body["messages"][0]))["central_object"]
        (item,) = [i for i in items if i["records"][0]["central_object"] == central]
        options = {o["text"] for r in item["records"] for o in r["options"]}
        if "is the correct answer" in problem:
            assert bad["central_object"][0] == central.upper() and central.upper() not in options
        elif "central_object_motion_check" in problem:
            movement = bad["central_object_motion_check"]["central_object_movement"]
            assert movement.startswith("gracefully ") and "does not: gracefully" in problem
        else:
            assert "must describe a movement or state" in problem
            assert bad["central_object_motion"][0] == "a reef shark circling the area" not in options
    tokens = result.details.llm["total"]
    assert tokens["prompt_tokens"] > 0 and tokens["prompt_tokens"] == result.run.prompt_tokens
    assert result.run.api_calls == len(requests)


def test_replay_from_the_cache_sends_no_request(built, tmp_path):
    work, result, _, settings = built  # the recording server is gone: replay must not need it
    with http_trap() as trap:  # any request sent would land here
        with LLMClient(settings, cache_path=work / "llm-cache.sqlite", mode="replay") as client:
            again = build(
                tmp_path / "work", client, attributes=sample_attributes_path(), video_root=sample_video_root()
            )
        assert trap.requests == []
    assert again.ok
    assert (tmp_path / "work/release/qa.jsonl").read_bytes() == (work / "release/qa.jsonl").read_bytes()
    assert again.details.llm == result.details.llm  # recorded re-asks and tokens carry over
    assert again.run.api_calls == 0


def test_bundled_sample_rebuilds_offline(tmp_path, capsys):
    recording = load_recording(sample_root())
    replies = _jsonl(recording.replies_path)
    settings = json.loads(recording.settings_path.read_text())
    assert "scripted responder" in settings["note"] and "api_key" not in json.dumps(settings)
    with http_trap() as trap:  # any request sent would land here
        code = cli_main(["marinelife", "build", "--work", str(tmp_path / "work"), "--sample", "--replay",
                         "--export", str(tmp_path / "hub")])  # fmt: skip
        assert trap.requests == []
    assert code == 0
    out = capsys.readouterr().out
    assert "status: complete" in out and "load_dataset check passed" in out
    summary = json.loads((tmp_path / "work/summary.json").read_text())
    assert summary["llm"]["total"]["requests"] == len(replies)
    assert summary["this_run"]["cache_hits"] == len(replies) and summary["this_run"]["api_calls"] == 0
    release = read_release(tmp_path / "work")
    # Same questions as the hand-made ground-truth sample (types follow the attributes), other distractors.
    truth = _jsonl(sample_qa_path())
    assert [(r["question_id"], r["type"]) for r in release.records] == [
        (r["question_id"], r["type"]) for r in truth
    ]
    fixed = ("central_object", "central_object_appearance", "object_detect", "camera_motion", "environment")
    for made, gt in zip(release.records, truth, strict=True):
        if made["type"] in fixed:
            assert made["answer_text"] == gt["answer_text"]
    # The card says where the "LLM" replies came from.
    assert "scripted responder" in release.meta["provenance"]["note"]
    assert "scripted responder" in (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")


def test_recording_again_reproduces_the_bundled_replies(tmp_path):
    summary = record(tmp_path)
    assert summary.ok and summary.status == "complete"
    again, bundled = load_recording(tmp_path), load_recording(sample_root())
    assert again.replies_path.read_bytes() == bundled.replies_path.read_bytes()
    assert again.settings_path.read_bytes() == bundled.settings_path.read_bytes()


def test_crash_and_resume_pays_no_call_twice(built, tmp_path, responder):
    work = tmp_path / "work"
    answered, hold, lock = Counter(), threading.Event(), threading.Lock()

    def held_qa(body):  # the first 4 QA replies go out; the rest wait for the kill, so it lands mid-step
        if _schema_name_of(body) == QA_SCHEMA:
            with lock:
                answered["qa"] += 1
                late = answered["qa"] > 4
            if late:
                hold.wait(120)
        return responder(body)

    with ChatServer() as server:
        server.handler = held_qa
        command = [
            sys.executable, "-m", "builders.cli", "marinelife", "build", "--work", str(work), "--sample",
            "--llm-model", "test-model", "--llm-base-url", server.url, "--ahead", "2",
        ]  # fmt: skip
        env = {**os.environ, "VQABENCH_LLM_API_KEY_ENV": "none"}
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        partial = work / "steps" / "qa.partial.jsonl"
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if partial.is_file() and partial.read_text(encoding="utf-8").count("\n") >= 2:
                break
            time.sleep(0.005)
        process.kill()
        process.wait()
        hold.set()
        assert partial.is_file(), process.stderr.read().decode()[-2000:]
        assert not (work / "steps" / "qa.jsonl").exists(), "the run finished before it could be killed"
        server.wait_idle()  # the killed run's requests still in flight are answered (and logged) first
        with ReplyCache(work / "llm-cache.sqlite") as cache:
            cached = len(cache)
        with sqlite3.connect(work / "llm-cache.sqlite") as db:  # first replies paid, their re-ask not yet
            pending = db.execute("SELECT COUNT(*) FROM reasks").fetchone()[0]
        server.reset()
        server.handler = responder
        with LLMClient(_settings(server), cache_path=work / "llm-cache.sqlite") as client:
            result = build(work, client, attributes=sample_attributes_path(), video_root=sample_video_root())
        first_asks = [r for r in server.chat_requests if len(r.body["messages"]) == 1]
    assert result.ok
    # Every request answered and cached before the kill was served from the cache, and every first reply
    # paid whose re-ask the kill cut was re-asked from, not asked again: only the rest went out.
    assert len(first_asks) == result.details.llm["total"]["requests"] - cached - pending
    assert all(_schema_name(r) == QA_SCHEMA for r in first_asks)  # the caption steps had finished
    assert (work / "release/qa.jsonl").read_bytes() == (built[0] / "release/qa.jsonl").read_bytes()


def test_a_reply_that_stays_invalid_is_reported_then_retried(tmp_path, rows, responder):
    attributes = _subset(tmp_path, rows, ["mvk-0103", "mvk-0125", "msc-0007"])
    spoiled = "clownfish"

    def stubborn(body):
        reply = responder(body)
        if _schema_name_of(body) == QA_SCHEMA and f"- central_object: {spoiled}" in message_text(
            body["messages"][0]
        ):
            reply["central_object"][0] = spoiled.title()  # the answer again, on every attempt
        return reply

    work = tmp_path / "work"
    with ChatServer() as server:
        server.handler = stubborn
        settings = _settings(server, max_validation_retries=1)
        with LLMClient(settings, cache_path=work / "llm-cache.sqlite") as client:
            first = build(work, client, attributes=attributes, video_root=sample_video_root())
        assert not first.ok and not (work / "release").exists() and first.release is None
        assert list(first.failed) == ["qa"] and list(first.failed["qa"]) == ["MVK--mvk-0125"]
        assert "is the correct answer" in first.failed["qa"]["MVK--mvk-0125"]
        assert first.not_run == ("release",) and "not run yet: release" in first.format()
        spoiled_asks = [r for r in server.chat_requests if f"- central_object: {spoiled}" in message_text(r.body["messages"][0])
                        and _schema_name(r) == QA_SCHEMA]  # fmt: skip
        assert len(spoiled_asks) == 2  # asked, re-asked once, then reported
        assert list(json.loads((work / "summary.json").read_text())["steps"]["qa"]["failed"]) == [
            "MVK--mvk-0125"
        ]

        # Dropping it instead: the other videos make a release, the video is rejected as llm_failure.
        dropped = tmp_path / "dropped"
        with LLMClient(settings, cache_path=work / "llm-cache.sqlite") as client:
            config = PipelineConfig(reject_failures=True)
            partial = build(
                dropped, client, attributes=attributes, video_root=sample_video_root(), config=config
            )
        assert partial.ok and partial.steps["qa"].rejected == {"llm_failure": 1}
        assert {v["id"] for v in read_release(dropped).videos} == {"MVK--mvk-0103", "MSC--msc-0007"}

        # The model behaves now: the rerun asks only for what failed.
        server.handler = responder
        server.reset()
        with LLMClient(settings, cache_path=work / "llm-cache.sqlite") as client:
            second = build(work, client, attributes=attributes, video_root=sample_video_root())
        assert second.ok
        assert [_schema_name(r) for r in server.chat_requests] == [QA_SCHEMA]
    assert len(read_release(work).videos) == 3


def _schema_name_of(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def test_tau_decides_the_path_and_binds_the_work_folder(tmp_path, rows, responder):
    attributes = _subset(tmp_path, rows, ["mvk-0103", "mvk-0117", "mvk-0125", "mvk-0131"])
    work = tmp_path / "work"
    with ChatServer() as server:
        server.handler = responder
        with LLMClient(_settings(server), cache_path=work / "llm-cache.sqlite") as client:
            result = build(work, client, attributes=attributes, video_root=sample_video_root(),
                           config=PipelineConfig(tau=0.0))  # fmt: skip
            assert result.details.captions["refined"] == 0 and result.details.captions["kept"] == 4
            assert not any(_schema_name(r) == REFINE_SCHEMA for r in server.chat_requests)
            assert min(c["s_c"] for c in read_captions(work)) < 3.5  # would have been refined at 3.5
            sent = len(server.chat_requests)
            with pytest.raises(ValueError, match=r"config\.tau: was 0\.0, now"):
                build(
                    work,
                    client,
                    attributes=attributes,
                    video_root=sample_video_root(),
                    config=PipelineConfig(tau=4),
                )
            assert len(server.chat_requests) == sent


def test_cli_errors_are_clear(tmp_path, capsys):
    assert cli_main(["marinelife", "build", "--work", str(tmp_path / "w")]) == 2
    assert "give --attributes and --video-root" in capsys.readouterr().err
    assert (
        cli_main(["marinelife", "build", "--work", str(tmp_path / "w"), "--sample", "--replay", "--tau", "3"])
        == 2
    )
    assert "recorded with other settings: --tau 3.0 (recorded: 3.5)" in capsys.readouterr().err
    assert cli_main(["marinelife", "build", "--work", str(tmp_path / "w"), "--sample", "--replay",
                     "--llm-seed", "3"]) == 2  # fmt: skip
    assert "recorded with; drop --llm-seed" in capsys.readouterr().err
    missing = tmp_path / "none.csv"
    with pytest.raises(SystemExit) as refused:  # refused as the command line is parsed (issue 29)
        cli_main(["marinelife", "build", "--work", str(tmp_path / "w"), "--attributes", str(missing),
                  "--video-root", str(tmp_path), "--llm-model", "m"])  # fmt: skip
    assert (
        refused.value.code == 2
        and f"argument --attributes: {missing}: no such file" in capsys.readouterr().err
    )
