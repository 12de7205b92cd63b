"""A prompt's text never changes without its version.

The LLM cache key and every report's refusal to lay mixed runs side by side trust a prompt's
``(name, version)`` to stand for its text. ``tests/data/prompt_versions.tsv`` records the SHA-256 of
the text of every bundled prompt version ever released (rows are only ever added): a text whose
version is already recorded with another hash is an edit without a bump.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from builders.llm.prompts import PROMPT_DIR, list_prompts, load_prompt, parse_prompt

TABLE = Path(__file__).parent / "data" / "prompt_versions.tsv"
TABLE_SHOWN = "tests/data/prompt_versions.tsv"
HEADER = ("name", "version", "sha256")


def text_sha256(text: str) -> str:
    """The hash of the text the model is sent (the template after the front matter)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_table(path: Path = TABLE) -> dict[tuple[str, str], str]:
    lines = [
        line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")
    ]
    assert tuple(lines[0].split("\t")) == HEADER, f"{path}: the header must be {HEADER} (tab-separated)"
    table: dict[tuple[str, str], str] = {}
    for line in lines[1:]:
        name, version, digest = line.split("\t")
        assert (name, version) not in table, f"{path}: {name} version {version} is recorded twice"
        table[(name, version)] = digest
    return table


def problems(prompt_dir: Path, table: dict[tuple[str, str], str]) -> list[str]:
    """One line per bundled prompt whose (name, version) does not stand for its text, saying what to do."""
    found = []
    for name in list_prompts(prompt_dir):
        path = prompt_dir / f"{name}.md"  # read afresh: load_prompt caches by folder
        prompt = parse_prompt(path.read_text(encoding="utf-8"), source=str(path))
        digest = text_sha256(prompt.text)
        recorded = table.get((name, prompt.version))
        row = f"{name}\t{prompt.version}\t{digest}"
        if recorded is None:
            found.append(
                f"{name} version {prompt.version} is not recorded: append this row to {TABLE_SHOWN}: {row}"
            )
        elif recorded != digest:
            newer = max((int(v) for n, v in table if n == name and v.isdigit()), default=0) + 1
            found.append(
                f"builders/llm/prompts/{name}.md: the text changed but its version is still {prompt.version}, which the cache "
                f"and the reports take to mean the old text. Set 'version: {newer}' in its front matter, "
                f"then append its new row to {TABLE_SHOWN} (keep the old rows)"
            )
    return found


def test_every_bundled_prompt_text_is_recorded_under_its_version():
    found = problems(PROMPT_DIR, read_table())
    assert not found, "\n".join(found)


def test_recorded_rows_name_existing_prompts():
    # A renamed or deleted prompt leaves rows that no longer guard anything: say so.
    names = set(list_prompts())
    stale = sorted({name for name, _ in read_table() if name not in names})
    assert not stale, f"{TABLE}: rows for prompts that no longer exist: {stale}"


def test_an_edit_without_a_bump_is_caught(tmp_path):
    # The check itself, on a copy of one bundled prompt: unchanged passes; a one-word edit fails and
    # says to bump; the edit with the bump asks for its row; with the row appended it passes.
    source = PROMPT_DIR / "bqa_question.md"
    copy = tmp_path / "bqa_question.md"
    copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    table = {key: value for key, value in read_table().items() if key[0] == "bqa_question"}
    version = load_prompt("bqa_question").version
    assert problems(tmp_path, table) == []

    edited = source.read_text(encoding="utf-8").replace("Write one question", "Write a question", 1)
    copy.write_text(edited, encoding="utf-8")
    [message] = problems(tmp_path, table)
    assert f"version is still {version}" in message and f"version: {int(version) + 1}" in message

    bumped = edited.replace(f"version: {version}\n", f"version: {int(version) + 1}\n", 1)
    copy.write_text(bumped, encoding="utf-8")
    [message] = problems(tmp_path, table)
    assert "is not recorded: append this row" in message
    table[("bqa_question", str(int(version) + 1))] = text_sha256(parse_prompt(bumped).text)
    assert problems(tmp_path, table) == []


@pytest.mark.parametrize("name", list_prompts())
def test_versions_are_whole_numbers(name):
    # The message above tells the author the next number; a version like "1b" has none.
    assert load_prompt(name).version.isdigit(), f"{name}.md: version must be a whole number"
