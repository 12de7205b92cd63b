"""What the machine or a file gets wrong reaches the user as one line naming the file, exit non-zero,
never a traceback (issue 32, case 11): a full disk, a permission refused, a reply cache SQLite cannot
read, a YAML file that does not parse. And a folder literally named ``$HOME`` is a folder like any
other (``datasets`` expands ``$VAR`` in local paths: the export's load check looked in the home folder).

The full disk is a real 64 KB tmpfs where this machine lets the tests mount one, else ENOSPC injected
at the first write under the folder (an audit hook in the ``vqabench`` process, the error a ``write``
on a full disk raises: errno 28, no file name).
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from builders.cli import main as cli_main

FAULTY = """
import errno, os, sys
folder, code = os.path.realpath(sys.argv[1]), int(sys.argv[2])
def hook(event, args):
    if event != "open" or not isinstance(args[0], (str, bytes)):
        return
    mode, flags = args[1] or "", args[2] or 0
    writing = any(c in mode for c in "wax+") or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    path = os.path.realpath(os.fsdecode(args[0]))
    if writing and path.startswith(folder + os.sep):
        if code == errno.ENOSPC:
            raise OSError(code, os.strerror(code))  # as a write on a full disk: no file name
        raise OSError(code, os.strerror(code), path)
sys.addaudithook(hook)
from builders.cli import main
sys.exit(main(sys.argv[3:]))
"""


def vqabench_failing(folder: Path, code: int, args: list[str]) -> subprocess.CompletedProcess:
    """``vqabench ARGS`` in a process where opening a file for writing under ``folder`` fails with ``code``."""
    return subprocess.run(
        [sys.executable, "-c", FAULTY, str(folder), str(code), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("vqabench: error: "), done.stderr
    return last


@contextlib.contextmanager
def small_tmpfs(folder: Path) -> Iterator[bool]:
    """A 64 KB tmpfs on ``folder`` when mounting is allowed (True), else nothing (False)."""
    folder.mkdir()
    mounted = (
        shutil.which("mount") is not None
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True
        ).returncode
        == 0
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_full_disk_is_one_line_naming_the_folder(built_samples, tmp_path):
    work = built_samples["bqa"].work
    with small_tmpfs(tmp_path / "disk") as mounted:
        out = tmp_path / "disk" / "BQA"
        args = ["bqa", "export", str(work), str(out), "--cache-dir", str(tmp_path / "cache")]
        done = (
            subprocess.run(
                [sys.executable, "-m", "builders.cli", *args], capture_output=True, text=True, timeout=300
            )
            if mounted
            else vqabench_failing(tmp_path / "disk", errno.ENOSPC, args)
        )
        line = one_line_error(done)
        assert f"{out}: No space left on device (the disk is full: free space and rerun" in line, line
        assert list((tmp_path / "disk").iterdir()) == []  # the half-written folder was removed


def test_a_refused_permission_names_the_file(built_samples, tmp_path):
    hub = built_samples["bqa"].hub
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(f'{{"id": "{r["id"]}", "raw_output": "A"}}\n'
                                   for r in built_samples["bqa"].loaded["default"]["test"].to_list()))  # fmt: skip
    out = tmp_path / "locked" / "report"
    out.mkdir(parents=True)
    done = vqabench_failing(tmp_path / "locked", errno.EACCES, ["report", "bqa", "--data", str(hub), "--split",
                                                                "test", "--predictions", str(predictions), "--out", str(out)])  # fmt: skip
    line = one_line_error(done)
    assert line.startswith(f"vqabench: error: {out}/") and line.endswith(": Permission denied"), line


def test_a_reply_cache_that_is_not_sqlite_is_named(tmp_path):
    cache = tmp_path / "llm-cache.sqlite"
    cache.write_bytes(b"these bytes are not a SQLite database, but the cache of someone's notes\n" * 100)
    done = subprocess.run([sys.executable, "-m", "builders.cli", "llm", "cache-stats", str(cache)], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    line = one_line_error(done)
    assert f"reply cache {cache} " in line and "file is not a database" in line, line


def test_yaml_that_does_not_parse_is_named(built_samples, tmp_path, capsys):
    hub = Path(shutil.copytree(built_samples["bqa"].hub, tmp_path / "hub"))
    card = hub / "README.md"
    card.write_text(card.read_text().replace("configs:", "configs: [unclosed", 1))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": "x", "raw_output": "A"}\n')
    assert cli_main(["report", "bqa", "--data", str(hub), "--predictions", str(predictions), "--out",
                     str(tmp_path / "r")]) == 2  # fmt: skip
    assert f"{card}: the card's YAML block is not valid YAML" in capsys.readouterr().err
    mapping = tmp_path / "groups.yaml"
    mapping.write_text("groups:\n  Happiness: [Happiness\n  Anger: [Anger]\n")
    assert cli_main(["report", "bqa", "--data", str(built_samples["bqa"].hub), "--predictions", str(predictions),
                     "--group-mapping", str(mapping), "--out", str(tmp_path / "r")]) == 2  # fmt: skip
    assert f"{mapping}: not valid YAML" in capsys.readouterr().err


def test_a_folder_named_like_a_variable_exports_and_loads(built_samples, tmp_path):
    out = tmp_path / "$HOME" / "BQA"
    args = ["bqa", "export", str(built_samples["bqa"].work), str(out), "--cache-dir", str(tmp_path / "cache")]
    assert cli_main(args) == 0  # the load_dataset check passed, on this folder
    assert (out / "README.md").is_file()
