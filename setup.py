"""Packaging that pyproject.toml cannot declare: the repository's top-level ``metrics/`` folder (the
evaluate modules and their cards) ships inside the wheel as ``builders/metrics/``, where
:func:`builders.metrics_dir` finds it; ``builders/testing/`` (the test doubles: fake chat and Hub
servers, media writers, scripted responders, and the scripts that write and record the bundled
samples) stays out of it: it runs from a source checkout. Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

METRICS = sorted(
    p.name for p in (Path(__file__).resolve().parent / "metrics").iterdir() if (p / f"{p.name}.py").is_file()
)

setup(
    # Namespace discovery, as for the bundled sample data folders (bqa/sample/...).
    packages=[
        *find_namespace_packages(
            include=["bqa*", "marinelife16k*", "builders*"],
            exclude=["builders.testing", "builders.testing.*"],
        ),
        "builders.metrics",
        *(f"builders.metrics.{name}" for name in METRICS),
    ],
    package_dir={"builders.metrics": "metrics"},
)
