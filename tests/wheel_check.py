"""Check an installed wheel the way a pip user meets it: outside the checkout, offline, every metric
loaded by the path the package gives (``builders.metric_path``), every metric card's examples run.

Run by .ci/run in a fresh virtual environment holding the built wheel (not an editable install),
from a directory outside the checkout::

    python /path/to/checkout/tests/wheel_check.py [--demo]

For each metric folder: ``evaluate.load(metric_path(name))``, then the ``>>>`` examples of every
```python block of its card (README.md, one session: later blocks reuse earlier names) and of the
module's inputs description, as doctests. ``--demo`` also runs ``vqabench demo``, which scores with
the same packaged metrics, then ``vqabench serve`` and an evaluation against it. Exits 1 on any failure. Not collected by pytest (no ``test_`` prefix).
"""

from __future__ import annotations

import argparse
import doctest
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def offline_environment(home: Path) -> None:
    """No network and a private Hugging Face cache, for this process and the commands it starts."""
    os.environ.update({
        "HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1", "HF_UPDATE_DOWNLOAD_COUNTS": "0",
    })  # fmt: skip
    for name in ("HF_MODULES_CACHE", "HF_EVALUATE_CACHE", "HF_METRICS_CACHE", "XDG_CACHE_HOME"):
        os.environ.pop(name, None)


def card_examples(card: Path) -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", card.read_text(encoding="utf-8"), re.S))


def run_metric(name: str) -> tuple[int, int]:
    """(failures, examples tried) of metric ``name``'s card and docstring."""
    import evaluate

    from builders import metric_path

    folder = Path(metric_path(name))
    metric = evaluate.load(str(folder))
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for text, where in (
        (card_examples(folder / "README.md"), "card"),
        (metric.inputs_description, "docstring"),
    ):
        runner.run(parser.get_doctest(text, {"evaluate": evaluate}, f"{name}-{where}", str(folder), 0))
    return runner.failures, runner.tries


def served_evaluation(demo: Path, tmp: Path) -> list[str]:
    """``vqabench serve`` from the wheel (its responders ship), and an evaluation of the demo's BQA
    release against it: the offline tour works without a checkout."""
    started = subprocess.run(["vqabench", "serve", "--detach"], capture_output=True, text=True)
    if started.returncode != 0:
        return [f"vqabench serve --detach failed:\n{started.stderr[-2000:]}"]
    url = started.stdout.split(" at ", 1)[1].split()[0]
    port = url.rsplit(":", 1)[1].split("/")[0]
    try:
        run = subprocess.run(["vqabench", "bqa", "evaluate", "--data", str(demo / "hub" / "bqa"), "--split", "test",
                              "--num-frames", "4", "--out", str(tmp / "served.jsonl"), "--llm-model", "scripted",
                              "--llm-base-url", url, "--llm-api-key-env", "none"],
                             capture_output=True, text=True)  # fmt: skip
    finally:
        subprocess.run(["vqabench", "serve", "--port", port, "--stop"], capture_output=True, text=True)
    print(f"vqabench serve + bqa evaluate: exit {run.returncode}")
    return (
        [] if run.returncode == 0 else [f"bqa evaluate against vqabench serve failed:\n{run.stderr[-3000:]}"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--demo", action="store_true", help="also run 'vqabench demo' in a temporary folder")
    args = parser.parse_args()

    import builders

    installed = Path(builders.__file__).resolve().parent
    problems = []
    if installed.is_relative_to(CHECKOUT) or Path.cwd().resolve().is_relative_to(CHECKOUT):
        problems.append(f"run from outside the checkout, with the wheel installed (builders at {installed})")
    root = builders.metrics_dir()
    if not root.is_relative_to(installed):
        problems.append(f"metrics_dir() {root} is not inside the installed package {installed}")
    printed = subprocess.run(["vqabench", "metrics", "path"], check=True, capture_output=True, text=True)
    if Path(printed.stdout.strip()) != root:
        problems.append(f"'vqabench metrics path' printed {printed.stdout.strip()!r}, expected {root}")
    expected = sorted(p.name for p in (CHECKOUT / "metrics").iterdir() if (p / f"{p.name}.py").is_file())
    if builders.metric_names() != expected:
        problems.append(f"the wheel has metrics {builders.metric_names()}, the checkout {expected}")

    with tempfile.TemporaryDirectory(prefix="vqabench-wheel-check-") as tmp:
        offline_environment(Path(tmp) / "hf")
        for name in builders.metric_names():
            failures, tries = run_metric(name)
            print(
                f"{name}: {tries - failures}/{tries} card and docstring examples passed ({builders.metric_path(name)})"
            )
            if failures or not tries:
                problems.append(f"{name}: {failures} of {tries} examples failed")
        if args.demo:
            out = Path(tmp) / "demo"
            demo = subprocess.run(["vqabench", "demo", "--out", str(out)], capture_output=True, text=True)
            print(f"vqabench demo: exit {demo.returncode}")
            if demo.returncode != 0:
                problems.append(f"vqabench demo failed:\n{demo.stdout[-2000:]}\n{demo.stderr[-3000:]}")
            else:
                via = json.loads((out / "reports" / "scores.json").read_text())["metrics_via"]
                print(f"  scored with {via}")
                # The metric modules by the package's own paths (metrics_dir() is inside it: checked above);
                # the demo's files name no local path.
                if not via.startswith("evaluate.load(builders.metric_path("):
                    problems.append(f"vqabench demo scored with {via}, not the packaged metrics in {root}")
                problems += served_evaluation(out, Path(tmp))
    for problem in problems:
        print(f"wheel check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
