"""BQA evaluation styles against the local chat server: the paper's two-stage Multimodal CoT (stage 1
sees the correct answer), its variant without the answer, and the one-request style; both stages
cached, resumable and recorded, over one decode of the frames; blocked replies counted apart."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import pytest

from bqa.accuracy import bqa_accuracy
from bqa.card import STYLE_NOTES
from bqa.data import open_split
from bqa.predictions import accuracy_inputs
from builders.cli import main as cli_main
from builders.cli.bqa import STYLE_SUMMARIES
from builders.evaluation.bqa import evaluate
from builders.evaluation.bqa_answers import STYLES
from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMSettings
from builders.runs.frames import decode_images
from builders.scripted.bqa_responder import BQAResponder, first_user_text
from builders.scripted.chat_requests import image_urls
from builders.testing.chat_faults import Fault, Reply
from builders.testing.chat_server import ChatServer
from builders.video.frame_spec import FrameSpec

MODEL, RATIONALE_MODEL = "answer-model", "rationale-model"


def options_of(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"^[A-D]\. (.+)$", text, re.M))


class TwoStage:
    """Stage 1 (with the answer): a rationale that names it; stage 1 (without): an observation naming
    no choice; stage 2: the choice its rationale names (the first choice when it names none)."""

    def __call__(self, body):
        text = first_user_text(body)
        answer = re.search(r"^Correct answer: (.+)$", text, re.M)
        if answer:
            return f"The lowered head and the slow gait fit {answer.group(1)} better than the other options."
        if "Write a rationale" in text:
            return "The shoulders are raised and the hands stay close to the body."
        rationale = re.search(r"^Rationale: (.+)$", text, re.M).group(1)
        named = [c for c in options_of(text) if c in rationale]
        return named[0] if named else options_of(text)[0]


def stage(body) -> int:
    return 2 if "Rationale: " in first_user_text(body) else 1


@pytest.fixture(scope="module")
def bqa(built_samples):
    return built_samples["bqa"]


def run_args(data, out, server, *extra):
    return ["bqa", "evaluate", "--data", str(data), "--split", "train", "--out", str(out), "--num-frames", "3",
            "--llm-model", MODEL, "--llm-base-url", server.url, "--llm-api-key-env", "none", *extra]  # fmt: skip


def test_styles_are_named_the_same_everywhere():
    assert (
        list(STYLE_SUMMARIES) == list(STYLES) == list(STYLE_NOTES)
    )  # the CLI's argparse-cheap copy, the card's
    assert [s.name for s in STYLES.values() if s.answer_leaking] == ["multimodal_cot"]


def test_multimodal_cot_sends_two_requests_the_first_with_the_answer_the_second_with_its_rationale(
    bqa, tmp_path, capsys
):
    rows = open_split(bqa.hub, "train").rows
    out = tmp_path / "cot.jsonl"
    with ChatServer(model=None) as server:
        server.handler = TwoStage()
        assert cli_main(run_args(bqa.hub, out, server, "--style", "multimodal_cot")) == 0
        bodies = [r.body for r in server.chat_requests]
        printed = capsys.readouterr().out
        assert cli_main(run_args(bqa.hub, out, server, "--style", "multimodal_cot")) == 0
        assert len(server.chat_requests) == len(bodies)  # finished: nothing asked again
    assert len(bodies) == 2 * len(rows)
    by_row = {options_of(first_user_text(b)): {} for b in bodies}
    for b in bodies:
        by_row[options_of(first_user_text(b))][stage(b)] = b
    predictions = {p["id"]: p for p in read_jsonl(out)}
    for row in rows:
        first, second = by_row[tuple(row["choices"])][1], by_row[tuple(row["choices"])][2]
        text1, text2 = first_user_text(first), first_user_text(second)
        assert f"\nCorrect answer: {row['answer']}\n" in text1 and "Rationale:" not in text1
        rationale = TwoStage()(first)
        assert f"\nRationale: {rationale}\n" in text2 and "Correct answer" not in text2
        assert image_urls(first) == image_urls(second) and len(image_urls(first)) == 3  # the same frames
        p = predictions[row["id"]]
        assert (p["rationale"], p["raw_output"]) == (rationale, row["answer"])
        assert (p["style"], p["answer_leaking"], p["provenance"]["answer_leaking"]) == (
            "multimodal_cot",
            True,
            True,
        )
        assert (p["prompt"], p["rationale_prompt"]) == ("bqa_cot_answer", "bqa_cot_rationale")
        assert p["model"] == p["rationale_model"] == MODEL and p["rationale_usage"][0] > 0
    assert "ANSWER-LEAKING (multimodal_cot)" in printed
    # The leakage check runs on the rationales: every one names the answer and no other choice.
    result = bqa_accuracy(**accuracy_inputs(list(predictions.values())))
    assert (
        result.accuracy.value == 1.0
        and result.leakage is not None
        and len(result.leakage.leaking_indices) == len(rows)
    )


def test_the_variant_without_the_answer_and_a_rationale_model_of_its_own(bqa, tmp_path):
    out = tmp_path / "blind.jsonl"
    with ChatServer(model=None) as server:  # model=None: the server reports the model asked for
        server.handler = TwoStage()
        args = run_args(bqa.hub, out, server, "--style", "multimodal_cot_no_answer",
                        "--rationale-llm-model", RATIONALE_MODEL, "--limit", "5")  # fmt: skip
        assert cli_main(args) == 0
        bodies = [r.body for r in server.chat_requests]
        with pytest.raises(ValueError, match="apply to two-stage styles"):
            cli_main(["-v", *run_args(bqa.hub, tmp_path / "x.jsonl", server, "--rationale-llm-model", "m")])
    rows = open_split(bqa.hub, "train").rows[:5]
    assert Counter((b["model"], stage(b)) for b in bodies) == {(RATIONALE_MODEL, 1): 5, (MODEL, 2): 5}
    for b in bodies:
        text = first_user_text(b)
        assert "Correct answer" not in text
    for p, row in zip(read_jsonl(out), rows, strict=True):
        assert row["answer"] not in p["rationale"] and p["answer_leaking"] is False
        assert (p["rationale_model"], p["model"]) == (RATIONALE_MODEL, MODEL)
        assert p["provenance"]["rationale_model_asked"] == RATIONALE_MODEL
        assert p["rationale_prompt"] == "bqa_cot_rationale_no_answer"


def test_an_item_killed_between_its_stages_resumes_without_paying_for_stage_1_again(bqa, tmp_path, capsys):
    rows = open_split(bqa.hub, "train").rows[:6]
    doomed = {tuple(r["choices"]) for r in rows[2:4]}
    inner, broken = TwoStage(), [True]

    def handler(body):
        if broken[0] and stage(body) == 2 and options_of(first_user_text(body)) in doomed:
            return Fault.malformed()
        return inner(body)

    out = tmp_path / "p.jsonl"
    with ChatServer(model=None) as server:
        server.handler = handler
        args = run_args(bqa.hub, out, server, "--style", "multimodal_cot", "--limit", "6")
        assert cli_main(args) == 1 and not out.exists()
        assert "2 LLM call(s) failed" in capsys.readouterr().out
        server.reset()
        broken[0] = False
        assert cli_main(args) == 0
        again = [r.body for r in server.chat_requests]
    # only the stage-2 requests that failed are sent again: their stage 1 comes from the cache
    assert sorted(options_of(first_user_text(b)) for b in again) == sorted(doomed)
    assert {stage(b) for b in again} == {2}
    assert [p["id"] for p in read_jsonl(out)] == [r["id"] for r in rows]


def test_both_stages_show_the_frames_of_one_decode(bqa, tmp_path):
    data = open_split(bqa.hub, "train")
    calls: Counter[str] = Counter()

    def counting(source, spec):
        calls[source["path"] if isinstance(source, dict) else str(source)] += 1
        return decode_images(source, spec)

    with ChatServer(model=None) as server:
        server.handler = TwoStage()
        settings = LLMSettings(model=MODEL, base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=tmp_path / "cache.sqlite") as client:
            summary = evaluate(data, client, tmp_path / "work", tmp_path / "p.jsonl", style="multimodal_cot",
                               frames=FrameSpec(fps=None, num_frames=2), limit=4, images_of=counting)  # fmt: skip
        assert summary.ok and len(server.chat_requests) == 8
    assert len(calls) == 4 and set(calls.values()) == {1}  # one decode per row serves both stages


def test_estimate_counts_both_stages(bqa, tmp_path, capsys):
    with ChatServer(model=None) as server:
        args = run_args(bqa.hub, tmp_path / "p.jsonl", server, "--style", "multimodal_cot", "--limit", "4")
        assert cli_main([*args, "--estimate"]) == 0
        assert server.chat_requests == []
    assert "8 requests to send:" in capsys.readouterr().out


def test_a_blocked_reply_is_counted_as_blocked_not_as_a_failure(bqa, tmp_path, capsys):
    rows = open_split(bqa.hub, "train").rows[:6]
    stopped = {tuple(r["choices"]): reply for r, reply in
               zip(rows[1:4], (Reply.blocked(), Reply.blocked("SAFETY"), Reply.prompt_blocked()), strict=True)}  # fmt: skip
    inner = BQAResponder()

    def handler(body):
        return stopped.get(options_of(first_user_text(body))) or inner(body)

    out = tmp_path / "p.jsonl"
    with ChatServer(model=None) as server:
        server.handler = handler
        args = run_args(bqa.hub, out, server, "--limit", "6")
        assert cli_main(args) == 0
        printed = capsys.readouterr().out
        assert len(server.chat_requests) == 6  # a blocked request is not re-asked
        server.reset()
        assert cli_main(args) == 0 and server.chat_requests == []  # nor asked again on a rerun
    assert "rejected: blocked: 3" in printed and "0 failures, 3 blocked" in printed
    assert [p["id"] for p in read_jsonl(out)] == [rows[0]["id"], rows[4]["id"], rows[5]["id"]]


def test_a_two_stage_style_on_a_named_subset_of_the_clips(bqa, tmp_path):
    """``--videos FILE`` with ``--style multimodal_cot``: only the named clips' rows are asked (two
    requests each), and every line records the style, the leak and the subset."""
    rows = open_split(bqa.hub, "train").rows
    chosen = sorted(r["id"] for r in rows)[:2]
    ids = tmp_path / "two.txt"
    ids.write_text("\n".join(chosen) + "\n")
    out = tmp_path / "cot-two.jsonl"
    with ChatServer(model=None) as server:
        server.handler = TwoStage()
        assert (
            cli_main(run_args(bqa.hub, out, server, "--style", "multimodal_cot", "--videos", str(ids))) == 0
        )
        assert sorted(stage(r.body) for r in server.chat_requests) == [1, 1, 2, 2]
    lines = read_jsonl(out)
    assert sorted(line["id"] for line in lines) == chosen
    for line in lines:
        assert line["style"] == "multimodal_cot" and line["answer_leaking"] is True and line["rationale"]
        assert line["provenance"]["style"] == "multimodal_cot"
        subset = line["provenance"]["videos"]
        assert (subset["n"], subset["sha256"]) == (2, hashlib.sha256("\n".join(chosen).encode()).hexdigest())
