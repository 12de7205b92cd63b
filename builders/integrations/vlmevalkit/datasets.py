"""BQA and MarineLife-16K as VLMEvalKit video datasets (``VideoBaseDataset``-style).

Written against VLMEvalKit commit e8e78f0 (2026-08-18): ``vlmeval/dataset/video_base.py``
(``VideoBaseDataset``: ``nframe``/``fps``, ``data`` table with ``index``/``video``/``question``,
``build_prompt(line, video_llm)`` returning ``[{"type": "image"|"video"|"text", "value": ...}]``,
``evaluate(eval_file)``) and ``vlmeval/dataset/video_dataset_config.py`` (``functools.partial``
config entries). When VLMEvalKit is installed the classes subclass its ``VideoBaseDataset``; they
never call its ``__init__``, which downloads a TSV and samples with decord: the table comes from this
project's split (``data=`` a work folder or Hub-layout folder, or ``VQABENCH_BQA_DATA`` /
``VQABENCH_MARINELIFE16K_DATA``), and the frames are the ``vlmevalkit`` frame rule's
(:mod:`builders.video.frame_rules`: the same indices as VLMEvalKit's own, with exact pixels), saved
as PNG (lossless; VLMEvalKit saves JPEG) under ``frame_root``.

``evaluate(eval_file)`` reads VLMEvalKit's result file through the read-back mapping
(:mod:`builders.report.harness_outputs`; every row carries its predictions-line fields in
``vqabench_item``) and scores it with this project's metrics: the same numbers as ``vqabench report``
on that file.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

from PIL import Image

from bqa.predictions import item_fields as bqa_item_fields
from builders.integrations import items as it
from builders.report.harness_outputs import ITEM_COLUMN, read_harness_lines
from builders.video.frame_spec import FrameSpec
from marinelife16k.predictions import item_fields as marinelife_item_fields

try:  # the real base class when VLMEvalKit is installed; the datasets work without it too
    from vlmeval.dataset.video_base import VideoBaseDataset as _Base
except ImportError:  # pragma: no cover - depends on the environment
    _Base = object

DATA_ENV = {"BQA": "VQABENCH_BQA_DATA", "MarineLife16K": "VQABENCH_MARINELIFE16K_DATA"}
FRAME_ROOT_ENV = "VQABENCH_FRAME_ROOT"
FRAME_RULE = "vlmevalkit"


class _ProjectVideoDataset(_Base):
    MODALITY = "VIDEO"
    TYPE = "Video-MCQ"
    NAME = ""

    def __init__(
        self,
        dataset: str | None = None,
        pack: bool = False,
        nframe: int = 0,
        fps: float = -1,
        data: str | os.PathLike[str] | None = None,
        split: str = "test",
        frame_root: str | os.PathLike[str] | None = None,
    ) -> None:
        self.dataset_name = dataset or self.NAME
        if pack:
            raise ValueError(f"{self.dataset_name}: pack=True is not supported (one question per prompt)")
        if fps > 0 and nframe > 0:
            raise ValueError("fps and nframe should not be set at the same time")
        self.pack, self.nframe, self.fps = False, nframe, fps
        self.split_frame = fps > 0 or nframe > 0
        location = data or os.environ.get(DATA_ENV[self.NAME])
        if not location:
            raise ValueError(
                f"{self.dataset_name}: give data=DIR (a work or Hub-layout folder) or set {DATA_ENV[self.NAME]}"
            )
        self.data_root = str(location)
        self.split = split
        root = frame_root or os.environ.get(FRAME_ROOT_ENV) or Path.home() / ".cache" / "vqabench" / "frames"
        self.frame_root = str(Path(root) / self.dataset_name)
        self.data = self._table()
        self.videos = sorted(set(self.data["video"]))

    # -- VideoBaseDataset's interface ------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, idx: int) -> dict[str, Any]:
        return dict(self.data.iloc[idx])

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return [cls.NAME]

    def frame_spec(self) -> FrameSpec:
        if self.nframe > 0:
            return FrameSpec(fps=None, num_frames=self.nframe, rule=FRAME_RULE)
        return FrameSpec(fps=float(self.fps), rule=FRAME_RULE)

    def save_video_frames(self, video: str) -> list[str]:
        """The sampled frames of ``video`` as PNG files (written once), in order."""
        frames = self.frame_spec().sample(self.video_source(video))
        tag = f"{self.nframe}" if self.nframe > 0 else f"{len(frames)}-{self.fps:g}fps"
        folder = Path(self.frame_root) / video
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for k, rgb in enumerate(frames.frames, start=1):
            path = folder / f"frame-{k}-of-{tag}.png"
            if not path.is_file():
                tmp = path.with_suffix(".tmp.png")
                Image.fromarray(rgb).save(tmp)
                tmp.replace(path)
            paths.append(str(path))
        return paths

    def build_prompt(self, line: int | dict[str, Any], video_llm: bool) -> list[dict[str, str]]:
        """Frames (or the video file, for a model that takes video), then the runner's prompt."""
        if isinstance(line, int):
            line = self[line]
        if video_llm or not self.split_frame:
            message = [{"type": "video", "value": self.video_file(line["video"])}]
        else:
            message = [{"type": "image", "value": p} for p in self.save_video_frames(line["video"])]
        return [*message, {"type": "text", "value": line["question"]}]

    # -- this project's part -----------------------------------------------------------------------------
    def _table(self):  # -> pandas.DataFrame
        raise NotImplementedError

    def video_source(self, video: str) -> Any:
        raise NotImplementedError

    def video_file(self, video: str) -> str:
        return it.video_file(self.video_source(video))


class BQAVideoDataset(_ProjectVideoDataset):
    """BQA: one row per question; ``video`` is the question's clip (its item id)."""

    NAME = "BQA"

    def _table(self):
        import pandas as pd  # lazy, as VLMEvalKit's own tables

        self.items = it.bqa_items(self.data_root, self.split)
        rows = [
            {"index": i, "video": row["id"], "question": it.bqa_prompt(row, "single_word"), "answer": row["answer"],
             "candidates": json.dumps(row["choices"]), ITEM_COLUMN: json.dumps(bqa_item_fields(row))}
            for i, row in enumerate(self.items.data.rows)
        ]  # fmt: skip
        return pd.DataFrame(rows)

    def video_source(self, video: str) -> Any:
        return self.items.data.video(self.items.position[video])

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> dict[str, float | None]:
        """The report's numbers on VLMEvalKit's result file (accuracy 0-1, demographic error rates)."""
        result = it.bqa_scores(read_harness_lines(eval_file), self.items)
        return {name: it.bqa_metric(result, name) for name in it.bqa_metric_names()}


class MarineLife16KVideoDataset(_ProjectVideoDataset):
    """MarineLife-16K multiple-choice questions (open-ended ones: ``vqabench marinelife judge`` on the
    result file); ``video`` is the question's video id, shared by its questions' frames."""

    NAME = "MarineLife16K"

    def _table(self):
        import pandas as pd  # lazy, as VLMEvalKit's own tables

        self.items = it.marinelife_items(self.data_root, self.split)
        rows = []
        for record in self.items.records(mcq=True):
            video = self.items.data.videos[record["id"]]
            rows.append({"index": len(rows), "video": record["id"], "question": it.marinelife_prompt(record),
                         "answer": record["answer"], "question_id": record["question_id"],
                         ITEM_COLUMN: json.dumps(marinelife_item_fields(record, video))})  # fmt: skip
        return pd.DataFrame(rows)

    def video_source(self, video: str) -> Any:
        return self.items.data.video(video)

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> dict[str, float | None]:
        """Accuracy (0-100) per dimension and overall, as ``metrics/marinelife_qa`` and the report."""
        result = it.marinelife_scores(read_harness_lines(eval_file))
        return {name: result[name] for name in it.MARINELIFE_MCQ_METRICS} | {
            "n_unparsed": result["n_unparsed"][it.OVERALL]
        }


#: VLMEvalKit config entries (``--data NAME``), as in its ``video_dataset_config.py``.
SUPPORTED: dict[str, partial] = {
    "BQA_16frame": partial(BQAVideoDataset, dataset="BQA", nframe=16),
    "BQA_1fps": partial(BQAVideoDataset, dataset="BQA", fps=1.0),
    "MarineLife16K_8frame": partial(MarineLife16KVideoDataset, dataset="MarineLife16K", nframe=8),
}
