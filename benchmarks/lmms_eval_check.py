"""Check, not part of CI: run the shipped lmms-eval tasks in real lmms-eval against the local chat server.

Steps (each printed with its outcome):

1. a throwaway venv (``--venv``, default a temporary folder) with ``lmms-eval==0.7.2`` (and its
   torch/transformers dependencies), ``decord`` (its OpenAI-compatible model reads videos with it)
   and this project, all from PyPI / this checkout;
2. the bundled BQA and MarineLife-16K samples rebuilt offline and exported in Hub layout, and the
   task folder configured for them (``vqabench integrations path lmms-eval --data ...``);
3. :class:`builders.testing.chat_server.ChatServer` on 127.0.0.1, replying the first option of each
   question and reading the frame number painted into every frame it receives (the samples' clips
   carry theirs), to compare with this project's ``lmms-eval-openai`` frame rule;
4. ``lmms-eval --model openai --force_simple --tasks bqa,bqa_cot,marinelife16k_mcq --include_path ...
   --log_samples`` against it. ``--force_simple`` picks ``models/simple/openai.py`` (full-size PNG
   frames, the ``lmms-eval-openai`` rule); without it 0.7.2 picks its chat model, which samples and
   resizes frames through qwen-vl-utils (e.g. 128x96 -> 392x280), a rule this project does not model;
5. ``vqabench report`` on lmms-eval's sample logs: its accuracy must equal lmms-eval's.

Run: ``python benchmarks/lmms_eval_check.py [--venv DIR] [--keep]``. Needs network access to PyPI
(several GB: torch) and about 15 minutes on 2 CPUs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from builders.llm.messages import data_url_bytes
from builders.testing.chat_requests import image_urls, last_user_text
from builders.testing.chat_server import ChatServer
from builders.testing.clips import read_frame_code
from builders.video.frame_spec import FrameSpec

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("bqa", "bqa_cot", "marinelife16k_mcq")
# lmms-eval 0.7.2 imports filelock._api, which filelock 4 no longer has.
PACKAGES = ["lmms-eval==0.7.2", "decord", "filelock<4"]
# The lmms-eval 0.7.2 wheel on PyPI lacks its own tasks' ``_default_template_yaml`` files (e.g.
# tasks/corecognition), so indexing the built-in tasks fails before ours are read. The check runs the
# CLI with the built-in tasks left out (TaskManager's include_defaults=False): only --include_path's.
LAUNCH = (
    "import sys, lmms_eval.tasks as t; d = list(t.TaskManager.__init__.__defaults__); d[2] = False; "
    "t.TaskManager.__init__.__defaults__ = tuple(d); from lmms_eval.__main__ import cli_evaluate; cli_evaluate()"
)


def step(name: str, command: list[str], show: bool = False, **kwargs) -> subprocess.CompletedProcess:
    print(f"== {name}: {' '.join(command[:6])}{' ...' if len(command) > 6 else ''}", flush=True)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    print(f"   exit {done.returncode} in {time.monotonic() - started:.0f} s", flush=True)
    if done.returncode != 0 or show:
        print((done.stdout + done.stderr)[-4000:])
    if done.returncode != 0:
        raise SystemExit(f"{name} failed")
    return done


def first_option(body: dict) -> str:
    """The text of option A in the prompt ("A. Happiness" or "(A) ..."), else "A"."""
    match = re.search(r"^\(?A[.)]\s*(.+)$", last_user_text(body), re.MULTILINE)
    return match.group(1).strip() if match else "A"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, help="reuse or create the venv here (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lmms-eval-check-"))
    venv = args.venv or tmp / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        step("venv", [sys.executable, "-m", "venv", str(venv)])
    step("install", [str(python), "-m", "pip", "install", "-q", *PACKAGES, str(ROOT)])
    version = step(
        "version", [str(python), "-c", "import importlib.metadata as m; print(m.version('lmms-eval'))"]
    )
    print(f"   lmms-eval {version.stdout.strip()}")

    hubs = {"bqa": tmp / "bqa-hub", "marinelife16k": tmp / "ml-hub"}
    build = (
        "from builders.demo.samples import rebuild_bqa, rebuild_marinelife; import sys; t = sys.argv[1]; "
        "rebuild_bqa(t + '/bqa-work', t + '/bqa-hub', t + '/bqa-cache'); "
        "rebuild_marinelife(t + '/ml-work', t + '/ml-hub', t + '/ml-cache')"
    )
    step("samples", [str(python), "-c", build, str(tmp)])
    tasks = tmp / "tasks"
    configure = [str(venv / "bin" / "vqabench"), "integrations", "path", "lmms-eval", "--out", str(tasks)]
    for name, hub in hubs.items():
        configure += ["--data", f"{name}={hub}"]
    step("configure", configure)

    frames_seen: list[tuple[int, ...]] = []

    def handler(body: dict) -> str:
        images = [
            np.asarray(Image.open(io.BytesIO(data_url_bytes(u))).convert("RGB")) for u in image_urls(body)
        ]
        frames_seen.append(tuple(read_frame_code(rgb) for rgb in images))
        return first_option(body)

    with ChatServer(model="check-model") as server:
        server.handler = handler
        out = tmp / "lmms-out"
        env = {**os.environ, "VQABENCH_VIDEO_CACHE": str(tmp / "videos"), "HF_DATASETS_OFFLINE": "1",
               "OPENAI_API_KEY": "unused", "OPENAI_API_BASE": server.url}  # fmt: skip
        model_args = f"model_version=check-model,base_url={server.url},api_key=unused,max_frames_num=16"
        step("lmms-eval", [str(python), "-c", LAUNCH, "--model", "openai", "--model_args", model_args,
                           "--tasks", ",".join(TASKS), "--include_path", str(tasks), "--batch_size", "1", "--force_simple",
                           "--output_path", str(out), "--log_samples"], env=env, show=True)  # fmt: skip
    print(f"   {len(frames_seen)} chat requests, frames per request: {sorted({len(f) for f in frames_seen})}")
    rules = {}
    for rule in ("lmms-eval-openai", "lmms-eval", "uniform"):
        spec = FrameSpec(fps=None, num_frames=16, rule=rule)
        rules[rule] = {tuple(spec.sample(path).indices) for path in (tmp / "videos").glob("*.mp4")}
    print(f"   e.g. received frames {frames_seen[0]}")
    for rule, lists in rules.items():
        print(f"   requests whose frames are the {rule} rule's for one of the clips: "
              f"{sum(f in lists for f in frames_seen)} of {len(frames_seen)}")  # fmt: skip
    results = json.loads(next(out.rglob("*_results.json")).read_text())["results"]
    failures = 0
    for task in TASKS:
        (samples,) = out.rglob(f"*_samples_{task}.jsonl")
        report = tmp / f"report-{task}"
        benchmark = "marinelife" if task.startswith("marinelife") else "bqa"
        step(f"report {task}", [str(venv / "bin" / "vqabench"), "report", benchmark, "--data",
                                str(hubs["bqa" if benchmark == "bqa" else "marinelife16k"]),
                                "--predictions", f"lmms={samples}", "--out", str(report)])  # fmt: skip
        metrics = json.loads((report / "metrics.json").read_text())
        ours = metrics["models"]["lmms"]
        ours = ours["metrics"]["accuracy"] if benchmark == "bqa" else ours["accuracy"]["overall"]
        key = "accuracy" if benchmark == "bqa" else "accuracy_overall"
        theirs = next(v for k, v in results[task].items() if k.split(",")[0] == key)
        same = abs(ours - theirs) < 1e-9
        failures += not same
        print(
            f"   {task}: lmms-eval {key} {theirs} / vqabench report {ours}: {'equal' if same else 'DIFFERENT'}"
        )
    if not args.keep and args.venv is None:
        print(f"   (temporary folder {tmp} left for inspection; delete it when done)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
