"""Structured replies: the Gemini-safe schema we send, reply parsing, validation."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from builders.llm import ReplyError, ReplySchema, gemini_safe_schema, parse_json_reply, validate_json_schema
from builders.llm.schema import check_value, inline_refs, validate_reply
from builders.scripted.schema_examples import example_for_schema, schema_keywords
from builders.testing.chat_server import GEMINI_REJECTED_KEYS


class Option(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: Literal["A"]
    text: str = Field(min_length=1, title="Option text")


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", title="A question")
    title: str  # a *field* named like a dropped keyword must survive
    default: int = Field(0, ge=0, le=5)
    options: list[Option] = Field(min_length=2, max_length=4)
    tags: dict[str, int] = {}
    note: str | None = None


def test_gemini_safe_schema_inlines_refs_and_drops_rejected_keywords():
    sent = gemini_safe_schema(Question)
    assert not (schema_keywords(sent) & GEMINI_REJECTED_KEYS)
    assert "title" not in schema_keywords(sent) and "default" not in schema_keywords(sent)
    # Field names are not keywords: they stay.
    assert set(sent["properties"]) == {"title", "default", "options", "tags", "note"}
    option = sent["properties"]["options"]["items"]
    assert option["properties"]["label"] == {"enum": ["A"], "type": "string"}
    assert option["required"] == ["label", "text"]
    assert sent["properties"]["options"]["minItems"] == 2
    assert sent["properties"]["default"]["maximum"] == 5
    # The original pydantic schema did carry what was dropped (so the test means something).
    original = json.dumps(Question.model_json_schema())
    assert "$ref" in original and "additionalProperties" in original and "const" in original


def test_gemini_safe_schema_leaves_dicts_unmodified_and_rejects_recursion():
    schema = {
        "type": "object",
        "$schema": "x",
        "properties": {"a": {"const": 1}},
        "additionalProperties": False,
    }
    snapshot = json.dumps(schema)
    assert gemini_safe_schema(schema) == {"type": "object", "properties": {"a": {"enum": [1]}}}
    assert json.dumps(schema) == snapshot

    class Node(BaseModel):
        children: list[Node] = []

    with pytest.raises(ValueError, match="recursive through 'Node'"):
        gemini_safe_schema(Node)
    with pytest.raises(ValueError, match="cannot be resolved"):
        inline_refs({"$ref": "#/$defs/Missing"})


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        'Here is the answer:\n```JSON\n{"a": 1}\n```\nHope this helps.',
        '{"a": 1}\nThis JSON lists the answer.',
        'Sure! {"a": 1} is my reply.',
        'Not {this} but {"a": 1}',
    ],
)
def test_parse_json_reply_finds_the_value(text):
    assert parse_json_reply(text) == {"a": 1}


@pytest.mark.parametrize("text", ["", "   ", "no json here", '{"a": 1', "```json\n{'a': 1}\n```"])
def test_parse_json_reply_rejects_non_json(text):
    with pytest.raises(ReplyError):
        parse_json_reply(text)


def test_reply_schema_validates_pydantic_and_reports_fields():
    schema = ReplySchema.of(Question)
    good = example_for_schema(schema.sent)
    value = schema.validate(good)
    assert isinstance(value, Question) and len(value.options) == 2
    assert schema.to_json(value) == Question.model_validate(good).model_dump(mode="json")
    bad = {**good, "options": [{"label": "B", "text": "x"}]}
    with pytest.raises(ReplyError) as err:
        schema.validate(bad)
    assert "options" in str(err.value)
    assert schema.response_format()["json_schema"] == {
        "name": "Question",
        "schema": schema.sent,
        "strict": False,
    }


def test_validate_json_schema_covers_the_structured_subset():
    schema = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": ["A", "B"]},
            "score": {"type": "number", "minimum": 0, "maximum": 5},
            "n": {"type": "integer", "exclusiveMinimum": 0},
            "items": {
                "type": "array",
                "items": {"type": "string", "minLength": 2},
                "minItems": 1,
                "uniqueItems": True,
            },
            "maybe": {"anyOf": [{"type": "string", "pattern": "^x"}, {"type": "null"}]},
        },
        "required": ["label", "score"],
        "additionalProperties": False,
    }
    assert (
        validate_json_schema({"label": "A", "score": 4.5, "n": 2, "items": ["ab"], "maybe": None}, schema)
        == []
    )
    problems = validate_json_schema(
        {"label": "C", "score": 6, "n": 0, "items": ["a", "a"], "maybe": "y", "extra": 1}, schema
    )
    text = "\n".join(problems)
    for expected in (
        "$.label",
        "$.score",
        "$.n",
        "$.items[0]",
        "unique",
        "$.maybe",
        "unexpected field 'extra'",
    ):
        assert expected in text
    assert validate_json_schema({"label": "A"}, schema) == ["$: missing required field 'score'"]
    assert validate_json_schema(True, {"type": "integer"}) == ["$: expected integer, got boolean"]
    assert validate_json_schema(3.0, {"type": "integer"}) == []


def test_validate_reply_runs_the_domain_validator_and_plain_text():
    def differ(value):
        if len(set(value["items"])) != len(value["items"]):
            raise ValueError("distractors must differ")

    schema = ReplySchema.of({"type": "object", "properties": {"items": {"type": "array"}}})
    assert validate_reply('{"items": [1, 2]}', schema, differ) == {"items": [1, 2]}
    with pytest.raises(ReplyError, match="rejected: distractors must differ"):
        validate_reply('{"items": [1, 1]}', schema, differ)
    assert validate_reply("  plain text ", None) == "  plain text "
    with pytest.raises(ReplyError, match="empty"):
        check_value("   ", None)
