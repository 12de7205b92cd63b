"""Export a work folder to a folder in Hugging Face Hub layout, checked by loading it back.

``export_release(work, out)`` = read and validate the release (:mod:`marinelife16k.workfolder`) ->
build both configs (:func:`marinelife16k.builder.build_configs`) -> card (:mod:`marinelife16k.card`)
-> ``builders.hub.layout.write_hub_folder`` (Parquet with the videos embedded, README.md, the ``eval.yaml``
of the benchmark's tasks (:mod:`marinelife16k.benchmark`) and the LICENSE.md the card links; atomic) ->
``builders.hub.layout.check_hub_folder`` (``load_dataset`` of every config, split sizes).
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import datasets

from builders.hub.benchmark import EVAL_FILE, render_eval_yaml
from builders.hub.layout import (
    DEFAULT_MAX_SHARD_BYTES,
    SAMPLE_KEY,
    check_export_target,
    check_hub_folder,
    quiet_datasets,
    write_hub_folder,
)
from marinelife16k.benchmark import BENCHMARK
from marinelife16k.builder import build_configs
from marinelife16k.card import DEFAULT_REPO_ID, LICENSE_FILE, card_body, card_data, license_text
from marinelife16k.features import DEFAULT_CONFIG
from marinelife16k.workfolder import Release, read_release

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExportResult:
    folder: Path
    configs: dict[str, datasets.DatasetDict]  # as built from the work folder
    release: Release


def _sample_flag(release: Release) -> dict[str, str]:
    reason = (release.meta.get("provenance") or {}).get("sample")
    return {SAMPLE_KEY: reason} if reason else {}


@quiet_datasets()
def export_release(
    work_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    repo_id: str = DEFAULT_REPO_ID,
    cache_dir: str | os.PathLike[str] | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    check: bool = True,
) -> ExportResult:
    """Write the release of ``work_dir`` to ``out_dir`` in Hub layout (``qa`` is the default config).

    ``repo_id`` only appears in the card's loading example. With ``check`` the written folder is
    loaded back with ``load_dataset`` (into a temporary cache) before returning.
    """
    work_dir, out_dir = Path(work_dir), Path(out_dir)
    check_export_target(out_dir, work_dir)
    release = read_release(work_dir)
    configs = build_configs(work_dir, cache_dir=cache_dir)
    folder = write_hub_folder(
        out_dir,
        configs,
        default_config=DEFAULT_CONFIG,
        card_body=card_body(release, repo_id=repo_id),
        card_data={**card_data(release), **_sample_flag(release)},
        max_shard_bytes=max_shard_bytes,
        protect={"the work folder": work_dir},
        extra_files={EVAL_FILE: render_eval_yaml(BENCHMARK), LICENSE_FILE: license_text()},
    )
    log.info("wrote %s", folder)
    if check:
        with tempfile.TemporaryDirectory(prefix="marinelife16k-check-") as check_cache:
            check_hub_folder(folder, cache_dir=check_cache)
    return ExportResult(folder=folder, configs=configs, release=release)
