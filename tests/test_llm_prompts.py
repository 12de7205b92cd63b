"""The prompt registry: front matter, strict rendering, clear errors."""

from __future__ import annotations

import pytest

from builders.llm import LLMRequest
from builders.llm.prompts import PROMPT_DIR, list_prompts, load_prompt, parse_prompt

PROMPT = """---
name: demo_question
version: 3
description: Ask one question about {{ things }}.
---
Look at these {{ n_frames }} frames and ask about {{subject}}.
Reply as JSON like {"question": "..."}; {{ n_frames }} frames in all.
"""


def test_load_and_render(tmp_path):
    (tmp_path / "demo_question.md").write_text(PROMPT)
    prompt = load_prompt("demo_question", tmp_path)
    assert (prompt.name, prompt.version, prompt.ref) == ("demo_question", "3", ("demo_question", "3"))
    assert prompt.description == "Ask one question about {{ things }}."
    assert prompt.variables == {"n_frames", "subject"}
    text = prompt.render(n_frames=8, subject="the dancer")
    assert text == (
        "Look at these 8 frames and ask about the dancer.\n"
        'Reply as JSON like {"question": "..."}; 8 frames in all.'
    )
    assert list_prompts(tmp_path) == ["demo_question"]


def test_render_is_strict_both_ways():
    prompt = parse_prompt(PROMPT)
    with pytest.raises(ValueError, match=r"missing variables \['subject'\]"):
        prompt.render(n_frames=8)
    with pytest.raises(ValueError, match=r"unknown variables \['subjects'\]"):
        prompt.render(n_frames=8, subject="x", subjects="y")


def test_request_from_prompt_carries_name_and_version():
    prompt = parse_prompt(PROMPT)
    request = LLMRequest.from_prompt(
        prompt, {"n_frames": 1, "subject": "fish"}, images=["data:image/png;base64,AA=="], system="Be brief."
    )
    assert request.prompt_ref == ("demo_question", "3")
    assert [m["role"] for m in request.messages] == ["system", "user"]
    parts = request.messages[1]["content"]
    assert parts[0]["type"] == "image_url" and parts[-1]["text"].startswith("Look at these 1 frames")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter", "starts with YAML front matter"),
        ("---\nname: x\n---\nbody", r"missing \['version'\]"),
        ("---\nname: x\nversion: 1\nauthor: me\n---\nbody", r"unknown \['author'\]"),
        ("---\nname: Bad Name\nversion: 1\n---\nbody", "must be lower-case"),
        ("---\nname: x\nversion: 1\n---\n\n", "has no text"),
        ("---\n[unclosed\n---\nbody", "not valid YAML"),
    ],
)
def test_bad_prompt_files_are_named(text, message):
    with pytest.raises(ValueError, match=message) as err:
        parse_prompt(text, source="prompts/x.md")
    assert "prompts/x.md" in str(err.value)


def test_missing_and_misnamed_prompts(tmp_path):
    (tmp_path / "other.md").write_text(PROMPT)
    with pytest.raises(ValueError, match="differs from the file name"):
        load_prompt("other", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no prompt 'nope'.*known prompts: other"):
        load_prompt("nope", tmp_path)


def test_bundled_prompts_all_parse():
    # Whatever prompt files the pipelines ship must load and match their file names.
    for name in list_prompts():
        prompt = load_prompt(name)
        assert prompt.name == name and prompt.text.strip()
    assert PROMPT_DIR.name == "prompts"
