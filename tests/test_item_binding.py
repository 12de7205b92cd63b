"""Every structured LLM reply is bound to its item: a reply meant for another item is refused and
re-asked, never applied (issue 32, case 8).

The attack: a proxy (or a server) that mixes replies up answers each first attempt with the reply it
made for the previous request of the same step; a re-ask (which carries the refused reply and the
problem) gets the right one. Before, BQA STEP3 applied each verdict to the wrong question.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest
from test_unfinished_runs import vqabench

from bqa.sample import sample_root
from builders.demo.bqa_sample import SAMPLE_NOTE
from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMRequest, LLMSettings, ReplyCache, user_message
from builders.pipelines.bqa.runner import BuildOptions, build
from builders.pipelines.bqa.step3_filter import filter_request
from builders.pipelines.marinelife import captioner
from builders.pipelines.marinelife.runner import build as build_marinelife
from builders.scripted.bqa_responder import BQAResponder, schema_name
from builders.scripted.marinelife_responder import MarineLifeResponder
from builders.testing.chat_server import ChatServer
from marinelife16k.annotations import read_annotations
from marinelife16k.sample import sample_attributes_path, sample_video_root

MODEL = "scripted-bqa"
STEPS = "candidates,clips,questions,filter"
MARINE_SCHEMAS = ("marinelife_caption_draft", "marinelife_caption_refined", "marinelife_qa_distractors")


class MixUp:
    """Answers the first attempt of each request of the given schemas with the reply ``responder``
    makes for the previous request of that schema (the first one gets its own); every later attempt
    gets what the attempt before it would have got from ``responder`` alone (the refused reply and its
    re-ask taken out), so that an honest run and this one end alike. Other requests are answered as asked."""

    def __init__(self, responder, *schemas: str) -> None:
        self.responder, self.schemas = responder, schemas
        self.lock = threading.Lock()
        self.previous: dict[str, dict] = {}
        self.attempts: dict[str, int] = {}  # per request (its first message): attempts seen
        self.mixed = self.reasks = 0

    def __call__(self, body):
        name = schema_name(body)
        if name not in self.schemas:
            return self.responder(body)
        with self.lock:
            request = json.dumps(body["messages"][0], sort_keys=True)
            attempt = self.attempts[request] = self.attempts.get(request, 0) + 1
            if attempt > 1:
                self.reasks += 1
            else:
                other, self.previous[name] = self.previous.get(name), body
                self.mixed += other is not None
        if attempt == 1:
            return self.responder(other if other is not None else body)
        if attempt == 2:  # what an honest run's first attempt got
            return self.responder({**body, "messages": body["messages"][:1]})
        return self.responder(body)  # what an honest run's re-asks got


def step_records(work, step: str) -> tuple[list, list]:
    kept = read_jsonl(work / "steps" / f"{step}.jsonl")
    rejects = read_jsonl(work / "steps" / f"{step}.rejects.jsonl")
    return sorted(r["id"] for r in kept), sorted((r["id"], r["_reason"]) for r in rejects)


def test_a_filter_verdict_for_another_question_is_never_applied(tmp_path):
    """STEP2 and STEP3 of ``vqabench bqa build`` (a real process) behind the mixing proxy end with
    the clean build's records (before, STEP3 kept bad questions and rejected good ones)."""
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        clean = tmp_path / "clean"
        settings = LLMSettings(model=MODEL, base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=clean / "llm-cache.sqlite") as client:
            build(clean, BuildOptions(sample_root(), source_note=SAMPLE_NOTE), client, steps=STEPS.split(","))

        server.handler = mixup = MixUp(BQAResponder(), "BQAFilterVerdict", "BQAQuestion")
        work = tmp_path / "mixed"
        run = vqabench(["bqa", "build", "--sample", "--work", str(work), "--steps", STEPS, "--llm-model", MODEL,
                        "--llm-base-url", server.url, "--llm-api-key-env", "none"])  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
    assert mixup.mixed >= 20
    # Each mixed-up verdict was refused and asked again; the release's questions are the clean build's.
    assert mixup.reasks == mixup.mixed
    assert step_records(work, "filter") == step_records(clean, "filter")
    assert step_records(work, "questions") == step_records(clean, "questions")


def test_captions_and_distractors_for_another_video_are_never_applied(tmp_path):
    """The MarineLife-16K caption engine (drafts, refinements) and QA generation behind the mixing
    proxy end with the clean build's release."""
    rows = read_annotations(sample_attributes_path(), video_root=sample_video_root())
    responder = MarineLifeResponder(rows, sample_video_root(), captioner.frame_spec())
    releases = {}
    with ChatServer() as server:
        for name, handler in (("clean", responder), ("mixed", MixUp(responder, *MARINE_SCHEMAS))):
            server.handler = handler
            work = tmp_path / name
            settings = LLMSettings(  # one re-ask more than the default: the mixed-up reply's
                model="m", base_url=server.url, api_key_env=None, progress=False, max_validation_retries=3
            )
            with LLMClient(settings, cache_path=work / "llm-cache.sqlite") as client:
                build_marinelife(
                    work, client, attributes=sample_attributes_path(), video_root=sample_video_root()
                )
            releases[name] = {p.name: p.read_bytes() for p in sorted((work / "release").iterdir())}
        mixup = server.handler
    assert mixup.mixed >= 30 and mixup.reasks >= mixup.mixed  # (the responder's own bad replies re-ask too)
    assert releases["mixed"] == releases["clean"]


def test_the_client_refuses_a_reply_or_a_cached_row_about_another_item(tmp_path):
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}

    def ask(item: str) -> LLMRequest:
        return LLMRequest(
            [user_message(f"Item id: {item}\nIs it fine?")], schema, ("probe", "1"), item_id=item
        )

    with ChatServer(model=None) as server:
        answers = iter([{"item_id": "b", "ok": True}, {"item_id": "a", "ok": False}])
        server.handler = lambda body: next(answers)
        settings = LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
            result = client.run_one(ask("a"))
        assert result.ok and result.value == {"item_id": "a", "ok": False} and result.attempts == 2
        reask = server.chat_requests[1].body["messages"][-1]["content"]
        assert "the reply is about item 'b', not about this request's item 'a'" in reask
        sent = server.chat_requests[0].body["response_format"]["json_schema"]["schema"]
        assert sent["required"][0] == "item_id" and "item_id" in sent["properties"]

        # A sound cached row that names another item (one stored under this key by mistake) is not used.
        with ReplyCache(tmp_path / "c.sqlite") as cache:
            (row,) = list(cache)
            cache.put(replace(row, value={"item_id": "z", "ok": True}))
        server.reset()
        server.handler = lambda body: {"item_id": "a", "ok": False}
        with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
            assert client.run_one(ask("a")).value == {"item_id": "a", "ok": False}
        assert len(server.chat_requests) == 1

    with pytest.raises(ValueError, match="needs a JSON reply schema"):
        LLMClient(settings).key_of(LLMRequest([user_message("x")], item_id="a"))


def test_a_bound_request_shows_its_id_and_asks_for_it_first(tmp_path):
    """The filter request shows the question's id, and its reply schema asks for that id first (a model
    writes which item it answers before its verdict), as a required field."""
    item = {"id": "clip-7/q", "question": "Which emotion?", "choices": ["A", "B", "C", "D"], "answer": "A"}
    request = filter_request(item)
    assert "Item id: clip-7/q" in request.messages[-1]["content"]
    verdict = {"objective": True, "leaks_answer": False, "harmful": False, "reason": "It asks what it shows."}
    with ChatServer(model=None) as server:
        server.handler = lambda body: {"item_id": "clip-7/q", **verdict}
        settings = LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
            result = client.run_one(request)
        sent = server.chat_requests[0].body["response_format"]["json_schema"]["schema"]
    assert list(sent["properties"])[0] == "item_id" and sent["required"][0] == "item_id"
    assert result.ok and result.value.item_id == "clip-7/q" and result.value.objective
