"""Run ``vqabench ARGS`` with every saved figure checked (tests/plot_checks.py), and write the checks to
RECORD.json: ``python tests/plot_probe.py RECORD.json demo --out OUT``. The command runs exactly as
``python -m builders.cli ARGS`` would; the spy only reads the figures after they are written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plot_checks import spy_on_figures  # noqa: E402

import builders.report.plots as plots  # noqa: E402
from builders.cli import main  # noqa: E402


def run(record_path: str, argv: list[str]) -> int:
    record: list = []
    spy_on_figures(plots, setattr, record)
    try:
        return main(argv)
    finally:
        Path(record_path).write_text(json.dumps(record, indent=1), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2:]))
