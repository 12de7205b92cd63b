"""The clips step rejects a truncated or corrupt source clip with its reason instead of remuxing it
into a valid, shorter clip (issue 15, case 6). A real BoLD root with real MP4 files; the build runs
as a real ``vqabench`` process."""

from __future__ import annotations

import json

import pytest
from test_bqa_bold import _bold_root, _good_row
from test_unfinished_runs import vqabench

from builders.files.jsonio import read_jsonl
from builders.testing.clips import write_clip
from builders.video.remux import remove_audio
from builders.video.sampler import sample_frames
from builders.video.source import VideoError

GOOD, CUT = "001/good.mp4/0001.mp4", "002/cut.mp4/0001.mp4"


def test_a_truncated_source_clip_is_rejected_not_laundered(tmp_path):
    root = _bold_root(tmp_path, {"train": [_good_row(GOOD)], "val": [_good_row(CUT)]}, [GOOD])
    cut = root / "videos" / CUT
    write_clip(cut, num_frames=100, width=32, height=32, faststart=True)  # the index is at the front
    cut.write_bytes(cut.read_bytes()[: int(cut.stat().st_size * 0.5)])  # half the frames are gone
    with pytest.raises(VideoError, match="is truncated"):
        sample_frames(cut, num_frames=4, strict=True)  # what the sampler says about it when strict
    with pytest.raises(VideoError, match="is truncated"):
        remove_audio(cut, tmp_path / "laundered.mp4")
    assert not (tmp_path / "laundered.mp4").exists()

    work = tmp_path / "work"
    built = vqabench(
        ["bqa", "build", "--bold-root", str(root), "--work", str(work), "--steps", "candidates,clips"]
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "clip_unreadable: 1" in built.stdout
    (reject,) = read_jsonl(work / "steps" / "clips.rejects.jsonl")
    assert reject["_reason"] == "clip_unreadable" and "0001.mp4 is truncated" in reject["_detail"]
    kept = read_jsonl(work / "steps" / "clips.jsonl")
    assert len(kept) == 1 and "good" in kept[0]["id"]
    assert json.loads((work / "summary.json").read_text())["steps"]["clips"]["rejected"] == {
        "clip_unreadable": 1
    }
