"""Issue 37: one way to write an output. Shipped code writes files only through ``builders.files`` (the
guarded folder writer, the atomic file writers, the checked path from data); this test reads the package
(AST, no import) and fails on any other write: ``open`` for writing, ``write_text``/``write_bytes``,
``shutil`` copies, moves and removals, ``os`` renames and removals, ``unlink``/``rmdir``/``rename``.

A few modules keep their own file handling for a reason of their own; :data:`OWN_WRITERS` lists each
with it. A new module that writes any other way fails here, naming the file and line."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("builders", "bqa", "marinelife16k", "metrics")
EXEMPT = ("builders/files/", "builders/testing/")  # the writers themselves; test doubles
WRITE_MODES = set("wax+")
METHODS = {"write_text", "write_bytes", "unlink", "rmdir", "rename", "symlink_to", "hardlink_to", "touch"}
MODULE_CALLS = {
    "shutil": {"rmtree", "copy", "copy2", "copyfile", "copytree", "move", "copyfileobj"},
    "os": {"replace", "rename", "renames", "remove", "unlink", "rmdir", "removedirs", "link", "symlink"},
}

#: module -> why it handles its files itself (each is a store with its own crash-safety, not an output).
OWN_WRITERS = {
    "builders/runs/steps.py": "the step log: an append-only JSONL a killed run leaves torn (read back by "
    "tolerate_torn_tail), then rewritten atomically through builders.files",
    "builders/runs/frames.py": "the frame cache: a temporary file renamed into place; a lost or torn file is "
    "decoded again, never sent (content hashes)",
    "builders/pipelines/bqa/runner.py": "removes the work folder's own frame cache once no step needs it",
    "builders/hub/publish.py": "removes snapshot_download's bookkeeping from the temporary download it verifies",
    "bqa/workfolder.py": "drops the work folder's meta.json while a release is rewritten (unfinished until back)",
    "builders/llm/cache.py": "streams the replies into the temporary file write_file_atomic hands it",
    "builders/video/remux.py": "PyAV writes the clip into the temporary file write_file_atomic hands it",
    "builders/video/video_url.py": "PyAV encodes into an in-memory buffer (no file)",
    "builders/hub/layout.py": "a link in a temporary folder, so that datasets reads a path holding '$' literally",
    "builders/llm/batch_store.py": "the batch journal: append-only, fsynced per event",
    "builders/llm/batch.py": "spool files in the batch store: a round's queued lines streamed to disk (a round "
    "of any size is never held in memory), removed once its shards are written",
}


def _writes(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id == "open"
            or isinstance(func, ast.Attribute)
            and func.attr == "open"
        ):
            positional = 1 if isinstance(func, ast.Name) else 0  # open(path, mode) / path.open(mode)
            modes = [node.args[positional]] if len(node.args) > positional else []
            modes += [k.value for k in node.keywords if k.arg == "mode"]
            if any(
                isinstance(m, ast.Constant) and isinstance(m.value, str) and WRITE_MODES & set(m.value)
                for m in modes
            ):
                found.append((node.lineno, "open(..., write mode)"))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner in MODULE_CALLS and func.attr in MODULE_CALLS[owner]:
                found.append((node.lineno, f"{owner}.{func.attr}"))
            elif owner not in MODULE_CALLS and func.attr in METHODS:
                found.append((node.lineno, f".{func.attr}()"))
    return found


def test_shipped_code_writes_only_through_builders_files():
    offenders, unused = [], set(OWN_WRITERS)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EXEMPT):
                continue
            writes = _writes(ast.parse(path.read_text(encoding="utf-8"), rel))
            if writes and rel in OWN_WRITERS:
                unused.discard(rel)
            elif writes:
                offenders += [f"{rel}:{line}: {what}" for line, what in writes]
    assert offenders == [], (
        "write through builders.files (atomic writers, atomic_directory, claim_folder):\n"
        + "\n".join(offenders)
    )
    assert unused == set(), f"OWN_WRITERS lists modules that no longer write themselves: {sorted(unused)}"


def test_the_scan_sees_each_kind_of_write():
    source = """
open(p, "w"); open(p, mode="ab"); p.open("w"); p.write_text("x"); p.write_bytes(b""); p.unlink()
shutil.rmtree(p); shutil.copyfile(a, b); os.replace(a, b); os.remove(p); p.rename(q)
open(p); p.open(); open(p, "rb"); s.replace("a", "b"); p.read_text()
"""
    assert len(_writes(ast.parse(source))) == 11
