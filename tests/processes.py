"""``vqabench`` as a real subprocess, for tests that check what a user's shell sees (exit code, stderr)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def vqabench(
    args: list[str], *, cwd: Path | None = None, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess:
    """Run ``python -m builders.cli ARGS`` with ``env`` added to a copy of the environment that has no
    proxy and no ``VQABENCH_LLM_*``/``VQABENCH_JUDGE_*`` defaults (a developer's shell must not leak in)."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if "proxy" not in k.lower() and not k.startswith(("VQABENCH_LLM", "VQABENCH_JUDGE"))
    }
    return subprocess.run(
        [sys.executable, "-m", "builders.cli", *args],
        env={**clean, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
