"""Each evaluate module loads with ``evaluate.load("./metrics/<name>")`` in a fresh, offline process,
runs the examples of its metric card and docstring, and returns what the tested function returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bqa.accuracy import bqa_accuracy
from bqa.card import CITATION
from builders.scoring.self_bleu import self_bleu
from builders.testing.questions import synthetic_questions
from marinelife16k.accuracy import marinelife_accuracy

ROOT = Path(__file__).resolve().parents[1]

# Runs in the child: load the module, doctest the card's ```python blocks and the module's
# inputs description, then compute on the given inputs and print everything as JSON.
CHILD = r"""
import doctest, json, re, sys
from pathlib import Path
import evaluate
name, inputs = sys.argv[1], json.loads(sys.argv[2])
metric = evaluate.load(f"./metrics/{name}")
parser, globs = doctest.DocTestParser(), {"evaluate": evaluate}
runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
card = Path(f"metrics/{name}/README.md").read_text(encoding="utf-8")
examples = "\n".join(re.findall(r"```python\n(.*?)```", card, re.S))  # one session: later blocks reuse names
runner.run(parser.get_doctest(examples, dict(globs), f"{name}-card", None, 0))
runner.run(parser.get_doctest(metric.inputs_description, dict(globs), f"{name}-docstring", None, 0))
print(json.dumps({
    "failed": runner.failures, "attempted": runner.tries, "module_file": sys.modules[type(metric).__module__].__file__,
    "result": metric.compute(**inputs), "citation": metric.citation,
}))
"""

BQA_INPUTS = {
    "predictions": ["Surprise", "The answer is B.", "c", "Pain or Annoyance"],
    "references": ["Surprise", "Anger", "Fear", "Pain"],
    "choices": [
        ["Surprise", "Confidence", "Anger", "Embarrassment"],
        ["Peace", "Excitement", "Anger", "Fatigue"],
        ["Confidence", "Excitement", "Fear", "Sadness"],
        ["Affection", "Pleasure", "Annoyance", "Pain"],
    ],
    "difficulty": ["Easy", "Hard", "Hard", "Easy"],
    "gender": ["Male", "Female", None, "Female"],
    "age": ["Adult", "Kid", "Adult", "Adult"],
    "rationales": ["Surprise shows.", None, "Fear, not Sadness.", "Pain"],
}
MARINE_INPUTS = {
    "predictions": ["A", "The answer is the sea turtle.", "B", "Answer: D"],
    "references": ["A", "C", "D", "D"],
    "question_types": ["camera_motion", "central_object", "central_object", "lighting"],
    "options": [["Pan left", "Pan right", "Static", "Tilt up"], ["Crab", "Eel", "Sea turtle", "Ray"]]
    + [[{"label": c, "text": f"option {c}"} for c in "ABCD"]] * 2,
}
SELF_BLEU_INPUTS = {"predictions": synthetic_questions(30, seed=2, duplicate_every=4), "return_scores": True}


def expected_self_bleu(predictions, return_scores):
    result = self_bleu(predictions)
    return {"self_bleu": result.score, "signature": result.signature, "scores": result.scores}


@pytest.mark.parametrize(
    "name, inputs, direct",
    [
        ("bqa_accuracy", BQA_INPUTS, lambda kw: bqa_accuracy(**kw).to_dict()),
        ("marinelife_qa", MARINE_INPUTS, lambda kw: marinelife_accuracy(**kw).to_dict()),
        ("self_bleu", SELF_BLEU_INPUTS, lambda kw: expected_self_bleu(**kw)),
    ],
)
def test_evaluate_load_in_a_fresh_offline_process(tmp_path, name, inputs, direct):
    assert (ROOT / "metrics" / name / f"{name}.py").is_file() and (
        ROOT / "metrics" / name / "README.md"
    ).is_file()
    env = {
        **os.environ,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
    }
    for var in ("HF_MODULES_CACHE", "HF_EVALUATE_CACHE", "HF_METRICS_CACHE", "XDG_CACHE_HOME"):
        env.pop(var, None)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, name, json.dumps(inputs)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["attempted"] >= 3 and out["failed"] == 0, proc.stdout[-3000:]
    # evaluate copied the module into the temporary cache, not into the user's.
    assert Path(out["module_file"]).resolve().is_relative_to((tmp_path / "hf").resolve())
    assert out["result"] == json.loads(json.dumps(direct(inputs)))
    if name == "bqa_accuracy":  # the dataset card's entry, with its venue (issue 29), in module and card
        card = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
        assert out["citation"] == CITATION and f"```bibtex\n{CITATION}\n```" in card


ERRORS_CHILD = r"""
import json, os
import evaluate
out = {}
def error(call):
    try:
        call()
    except Exception as err:  # the type and the words are what is checked
        return [type(err).__name__, str(err)]
    return None
bqa = evaluate.load("./metrics/bqa_accuracy")
out["bqa add_batch"] = error(lambda: bqa.add_batch(predictions=["Anger"], references=["Anger"]))
out["bqa add"] = error(lambda: bqa.add(prediction="Anger", reference="Anger", difficulty="Easy"))
marine = evaluate.load("./metrics/marinelife_qa")
out["marine add_batch"] = error(lambda: marine.add_batch(predictions=["A"], references=["A"]))
agreement = evaluate.load("./metrics/judge_agreement")
out["agreement add_batch"] = error(lambda: agreement.add_batch(predictions=[1.0]))
bqa.add_batch(predictions=["Anger"], references=["Anger"], choices=[["Anger", "Peace", "Fear", "Pain"]],
              difficulty=["Easy"])
out["bqa after a full batch"] = bqa.compute()["accuracy"]
judge = evaluate.load("./metrics/judge")
out["judge without a model"] = error(lambda: judge.compute(predictions=["a"], references=["b"]))
print(json.dumps(out))
"""


def test_missing_inputs_and_settings_are_named_for_a_python_caller(tmp_path):
    env = {
        **os.environ,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
    }
    env = {k: v for k, v in env.items() if not k.startswith("VQABENCH_")}
    proc = subprocess.run(
        [sys.executable, "-c", ERRORS_CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    kind, message = out["bqa add_batch"]
    assert (
        kind == "ValueError" and "bqa_accuracy.add_batch(): missing input(s) choices, difficulty" in message
    )
    assert "needs predictions, references, choices, difficulty" in message
    assert out["bqa add"] == [
        "ValueError",
        "bqa_accuracy.add(): missing input(s) choices; this metric needs predictions, references, choices, "
        "difficulty, each given as a keyword argument",
    ]
    assert "marinelife_qa.add_batch(): missing input(s) question_types" in out["marine add_batch"][1]
    assert "judge_agreement.add_batch(): missing input(s) references" in out["agreement add_batch"][1]
    assert out["bqa after a full batch"] == 1.0  # a complete batch still scores
    kind, message = out["judge without a model"]
    assert kind == "ValueError" and "pass model=..." in message and "VQABENCH_JUDGE_MODEL" in message
    assert "--llm-model" not in message  # a Python caller has no flags


PANDAS_CHILD = r"""
import json
import evaluate
import numpy as np
import pandas as pd
frame = pd.DataFrame({
    "reply": ["Anger", None, "Fear", "no idea"],
    "answer": ["Anger", "Fear", "Fear", "Fear"],
    "choices": [np.array(["Anger", "Fear", "Happiness", "Peace"])] * 4,  # what a Parquet list column gives
    "difficulty": ["Easy", "Hard", "Hard", "Hard"],
    "gender": ["Male", None, "Female", "Male"],
    "age": ["Kid", float("nan"), "Adult", "Adult"],
}).iloc[1:]  # a filtered frame: its labels start at 1
bqa = evaluate.load("./metrics/bqa_accuracy")
result = bqa.compute(predictions=frame["reply"], references=frame["answer"], choices=frame["choices"],
                     difficulty=frame["difficulty"], gender=frame["gender"], age=frame["age"])
print(json.dumps({k: result[k] for k in ("accuracy", "n", "n_unparsed", "by_gender", "by_age")}))
"""


def test_bqa_accuracy_takes_pandas_columns_as_they_are(tmp_path):
    """Issue 29: the README says so; a Series for predictions was refused ("expected a list of text")."""
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_EVALUATE_OFFLINE": "1", "HF_UPDATE_DOWNLOAD_COUNTS": "0"}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", PANDAS_CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    # By hand, rows 1-3: no reply (wrong, unparsed), Fear (right), "no idea" (wrong, unparsed).
    assert (out["accuracy"], out["n"], out["n_unparsed"]) == (1 / 3, 3, 2)
    assert {g: c["errors"] for g, c in out["by_gender"]["groups"].items()} == {"Male": 1, "Female": 0}
    assert out["by_gender"]["n_missing"] == 1 and out["by_age"]["n_missing"] == 1  # None and NaN: missing
    assert {g: (c["n"], c["errors"]) for g, c in out["by_age"]["groups"].items()} == {"Adult": (2, 1)}
