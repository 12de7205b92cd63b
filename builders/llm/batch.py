"""``--llm-mode batch``: the same steps, their requests answered by batches at half the price.

An execution mode of the one LLM session, not a second pipeline. A step runs as a *round*: every
request its sessions cannot answer from the reply cache is queued (:attr:`Status.QUEUED`) instead of
sent; the round's requests are written as OpenAI batch files (:mod:`builders.llm.batch_files`), one
batch per shard is created and polled, and the output lines are kept; then the step runs again and
its sessions check each kept line exactly as a synchronous reply (JSON, schema, the item it names,
the size cap) before it enters the cache, so the step goes on from the cache as always (resume,
replay, ``--estimate``, ``--max-cost``, reports). A line that does not check is asked again in the
next round (with the same re-ask a synchronous reply gets), within ``--llm-max-validation-retries``.
A two-stage style's second stage is the next round.

Every step of the way is journaled first (:mod:`builders.llm.batch_store`): a rerun after a kill
finishes the batches it created (finding one whose id it never received by its input file) before
it writes a new round, so no request is ever paid for twice.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from builders.files.jsonio import copy_file_atomic
from builders.files.progress import progress_bar
from builders.llm.batch_files import (
    MAX_MB,
    MAX_REQUESTS,
    URL,
    Queued,
    output_line_problem,
    read_output_lines,
    request_line,
    write_shards,
)
from builders.llm.batch_store import BatchStore, Shard, group_of
from builders.llm.body import chat_body
from builders.llm.cost import estimate_request

if TYPE_CHECKING:
    from builders.llm.client import LLMClient, LLMResult, _Channel, _Prepared

log = logging.getLogger(__name__)
T = TypeVar("T")

POLL_SECONDS = 30.0
FINAL = frozenset({"completed", "expired", "failed", "cancelled"})


class BatchesUnsupported(RuntimeError):
    """The endpoint has no Batch or Files API: one line naming it, before anything is paid."""


class BatchPending(Exception):  # noqa: N818 - not an error: a round written for an offline engine
    """A round was written for an offline engine (``llm batch write``): what to do next, in words."""


def batch_folder(cache_path: Path) -> Path:
    """Where a reply cache's batches are kept: ``<cache stem>-batches`` beside it."""
    return cache_path.with_name(cache_path.stem + "-batches")


@dataclass
class BatchMode:
    """A command's batch state: its folder's store, this round's queue, the clients of its groups."""

    store: BatchStore
    max_requests: int = MAX_REQUESTS
    max_mb: float = MAX_MB
    poll_seconds: float = POLL_SECONDS
    #: Offline engine: write each round here (``llm batch write``) instead of submitting it.
    write_to: Path | None = None
    queue: list[Queued] = field(default_factory=list)
    clients: dict[str, LLMClient] = field(default_factory=dict)
    _in_flight: set[str] = field(default_factory=set)
    _reserved: dict[str, float] = field(default_factory=dict)  # shard -> its cost held in the budget
    _spools: dict[str, Any] = field(default_factory=dict)  # group -> this pass's queued lines, on disk
    #: Provenance: batch (or results file) -> replies it gave that entered the cache in this run.
    applied: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_cache(cls, cache_path: Path) -> BatchMode:
        return cls(BatchStore.open(batch_folder(cache_path)))

    def join(self, client: LLMClient) -> None:
        """Have ``client`` (a command's second model) queue into this round."""
        client.batch = self
        self.clients[group_of(client.settings)] = client

    # -- a session's cache miss ----------------------------------------------------------------

    async def answer(self, session: _Channel, p: _Prepared) -> LLMResult:
        """A request the cache cannot answer: its kept batch reply checked (into the cache when it
        validates), else the request queued for the next round (or failed, its re-asks spent)."""
        from builders.llm.client import Status

        lines = self.store.lines_of(p.key)
        messages = list(p.request.messages)
        if lines:
            taken = session.take_batch_line(p, lines[-1], len(lines))
            if not isinstance(taken, tuple):
                return taken
            raw, problem = taken
            # Re-asks are counted per run, as synchronous ones are: a rerun asks a failed item again.
            attempts = len(lines) - self.store.read_before.get(p.key, 0)
            if attempts > session.settings.max_validation_retries:
                error = f"no usable reply after {attempts} batch attempt(s) in this run: {problem}"
                return session._failed(session._result(p, Status.FAILED, error, raw, attempts))
            if raw is not None:
                messages = session.reask_messages(p, raw, problem)
        if p.key in self._in_flight:
            return session._result(p, Status.QUEUED, "queued: in a batch not yet read")
        body = bytes(chat_body(session.settings, messages, p.schema.response_format() if p.schema else None))
        cost = None
        budget = session.client.budget
        if budget is not None:
            est = estimate_request(p.request, session.settings.model, session.settings.max_tokens)
            cost = budget._price(session.settings).cost(est.input_tokens, est.output_tokens)
        self._in_flight.add(p.key)
        line = request_line(p.key, body)
        group = group_of(session.settings)
        spool = self._spools.get(group)
        if spool is None:
            self.store.folder.mkdir(parents=True, exist_ok=True)
            spool = self._spools[group] = open(
                self.store.folder / f"spool-{len(self._spools) + 1}.jsonl", "w+b"
            )
        spool.write(line)
        self.queue.append(Queued(group, p.key, len(line), cost))
        return session._result(p, Status.QUEUED, "queued for the next batch round")

    # -- rounds ------------------------------------------------------------------------------------

    def rounds(self, client: LLMClient, run_pass: Callable[[], T]) -> T:
        """Run ``run_pass`` (one pass of a step over its pending items) round after round until it
        queues nothing: each round's queue written, submitted, polled and read in between."""
        self.clients.setdefault(group_of(client.settings), client)
        while True:
            self.finish_outstanding()
            self.queue.clear()
            self._close_spools()
            self._in_flight = self.store.in_flight()
            result = run_pass()
            if not self.queue or client.estimate is not None or client.interrupted is not None:
                self._close_spools()
                self.say_applied()
                return result
            shards = self.write_round()
            if self.write_to is not None:
                raise BatchPending(self.write_out(shards))
            read_before = self.store.sources
            self.submit(shards)
            self.finish_outstanding()
            if self.store.sources == read_before:
                self.say_applied()
                return result  # the batches ended with nothing to read: the items stay pending

    def note_applied(self, source: str) -> None:
        self.applied[source] = self.applied.get(source, 0) + 1

    def say_applied(self) -> None:
        """The provenance line: which batches the replies this run cached came from."""
        if self.applied:
            listed = ", ".join(f"{source} ({count})" for source, count in self.applied.items())
            print(f"replies from batch: {listed}; each reply's batch is in {self.store.folder / 'results'}",
                  file=sys.stderr)  # fmt: skip
            self.applied.clear()

    def write_round(self) -> list[Shard]:
        """This round's queue as shard files, journaled (``round``) before anything is uploaded."""
        number, folder = self.store.new_round()
        by_group: dict[str, list[Queued]] = {}
        for q in self.queue:
            by_group.setdefault(q.group, []).append(q)
        entries: list[dict[str, Any]] = []
        for index, (group, queued) in enumerate(sorted(by_group.items())):
            sub = folder / f"group-{index + 1}" if len(by_group) > 1 else folder
            spool = self._spools[group]
            spool.flush()
            spool.seek(0)
            lines = iter(spool.readline, b"")
            for f in write_shards(sub, queued, lines, self.max_requests, int(self.max_mb * 2**20)):
                entries.append({"name": f.path.relative_to(self.store.folder).as_posix(), "group": group,
                                "requests": f.requests, "bytes": f.bytes, "sha256": f.sha256, "cost": f.cost})  # fmt: skip
        self.store.record("round", round=number, shards=entries)
        self._close_spools()
        return [self.store.shards[e["name"]] for e in entries]

    def write_out(self, shards: list[Shard]) -> str:
        """Offline engine: copy the round's shards to :attr:`write_to`; the line that says what next."""
        assert self.write_to is not None  # claimed by 'llm batch write' (claim_folder) before the command ran
        written = []
        for shard in shards:
            target = (
                self.write_to / Path(shard.name).name
                if len(shards) == 1
                else self.write_to / shard.name.replace("/", "-")
            )
            copy_file_atomic(self.store.path(shard), target)
            self.store.record("written", shard=shard.name, to=str(target))
            written.append(str(target))
        requests = sum(s.requests for s in shards)
        return (
            f"wrote {requests:,} request(s) in {len(written)} batch file(s): {', '.join(written)}; run each with an "
            "engine that reads the OpenAI batch format (e.g. python -m vllm.entrypoints.openai.run_batch -i FILE -o "
            "RESULTS.jsonl --model M), then 'vqabench llm batch read RESULTS.jsonl --batches "
            f"{self.store.folder}' and rerun this command"
        )

    def _close_spools(self) -> None:
        for spool in self._spools.values():
            spool.close()
            Path(spool.name).unlink(missing_ok=True)
        self._spools.clear()

    # -- the provider's Batch API -------------------------------------------------------------------

    def _client_of(self, shard: Shard) -> LLMClient:
        client = self.clients.get(shard.group)
        if client is None:
            raise RuntimeError(f"{self.store.path(shard)}: its batch goes to {shard.group}, which this command "
                               "does not use; rerun the command that wrote it")  # fmt: skip
        return client

    def submit(self, shards: list[Shard]) -> None:
        """Upload each shard and create its batch, within the budget; ids journaled as they come."""
        for shard in shards:
            client = self._client_of(shard)
            budget = client.budget
            if budget is not None and shard.cost is not None:
                if budget.spent + budget.reserved + shard.cost > budget.max_cost:
                    budget.refused += shard.requests
                    self.store.record("refused", shard=shard.name, reason=f"over the --max-cost budget "
                                      f"(~${shard.cost:,.4f} more; {budget.describe()})")  # fmt: skip
                    continue
                budget.reserved += shard.cost
                self._reserved[shard.name] = shard.cost
            self._start(client, shard)

    def finish_outstanding(self) -> None:
        """Every outstanding shard: uploaded, its batch created (once), polled to its end, read."""
        shards = self.store.outstanding()
        if not shards:
            return
        for shard in shards:
            if shard.batch_id is None:
                self._start(self._client_of(shard), shard)
        self._poll([s for s in shards if s.batch_id is not None])

    def _start(self, client: LLMClient, shard: Shard) -> None:
        sdk = api(client)
        if shard.batch_id is None and shard.creating and shard.file_id is not None:
            found = _batch_of_file(sdk, shard.file_id)  # created before a kill took its id
            if found is not None:
                self.store.record("created", shard=shard.name, batch_id=found)
                return
        if shard.file_id is None:
            probe(sdk, client.settings.base_url)
            with open(self.store.path(shard), "rb") as fh:
                uploaded = _call("files", lambda: sdk.files.create(file=(Path(shard.name).name, fh), purpose="batch"),
                                 client.settings.base_url)  # fmt: skip
            self.store.record("uploaded", shard=shard.name, file_id=uploaded.id)
        self.store.record("creating", shard=shard.name, file_id=shard.file_id)
        assert shard.file_id is not None
        file_id = shard.file_id
        created = _call("batches", lambda: sdk.batches.create(
            input_file_id=file_id, endpoint=URL, completion_window="24h",
            metadata={"vqabench_shard": shard.name},
        ), client.settings.base_url, refused_400=False)  # fmt: skip
        self.store.record("created", shard=shard.name, batch_id=created.id)

    def _poll(self, shards: list[Shard]) -> None:
        """Poll until every batch ends, showing completed/failed/total; Ctrl-C leaves them running."""
        total = sum(s.requests for s in shards)
        left = list(shards)
        ids = ", ".join(str(s.batch_id) for s in shards)
        try:
            with progress_bar(total, 0, f"batches {ids}") as bar:
                seen: dict[str, int] = {}
                while left:
                    for shard in list(left):
                        sdk = api(self._client_of(shard))
                        batch = sdk.batches.retrieve(str(shard.batch_id))
                        counts = batch.request_counts
                        done = (counts.completed + counts.failed) if counts is not None else 0
                        bar.update(done - seen.get(shard.name, 0))
                        seen[shard.name] = done
                        if hasattr(bar, "set_postfix_str") and counts is not None:
                            bar.set_postfix_str(f"{batch.id}: {batch.status}, {counts.completed} completed, "
                                                f"{counts.failed} failed of {counts.total}")  # fmt: skip
                        if batch.status in FINAL:
                            self.store.record(
                                "ended", shard=shard.name, batch_id=batch.id, status=batch.status
                            )
                            self._read(sdk, shard, batch)
                            left.remove(shard)
                            budget = self._client_of(shard).budget
                            if budget is not None and shard.name in self._reserved:
                                budget.reserved -= self._reserved.pop(shard.name)
                    if left:
                        time.sleep(self.poll_seconds)
        except KeyboardInterrupt:
            from builders.llm.client import Interrupted

            raise Interrupted(signal.SIGINT, (
                f"stopped waiting; the batches ({ids}) keep running at the provider. Rerun the same command to "
                f"resume (it polls them, never creates them again), or cancel them: vqabench llm batch cancel "
                f"--batches {self.store.folder}"
            )) from None  # fmt: skip

    def _read(self, sdk: Any, shard: Shard, batch: Any) -> None:
        """Download an ended batch's output and error files; keep the lines it was sent for."""
        if batch.status != "completed":
            print(f"batch {batch.id} ({self.store.path(shard)}) ended {batch.status}: its results are kept, the "
                  "rest of its requests go to the next round", file=sys.stderr)  # fmt: skip
        lines: list[dict[str, Any]] = []
        sent = set(self.store.ids(shard))
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            text = _download(sdk, file_id, f"batch {batch.id} ({self.store.path(shard)})")
            for number, raw in enumerate(text.splitlines(), 1):
                if not raw.strip():
                    continue
                lines.extend(
                    self._accept(raw, sent, f"batch {batch.id} file {file_id} line {number}", batch.id)
                )
        self.store.add_results(str(batch.id), lines)
        self.store.record("read", shard=shard.name, batch_id=batch.id)

    def _accept(self, raw: str, sent: set[str], where: str, source: str) -> list[dict[str, Any]]:
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as err:
            log.warning("%s: refused, not JSON (%s)", where, err)
            return []
        problem = output_line_problem(line)
        if problem is None and line["custom_id"] not in sent:
            problem = f"custom_id {str(line['custom_id'])[:20]!r} was never sent"
        if problem is not None:
            print(f"{where}: refused: {problem}", file=sys.stderr)
            return []
        return [{"custom_id": line["custom_id"], "batch": source, "response": line.get("response"),
                 "error": line.get("error")}]  # fmt: skip

    # -- an offline engine's results -------------------------------------------------------------------

    def read_file(self, path: Path) -> tuple[int, int]:
        """``llm batch read``: keep the lines of a results file whose custom id was sent; (kept, refused)."""
        sent = self.store.sent()
        kept: list[dict[str, Any]] = []
        refused = 0
        for number, line in read_output_lines(path):
            accepted = self._accept(json.dumps(line), sent, f"{path}, line {number}", f"file:{path.name}")
            refused += not accepted
            kept.extend(accepted)
        self.store.add_results(f"read-{self.store.sources + 1:04d}", kept)
        for shard in self.store.shards.values():
            if shard.written is not None and not shard.read:
                self.store.record("read", shard=shard.name, batch_id=None)
        return len(kept), refused


def api(client: LLMClient) -> Any:
    """A synchronous SDK client for the Files and Batches endpoints of ``client``'s endpoint, over the
    chat path's bounded transport (:mod:`builders.llm.transport`: a decoded-size cap on every body, an
    output file included, and a deadline per attempt); a URL's ``user:password`` is not sent (no HTTP
    Basic auth from a URL, as for chat requests)."""
    import openai

    from builders.files.redact import without_userinfo
    from builders.llm.transport import BoundedSyncClient

    s = client.settings
    bounded = BoundedSyncClient(
        deadline=s.timeout, max_bytes=int(s.max_reply_mb * 2**20), proxy=client._proxy
    )
    return openai.OpenAI(
        api_key=s.read_api_key(), base_url=without_userinfo(s.base_url), timeout=s.timeout,
        max_retries=s.max_retries, http_client=bounded,
    )  # fmt: skip


def _download(sdk: Any, file_id: str, what: str) -> str:
    """The text of a provider file; one over the reply cap is a RuntimeError naming it (the batch stays
    ended but unread: a rerun with a larger ``--llm-max-reply-mb`` reads it, paying nothing again)."""
    from builders.llm.transport import ReplyTooLarge

    try:
        return str(sdk.files.content(file_id).text)
    except ReplyTooLarge as err:
        raise RuntimeError(f"{what}: its file {file_id} was refused: {err}") from None


def probe(sdk: Any, base_url: str) -> None:
    """Refuse, in one line, an endpoint without a Batch API (before anything is uploaded or paid)."""
    _call("batches", lambda: sdk.batches.list(limit=1), base_url)


def _call(endpoint: str, call: Callable[[], T], base_url: str, *, refused_400: bool = True) -> T:
    """``call()``; a 404 (or a 400, unless ``refused_400`` is False: a batch's create, whose 400 is
    about that batch) says the endpoint has no such API, in one line naming it."""
    import openai

    try:
        return call()
    except (openai.NotFoundError, openai.BadRequestError) as err:
        if isinstance(err, openai.BadRequestError) and not refused_400:
            raise
        raise BatchesUnsupported(
            f"{base_url.rstrip('/')}/{endpoint}: HTTP {err.status_code}: this endpoint has no Batch API "
            "(Files and Batches); run without --llm-mode batch, or use 'vqabench llm batch write' and an "
            "offline engine"
        ) from None


def _batch_of_file(sdk: Any, file_id: str) -> str | None:
    """The batch created from ``file_id`` (a create whose reply a kill lost), if one exists."""
    for batch in sdk.batches.list(limit=100):
        if batch.input_file_id == file_id:
            return str(batch.id)
    return None
