"""A small real Hugging Face Hub on 127.0.0.1 for push tests (no mocks, no network).

It answers, over real sockets, the endpoints ``huggingface_hub.HfApi`` (2.x) calls to publish a
dataset, with the Hub's status codes and error headers, so the library's own error handling runs:

* ``GET  /api/datasets/{repo}`` (and ``/revision/{rev}``) - repo info; 404 ``RepoNotFound``
* ``GET  /api/datasets/{repo}/refs`` - branches, tags (and pull requests with ``include_prs``)
* ``POST /api/repos/create`` - a new repo (409 if it exists)
* ``POST /api/validate-yaml`` - the card's YAML must parse to a mapping
* ``POST /api/datasets/{repo}/preupload/{rev}`` - every file is ``regular`` (base64 in the commit
  body), so no LFS/Xet storage is needed
* ``POST /api/datasets/{repo}/commit/{rev}`` - an NDJSON commit onto a branch, or a new pull
  request (``?create_pr=1``, ref ``refs/pr/N``); files are stored by content
* ``POST /api/datasets/{repo}/tag/{rev}`` - a tag at a branch, PR ref or commit (409 if it exists)
* ``GET  /api/datasets/{repo}/tree/{rev}`` - the files at a revision (one page, recursive)
* ``GET|HEAD /datasets/{repo}/resolve/{rev}/{path}`` - a file's bytes, with the ``X-Repo-Commit`` and
  ``ETag`` headers ``hf_hub_download`` reads (so ``snapshot_download`` fetches a revision)
* the same repo-info, refs, preupload and commit endpoints under ``/api/models/{repo}`` for model
  repos (``model_repos=``), where a results push opens its pull request
* ``GET  /api/datasets/{repo}/leaderboard`` - the benchmark's leaderboard, computed the way the Hub
  documents it: every model repo's ``.eval_results/*.yaml`` entries naming this dataset, at ``main``
  and in open pull requests (``pullRequest`` set), ranked by value per task. 404 if the dataset has
  no ``eval.yaml`` (no leaderboard). Each row also carries ``taskId`` (the Hub's own reply may not).

Auth: ``Authorization: Bearer <token>``. ``tokens`` maps each valid token to ``"write"`` or
``"read"``; an unknown token gets 401 "Invalid credentials in Authorization header" on every call;
a read token gets 403 on writes; no token may read public repos only. Repos are public unless
created private. ``fail`` makes an endpoint kind (``"commit"``, ``"tag"``, ``"preupload"``) answer
with a status; ``lose_reply = {"commit"}`` stores the commit and then closes the connection without
answering (a reply lost on the way): both test what a push reports after a partial failure.

A commit naming its parent (``parentCommit``, huggingface_hub's ``parent_commit``) onto a branch
that has moved since is refused with the Hub's 412 "A commit has happened since". Faults and hooks
for the tests: ``damage(path, data) -> data`` changes a file's bytes as a commit stores them (storage
or transfer damage the pusher must notice); ``commit_barrier`` (a ``threading.Barrier``) holds each
commit request until that many have arrived, so that concurrent pushes really overlap; ``after_write
(kind)`` is called once a ``"commit"`` or ``"tag"`` is stored, before the reply is sent (a test may kill
the client there: an interruption at an exact point).
``requests`` records (method, path, query, status; 0 = no reply) of every call, never a header:
the token is not kept.

    with HubServer(tokens={"hf_write": "write"}, repos=["org/data"]) as hub:
        plan = plan_push(folder, "org/data", endpoint=hub.url)   # or HF_ENDPOINT, set by the test
        ...
        hub.files("org/data")            # {path: bytes} at main
        hub.files("org/data", "v1.1")    # at a tag, a PR ref or a commit oid
        hub.files("org/model", "refs/pr/1", repo_type="model")
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

MAIN = "main"
INVALID_CREDENTIALS = "Invalid credentials in Authorization header"


@dataclass
class Commit:
    oid: str
    parent: str | None
    message: str
    files: dict[str, bytes]


@dataclass
class Repo:
    repo_id: str
    private: bool = False
    repo_type: str = "dataset"
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    pull_requests: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.branches:  # the Hub makes an initial commit with a .gitattributes
            initial = _make_commit(None, "initial commit", {".gitattributes": b"*.parquet filter=lfs\n"})
            self.commits[initial.oid] = initial
            self.branches[MAIN] = initial.oid

    def resolve(self, revision: str) -> str | None:
        """Commit oid of a branch, tag, ``refs/pr/N`` or oid."""
        if revision in self.branches:
            return self.branches[revision]
        if revision in self.tags:
            return self.tags[revision]
        if revision.startswith("refs/pr/") and revision[8:].isdigit():
            return self.pull_requests.get(int(revision[8:]))
        return revision if revision in self.commits else None


def _make_commit(parent: Commit | None, message: str, changes: dict[str, bytes | None]) -> Commit:
    files = dict(parent.files) if parent else {}
    for path, content in changes.items():
        if content is None:
            files.pop(path, None)
        else:
            files[path] = content
    digest = hashlib.sha1()
    digest.update((parent.oid if parent else "").encode() + message.encode())
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + hashlib.sha1(files[path]).digest())
    return Commit(digest.hexdigest(), parent.oid if parent else None, message, files)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    status: int


class _LoseReply(Exception):
    """The request was carried out; close the connection instead of answering."""


class _HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code

    def headers(self) -> dict[str, str]:
        """The Hub's error headers, which huggingface_hub turns into its own exceptions."""
        return {"X-Error-Message": self.message, **({"X-Error-Code": self.code} if self.code else {})}


class HubServer:
    """See the module docstring. Start with ``with HubServer(...) as hub`` (random free port)."""

    def __init__(
        self,
        *,
        tokens: dict[str, str] | None = None,
        repos: list[str] | tuple[str, ...] = (),
        private_repos: list[str] | tuple[str, ...] = (),
        model_repos: list[str] | tuple[str, ...] = (),
    ):
        self.tokens = dict(tokens or {})
        self.repos: dict[str, Repo] = {r: Repo(r) for r in repos}
        self.repos.update({r: Repo(r, private=True) for r in private_repos})
        self.model_repos: dict[str, Repo] = {r: Repo(r, repo_type="model") for r in model_repos}
        self.fail: dict[str, int] = {}
        self.lose_reply: set[str] = set()
        self.damage: Callable[[str, bytes], bytes] | None = None
        self.commit_barrier: threading.Barrier | None = None
        self.after_write: Callable[[str], None] | None = None
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------------------
    def __enter__(self) -> HubServer:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                hub._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                hub._handle(self, "POST")

            def do_HEAD(self) -> None:  # noqa: N802
                hub._handle(self, "HEAD")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server with `with HubServer() as hub`"
        host, port = self._server.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

    # --- inspection ----------------------------------------------------------------------------------
    def files(self, repo_id: str, revision: str = MAIN, repo_type: str = "dataset") -> dict[str, bytes]:
        with self._lock:
            repo = (self.model_repos if repo_type == "model" else self.repos)[repo_id]
            oid = repo.resolve(revision)
            if oid is None:
                raise KeyError(f"{repo_id}: no revision {revision!r}")
            return dict(repo.commits[oid].files)

    def writes(self) -> list[RecordedRequest]:
        """Requests that changed (or tried to change) state."""
        kinds = ("/commit/", "/tag/", "/repos/create", "/preupload/")
        return [r for r in self.requests if r.method == "POST" and any(k in r.path for k in kinds)]

    # --- request handling ----------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        path, query = unquote(parts.path), parse_qs(parts.query)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        status, payload, headers = 200, {}, {}
        try:
            if path.startswith("/datasets/") and "/resolve/" in path and method in ("GET", "HEAD"):
                self._send_file(handler, method, path, self._auth(handler))
                return
            if self.commit_barrier is not None and method == "POST" and "/commit/" in path:
                self.commit_barrier.wait()  # outside the lock: the other commits must get here too
            payload = self._route(method, path, query, body, self._auth(handler))
        except _LoseReply:
            with self._lock:
                self.requests.append(RecordedRequest(method, path, query, 0))
            handler.close_connection = True
            return
        except _HubError as err:
            status, payload, headers = err.status, {"error": err.message}, err.headers()
        headers["Content-Type"] = "application/json"
        self._reply(handler, method, path, query, status, json.dumps(payload).encode(), headers)

    def _reply(
        self, handler: BaseHTTPRequestHandler, method: str, path: str, query: dict, status: int, data: bytes,
        headers: dict[str, str],
    ) -> None:  # fmt: skip
        with self._lock:
            self.requests.append(RecordedRequest(method, path, query, status))
        handler.send_response(status)
        handler.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        if method != "HEAD":
            handler.wfile.write(data)

    def _auth(self, handler: BaseHTTPRequestHandler) -> str | None:
        """The token's role (``write``/``read``), None without a token; 401 for an unknown token."""
        header = handler.headers.get("Authorization") or ""
        if not header:
            return None
        token = header.removeprefix("Bearer ").strip()
        if token not in self.tokens:
            raise _HubError(401, INVALID_CREDENTIALS)
        return self.tokens[token]

    def _repo(self, repo_id: str, role: str | None, kind: str = "datasets") -> Repo:
        repo = (self.model_repos if kind == "models" else self.repos).get(repo_id)
        if repo is None or (repo.private and role is None):
            raise _HubError(404, "Repository not found", "RepoNotFound")
        return repo

    def _writable(self, repo_id: str, role: str | None, action: str, kind: str = "datasets") -> Repo:
        if role is None:
            raise _HubError(401, "You must be authenticated to do this")
        repo = self._repo(repo_id, role, kind)
        if role != "write":
            raise _HubError(403, f"You don't have the rights to {action} in {kind[:-1]} {repo_id}")
        return repo

    def _check_fail(self, kind: str) -> None:
        status = self.fail.get(kind)
        if status:
            raise _HubError(status, f"injected {kind} failure")

    def _route(self, method: str, path: str, query: dict, body: bytes, role: str | None) -> Any:
        if method == "POST" and path == "/api/validate-yaml":
            return self._validate_yaml(body)
        if method == "POST" and path == "/api/repos/create":
            return self._create_repo(json.loads(body or b"{}"), role)
        kind = next((k for k in ("datasets", "models") if path.startswith(f"/api/{k}/")), None)
        if kind is None:
            raise _HubError(404, f"no such endpoint: {method} {path}")
        rest = path[len(f"/api/{kind}/") :].split("/")
        if len(rest) < 2:
            raise _HubError(404, "Repository not found", "RepoNotFound")
        repo_id, tail = "/".join(rest[:2]), rest[2:]
        with self._lock:
            if method in ("GET", "HEAD") and (not tail or tail[0] == "revision"):
                return self._repo_info(repo_id, role, "/".join(tail[1:]) or MAIN, kind)
            if method == "GET" and len(tail) >= 2 and tail[0] == "tree":
                return self._tree(self._repo(repo_id, role, kind), "/".join(tail[1:]))
            if method == "GET" and tail == ["refs"]:
                return self._refs(self._repo(repo_id, role, kind), bool(query.get("include_prs")))
            if method == "GET" and kind == "datasets" and tail == ["leaderboard"]:
                return self._leaderboard(self._repo(repo_id, role), role)
            if method == "POST" and len(tail) >= 2 and tail[0] == "preupload":
                self._check_fail("preupload")
                self._writable(repo_id, role, "upload files", kind)
                files = json.loads(body)["files"]
                return {
                    "files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
                    ]
                }
            if method == "POST" and len(tail) >= 2 and tail[0] == "commit":
                self._check_fail("commit")
                repo = self._writable(repo_id, role, "create a commit", kind)
                reply = self._commit(repo, "/".join(tail[1:]), body, bool(query.get("create_pr")))
                if self.after_write is not None:
                    self.after_write("commit")
                if "commit" in self.lose_reply:
                    raise _LoseReply
                return reply
            if method == "POST" and len(tail) >= 2 and tail[0] == "tag" and kind == "datasets":
                self._check_fail("tag")
                repo = self._writable(repo_id, role, "create a tag")
                reply = self._tag(repo, "/".join(tail[1:]), json.loads(body))
                if self.after_write is not None:
                    self.after_write("tag")
                return reply
        raise _HubError(404, f"no such endpoint: {method} {path}")

    def _revision_files(self, repo: Repo, revision: str) -> tuple[str, dict[str, bytes]]:
        oid = repo.resolve(revision)
        if oid is None:
            raise _HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return oid, repo.commits[oid].files

    def _tree(self, repo: Repo, revision: str) -> list[dict]:
        _, files = self._revision_files(repo, revision)
        folders = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
        return [{"type": "directory", "path": d, "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0}
                for d in folders] + [
            {"type": "file", "path": p, "oid": hashlib.sha1(b).hexdigest(), "size": len(b)}
            for p, b in sorted(files.items())
        ]  # fmt: skip

    def _send_file(self, handler: BaseHTTPRequestHandler, method: str, path: str, role: str | None) -> None:
        repo_part, _, rest = path[len("/datasets/") :].partition("/resolve/")
        revision, _, file_path = rest.partition("/")
        if revision == "refs" and file_path.startswith("pr/"):  # refs/pr/N, unquoted
            number, _, file_path = file_path[3:].partition("/")
            revision = f"refs/pr/{number}"
        status, data, headers = 200, b"", {}
        try:
            with self._lock:
                oid, files = self._revision_files(self._repo(repo_part, role), revision)
            if file_path not in files:
                raise _HubError(404, f"Entry not found: {file_path}", "EntryNotFound")
            data = files[file_path]
            headers = {"X-Repo-Commit": oid, "ETag": f'"{hashlib.sha1(data).hexdigest()}"'}
        except _HubError as err:
            status, data, headers = err.status, json.dumps({"error": err.message}).encode(), err.headers()
        self._reply(handler, method, path, {}, status, data, headers)

    def _validate_yaml(self, body: bytes) -> dict:
        content = json.loads(body).get("content", "")
        if content.startswith("---\n"):
            end = content.find("\n---", 4)
            try:
                meta = yaml.safe_load(content[4:end]) if end > 0 else None
            except yaml.YAMLError as err:
                raise _HubError(400, f"invalid YAML: {err}") from None
            if end < 0 or not isinstance(meta, dict):
                raise _HubError(400, "the YAML metadata block must be a mapping")
        return {"errors": [], "warnings": []}

    def _create_repo(self, data: dict, role: str | None) -> dict:
        if role is None:
            raise _HubError(401, "You must be authenticated to create a repo")
        if role != "write":
            raise _HubError(403, "You don't have the rights to create a repo in this namespace")
        repo_id = f"{data['organization']}/{data['name']}" if data.get("organization") else data["name"]
        with self._lock:
            if repo_id in self.repos:
                raise _HubError(409, "You already created this dataset repo")
            self.repos[repo_id] = Repo(repo_id, private=data.get("visibility", "public") != "public")
        return {"url": f"{self.url}/datasets/{repo_id}", "name": repo_id}

    def _repo_info(self, repo_id: str, role: str | None, revision: str, kind: str = "datasets") -> dict:
        repo = self._repo(repo_id, role, kind)
        oid = repo.resolve(revision)
        if oid is None:
            raise _HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        files = repo.commits[oid].files
        return {
            "id": repo_id,
            "sha": oid,
            "private": repo.private,
            "siblings": [{"rfilename": p, "size": len(b)} for p, b in sorted(files.items())],
        }

    def _refs(self, repo: Repo, include_prs: bool) -> dict:
        def ref(name: str, full: str, oid: str) -> dict:
            return {"name": name, "ref": full, "targetCommit": oid}

        out = {
            "branches": [ref(b, f"refs/heads/{b}", o) for b, o in repo.branches.items()],
            "converts": [],
            "tags": [ref(t, f"refs/tags/{t}", o) for t, o in repo.tags.items()],
        }
        if include_prs:
            out["pullRequests"] = [
                ref(f"refs/pr/{n}", f"refs/pr/{n}", o) for n, o in repo.pull_requests.items()
            ]
        return out

    def _commit(self, repo: Repo, revision: str, body: bytes, create_pr: bool) -> dict:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise _HubError(400, "the commit payload must start with a header line")
        message = lines[0]["value"].get("summary") or ""
        named_parent = lines[0]["value"].get("parentCommit")
        changes: dict[str, bytes | None] = {}
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value", {})
            if key == "file" and value.get("encoding") == "base64":
                data = base64.b64decode(value["content"])
                changes[value["path"]] = self.damage(value["path"], data) if self.damage else data
            elif key == "deletedFile":
                changes[value["path"]] = None
            else:
                raise _HubError(400, f"this test Hub stores regular files only, got {key!r}")
        if revision not in repo.branches:
            raise _HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        head = repo.branches[revision]
        if named_parent is not None and not create_pr and not head.startswith(named_parent):
            raise _HubError(412, "A commit has happened since. Please refresh and try again.")
        base = next((oid for oid in repo.commits if named_parent and oid.startswith(named_parent)), head)
        parent = repo.commits[base if create_pr else head]
        commit = _make_commit(parent, message, changes)
        repo.commits[commit.oid] = commit
        url = f"{self.url}/{'' if repo.repo_type == 'model' else 'datasets/'}{repo.repo_id}"
        if create_pr:
            number = max(repo.pull_requests, default=0) + 1
            repo.pull_requests[number] = commit.oid
            return {
                "commitOid": commit.oid,
                "commitUrl": f"{url}/commit/{commit.oid}",
                "pullRequestUrl": f"{url}/discussions/{number}",
            }
        repo.branches[revision] = commit.oid
        return {"commitOid": commit.oid, "commitUrl": f"{url}/commit/{commit.oid}", "pullRequestUrl": None}

    def _tag(self, repo: Repo, revision: str, data: dict) -> dict:
        oid = repo.resolve(revision)
        if oid is None:
            raise _HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        tag = data.get("tag")
        if not tag:
            raise _HubError(400, "no tag name")
        if tag in repo.tags:
            raise _HubError(409, f"Tag {tag} already exists")
        repo.tags[tag] = oid
        return {}

    def _leaderboard(self, dataset: Repo, role: str | None) -> list[dict]:
        """Rows for every model's entries on ``dataset``: at main, else in its newest pull request."""
        if "eval.yaml" not in dataset.commits[dataset.branches[MAIN]].files:
            raise _HubError(404, f"{dataset.repo_id} has no leaderboard (no eval.yaml)")
        best: dict[tuple[str, str], dict] = {}  # (task, model) -> row
        for model in self.model_repos.values():
            if model.private and role is None:
                continue
            heads = [(None, model.branches[MAIN])] + sorted(model.pull_requests.items(), reverse=True)
            for pr, oid in heads:
                for path, content in sorted(model.commits[oid].files.items()):
                    if not (path.startswith(".eval_results/") and path.endswith((".yaml", ".yml"))):
                        continue
                    try:
                        items = yaml.safe_load(content)
                    except yaml.YAMLError:
                        continue  # the Hub skips a file it cannot parse
                    for item in items if isinstance(items, list) else []:
                        data = item.get("dataset") if isinstance(item, dict) else None
                        if not isinstance(data, dict) or data.get("id") != dataset.repo_id:
                            continue
                        key = (str(data.get("task_id")), model.repo_id)
                        if key in best:
                            continue  # main first, then the newest pull request
                        namespace = model.repo_id.split("/")[0]
                        best[key] = {
                            "modelId": model.repo_id,
                            "taskId": key[0],
                            "value": item.get("value"),
                            "filename": path.rsplit("/", 1)[-1],
                            "verified": False,
                            "source": item.get("source"),
                            "author": {"name": namespace, "type": "user"},
                            "pullRequest": pr,
                            "notes": item.get("notes"),
                        }
        rows: list[dict] = []
        for task in sorted({t for t, _ in best}):
            ranked = sorted((r for (t, _), r in best.items() if t == task), key=lambda r: -float(r["value"]))
            rows += [{"rank": i + 1, **r} for i, r in enumerate(ranked)]
        return rows
