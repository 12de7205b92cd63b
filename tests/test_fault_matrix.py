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

import pytest

from builders.cli import build_parser
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

    @property
    def writes(self) -> bool:
        return any("{out}" in a for a in self.args)

    @property
    def llm(self) -> bool:
        return any("{url}" in a for a in self.args)

    @property
    def hostile(self) -> bool:
        return any("{hostile}" in a for a in self.args)


def _run(*args: str, out_file: bool = False) -> Invocation:
    return Invocation(tuple(args), out_file)


#: command -> its invocation, or why it has none (the reason is the matrix's cell for every fault).
MATRIX: dict[tuple[str, ...], Invocation | str] = {
    ("bqa", "build"): _run("bqa", "build", "--sample", "--work", "{out}", "--limit", "3", "--llm-concurrency", "1", *LLM),
    ("bqa", "evaluate"): _run("bqa", "evaluate", "--data", "{hostile}", "--out", "{out}", "--limit", "3",
                              "--llm-concurrency", "1", *LLM, out_file=True),
    ("bqa", "export"): _run("bqa", "export", "{hostile}", "{out}"),
    ("bqa", "stats"): _run("bqa", "stats", "{bqa_work}", "--no-clips", "--no-self-bleu", "--out", "{out}"),
    ("bqa", "finetune-data"): _run("bqa", "finetune-data", "--data", "{hostile}", "--limit", "2", "--out", "{out}"),
    ("bqa", "check"): "reads a BoLD root and writes nothing (its bad input: tests/test_bqa_bold_input_errors.py)",
    ("demo",): _run("demo", "--out", "{out}"),
    ("frames",): _run("frames", "{clip}", "--num-frames", "2", "--out-dir", "{out}"),
    ("human-study", "make"): _run("human-study", "make", "bqa", "--data", "{hostile}", "--split", "test",
                                  "--size", "2", "--out", "{out}"),
    ("human-study", "score"): "needs raters' answer files; its output folder is the report writer's "
    "(report_folder), exercised by report bqa/marinelife here and by tests/test_human_study.py",
    ("integrations", "path"): _run("integrations", "path", "lmms-eval", "--out", "{out}"),
    ("judge", "score"): _run("judge", "score", "{ml_open}", "--output", "{out}", "--llm-concurrency", "1", *LLM,
                             out_file=True),
    ("judge", "rubrics"): "prints the packaged rubrics; reads and writes no file",
    ("leaderboard",): _run("leaderboard", "bqa", "--from", "{empty}", "--out", "{out}"),
    ("llm", "cache-stats"): "reads a reply cache and writes nothing",
    ("llm", "export-replies"): _run("llm", "export-replies", "{cache}", "{out}", out_file=True),
    ("llm", "import-replies"): "writes into the reply cache it is given (SQLite: tests/test_cache_integrity.py, "
    "tests/test_llm_cache.py); no output folder, no ids, no LLM",
    ("llm", "check"): "one request: there is no mid-work point to interrupt, nothing to resume; writes nothing",
    ("marinelife", "build"): _run("marinelife", "build", "--sample", "--work", "{out}", "--limit", "2",
                                  "--llm-concurrency", "1", *LLM),
    ("marinelife", "evaluate"): _run("marinelife", "evaluate", "--data", "{ml_hub}", "--out", "{out}",
                                     "--limit", "3", "--llm-concurrency", "1", *LLM, out_file=True),
    ("marinelife", "judge"): _run("marinelife", "judge", "{ml_open}", "--out", "{out}", "--llm-concurrency", "1",
                                  *LLM, out_file=True),
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
}  # fmt: skip


def cells(command: tuple[str, ...]) -> dict[str, str]:
    """Each fault's cell for ``command``: ``"run"``, or why it does not apply."""
    entry = MATRIX[command]
    if isinstance(entry, str):
        return dict.fromkeys(FAULTS, entry)
    why = {
        "foreign_out": None if entry.writes and not entry.out_file else "writes one file the user names",
        "hostile_ids": None if entry.hostile else "builds no path from a row id",
        "full_disk": None if entry.writes else "writes nothing",
        "sigint": None if entry.llm else "pays for nothing (no LLM request)",
        "sigkill": None if entry.llm else "pays for nothing (no LLM request)",
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


RUNS = [(c, f) for c in MATRIX for f, cell in cells(c).items() if cell == "run"]


# -- the world the commands run in ----------------------------------------------------------------


def _hostile_work(built, root: Path) -> Path:
    """The BQA sample's work folder, the first row of each split given :data:`HOSTILE_ID`, at depth 4
    under ``root`` (so the id, followed, would land in ``root/victim``)."""
    work = root / "a" / "b" / "c" / "work"
    shutil.copytree(built.work, work)
    for split in ("train", "validation", "test"):
        path = work / "release" / f"{split}.jsonl"
        lines = path.read_text(encoding="utf-8").split("\n")
        first = json.loads(lines[0])
        first["id"] = HOSTILE_ID
        lines[0] = json.dumps(first)
        path.write_text("\n".join(lines), encoding="utf-8")
    return work


@pytest.fixture(scope="module")
def world(built_samples, tmp_path_factory) -> dict[str, str]:
    from builders.llm.cache import import_replies
    from builders.testing.clips import write_clip
    from tests.human_study_helpers import write_marine_predictions

    root = tmp_path_factory.mktemp("matrix-world")
    bqa, ml = built_samples["bqa"], built_samples["marinelife16k"]
    ml_preds = root / "ml-preds.jsonl"
    rows = write_marine_predictions(ml.work, "test", ml_preds)
    ml_open = root / "ml-open.jsonl"
    open_rows = [r for r in rows if r.get("question_format") != "multiple_choice"][:3]
    ml_open.write_text("".join(json.dumps(r) + "\n" for r in open_rows))
    bqa_preds = root / "bqa-preds.jsonl"
    bqa_preds.write_text('{"id": "none", "raw_output": "Anger"}\n')
    (root / "empty").mkdir()
    cache = root / "cache.sqlite"
    import_replies(Path(__file__).parents[1] / "marinelife16k" / "sample" / "judge_replies.jsonl", cache)
    return {
        "bqa_work": str(bqa.work), "bqa_hub": str(bqa.hub), "ml_work": str(ml.work), "ml_hub": str(ml.hub),
        "ml_preds": str(ml_preds), "ml_open": str(ml_open), "bqa_preds": str(bqa_preds),
        "empty": str(root / "empty"), "cache": str(cache),
        "clip": str(write_clip(root / "clip.mp4", num_frames=25)),
    }  # fmt: skip


def _args(entry: Invocation, world: dict[str, str], out: Path, hostile: Path | None, url: str) -> list[str]:
    values = {**world, "out": str(out), "hostile": str(hostile or world["bqa_work"]), "url": url}
    return [a.format(**values) for a in entry.args]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("VQABENCH_")}


def _clear_error(done: subprocess.CompletedProcess) -> str:
    """The one error line of a failed run (asserting there is exactly one, and no traceback)."""
    text = done.stdout + done.stderr
    assert done.returncode == 2, text
    assert "Traceback" not in text, text
    errors = [line for line in done.stderr.splitlines() if line.startswith("vqabench")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _vqabench(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "builders.cli", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _outcome(done: subprocess.CompletedProcess) -> str:
    if done.returncode == 0:
        return "holds"
    return f"clear error: {_clear_error(done)[:150]}"


# -- the faults ------------------------------------------------------------------------------------


def _foreign_out(command, entry, world, tmp_path, server) -> str:
    notes = tmp_path / "notes"
    for rel, text in NOTES.items():
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        (notes / rel).write_text(text)
    done = _vqabench(_args(entry, world, notes, None, server.url), cwd=tmp_path)
    assert _files(notes) == {k: v.encode() for k, v in NOTES.items()}, "the folder's files were changed"
    assert done.returncode == 2, f"{command}: wrote into a folder it does not own: {done.stderr}"
    return _outcome(done)


def _hostile_ids(command, entry, world, tmp_path, server, built) -> str:
    hostile = _hostile_work(built, tmp_path)
    out = tmp_path / "a" / "b" / "c" / "out"
    done = _vqabench(_args(entry, world, out, hostile, server.url), cwd=hostile.parent)
    assert not (tmp_path / "victim").exists(), f"{command} wrote outside its folder"
    outside = [p for p in tmp_path.rglob("*wedding*")]
    assert outside == [] or all(out in p.parents for p in outside), outside
    return _outcome(done)


def _full_disk(command, entry, world, tmp_path, server) -> str:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no user+mount namespaces here to mount a tmpfs")
    args = _args(entry, world, mnt / "out", None, server.url)
    script = 'mount -t tmpfs -o size=256k tmpfs "$0" || exit 97; cat /dev/zero > "$0/.filler" 2>/dev/null; exec "$@"'
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, str(mnt),
                           sys.executable, "-m", "builders.cli", *args],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode != 97, done.stderr
    line = _clear_error(done)
    assert "no space" in line or "disk is full" in line or "No space" in line, line
    return f"clear error: {line[:150]}"


class SignalAt:
    """Chat handler: answers (the server's schema examples) and counts; when request number ``at``
    arrives it sends ``signum`` to the process, then (SIGINT) answers it once the process has said it is
    stopping or has ended, or (SIGKILL) never answers it."""

    def __init__(self, signum: int | None, at: int) -> None:
        self.signum, self.at = signum, at
        self.lock = threading.Lock()
        self.answered: list[str] = []
        self.arrived = 0
        self.process: subprocess.Popen | None = None
        self.stopping = threading.Event()

    def __call__(self, body):
        from builders.testing.chat_faults import Fault

        key = json.dumps(body, sort_keys=True)
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
            self.answered.append(key)
        return None


def _signalled_run(args: list[str], handler: SignalAt, cwd: Path) -> tuple[int, str]:
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


def _signal(command, entry, world, tmp_path, signum) -> str:
    with ChatServer() as server:
        clean = SignalAt(None, 0)
        server.handler = clean
        code, output = _signalled_run(_args(entry, world, tmp_path / "clean", None, server.url), clean, tmp_path)
        assert code == 0, output
        at = max(2, len(clean.answered) // 2 + 1)
        assert len(clean.answered) >= 2, f"{command}: too few requests to interrupt ({len(clean.answered)})"
        first = SignalAt(signum, at)
        server.handler = first
        args = _args(entry, world, tmp_path / "run", None, server.url)
        code, output = _signalled_run(args, first, tmp_path)
        assert code == (130 if signum == signal.SIGINT else -signal.SIGKILL), output
        if signum == signal.SIGINT:
            assert "Traceback" not in output and "interrupted" in output, output
        rerun = SignalAt(None, 0)
        server.handler = rerun
        code, output = _signalled_run(args, rerun, tmp_path)
        assert code == 0, output
    paid = Counter(first.answered) + Counter(rerun.answered)
    assert paid == Counter(clean.answered), (
        f"{command}: {sum(paid.values())} requests answered across the interrupted run and its rerun, "
        f"{len(clean.answered)} in an uninterrupted run"
    )
    return f"holds (exit {code if signum == signal.SIGINT else 'killed'}; {len(first.answered)}+{len(rerun.answered)} = {len(clean.answered)} paid)"


@pytest.mark.parametrize(("command", "fault"), RUNS, ids=[f"{' '.join(c)}-{f}" for c, f in RUNS])
def test_fault(command, fault, world, tmp_path, built_samples):
    entry = MATRIX[command]
    assert isinstance(entry, Invocation)
    with ChatServer() as server:
        if fault == "foreign_out":
            outcome = _foreign_out(command, entry, world, tmp_path, server)
        elif fault == "hostile_ids":
            outcome = _hostile_ids(command, entry, world, tmp_path, server, built_samples["bqa"])
        elif fault == "full_disk":
            outcome = _full_disk(command, entry, world, tmp_path, server)
    if fault in ("sigint", "sigkill"):
        outcome = _signal(command, entry, world, tmp_path, signal.SIGINT if fault == "sigint" else signal.SIGKILL)
    print(f"| {' '.join(command)} | {fault} | {outcome} |")
