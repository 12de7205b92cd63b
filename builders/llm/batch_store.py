"""What a batch run keeps in its folder, so that a rerun after any kill pays for nothing twice.

The folder (``<cache stem>-batches/`` beside the reply cache, so in the work folder by default) holds:

- ``round-NNNN/shard-KKK.jsonl``: the request lines of a round, in the OpenAI batch format
  (:mod:`builders.llm.batch_files`), and ``shard-KKK.ids`` beside each: its custom ids, one a line;
- ``journal.jsonl``: what happened to each shard, one event a line, each written and fsynced before
  anything else proceeds (``round``, ``uploaded`` with the file id, ``creating`` before the create
  call, ``created`` with the batch id, ``ended``, ``read``, ``refused`` over the budget,
  ``written`` for an offline engine); a torn last line (a kill mid-write) is ignored;
- ``results/NAME.jsonl``: the output lines accepted from a batch or from ``llm batch read``.

A shard is *outstanding* from its ``round`` event until its results are read (or it was refused or
written out for an offline engine): a rerun finishes outstanding shards before it writes a new round,
so a request is never in two live batches.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.files.jsonio import dumps_line, iter_jsonl, write_text_atomic
from builders.files.space import writing

JOURNAL = "journal.jsonl"
#: A shard's event -> the :class:`Shard` attribute it sets and the event field it sets it to (None: True).
_EVENTS: dict[str, tuple[str, str | None]] = {
    "uploaded": ("file_id", "file_id"),
    "creating": ("creating", None),
    "created": ("batch_id", "batch_id"),
    "ended": ("status", "status"),
    "read": ("read", None),
    "refused": ("refused", "reason"),
    "written": ("written", "to"),
}
RESULTS = "results"


@dataclass
class Shard:
    """One request file of a round and what became of it (replayed from the journal)."""

    name: str  # path relative to the batch folder
    group: str  # which endpoint and model its requests go to (:func:`group_of`)
    requests: int
    bytes: int
    cost: float | None  # estimated, at the batch price (None: no price known)
    file_id: str | None = None
    creating: bool = False  # the create call was made: a batch may exist without its id recorded
    batch_id: str | None = None
    status: str | None = None  # the batch's final status, once it ended
    read: bool = False
    refused: str | None = None
    written: str | None = None  # offline: the folder it was written to

    @property
    def outstanding(self) -> bool:
        return not self.read and self.refused is None and self.written is None


@dataclass
class BatchStore:
    """The batch folder of one reply cache (module doc)."""

    folder: Path
    shards: dict[str, Shard] = field(default_factory=dict)
    rounds: int = 0
    #: custom id -> the output lines read for it, oldest first (each with its ``batch``)
    replies: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    sources: int = 0  # result files read so far
    #: custom id -> output lines an earlier run read for it (re-asks are counted per run)
    read_before: dict[str, int] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path) -> BatchStore:
        store = cls(Path(folder))
        journal = store.folder / JOURNAL
        if journal.is_file():
            for _, event in iter_jsonl(journal, tolerate_torn_tail=True):
                store._apply(event)
        store.read_before = {key: len(lines) for key, lines in store.replies.items()}
        return store

    # -- the journal ---------------------------------------------------------------------------

    def record(self, event: str, **fields: Any) -> None:
        """Append one event to the journal, on disk (fsynced) before this returns."""
        entry = {"event": event, **fields}
        self.folder.mkdir(parents=True, exist_ok=True)
        with (
            writing(f"the batch journal in {self.folder}"),
            open(self.folder / JOURNAL, "a", encoding="utf-8") as fh,
        ):
            fh.write(dumps_line(entry))
            fh.flush()
            os.fsync(fh.fileno())
        self._apply(entry)

    def _apply(self, event: Mapping[str, Any]) -> None:
        kind = event.get("event")
        if kind == "round":
            self.rounds = max(self.rounds, int(event["round"]))
            for s in event["shards"]:
                self.shards[s["name"]] = Shard(
                    s["name"], s["group"], s["requests"], s["bytes"], s.get("cost")
                )
            return
        if kind == "results":
            self.sources += 1
            self._read_results(self.folder / event["file"])
            return
        shard = self.shards.get(str(event.get("shard")))
        if shard is None:
            return
        attribute, value_field = _EVENTS.get(str(kind), (None, None))
        if attribute is not None:
            setattr(shard, attribute, event[value_field] if value_field is not None else True)

    # -- rounds ----------------------------------------------------------------------------------

    def outstanding(self) -> list[Shard]:
        return [s for s in self.shards.values() if s.outstanding]

    def in_flight(self) -> set[str]:
        """The custom ids of the outstanding shards (asked, not yet answered)."""
        return {key for s in self.outstanding() for key in self.ids(s)}

    def sent(self) -> set[str]:
        """Every custom id this folder ever wrote a request for."""
        return {key for s in self.shards.values() for key in self.ids(s)}

    def ids(self, shard: Shard) -> list[str]:
        path = self.path(shard).with_suffix(".ids")
        return path.read_text(encoding="utf-8").split() if path.is_file() else []

    def path(self, shard: Shard) -> Path:
        return self.folder / shard.name

    def new_round(self) -> tuple[int, Path]:
        number = self.rounds + 1
        return number, self.folder / f"round-{number:04d}"

    # -- results ---------------------------------------------------------------------------------

    def add_results(self, name: str, lines: Iterable[Mapping[str, Any]]) -> int:
        """Keep accepted output lines as ``results/NAME.jsonl`` (atomic), then journal them; returns
        how many."""
        kept = [dict(line) for line in lines]
        relative = f"{RESULTS}/{name}.jsonl"
        with writing(f"batch results in {self.folder}"):
            write_text_atomic(self.folder / relative, "".join(dumps_line(line) for line in kept))
        self.record("results", file=relative, lines=len(kept))
        return len(kept)

    def _read_results(self, path: Path) -> None:
        if not path.is_file():
            return
        for _, line in iter_jsonl(path):
            self.replies[str(line["custom_id"])].append(line)

    def lines_of(self, key: str) -> list[dict[str, Any]]:
        return self.replies.get(key, [])


def group_of(settings: Any) -> str:
    """The endpoint and model a request goes to: one batch holds one group's requests."""
    return json.dumps([settings.base_url.rstrip("/"), settings.model])
