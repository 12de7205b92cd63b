"""VLMEvalKit datasets for BQA and MarineLife-16K (:mod:`builders.integrations.vlmevalkit.datasets`).

VLMEvalKit finds video datasets in ``vlmeval.dataset.video_dataset_config.supported_video_datasets``
and classes on ``vlmeval.dataset``; :func:`register` adds this project's there. Run VLMEvalKit's
``run.py`` with them through ``python -m builders.integrations.vlmevalkit PATH/TO/run.py --data
BQA_16frame --model ...`` (registers, then runs that script as ``__main__``).
"""

from __future__ import annotations

import runpy
import sys

from builders.integrations.vlmevalkit.datasets import (
    SUPPORTED,
    BQAVideoDataset,
    MarineLife16KVideoDataset,
)

__all__ = ["SUPPORTED", "BQAVideoDataset", "MarineLife16KVideoDataset", "register", "run"]


def register() -> None:
    """Add the classes to ``vlmeval.dataset`` and the config entries to ``supported_video_datasets``."""
    import vlmeval.dataset  # lazy: VLMEvalKit is optional, and only this needs it
    from vlmeval.dataset.video_dataset_config import supported_video_datasets

    for cls in (BQAVideoDataset, MarineLife16KVideoDataset):
        setattr(vlmeval.dataset, cls.__name__, cls)
    supported_video_datasets.update(SUPPORTED)


def run(argv: list[str]) -> None:
    """``register()``, then VLMEvalKit's ``run.py`` (``argv[0]``) with the rest of ``argv``."""
    if not argv:
        raise SystemExit("usage: python -m builders.integrations.vlmevalkit PATH/TO/run.py [run.py options]")
    register()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
