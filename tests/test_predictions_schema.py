"""The predictions format: the JSON schema shipped in the package (README, "Predictions files")
accepts exactly what the commands read: an id and the raw reply required, everything else optional."""

from __future__ import annotations

import json

import jsonschema
import pytest

from builders.files.jsonio import write_jsonl_atomic
from builders.report import PREDICTIONS_SCHEMA, read_predictions

SCHEMA = json.loads(PREDICTIONS_SCHEMA.read_text(encoding="utf-8"))
VALID = [
    {"question_id": "MSC--msc-0007--q1", "raw_output": "B"},
    {"id": "001_x_0001_p1", "raw_output": None},
    {"id": "001_x_0001_p1", "prediction": "Anger", "rationale": "Clenched fists.", "model": "m"},
    {
        "id": "a",
        "raw_output": "A",
        "provenance": {"frames": {"fps": 1, "num_frames": None}, "model_asked": "m"},
    },
]
INVALID = [
    {"raw_output": "B"},  # no id
    {"question_id": "q1"},  # no reply
    {"id": "", "raw_output": "B"},  # empty id
    {"id": "a", "raw_output": 3},  # a reply that is not text
]


def test_the_schema_is_a_valid_schema_in_the_package():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert PREDICTIONS_SCHEMA.parent.name == "report"  # shipped as package data of builders.report


@pytest.mark.parametrize("line", VALID)
def test_valid_lines_validate_and_are_read(line, tmp_path):
    jsonschema.validate(line, SCHEMA)
    path = tmp_path / "p.jsonl"
    write_jsonl_atomic(path, [line])
    key = "question_id" if "question_id" in line else "id"
    (prediction,) = read_predictions(path, key).values()
    assert prediction.text == line.get("raw_output", line.get("prediction"))


@pytest.mark.parametrize("line", INVALID)
def test_invalid_lines_fail_both(line, tmp_path):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(line, SCHEMA)
    path = tmp_path / "p.jsonl"
    write_jsonl_atomic(path, [line])
    with pytest.raises(ValueError):
        read_predictions(path, "question_id" if "question_id" in line else "id")
