"""Issue 37, item 14: inputs read from user paths are capped and named, and numbers taken from a release's
records are checked before a share or a count is drawn from them.

Measured before: ``--prompt NAME=/dev/zero`` read without bound; a non-UTF-8 prompt file was not named;
the packaged prompt's exact text given as a file was a different version (a work folder bound to the
packaged prompt refused it); ``bqa stats`` printed Figure 5 shares from meta.json unchecked (they summed
to 102.7%); ``marinelife stats`` counted a video with an unknown ``camera_kind`` nowhere, silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from processes import vqabench

from builders.files.jsonio import read_capped
from builders.llm.prompts import MAX_PROMPT_BYTES, PROMPT_DIR, load_prompt, prompt_from_file
from marinelife16k.stats import release_stats


def test_a_device_is_read_up_to_the_cap_only():
    with pytest.raises(ValueError, match=r"/dev/zero: more than 1,024 bytes; too large for a test"):
        read_capped("/dev/zero", 1024, "a test")


def test_prompt_files_are_capped_and_named(tmp_path):
    big = tmp_path / "big.md"
    big.write_text("{{ question }} " + "x" * MAX_PROMPT_BYTES)
    with pytest.raises(ValueError, match=rf"{big}: more than 1,048,576 bytes; too large for a prompt file"):
        prompt_from_file("bqa_question", big)
    latin = tmp_path / "latin1.md"
    latin.write_bytes("Décrivez la scène\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"{latin}, line 1: not UTF-8 \(byte 0xe9"):
        prompt_from_file("bqa_question", latin)


def test_the_packaged_text_as_a_file_is_the_packaged_prompt(tmp_path):
    copy = shutil.copy(Path(PROMPT_DIR) / "bqa_question.md", tmp_path / "same.md")
    assert prompt_from_file("bqa_question", copy).ref == load_prompt("bqa_question").ref
    changed = tmp_path / "changed.md"
    changed.write_text(Path(copy).read_text(encoding="utf-8").replace("\n---\n", "\n---\nPlease.\n", 1))
    assert prompt_from_file("bqa_question", changed).version.startswith("sha256-")


def test_bqa_stats_checks_figure_5_counts(built_samples, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(built_samples["bqa"].work, work)
    meta_file = work / "release" / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["extra"]["pipeline"]["filter"]["rejected"]["rule_no_question_mark"] += 1  # shares past 100%
    meta_file.write_text(json.dumps(meta))
    done = vqabench(["bqa", "stats", "--data", str(work), "--no-clips", "--no-self-bleu"])
    assert done.returncode == 2, done.stdout
    assert "meta.json extra.pipeline.filter: kept 25 + rejected 14 is not in 38" in done.stderr


def test_marinelife_stats_names_a_video_it_cannot_count():
    videos = [
        {"id": "MVK--v1", "split": "test", "collection": "MVK", "camera_kind": "drone", "caption": "A reef."}
    ]
    with pytest.raises(
        ValueError, match=r"video 'MVK--v1': camera_kind 'drone' is not one of \['static', 'moving'\]"
    ):
        release_stats(videos, [])
