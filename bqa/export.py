"""Export a work folder's release to a folder in Hugging Face Hub layout, checked by loading it back.

``export_release(work, out)`` = read and check the release -> build the DatasetDict
(:func:`bqa.builder.build_dataset`) -> statistics (:mod:`bqa.stats`) -> card (:mod:`bqa.card`)
-> ``builders.hub.layout.write_hub_folder`` (Parquet shards with the clips embedded, README.md, the
``eval.yaml`` that registers the benchmark's tasks (:mod:`bqa.benchmark`) and the LICENSE.md the card
links, written atomically) -> ``builders.hub.layout.check_hub_folder`` (``load_dataset`` on the folder, split sizes).
The statistics are also written as ``<work>/release/stats.json`` for the maintainer.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

import datasets

from bqa.benchmark import BENCHMARK
from bqa.builder import build_dataset
from bqa.card import DEFAULT_REPO_ID, LICENSE_FILE, card_body, card_data, license_text
from bqa.stats import ReleaseStats, release_stats
from bqa.workfolder import RELEASE_DIR, read_release
from builders.files.jsonio import write_json_atomic
from builders.hub.benchmark import EVAL_FILE, render_eval_yaml
from builders.hub.layout import (
    DEFAULT_MAX_SHARD_BYTES,
    SAMPLE_KEY,
    check_export_target,
    check_hub_folder,
    quiet_datasets,
    write_hub_folder,
)

log = logging.getLogger(__name__)

CONFIG_NAME = "default"


@dataclass(frozen=True)
class ExportResult:
    folder: Path
    dataset: datasets.DatasetDict  # as built from the work folder
    stats: ReleaseStats


def _sample_flag(reason: str | None) -> dict[str, str]:
    return {SAMPLE_KEY: reason} if reason else {}


@quiet_datasets()
def export_release(
    work_dir: str | Path,
    out_dir: str | Path,
    *,
    repo_id: str = DEFAULT_REPO_ID,
    self_bleu: bool = True,
    cache_dir: str | Path | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    check: bool = True,
) -> ExportResult:
    """Write the release of ``work_dir`` to ``out_dir`` in Hub layout; ``repo_id`` is used in the card's examples."""
    work_dir = Path(work_dir)
    check_export_target(out_dir, work_dir)
    release = read_release(work_dir)
    empty = [split for split, rows in release.splits.items() if not rows]
    if empty:
        records = [r for rows in release.splits.values() for r in rows]
        films = len({r.source.film_id for r in records})
        cause = (
            "every item was rejected (see the rejected counts of the build summary)"
            if not records
            else f"its {len(records)} rows come from {films} film(s), too few for a 6:2:2 split by film"
        )
        raise ValueError(
            f"{work_dir}: the release's {', '.join(empty)} split(s) have no rows: {cause}; "
            "build from more BoLD rows (a larger --limit) before exporting"
        )
    dataset = build_dataset(work_dir, cache_dir=cache_dir)
    stats = release_stats(release.splits, release.meta, self_bleu=self_bleu, clips=release.clip_path)
    write_json_atomic(work_dir / RELEASE_DIR / "stats.json", stats.to_json())
    folder = write_hub_folder(
        out_dir,
        {CONFIG_NAME: dataset},
        default_config=CONFIG_NAME,
        card_body=card_body(stats, release.meta, release.splits, repo_id=repo_id),
        card_data={**card_data(stats), **_sample_flag(release.meta.extra.get("sample"))},
        max_shard_bytes=max_shard_bytes,
        protect={"the work folder": work_dir},
        extra_files={EVAL_FILE: render_eval_yaml(BENCHMARK), LICENSE_FILE: license_text()},
    )
    log.info("wrote %s", folder)
    if check:
        with tempfile.TemporaryDirectory(prefix="bqa-check-") as check_cache:
            check_hub_folder(folder, cache_dir=check_cache)
    return ExportResult(folder=folder, dataset=dataset, stats=stats)
