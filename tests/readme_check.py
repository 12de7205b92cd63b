"""Run the README and the guide's runnable pages as a new user would, from a fresh clone (``.ci/run``).

1. ``git clone`` the checkout's committed HEAD into a temporary folder (nothing else of the
   checkout: no venv, no build output, no uncommitted file);
2. run the README's "Set up" command there, literally (a new venv, ``pip install -e .``, the demo):
   this needs the package index, as it does for a user;
3. offline (``HF_HUB_OFFLINE=1``, every proxy pointing nowhere), with that venv active, in the clone:
   every other ``bash`` block of README.md, then of each page in :data:`PAGES` that says
   :data:`RUNNABLE`, each page in one shell session (a variable a block sets is there in the next,
   as in a user's terminal), in order. A block preceded by ``<!-- readme-check: skip (why) -->`` is
   not run (it needs a key or the Hub) and is listed with its reason.

Exit status 1 naming the page and block that failed, with its output. ``--clone DIR`` keeps the
clone (for a look afterwards). Prints each step's time: the newcomer path's timings. What can be
checked of the skipped commands without a network is checked by ``tests/test_readme.py``.

    python tests/readme_check.py [--clone DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
SETUP_HEADING = "## Set up"
RUNNABLE = "<!-- readme-check: runnable page -->"
SKIP = re.compile(r"^<!-- readme-check: skip \((.+)\) -->$")
#: The guide's pages, in the order a newcomer reads them (docs/ relative); those marked run.
PAGES = ("getting-started.md", "researchers.md", "maintainers.md", "harnesses.md")
_BLOCK = "::readme-check block"


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


def skip_reason(before: str | None) -> str | None:
    match = SKIP.match(before or "")
    return match.group(1) if match else None


def checked_blocks(text: str, readme: bool = False) -> list[str]:
    """The blocks the check runs: every bash block not marked skip (the README's set-up runs first,
    on its own)."""
    setup = setup_command(text) if readme else None
    return [
        body for before, body in bash_blocks(text) if skip_reason(before) is None and body.strip() != setup
    ]


def runnable_pages(checkout: Path = CHECKOUT) -> list[Path]:
    return [
        checkout / "docs" / name
        for name in PAGES
        if RUNNABLE in (checkout / "docs" / name).read_text("utf-8")
    ]


def served_ports(text: str) -> set[str]:
    """Ports a page starts ``vqabench serve --detach`` on (stopped after a failure)."""
    return set(re.findall(r"vqabench serve --port (\d+) --detach", text))


def run_page(name: str, blocks: list[str], cwd: Path, env: dict[str, str]) -> float:
    """``blocks`` in one bash session (``set -e``); exits naming the block that failed."""
    script = [". .venv/bin/activate"]
    for number, block in enumerate(blocks, start=1):
        script += [f"echo '{_BLOCK} {number}' >&2", block]
    started = time.monotonic()
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", "\n".join(script)], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    seconds = time.monotonic() - started
    if done.returncode != 0:
        reached = re.findall(rf"^{_BLOCK} (\d+)$", done.stdout, re.MULTILINE)
        number = int(reached[-1]) if reached else 1
        output = done.stdout[done.stdout.rfind(f"{_BLOCK} {number}") :]
        sys.exit(
            f"readme check: {name}, block {number} failed (exit {done.returncode}):\n{blocks[number - 1]}\n"
            f"{output[-6000:]}"
        )
    print(f"readme check: {name}: {len(blocks)} block(s) ok ({seconds:.0f} s)")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clone", type=Path, help="clone into this (new) folder and keep it")
    args = parser.parse_args()

    readme = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    pages = [("README.md", readme, checked_blocks(readme, readme=True))]
    pages += [
        (f"docs/{p.name}", t, checked_blocks(t)) for p in runnable_pages() if (t := p.read_text("utf-8"))
    ]
    for name, text, _ in pages:
        for before, _body in bash_blocks(text):
            if (why := skip_reason(before)) is not None:
                print(f"readme check: {name}: a block not run here: {why}")
    temporary = None if args.clone else tempfile.mkdtemp(prefix="vqabench-readme-")
    clone = args.clone or Path(temporary) / "clone"
    offline: dict[str, str] = {}
    try:
        subprocess.run(["git", "clone", "--quiet", str(CHECKOUT), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["PATH"] = os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(CHECKOUT))
        )
        total = _setup(readme, clone, env)
        offline = {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(clone / ".hf"),
                   "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1"}  # fmt: skip
        for name, _, blocks in pages:
            total += run_page(name, blocks, clone, offline)
        print(f"readme check: the newcomer path took {total:.0f} s")
    finally:
        if offline:
            for port in set().union(*(served_ports(text) for _, text, _ in pages)):
                subprocess.run(["bash", "-c", f". .venv/bin/activate && vqabench serve --port {port} --stop"],
                               cwd=clone, env=offline, capture_output=True)  # fmt: skip
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    return 0


def _setup(readme: str, clone: Path, env: dict[str, str]) -> float:
    command = setup_command(readme)
    started = time.monotonic()
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=clone, env=env,
                          capture_output=True, text=True)  # fmt: skip
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"readme check: Set up failed (exit {done.returncode}):\n$ {command}\n"
                 f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")  # fmt: skip
    timer = re.search(r"vqabench demo finished in ([\d.]+) s", done.stdout)
    print(f"readme check: Set up (new venv, pip install -e ., vqabench demo): ok ({seconds:.0f} s; the demo "
          f"itself {timer.group(1) if timer else '?'} s)")  # fmt: skip
    return seconds


if __name__ == "__main__":
    sys.exit(main())
