"""Crash-safe, resumable step records for the regeneration pipelines.

A pipeline step turns input items into output records (and rejects). While it runs, every finished
record is appended to ``<work>/steps/<step>.partial.jsonl`` and flushed, so a killed run loses at
most the line being written (a torn last line is cut off on resume, before anything is appended
after it), and made durable with fsync; inside :meth:`StepRecords.group_commits` (the LLM step loop)
the fsyncs are grouped, one at least every :data:`COMMIT_SECONDS` and on every way out, so a power
loss loses at most the last group, whose replies are in the LLM cache and are redone from it
without a new request. When the step finishes, its
records are written in input order to ``<step>.jsonl`` (and ``<step>.rejects.jsonl``) atomically,
and the partial log is removed. A finished step is not run again; an unfinished one resumes with
the items that have no record yet. Paid LLM calls are never repeated on top of that because the
LLM engine caches every successful reply.

Records cannot vanish: an item of a finished step with no record in its files (a line removed from
``<step>.jsonl`` or its rejects) is pending again, never dropped from what the step hands on. The
step is reopened (its records go back to the partial log) and the item is redone, from the reply
cache where its reply was paid for; if it cannot be, the run ends with it pending.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from builders.files.jsonio import (
    dumps_line,
    read_json_object,
    read_jsonl,
    write_json_atomic,
    write_jsonl_atomic,
)
from builders.files.space import writing
from builders.options.numbers import POSITIVE_INT

log = logging.getLogger(__name__)

KEPT, REJECTED = "kept", "rejected"
#: The one help text of ``--ahead`` (here, not in llm_step, so CLIs show it without loading openai).
AHEAD_HELP = (
    "items prepared (frames decoded, requests built) ahead of the LLM requests in flight; bounds memory, "
    "changes nothing in the results (default: 2 per CPU)"
)
#: Longest time a finished record waits in memory before it is made durable (group commit).
COMMIT_SECONDS = 1.0


@dataclass(frozen=True)
class Tally:
    """A step's items so far: ``kept``, and ``rejected`` counted by reason."""

    kept: int
    rejected: Counter[str]

    def __bool__(self) -> bool:
        return bool(self.kept or self.rejected)


@dataclass(frozen=True, slots=True)
class _Entry:
    """Where an item's record starts in the partial log, and what :meth:`StepRecords.tally` counts."""

    offset: int
    status: str
    reason: str

    @classmethod
    def of(cls, offset: int, record: Mapping[str, Any]) -> _Entry:
        status = KEPT if record["_status"] == KEPT else REJECTED  # shared strings, not one per item
        return cls(offset, status, sys.intern(str(record.get("_reason", "?"))))


@dataclass
class StepRecords:
    """Records of one step of one pipeline run, keyed by item id (``key`` field of each record)."""

    work_dir: Path
    name: str
    key: str = "id"
    # id -> where its last record starts in the partial log, its status and reason: the records
    # themselves stay on disk, so memory per item is a small constant however long the step.
    _done: dict[str, _Entry] = field(default_factory=dict, init=False, repr=False)
    _log: IO[bytes] | None = field(default=None, init=False, repr=False)
    _uncommitted_since: float | None = field(default=None, init=False, repr=False)
    _grouping: bool = field(default=False, init=False, repr=False)
    commits: int = field(default=0, init=False, repr=False)  # fsyncs of the partial log

    def __post_init__(self) -> None:
        self.work_dir = Path(self.work_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.complete and self.partial_path.exists():
            _truncate_torn_tail(self.partial_path)
            self._index_partial()

    def _index_partial(self) -> None:
        """Index the partial log (the last record of an id wins); a line that is not JSON is an error
        naming the file and line."""
        self._done = {}
        with self.partial_path.open("rb") as handle:
            offset = 0
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    try:
                        record = json.loads(line)
                    except ValueError as err:
                        raise ValueError(
                            f"{self.partial_path}, line {number}: not valid JSON ({err})"
                        ) from None
                    self._done[str(record[self.key])] = _Entry.of(offset, record)
                offset += len(line)

    def _records(self, ids: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The recorded entries of ``ids`` (each recorded), read back from the partial log in that order."""
        ids = list(ids)
        if not ids:  # a step with no record of that kind (every item rejected before it) has no log
            return
        if self._log is not None:
            self._log.flush()
        with self.partial_path.open("rb") as handle:
            for i in ids:
                handle.seek(self._done[i].offset)
                yield json.loads(handle.readline())

    @property
    def dir(self) -> Path:
        return self.work_dir / "steps"

    @property
    def path(self) -> Path:
        return self.dir / f"{self.name}.jsonl"

    @property
    def rejects_path(self) -> Path:
        return self.dir / f"{self.name}.rejects.jsonl"

    @property
    def partial_path(self) -> Path:
        return self.dir / f"{self.name}.partial.jsonl"

    @property
    def complete(self) -> bool:
        return self.path.exists()

    def pending(self, items: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """The items of ``items`` with no record yet. A finished step holding no record for some of
        them is reopened (see the module doc): those are pending again."""
        items = list(items)
        if self.complete and not self._reopen_for([str(item[self.key]) for item in items]):
            return []
        return [item for item in items if str(item[self.key]) not in self._done]

    def covers(self, items: Iterable[Mapping[str, Any]]) -> bool:
        """Whether the step is finished with a record for every one of ``items`` (else it is reopened
        for the missing ones: :meth:`pending` names them)."""
        return self.complete and not self.pending(items)

    def _finished(self) -> dict[str, dict[str, Any]]:
        entries = {str(r[self.key]): {**r, "_status": KEPT} for r in self.kept()}
        entries.update({str(r[self.key]): r for r in self.rejects()})
        return entries

    def _reopen_for(self, ids: Iterable[str]) -> bool:
        """Reopen the finished step if ``ids`` has one without a record; whether it did."""
        finished = self._finished()
        missing = [i for i in ids if i not in finished]
        if not missing:
            return False
        log.warning(
            "%s: %d item(s) have no record in this finished step (e.g. %s); they are pending again",
            self.path, len(missing), ", ".join(missing[:3]),
        )  # fmt: skip
        write_jsonl_atomic(self.partial_path, finished.values())
        self.path.unlink()  # no longer complete; the next finish() writes it again with every item
        self._index_partial()
        return True

    def add(
        self,
        record: Mapping[str, Any],
        *,
        status: str = KEPT,
        reason: str | None = None,
        detail: str | None = None,
    ) -> None:
        """Record one finished item; ``status`` is kept or rejected with a short ``reason`` code
        (counted in summaries) and an optional free-text ``detail``."""
        if status not in (KEPT, REJECTED):
            raise ValueError(f"status must be {KEPT!r} or {REJECTED!r}, not {status!r}")
        if status == REJECTED and not reason:
            raise ValueError(f"step {self.name}: a rejected item needs a reason ({record.get(self.key)})")
        entry = {**record, "_status": status}
        if reason:
            entry["_reason"] = reason
        if detail:
            entry["_detail"] = detail
        with writing(str(self.partial_path)):
            if self._log is None:
                self._log = self.partial_path.open("ab")
            offset = self._log.tell()
            self._log.write(dumps_line(entry).encode("utf-8"))
            # Flushed at once: a killed process loses no record (the OS has it); only the fsync, which
            # guards against a power loss, is grouped.
            self._log.flush()
        self._done[str(record[self.key])] = _Entry.of(offset, entry)
        if self._uncommitted_since is None:
            self._uncommitted_since = time.monotonic()
        if self._grouping:
            self.commit_due()
        else:
            self.commit()

    @contextmanager
    def group_commits(self) -> Iterator[StepRecords]:
        """Inside, :meth:`add` commits in groups (at least every :data:`COMMIT_SECONDS`, see
        :meth:`commit_due`) instead of once per record; leaving it, by any way out, commits."""
        self._grouping = True
        try:
            yield self
        finally:
            self._grouping = False
            self.commit()

    def commit_due(self) -> None:
        """:meth:`commit` if a record has waited :data:`COMMIT_SECONDS` or more."""
        if (
            self._uncommitted_since is not None
            and time.monotonic() - self._uncommitted_since >= COMMIT_SECONDS
        ):
            self.commit()

    def commit(self) -> None:
        """Make every record added so far durable: one flush and one fsync for the whole group."""
        if self._log is not None and self._uncommitted_since is not None:
            with writing(str(self.partial_path)):
                self._log.flush()
                os.fsync(self._log.fileno())
            self.commits += 1
        self._uncommitted_since = None

    def close(self) -> None:
        """Commit and close the partial log (it is reopened by the next :meth:`add`)."""
        self.commit()
        if self._log is not None:
            self._log.close()
            self._log = None

    def finish(self, order: Iterable[str]) -> None:
        """Write the kept records and the rejects in input order, atomically, then drop the partial log.

        A step that is already complete stays as it is: finishing is idempotent, so a resumed run can
        finish every step it went through without checking which ones an earlier run finished."""
        self.close()
        order = [str(o) for o in order]
        if self.complete:
            missing = [o for o in order if o not in self._finished()]
            if missing:  # a caller that did not ask pending() first: never drop them silently
                raise RuntimeError(
                    f"step {self.name}: {len(missing)} items have no record in {self.path}, e.g. "
                    f"{missing[:3]}; rerun to redo them"
                )
            return
        missing = [o for o in order if o not in self._done]
        if missing:
            raise RuntimeError(f"step {self.name}: {len(missing)} items have no record, e.g. {missing[:3]}")
        # Streamed from the partial log in input order, one record at a time.
        write_jsonl_atomic(
            self.rejects_path, self._records(o for o in order if self._done[o].status == REJECTED)
        )
        # The kept file last: its existence is what marks the step complete.
        kept = (_strip(e) for e in self._records(o for o in order if self._done[o].status == KEPT))
        write_jsonl_atomic(self.path, kept)
        self.partial_path.unlink(missing_ok=True)
        self._done = {o: self._done[o] for o in order}  # what the files hold, for tally()

    def kept(self) -> list[dict[str, Any]]:
        if not self.complete:
            raise RuntimeError(f"step {self.name} has not finished (no {self.path})")
        return read_jsonl(self.path)

    def rejects(self) -> list[dict[str, Any]]:
        return read_jsonl(self.rejects_path) if self.rejects_path.exists() else []

    def tally(self) -> Tally:
        """Items kept and rejected (by reason) so far, for the run summary."""
        if self.complete and not self._done:  # a step finished by an earlier run: its files say
            return Tally(len(self.kept()), Counter(str(e.get("_reason", "?")) for e in self.rejects()))
        entries = self._done.values()
        return Tally(
            sum(e.status == KEPT for e in entries),
            Counter(e.reason for e in entries if e.status != KEPT),
        )


def _truncate_torn_tail(path: Path) -> None:
    """Cut an unterminated last line (a run killed while appending) off ``path``, so the next record
    starts on a line of its own; that item is simply redone (its reply, if paid, is in the cache)."""
    with path.open("rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # Read back in blocks until the last newline (a torn line is at most one record long).
        end, block = size, 1 << 16
        while end > 0:
            start = max(0, end - block)
            handle.seek(start)
            chunk = handle.read(end - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            end = start
        else:
            keep = 0
        log.warning(
            "%s: dropping the torn last line (%d bytes) left by an interrupted run", path, size - keep
        )
        handle.truncate(keep)
        handle.flush()
        os.fsync(handle.fileno())


def _strip(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("_status", "_reason", "_detail")}


DEFAULT_CACHE = "llm-cache.sqlite"


def _differences(old: Any, new: Any, prefix: str) -> list[str]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return [
            d
            for key in sorted({*old, *new})
            for d in _differences(old.get(key), new.get(key), f"{prefix}.{key}")
        ]
    return [] if old == new else [f"{prefix.lstrip('.')}: was {old!r}, now {new!r}"]


UNPAID_MARKER = ".options-unpaid"  # in a work folder whose options are recorded but no reply is yet


def mark_paid(work_dir: str | os.PathLike[str]) -> None:
    """Say that ``work_dir`` now holds a paid LLM reply: from here on its options are locked.

    Called before the first reply is recorded (so a crash in between errs on the locked side)."""
    marker = Path(work_dir) / UNPAID_MARKER
    if marker.exists():
        marker.unlink()


def bind_work_folder(
    work_dir: str | os.PathLike[str],
    wanted: Mapping[str, Any],
    config_file: str,
    *,
    llm_part: str = "llm",
    accept: Collection[str] = (),
    hints: Mapping[str, str] | None = None,
) -> None:
    """Record what a work folder is built from in ``<work>/<config_file>``, or refuse a run that differs.

    Each part of ``wanted`` (e.g. ``data``, ``llm``) is compared key by key, nested mappings as dotted
    keys; a part that is None is not checked, and is recorded once it has a value. Resuming with other
    options would mix two runs' records in one folder, so it is an error listing every difference,
    except where nothing depends on the old options yet, and the new ones simply replace them:

    * the LLM settings (part ``llm_part``), until the folder holds a paid reply (:func:`mark_paid`):
      a first run with a mistyped model or without its API key locks nothing;
    * every part, while no step has recorded anything;
    * the parts named in ``accept`` (the caller's explicit "go on with the new values").

    ``hints``: per part, a sentence added to the refusal when that part differs (e.g. how to start
    over after the input files changed).
    """
    path = Path(work_dir) / config_file
    unpaid = Path(work_dir) / UNPAID_MARKER
    wanted = json.loads(json.dumps(wanted))  # tuples and the like compare as they will be stored
    stored = read_json_object(path) if path.is_file() else {}
    steps = Path(work_dir) / "steps"
    free = set(wanted) if not (steps.is_dir() and any(steps.iterdir())) else set()
    if unpaid.is_file():
        free.add(llm_part)
    free.update(accept)
    changed: list[str] = []
    problems: list[str] = []
    refused: list[str] = []
    for part, new in wanted.items():
        if new is not None and stored.get(part) is not None:
            found = _differences(stored[part], new, part)
            (changed if part in free else problems).extend(found)
            if found and part not in free:
                refused.append(part)
    if problems:
        extra = "".join(f"\n{(hints or {})[part]}" for part in refused if part in (hints or {}))
        raise ValueError(
            f"{path}: this work folder was built with other options:\n  "
            + "\n  ".join(problems)
            + extra
            + "\nrerun with the same options, or use a new work folder (pass --llm-cache "
            f"{Path(work_dir) / DEFAULT_CACHE} to reuse the replies already paid for)"
        )
    if changed:
        log.info("%s: nothing depends on the old options yet; now %s", path, "; ".join(changed))
    if not path.is_file():  # a new binding: its LLM settings lock once a reply is paid for
        Path(work_dir).mkdir(parents=True, exist_ok=True)
        unpaid.write_text("options recorded, no LLM reply yet: a rerun may change the LLM settings\n")
    updated = {
        **stored,
        **{k: v for k, v in wanted.items() if v is not None and (stored.get(k) is None or k in free)},
    }
    if updated != stored:
        write_json_atomic(path, updated)


#: The one help text of ``--reject-llm-failures``.
REJECT_HELP = (
    "reject items whose LLM call still fails after its retries and re-asks (reason llm_failure) instead of "
    "leaving them pending for the next run"
)


def add_step_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The step loop's options, spelled and explained alike for every command that runs LLM steps:
    ``--ahead N`` and ``--reject-llm-failures``."""
    parser.add_argument("--ahead", type=POSITIVE_INT, metavar="N", help=AHEAD_HELP)
    parser.add_argument("--reject-llm-failures", action="store_true", help=REJECT_HELP)
