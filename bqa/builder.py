"""BQA as a ``datasets`` builder over a work folder (see :mod:`bqa.workfolder` for the folder's contract).

datasets 5 runs no loading scripts, so the builder is used as a class::

    builder = BQABuilder(work_dir="work/", cache_dir="work/.cache/datasets")
    builder.download_and_prepare()
    dataset_dict = builder.as_dataset()

or in one call, :func:`build_dataset`. The work folder is the builder's ``data_dir``; a fingerprint
of the release (record files and clip sizes/times) is part of the config, so a rebuilt release
gets a fresh cache instead of a stale one.

Each example's ``video`` holds the absolute path of its clip (``{"path": <clip>, "bytes": None}``):
the Arrow cache stays small and refers to the work folder; the Hub export embeds the bytes.
Encoding a path needs neither torch nor torchcodec.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import datasets

from bqa.card import CITATION, DEFAULT_REPO_ID
from bqa.features import FEATURES, SPLITS
from bqa.workfolder import CLIPS_DIR, meta_path, read_release, split_path

_DESCRIPTION = (
    "BQA: multiple-choice questions about the emotion a person's body language shows in a short "
    "BoLD clip (26 emotion labels, 4 choices from 4 emotion groups, Easy/Hard labels)."
)
_HOMEPAGE = f"https://huggingface.co/datasets/{DEFAULT_REPO_ID}"


def release_fingerprint(work_dir: str | Path) -> str:
    """A short hash of what the builder reads: the release files' bytes and each clip's size and mtime."""
    work_dir = Path(work_dir)
    digest = hashlib.sha256()
    for path in [meta_path(work_dir), *(split_path(work_dir, s) for s in SPLITS)]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
    clips = work_dir / CLIPS_DIR
    if clips.is_dir():
        for clip in sorted(clips.iterdir()):
            stat = clip.stat()
            digest.update(f"{clip.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


@dataclass
class BQAConfig(datasets.BuilderConfig):
    """``data_dir`` is the work folder; ``release_fingerprint`` keys the cache to its content."""

    release_fingerprint: str = ""


class BQABuilder(datasets.GeneratorBasedBuilder):
    """Builds the ``train``/``validation``/``test`` splits of BQA from a work folder's release."""

    BUILDER_CONFIG_CLASS = BQAConfig
    BUILDER_CONFIGS = [BQAConfig(name="default", version=datasets.Version("1.0.0"))]
    DEFAULT_CONFIG_NAME = "default"
    DEFAULT_WRITER_BATCH_SIZE = 1000

    def __init__(self, work_dir: str | Path | None = None, **kwargs) -> None:
        if work_dir is not None:
            kwargs["data_dir"] = str(Path(work_dir).resolve())
        if not kwargs.get("data_dir"):
            raise ValueError("BQABuilder needs work_dir=<work folder written by the BQA pipeline>")
        kwargs.setdefault("release_fingerprint", release_fingerprint(kwargs["data_dir"]))
        kwargs.setdefault("dataset_name", "bqa")
        super().__init__(**kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=_DESCRIPTION, features=FEATURES, citation=CITATION, homepage=_HOMEPAGE
        )

    def _split_generators(self, dl_manager):
        self._release = read_release(self.config.data_dir)
        return [datasets.SplitGenerator(name=split, gen_kwargs={"split": split}) for split in SPLITS]

    def _generate_examples(self, split: str):
        release = self._release
        for record in release.splits[split]:
            yield record.id, record.to_example(str(release.clip_path(record).resolve()))


def build_dataset(work_dir: str | Path, cache_dir: str | Path | None = None) -> datasets.DatasetDict:
    """Build (or reuse from cache) the DatasetDict of a work folder's release.

    The cache defaults to ``<work>/.cache/datasets``: the Arrow files point at the work folder's
    clips, so they live and go with it.
    """
    work_dir = Path(work_dir)
    builder = BQABuilder(work_dir=work_dir, cache_dir=str(cache_dir or work_dir / ".cache" / "datasets"))
    builder.download_and_prepare()
    return builder.as_dataset()
