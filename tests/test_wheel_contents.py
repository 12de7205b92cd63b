"""The wheel's file-list check (tests/wheel_contents.py, run by .ci/run on the built wheel) itself."""

from __future__ import annotations

from pathlib import Path

from wheel_contents import expected_files, problems

from builders.llm.prompts import PROMPT_DIR, list_prompts

ROOT = Path(__file__).resolve().parent.parent
LICENSE = "videoqa_bench_tools-1.0.dist-info/licenses/LICENSE"


def test_expected_files_are_the_shipped_checkout():
    expected = expected_files()
    assert not [name for name in expected if name.startswith("builders/testing/")]
    assert not [name for name in expected if Path(name).name.startswith(("make_", "record_"))]
    # Counted independently of the checker: every prompt, every metric module and card, the sample clips.
    prompts = {f"builders/llm/prompts/{name}.md" for name in list_prompts()}
    assert prompts and prompts <= expected and PROMPT_DIR.name == "prompts"
    metrics = [p.parent.name for p in (ROOT / "metrics").glob("*/README.md")]
    assert metrics and {f"builders/metrics/{m}/{m}.py" for m in metrics} <= expected
    assert {f"builders/metrics/{m}/README.md" for m in metrics} <= expected
    clips = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bqa" / "sample").rglob("*.mp4") if p.is_file()}
    assert clips and clips <= expected


def test_problems_name_each_wrong_file():
    expected = expected_files()
    assert problems([*sorted(expected), LICENSE], expected) == []
    wrong = [*sorted(expected - {"builders/llm/prompts/bqa_question.md"}), LICENSE]
    wrong += ["builders/testing/chat_server.py", "builders/stray.py"]
    assert problems(wrong, expected) == [
        "builders/stray.py: in the wheel but not among the checkout's shipped files",
        "builders/testing/chat_server.py: a test double or sample-recording script is in the wheel",
        "builders/llm/prompts/bqa_question.md: missing from the wheel",
    ]
    assert problems(sorted(expected), expected) == [
        "no LICENSE in the wheel's metadata (*.dist-info/licenses/LICENSE)"
    ]
