"""Everything that is not a dataset package, in sub-packages by layer (imports point down only;
``tests/test_layering.py`` keeps it so).

Primitives: :mod:`.files` (atomic files, JSON/JSONL), :mod:`.video` (frames: the researcher API
``from builders.video import sample_frames``), :mod:`.llm` (the one LLM client), :mod:`.hub` (Hub
layout, publishing), :mod:`.scoring` (generic scoring and the judge core), :mod:`.runs` (resumable
steps). Above the dataset packages: :mod:`.pipelines` (regeneration), :mod:`.evaluation` (model
runners), :mod:`.report`, :mod:`.demo`, :mod:`.cli`. Beside them: :mod:`.testing` (test doubles).

It also knows where the project's ``evaluate`` metric modules are, wherever the package is
installed (a wheel ships them as ``builders/metrics/``; a checkout keeps them in ``metrics/``)::

    import evaluate, builders
    bqa = evaluate.load(builders.metric_path("bqa_accuracy"))

(``vqabench metrics path [NAME]`` prints the same folders.)
"""

from __future__ import annotations

import time
from pathlib import Path

#: When this package was first imported (``time.perf_counter``): where a command's own timer starts,
#: so that it counts the libraries' imports but not what ran before this process (``/proc``'s start
#: time does: bash runs the last command of ``a && b && vqabench demo`` in its own process).
STARTED = time.perf_counter()

_HERE = Path(__file__).resolve().parent

#: How to install this tooling, said the same way by the README and both dataset cards. It is not on
#: PyPI (``pip install videoqa-bench-tools`` finds nothing) until a release is published there.
INSTALL_HINT = (
    "videoqa-bench-tools is not on PyPI yet: install it from a checkout of its source repository "
    "(`pip install -e .` in the checkout, or `pip install .` for a non-editable copy)"
)


def _has_metrics(folder: Path) -> bool:
    return folder.is_dir() and any((d / f"{d.name}.py").is_file() for d in folder.iterdir())


def metrics_dir() -> Path:
    """The folder holding one sub-folder per metric (``<name>/<name>.py`` + its card ``README.md``).

    An installed wheel has it inside the package (``builders/metrics/``); a source checkout (an
    editable install) has the repository's ``metrics/``. FileNotFoundError if neither is there.
    """
    installed, checkout = _HERE / "metrics", _HERE.parent / "metrics"
    if _has_metrics(installed):
        return installed
    if (_HERE.parent / "pyproject.toml").is_file() and _has_metrics(checkout):
        return checkout
    raise FileNotFoundError(
        f"no metric modules in {installed} (installed wheel) or {checkout} (source checkout); "
        "reinstall videoqa-bench-tools"
    )


def metric_names() -> list[str]:
    """The metrics there are, sorted (``bqa_accuracy``, ``judge``, ...)."""
    return sorted(d.name for d in metrics_dir().iterdir() if (d / f"{d.name}.py").is_file())


def metric_path(name: str) -> str:
    """The folder of metric ``name`` as a string, ready for ``evaluate.load(metric_path(name))``
    (evaluate takes no :class:`~pathlib.Path`); ValueError naming the known metrics for an unknown name."""
    names = metric_names()
    if name not in names:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(names)}")
    return str(metrics_dir() / name)


DISTRIBUTION = "videoqa-bench-tools"


def tool_version() -> str:
    """``videoqa-bench-tools <version>``, as every predictions file, metrics JSON and report records it
    (``unknown`` for a bare checkout that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version  # lazy: a third of the CLI's start-up

    try:
        found = version(DISTRIBUTION)
    except PackageNotFoundError:
        found = "unknown (not installed)"
    return f"{DISTRIBUTION} {found}"
