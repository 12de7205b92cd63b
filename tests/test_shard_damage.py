"""The load-back check's text scan (builders.hub.layout.shard_damage) reads a shard's text one row group
at a time and never a video's bytes: its memory is one row group's text, whatever the shard's size
(it read every text column whole, a video struct with its bytes included)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from builders.hub.layout import shard_damage

ROWS, GROUP, VIDEO_BYTES = 12, 3, 1 << 20


def _shard(path, flip_row: int | None = None) -> None:
    paths = [f"clips/clip-{i:02d}-unique.mp4" for i in range(ROWS)]
    table = pa.table(
        {
            "id": [f"r{i:02d}" for i in range(ROWS)],
            "video": pa.array(
                [{"bytes": bytes([i]) * VIDEO_BYTES, "path": p} for i, p in enumerate(paths)],
                pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
            ),
        }
    )
    pq.write_table(table, path, row_group_size=GROUP, compression="none", use_dictionary=False)
    if flip_row is not None:  # the high bit of one letter of that row's path: no longer UTF-8
        data = bytearray(path.read_bytes())
        at = data.find(paths[flip_row].encode()) + len("clips/")
        data[at] ^= 0x80
        path.write_bytes(bytes(data))


def test_a_damaged_path_in_a_later_row_group_is_named_with_its_row(tmp_path):
    shard = tmp_path / "train-00000-of-00001.parquet"
    _shard(shard, flip_row=7)
    assert (
        shard_damage(shard) == f"{shard}: column 'video', row 7 is not valid UTF-8 text: the file is damaged"
    )
    assert shard_damage(shard, columns=["id"]) is None


def test_the_scan_reads_no_video_bytes(tmp_path):
    shard = tmp_path / "train-00000-of-00001.parquet"
    _shard(shard)
    pool = pa.proxy_memory_pool(pa.default_memory_pool())
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pool)
    try:
        assert shard_damage(shard) is None
    finally:
        pa.set_memory_pool(previous)
    assert pool.max_memory() < VIDEO_BYTES  # the whole shard's videos are 12 MB
