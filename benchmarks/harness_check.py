"""What the two harness checks share (``lmms_eval_check.py``, ``vlmevalkit_check.py``; not part of CI).

- :func:`step`: one subprocess, timed, its output shown on failure (a harness that exits 0 on an
  error is caught by what it did not write);
- :func:`build_env`: a venv from PyPI with the harness and this checkout (``--venv`` reuses one);
- :func:`samples`: the bundled samples rebuilt offline and exported in Hub layout (clips whose
  frames carry their own number, :func:`builders.testing.clips.read_frame_code`);
- :class:`FrameLedger`: the chat server's handler: it answers each multiple-choice question with
  its option A (a judge request, which asks for a JSON schema, gets the server's schema-valid
  default), reads the frame numbers of every image it receives and whether the text came before
  them, and checks them against the frames the project's rule names for the item asked about.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
# The test doubles (builders.testing) are not in the wheel: run from any venv, even one that has this
# project installed from a wheel (a harness venv), they come from the checkout beside this script.
sys.path.insert(0, str(ROOT))

from builders.llm.messages import data_url_bytes  # noqa: E402
from builders.scripted.chat_requests import image_urls, last_user_text, response_schema  # noqa: E402
from builders.testing.clips import read_frame_code  # noqa: E402
from builders.video.frame_spec import FrameSpec  # noqa: E402


def step(name: str, command: Sequence[str], show: bool = False, **kwargs) -> subprocess.CompletedProcess:
    print(f"== {name}: {' '.join(map(str, command[:6]))}{' ...' if len(command) > 6 else ''}", flush=True)
    started = time.monotonic()
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)
    print(f"   exit {done.returncode} in {time.monotonic() - started:.0f} s", flush=True)
    if done.returncode != 0 or show:
        print((done.stdout + done.stderr)[-6000:])
    if done.returncode != 0:
        raise SystemExit(f"{name} failed")
    return done


def build_env(venv: Path, packages: Sequence[str]) -> Path:
    """``venv`` (created when missing) with ``packages`` and this checkout installed; its python."""
    python = venv / "bin" / "python"
    if not python.exists():
        step("venv", [sys.executable, "-m", "venv", venv])
        step("pip", [python, "-m", "pip", "install", "-q", "--upgrade", "pip"])
    step("install", [python, "-m", "pip", "install", "-q", *packages])
    return python


def installed(python: Path, distribution: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    return step(f"{distribution} version", [python, "-c", code]).stdout.strip()


def samples(python: Path, tmp: Path) -> dict[str, Path]:
    """Both bundled samples rebuilt and exported (in the harness venv, as a user would)."""
    build = (
        "from builders.demo.samples import rebuild_bqa, rebuild_marinelife; import sys; t = sys.argv[1]; "
        "rebuild_bqa(t + '/bqa-work', t + '/bqa', t + '/bqa-cache'); "
        "rebuild_marinelife(t + '/ml-work', t + '/marinelife16k', t + '/ml-cache')"
    )
    step("samples", [python, "-c", build, tmp])
    return {"bqa": tmp / "bqa", "marinelife16k": tmp / "marinelife16k"}


def first_option(text: str) -> str:
    """The text of option A in a prompt ("A. Happiness" or "(A) ..."), else "A"."""
    match = re.search(r"^\(?A[.)]\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else "A"


@dataclass
class Item:
    """One question a harness may ask: its prompt and the frame numbers the rule names for its clip."""

    prompt: str
    codes: tuple[int, ...]
    width: int


def expected_item(prompt: str, clip, spec: FrameSpec) -> Item:
    frames = spec.sample(clip)
    return Item(prompt, tuple(read_frame_code(rgb) for rgb in frames.frames), frames.frames[0].shape[1])


@dataclass
class FrameLedger:
    """The server's handler and what it saw (see the module doc)."""

    items: list[Item] = field(default_factory=list)
    requests: int = 0
    matched: int = 0
    unmatched: list[str] = field(default_factory=list)
    counts: set[int] = field(default_factory=set)
    text_first: set[bool] = field(default_factory=set)
    judged: int = 0

    def handler(self, body: dict) -> str | None:
        if response_schema(body) is not None:
            self.judged += 1
            return None  # the judge: the server's schema-valid default
        text = last_user_text(body)
        urls = image_urls(body)
        self.requests += 1
        self.counts.add(len(urls))
        self.text_first.add(_text_first(body))
        images = [np.asarray(Image.open(io.BytesIO(data_url_bytes(u))).convert("RGB")) for u in urls]
        candidates = [item for item in self.items if item.prompt.strip() in text]
        for item in candidates:
            if tuple(read_frame_code(rgb, item.width) for rgb in images) == item.codes:
                self.matched += 1
                break
        else:
            got = tuple(read_frame_code(rgb) for rgb in images)
            self.unmatched.append(
                f"{len(candidates)} candidate items; received frames {got}; the rule's: "
                f"{[c.codes for c in candidates][:2]}"
            )
        return first_option(text)

    def summary(self) -> str:
        order = {True: "text, then images", False: "images, then text"}
        return (
            f"{self.matched} of {self.requests} requests carried exactly the frames of the recorded rule; "
            f"images per request {sorted(self.counts)}; order: {', '.join(order[t] for t in sorted(self.text_first))}"
        )


def _text_first(body: dict) -> bool:
    for message in body.get("messages", []):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            kinds = [part.get("type") for part in message["content"]]
            return bool(kinds) and kinds[0] == "text" and "image_url" in kinds
    return True


def compare(label: str, theirs: float, ours: float) -> bool:
    same = (theirs != theirs and ours != ours) or abs(theirs - ours) < 1e-9
    print(f"   {label}: harness {theirs} / vqabench {ours}: {'equal' if same else 'DIFFERENT'}")
    return same


def finish(harness: str, column: str, table: list[tuple[str, FrameLedger]], failures: int, tmp: Path) -> int:
    """Print the frames-sent table (the README's) and the verdict; the exit status."""
    print(f"\n| {harness} | {column} | requests | exactly the rule's frames | images per request | order |")
    print("|---|---|---|---|---|---|")
    for label, ledger in table:
        order = "text first" if True in ledger.text_first else "images first"
        print(
            f"| | {label} | {ledger.requests} | {ledger.matched} | {', '.join(map(str, sorted(ledger.counts)))} | {order} |"
        )
    print(f"\n{'FAILED' if failures else 'passed'} ({failures} failures); folder {tmp} left for inspection")
    return 1 if failures else 0
