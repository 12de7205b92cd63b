"""``datasets`` builder over a work folder (see :mod:`marinelife16k.workfolder`).

datasets 5 runs no loading scripts, so this builder is used as a class, by maintainers, to turn a
work folder into ``DatasetDict`` objects; what is published is the Parquet export
(:mod:`marinelife16k.export`)::

    builder = MarineLife16K(config_name="qa", data_dir="work/")
    builder.download_and_prepare()
    qa = builder.as_dataset()

or simply :func:`build_configs`. The videos are stored once, in the ``videos`` config.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets

from marinelife16k.features import CONFIGS, DEFAULT_CONFIG, FEATURES, qa_example
from marinelife16k.workfolder import META_FILE, QA_FILE, RELEASE_DIR, VIDEOS_FILE, read_release

_DESCRIPTIONS = {
    "qa": "One row per question: multiple-choice and open-ended QA over marine videos, with its dimension.",
    "videos": "One row per video: the video, its 13 expert attributes, final caption and camera kind.",
}
CITATION = """\
@misc{marinelife16k,
  title = {MarineLife-16K: An Attribute-Rich Video-Text Dataset for Motion-Aware Marine Video Understanding}
}
"""
LICENSE = "Research use only; derived from the MVK and MSC datasets with their owners' permission."


class MarineLife16K(datasets.GeneratorBasedBuilder):
    """MarineLife-16K from a work folder passed as ``data_dir``."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIGS = [
        datasets.BuilderConfig(name=name, version=datasets.Version("1.0.0"), description=_DESCRIPTIONS[name])
        for name in CONFIGS
    ]
    DEFAULT_CONFIG_NAME = DEFAULT_CONFIG

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=_DESCRIPTIONS[self.config.name],
            features=FEATURES[self.config.name],
            citation=CITATION,
            license=LICENSE,
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        if not self.config.data_dir:
            raise ValueError("MarineLife16K needs data_dir: the work folder written by the pipeline")
        release = read_release(self.config.data_dir)
        return [
            datasets.SplitGenerator(
                name=split, gen_kwargs={"work_dir": str(release.work_dir), "split": split}
            )
            for split in release.split_names()
        ]

    def _generate_examples(self, work_dir: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
        release = read_release(work_dir, check_videos=False, check_qa=False)  # validated in _split_generators
        if self.config.name == "videos":
            for row in release.videos:
                if row["split"] == split:
                    video = {"path": str(release.video_file(row).resolve()), "bytes": None}
                    yield row["id"], {"video": video, **{k: v for k, v in row.items() if k != "split"}}
        else:
            splits = release.splits()
            for record in release.records:
                if splits[record["id"]] == split:
                    yield record["question_id"], qa_example(record)


def release_fingerprint(work_dir: str | os.PathLike[str]) -> str:
    """A hash of the release files, so that a rebuilt work folder never reuses a stale cache."""
    digest = hashlib.sha256()
    for name in (VIDEOS_FILE, QA_FILE, META_FILE):
        digest.update((Path(work_dir) / RELEASE_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def build_configs(
    work_dir: str | os.PathLike[str], *, cache_dir: str | os.PathLike[str] | None = None
) -> dict[str, datasets.DatasetDict]:
    """Every config of the work folder as ``{name: DatasetDict}`` (``qa`` and ``videos``).

    The Arrow cache goes to ``cache_dir`` (default ``<work>/.cache/datasets``), keyed by a hash of the
    release files so that a changed work folder is rebuilt.
    """
    read_release(work_dir)  # validate (and check the videos exist) once, with clear errors, up front
    fingerprint = release_fingerprint(work_dir)
    out = {}
    for name in CONFIGS:
        builder = MarineLife16K(
            config_name=name,
            data_dir=str(Path(work_dir).resolve()),
            cache_dir=str(cache_dir if cache_dir is not None else Path(work_dir) / ".cache" / "datasets"),
            hash=fingerprint,
        )
        builder.download_and_prepare()
        out[name] = builder.as_dataset()
    return out
