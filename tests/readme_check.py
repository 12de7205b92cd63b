"""Run the README's commands as a new user would, from a fresh clone (``.ci/run`` calls this).

1. ``git clone`` the checkout's committed HEAD into a temporary folder (nothing else of the
   checkout: no venv, no build output, no uncommitted file);
2. run the README's "Set up" demo command there, literally (a new venv, ``pip install -e .``, the
   demo): this needs the package index, as it does for a user;
3. run every ``bash`` block the README marks ``<!-- readme-check: run -->``, in the clone, with that
   venv active, offline (``HF_HUB_OFFLINE=1``, every proxy pointing nowhere).

Exit status 1 naming the first command that failed, with its output. ``--clone DIR`` keeps the clone
(for a look afterwards). The README's other commands need the Hub, an API key or a GPU server; what
can be checked of them without one (the test command, the apt line, no placeholder repo id, no
``pip install`` of a package that is not on PyPI) is checked by ``tests/test_readme.py``.

    python tests/readme_check.py [--clone DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
MARK = "<!-- readme-check: run -->"
SETUP_HEADING = "## Set up"


def bash_blocks(text: str) -> list[tuple[str | None, str]]:
    """``(the non-blank line before the fence, body)`` of every ```bash block, in order."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            before = next((line.strip() for line in reversed(lines[:i]) if line.strip()), None)
            end = lines.index("```", i + 1)
            out.append((before, "\n".join(lines[i + 1 : end]) + "\n"))
            i = end
        i += 1
    return out


def setup_command(text: str) -> str:
    """The first bash block of the "Set up" section: the install-and-demo line."""
    section = text[text.index(SETUP_HEADING) :]
    return bash_blocks(section)[0][1].strip()


def checked_blocks(text: str) -> list[str]:
    return [body for before, body in bash_blocks(text) if before == MARK]


def run(command: str, cwd: Path, env: dict[str, str], what: str) -> float:
    started = time.monotonic()
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=cwd, env=env,
                          capture_output=True, text=True)  # fmt: skip
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(
            f"readme check: {what} failed (exit {done.returncode}):\n$ {command}\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    print(f"readme check: {what}: ok ({seconds:.0f} s)")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clone", type=Path, help="clone into this (new) folder and keep it")
    args = parser.parse_args()

    text = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    blocks = checked_blocks(text)
    if not blocks:
        sys.exit(f"readme check: README.md marks no block with {MARK}")
    temporary = None if args.clone else tempfile.mkdtemp(prefix="vqabench-readme-")
    clone = args.clone or Path(temporary) / "clone"
    try:
        subprocess.run(["git", "clone", "--quiet", str(CHECKOUT), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["PATH"] = os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(CHECKOUT))
        )
        seconds = run(setup_command(text), clone, env, "Set up (new venv, pip install -e ., vqabench demo)")
        print(f"readme check: install + demo took {seconds:.0f} s")
        offline = {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(clone / ".hf"),
                   "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}  # fmt: skip
        for number, block in enumerate(blocks, start=1):
            run(f". .venv/bin/activate\n{block}", clone, offline, f"checked block {number}")
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
