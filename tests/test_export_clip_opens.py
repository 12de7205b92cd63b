"""``bqa export`` opens each distinct clip once (it opened every row's clip twice: once for its split's
statistics, once for the total's), counted through the video source's own hook on real PyAV opens."""

from __future__ import annotations

import dataclasses

from bqa_work import write_work_folder

from bqa.export import export_release
from bqa.workfolder import read_release
from builders.video.source import counting_opens


def test_export_opens_each_clip_once(tmp_path):
    work = tmp_path / "work"
    # Two persons of one clip: the test split's second row shares the first row's clip.
    first = write_work_folder(work, 10)[0]
    write_work_folder(work, 10, lambda i, r: dataclasses.replace(r, clip=first.clip) if i == 1 else r)
    release = read_release(work)
    records = [r for rows in release.splits.values() for r in rows]
    clips = {str(release.clip_path(r)) for r in records}
    assert len(clips) == len(records) - 1
    with counting_opens() as opened:
        result = export_release(work, tmp_path / "hub", self_bleu=False, cache_dir=tmp_path / "cache")
    assert dict(opened) == dict.fromkeys(clips, 1)
    total = result.stats.splits["total"].clips
    assert total is not None and total.n == len(records)  # still one measure per row, as before
