"""The BQA build end to end on the bundled sample, against the real test chat server.

The server answers with the scripted responder (a deterministic function of each request), so a
test can recompute what the model said for any logged request and check what the pipeline did
with it: kept, rejected with the right reason, labelled Easy/Hard, split by film.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
from collections import Counter
from pathlib import Path

import av
import pytest

from bqa.bold import read_bold
from bqa.candidates import extract_candidates
from bqa.sample import sample_root
from bqa.workfolder import read_release
from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMSettings
from builders.pipelines.bqa.runner import BuildOptions, build
from builders.scripted.bqa_responder import (
    CARELESS_FORMS,
    FILTER_SCHEMA,
    GARBAGE,
    QUESTION_SCHEMA,
    BQAResponder,
    schema_name,
)
from builders.scripted.chat_requests import image_count
from builders.testing.chat_faults import Fault, Reply
from builders.testing.chat_server import ChatServer
from builders.testing.samples.record_bqa_pipeline import oracle

MODEL = "scripted-bqa"
RULE_REASONS = {"rule_no_question_mark", "rule_multiline", "rule_names_candidate"}


def settings(server: ChatServer, **kw) -> LLMSettings:
    return LLMSettings(model=MODEL, base_url=server.url, api_key_env=None, progress=False, **kw)


def run_build(server: ChatServer, work: Path, limit: int | None = None, **options):
    with LLMClient(settings(server), cache_path=work / "llm-cache.sqlite") as client:
        return build(work, BuildOptions(sample_root(), limit=limit, **options), client)


def release_files(work: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted((work / "release").iterdir())
        if p.suffix in (".jsonl", ".json")
    }


def records(work: Path, name: str, drop=("usage",)) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in drop} for r in read_jsonl(work / "steps" / name)]


def kind(body: dict) -> str:
    name = schema_name(body)
    return {QUESTION_SCHEMA: "question", FILTER_SCHEMA: "filter"}.get(name, "answer")


def first_attempts(server: ChatServer) -> list[dict]:
    """Bodies of the requests that were not re-asks (one user turn)."""
    return [r.body for r in server.chat_requests if sum(m["role"] == "user" for m in r.body["messages"]) == 1]


def names_a_candidate(question: str, choices: list[str]) -> bool:
    words = set(re.findall(r"[a-z/]+", question.lower()))
    return any(c.lower() in words or CARELESS_FORMS.get(c) in words for c in choices)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A fault-free build of the whole sample, with the server's request log."""
    work = tmp_path_factory.mktemp("reference")
    with ChatServer(model=None) as server:
        server.handler = BQAResponder(answers=oracle())
        summary = run_build(server, work)
        yield work, summary, server.chat_requests


def test_full_build_keeps_and_rejects_for_the_stated_reasons(reference):
    work, summary, log = reference
    responder = BQAResponder(answers=oracle())
    rows = {a.id: a for a in read_bold(sample_root()).annotations}
    candidates = {r["id"]: r for r in records(work, "candidates.jsonl")}
    assert list(candidates) == list(rows)  # every row, BoLD order
    for i, c in candidates.items():
        assert c["answer"] == extract_candidates(rows[i].emotions, key=i, seed=0).answer

    by_kind: dict[str, list[dict]] = {}
    for r in log:
        assert r.status == 200
        by_kind.setdefault(kind(r.body), []).append(r.body)
    # STEP2: one request per clip, 5 frames each (1 fps over a 5 s clip).
    assert len(by_kind["question"]) == 38
    assert {image_count(b) for b in by_kind["question"]} == {5}
    questions = {r["id"]: r for r in records(work, "questions.jsonl")}
    asked = Counter(responder(b)["question"].strip() for b in by_kind["question"])
    assert Counter(q["question"] for q in questions.values()) == asked
    assert {(q["model"], q["prompt"], q["prompt_version"]) for q in questions.values()} == {
        (MODEL, "bqa_question", "2")
    }

    # STEP3: rules first (each reject checked independently), the LLM sees only what passed.
    kept = {r["id"]: r for r in records(work, "filter.jsonl")}
    rejects = read_jsonl(work / "steps" / "filter.rejects.jsonl")
    assert len(kept) + len(rejects) == 38 and not set(kept) & {r["id"] for r in rejects}
    reasons = Counter(r["_reason"] for r in rejects)
    assert set(reasons) >= {
        "rule_no_question_mark",
        "rule_names_candidate",
        "llm_leaks_answer",
        "llm_not_objective",
    }

    def filter_key(text: str) -> tuple[str, str]:
        return re.search(r"^Question: (.*)$", text, re.M).group(1), re.search(
            r"^Choices: (.*)$", text, re.M
        ).group(1)

    verdicts = {filter_key(b["messages"][0]["content"]): responder(b) for b in by_kind["filter"]}
    for r in rejects:
        q, choices = r["question"], candidates[r["id"]]["choices"]
        assert r["_detail"]
        if r["_reason"] == "rule_no_question_mark":
            assert not q.strip().endswith("?")
        elif r["_reason"] == "rule_multiline":
            assert "\n" in q.strip()
        elif r["_reason"] == "rule_names_candidate":
            assert names_a_candidate(q, choices)
        else:
            flag = {
                "llm_leaks_answer": "leaks_answer",
                "llm_harmful": "harmful",
                "llm_not_objective": "objective",
            }
            verdict = verdicts[q, ", ".join(choices)]
            assert verdict[flag[r["_reason"]]] is (r["_reason"] != "llm_not_objective")
            assert r["_detail"] == verdict["reason"]
    rule_rejected = sum(n for reason, n in reasons.items() if reason in RULE_REASONS)
    assert len(by_kind["filter"]) == 38 - rule_rejected
    for r in kept.values():
        assert r["question"].endswith("?") and "\n" not in r["question"]
        assert not names_a_candidate(r["question"], candidates[r["id"]]["choices"])
        assert r["verdict"] == verdicts[r["question"], ", ".join(candidates[r["id"]]["choices"])]

    # STEP4, as the paper labels it: Easy iff the reply names the STEP1 answer; Hard when the model
    # could not answer - another choice (wrong_choice) or no choice at all (no_answer), nothing dropped.
    assert len(by_kind["answer"]) == len(kept)
    labelled = {r["id"]: r for r in records(work, "difficulty.jsonl")}
    assert len(labelled) == len(kept) and read_jsonl(work / "steps" / "difficulty.rejects.jsonl") == []
    for r in labelled.values():
        if r["reply"] == GARBAGE:
            assert (r["difficulty"], r["difficulty_reason"], r["parsed"]) == ("Hard", "no_answer", "unparsed")
            continue
        said = re.fullmatch(r"(?:Answer: )?(.+?)\.?", r["reply"]).group(1)
        right = said == candidates[r["id"]]["answer"]
        assert (r["difficulty"], r["difficulty_reason"]) == (
            ("Easy", "right_choice") if right else ("Hard", "wrong_choice")
        )
    unanswered = [r for r in labelled.values() if r["reply"] == GARBAGE]
    assert unanswered  # the responder declines some: they are Hard, with their reason
    easy = sum(r["difficulty"] == "Easy" for r in labelled.values())
    assert 0 < easy < len(labelled)

    # The release: the labelled rows, each film in one split, clips without audio.
    release = read_release(work)
    released = {r.id: (split, r) for split, rs in release.splits.items() for r in rs}
    assert set(released) == set(labelled)
    films = {}
    for split, r in released.values():
        assert films.setdefault(r.source.film_id, split) == split
        assert r.question == kept[r.id]["question"] and r.difficulty == labelled[r.id]["difficulty"]
        assert r.difficulty_reason == labelled[r.id]["difficulty_reason"]
        assert r.provenance.difficulty.prompt == "bqa_answer_single_word"
    assert all(release.splits[s] for s in release.splits)
    for _, r in list(released.values())[:3]:
        with av.open(str(release.clip_path(r))) as clip:
            assert [s.type for s in clip.streams] == ["video"]
            assert sum(1 for p in clip.demux(clip.streams.video[0]) if p.size) == 125

    # The summary says what the files say.
    assert summary.ok
    assert summary.steps["filter"].kept == len(kept) and summary.steps["filter"].rejected == dict(reasons)
    assert summary.details.difficulty == {"Easy": easy, "Hard": len(labelled) - easy, "unparsed": 0}
    reasons = Counter(r["difficulty_reason"] for r in labelled.values())
    assert summary.details.difficulty_reasons == {
        "right_choice": easy, "wrong_choice": reasons["wrong_choice"], "no_answer": len(unanswered), "ambiguous": 0,
        "blocked": 0,
    }  # fmt: skip
    assert f"no_answer {len(unanswered)}" in summary.format()
    assert sum(s["rows"] for s in summary.splits.values()) == len(labelled)
    assert summary.run.api_calls == len(log) and summary.run.cache_hits == 0
    written = json.loads((work / "summary.json").read_text())
    assert written["steps"]["difficulty"]["rejected"] == {}
    assert written["difficulty_reasons"]["no_answer"] == len(unanswered)
    # Figure 5's shares travel with the release: what each step kept and removed.
    pipeline = release.meta.extra["pipeline"]
    assert pipeline["filter"]["rejected"] == dict(reasons_filter := Counter(r["_reason"] for r in rejects))
    assert pipeline["filter"]["kept"] == len(kept) and sum(reasons_filter.values()) + len(kept) == 38
    assert pipeline["difficulty"]["labels"] == {"Easy": easy, "Hard": len(labelled) - easy}
    assert pipeline["difficulty"]["reasons"]["no_answer"] == len(unanswered)


class FaultyOnce:
    """Every first attempt of a request gets a fault (picked by a hash of the request), then the
    scripted reply: transport faults for all, malformed content only for JSON requests."""

    TRANSPORT = (Fault.rate_limit(0.01), Fault.server_error(retry_after=0.01), Fault.disconnect())
    CONTENT = (Fault.invalid(), Fault.truncated(), Fault.broken_json(), "fenced")

    def __init__(self, inner) -> None:
        self.inner, self.seen, self.lock = inner, set(), threading.Lock()
        self.fenced = 0

    def __call__(self, body):
        key = json.dumps(body, sort_keys=True)
        with self.lock:
            first = key not in self.seen
            self.seen.add(key)
        if first and len(body["messages"]) == 1:  # not a re-ask
            faults = self.TRANSPORT + (self.CONTENT if schema_name(body) else ())
            fault = faults[hashlib.sha256(key.encode()).digest()[0] % len(faults)]
            if fault != "fenced":
                return fault
            with self.lock:
                self.fenced += 1  # the real reply in a code fence: parsed as it is, no re-ask
            return f"```json\n{json.dumps(self.inner(body))}\n```"
        return self.inner(body)


def test_server_faults_do_not_change_the_release(reference, tmp_path):
    work, _, _ = reference
    with ChatServer(model=None) as server:
        server.handler = faulty = FaultyOnce(BQAResponder(answers=oracle()))
        summary = run_build(server, tmp_path)
        faults = Counter(r.fault for r in server.chat_requests if r.fault)
    assert summary.ok, summary.format()
    assert set(faults) == {"rate_limit", "server_error", "disconnect", "invalid", "truncated", "broken_json"}
    assert faulty.fenced > 0
    assert summary.run.reasks >= faults["invalid"] + faults["truncated"] + faults["broken_json"]
    # Same records (token counts differ: a re-asked reply cost more), same release.
    for name in ("questions.jsonl", "filter.jsonl", "filter.rejects.jsonl", "difficulty.jsonl"):
        assert records(tmp_path, name) == records(work, name), name
    ours, theirs = release_files(tmp_path), release_files(work)
    metas = [json.loads(files.pop("meta.json")) for files in (ours, theirs)]
    for meta in metas:
        del meta["extra"]["llm"]["base_url"]  # each server had its own port
    assert metas[0] == metas[1] and ours == theirs


def test_failed_calls_stay_pending_and_resume_without_repeats(tmp_path):
    rows = read_bold(sample_root()).annotations[:12]
    doomed = {r.id: extract_candidates(r.emotions, key=r.id, seed=0).choices for r in rows[3:5]}
    lines = {f"Candidate emotions: {', '.join(c)}" for c in doomed.values()}
    responder = BQAResponder(answers=oracle())
    broken = True

    def handler(body):
        if broken and any(line in json.dumps(body["messages"][0]["content"]) for line in lines):
            return Fault.malformed()  # HTTP 200 with a body that is not JSON: no SDK retry
        return responder(body)

    with ChatServer(model=None) as server:
        server.handler = handler
        first = run_build(server, tmp_path / "w", limit=12)
        assert (
            not first.ok
            and set(first.failed) == {"questions"}
            and set(first.failed["questions"]) == set(doomed)
        )
        assert not first.steps["questions"].complete and "filter" not in first.steps and first.splits is None
        assert "did not finish" in first.format() and not (tmp_path / "w" / "release" / "meta.json").exists()
        done_bodies = {json.dumps(r.body, sort_keys=True) for r in server.chat_requests if r.fault is None}
        server.reset()
        broken = False
        second = run_build(server, tmp_path / "w", limit=12)
        resent = [json.dumps(r.body, sort_keys=True) for r in server.chat_requests]
        assert second.ok and second.splits
        assert not done_bodies & set(resent)  # nothing that succeeded was asked again
        assert sum(kind(json.loads(b)) == "question" for b in resent) == len(doomed)
        server.reset()
        clean = run_build(server, tmp_path / "clean", limit=12)
        assert clean.ok
    assert release_files(tmp_path / "w") == release_files(tmp_path / "clean")
    for name in (
        "candidates.jsonl",
        "questions.jsonl",
        "filter.jsonl",
        "difficulty.jsonl",
        "difficulty.rejects.jsonl",
    ):
        assert records(tmp_path / "w", name, drop=()) == records(tmp_path / "clean", name, drop=()), name

    # Giving up on them instead: rejected with reason llm_failure, the build finishes.
    broken = True
    with ChatServer(model=None) as server:
        server.handler = handler
        given_up = run_build(server, tmp_path / "g", limit=12, reject_llm_failures=True)
    assert given_up.ok and given_up.steps["questions"].rejected == {"llm_failure": 2}
    rejected = read_jsonl(tmp_path / "g" / "steps" / "questions.rejects.jsonl")
    assert {r["id"] for r in rejected} == set(doomed) and all("malformed" in r["_detail"] for r in rejected)
    assert not set(doomed) & {r.id for rs in read_release(tmp_path / "g").splits.values() for r in rs}


def test_cli_steps_limit_and_refused_reruns(tmp_path, capsys):
    work = tmp_path / "w"
    # The steps before the LLM need no model at all.
    assert (
        cli_main(
            ["bqa", "build", "--sample", "--work", str(work), "--limit", "5", "--steps", "candidates,clips"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert re.search(r"candidates +5 +-\n", out) and re.search(r"clips +5 +-\n", out)
    assert "status: no release yet" in out.splitlines()[0]  # the steps asked for finished; no split yet
    assert sorted(p.name for p in (work / "clips").iterdir()) == sorted(
        f"{a.id}.mp4" for a in read_bold(sample_root()).annotations[:5]
    )
    with pytest.raises(ValueError, match=r"limit: was 5, now 6"):
        build(work, BuildOptions(sample_root(), limit=6), steps=["candidates"])
    with pytest.raises(ValueError, match="needs step 'questions'"):
        cli_main(
            [
                "-v",
                "bqa",
                "build",
                "--sample",
                "--work",
                str(tmp_path / "x"),
                "--steps",
                "filter",
                "--llm-model",
                "m",
            ]
        )
    with pytest.raises(ValueError, match="unknown step"):
        build(work, BuildOptions(sample_root(), limit=5), steps=["questionz"])
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        args = ["bqa", "build", "--sample", "--work", str(work), "--limit", "5", "--llm-model", MODEL,
                "--llm-base-url", server.url, "--llm-api-key-env", "none"]  # fmt: skip
        assert cli_main([*args, "--steps", "questions"]) == 0
        assert len(server.chat_requests) == 5 and all(
            kind(r.body) == "question" for r in server.chat_requests
        )
        assert cli_main(args) == 0  # the rest; finished steps are not redone
        assert sum(kind(r.body) == "question" for r in server.chat_requests) == 5
        out = capsys.readouterr().out
        assert "release: train" in out and "this run:" in out and "status: complete" in out
        with pytest.raises(ValueError, match=r"llm.model: was 'scripted-bqa', now 'other'"):
            cli_main(
                [
                    "-v",
                    *args[:-6],
                    "--llm-model",
                    "other",
                    "--llm-base-url",
                    server.url,
                    "--llm-api-key-env",
                    "none",
                ]
            )


def test_rows_whose_clip_is_missing_are_listed_not_dropped(tmp_path, capsys):
    root = tmp_path / "bold"
    shutil.copytree(sample_root(), root)
    rows = read_bold(root).annotations
    gone = rows[2]  # a clip annotated for two persons: both rows go
    gone.clip_path.unlink()
    lost = [r.id for r in rows if r.video == gone.video]
    assert len(lost) == 2
    work = tmp_path / "w"
    with pytest.raises(FileNotFoundError, match=re.escape(gone.video)):
        build(work, BuildOptions(root), steps=["candidates"])
    summary = build(work, BuildOptions(root, skip_missing=True), steps=["candidates", "clips"])
    assert summary.inputs == 36 and len(summary.details.missing_clips) == 2
    assert all(gone.video in line and "line" in line for line in summary.details.missing_clips)
    assert not set(lost) & {r["id"] for r in read_jsonl(work / "steps" / "candidates.jsonl")}
    assert json.loads((work / "summary.json").read_text())["missing_clips"] == summary.details.missing_clips
    assert "2 left out, clip missing" in summary.format()


class Declining:
    """The scripted responder, except: a few STEP2/STEP3/STEP4 replies are stopped by a safety filter
    (each in one of the ways providers say so), and a few STEP4 replies name two choices."""

    def __init__(self) -> None:
        self.inner = BQAResponder(answers=oracle())
        self.blocked: Counter[str] = Counter()
        self.ambiguous = 0

    def __call__(self, body):
        step = kind(body)
        u = int(hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).hexdigest(), 16) % 10
        if step == "question" and u == 0:
            self.blocked[step] += 1
            return Reply.blocked("SAFETY")  # Gemini's own finish reason, passed through
        if step == "filter" and u == 1:
            self.blocked[step] += 1
            return Reply.prompt_blocked("PROHIBITED_CONTENT")  # no choices, a prompt block reason
        if step == "answer" and u in (2, 6):
            self.blocked[step] += 1
            return Reply.blocked("content_filter")  # OpenAI's
        if step == "answer" and u in (3, 4):
            self.ambiguous += 1
            choices = re.findall(r"^[A-D]\. (.+)$", body["messages"][0]["content"][-1]["text"], re.M)
            return f"Either {choices[0]} or {choices[1]}."
        return self.inner(body)


def test_blocked_replies_and_unanswered_step4_replies(tmp_path):
    """A reply a safety filter stopped is rejected as ``blocked`` in STEP2 and STEP3, counted and never
    a failure (nor re-asked); in STEP4 it is Hard with reason ``blocked`` (the model could not answer,
    as the paper labels it), and a reply naming two choices is Hard, ``ambiguous`` - unless
    ``step4_unanswered="drop"`` asks for the old behaviour (both leave the release)."""
    runs = {}
    for mode in ("hard", "drop"):
        with ChatServer(model=None) as server:
            server.handler = declining = Declining()
            summary = run_build(server, tmp_path / mode, step4_unanswered=mode)
            runs[mode] = summary
            assert summary.ok and summary.run.failures == 0
            assert summary.run.blocked == sum(declining.blocked.values()) >= 3
            steps = (("questions", "question"), ("filter", "filter"), ("difficulty", "answer"))
            for step, n in steps if mode == "drop" else steps[:2]:
                assert (
                    declining.blocked[n]
                    and summary.steps[step].rejected.get("blocked") == declining.blocked[n]
                )
            # blocked requests were asked once each: no re-ask after a safety stop
            bodies = [json.dumps(r.body["messages"], sort_keys=True) for r in server.chat_requests]
            assert len(bodies) == len(set(bodies))
            blocked = read_jsonl(tmp_path / mode / "steps" / "questions.rejects.jsonl")
            assert {b["blocked"] for b in blocked if b["_reason"] == "blocked"} == {"finish_reason=SAFETY"}
    hard, drop = runs["hard"], runs["drop"]
    assert hard.details.difficulty_reasons["ambiguous"] == declining.ambiguous > 0
    assert hard.steps["difficulty"].rejected == {}  # blocked: kept as Hard
    assert hard.details.difficulty_reasons["blocked"] == declining.blocked["answer"] > 0
    labelled = {r["id"]: r for r in records(tmp_path / "hard", "difficulty.jsonl")}
    stopped = [r for r in labelled.values() if r["difficulty_reason"] == "blocked"]
    assert {(r["difficulty"], r["blocked"]) for r in stopped} == {("Hard", "finish_reason=content_filter")}
    release = read_release(tmp_path / "hard", check_clips=False)
    assert sum(r.difficulty_reason == "blocked" for rs in release.splits.values() for r in rs) == len(stopped)
    assert sum(
        r["difficulty_reason"] == "ambiguous" and r["difficulty"] == "Hard" for r in labelled.values()
    ) == (declining.ambiguous)
    # drop: the ambiguous (and declined) replies leave the release, as before
    assert drop.steps["difficulty"].rejected["step4_unparsed"] >= declining.ambiguous
    assert drop.details.difficulty_reasons["ambiguous"] == 0 == drop.details.difficulty_reasons["no_answer"]
    assert sum(s["rows"] for s in drop.splits.values()) == sum(s["rows"] for s in hard.splits.values()) - (
        hard.details.difficulty_reasons["ambiguous"] + hard.details.difficulty_reasons["no_answer"]
        + hard.details.difficulty_reasons["blocked"]
    )  # fmt: skip
