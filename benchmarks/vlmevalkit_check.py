"""Check, not part of CI: the shipped VLMEvalKit datasets in real VLMEvalKit, from PyPI, against the local chat server.

VLMEvalKit itself is not on PyPI; two packagings are: ``nvidia-vlmeval`` and ``ms-vlmeval``
(``--package``). Steps (each printed with its outcome):

1. a venv (``--venv``, default a temporary folder) with the packaging and this checkout (with its
   ``harness`` extra for xlsx), from PyPI;
2. the bundled BQA and MarineLife-16K samples rebuilt offline and exported in Hub layout (their
   clips' frames carry their own number);
3. ``python -m builders.integrations.vlmevalkit <vlmeval>/run.py --data BQA_16frame BQA_1fps
   MarineLife16K_8frame --model GPT4o`` (its OpenAI API model, ``OPENAI_API_BASE`` pointing at
   :class:`builders.testing.chat_server.ChatServer` on 127.0.0.1, which answers option A and reads
   the frame numbers of every image it receives: each request must carry exactly the frames of the
   ``vlmevalkit`` rule for the clip of the question asked); ``--api-mode`` too where the packaging
   has it (prompts built in worker processes);
4. the result files: every row records that frame spec, and ``vqabench report`` on them equals the
   scores the datasets' ``evaluate`` wrote.

Run: ``python benchmarks/vlmevalkit_check.py [--package nvidia-vlmeval==26.3] [--venv DIR]``; exit
status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness_check import (  # noqa: E402
    ROOT,
    FrameLedger,
    build_env,
    compare,
    expected_item,
    finish,
    installed,
    samples,
    step,
)

from builders.integrations import items as it  # noqa: E402
from builders.integrations.vlmevalkit import SUPPORTED  # noqa: E402
from builders.report.provenance import run_provenance  # noqa: E402
from builders.testing.chat_server import ChatServer  # noqa: E402

DATASETS = ("BQA_16frame", "BQA_1fps", "MarineLife16K_8frame")


def expected_items(hubs: dict[str, Path]) -> list:
    out = []
    for name in DATASETS:
        key = "bqa" if name.startswith("BQA") else "marinelife16k"
        dataset = SUPPORTED[name](data_dir=hubs[key], frame_root=os.environ["VQABENCH_FRAME_ROOT"])
        for row in dataset.data.to_dict("records"):
            out.append(
                expected_item(row["question"], dataset.video_source(row["video"]), dataset.frame_spec())
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--package", default="nvidia-vlmeval==26.3", help="the packaging to install (pip spec)"
    )
    parser.add_argument("--venv", type=Path, help="reuse or create the venv here (default: a temporary one)")
    parser.add_argument("--api-mode", action="store_true", help="also run run.py --api-mode (ms-vlmeval)")
    args = parser.parse_args()
    if importlib.util.find_spec("openpyxl") is None:  # VLMEvalKit's results are .xlsx files
        sys.exit('vlmevalkit_check: reading the result files needs openpyxl: pip install -e ".[harness]"')
    tmp = Path(tempfile.mkdtemp(prefix="vlmevalkit-check-"))
    os.environ.update(
        {"VQABENCH_VIDEO_CACHE": str(tmp / "videos"), "VQABENCH_FRAME_ROOT": str(tmp / "frames")}
    )
    python = build_env(args.venv or tmp / "venv", [args.package, f"{ROOT}[harness]"])
    distribution = args.package.split("=")[0].split("<")[0].split(">")[0]
    version = installed(python, distribution)
    print(f"   {distribution} {version}")
    hubs = samples(python, tmp)
    run_py = step("run.py", [python, "-c", "import os, vlmeval; print(os.path.join(os.path.dirname(vlmeval.__file__), 'run.py'))"]).stdout.strip()  # fmt: skip
    items = expected_items(hubs)
    failures, table = 0, []
    for mode in [[], *([["--api-mode"]] if args.api_mode else [])]:
        ledger = FrameLedger(items)
        work = tmp / f"out{'-api' if mode else ''}"
        with ChatServer(model="check-model") as server:
            server.handler = ledger.handler
            env = {**os.environ, "OPENAI_API_BASE": f"{server.url}/chat/completions", "OPENAI_API_KEY": "sk-unused",
                   "VQABENCH_BQA_DATA": str(hubs["bqa"]), "VQABENCH_MARINELIFE16K_DATA": str(hubs["marinelife16k"]),
                   "LMUData": str(tmp / "LMUData")}  # fmt: skip
            done = step(f"VLMEvalKit {' '.join(mode) or 'run.py'}", [python, "-m", "builders.integrations.vlmevalkit", run_py,
                        "--data", *DATASETS, "--model", "GPT4o", "--work-dir", work, *mode], env=env)  # fmt: skip
            log = done.stdout + done.stderr
        print(f"   {ledger.summary()}")
        for line in ledger.unmatched[:3]:
            print(f"   not the rule's frames: {line}")
        failures += ledger.matched != ledger.requests or ledger.requests == 0
        table.append((" ".join(mode) or "default", ledger))
        for name in DATASETS:
            failures += not check_dataset(name, work, hubs, python.parent, log)
    return finish(f"{distribution} {version}", "mode", table, failures, tmp)


def check_dataset(name: str, work: Path, hubs: dict[str, Path], bin_dir: Path, log: str) -> bool:
    results = [p for suffix in (".xlsx", ".tsv") for p in work.rglob(f"*_{name}{suffix}")]
    if not results:
        print(f"   {name}: no result file (VLMEvalKit logs a dataset's failure and goes on): FAILED")
        for line in [x for x in log.splitlines() if name in x or "Error" in x][-8:]:
            print(f"      {line[:300]}")
        return False
    result = results[0]
    frames = run_provenance(result)["frames"]
    spec = SUPPORTED[name](data_dir=hubs["bqa" if name.startswith("BQA") else "marinelife16k"]).frame_spec()
    ok = frames == spec.to_json()
    print(f"   {name}: {result.name}; frames recorded {frames} ({'right' if ok else 'WRONG'})")
    scores_file = result.with_name(f"{result.stem}_score.json")
    if not scores_file.is_file():
        print(f"   {name}: evaluate wrote no {scores_file.name}: FAILED")
        return False
    theirs = json.loads(scores_file.read_text())
    benchmark = "marinelife" if name.startswith("MarineLife") else "bqa"
    report = result.parent / f"report-{name}"
    step(f"report {name}", [bin_dir / "vqabench", "report", benchmark, "--data", hubs["bqa" if benchmark == "bqa" else "marinelife16k"],
                            "--predictions", f"vlmevalkit={result}", "--out", report])  # fmt: skip
    model = json.loads((report / "metrics.json").read_text())["models"]["vlmevalkit"]
    if benchmark == "bqa":
        return ok & compare(f"{name} accuracy", theirs["accuracy"], model["metrics"]["accuracy"])
    return ok & compare(f"{name} overall", theirs[it.OVERALL], model["accuracy"]["overall"])


if __name__ == "__main__":
    sys.exit(main())
