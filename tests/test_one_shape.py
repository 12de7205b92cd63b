"""The two benchmarks answer in one shape (issue 30): both pipeline builds return and write one
:class:`~builders.runs.summary.BuildSummary`, and both dataset openers return one
:class:`~builders.hub.split_data.SplitData`, videos looked up by id, from a work folder and from the
Hub-layout folder exported from it alike.

Expected values come from the released data read back another way: ``load_dataset`` on the exported
folder (split sizes, video ids and cells) and the work folder's own files.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hub_helpers import record_checksums

from bqa.data import BQASplitData
from bqa.data import open_split as open_bqa
from builders.hub.split_data import SplitData
from builders.runs.summary import BuildSummary
from marinelife16k.data import open_split as open_marinelife

SPLITS = ("train", "validation", "test")
# benchmark -> (opener, the exported config holding one row per video)
OPENERS: dict[str, tuple[Callable[..., SplitData], str]] = {
    "bqa": (open_bqa, "default"),
    "marinelife16k": (open_marinelife, "videos"),
}
# benchmark -> the exported config holding one row per question
QUESTIONS = {"bqa": "default", "marinelife16k": "qa"}


def _bytes(video: Any) -> bytes:
    if isinstance(video, dict):
        return video["bytes"] if video.get("bytes") else Path(video["path"]).read_bytes()
    return Path(video).read_bytes()


def test_both_builds_return_and_write_one_summary(built_samples):
    shared: set[str] | None = None
    for name, sample in built_samples.items():
        summary = sample.build
        assert isinstance(summary, BuildSummary)
        assert (
            summary.ok
            and not summary.unfinished
            and not summary.empty_release
            and summary.status == "complete"
        )
        written = json.loads((sample.work / "summary.json").read_text(encoding="utf-8"))
        assert written == json.loads(json.dumps(summary.to_json()))
        own = set(summary.details.to_json())
        keys = set(written) - own
        assert keys == (shared if shared is not None else keys), name
        shared = keys
        # The release's sizes, as load_dataset counts the exported folder: questions and videos per split.
        questions = sample.sizes(QUESTIONS[name])
        videos = sample.sizes(OPENERS[name][1])
        assert summary.splits == {
            split: {**summary.splits[split], "rows": questions[split], "videos": videos[split]}
            for split in SPLITS
        }
        assert written["release"] == {"path": str(sample.work / "release"), "splits": summary.splits}
        assert written["inputs"] == summary.inputs > 0 and written["unfinished"]["items"] == 0
        # One printed layout: headline, step table, release line, tokens, this run.
        text = summary.format().splitlines()
        assert (
            text[0].startswith(f"{summary.benchmark} build in {sample.work}: ")
            and "status: complete" in text[0]
        )
        assert text[1].split() == ["step", "kept", "rejected", "(reason:", "count)"]
        assert [line.split()[0] for line in text[2 : 2 + len(summary.steps)]] == list(summary.steps)
        release = next(line for line in text if line.startswith("  release: "))
        for split in SPLITS:
            assert f"{split} {questions[split]} question" in release and f"{videos[split]} video" in release
        assert any(line.startswith("  tokens recorded for the replies used: ") for line in text)
        assert any(line.startswith("  this run: ") for line in text)
    assert shared is not None and {"steps", "release", "tokens", "this_run", "unfinished", "status"} <= shared


@pytest.mark.parametrize("name", ["bqa", "marinelife16k"])
def test_both_openers_give_one_split_shape_with_videos_by_id(built_samples, name):
    sample = built_samples[name]
    opener, video_config = OPENERS[name]
    for split in SPLITS:
        expected = sample.loaded[video_config][split].cast_column("video", datasets.Video(decode=False))
        from_work, from_hub = opener(sample.work, split), opener(sample.hub, split)
        for data, folder in ((from_work, sample.work), (from_hub, sample.hub)):
            assert type(data) is (BQASplitData if name == "bqa" else SplitData)
            assert isinstance(data, SplitData) and data.split == split and str(folder) in data.source
            # the same accessors answer the same questions: which videos, in order; each row's video
            assert list(data.videos) == expected["id"]
            assert len(data.rows) == sample.sizes(QUESTIONS[name])[split]
            assert all(row["id"] in data.videos for row in data.rows)
            with pytest.raises(KeyError, match=rf"the {split} split has no video 'nope'"):
                data.video("nope")
        assert [r["id"] for r in from_work.rows] == [r["id"] for r in from_hub.rows]
        if name == "bqa":  # one question per clip: a clip's video row is its question row
            assert all(from_hub.videos[row["id"]] is row for row in from_hub.rows)
        for video_id, cell in zip(expected["id"], expected["video"], strict=True):
            # the work folder's file and the Hub folder's cell are the video load_dataset gives for that id
            assert _bytes(from_work.video(video_id)) == _bytes(cell) == _bytes(from_hub.video(video_id))


def test_a_video_id_twice_in_a_split_is_refused_by_name(built_samples, tmp_path):
    """Looked up by id, two videos under one id would leave one unreachable: the opener names it."""
    hub = tmp_path / "bqa"
    shutil.copytree(built_samples["bqa"].hub, hub)
    (shard,) = (hub / "data" / "default").glob("test-*.parquet")
    table = pq.read_table(shard)
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), shard)
    record_checksums(hub)  # the card matches: the duplicate id is what is refused
    twice = table.column("id")[0].as_py()
    with pytest.raises(
        ValueError,
        match=re.escape(f"Hub folder {hub} (config default): row {table.num_rows}: duplicate id '{twice}'"),
    ):
        open_bqa(hub, "test")
