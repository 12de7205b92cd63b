"""The one way this project talks to an LLM: batches of requests, cached, validated, bounded.

    client = LLMClient(LLMSettings.from_env(), cache_path="work/llm-cache.sqlite")
    results = client.run([LLMRequest([user_message("...", images)], schema=Answer, prompt=p)])
    for r in results:
        r.value if r.ok else (r.status, r.error)   # failures are reported, never guessed
    print(client.usage)

Retries of transport faults (429 with Retry-After, 5xx, timeouts, dropped connections) are the
OpenAI SDK's own (``settings.max_retries``); there is no second loop on top. What the SDK cannot
judge, the *content*, is checked here: a reply that is unparsable, schema-invalid, rejected by
the request's validator or truncated is re-asked up to ``settings.max_validation_retries`` times,
sending the bad reply and the problem back to the model. Only a validated reply is cached, under
the key of the original request.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from builders.files.progress import progress_bar
from builders.files.redact import redact_text, redact_url, without_userinfo
from builders.files.space import DiskFull
from builders.llm.body import chat_body
from builders.llm.cache import CachedReply, PendingReask, ReplyCache, cache_key, load_replies, utc_now
from builders.llm.cost import Budget, Estimate, estimate_request
from builders.llm.messages import (
    Message,
    assistant_message,
    has_placeholders,
    system_message,
    user_message,
)
from builders.llm.prompts import Prompt
from builders.llm.schema import (
    ITEM_ID_FIELD,
    ReplyError,
    ReplySchema,
    bind_to_item,
    check_value,
    validate_reply,
)
from builders.llm.settings import LLMSettings
from builders.llm.transport import BoundedAsyncClient, ReplyTooLarge
from builders.llm.usage import TokenUsage, UsageSummary

if TYPE_CHECKING:
    from builders.llm.batch import BatchMode

log = logging.getLogger(__name__)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass


CLAIM_POLL_SECONDS = 0.1  # how often a request another process is asking for looks for its reply
Mode = Literal["normal", "refresh", "replay"]
#: ``batch`` is normal use of the cache with the misses answered by batches (:mod:`builders.llm.batch`).
MODES: tuple[str, ...] = ("normal", "refresh", "replay", "batch")


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT or SIGTERM once the replies in flight had arrived and been recorded
    (:meth:`LLMClient.session`). ``exit_status``: 128 + the signal number, as a shell reports it."""

    def __init__(self, signum: int, message: str) -> None:
        super().__init__(message)
        self.signum = signum
        self.exit_status = 128 + signum


class ReplayMissError(RuntimeError):
    """Replay mode met requests with no recorded reply (nothing was sent to any server)."""

    def __init__(self, message: str, keys: Sequence[str]) -> None:
        super().__init__(message)
        self.keys = list(keys)


@dataclass(frozen=True)
class LLMRequest:
    """One chat request.

    ``schema``: a pydantic model class (the value comes back as an instance) or a JSON-schema
    dict (the value is the validated dict); None for a plain-text reply. ``prompt``: the
    :class:`~builders.llm.prompts.Prompt` (or ``(name, version)``) the messages were rendered from; it
    is part of the cache key and recorded with the reply. ``validator(value)``: an optional domain
    check that raises ValueError to have the model re-asked. ``metadata``: yours, copied to the
    result untouched (not part of the key). ``item_id``: the item the request is about; the reply schema
    then gets a required ``item_id`` field (:data:`~builders.llm.schema.ITEM_ID_FIELD`), the messages
    must show the id, and a reply (or cached reply) that carries another id is refused and re-asked,
    never applied to this item.
    """

    messages: Sequence[Message]
    schema: type[BaseModel] | dict[str, Any] | None = None
    prompt: Prompt | tuple[str, str] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    validator: Callable[[Any], object] | None = None
    schema_name: str | None = None  # json_schema.name sent; default: the model's class name
    output_tokens: int | None = None  # expected reply length, for cost estimates (not in the key)
    item_id: str | None = None

    @classmethod
    def from_prompt(
        cls,
        prompt: Prompt,
        variables: Mapping[str, Any] | None = None,
        *,
        images: Iterable[str] = (),
        system: str | None = None,
        schema: type[BaseModel] | dict[str, Any] | None = None,
        validator: Callable[[Any], object] | None = None,
        metadata: Mapping[str, Any] | None = None,
        item_id: str | None = None,
    ) -> LLMRequest:
        """A request whose user turn is ``prompt`` rendered with ``variables`` (strict), after the
        images; ``system`` adds a system turn first. ``item_id`` binds the reply to the item (the
        prompt shows it as ``{{ item_id }}``)."""
        variables = dict(variables or {})
        if item_id is not None:
            variables[ITEM_ID_FIELD] = item_id
        messages = [system_message(system)] if system is not None else []
        messages.append(user_message(prompt.render(**variables), images))
        return cls(
            messages, schema, prompt, metadata=dict(metadata or {}), validator=validator, item_id=item_id
        )

    @property
    def prompt_ref(self) -> tuple[str, str] | None:
        if self.prompt is None:
            return None
        if isinstance(self.prompt, Prompt):
            return self.prompt.ref
        name, version = self.prompt
        return (str(name), str(version))


class Status(enum.Enum):
    """What became of a request: the one thing callers branch on (``error`` is prose for people)."""

    OK = "ok"  # a validated value is in ``value``
    FAILED = "failed"  # sent, and no usable reply after the retries and re-asks (a failed call)
    REPLAY_MISS = "replay_miss"  # replay mode and no recorded reply: nothing was sent
    OVER_BUDGET = "over_budget"  # not sent: its estimated cost would cross the --max-cost budget
    ESTIMATED = "estimated"  # --estimate: counted into the estimate, not sent
    BLOCKED = "blocked"  # the provider's safety filter stopped it: final, never cached, never re-asked
    STOPPED = "stopped"  # not sent: the run is stopping (Ctrl-C/SIGTERM, a full disk); left pending
    QUEUED = "queued"  # --llm-mode batch: queued for the round's batch, answered by the next pass


@dataclass(frozen=True)
class LLMResult:
    """The outcome of one request, in the position of its request.

    ``status``: :attr:`Status.OK` when a validated value is in ``value`` (model instance, dict or
    text); otherwise why not, and ``error`` says it in words and ``raw`` holds the last reply text
    received, if any. ``attempts``: model calls made for it in this run (0 for a cache hit).
    ``usage``: tokens of those calls, or the recorded usage for a cache hit.
    """

    status: Status
    value: Any
    raw: str | None
    error: str | None
    attempts: int
    cached: bool
    model_reported: str | None
    usage: TokenUsage
    key: str
    metadata: Mapping[str, Any]
    elapsed: float = 0.0
    #: With :attr:`Status.BLOCKED`, what said the safety filter stopped the reply
    #: (``finish_reason=content_filter``, Gemini's ``SAFETY``..., a refusal, a blocked prompt); None
    #: otherwise. The step loop rejects a blocked item with reason ``blocked``.
    blocked: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


#: ``finish_reason`` values (lower-cased) that mean a safety filter stopped the reply: OpenAI's
#: ``content_filter`` and the native values Gemini's OpenAI-compatible endpoint passes through.
#: (``RECITATION``, a copyright stop, is not a safety block: it is re-asked like a bad reply.)
BLOCKING_FINISH_REASONS = frozenset(
    {"content_filter", "safety", "prohibited_content", "blocklist", "spii", "image_safety",
     "image_prohibited_content"}
)  # fmt: skip
BLOCKED = "blocked by the provider's safety filter"


def blocked_signal(completion: Any) -> str | None:
    """What says a completion was blocked for safety, or None: a blocking ``finish_reason``, a
    ``refusal`` (OpenAI), or no choices with a prompt block reason (Gemini's
    ``prompt_feedback.block_reason``, in either spelling)."""
    choices = getattr(completion, "choices", None) or []
    if choices:
        choice = choices[0]
        reason = str(choice.finish_reason or "")
        if reason.lower() in BLOCKING_FINISH_REASONS:
            return f"finish_reason={reason}"
        refusal = getattr(choice.message, "refusal", None) if choice.message is not None else None
        if refusal:
            return f"refusal: {str(refusal)[:200]}"
        return None
    extra = getattr(completion, "model_extra", None) or {}
    feedback = extra.get("prompt_feedback") or extra.get("promptFeedback") or {}
    if isinstance(feedback, Mapping):
        blocked = feedback.get("block_reason") or feedback.get("blockReason")
        if blocked:
            return f"prompt blocked: {blocked}"
    return None


@dataclass(frozen=True)
class Checked:
    """A completion as :meth:`LLMSession._check` read it: ``value`` when it validated, else
    ``problem`` (re-ask) or ``blocked`` (final)."""

    usage: TokenUsage
    model_reported: str | None
    raw: str | None
    value: Any = None
    problem: str | None = None
    blocked: str | None = None


@dataclass(frozen=True)
class _Prepared:
    request: LLMRequest
    schema: ReplySchema | None
    key: str
    validator: Callable[[Any], object] | None  # the request's own, after the item binding's check


class LLMClient:
    """Runs :class:`LLMRequest` batches against one endpoint, with a reply cache.

    ``mode``: ``"normal"`` (use the cache, call on a miss, store what validates), ``"refresh"``
    (call everything again and overwrite) or ``"replay"`` (cache only; any miss raises
    :class:`ReplayMissError` before anything is sent). ``replies_path``: a recorded-replies JSONL
    file to replay from instead of a cache (implies replay mode). ``proxy``: an HTTP proxy URL for
    this client's requests alone (e.g. a local test server answering for a fixed base URL); None:
    the SDK's default, which honours ``HTTP(S)_PROXY``. It is not a setting: it changes the route,
    never the reply, so it stays out of the cache key (and of anything written).
    """

    def __init__(
        self,
        settings: LLMSettings,
        cache_path: str | Path | None = None,
        mode: Mode | Literal["batch"] = "normal",
        replies_path: str | Path | None = None,
        *,
        proxy: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        #: ``--llm-mode batch``: cache misses are queued into batch rounds (:mod:`builders.llm.batch`).
        self.batch: BatchMode | None = None
        if mode == "batch":
            if cache_path is None or replies_path is not None:
                raise ValueError("batch mode needs a reply cache (its batches are kept beside it)")
            from builders.llm.batch import BatchMode

            self.batch = BatchMode.for_cache(Path(cache_path))
            mode = "normal"
        if replies_path is not None:
            if cache_path is not None or mode == "refresh":
                raise ValueError("replies_path is a replay source: give no cache_path and no refresh mode")
            mode = "replay"
            self.cache: ReplyCache | None = load_replies(replies_path)
        elif cache_path is not None:
            if mode == "replay" and not Path(cache_path).is_file():
                raise FileNotFoundError(f"replay mode: no reply cache at {cache_path}")
            self.cache = ReplyCache(cache_path)
        elif mode == "replay":
            raise ValueError("replay mode needs a cache_path or a replies_path to replay from")
        else:
            self.cache = None
        self.settings = settings
        self._proxy = proxy
        self.mode: Mode = mode
        if self.batch is not None:
            self.batch.join(self)
        self.usage = UsageSummary()
        self.last_usage = UsageSummary()
        #: A :class:`~builders.llm.cost.Budget` that sessions (the step loop) keep to; None: no limit.
        self.budget: Budget | None = None
        #: When set, sessions send nothing: every request is counted into it (``--estimate``).
        self.estimate: Estimate | None = None
        #: The signal (SIGINT, SIGTERM) that stopped the last session, if one did (:meth:`session`).
        self.interrupted: int | None = None
        self.timeout_noted = False  # the worst-case wait was said (at the first timeout)
        self.userinfo_noted = False  # the base URL's unsent user:password was said
        self._owns_cache = True
        #: Errors already logged as a warning (sessions log each distinct one once).
        self.failures_said: set[str] = set()

    def __repr__(self) -> str:
        return (
            f"LLMClient(model={self.settings.model!r}, base_url={redact_url(self.settings.base_url)!r}, "
            f"mode={self.mode!r}, cache={self.cache.path if self.cache is not None else None!r})"
        )

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.cache is not None and self._owns_cache:
            self.cache.close()

    def derive(self, settings: LLMSettings) -> LLMClient:
        """A client for another model of the same run (e.g. who writes a two-stage style's rationales):
        this client's cache - the same one, so both stages' replies are cached, claimed, replayed and
        found again alike -, mode and proxy; it closes nothing of them (this client does)."""
        other = LLMClient(settings, mode="normal", proxy=self._proxy)
        other.cache, other.mode, other._owns_cache = self.cache, self.mode, False
        return other

    # -- keys -------------------------------------------------------------------------------

    def prepare(self, request: LLMRequest) -> _Prepared:
        """The request checked, its reply schema and its cache key (what a session sends)."""
        if not isinstance(request, LLMRequest):
            raise TypeError(f"expected an LLMRequest, got {type(request).__name__}")
        if not request.messages:
            raise ValueError("an LLMRequest needs at least one message")
        bound = request.item_id is not None
        if bound and request.schema is None:
            raise ValueError("a request bound to an item (item_id) needs a JSON reply schema to carry the id")
        schema = ReplySchema.of(request.schema, request.schema_name, bound=bound)
        key = cache_key(
            **self.settings.cache_identity(),
            messages=request.messages,
            schema=schema.response_format() if schema else None,
            prompt=request.prompt_ref,
        )
        validator = (
            bind_to_item(request.item_id, request.validator)
            if request.item_id is not None
            else request.validator
        )
        return _Prepared(request, schema, key, validator)

    def miss_reason(self, keys: Iterable[str]) -> str:
        """Why replay keys were missed: damaged recorded replies, or requests that differ."""
        keys = list(keys)
        cache = self.cache
        damaged = [k for k in keys if cache is not None and k in cache.damaged]
        if cache is not None and damaged:
            rest = "" if len(damaged) == len(keys) else "; the others differ from those recorded"
            return (
                f"{len(damaged)} of them have a damaged recorded reply in {cache.path} (it fails its "
                f"content hash){rest}"
            )
        return "the requests or settings differ from those recorded"

    def key_of(self, request: LLMRequest) -> str:
        """The cache key of a request under this client's settings."""
        return self.prepare(request).key

    # -- running ----------------------------------------------------------------------------

    def run(self, requests: Iterable[LLMRequest], desc: str = "LLM") -> list[LLMResult]:
        """Synchronous :meth:`arun` (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            requests = list(requests)

            def one_pass() -> list[LLMResult]:
                try:
                    return asyncio.run(self.arun(requests, desc=desc))
                except asyncio.CancelledError:  # a second signal stopped the session at once
                    self.raise_if_interrupted()
                    raise

            return one_pass() if self.batch is None else self.batch.rounds(self, one_pass)
        raise RuntimeError(
            "LLMClient.run() was called inside a running event loop; use 'await client.arun()'"
        )

    def run_one(self, request: LLMRequest) -> LLMResult:
        return self.run([request], desc="LLM")[0]

    async def arun_one(self, request: LLMRequest) -> LLMResult:
        return (await self.arun([request]))[0]

    async def arun(self, requests: Iterable[LLMRequest], desc: str = "LLM") -> list[LLMResult]:
        """Results in input order; a failed item is a result whose ``status`` says why, never an exception.

        At most ``settings.max_concurrency`` calls are in flight. Requests with the same key share
        one call. Raises :class:`ReplayMissError` (replay mode) or RuntimeError (missing API key)
        before sending anything. Each request goes through one :class:`LLMSession`, so estimates
        (:attr:`estimate`) and budgets (:attr:`budget`) apply here as in the step loop.
        """
        requests = list(requests)
        if self.mode == "replay" and self.estimate is None:
            prepared = [self.prepare(r) for r in requests]
            hits = self.cache.get_many(p.key for p in prepared) if self.cache is not None else {}
            missing = [p for p in prepared if p.key not in hits]
            if missing:
                first = missing[0]
                prompt = "@".join(first.request.prompt_ref or ("no prompt", "-"))
                raise ReplayMissError(
                    f"replay: {len(missing)} of {len(prepared)} requests have no recorded reply "
                    f"(first: key {first.key[:16]}…, prompt {prompt}, model {self.settings.model}); "
                    + self.miss_reason([p.key for p in missing]),
                    list(dict.fromkeys(p.key for p in missing)),
                )
        with progress_bar(len(requests), 0, desc) if self.settings.progress else nullcontext(_NoBar()) as bar:
            async with self.session() as session:

                async def one(request: LLMRequest) -> LLMResult:
                    result = await session.complete(request)
                    bar.update(1)
                    return result

                results = await asyncio.gather(*(one(r) for r in requests))
                if session.full is not None:
                    raise session.full_error()
        log.info("%s", self.last_usage)
        self.raise_if_interrupted()
        return list(results)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[LLMSession]:
        """The run's one :class:`LLMSession`: requests sent one at a time as they become ready (the
        step loop's way), with this client or any other (another stage's model), all under one stop,
        one signal handling and one count of what was paid; each client's counts are merged into its
        :attr:`usage` when it closes.

        While it is open (in the main thread), SIGINT (Ctrl-C) and SIGTERM stop it gently: nothing more
        is sent, whatever the client, and the requests already sent - paid for, whatever happens now -
        are waited for, each bounded by the timeout, so that their replies are cached and recorded as
        usual; :attr:`interrupted` of every client it used then holds the signal, and the runner raises
        :class:`Interrupted` once they are. A second signal stops at once (the replies still out are lost)."""
        session = LLMSession(self)
        try:
            with _stopped_by_signals(session):
                yield session
        finally:
            await session.close()

    def raise_if_interrupted(self) -> None:
        """Raise :class:`Interrupted` if the last session was stopped by a signal (call it once the
        event loop is done: the replies in flight have been recorded by then)."""
        if self.interrupted is not None:
            name = signal.Signals(self.interrupted).name
            raise Interrupted(
                self.interrupted,
                f"interrupted ({name}): stopped sending; the replies already paid for were recorded",
            )

    @asynccontextmanager
    async def _sdk(self):
        # One SDK client per batch: it binds its connection pool to the running event loop, and the
        # key is read from the environment now ("at call time"), never kept on this object.
        # The HTTP client bounds each attempt as a whole (connect, headers, body) and each body's size:
        # httpx's own timeouts bound only each wait, which a trickling server never trips.
        s = self.settings
        endpoint = without_userinfo(s.base_url)  # a URL's user:password is never sent as Basic auth
        if endpoint != s.base_url and not self.userinfo_noted:
            self.userinfo_noted = True
            log.warning("the user:password in the base URL %s is not sent (no HTTP Basic auth from a URL); give "
                        "the API key by the variable --llm-api-key-env names", redact_url(s.base_url))  # fmt: skip
        sdk = openai.AsyncOpenAI(
            api_key=s.read_api_key(),
            base_url=endpoint,
            timeout=s.timeout,
            max_retries=s.max_retries,
            http_client=BoundedAsyncClient(
                deadline=s.timeout, max_bytes=int(s.max_reply_mb * 2**20), proxy=self._proxy
            ),
        )
        try:
            yield sdk
        finally:
            await sdk.close()


class LLMSession:
    """The one sender of a run, whatever client (model, endpoint) each request goes to: requests sent
    one at a time, as soon as each is ready, each client's through its own SDK client (at most its
    ``settings.max_concurrency`` in flight; requests with the same key in flight share one call). For
    every client alike it claims a key in the shared cache, keeps the budget, calls the model, re-asks
    on a bad reply, caches what validates and says what became of each request (:class:`Status`); a
    stop (a signal, a full disk) stops every client's sending at once. Open one with
    ``async with client.session() as session``; ``await session.complete(request)``, or
    ``complete(request, other_client)`` for another stage's model.

    ``budget`` (a client's :attr:`LLMClient.budget`): a request the cache cannot answer is sent only
    while the budget allows its estimated cost (else :attr:`Status.OVER_BUDGET`, nothing sent). In
    replay mode a miss is :attr:`Status.REPLAY_MISS` (nothing is ever sent); under ``--estimate``
    every request is :attr:`Status.ESTIMATED`.
    """

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self._channels: dict[int, _Channel] = {}
        self._opening = asyncio.Lock()
        self._exits = contextlib.AsyncExitStack()
        self._started = time.perf_counter()
        #: Set by :meth:`stop`: nothing more is sent; results are :attr:`Status.STOPPED`.
        self.stopping = asyncio.Event()
        self.stop_reason: str | None = None
        #: The signal (SIGINT, SIGTERM) that stopped this session, if one did.
        self.interrupted: int | None = None
        self.sending = 0  # HTTP requests out now, to any client (sent, so paid for, and not answered yet)
        self.paid_unsaved = 0  # replies paid for that the cache could not store (a full disk)
        self.full: DiskFull | None = None  # the first write that failed for lack of space
        self._task = asyncio.current_task()
        client.interrupted = None

    def stop(self, reason: str) -> None:
        """Send nothing more, to any client (the requests already out are still waited for and recorded)."""
        if not self.stopping.is_set():
            self.stop_reason = reason
            self.stopping.set()

    def disk_full(self, err: DiskFull) -> None:
        """No room to save what is paid for: send nothing more (what was saved stays saved)."""
        if self.full is None:
            self.full = err
        self.stop("the disk is full")

    def full_error(self, done: str = "") -> DiskFull:
        """The one line a run stopped by a full disk ends with: what it did (``done``), and how many
        replies it paid for that it could not save (the rerun pays them again; no others)."""
        lost = self.paid_unsaved
        return DiskFull(
            f"{self.full}: stopped sending{done}"
            + (f"; {lost} reply(ies) paid for could not be saved and will be asked again" if lost else "")
            + "; free some space and rerun the same command to resume"
        )

    async def complete(self, request: LLMRequest, client: LLMClient | None = None) -> LLMResult:
        """The result of one request sent with ``client`` (None: the session's own); never raises for
        a failed call (see its ``status``)."""
        return await (await self._channel(client or self.client)).complete(request)

    async def _channel(self, client: LLMClient) -> _Channel:
        channel = self._channels.get(id(client))
        if channel is None:
            async with self._opening:
                channel = self._channels.get(id(client))
                if channel is None:
                    sdk = None if client.mode == "replay" or client.estimate is not None else client._sdk()
                    opened = await self._exits.enter_async_context(sdk) if sdk is not None else None
                    channel = self._channels[id(client)] = _Channel(self, client, opened)
        return channel

    async def close(self) -> None:
        """Close every client's SDK client; merge each client's counts into its usage."""
        try:
            await self._exits.aclose()
        finally:
            seconds = time.perf_counter() - self._started
            self.client.last_usage = UsageSummary(seconds=seconds)
            self.client.interrupted = self.interrupted
            for channel in self._channels.values():
                channel.run.seconds = seconds
                channel.client.last_usage = channel.run
                channel.client.usage.merge(channel.run)
                channel.client.interrupted = self.interrupted


class _Channel:
    """One client's part of a :class:`LLMSession`: its settings, cache, SDK client and counts."""

    def __init__(self, session: LLMSession, client: LLMClient, sdk: openai.AsyncOpenAI | None) -> None:
        self.session = session
        self.client = client
        self.settings = client.settings
        self.cache = client.cache
        self.mode = client.mode
        self.run = UsageSummary()
        self.budget = client.budget
        self._sdk = sdk
        self._limit = asyncio.Semaphore(client.settings.max_concurrency)
        self._in_flight: dict[str, asyncio.Future[LLMResult]] = {}

    async def complete(self, request: LLMRequest) -> LLMResult:
        """The result of one request (never raises for a failed call: see its ``status``)."""
        p = self.client.prepare(request)
        self.run.items += 1
        if self.client.estimate is not None:
            return self._estimate(p, request)
        if self.cache is not None and self.mode != "refresh":
            row = self.cache.get(p.key)
            if row is not None:
                try:
                    result = self._hit(p, row)
                    self.run.cache_hits += 1
                    return result
                except ReplyError as err:
                    if self.mode == "replay":
                        error = f"the recorded reply no longer validates: {err}"
                        return self._failed(self._result(p, Status.FAILED, error, row.raw))
                    log.info("cached reply %s no longer validates (%s); asking again", p.key[:12], err)
        if self.mode == "replay" or self._sdk is None:
            return self._result(p, Status.REPLAY_MISS, f"replay: no recorded reply for key {p.key[:16]}…")
        if self.client.batch is not None:
            return await self.client.batch.answer(self, p)
        shared = self._in_flight.get(p.key)
        if shared is not None:
            result = replace(await asyncio.shield(shared), metadata=request.metadata)
            return self._failed(result) if result.status is Status.FAILED else result
        future: asyncio.Future[LLMResult] = asyncio.get_running_loop().create_future()
        self._in_flight[p.key] = future
        try:
            result = await self._claimed_call(p, request)
            future.set_result(result)
        finally:
            del self._in_flight[p.key]
            if not future.done():
                future.cancel()
        return self._failed(result) if result.status is Status.FAILED else result

    async def _claimed_call(self, p: _Prepared, request: LLMRequest) -> LLMResult:
        """Claim the key in the shared cache (normal mode: two processes sharing a cache never pay
        twice), then call the model within the budget."""
        reserved: float | None = None
        result: LLMResult | None = None
        try:
            try:
                row = await self._claim(p)
                if row is not None:  # another process was asking (its reply is ours), or a row that
                    try:  # did not validate above (then asked again)
                        result = self._hit(p, row)
                        self.run.cache_hits += 1
                        return result
                    except ReplyError:
                        result = None
                if self.budget is not None:
                    reserved = self.budget.reserve(request, self.settings)
                    if reserved is None:  # not sent: over the budget (not a failed call)
                        error = f"not sent: over the --max-cost budget: {self.budget.describe()}"
                        return self._result(p, Status.OVER_BUDGET, error)
                result = await self._call(p)
            except DiskFull as err:  # the run cannot save what it pays for: it stops (one line, at the end)
                self.session.disk_full(err)
                result = self._result(p, Status.STOPPED, f"not saved: {err}")
            except Exception as err:  # a bug must not sink the other items; it is logged
                log.exception("LLM request %s failed unexpectedly", p.key[:12])
                result = self._result(p, Status.FAILED, self._describe(err))
            return result
        finally:
            if self.cache is not None and self.mode == "normal":
                try:
                    self.cache.release(p.key)
                except DiskFull as err:  # the claim dies with this process
                    self.session.disk_full(err)
            if self.budget is not None and reserved is not None:
                self.budget.settle(reserved, result.usage if result is not None else None, self.settings)

    async def _claim(self, p: _Prepared) -> CachedReply | None:
        """Claim the request's key in the shared cache before paying for it (normal mode).

        While another process holds the key, wait: its validated reply (returned here) is a cache
        hit; if its call failed or it died, the claim becomes ours and None says "call the model"."""
        if self.cache is None or self.mode != "normal":
            return None
        while not self.cache.claim(p.key):
            await asyncio.sleep(CLAIM_POLL_SECONDS)
            row = self.cache.get(p.key)
            if row is not None:
                return row
        return self.cache.get(p.key)  # answered just before the claim was ours

    def _hit(self, p: _Prepared, row: CachedReply) -> LLMResult:
        value = check_value(row.value, p.schema, p.validator)
        return LLMResult(
            status=Status.OK,
            value=value,
            raw=row.raw,
            error=None,
            attempts=0,
            cached=True,
            model_reported=row.model_reported,
            usage=TokenUsage(row.prompt_tokens, row.completion_tokens),
            key=p.key,
            metadata=p.request.metadata,
            elapsed=row.elapsed,
        )

    def _result(
        self, p: _Prepared, status: Status, error: str, raw: str | None = None, attempts: int = 0,
        usage: TokenUsage | None = None, model_reported: str | None = None, elapsed: float = 0.0,
    ) -> LLMResult:  # fmt: skip
        """A result without a value; a failed call (:attr:`Status.FAILED`) is logged as a warning."""
        if status is Status.FAILED:
            # One line per distinct error: the command's summary counts and groups every failure, so 16
            # requests refused with the same 401 say it once here (the rest with -v).
            if error in self.client.failures_said:
                log.debug("LLM request %s failed: %s", p.key[:12], error)
            else:
                self.client.failures_said.add(error)
                log.warning("LLM request %s failed: %s (further failures with this error are counted in the "
                            "summary)", p.key[:12], error)  # fmt: skip
        return LLMResult(
            status=status,
            value=None,
            raw=raw,
            error=error,
            attempts=attempts,
            cached=False,
            model_reported=model_reported,
            usage=usage or TokenUsage(),
            key=p.key,
            metadata=p.request.metadata,
            elapsed=elapsed,
        )

    async def _send(self, p: _Prepared, messages: list[Message]) -> ChatCompletion:
        """One chat-completions call through the SDK (its retries, its reply types) with the body
        :func:`~builders.llm.body.chat_body` builds (the same bytes the SDK's ``create`` wrote, without
        its walk of every part and its second JSON encoding of every frame)."""
        assert self._sdk is not None
        body = chat_body(self.settings, messages, p.schema.response_format() if p.schema else None)
        return await self._sdk.post("/chat/completions", cast_to=ChatCompletion, content=bytes(body))

    async def _call(self, p: _Prepared) -> LLMResult:
        """Call, check, re-ask on a bad reply (bounded), cache the validated reply. Nothing is sent
        once the session is stopping (:attr:`Status.STOPPED`): the item is left for the next run."""
        run = self.run
        started = time.perf_counter()
        messages = list(p.request.messages)
        usage = TokenUsage()
        raw: str | None = None
        model_reported: str | None = None
        problem = ""
        attempts = 0
        cache = self.cache if self.mode == "normal" else None  # where a pending re-ask is kept
        pending = cache.get_reask(p.key) if cache is not None else None
        if pending is not None:  # a run stopped before this re-ask: the first reply is paid, ask on from it
            raw, problem, attempts, model_reported = (
                pending.raw,
                pending.problem,
                pending.attempts,
                pending.model_reported,
            )
            usage = TokenUsage(pending.prompt_tokens, pending.completion_tokens)
            messages = self.reask_messages(p, raw, problem)
        first = attempts + 1
        for attempts in range(first, self.settings.max_validation_retries + 2):
            if attempts > 1:
                run.reasks += 1
            try:
                async with self._limit:
                    if self.session.stopping.is_set():
                        return self._result(p, Status.STOPPED, f"not sent: the run is stopping: {self.session.stop_reason}",
                                            raw, attempts - 1, usage, model_reported,
                                            time.perf_counter() - started)  # fmt: skip
                    run.api_calls += 1
                    self.session.sending += 1
                    try:
                        completion = await self._send(p, messages)
                    finally:
                        self.session.sending -= 1
            except Exception as err:  # the SDK has already retried whatever is worth retrying
                return self._result(
                    p, Status.FAILED, self._describe(err), raw, attempts, usage, model_reported,
                    time.perf_counter() - started,
                )  # fmt: skip
            if not hasattr(completion, "choices"):  # a non-JSON body comes back as text
                return self._result(
                    p, Status.FAILED, f"malformed response from the server: {str(completion)[:200]!r}", raw,
                    attempts, usage, model_reported, time.perf_counter() - started,
                )  # fmt: skip
            checked = self._check(p, completion)
            usage += checked.usage
            run.prompt_tokens += checked.usage.prompt_tokens
            run.completion_tokens += checked.usage.completion_tokens
            model_reported = checked.model_reported or model_reported
            raw = checked.raw
            if checked.blocked is not None:  # final: asking the same again gets the same filter
                run.blocked += 1
                return replace(
                    self._result(p, Status.BLOCKED, f"{BLOCKED} ({checked.blocked})", raw, attempts, usage,
                                 model_reported, time.perf_counter() - started),
                    blocked=checked.blocked,
                )  # fmt: skip
            if checked.problem is not None:
                problem = checked.problem
                log.info("reply %s attempt %d unusable: %s", p.key[:12], attempts, problem)
                messages = self.reask_messages(p, raw, problem)
                if cache is not None and attempts <= self.settings.max_validation_retries:
                    self.session.paid_unsaved += 1  # paid; a full disk leaves it counted
                    cache.put_reask(PendingReask(p.key, raw or "", problem, attempts, usage.prompt_tokens,
                                                 usage.completion_tokens, model_reported))  # fmt: skip
                    self.session.paid_unsaved -= 1
                continue
            elapsed = time.perf_counter() - started
            self.store(p, checked, usage, model_reported, attempts, elapsed)
            return LLMResult(Status.OK, checked.value, raw, None, attempts, False, model_reported, usage, p.key,
                             p.request.metadata, elapsed)  # fmt: skip
        if cache is not None:
            cache.drop_reask(p.key)  # its re-asks ran out: a rerun asks afresh
        return self._result(
            p, Status.FAILED, f"no usable reply after {attempts} attempts: {problem}", raw, attempts, usage,
            model_reported, time.perf_counter() - started,
        )  # fmt: skip

    def _check(self, p: _Prepared, completion: Any) -> Checked:
        """What one completion says, checked as every reply is (the synchronous path's and a batch
        output line's alike): its usage, the model it reports, a safety block, or its validated value
        or the problem that has it re-asked."""
        usage = TokenUsage()
        if completion.usage is not None:
            usage = TokenUsage(completion.usage.prompt_tokens or 0, completion.usage.completion_tokens or 0)
        choice = completion.choices[0] if completion.choices else None
        raw = choice.message.content if choice is not None and choice.message is not None else None
        checked = Checked(usage, completion.model, raw)
        blocked = blocked_signal(completion)
        if blocked is not None:
            return replace(checked, blocked=blocked)
        try:
            if choice is None:
                raise ReplyError("the server returned no choices")
            if choice.finish_reason == "length":
                raise ReplyError(
                    "the reply was cut off at the length limit (finish_reason=length); reply again, "
                    "more concisely, complete"
                )
            return replace(checked, value=validate_reply(raw, p.schema, p.validator))
        except ReplyError as err:
            return replace(checked, problem=str(err))

    def take_batch_line(
        self, p: _Prepared, line: Mapping[str, Any], attempts: int
    ) -> LLMResult | tuple[str | None, str]:
        """A kept batch output line for ``p``, checked exactly as a synchronous reply: its validated
        reply cached (an OK result) or a block (final); else ``(raw reply, problem)`` to ask again."""
        where = f"batch {line.get('batch')}"
        response, error = line.get("response"), line.get("error")
        if error or not isinstance(response, Mapping) or response.get("status_code") != 200:
            status = response.get("status_code") if isinstance(response, Mapping) else None
            message = (error or {}).get("message") if isinstance(error, Mapping) else None
            body = response.get("body") if isinstance(response, Mapping) else None
            if message is None and isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
                message = body["error"].get("message")
            return None, redact_text(f"{where}: HTTP {status}: {message or error or 'no reply'}")[:500]
        body = response.get("body")
        size = len(json.dumps(body))
        if size > self.settings.max_reply_mb * 2**20:
            return None, f"{where}: reply too large ({size:,} bytes)"
        if not isinstance(body, Mapping) or not isinstance(body.get("choices"), list):
            return None, f"{where}: malformed response body: {str(body)[:200]!r}"
        from openai.types.chat import ChatCompletion

        checked = self._check(p, ChatCompletion.construct(**body))
        self.run.prompt_tokens += checked.usage.prompt_tokens
        self.run.completion_tokens += checked.usage.completion_tokens
        if checked.blocked is not None:
            self.run.blocked += 1
            return replace(
                self._result(p, Status.BLOCKED, f"{BLOCKED} ({checked.blocked})", checked.raw, attempts,
                             checked.usage, checked.model_reported),
                blocked=checked.blocked,
            )  # fmt: skip
        if checked.problem is not None:
            return checked.raw, f"{where}: {checked.problem}"
        if self.budget is not None:
            self.budget.settle(0.0, checked.usage, self.settings)
        self.store(p, checked, checked.usage, checked.model_reported, attempts, 0.0)
        if self.client.batch is not None:
            self.client.batch.note_applied(str(line.get("batch")))
        return LLMResult(Status.OK, checked.value, checked.raw, None, attempts, False, checked.model_reported,
                         checked.usage, p.key, p.request.metadata)  # fmt: skip

    def reask_messages(self, p: _Prepared, raw: str | None, problem: str) -> list[Message]:
        """The conversation that re-asks after an unusable reply: the request, that reply, the problem."""
        return [*p.request.messages, assistant_message(raw or ""), user_message(self._reask(p, problem))]

    def store(
        self, p: _Prepared, checked: Checked, usage: TokenUsage, model_reported: str | None, attempts: int,
        elapsed: float,
    ) -> None:  # fmt: skip
        """Cache a validated reply under the key of the original request."""
        if self.cache is None:
            return
        self.session.paid_unsaved += 1  # until the row is in: a full disk leaves it counted
        self.cache.put(
            CachedReply(
                key=p.key,
                model=self.settings.model,
                model_reported=model_reported,
                prompt_name=(p.request.prompt_ref or (None, None))[0],
                prompt_version=(p.request.prompt_ref or (None, None))[1],
                raw=checked.raw or "",
                value=p.schema.to_json(checked.value) if p.schema else checked.value,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                attempts=attempts,
                created=utc_now(),
                elapsed=round(elapsed, 3),
            )
        )
        self.session.paid_unsaved -= 1

    @staticmethod
    def _reask(p: _Prepared, problem: str) -> str:
        wanted = (
            "Reply with only a JSON value that matches the requested schema."
            if p.schema is not None
            else "Reply again to the original request."
        )
        return f"Your previous reply could not be used: {problem}\n{wanted}"

    def _describe(self, err: BaseException) -> str:
        """A one-line reason for a failed call, with the API key scrubbed out whatever the server echoed."""
        if isinstance(err, openai.APITimeoutError):
            text = (
                f"timed out after {self.settings.timeout:g} s (and {self.settings.max_retries} SDK retries)"
            )
            if (
                not self.client.timeout_noted
            ):  # said once, when it matters: not on every run with the defaults
                self.client.timeout_noted = True
                log.warning("the endpoint is not answering in time; %s", self.settings.worst_case_note())
        elif isinstance(err, openai.APIStatusError):
            text = f"HTTP {err.status_code} from the server ({type(err).__name__}): {err.message}"
        elif isinstance(err, openai.APIConnectionError):
            text = f"cannot reach {self.settings.base_url} ({type(err).__name__}: {err.__cause__ or err})"
        elif isinstance(err, ReplyTooLarge):
            text = f"reply too large: {err}"
        elif isinstance(err, json.JSONDecodeError):
            text = f"malformed response body from the server: {err}"
        else:
            text = f"{type(err).__name__}: {err}"
        key = os.environ.get(self.settings.api_key_env or "") if self.settings.api_key_env else None
        if key:
            text = text.replace(key, "[redacted]")
        return redact_text(text)[:2000]

    def _estimate(self, p: _Prepared, request: LLMRequest) -> LLMResult:
        estimate = self.client.estimate
        assert estimate is not None
        lookup = self.cache is not None and self.mode != "refresh" and not has_placeholders(request.messages)
        if lookup and self.cache is not None and self.cache.get(p.key) is not None:
            estimate.cached += 1
        else:
            estimate.add(estimate_request(request, self.settings.model, self.settings.max_tokens))
        return self._result(p, Status.ESTIMATED, "estimated (--estimate): nothing sent")

    def _failed(self, result: LLMResult) -> LLMResult:
        self.run.failures += 1
        return result


@contextmanager
def _stopped_by_signals(session: LLMSession) -> Iterator[None]:
    """SIGINT and SIGTERM stop ``session`` gently, a second one at once (:meth:`LLMClient.session`).
    Outside the main thread, or where the loop cannot take signal handlers, nothing changes."""
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if session.interrupted is None:
            session.interrupted = signum
            session.stop(f"interrupted by {signal.Signals(signum).name}")
            print(
                f"\n{signal.Signals(signum).name}: stopping; waiting for the {session.sending} request(s) already "
                "sent (paid for) so their replies are kept; signal again to stop now and lose them",
                file=sys.stderr, flush=True,
            )  # fmt: skip
        elif session._task is not None:
            session._task.cancel()

    installed: dict[int, Any] = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous = signal.getsignal(signum)
            try:
                loop.add_signal_handler(signum, on_signal, signum)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no support
                break
            installed[signum] = previous
        yield
    finally:
        for number, previous in installed.items():
            loop.remove_signal_handler(number)
            if previous is not None:
                signal.signal(number, previous)  # e.g. asyncio.run's own SIGINT handler
