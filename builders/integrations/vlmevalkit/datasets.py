"""BQA and MarineLife-16K as VLMEvalKit video datasets (``VideoBaseDataset``-style).

Written against both packagings on PyPI (``nvidia-vlmeval`` 26.3 and ``ms-vlmeval`` 0.0.20, the
official package is not there) and VLMEvalKit's repository (commit e8e78f0):
``vlmeval/dataset/video_base.py`` (``VideoBaseDataset``: ``nframe``/``fps``, a ``data`` table with
``index``/``video``/``question``, ``build_prompt(line, video_llm)`` returning
``[{"type": "image"|"video"|"text", "value": ...}]``, ``evaluate(eval_file)``, and in ms-vlmeval an
ABCMeta base whose abstract ``prepare_dataset`` must exist) and ``video_dataset_config.py``
(``functools.partial`` config entries, called by ``build_dataset`` with every CLI argument:
``model``, ``data`` (the list of dataset names), ``limit``..., which are ignored here).

When VLMEvalKit is installed the classes subclass its ``VideoBaseDataset``; they never call its
``__init__``, which downloads a TSV and samples with decord: the table comes from this project's
split (``data_dir=`` a work folder or Hub-layout folder, or ``VQABENCH_BQA_DATA`` /
``VQABENCH_MARINELIFE16K_DATA``), and the frames are the ``vlmevalkit`` frame rule's
(:mod:`builders.video.frame_rules`: the same indices as VLMEvalKit's own, with exact pixels), saved
as PNG (lossless; VLMEvalKit saves JPEG) under ``frame_root``, in a folder named by the clip's
content and the frame spec (never by dataset name and item id: other data under the same name
gets its own frames), each file written atomically under a unique temporary name (parallel
threads and processes share the folder safely). Each row records those frames (``provenance`` in
its :data:`~builders.report.harness_outputs.ITEM_COLUMN`), so the report can refuse to compare the
run with one made on other frames. A video LLM would sample the clip itself: the datasets refuse it
(``build_prompt(video_llm=True)``) rather than record frames that were not sent.

The datasets pickle (``--api-mode`` builds prompts in a worker process): the opened split is
not pickled but opened again where it is needed.

``evaluate(eval_file)`` reads VLMEvalKit's result file through the read-back mapping
(:mod:`builders.report.harness_outputs`; every row carries its predictions-line fields in
``vqabench_item``) and scores it with this project's metrics: the same numbers as ``vqabench report``
on that file, also written beside it as ``<result file>_score.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import partial
from pathlib import Path
from typing import Any

from bqa.predictions import item_fields as bqa_item_fields
from builders.integrations import items as it
from builders.report.harness_outputs import ITEM_COLUMN, read_harness_lines
from builders.runs.frames import clip_digest
from builders.video.frame_spec import FrameSpec
from marinelife16k.predictions import item_fields as marinelife_item_fields

#: What VLMEvalKit does to the PNG frames these datasets hand it, recorded in every row (issue 42,
#: measured with nvidia-vlmeval 26.3 and ms-vlmeval 0.0.20): the frame indices are the rule's, but the
#: pixels an API model receives are not the PNG's.
IMAGES_SENT = (
    "PNG files of the frames; VLMEvalKit's API models (e.g. GPT4o) re-encode them as JPEG and send them "
    "with detail 'low', and ms-vlmeval first upscales frames smaller than its minimum image size; "
    "local models read the PNG files"
)

try:  # the real base class when VLMEvalKit is installed; the datasets work without it too
    from vlmeval.dataset.video_base import VideoBaseDataset as _Base
except ImportError:  # pragma: no cover - depends on the environment
    _Base = object

DATA_ENV = {"BQA": "VQABENCH_BQA_DATA", "MarineLife16K": "VQABENCH_MARINELIFE16K_DATA"}
FRAME_ROOT_ENV = "VQABENCH_FRAME_ROOT"
FRAME_RULE = "vlmevalkit"
HARNESS = "vlmevalkit"
_FRAME_FORMAT = 1  # of the frame folders; bump to stop reading old ones


def frame_root_dir(frame_root: str | os.PathLike[str] | None = None) -> Path:
    return Path(
        frame_root or os.environ.get(FRAME_ROOT_ENV) or Path.home() / ".cache" / "vqabench" / "frames"
    )


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
        *,
        data_dir: str | os.PathLike[str] | None = None,
        split: str = "test",
        frame_root: str | os.PathLike[str] | None = None,
        **harness_arguments: Any,
    ) -> None:
        # harness_arguments: what VLMEvalKit's build_dataset passes besides (its CLI's arguments:
        # model, data, work_dir, limit...); none of them is the dataset's.
        del harness_arguments
        self.dataset_name = dataset or self.NAME
        if pack:
            raise ValueError(f"{self.dataset_name}: pack=True is not supported (one question per prompt)")
        if fps > 0 and nframe > 0:
            raise ValueError("fps and nframe should not be set at the same time")
        if fps <= 0 and nframe <= 0:
            raise ValueError(f"{self.dataset_name}: give nframe or fps (the frames the model is shown)")
        self.pack, self.nframe, self.fps = False, nframe, fps
        self.split_frame = True
        location = data_dir or os.environ.get(DATA_ENV[self.NAME])
        if not location:
            raise ValueError(
                f"{self.dataset_name}: give data_dir=DIR (a work or Hub-layout folder) or set {DATA_ENV[self.NAME]}"
            )
        self.data_root = str(location)
        self.split = split
        self.frame_root = str(frame_root_dir(frame_root))
        self.data = self._table()
        self.videos = sorted(set(self.data["video"]))

    # -- VideoBaseDataset's interface ------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, idx: int) -> dict[str, Any]:
        return dict(self.data.iloc[idx])

    def __getstate__(self) -> dict[str, Any]:
        # The opened split holds functions (not picklable): a worker process opens it again.
        return {k: v for k, v in self.__dict__.items() if k != "_items"}

    @classmethod
    def supported_datasets(cls) -> list[str]:
        return [name for name, entry in SUPPORTED.items() if entry.func is cls]

    def prepare_dataset(self, dataset: str | None = None) -> dict[str, Any]:
        """VLMEvalKit's abstract hook (its ``__init__`` calls it; this class's does not): where the
        videos are and the table, here the project's split (no TSV is downloaded)."""
        return {"root": self.data_root, "data_file": None, "data": self._table()}

    def frame_spec(self) -> FrameSpec:
        if self.nframe > 0:
            return FrameSpec(fps=None, num_frames=self.nframe, rule=FRAME_RULE)
        return FrameSpec(fps=float(self.fps), rule=FRAME_RULE)

    def frame_folder(self, video: str) -> Path:
        """Where ``video``'s frames are kept: named by the clip's bytes and the frame spec."""
        identity = {"v": _FRAME_FORMAT, "clip": clip_digest(self.video_source(video)),
                    "frames": self.frame_spec().to_json(), "format": "png"}  # fmt: skip
        key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        return Path(self.frame_root) / key[:2] / key

    def save_video_frames(self, video: str) -> list[str]:
        """The sampled frames of ``video`` as PNG files (written once, atomically), in order."""
        folder = self.frame_folder(video)
        done = folder / "frames.json"  # written last: the frames are all there
        if done.is_file():
            names = json.loads(done.read_text(encoding="utf-8"))
            if all((folder / name).is_file() for name in names):
                return [str(folder / name) for name in names]
        frames = self.frame_spec().sample(self.video_source(video))
        names = [f"frame-{k}-of-{len(frames.frames)}.png" for k in range(1, len(frames.frames) + 1)]
        for name, rgb in zip(names, frames.frames, strict=True):
            it.write_png(folder / name, rgb)
        it.write_text_atomic(done, json.dumps(names))
        return [str(folder / name) for name in names]

    def build_prompt(self, line: int | dict[str, Any], video_llm: bool = False) -> list[dict[str, str]]:
        """The frames (the ``vlmevalkit`` rule's, as images), then the runner's prompt."""
        if video_llm:
            raise ValueError(
                f"{self.dataset_name} shows the model the frames of the {FRAME_RULE} frame rule "
                f"({self._frames_text()}) as images; this model is a video LLM (VIDEO_LLM) that "
                "would sample the clip itself, so the frames recorded for the run would not be the ones "
                "it saw. Run it with image input (set the model's VIDEO_LLM to False)."
            )
        if isinstance(line, int):
            line = self[line]
        message = [{"type": "image", "value": p} for p in self.save_video_frames(line["video"])]
        return [*message, {"type": "text", "value": line["question"]}]

    def _frames_text(self) -> str:
        return f"{self.nframe} frames" if self.nframe > 0 else f"{self.fps:g} per second"

    # -- this project's part -----------------------------------------------------------------------------
    @property
    def items(self) -> Any:
        if getattr(self, "_items", None) is None:
            self._items = self._open()
        return self._items

    def provenance(self) -> dict[str, Any]:
        """What every row records about how the run was made (frames, harness, data, split)."""
        return it.harness_provenance(
            HARNESS, self.frame_spec().to_json(), self.data_root, self.split, images=IMAGES_SENT
        )

    def _open(self) -> Any:
        raise NotImplementedError

    def _table(self):  # -> pandas.DataFrame
        raise NotImplementedError

    def video_source(self, video: str) -> Any:
        raise NotImplementedError

    def video_file(self, video: str) -> str:
        return it.video_file(self.video_source(video))


class BQAVideoDataset(_ProjectVideoDataset):
    """BQA: one row per question; ``video`` is the question's clip (its item id)."""

    NAME = "BQA"

    def _open(self) -> it.BQAItems:
        return it.bqa_items(self.data_root, self.split)

    def _table(self):
        import pandas as pd  # lazy, as VLMEvalKit's own tables

        provenance = self.provenance()
        rows = [
            {"index": i, "video": row["id"], "question": it.bqa_prompt(row, "single_word"), "answer": row["answer"],
             "candidates": json.dumps(row["choices"]),
             ITEM_COLUMN: json.dumps({**bqa_item_fields(row), "provenance": provenance})}
            for i, row in enumerate(self.items.data.rows)
        ]  # fmt: skip
        return pd.DataFrame(rows)

    def video_source(self, video: str) -> Any:
        return self.items.data.video(video)

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> dict[str, float | None]:
        """The report's numbers on VLMEvalKit's result file (accuracy 0-1, demographic error rates)."""
        result = it.bqa_scores(read_harness_lines(eval_file), self.items)
        return _scores_file(eval_file, {name: it.bqa_metric(result, name) for name in it.bqa_metric_names()})


class MarineLife16KVideoDataset(_ProjectVideoDataset):
    """MarineLife-16K multiple-choice questions (open-ended ones: ``vqabench marinelife judge`` on the
    result file); ``video`` is the question's video id, shared by its questions' frames."""

    NAME = "MarineLife16K"

    def _open(self) -> it.MarineLifeItems:
        return it.marinelife_items(self.data_root, self.split)

    def _table(self):
        import pandas as pd  # lazy, as VLMEvalKit's own tables

        provenance = self.provenance()
        rows = []
        for record in self.items.records(mcq=True):
            video = self.items.data.videos[record["id"]]
            fields = {**marinelife_item_fields(record, video), "provenance": provenance}
            rows.append({"index": len(rows), "video": record["id"], "question": it.marinelife_prompt(record),
                         "answer": record["answer"], "question_id": record["question_id"],
                         ITEM_COLUMN: json.dumps(fields)})  # fmt: skip
        return pd.DataFrame(rows)

    def video_source(self, video: str) -> Any:
        return self.items.data.video(video)

    def evaluate(self, eval_file: str, **judge_kwargs: Any) -> dict[str, float | None]:
        """Accuracy (0-100) per dimension and overall, as ``metrics/marinelife_qa`` and the report."""
        result = it.marinelife_scores(read_harness_lines(eval_file))
        scores = {name: result.rates[name].value for name in it.MARINELIFE_MCQ_METRICS}
        return _scores_file(eval_file, scores | {"n_unparsed": result.n_unparsed[it.OVERALL]})


def _scores_file(eval_file: str, scores: dict[str, Any]) -> dict[str, Any]:
    """``scores``, also written beside the result file as ``<name>_score.json`` (VLMEvalKit's datasets
    leave their scores there; its run.py only logs what ``evaluate`` returns)."""
    path = Path(eval_file)
    it.write_text_atomic(path.with_name(f"{path.stem}_score.json"), json.dumps(scores, indent=2))
    return scores


#: VLMEvalKit config entries (``--data NAME``), as in its ``video_dataset_config.py``.
SUPPORTED: dict[str, partial] = {
    "BQA_16frame": partial(BQAVideoDataset, dataset="BQA", nframe=16),
    "BQA_1fps": partial(BQAVideoDataset, dataset="BQA", fps=1.0),
    "MarineLife16K_8frame": partial(MarineLife16KVideoDataset, dataset="MarineLife16K", nframe=8),
}
