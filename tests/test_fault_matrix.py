"""The fault matrix (issue 37): every command ``vqabench --help`` lists, against the faults that broke
commands one by one: an output folder it does not own, hostile ids in its input, a full disk, SIGINT and
SIGKILL mid-work (and, as rows for the LLM commands, the hooks for reply bombs and echoed credentials).

The commands come from the CLI's own parser (:func:`leaf_commands`): a new command fails
:func:`test_every_command_is_in_the_matrix` until :data:`MATRIX` gives it one cheap invocation (or says
why it has none). Which faults apply follows from what the invocation does (it writes ``{out}``, reads
``{hostile}`` data, talks to ``{llm}``); every other cell is "not applicable" by that rule, with the
reason :func:`cells` gives. Each applicable cell runs a real ``vqabench`` process, and must end in one of
two ways: it **holds** (exit 0, nothing lost, nothing outside its folder) or a **clear error** (exit 2,
one ``vqabench: error:`` line, no traceback, nothing lost). Signals: exit 130 (SIGINT), and the requests
the server answered across the interrupted run and its rerun are those of an uninterrupted run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from builders.cli import build_parser
from builders.testing.chat_faults import Fault
from builders.testing.chat_server import ChatServer

HOSTILE_ID = "../../../../victim/wedding"
NOTES = {"report.md": "my notes\n", "notes.txt": "keep me\n", "configs/table5.json": "mine\n"}
LLM = ("--llm-base-url", "{url}", "--llm-model", "matrix-model", "--llm-api-key-env", "none")
FAULTS = ("foreign_out", "hostile_ids", "full_disk", "sigint", "sigkill")


def leaf_commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every runnable command of the parser tree, as its words (``("bqa", "build")``)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix
    for action in subs:
        for name, sub in action.choices.items():
            yield from leaf_commands(sub, (*prefix, name))


@dataclass(frozen=True)
class Invocation:
    """One cheap run of a command. Placeholders: ``{out}`` (the output it writes: a folder, or with
    ``out_file`` a file), ``{hostile}`` (BQA data whose first rows have :data:`HOSTILE_ID`), ``{url}``
    (the test chat server: the command pays for LLM requests), and the samples' folders."""

    args: tuple[str, ...]
    out_file: bool = False
    responder: str | None = None  # the chat handler its requests need ("bqa", "marinelife"; None: examples)

    @property
    def writes(self) -> bool:
        return any("{out}" in a for a in self.args)

    @property
    def llm(self) -> bool:
        return any("{url}" in a for a in self.args)

    @property
    def hostile(self) -> bool:
        return any("{hostile}" in a for a in self.args)


def _run(*args: str, out_file: bool = False, responder: str | None = None) -> Invocation:
    return Invocation(tuple(args), out_file, responder)


#: command -> its invocation, or why it has none (the reason is the matrix's cell for every fault).
MATRIX: dict[tuple[str, ...], Invocation | str] = {
    ("bqa", "build"): _run("bqa", "build", "--sample", "--work", "{out}", "--limit", "3", "--llm-concurrency", "1", *LLM,
                           responder="bqa"),
    ("bqa", "evaluate"): _run("bqa", "evaluate", "--data", "{hostile}", "--out", "{out}", "--limit", "3",
                              "--llm-concurrency", "1", *LLM, out_file=True),
    ("bqa", "export"): _run("bqa", "export", "{hostile}", "{out}"),
    ("bqa", "stats"): _run("bqa", "stats", "--data", "{bqa_work}", "--no-clips", "--no-self-bleu", "--out", "{out}"),
    ("bqa", "finetune-data"): _run("bqa", "finetune-data", "--data", "{hostile}", "--limit", "2", "--out", "{out}"),
    ("bqa", "check"): "reads a BoLD root and writes nothing (its bad input: tests/test_bqa_bold_input_errors.py)",
    ("demo",): _run("demo", "--out", "{out}"),
    ("frames",): _run("frames", "{clip}", "--num-frames", "2", "--out-dir", "{out}"),
    ("human-study", "make"): _run("human-study", "make", "bqa", "--data", "{hostile}", "--split", "test",
                                  "--size", "2", "--out", "{out}"),
    ("human-study", "score"): "needs raters' answer files; its output folder is the report writer's "
    "(report_folder), exercised by report bqa/marinelife here and by tests/test_human_study.py",
    ("integrations", "path"): _run("integrations", "path", "lmms-eval", "--data", "bqa={bqa_hub}", "--out", "{out}"),
    ("judge", "score"): _run("judge", "score", "{ml_open}", "--out", "{out}", "--llm-cache", "{out}.sqlite",
                             "--llm-concurrency", "1", *LLM, out_file=True),
    ("judge", "rubrics"): "prints the packaged rubrics; reads and writes no file",
    ("leaderboard",): "needs published eval results (tests/test_leaderboard_values.py); its folder is claimed by "
    "the one report writer (report_folder), run here by report bqa/marinelife and the stats",
    ("llm", "cache-stats"): "reads a reply cache and writes nothing",
    ("llm", "export-replies"): _run("llm", "export-replies", "{cache}", "--out", "{out}", out_file=True),
    ("llm", "import-replies"): "writes into the reply cache it is given (SQLite: tests/test_cache_integrity.py, "
    "tests/test_llm_cache.py); no output folder, no ids, no LLM",
    ("llm", "batch", "write"): _run("llm", "batch", "write", "{out}", "--", "bqa", "evaluate", "--data", "{hostile}",
                                    "--out", "{out}.jsonl", "--limit", "3", *LLM),
    ("llm", "batch", "read"): "keeps engine results in the batch folder (the batch store's journal); no output folder",
    ("llm", "batch", "cancel"): "cancels provider batches recorded in the batch folder; writes only its journal",
    ("llm", "check"): "one request: there is no mid-work point to interrupt, nothing to resume; writes nothing",
    ("marinelife", "build"): _run("marinelife", "build", "--attributes", "{ml_attributes}", "--video-root",
                                  "{ml_videos}", "--work", "{out}", "--llm-concurrency", "1", *LLM,
                                  responder="marinelife"),
    ("marinelife", "evaluate"): _run("marinelife", "evaluate", "--data", "{ml_hub}", "--out", "{out}",
                                     "--limit", "3", "--llm-concurrency", "1", *LLM, out_file=True),
    ("marinelife", "judge"): _run("marinelife", "judge", "{ml_open}", "--out", "{out}", "--llm-cache",
                                  "{out}.sqlite", "--llm-concurrency", "1", *LLM, out_file=True),
    ("marinelife", "export"): _run("marinelife", "export", "{ml_work}", "{out}"),
    ("marinelife", "stats"): _run("marinelife", "stats", "--data", "{ml_hub}", "--no-durations", "--out", "{out}"),
    ("marinelife", "check-attributes"): "reads an attributes file and writes nothing",
    ("marinelife", "validate"): "reads a QA JSONL and writes nothing",
    ("marinelife", "sample"): _run("marinelife", "sample", "{out}"),
    ("metrics", "path"): "prints a path; reads and writes nothing",
    ("metrics", "list"): "prints names; reads and writes nothing",
    ("push",): "writes nothing locally; its faults (checksums, a Hub that fails or races) are "
    "tests/test_push_hub.py, tests/test_push_safety.py, tests/test_release_integrity.py",
    ("report", "bqa"): _run("report", "bqa", "--data", "{hostile}", "--split", "test", "--predictions",
                            "m={bqa_preds}", "--allow-missing", "--out", "{out}"),
    ("report", "marinelife"): _run("report", "marinelife", "--data", "{ml_hub}", "--predictions", "m={ml_preds}",
                                   "--allow-missing", "--out", "{out}"),
    ("results", "write"): "writes .eval_results/ into a model folder that is the user's by design (one file "
    "per benchmark, atomically): tests/test_judge_results.py",
    ("results", "show"): "reads and prints; writes nothing",
    ("results", "push"): "writes nothing locally (a Hub upload: tests/test_push_hub.py's server)",
    ("serve",): "a scripted endpoint on 127.0.0.1: reads no data and writes no file (tests/test_serve.py)",
}  # fmt: skip


#: Signals once per way of stopping and resuming (a build's steps, an evaluation, a judge cache): each
#: interrupted run is a process start of its own, and the others go through the same code.
SIGNAL_FAMILIES = {("bqa", "build"), ("bqa", "evaluate"), ("marinelife", "judge")}
SAME_RESUME = {("marinelife", "build"): "bqa build", ("marinelife", "evaluate"): "bqa evaluate",
               ("judge", "score"): "marinelife judge"}  # fmt: skip


def _signal_cell(command: tuple[str, ...], entry: Invocation) -> str | None:
    if entry.llm and command in SIGNAL_FAMILIES:
        return None
    if command in SAME_RESUME:
        return f"stops and resumes as {SAME_RESUME[command]} does (run there)"
    return "pays for nothing (no LLM request)"


def cells(command: tuple[str, ...]) -> dict[str, str]:
    """Each fault's cell for ``command``: ``"run"``, or why it does not apply."""
    entry = MATRIX[command]
    if isinstance(entry, str):
        return dict.fromkeys(FAULTS, entry)
    why = {
        "foreign_out": None if entry.writes and not entry.out_file else "writes one file the user names",
        "hostile_ids": None if entry.hostile else "builds no path from a row id",
        "full_disk": None if entry.writes else "writes nothing",
        "sigint": _signal_cell(command, entry),
        "sigkill": _signal_cell(command, entry),
    }
    if not entry.writes:
        why["foreign_out"] = "writes nothing"
    return {fault: reason or "run" for fault, reason in why.items()}


def test_every_command_is_in_the_matrix():
    listed = set(leaf_commands(build_parser()))
    assert listed - set(MATRIX) == set(), "new command(s): give each an Invocation (or a reason) in MATRIX"
    assert set(MATRIX) - listed == set(), "MATRIX names commands the CLI no longer has"
    for command in MATRIX:
        assert all(cells(command).values()), command


# -- the world the commands run in ----------------------------------------------------------------


def _hostile_work(built, root: Path) -> Path:
    """The BQA sample's work folder, the first row of each split given :data:`HOSTILE_ID` (and the split's
    name: ids are unique over a release), at depth 4
    under ``root`` (so the id, followed, would land in ``root/victim``)."""
    work = root / "a" / "b" / "c" / "work"
    shutil.copytree(built.work, work)
    for split in ("train", "validation", "test"):
        path = work / "release" / f"{split}.jsonl"
        lines = path.read_text(encoding="utf-8").split("\n")
        first = json.loads(lines[0])
        first["id"] = f"{HOSTILE_ID}-{split}"
        lines[0] = json.dumps(first)
        path.write_text("\n".join(lines), encoding="utf-8")
    return work


@pytest.fixture(scope="module")
def world(built_samples, tmp_path_factory) -> dict[str, str]:
    from human_study_helpers import write_marine_predictions

    from builders.llm.cache import import_replies
    from builders.testing.clips import write_clip
    from marinelife16k.sample import sample_attributes_path, sample_video_root

    root = tmp_path_factory.mktemp("matrix-world")
    bqa, ml = built_samples["bqa"], built_samples["marinelife16k"]
    ml_preds = root / "ml-preds.jsonl"
    rows = write_marine_predictions(ml.work, "test", ml_preds)
    ml_open = root / "ml-open.jsonl"
    open_rows = [r for r in rows if r.get("question_format") != "multiple_choice"][:3]
    ml_open.write_text("".join(json.dumps(r) + "\n" for r in open_rows))
    bqa_preds = root / "bqa-preds.jsonl"
    ids = [
        json.loads(line)["id"] for line in (bqa.work / "release" / "test.jsonl").read_text().splitlines()[1:]
    ]
    bqa_preds.write_text("".join(json.dumps({"id": i, "raw_output": "Anger"}) + "\n" for i in ids))
    ml_attributes = root / "attributes.csv"
    ml_attributes.write_text(
        "".join(sample_attributes_path().read_text(encoding="utf-8").splitlines(True)[:5])
    )
    cache = root / "cache.sqlite"
    import_replies(Path(__file__).parents[1] / "marinelife16k" / "sample" / "judge_replies.jsonl", cache)
    return {
        "bqa_work": str(bqa.work), "bqa_hub": str(bqa.hub), "ml_work": str(ml.work), "ml_hub": str(ml.hub),
        "ml_preds": str(ml_preds), "ml_open": str(ml_open), "bqa_preds": str(bqa_preds),
        "ml_attributes": str(ml_attributes), "ml_videos": str(sample_video_root()), "cache": str(cache),
        "clip": str(write_clip(root / "clip.mp4", num_frames=25)),
    }  # fmt: skip


def _args(entry: Invocation, world: dict[str, str], out: Path, hostile: Path | None, url: str) -> list[str]:
    values = {**world, "out": str(out), "hostile": str(hostile or world["bqa_work"]), "url": url}
    return [a.format(**values) for a in entry.args]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_")}


def _clear_error(rc: int, stderr: str) -> str:
    """The one error line of a failed run (asserting there is exactly one, and no traceback)."""
    assert rc == 2, stderr
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("vqabench")]
    assert len(errors) == 1, stderr
    return errors[0]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


DRIVER = Path(__file__).with_name("cli_driver.py")


def _batch(runs: list[dict[str, object]], wrap: list[str] | None = None) -> list[dict]:
    """Run every command line of ``runs`` in one real process (tests/cli_driver.py), under ``wrap``."""
    done = subprocess.run([*(wrap or []), sys.executable, str(DRIVER)], input=json.dumps(runs), env=_env(),
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _outcome(rc: int, stderr: str) -> str:
    return (
        "holds"
        if rc == 0
        else f"clear error: {_clear_error(rc, stderr).removeprefix('vqabench: error: ')[:110]}"
    )


def _table(rows: dict[tuple[str, ...], str], fault: str) -> None:
    for command, outcome in rows.items():
        print(f"| {' '.join(command)} | {fault} | {outcome} |")


def _runs_of(fault: str) -> list[tuple[tuple[str, ...], Invocation]]:
    return [(c, e) for c, e in MATRIX.items() if isinstance(e, Invocation) and cells(c)[fault] == "run"]


# -- the faults ------------------------------------------------------------------------------------


def test_an_output_folder_the_command_does_not_own(world, tmp_path):
    """Notes in the output folder: refused with one line, every note byte for byte as it was."""
    rows = _runs_of("foreign_out")
    runs = []
    for k, (_, entry) in enumerate(rows):
        notes = tmp_path / f"notes{k}"
        for rel, text in NOTES.items():
            (notes / rel).parent.mkdir(parents=True, exist_ok=True)
            (notes / rel).write_text(text)
        runs.append({"args": _args(entry, world, notes, None, "http://127.0.0.1:9"), "cwd": str(tmp_path)})
    outcomes = {}
    for k, ((command, _), result) in enumerate(zip(rows, _batch(runs), strict=True)):
        assert _files(tmp_path / f"notes{k}") == {n: t.encode() for n, t in NOTES.items()}, command
        assert result["rc"] == 2, f"{command} wrote into a folder it does not own: {result}"
        outcomes[command] = _outcome(result["rc"], result["stderr"])
        assert "refusing" in outcomes[command] or "not empty" in outcomes[command], outcomes[command]
    _table(outcomes, "foreign_out")


def test_hostile_ids_in_the_input(world, tmp_path, built_samples):
    """Row ids that climb out (``../../../../victim/wedding``): nothing is written outside the output."""
    rows = _runs_of("hostile_ids")
    runs = []
    for k, (_, entry) in enumerate(rows):
        hostile = _hostile_work(built_samples["bqa"], tmp_path / f"w{k}")
        out = hostile.parent / "out"
        runs.append(
            {"args": _args(entry, world, out, hostile, "http://127.0.0.1:9"), "cwd": str(hostile.parent)}
        )
    with ChatServer() as server:  # the evaluation's requests get the server's example replies
        for run in runs:
            run["args"] = [a.replace("http://127.0.0.1:9", server.url) for a in run["args"]]
        results = _batch(runs)
    outcomes = {}
    for k, ((command, _), result) in enumerate(zip(rows, results, strict=True)):
        outputs = [Path(runs[k]["cwd"]) / name for name in ("out", "out.work")]  # its output, its work folder
        stray = [
            p for p in (tmp_path / f"w{k}").rglob("*wedding*") if not any(o in p.parents for o in outputs)
        ]
        assert stray == [], f"{command} wrote outside its folder: {stray}"
        outcomes[command] = _outcome(result["rc"], result["stderr"])
    _table(outcomes, "hostile_ids")


def test_a_full_disk(world, tmp_path):
    """A real tmpfs, filled before the command starts (a user and mount namespace of the test's own):
    one line saying the disk is full, no traceback."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True
    ).returncode:
        pytest.skip("no user+mount namespaces here to mount a tmpfs")
    rows = _runs_of("full_disk")
    with ChatServer() as server:
        runs = [{"args": _args(e, world, mnt / f"out{k}", None, server.url), "cwd": str(tmp_path)}
                for k, (_, e) in enumerate(rows)]  # fmt: skip
        script = 'mount -t tmpfs -o size=256k tmpfs "$0" || exit 97; cat /dev/zero > "$0/.filler" 2>/dev/null; exec "$@"'
        results = _batch(
            runs, ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, str(mnt)]
        )
    outcomes = {}
    for (command, _), result in zip(rows, results, strict=True):
        outcomes[command] = _outcome(result["rc"], result["stderr"])
        line = _clear_error(result["rc"], result["stderr"])
        assert any(w in line for w in ("no space", "disk is full", "No space")), (command, line)
    _table(outcomes, "full_disk")


class Counting:
    """Chat handler: the server's example replies; records each request it answers. With ``signum``,
    when request number ``at`` arrives it signals the process: SIGINT, then answers once the process
    has said it is stopping (or ended); SIGKILL, then never answers."""

    def __init__(self, inner: Any = None, signum: int | None = None, at: int = 0) -> None:
        self.inner, self.signum, self.at = inner, signum, at
        self.lock = threading.Lock()
        self.answered: list[str] = []
        self.arrived = 0
        self.process: subprocess.Popen | None = None
        self.stopping = threading.Event()

    def __call__(self, body):
        with self.lock:
            self.arrived += 1
            number = self.arrived
        if self.signum is not None and number == self.at:
            assert self.process is not None
            os.kill(self.process.pid, self.signum)
            if self.signum == signal.SIGKILL:
                self.process.wait()
                return Fault("disconnect")
            self.stopping.wait(timeout=120)
        with self.lock:
            self.answered.append(json.dumps(body, sort_keys=True))
        return self.inner(body) if self.inner is not None else None


def _interrupted(args: list[str], handler: Counting, cwd: Path) -> tuple[int, str]:
    process = subprocess.Popen([sys.executable, "-m", "builders.cli", *args], cwd=cwd, env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    handler.process = process
    lines: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if "stopping" in line:
            handler.stopping.set()
    process.wait(timeout=300)
    handler.stopping.set()
    return process.returncode, "".join(lines)


SIGNALS = {"sigint": signal.SIGINT, "sigkill": signal.SIGKILL}


def _responder(entry: Invocation) -> Any:
    if entry.responder == "bqa":
        from builders.scripted.bqa_responder import BQAResponder

        return BQAResponder()
    if entry.responder == "marinelife":
        from builders.pipelines.marinelife import captioner
        from builders.scripted.marinelife_responder import MarineLifeResponder
        from marinelife16k.annotations import read_annotations
        from marinelife16k.sample import sample_attributes_path, sample_video_root

        rows = read_annotations(sample_attributes_path(), video_root=sample_video_root())
        return MarineLifeResponder(rows, sample_video_root(), captioner.frame_spec())
    return None


def test_signals_mid_work(world, tmp_path):
    """SIGINT (exit 130, one line, no traceback) and SIGKILL halfway through each LLM command's requests:
    the requests answered across the interrupted run and its rerun are those of an uninterrupted run,
    none paid twice. The uninterrupted runs, and the reruns, each share one process."""
    rows = [(c, f, e) for f in SIGNALS for c, e in _runs_of(f)]
    servers = [ChatServer().__enter__() for _ in rows]
    try:
        clean = [Counting(_responder(e)) for _, _, e in rows]
        for server, handler in zip(servers, clean, strict=True):
            server.handler = handler
        runs = [{"args": _args(e, world, tmp_path / f"clean{k}", None, servers[k].url), "cwd": str(tmp_path)}
                for k, (_, _, e) in enumerate(rows)]  # fmt: skip
        for (command, _, _), result in zip(rows, _batch(runs), strict=True):
            assert result["rc"] == 0, (command, result)
        first = []
        for k, (command, fault, entry) in enumerate(rows):
            assert len(clean[k].answered) >= 2, f"{command}: too few requests to interrupt"
            handler = Counting(_responder(entry), SIGNALS[fault], at=len(clean[k].answered) // 2 + 1)
            servers[k].handler = handler
            args = _args(entry, world, tmp_path / f"run{k}", None, servers[k].url)
            code, output = _interrupted(args, handler, tmp_path)
            if fault == "sigint":
                assert code == 130 and "Traceback" not in output and "vqabench: interrupted" in output, output
            else:
                assert code == -signal.SIGKILL, output
            first.append(handler)
        rerun = [Counting(_responder(e)) for _, _, e in rows]
        for server, handler in zip(servers, rerun, strict=True):
            server.handler = handler
        runs = [{"args": _args(e, world, tmp_path / f"run{k}", None, servers[k].url), "cwd": str(tmp_path)}
                for k, (_, _, e) in enumerate(rows)]  # fmt: skip
        results = _batch(runs)
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    problems = []
    for k, (command, fault, _) in enumerate(rows):
        assert results[k]["rc"] == 0, (command, results[k])
        paid = Counter(first[k].answered) + Counter(rerun[k].answered)
        outcome = (
            f"holds: {len(first[k].answered)} + {len(rerun[k].answered)} paid = {len(clean[k].answered)}"
        )
        if paid != Counter(clean[k].answered):
            outcome = f"PAID TWICE: {sum(paid.values())} paid across the run and its rerun, {len(clean[k].answered)} uninterrupted"
            problems.append((command, fault, outcome))
        print(f"| {' '.join(command)} | {fault} | {outcome} |")
    assert problems == []
