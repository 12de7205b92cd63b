"""The on-disk reply cache: SQLite, content-addressed, safe for concurrent writers.

A key is the sha256 of a canonical JSON of everything that can change a reply (base URL, model,
messages with image bytes replaced by their sha256, the schema sent, sampling settings, the
prompt's name and version). The API key is not part of it, and nothing secret is stored: a row
holds the reply (raw text and parsed value), the model id the server reported, token usage and
timings. Only validated replies are written (the client never caches a failure).

Every row carries a sha256 of its own content (:func:`reply_digest`: the key, the reply and all its
metadata), checked on every read. A row that fails it - a flipped bit, an edited letter, a row moved
under another key, text that is no longer UTF-8 - is never used: it is logged (naming the cache and
the key), counted in :attr:`ReplyCache.damaged` and reads as missing, so the client asks again (normal
mode) or reports it (replay mode). A file SQLite itself cannot read is :class:`CacheDamaged`, one
line naming it. A row without a digest is damaged too: there is no older format to accept it from.

Recorded replies travel as JSONL (:func:`export_replies` / :func:`import_replies`): one row per
reply, sorted by key, so a release can ship the replies that built it and be rebuilt offline in
replay mode (:func:`load_replies`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from builders.files.jsonio import dumps_line, iter_jsonl, write_file_atomic
from builders.files.space import writing
from builders.llm.messages import MEDIA_PARTS, data_url_bytes

log = logging.getLogger(__name__)

KEY_VERSION = 1  # bump when the key recipe changes, so old rows stop matching instead of lying

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    model_reported TEXT,
    prompt_name TEXT,
    prompt_version TEXT,
    raw TEXT NOT NULL,
    value TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    created TEXT NOT NULL,
    elapsed REAL NOT NULL,
    digest TEXT
)
"""
# Who is asking for a key right now: two processes sharing one cache (two work folders, one
# --llm-cache) must not both pay for the same request. A claim names its process; one whose process
# is gone (killed) or that is older than CLAIM_MAX_AGE is taken over.
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    claimed REAL NOT NULL
)
"""
CLAIM_MAX_AGE = 6 * 3600.0
# A reply paid for that did not validate, and why, while its re-ask is pending: a run stopped before
# the re-ask (a signal, a full disk, a kill) leaves it, so the rerun sends the re-ask, not the first
# request again. Dropped once the key has a validated reply, or when its re-asks ran out.
_REASKS = """
CREATE TABLE IF NOT EXISTS reasks (
    key TEXT PRIMARY KEY,
    raw TEXT NOT NULL,
    problem TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    model_reported TEXT,
    digest TEXT NOT NULL
)
"""
_FIELDS = (
    "key, model, model_reported, prompt_name, prompt_version, raw, value, "
    "prompt_tokens, completion_tokens, attempts, created, elapsed"
)
_COLUMNS = _FIELDS + ", digest"


# What SQLite says of a file whose pages or schema no longer read as written.
_DAMAGE = ("malformed", "not a database", "corrupt", "no such column", "no such table", "unrecognized token",
           "syntax error")  # fmt: skip


class CacheDamaged(RuntimeError):
    """SQLite cannot read a reply cache file (its pages are damaged): one line naming the file."""


class DamagedRow(ValueError):
    """A cached row that fails its content hash, or no longer decodes (see the module doc)."""


@dataclass(frozen=True)
class CachedReply:
    """One validated reply as stored (and as exported, one JSONL row each)."""

    key: str
    model: str  # the model id requested
    model_reported: str | None  # the model id the server said it used
    prompt_name: str | None
    prompt_version: str | None
    raw: str  # the reply text exactly as received
    value: Any  # the parsed, validated value in JSON form (the text itself for text replies)
    prompt_tokens: int
    completion_tokens: int
    attempts: int  # model calls it took (1 + re-asks)
    created: str  # UTC, ISO 8601
    elapsed: float  # seconds from first call to validated reply

    def to_json(self) -> str:
        """One JSONL line (no newline), as :func:`export_replies` writes it: the fields and their
        ``sha256`` (:func:`reply_digest`)."""
        return dumps_line({**asdict(self), "sha256": reply_digest(self)}).removesuffix("\n")


@dataclass(frozen=True)
class PendingReask:
    """A reply paid for that did not validate (``raw``), why (``problem``), and what it cost so far:
    the state of a request whose re-ask has not been answered yet."""

    key: str
    raw: str
    problem: str
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    model_reported: str | None

    def digest(self) -> str:
        return hashlib.sha256(_canonical(list(asdict(self).values())).encode("utf-8")).hexdigest()


def reply_digest(reply: CachedReply) -> str:
    """sha256 of everything a row holds (canonical JSON of the fields in order, the value included)."""
    fields = [getattr(reply, name) for name in CachedReply.__dataclass_fields__]
    fields[-1] = float(fields[-1])  # elapsed: 1 and 1.0 are one value, in SQLite as in JSON
    return hashlib.sha256(_canonical(fields).encode("utf-8")).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _hash_images(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Messages with each data URL (image or video) replaced by the sha256 of its bytes (the key must
    not depend on base64 line wrapping, and must not carry megabytes of pixels)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                kind = part.get("type")
                if kind in MEDIA_PARTS:
                    url = part[kind]["url"]
                    digest = getattr(url, "sha256", None)  # an ImageURL: hashed once, before base64
                    if digest is None:
                        data = data_url_bytes(url)
                        digest = hashlib.sha256(data).hexdigest() if data is not None else None
                    ref = f"sha256:{digest}" if digest is not None else url
                    parts.append({**part, kind: {**part[kind], "url": ref}})
                else:
                    parts.append(part)
            message = {**message, "content": parts}
        out.append(message)
    return out


def cache_key(
    *,
    base_url: str,
    model: str,
    messages: Sequence[Mapping[str, Any]],
    schema: Mapping[str, Any] | None,
    temperature: float | None,
    seed: int | None,
    max_tokens: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
    prompt: tuple[str, str] | None = None,
) -> str:
    """sha256 (hex) of everything that can change a reply. Never include credentials here."""
    payload = {
        "v": KEY_VERSION,
        "base_url": base_url.rstrip("/"),
        "model": model,
        "messages": _hash_images(messages),
        "schema": schema,
        "temperature": temperature,
        "seed": seed,
        "max_tokens": max_tokens,
        "extra_body": extra_body,
        "prompt": list(prompt) if prompt else None,
    }
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _NamedConnection(sqlite3.Connection):
    """A connection whose errors name its file: SQLite's own ("disk I/O error", "file is not a
    database", "database or disk is full") do not say which file."""

    path = ""

    def _named(self, err: sqlite3.Error) -> sqlite3.Error:
        named = type(err)(f"reply cache {self.path}: {err}")
        named.__cause__ = err
        return named

    def execute(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().execute(*args)
        except sqlite3.Error as err:
            raise self._named(err) from None
        except UnicodeDecodeError:  # SQLite quoting a damaged schema: its message is not even text
            raise sqlite3.DatabaseError(f"reply cache {self.path}: malformed schema (unreadable)") from None

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().executemany(*args)
        except sqlite3.Error as err:
            raise self._named(err) from None


class ReplyCache:
    """A SQLite table of :class:`CachedReply` rows keyed by :func:`cache_key`.

    WAL journaling and a busy timeout let several processes (parallel pipeline runs) read and
    write one file at once; each :meth:`put` is its own short transaction, so a crash loses at most
    the reply in flight. ``path=":memory:"`` gives a private in-memory cache.
    """

    def __init__(self, path: str | Path, busy_timeout: float = 60.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False,
                factory=_NamedConnection,
            )  # fmt: skip
        except sqlite3.Error as err:
            raise type(err)(f"reply cache {self.path}: {err}") from None
        self._db.path = self.path
        # Text comes back as bytes and is decoded row by row: a flipped bit that breaks UTF-8 damages
        # one row, instead of failing the query that reads it and every other row with it.
        self._db.text_factory = bytes
        self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        #: key -> why, for every row found damaged since this cache was opened (module doc).
        self.damaged: dict[str, str] = {}
        self.repaired = 0  # rows a damaged index or key hid, found again (:meth:`_recover`)
        self._scan: tuple[set[str], dict[int, Sequence[Any]]] | None = None
        with self._readable():
            self._setup(busy_timeout)

    def _setup(self, busy_timeout: float) -> None:
        # Switching to WAL and creating the table take locks that SQLite may refuse at once (no busy
        # handler) while another process opens the same new file: retry until the timeout.
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                if self.path != ":memory:":
                    self._db.execute("PRAGMA journal_mode = WAL")
                    self._db.execute("PRAGMA synchronous = NORMAL")
                self._db.execute(_SCHEMA)
                self._db.execute(_CLAIMS)
                self._db.execute(_REASKS)
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    @contextmanager
    def _readable(self) -> Iterator[None]:
        """SQLite's "file is not a database" / "malformed" as one :class:`CacheDamaged` line."""
        try:
            yield
        except sqlite3.DatabaseError as err:
            if isinstance(err, sqlite3.OperationalError) and not any(m in str(err) for m in _DAMAGE):
                raise  # locked, busy, disk full, I/O: not the file's content
            # One line (SQLite may quote a damaged schema), the path said once.
            said = " ".join(str(err).removeprefix(f"reply cache {self.path}: ").split())[:160]
            raise CacheDamaged(
                f"reply cache {self.path} is damaged and cannot be read (SQLite: {said}); move it aside and "
                "rerun (its replies will be asked again), or restore it from a backup"
            ) from None

    def _checked(self, rows: Iterable[Sequence[Any]]) -> Iterator[CachedReply]:
        """The rows that pass their content hash; each other one is logged and kept in :attr:`damaged`."""
        for row in rows:
            try:
                yield _from_row(row)
            except DamagedRow as err:
                key = _text(row[0], errors="replace")
                if key not in self.damaged:
                    log.warning(
                        "reply cache %s: the row of key %s is damaged (%s): not used",
                        self.path, key[:16], err,
                    )  # fmt: skip
                self.damaged[key] = str(err)

    def __repr__(self) -> str:
        return f"ReplyCache({self.path!r})"

    def __enter__(self) -> ReplyCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __len__(self) -> int:
        with self._lock, self._readable():
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def get(self, key: str) -> CachedReply | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedReply]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, CachedReply] = {}
        with self._lock, self._readable():
            for start in range(0, len(keys), 500):  # stay under SQLite's bound-parameter limit
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT {_COLUMNS} FROM replies WHERE key IN ({marks})", chunk)
                for reply in self._checked(rows.fetchall()):
                    if reply.key in chunk:  # a row whose key changed is damaged: its digest says so
                        found[reply.key] = reply
            missing = [k for k in keys if k not in found and k not in self.damaged]
            if missing and self.path != ":memory:":
                found.update(self._recover(missing))
        return found

    def _recover(self, missing: list[str]) -> dict[str, CachedReply]:
        """Rows of ``missing`` keys that a damaged index or a damaged key hides, found before anything
        is paid for again (called with the lock held).

        On the first miss, the table is read once without its index: every row is checked, so damage
        anywhere is logged now. A key the table holds but the index cannot find means a damaged index:
        it is rebuilt (``REINDEX``). A row whose key was damaged fails its hash; the hash, which covers
        the key, says whether it is the row of a missing key: then it is stored under that key again."""
        if self._scan is None:
            keys, orphans = set(), {}
            rows = self._db.execute(f"SELECT rowid, {_COLUMNS} FROM replies NOT INDEXED").fetchall()
            for rowid, *row in rows:
                if list(self._checked([row])):
                    keys.add(_text(row[0]))
                else:
                    orphans[rowid] = row
            self._scan = (keys, orphans)
        keys, orphans = self._scan
        recovered: dict[str, CachedReply] = {}
        hidden = [k for k in missing if k in keys]
        if hidden:
            log.warning(
                "reply cache %s: its key index is damaged (%d stored replies could not be found); rebuilding it",
                self.path, len(hidden),
            )  # fmt: skip
            self._db.execute("REINDEX replies")
            marks = ",".join("?" * len(hidden))
            found = self._db.execute(f"SELECT {_COLUMNS} FROM replies WHERE key IN ({marks})", hidden)
            recovered.update((r.key, r) for r in self._checked(found.fetchall()))
            self.repaired += len(hidden)
        for key in (k for k in missing if k not in recovered):
            for rowid, row in list(orphans.items()):
                try:
                    reply = _from_row([key.encode(), *row[1:]])
                except DamagedRow:
                    continue
                log.warning(
                    "reply cache %s: the reply of key %s was stored under a damaged key; restored",
                    self.path, key[:16],
                )  # fmt: skip
                self._db.execute("UPDATE replies SET key = ? WHERE rowid = ?", (key, rowid))
                del orphans[rowid]
                keys.add(key)
                recovered[key] = reply
                self.repaired += 1
                break
        return recovered

    def put(self, reply: CachedReply) -> None:
        """Insert or replace one row (refresh mode overwrites)."""
        self.put_many([reply])

    def put_many(self, replies: Iterable[CachedReply]) -> None:
        """Insert or replace rows; a key's pending re-ask (:meth:`put_reask`) goes with it."""
        rows = [_to_row(r) for r in replies]
        with self._lock, self._readable(), writing(f"the reply cache {self.path}"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    f"INSERT OR REPLACE INTO replies ({_COLUMNS}) VALUES ({','.join('?' * 13)})", rows
                )
                self._db.executemany("DELETE FROM reasks WHERE key = ?", [(row[0],) for row in rows])
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def put_reask(self, reask: PendingReask) -> None:
        """Keep a paid, unusable reply and its problem until its re-ask is answered (see ``_REASKS``)."""
        row = (*asdict(reask).values(), reask.digest())
        with self._lock, self._readable(), writing(f"the reply cache {self.path}"):
            self._db.execute(f"INSERT OR REPLACE INTO reasks VALUES ({','.join('?' * 8)})", row)

    def get_reask(self, key: str) -> PendingReask | None:
        """The key's pending re-ask, or None; a damaged row is logged and reads as none."""
        with self._lock, self._readable():
            row = self._db.execute("SELECT * FROM reasks WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            reask = PendingReask(*(_text(v) for v in row[:7]))
            if _text(row[7]) == reask.digest():
                return reask
        except (UnicodeDecodeError, TypeError):
            pass
        log.warning("reply cache %s: the pending re-ask of key %s is damaged: not used", self.path, key[:16])
        return None

    def drop_reask(self, key: str) -> None:
        """Forget the key's pending re-ask (its re-asks ran out: the next run starts afresh)."""
        with self._lock, self._readable(), writing(f"the reply cache {self.path}"):
            self._db.execute("DELETE FROM reasks WHERE key = ?", (key,))

    def claim(self, key: str) -> bool:
        """Claim ``key`` for this process before calling the model: True when it is ours now, False
        while another live process holds it (wait for its reply with :meth:`get`, then try again)."""
        me = (os.getpid(), socket.gethostname())
        with self._lock, self._readable(), writing(f"the reply cache {self.path}"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT pid, host, claimed FROM claims WHERE key = ?", (key,)
                ).fetchone()
                if (
                    row is not None
                    and (row[0], _text(row[1])) != me
                    and _claim_live(row[0], _text(row[1]), row[2])
                ):
                    self._db.execute("COMMIT")
                    return False
                self._db.execute(
                    "INSERT OR REPLACE INTO claims (key, pid, host, claimed) VALUES (?, ?, ?, ?)",
                    (key, me[0], me[1], time.time()),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return True

    def release(self, key: str) -> None:
        """Drop this process's claim on ``key`` (after its reply was stored, or its call failed)."""
        with self._lock, self._readable(), writing(f"the reply cache {self.path}"):
            self._db.execute(
                "DELETE FROM claims WHERE key = ? AND pid = ? AND host = ?",
                (key, os.getpid(), socket.gethostname()),
            )

    def __iter__(self) -> Iterator[CachedReply]:
        """All sound rows in key order (deterministic); damaged ones are left out (:attr:`damaged`)."""
        with self._lock, self._readable():
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM replies ORDER BY key").fetchall()
        return iter(list(self._checked(rows)))

    def stats(self) -> dict[str, Any]:
        """Row count, tokens, and counts per reported model and per prompt name@version."""
        with self._lock, self._readable():
            db = self._db
            rows, tokens_in, tokens_out = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) "
                "FROM replies"
            ).fetchone()
            models = {
                _text(name, errors="replace"): count
                for name, count in db.execute(
                    "SELECT COALESCE(model_reported, model), COUNT(*) FROM replies GROUP BY 1 ORDER BY 1"
                )
            }
            prompts = {
                _text(name, errors="replace"): count
                for name, count in db.execute(
                    "SELECT COALESCE(prompt_name || '@' || prompt_version, '(none)'), COUNT(*) "
                    "FROM replies GROUP BY 1 ORDER BY 1"
                )
            }
        return {
            "path": self.path,
            "replies": rows,
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "models": models,
            "prompts": prompts,
        }


def _claim_live(pid: int, host: str, claimed: float) -> bool:
    """Whether a claim's process may still be calling: alive on this host (another host: not too old)."""
    if time.time() - claimed > CLAIM_MAX_AGE:
        return False
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True


def _text(value: Any, errors: str = "strict") -> Any:
    return value.decode("utf-8", errors) if isinstance(value, bytes) else value


def _to_row(r: CachedReply) -> tuple[Any, ...]:
    return (
        r.key,
        r.model,
        r.model_reported,
        r.prompt_name,
        r.prompt_version,
        r.raw,
        json.dumps(r.value, ensure_ascii=False, sort_keys=True),
        int(r.prompt_tokens),
        int(r.completion_tokens),
        int(r.attempts),
        r.created,
        float(r.elapsed),
        reply_digest(r),
    )


def _from_row(row: Sequence[Any], *, check: bool = True) -> CachedReply:
    """A stored row (text as bytes) as a :class:`CachedReply`; :class:`DamagedRow` when it no longer
    decodes or (``check``) fails its digest."""
    try:
        values = [_text(v) for v in row]
        values[6] = json.loads(values[6])
        reply = CachedReply(*values[:12])
    except (UnicodeDecodeError, ValueError, TypeError) as err:
        raise DamagedRow(f"unreadable: {type(err).__name__}") from None
    if check and values[12] != reply_digest(reply):
        raise DamagedRow("content hash mismatch" if values[12] else "no content hash")
    return reply


def export_replies(cache_path: str | Path, jsonl_path: str | Path, *, stable: bool = False) -> int:
    """Write every cached reply to JSONL, one row each, sorted by key; returns the row count.

    Written atomically (temp file, then rename). Rows hold replies and metadata only: no
    credentials, no request messages. ``stable=True`` blanks the creation time and duration, so that
    recording the same replies again gives the same bytes (for recordings kept in version control).
    """
    cache_path, jsonl_path = Path(cache_path), Path(jsonl_path)
    if not cache_path.is_file():
        raise FileNotFoundError(f"no reply cache at {cache_path}")
    count = 0

    def write(tmp: Path) -> None:
        nonlocal count
        with ReplyCache(cache_path) as cache, tmp.open("w", encoding="utf-8") as out:
            for reply in cache:
                if stable:
                    reply = replace(reply, created="", elapsed=0.0)
                out.write(reply.to_json() + "\n")
                count += 1
            damaged = dict(cache.damaged)
        if damaged:
            raise CacheDamaged(
                f"reply cache {cache_path}: {len(damaged)} damaged row(s) (first: key {next(iter(damaged))[:16]}…, "
                f"{next(iter(damaged.values()))}); nothing written: rerun what made them to ask again, then export"
            )

    write_file_atomic(jsonl_path, write)
    return count


def read_replies(jsonl_path: str | Path) -> list[CachedReply]:
    """Parse a recorded-replies JSONL file; a bad row is an error naming the file and line, and so is
    one whose ``sha256`` does not match its content (rows recorded before the hash have none)."""
    jsonl_path = Path(jsonl_path)
    if not jsonl_path.is_file():
        raise FileNotFoundError(f"no recorded replies at {jsonl_path}")
    fields = set(CachedReply.__dataclass_fields__)
    replies = []
    for number, row in iter_jsonl(jsonl_path):
        try:
            if not isinstance(row, dict):
                raise ValueError("a row must be a JSON object")
            digest = row.pop("sha256", None)
            missing, unknown = fields - row.keys(), row.keys() - fields
            if missing or unknown:
                raise ValueError(f"missing fields {sorted(missing)}, unknown fields {sorted(unknown)}")
            reply = CachedReply(**row)
            if digest is not None and digest != reply_digest(reply):
                raise ValueError(f"key {reply.key[:16]}…: its content does not match its sha256 (damaged)")
            replies.append(reply)
        except (ValueError, TypeError) as err:
            raise ValueError(f"{jsonl_path}, line {number}: not a recorded reply: {err}") from None
    return replies


def import_replies(jsonl_path: str | Path, cache_path: str | Path) -> int:
    """Add (or replace) the replies of a JSONL file in a cache; returns the row count."""
    replies = read_replies(jsonl_path)
    with ReplyCache(cache_path) as cache:
        cache.put_many(replies)
    return len(replies)


def load_replies(jsonl_path: str | Path) -> ReplyCache:
    """An in-memory cache holding a JSONL file's replies (the source for replay mode)."""
    cache = ReplyCache(":memory:")
    cache.put_many(read_replies(jsonl_path))
    return cache
