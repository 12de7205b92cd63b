"""A dataset never makes the tool read another local file (issue 32, case 4).

A video cell with ``bytes: null`` fell back to its ``path``, absolute or ``../``: ``human-study make``
copied a private local video into a rater folder and ``bqa evaluate`` sent its frames to the
endpoint, exit 0. Now a video cell is its bytes, or a path inside the dataset's own folder (its real
location, symbolic links followed); anything else is refused naming the row and field, by the one
reader every command goes through (``HubSplit.video``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hub_helpers import record_checksums
from processes import vqabench

from bqa.data import open_split
from builders.cli import main as cli_main
from builders.hub.splits import read_hub_folder
from builders.integrations.items import bqa_items
from builders.testing.chat_server import ChatServer
from builders.testing.clips import write_clip


def set_video_cell(hub: Path, split: str, row: int, value: dict) -> str:
    """Rewrite row ``row`` of ``split``'s shard with ``value`` as its video cell; returns the row's id."""
    (shard,) = read_hub_folder(hub).split(split).shards
    table = pq.read_table(shard)
    videos = table.column("video").to_pylist()
    videos[row] = value
    index = table.schema.get_field_index("video")
    table = table.set_column(
        index, table.schema.field(index), pa.array(videos, type=table.schema.field(index).type)
    )
    pq.write_table(table, shard)
    record_checksums(hub)  # a hostile release comes with a card that matches it: the cell is what is refused
    return table.column("id")[row].as_py()


@pytest.fixture
def hostile(built_samples, tmp_path) -> dict:
    """A copy of the BQA Hub folder and a private video beside it (not part of the dataset)."""
    hub = Path(shutil.copytree(built_samples["bqa"].hub, tmp_path / "hub"))
    private = write_clip(
        tmp_path / "private" / "secret.mp4", num_frames=8, fps=8, width=64, height=48, seed=3
    )
    (hub / "data" / "link.mp4").symlink_to(private)
    return {"hub": hub, "private": private, "tmp": tmp_path}


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "symlink"])
def test_a_cell_pointing_outside_the_dataset_is_refused_by_every_reader(hostile, kind):
    hub, private = hostile["hub"], hostile["private"]
    path = {"absolute": str(private), "dotdot": "../private/secret.mp4", "symlink": "data/link.mp4"}[kind]
    item = set_video_cell(hub, "test", 0, {"bytes": None, "path": path})
    where = rf"split 'test', row 0 \({item}\), field 'video'"
    with pytest.raises(ValueError, match=where):
        open_split(hub, "test").video(item)  # the evaluation runner, human-study make, the demo
    with pytest.raises(ValueError, match=where):
        bqa_items(str(hub), "test").video(item)  # lmms-eval and VLMEvalKit


def test_a_path_inside_the_dataset_is_read(hostile):
    hub = hostile["hub"]
    shutil.copyfile(hostile["private"], hub / "data" / "inside.mp4")
    item = set_video_cell(hub, "test", 0, {"bytes": None, "path": "data/inside.mp4"})
    assert open_split(hub, "test").video(item) == {
        "path": str((hub / "data" / "inside.mp4").resolve()),
        "bytes": None,
    }


def test_evaluate_and_human_study_send_and_copy_nothing(hostile, capsys):
    hub, private, tmp = hostile["hub"], hostile["private"], hostile["tmp"]
    item = set_video_cell(hub, "test", 0, {"bytes": None, "path": os.path.relpath(private, hub)})
    with ChatServer(model=None) as server:
        done = vqabench(["bqa", "evaluate", "--data", str(hub), "--split", "test", "--limit", "1", "--out",
                         str(tmp / "p.jsonl"), "--num-frames", "2", "--llm-model", "m", "--llm-base-url",
                         server.url, "--llm-api-key-env", "none"])  # fmt: skip
        assert server.chat_requests == []  # no frame of the private video went out
    assert done.returncode == 2 and f"row 0 ({item}), field 'video'" in done.stderr, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("vqabench: error:") and "leads outside" in last and "Traceback" not in done.stderr
    study = tmp / "study"
    assert cli_main(["human-study", "make", "bqa", "--data", str(hub), "--split", "test", "--size", "5",
                     "--raters", "r1", "--out", str(study)]) == 2  # fmt: skip
    assert f"row 0 ({item}), field 'video'" in capsys.readouterr().err and not study.exists()
