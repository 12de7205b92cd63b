"""A copy of the lmms-eval task folder whose templates name local dataset folders.

Each folder also gets a ``datasets`` cache of its own (``dataset_kwargs: cache_dir``), named by
the folder's path and fingerprint: ``datasets`` names the cache of a local folder by the folder's
name, so two folders called ``bqa`` shared one entry and lmms-eval iterated the other folder's docs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from builders.files.folders import atomic_directory, copy_folder
from builders.files.jsonio import write_text_atomic
from builders.hub.layout import CARD_FILE
from builders.hub.source import folder_fingerprint
from builders.integrations.lmms_eval.tasks import BQA_TEMPLATE, MARINELIFE_TEMPLATE

TEMPLATES = {"bqa": BQA_TEMPLATE, "marinelife16k": MARINELIFE_TEMPLATE}
CACHE_FOLDER = "datasets-cache"
_DATASET_PATH = re.compile(r"^dataset_path:.*$", re.MULTILINE)
#: Left in a configured task folder: configuring into it again replaces it (a hidden file: no task).
TASKS_MARKER = ".vqabench-lmms-eval-tasks"


def datasets_cache(out: Path, folder: Path) -> Path:
    """The ``datasets`` cache of one data folder: named by its resolved path and its fingerprint
    (a re-exported folder gets a new one)."""
    identity = json.dumps([str(folder.resolve()), folder_fingerprint(folder)])
    return (
        out.resolve() / CACHE_FOLDER / f"{folder.name}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
    )


def configure_lmms_eval(shipped: Path, out: Path, data: Mapping[str, Path]) -> Path:
    """Copy ``shipped`` to ``out`` (replacing a folder this function wrote before, never another) and
    point each named dataset's template at its folder, which must be a Hub-layout folder (lmms-eval
    reads it with ``datasets.load_dataset``). Returns ``out``."""
    for name, folder in data.items():
        if name not in TEMPLATES:
            raise ValueError(f"unknown dataset {name!r}; expected one of {list(TEMPLATES)}")
        if not (Path(folder) / CARD_FILE).is_file():
            raise FileNotFoundError(
                f"{folder}: not a Hub-layout folder (no {CARD_FILE}); lmms-eval loads data with "
                f"datasets.load_dataset: export one with 'vqabench {'bqa' if name == 'bqa' else 'marinelife'} export'"
            )
    inputs = {f"the {name} data": folder for name, folder in data.items()}
    with atomic_directory(out, marker=TASKS_MARKER, protect=inputs) as tmp:
        copy_folder(shipped, tmp)
        for name, folder in data.items():
            template = tmp / TEMPLATES[name]
            text = template.read_text(encoding="utf-8")
            cache = datasets_cache(Path(out), Path(folder))  # where the folder will be, not the temporary one
            line = f"dataset_path: {Path(folder).resolve()}\ndataset_kwargs:\n  cache_dir: {cache}"
            write_text_atomic(template, _DATASET_PATH.sub(_literally(line), text, count=1))
    return Path(out)


def _literally(text: str) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement that inserts ``text`` as it is (a path's backslashes are no escapes)."""
    return lambda _: text
