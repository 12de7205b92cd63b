"""Check, not part of CI: the shipped lmms-eval tasks in real lmms-eval, from PyPI, against the local chat server.

Steps (each printed with its outcome):

1. a venv (``--venv``, default a temporary folder) with ``lmms-eval==VERSION`` and this checkout's
   ``harness-lmms-eval`` extra (decord, ``filelock<4``), from PyPI, as the README says;
2. the bundled BQA and MarineLife-16K samples rebuilt offline and exported in Hub layout (their
   clips' frames carry their own number), and the task folder configured for them
   (``vqabench integrations path lmms-eval --data ...``);
3. for each openai model path, the default chat model and ``--force_simple``: ``lmms-eval --model
   openai --model_args ...,max_frames_num=N --tasks bqa,bqa_cot,marinelife16k_mcq,marinelife16k_open
   --log_samples`` against :class:`builders.testing.chat_server.ChatServer` on 127.0.0.1, which
   answers option A, lets the judge's requests get schema-valid replies, and reads the frame
   numbers of every image it receives: each request must carry exactly the frames of the
   ``lmms-eval-openai`` rule (N frames) for the clip of the question asked, and every logged line
   must record that spec;
4. ``vqabench report`` (multiple-choice) and ``vqabench marinelife judge`` (open-ended, the same
   judge cache) on lmms-eval's sample logs: the numbers must equal lmms-eval's.

Run: ``python benchmarks/lmms_eval_check.py [--version 0.7.3] [--venv DIR] [--frames 16]``. Needs
PyPI (several GB: torch) and 15-25 minutes on 2 CPUs for a new venv; exit status 1 on any mismatch.
"""

from __future__ import annotations

import argparse
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
from builders.scoring.judge_results import JudgeResult  # noqa: E402
from builders.testing.chat_server import ChatServer  # noqa: E402
from builders.video.frame_spec import FrameSpec  # noqa: E402

TASKS = ("bqa", "bqa_cot", "marinelife16k_mcq", "marinelife16k_open")
MODEL_PATHS = {"chat": [], "simple": ["--force_simple"]}
# lmms-eval 0.7.2's wheel lacks some of its own tasks' _default_template_yaml files, so indexing
# its built-in tasks fails before ours are read: 0.7.2 runs with them left out (TaskManager's
# include_defaults=False), --include_path's alone. 0.7.3 runs as the README says.
LAUNCH_072 = (
    "import sys, lmms_eval.tasks as t; d = list(t.TaskManager.__init__.__defaults__); d[2] = False; "
    "t.TaskManager.__init__.__defaults__ = tuple(d); from lmms_eval.__main__ import cli_evaluate; cli_evaluate()"
)


def expected_items(hubs: dict[str, Path], spec: FrameSpec) -> list:
    bqa = it.bqa_items(str(hubs["bqa"]), "test")
    marine = it.marinelife_items(str(hubs["marinelife16k"]), "test")
    out = []
    for row in bqa.data.rows:
        for style in ("single_word", "rationale"):
            out.append(expected_item(it.bqa_prompt(row, style), bqa.video(row["id"]), spec))
    for record in marine.data.rows:
        out.append(expected_item(it.marinelife_prompt(record), marine.video(record["question_id"]), spec))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.7.3", help="lmms-eval version from PyPI (default 0.7.3)")
    parser.add_argument("--venv", type=Path, help="reuse or create the venv here (default: a temporary one)")
    parser.add_argument("--frames", type=int, default=16, help="max_frames_num (default 16)")
    parser.add_argument(
        "--only", choices=sorted(MODEL_PATHS), help="run one openai model path (default both)"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lmms-eval-check-"))
    os.environ["VQABENCH_VIDEO_CACHE"] = str(tmp / "videos")
    python = build_env(
        args.venv or tmp / "venv", [f"lmms-eval=={args.version}", f"{ROOT}[harness-lmms-eval]"]
    )
    version = installed(python, "lmms-eval")
    print(f"   lmms-eval {version}")
    bin_dir = python.parent
    hubs = samples(python, tmp)
    tasks = tmp / "tasks"
    configure = [bin_dir / "vqabench", "integrations", "path", "lmms-eval", "--out", tasks]
    for name, hub in hubs.items():
        configure += ["--data", f"{name}={hub}"]
    step("configure", configure)
    spec = FrameSpec(fps=None, num_frames=args.frames, rule="lmms-eval-openai")
    items = expected_items(hubs, spec)
    launch = [python, "-c", LAUNCH_072] if version == "0.7.2" else [bin_dir / "lmms-eval"]
    failures, table = 0, []
    for path_name, flags in MODEL_PATHS.items():
        if args.only and path_name != args.only:
            continue
        ledger = FrameLedger(items)
        out = tmp / f"out-{len(table)}"
        judge_cache = tmp / f"judge-{len(table)}.sqlite"
        with ChatServer(model="check-model") as server:
            server.handler = ledger.handler
            env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "OPENAI_API_KEY": "unused",
                   "VQABENCH_JUDGE_MODEL": "check-judge", "VQABENCH_JUDGE_BASE_URL": server.url,
                   "VQABENCH_JUDGE_API_KEY_ENV": "none", "VQABENCH_JUDGE_CACHE": str(judge_cache)}  # fmt: skip
            model_args = f"model_version=check-model,base_url={server.url},max_frames_num={args.frames}"
            # From an empty folder: lmms-eval reads --tasks bqa as a folder of task YAMLs when ./bqa
            # exists (the checkout's bqa/ package, a data folder named bqa) and fails (exit 0).
            run_dir = tmp / f"run-{len(table)}"
            run_dir.mkdir()
            done = step(f"lmms-eval, {path_name}", [*launch, "--model", "openai", "--model_args", model_args, *flags,
                        "--tasks", ",".join(TASKS), "--include_path", tasks, "--output_path", out, "--log_samples"],
                        env=env, cwd=run_dir)  # fmt: skip
            print(f"   {ledger.summary()}")
            for line in ledger.unmatched[:3]:
                print(f"   not the rule's frames: {line}")
            failures += ledger.matched != ledger.requests or ledger.requests == 0
            table.append((path_name, ledger))
            results_files = list(out.rglob("*_results.json"))
            if not results_files:
                print("   lmms-eval wrote no results (it exits 0 on errors): FAILED")
                print((done.stdout + done.stderr)[-4000:])
                failures += 1
                continue
            results = json.loads(results_files[0].read_text())["results"]
            for task in TASKS:
                failures += not check_task(task, out, results, hubs, bin_dir, spec, tmp, env)
    return finish(f"lmms-eval {version}", "model path", table, failures, tmp)


def check_task(task, out, results, hubs, bin_dir, spec, tmp, env) -> bool:
    """The task's logged lines record the rule's frames; its numbers equal vqabench's."""
    (samples_log,) = out.rglob(f"*_samples_{task}.jsonl")
    lines = [json.loads(x) for x in samples_log.read_text().splitlines() if x.strip()]
    recorded = {json.dumps(next(v for v in s.values() if isinstance(v, dict) and "raw_output" in v)
                           ["provenance"]["frames"], sort_keys=True) for s in lines}  # fmt: skip
    ok = recorded == {json.dumps(spec.to_json(), sort_keys=True)}
    print(
        f"   {task}: {len(lines)} logged lines; frames recorded: {sorted(recorded)} ({'right' if ok else 'WRONG'})"
    )
    theirs = {k.split(",")[0]: v for k, v in results[task].items() if "," in k}
    if task == "marinelife16k_open":
        judged = tmp / f"judged-{out.name}.json"
        step(f"judge {task}", [bin_dir / "vqabench", "marinelife", "judge", samples_log, "--out", judged,
                               "--llm-cache", env["VQABENCH_JUDGE_CACHE"]], env=env)  # fmt: skip
        (ours,) = json.loads(judged.read_text()).values()  # one model: the log's name
        for name in ("oemu", "caption"):
            if name in ours:
                ok &= compare(
                    f"{task} {name}_score", theirs[f"{name}_score"], JudgeResult.from_dict(ours[name]).score
                )
        return ok
    benchmark = "marinelife" if task.startswith("marinelife") else "bqa"
    report = tmp / f"report-{out.name}-{task}"
    step(f"report {task}", [bin_dir / "vqabench", "report", benchmark, "--data", hubs["bqa" if benchmark == "bqa" else "marinelife16k"],
                            "--predictions", f"lmms={samples_log}", "--out", report])  # fmt: skip
    model = json.loads((report / "metrics.json").read_text())["models"]["lmms"]
    if benchmark == "bqa":
        return ok & compare(f"{task} accuracy", theirs["accuracy"], model["metrics"]["accuracy"])
    return ok & compare(f"{task} accuracy_overall", theirs["accuracy_overall"], model["accuracy"]["overall"])


if __name__ == "__main__":
    sys.exit(main())
