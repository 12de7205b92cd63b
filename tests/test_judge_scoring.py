"""The judge end to end against the real local chat server: every rubric, weights, camera split,
faults survived, failures reported (never scored 0), cache reruns and replay send nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from builders.evaluation.rubrics import get_rubric
from builders.llm import export_replies
from builders.llm.cache import ReplyCache
from builders.scoring.judge import default_cache_path, judge_client, judge_predictions
from builders.scripted.chat_requests import last_user_text, response_schema, with_item_id
from builders.testing.chat_faults import Fault
from builders.testing.chat_server import ChatServer
from marinelife16k.rubrics import camera_groups

MARK = re.compile(r"<<([^>]*)>>")


def judged(*args, **kwargs) -> dict:
    """``judge_predictions``'s result as the judge metric returns it (``JudgeResult.to_dict()``)."""
    return judge_predictions(*args, **kwargs).to_dict()


def scripted(body):
    """Reply with the integers written in the prediction as ``<<a,b,c>>``, in the schema's field
    order, and a short text for every string field. ``-`` leaves a field out. On a re-ask (the
    conversation has more than one user turn) values are clamped into 0-5 and gaps filled with 2,
    unless the prediction says STUBBORN."""
    text = body["messages"][0]["content"]
    match = MARK.search(text)
    assert match is not None, text[-300:]
    numbers = match.group(1).split(",")
    reask = sum(m["role"] == "user" for m in body["messages"]) > 1 and "STUBBORN" not in text
    props = response_schema(body)["properties"]
    reply, k = {}, 0
    for name, sub in props.items():
        if sub["type"] == "string":
            reply[name] = f"reason for {name}"
            continue
        raw = numbers[k]
        k += 1
        if raw == "-":
            if reask:
                reply[name] = 2
            continue
        value = int(raw)
        reply[name] = min(5, max(0, value)) if reask else value
    return with_item_id(body, reply)


@pytest.fixture
def client(chat_server, tmp_path):
    # Four re-asks: the fault test may stack several bad replies on one item; all must still validate.
    chat_server.handler = scripted
    with judge_client(
        model="judge-model", base_url=chat_server.url, api_key_env="none", max_concurrency=4,
        cache_path=tmp_path / "judge.sqlite", environ={}, progress=False, max_retries=3, max_validation_retries=4,
    ) as c:  # fmt: skip
        yield c


WEIGHTS = np.array([0.35, 0.30, 0.35])
OE_SCORES = [(5, 0, 5), (4, 4, 4), (0, 5, 0), (3, 1, 2), (5, 5, 5)]
CAMERA = ["static", "moving", "static", "moving", "moving"]


def oe_inputs(scores=OE_SCORES):
    predictions = [f"The camera pans. <<{','.join(map(str, s))}>>" for s in scores]
    references = [f"The camera pans left past fish {i}." for i in range(len(scores))]
    questions = [f"How does the camera move in clip {i}?" for i in range(len(scores))]
    return predictions, references, questions


def test_open_ended_weights_means_and_camera_split(client, chat_server):
    predictions, references, questions = oe_inputs()
    result = judged(
        predictions, references, get_rubric("marinelife_open_ended"), client,
        questions=questions, groups=camera_groups(CAMERA), return_items=True,
    )  # fmt: skip
    s = np.array(OE_SCORES, dtype=float)
    weighted = s @ WEIGHTS
    assert [item["score"] for item in result["items"]] == pytest.approx(weighted.tolist())
    assert result["items"][0]["score"] == 3.5  # 0.35*5 + 0.30*0 + 0.35*5
    assert result["score"] == pytest.approx(weighted.mean())
    assert result["criteria"] == pytest.approx(
        dict(zip(["camera", "activity", "relation"], s.mean(axis=0), strict=True))
    )
    assert (result["n"], result["n_failed"], result["failed"]) == (5, 0, [])
    static = np.array([c == "static" for c in CAMERA])
    assert result["by_camera"]["static"]["score"] == pytest.approx(weighted[static].mean())
    assert result["by_camera"]["moving"]["score"] == pytest.approx(weighted[~static].mean())
    assert result["by_camera"]["moving"]["criteria"]["activity"] == pytest.approx(s[~static, 1].mean())
    assert (result["by_camera"]["static"]["n"], result["by_camera"]["moving"]["n"]) == (2, 3)
    judge = result["judge"]
    assert judge["model"] == "judge-model" and judge["model_reported"] == "test-model-2026-01"
    assert (judge["rubric"], judge["rubric_version"], judge["api_calls"]) == ("marinelife_open_ended", "2", 5)
    assert judge["signature"].startswith("rubric:marinelife_open_ended|v:2|")
    assert "|judge:judge-model|t:0.0|seed:0" in judge["signature"]
    assert judge["prompt_tokens"] > 0 and judge["completion_tokens"] > 0
    # What reached the server: the rendered prompt with question and reference, the rubric's schema.
    sent = {last_user_text(r.body) for r in chat_server.chat_requests}
    assert any("How does the camera move in clip 3?" in t and "past fish 3." in t for t in sent)


def test_caption_and_review_rubrics_end_to_end(client):
    caption = get_rubric("marinelife_caption")
    result = judged(
        ["A turtle <<5,2,4>>", "A ray <<1,0,2>>"], ["A turtle swims.", "A ray glides."], caption, client,
        groups=camera_groups(["moving", "static"]), return_items=True,
    )  # fmt: skip
    assert result["criteria"] == pytest.approx({"BEH": 3.0, "AH": 1.0, "ECF": 3.0})
    assert result["score"] == pytest.approx((11 / 3 + 3 / 3) / 2)
    assert result["by_camera"]["static"]["criteria"] == pytest.approx({"BEH": 1, "AH": 0, "ECF": 2})
    assert result["items"][0]["explanations"]["AH_explanation"] == "reason for AH_explanation"

    review = get_rubric("marinelife_caption_review")
    attrs = [{"central_object": "turtle", "camera_angle": "eye level"}, {"central_object": "ray"}]
    result = judged(["Draft one <<4>>", "Draft two <<2>>"], attrs, review, client, return_items=True)
    assert [item["criteria"] for item in result["items"]] == [{"alignment": 4}, {"alignment": 2}]
    assert [item["score"] for item in result["items"]] == [4.0, 2.0] and result["score"] == 3.0
    assert "by_camera" not in result


def test_custom_rubric_end_to_end(client, tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(
        "name: reef\nversion: 3\nscale: {min: 0, max: 10}\ncriteria:\n"
        "  - {name: right, description: correct, weight: 3}\n  - {name: full, description: complete, weight: 1}\n"
    )
    result = judged(["x <<10,2>>", "y <<0,8>>"], ["a", "b"], get_rubric("custom", path), client)
    assert result["score"] == pytest.approx(((30 + 2) / 4 + 8 / 4) / 2)
    assert result["judge"]["rubric"] == "custom:reef" and result["judge"]["rubric_version"] == "3"


def test_faults_are_survived_and_nothing_is_lost(client, chat_server):
    # Transport faults (SDK retries) and replies that are out of range, incomplete, unparsable or
    # schema-invalid (re-asked): every item still gets its exact scores. A malformed HTTP body is not
    # retried by the engine: that item is reported, and the rerun asks for it alone.
    scores = [(5, 0, 5), (4, 4, 4), (0, 5, 0), (3, 1, 2), (5, 5, 5), (2, 2, 2)]
    predictions, references, _ = oe_inputs(scores)
    predictions[1] = "Answer <<9,4,4>>"  # out of range first: re-asked, then 5,4,4
    predictions[4] = "Answer <<5,-,5>>"  # a criterion missing first: re-asked, then 5,2,5
    chat_server.queue_faults(
        Fault.rate_limit(0.01), Fault.server_error(retry_after=0.01), Fault.broken_json(), Fault.invalid(),
        Fault.fenced(), Fault.truncated(), Fault.malformed(),
    )  # fmt: skip
    rubric = get_rubric("marinelife_open_ended")
    result = judged(predictions, references, rubric, client, return_items=True)
    expected = np.array([(5, 0, 5), (5, 4, 4), (0, 5, 0), (3, 1, 2), (5, 2, 5), (2, 2, 2)], float) @ WEIGHTS
    faults = [r.fault for r in chat_server.chat_requests if r.fault]
    assert sorted(faults) == sorted(
        ["rate_limit", "server_error", "broken_json", "invalid", "fenced", "truncated", "malformed"]
    )
    (failed,) = result["failed"]
    assert result["n_failed"] == 1 and result["n"] == 5 and "malformed response" in failed["error"]
    scored = {item["index"]: item["score"] for item in result["items"] if "score" in item}
    assert scored == pytest.approx({i: expected[i] for i in range(6) if i != failed["index"]})
    assert result["score"] == pytest.approx(np.delete(expected, failed["index"]).mean())
    assert result["judge"]["api_calls"] > 6
    chat_server.reset()
    again = judged(predictions, references, rubric, client, return_items=True)
    # Only the failed item is asked again (twice if its first reply is one that gets re-asked).
    asked = {r.body["messages"][0]["content"] for r in chat_server.chat_requests}
    assert len(asked) == 1 and predictions[failed["index"]] in asked.pop()
    assert again["n_failed"] == 0 and again["n"] == 6
    assert [item["score"] for item in again["items"]] == pytest.approx(expected.tolist())


def test_a_judgement_that_never_validates_is_reported_not_scored(client, chat_server):
    predictions, references, _ = oe_inputs([(5, 5, 5), (1, 1, 1)])
    predictions.append("STUBBORN <<7,7,7>>")
    references.append("ref")
    result = judged(
        predictions, references, get_rubric("marinelife_open_ended"), client,
        groups=camera_groups(["static", "static", "static"]),
    )  # fmt: skip
    assert (result["n"], result["n_failed"]) == (2, 1)
    assert result["score"] == pytest.approx(3.0)  # (5 + 1) / 2: the failure is not a 0
    assert result["by_camera"]["static"]["n"] == 2 and result["by_camera"]["moving"]["score"] is None
    (failed,) = result["failed"]
    assert failed["index"] == 2 and "less than or equal to 5" in failed["error"] and "7" in failed["raw"]
    # Nothing failed is cached: the next run asks again for that item only.
    chat_server.reset()
    judge_predictions(predictions, references, get_rubric("marinelife_open_ended"), client)
    assert {("STUBBORN" in r.body["messages"][0]["content"]) for r in chat_server.chat_requests} == {True}


def test_persistent_server_errors_are_reported(client, chat_server):
    chat_server.queue_faults(*[Fault.server_error(status=503, retry_after=0.01)] * 4)
    result = judged(["a <<1,1,1>>"], ["r"], get_rubric("marinelife_open_ended"), client)
    assert result["n"] == 0 and result["score"] is None and result["n_failed"] == 1
    assert "HTTP 503" in result["failed"][0]["error"]


def test_rerun_with_same_cache_sends_nothing_and_replay_works(client, chat_server, tmp_path):
    predictions, references, questions = oe_inputs()
    rubric = get_rubric("marinelife_open_ended")
    first = judged(predictions, references, rubric, client, questions=questions)
    assert len(chat_server.chat_requests) == 5
    chat_server.reset()
    again = judged(predictions, references, rubric, client, questions=questions)
    assert chat_server.chat_requests == [] and again["judge"]["cache_hits"] == 5
    assert again["judge"]["api_calls"] == 0
    assert {k: again[k] for k in ("score", "criteria", "n")} == {
        k: first[k] for k in ("score", "criteria", "n")
    }
    assert again["judge"]["prompt_tokens"] == first["judge"]["prompt_tokens"]  # recorded usage
    rows = list(ReplyCache(tmp_path / "judge.sqlite"))
    assert {(r.prompt_name, r.prompt_version) for r in rows} == {("marinelife_open_ended", "2")}
    # A new rubric version or another question is another key: asked again.
    chat_server.reset()
    judge_predictions(predictions[:1], references[:1], rubric, client, questions=["Another question?"])
    assert len(chat_server.chat_requests) == 1
    # Recorded replies replay offline with the same settings.
    replies = tmp_path / "replies.jsonl"
    export_replies(tmp_path / "judge.sqlite", replies)
    chat_server.reset()
    with judge_client(
        model="judge-model", base_url=chat_server.url, api_key_env="none", environ={"VQABENCH_JUDGE_REPLIES": str(replies)},
        progress=False,
    ) as replay:  # fmt: skip
        assert replay.mode == "replay"
        replayed = judged(predictions, references, rubric, replay, questions=questions)
    assert chat_server.chat_requests == [] and replayed["score"] == first["score"]


def test_environment_defaults_and_input_errors(tmp_path):
    env = {
        "VQABENCH_JUDGE_MODEL": "env-model",
        "VQABENCH_JUDGE_BASE_URL": "http://127.0.0.1:9/v1/",
        "VQABENCH_JUDGE_API_KEY_ENV": "MY_JUDGE_KEY",
        "VQABENCH_JUDGE_MAX_CONCURRENCY": "3",
        "VQABENCH_JUDGE_CACHE": str(tmp_path / "c.sqlite"),
        "VQABENCH_JUDGE_MODE": "refresh",
    }
    with judge_client(environ=env) as c:
        s = c.settings
        assert (s.model, s.base_url, s.api_key_env, s.max_concurrency) == (
            "env-model", "http://127.0.0.1:9/v1", "MY_JUDGE_KEY", 3,
        )  # fmt: skip
        assert c.mode == "refresh" and c.cache.path == str(tmp_path / "c.sqlite")
        with pytest.raises(ValueError, match="camera must be one of"):
            judge_predictions(
                ["a"], ["b"], get_rubric("marinelife_caption"), c, groups=camera_groups(["panning"])
            )
        with pytest.raises(ValueError, match="references has 1 items but predictions has 2"):
            judge_predictions(["a", "b"], ["r"], get_rubric("marinelife_caption"), c)
        with pytest.raises(ValueError, match="item 1: the reference is empty"):
            judge_predictions(["a", "b"], ["r", ""], get_rubric("marinelife_caption"), c)
        with pytest.raises(ValueError, match="item 0: .*expected text"):
            judge_predictions([None], ["r"], get_rubric("marinelife_caption"), c)
    with judge_client(model="m", environ={"XDG_CACHE_HOME": str(tmp_path / "xdg")}) as c:
        assert c.cache.path == str(tmp_path / "xdg" / "vqabench" / "judge-cache.sqlite")
    assert default_cache_path({"VQABENCH_JUDGE_CACHE": "~/j.sqlite"}).name == "j.sqlite"
    with pytest.raises(ValueError, match="VQABENCH_JUDGE_MODEL"):
        judge_client(environ={})


# -- the evaluate module, as users load it: a fresh offline process, settings from the environment --

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import doctest, json, re, sys
from pathlib import Path
import evaluate
rubric_path = sys.argv[1]
parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
out = {}
for name in ("judge", "judge_agreement"):
    metric = evaluate.load(f"./metrics/{name}")
    card = Path(f"metrics/{name}/README.md").read_text(encoding="utf-8")
    examples = "\n".join(re.findall(r"```python\n(.*?)```", card, re.S))
    for text, where in ((examples, "card"), (metric.inputs_description, "docstring")):
        runner.run(parser.get_doctest(text, {"evaluate": evaluate}, f"{name}-{where}", None, 0))
out["doctest"] = [runner.failures, runner.tries]
judge = evaluate.load("./metrics/judge")
out["default"] = judge.compute(
    predictions=["pans <<5,0,5>>", "static <<4,4,4>>", "tilts <<0,5,0>>"],
    references=["The camera pans left.", "A fixed camera.", "The camera tilts up."],
    questions=["How?", "How?", "How?"], camera=["moving", "static", "moving"],
    evidence=[{"central_object": "turtle", "camera_angle": "eye level"}, None, None],
)
review = evaluate.load("./metrics/judge", config_name="marinelife_caption_review")
out["review"] = review.compute(
    predictions=["A turtle <<4>>", "A ray <<1>>"],
    references=[{"central_object": "turtle", "camera_angle": "eye level"}, {"central_object": "ray"}],
    return_items=True,
)
custom = evaluate.load("./metrics/judge", config_name="custom", rubric_path=rubric_path)
out["custom"] = custom.compute(predictions=["x <<4,2>>"], references=["ref"])
print(json.dumps(out))
"""
SECRET = "sk-judge-test-9f8e7d6c5b4a"


def run_child(tmp_path, server, rubric_path, script=CHILD, **more_env):
    env = {
        **os.environ,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
        "VQABENCH_JUDGE_MODEL": "env-judge",
        "VQABENCH_JUDGE_BASE_URL": server.url,
        "VQABENCH_JUDGE_API_KEY_ENV": "JUDGE_TEST_KEY",
        "JUDGE_TEST_KEY": SECRET,
        "VQABENCH_JUDGE_CACHE": str(tmp_path / "cache" / "judge.sqlite"),
        "VQABENCH_JUDGE_PROGRESS": "false",
        **more_env,
    }
    for var in ("HF_MODULES_CACHE", "HF_EVALUATE_CACHE", "HF_METRICS_CACHE", "XDG_CACHE_HOME"):
        env.pop(var, None)
    env = {k: v for k, v in env.items() if not k.startswith("VQABENCH_LLM_")}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(rubric_path)], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_evaluate_load_with_environment_settings_and_no_key_on_disk(tmp_path):
    rubric_path = tmp_path / "rubric.json"
    rubric_path.write_text(json.dumps({
        "name": "two", "criteria": [
            {"name": "a", "description": "first", "weight": 1}, {"name": "b", "description": "second", "weight": 3},
        ],
    }))  # fmt: skip
    with ChatServer(api_key=SECRET) as server:
        server.handler = scripted
        out = run_child(tmp_path, server, rubric_path)
        sent = server.chat_requests
        assert len(sent) == 6 and all(r.key_ok for r in sent)
        assert {r.body["model"] for r in sent} == {"env-judge"}
        failures, tries = out["doctest"]
        assert failures == 0 and tries >= 4
        default = out["default"]
        weighted = np.array([(5, 0, 5), (4, 4, 4), (0, 5, 0)], float) @ WEIGHTS
        assert default["score"] == pytest.approx(weighted.mean())
        assert default["by_camera"]["moving"]["score"] == pytest.approx(weighted[[0, 2]].mean())
        assert (
            default["judge"]["rubric"] == "marinelife_open_ended" and default["judge"]["model"] == "env-judge"
        )
        assert any("- camera_angle: eye level" in r.body["messages"][0]["content"] for r in sent)
        assert [i["criteria"]["alignment"] for i in out["review"]["items"]] == [4, 1]
        assert out["review"]["score"] == 2.5
        assert out["custom"]["score"] == pytest.approx((4 + 3 * 2) / 4)
        assert out["custom"]["judge"]["rubric"] == "custom:two"
        # The same run again: every judgement comes from the cache.
        server.reset()
        again = run_child(tmp_path, server, rubric_path)
        assert server.chat_requests == []
        assert again["default"]["score"] == default["score"] and again["default"]["judge"]["cache_hits"] == 3
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "judge.sqlite" for p in files)
    assert not [p for p in files if SECRET.encode() in p.read_bytes()]


EXPLICIT_CHILD = r"""
import json, sys
import evaluate
custom = evaluate.load("./metrics/judge", config_name="custom", rubric_path=sys.argv[1])
out = custom.compute(
    predictions=["x <<4,2>>"], references=["ref"], model="explicit-judge", temperature=0.5, seed="none",
    max_tokens=64, extra_body={"reasoning_effort": "low"}, max_retries=0, timeout=30, progress=False,
)
print(json.dumps(out))
"""


def test_compute_takes_every_setting_explicitly_over_the_environment(tmp_path):
    rubric_path = tmp_path / "rubric.json"
    rubric_path.write_text(json.dumps({
        "name": "two", "criteria": [
            {"name": "a", "description": "first", "weight": 1}, {"name": "b", "description": "second", "weight": 3},
        ],
    }))  # fmt: skip
    hostile = {"VQABENCH_JUDGE_TEMPERATURE": "0.9", "VQABENCH_JUDGE_SEED": "7", "VQABENCH_JUDGE_MAX_TOKENS": "5",
               "VQABENCH_JUDGE_EXTRA_BODY": '{"reasoning_effort": "high"}', "VQABENCH_JUDGE_MAX_RETRIES": "oops"}  # fmt: skip
    with ChatServer(api_key=SECRET) as server:
        server.handler = scripted
        out = run_child(tmp_path, server, rubric_path, EXPLICIT_CHILD, **hostile)
        (sent,) = server.chat_requests
    body = sent.body
    assert body["model"] == "explicit-judge" and body["temperature"] == 0.5 and "seed" not in body
    assert body["max_tokens"] == 64 and body["reasoning_effort"] == "low"
    assert out["score"] == pytest.approx((4 + 3 * 2) / 4)
    assert "|t:0.5|seed:None|max_tokens:64" in out["judge"]["signature"]


def test_judge_client_arguments_win_over_the_environment(tmp_path):
    env = {"VQABENCH_JUDGE_MODEL": "env-model", "VQABENCH_JUDGE_TEMPERATURE": "0.9", "VQABENCH_JUDGE_SEED": "7",
           "VQABENCH_JUDGE_TIMEOUT": "9", "VQABENCH_JUDGE_MAX_TOKENS": "5", "VQABENCH_JUDGE_EXTRA_BODY": "{}"}  # fmt: skip
    before = dict(env)
    with judge_client(
        temperature="none", seed=3, timeout=30, max_retries=1, max_validation_retries=0, max_tokens=None,
        extra_body="none", cache_path=tmp_path / "c.sqlite", environ=env,
    ) as c:  # fmt: skip
        s = c.settings
    assert (s.model, s.temperature, s.seed, s.timeout, s.max_retries, s.max_validation_retries) == (
        "env-model", None, 3, 30.0, 1, 0,
    )  # fmt: skip
    assert s.max_tokens == 5 and s.extra_body is None  # max_tokens=None: not given, the variable applies
    assert env == before  # read, never written


def test_cli_scores_a_jsonl_file(chat_server, tmp_path, capsys):
    from builders.cli import main

    chat_server.handler = scripted
    rows = [
        {
            "answer": "pans <<5,0,5>>",
            "answer_ref": "The camera pans.",
            "camera": "moving",
            "question": "How?",
        },
        {
            "answer": "still <<2,2,2>>",
            "answer_ref": "A fixed camera.",
            "camera": "static",
            "question": "How?",
        },
    ]
    data = tmp_path / "predictions.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "result.json"
    argv = [
        "judge", "score", str(data), "--prediction-key", "answer", "--reference-key", "answer_ref",
        "--out", str(out), "--items", "--llm-model", "cli-judge", "--llm-base-url", chat_server.url,
        "--llm-api-key-env", "none", "--llm-cache", str(tmp_path / "c.sqlite"),
    ]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["score"] == pytest.approx((3.5 + 2.0) / 2) and result["by_camera"]["static"]["score"] == 2.0
    assert len(result["items"]) == 2 and result["judge"]["model"] == "cli-judge"
    printed = capsys.readouterr().out
    assert "score 2.750  n=2  failed=0" in printed and "moving  score 3.500" in printed
    assert main(["judge", "score", str(data)] + argv[3:5]) == 2  # no --reference-key: 'reference' missing
    assert "no row has the field 'reference'" in capsys.readouterr().err
    assert main(["judge", "rubrics"]) == 0
    assert "rubric:marinelife_caption_review|v:2" in capsys.readouterr().out
