"""Publish an exported dataset folder to a Hugging Face Hub dataset repo: one commit, then a tag.

:func:`plan_push` checks the folder the way the Hub will read it (:func:`builders.hub.layout.check_hub_folder`:
``load_dataset`` round trip, card YAML with one default config, no ``*.py`` at the root, split
sizes as the card says) and lists what would be uploaded; it touches no network, so it is also the
``--dry-run``. The folder must hold regular files only: a link (which would upload whatever it
points at), a device or pipe, a ``*.py`` file or a ``__pycache__`` anywhere is refused.
:func:`with_remote` reads the repo's file list (read-only) so the plan also lists the deletions.
:func:`push` then:

1. checks the repo (reachable, token accepted, repo exists - or creates it with ``create_repo``,
   private unless asked otherwise - and the tag free), before anything changes;
2. in **one** commit (``HfApi.create_commit``), onto ``main`` or as a pull request, uploads every
   file and deletes the repo's data files the release no longer has (:func:`deletions`: a release
   whose shards were renamed must not leave the old ones beside the new). The commit names its parent
   (``parent_commit``: ``main`` as it was read for the deletions), so if another push lands in
   between, the Hub refuses this one (HTTP 412) and nothing of it lands: two pushes at once cannot
   both land and mix their shards;
3. verifies the revision it made: downloads it (``snapshot_download`` at the commit), compares the
   sha256 of every file with the folder's (content, not presence: a byte changed on the way or in
   storage is named), and runs the same ``load_dataset`` check as before the push, with the same split
   sizes;
4. only then tags that commit.

A commit is atomic on the Hub, so a failure in steps 1-2 leaves the repo as it was (except a repo
that step 1 created, which the error says). A failure in step 3 or 4 happens after the commit landed:
the error names the commit (untagged). A rerun of a push that was interrupted after tagging finds the
tag: when the tagged revision holds exactly this folder (sha256 of every file), it is verified again
and the push reports it done, instead of refusing the tag as taken. The token comes from ``HF_TOKEN`` or the
saved ``hf auth login`` (:func:`huggingface_hub.get_token`); it is sent only as a header and is
scrubbed from every message this module raises.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from builders.hub.cards import CARD_FILE, read_card
from builders.hub.checksums import recorded, sha256_file, verify, verify_release
from builders.hub.errors import HubError, describe, scrub
from builders.hub.layout import check_hub_folder
from builders.hub.sample import SAMPLE_KEY, refuse_sample

REPO_TYPE = "dataset"
# A remote file with one of these suffixes is release data wherever it is (and so deleted when the
# release no longer has it); so is any file under a top-level folder the release writes (data/).
DATA_SUFFIXES = (".parquet", ".arrow", ".jsonl", ".json", ".csv", ".tsv", ".txt", ".zip", ".tar", ".gz")
T = TypeVar("T")


@dataclass(frozen=True)
class PlannedFile:
    path_in_repo: str
    local: Path
    size: int


@dataclass(frozen=True)
class PushPlan:
    """Everything a push will do; :meth:`describe` prints it for ``--dry-run``."""

    folder: Path
    repo_id: str
    endpoint: str
    files: tuple[PlannedFile, ...]
    commit_message: str
    commit_description: str
    create_pr: bool
    tag: str | None
    create_repo: bool
    private: bool
    configs: tuple[str, ...]  # from the card, default first
    splits: dict[str, dict[str, int]]  # config -> split -> rows, as loaded
    remote_files: tuple[str, ...] | None = None  # the repo's files at main (None: not read yet)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def deletions(self) -> tuple[str, ...]:
        return deletions([f.path_in_repo for f in self.files], self.remote_files or ())

    def describe(self) -> str:
        lines = [
            f"push {self.folder} -> dataset repo {self.repo_id} at {self.endpoint}",
            "checked: load_dataset round trip, one default config, no loading script, split sizes match the card",
            *(
                f"  config {name}: " + ", ".join(f"{s} {n}" for s, n in self.splits[name].items())
                for name in self.configs
            ),
        ]
        if self.create_repo:
            lines.append(f"create the repo if it does not exist ({'private' if self.private else 'public'})")
        target = "a pull request against main" if self.create_pr else "main"
        lines.append(f"one commit onto {target}: {self.commit_message!r}")
        lines += [f"  add {f.path_in_repo} ({_size(f.size)})" for f in self.files]
        if self.remote_files is None:
            lines.append(
                "  delete: the repo's data files this release lacks, read at commit time (--dry-run lists them)"
            )
        else:
            lines += [f"  delete {path} (not in this release)" for path in self.deletions]
        lines.append(
            f"  {len(self.files)} file(s), {_size(self.total_bytes)}"
            + ("" if self.remote_files is None else f"; {len(self.deletions)} deletion(s)")
        )
        lines.append(f"then tag that commit {self.tag!r}" if self.tag else "no tag")
        return "\n".join(lines)


@dataclass(frozen=True)
class PushResult:
    repo_id: str
    commit_oid: str
    commit_url: str
    pr_url: str | None
    pr_revision: str | None  # refs/pr/N for a pull request
    tag: str | None
    created_repo: bool
    default_config: str
    configs: tuple[str, ...]
    deleted: tuple[str, ...] = ()
    verified: dict[str, dict[str, int]] | None = None  # config -> split -> rows, loaded from the Hub
    already_pushed: bool = False  # the tag already held exactly this folder (a rerun): nothing sent

    @property
    def revision(self) -> str:
        """What to pass as ``revision=`` to load exactly this upload."""
        return self.tag or self.commit_oid

    def load_instructions(self) -> list[str]:
        lines = [f'datasets.load_dataset("{self.repo_id}", revision="{self.revision}")']
        lines += [
            f'datasets.load_dataset("{self.repo_id}", "{c}", revision="{self.revision}")'
            for c in self.configs
            if c != self.default_config
        ]
        return lines

    def describe(self) -> str:
        lines = []
        if self.already_pushed:
            lines.append(
                f"already pushed: tag {self.tag} -> commit {self.commit_oid} holds exactly this folder "
                "(sha256 of every file); nothing was sent"
            )
        if self.created_repo:
            lines.append(f"created dataset repo {self.repo_id}")
        lines.append(f"commit {self.commit_oid}: {self.commit_url}")
        if self.pr_url:
            lines.append(f"pull request: {self.pr_url} (revision {self.pr_revision}; merge it on the Hub)")
        if self.deleted:
            lines.append(
                f"deleted {len(self.deleted)} file(s) the release no longer has: {', '.join(self.deleted)}"
            )
        if self.tag and not self.already_pushed:
            lines.append(f"tag {self.tag} -> {self.commit_oid}")
        if self.verified is not None:
            sizes = "; ".join(
                f"{c}: " + ", ".join(f"{s} {n}" for s, n in splits.items())
                for c, splits in self.verified.items()
            )
            lines.append(
                f"verified: revision {self.commit_oid[:12]} downloaded, every file's sha256 equal to the "
                f"folder's, loaded with load_dataset ({sizes})"
            )
        lines.append("load this revision with:")
        lines += [f"  {line}" for line in self.load_instructions()]
        return "\n".join(lines)


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def resolve_endpoint(endpoint: str | None = None) -> str:
    """``endpoint``, else ``HF_ENDPOINT`` (read now, not at import), else huggingface_hub's default."""
    from huggingface_hub import constants

    return (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _folder_files(folder: Path) -> tuple[PlannedFile, ...]:
    """Every file under ``folder`` except hidden ones (``.git``, editor files, the export marker).

    Only regular files are ever uploaded: a link anywhere (which would upload what it points at, a
    key or ``/etc/passwd``), anything that is not a regular file, a ``*.py`` file or a ``__pycache__``
    anywhere in the tree is an error listing each one.
    """
    files, problems = [], []
    for root, dirs, names in os.walk(folder, followlinks=False):
        here = Path(root)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted([*dirs, *(n for n in names if not n.startswith("."))]):
            path = here / name
            rel = path.relative_to(folder).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{rel}: a symbolic link (to {os.readlink(path)}); copy the file in instead")
            elif name == "__pycache__":
                problems.append(f"{rel}: a Python cache folder")
            elif stat.S_ISDIR(mode):
                continue
            elif not stat.S_ISREG(mode):
                problems.append(f"{rel}: not a regular file")
            elif name.endswith(".py"):
                problems.append(
                    f"{rel}: a Python file (datasets 5 refuses loading scripts at the root; code anywhere is not data)"
                )
            else:
                files.append(PlannedFile(rel, path, os.lstat(path).st_size))
        dirs[:] = [d for d in dirs if d != "__pycache__" and not (here / d).is_symlink()]
    if problems:
        raise ValueError(f"{folder}: refusing to push it:\n  - " + "\n  - ".join(problems))
    return tuple(sorted(files, key=lambda f: f.path_in_repo))


def deletions(local: Iterable[str], remote: Iterable[str]) -> tuple[str, ...]:
    """The repo's data files that the release does not have: remote files under a top-level folder the
    release writes (``data/``) or with a data suffix (:data:`DATA_SUFFIXES`), hidden ones aside."""
    local = set(local)
    owned = {path.split("/", 1)[0] for path in local if "/" in path}
    return tuple(
        sorted(
            path
            for path in remote
            if path not in local
            and not any(part.startswith(".") for part in path.split("/"))
            and (path.split("/", 1)[0] in owned and "/" in path or path.lower().endswith(DATA_SUFFIXES))
        )
    )


def plan_push(
    folder: str | os.PathLike[str],
    repo_id: str,
    *,
    commit_message: str | None = None,
    create_pr: bool = False,
    tag: str | None = None,
    create_repo: bool = False,
    private: bool = True,
    endpoint: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    allow_sample: bool = False,
) -> PushPlan:
    """Validate ``folder`` and list the push; no network. ValueError names every problem.

    A release whose card says it was built from a bundled sample or scripted replies
    (:data:`~builders.hub.layout.SAMPLE_KEY`) is refused unless ``allow_sample``."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"repo id {repo_id!r}: expected <namespace>/<name>")
    if tag is not None and (not tag.strip() or tag != tag.strip() or " " in tag):
        raise ValueError(f"tag {tag!r}: expected a name without spaces, like v1.1")
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder")
    files = _folder_files(folder)  # before loading anything: a link must not even be read
    verify_release(folder, read_card(folder)[0], CARD_FILE)  # the content the export wrote, every byte
    with tempfile.TemporaryDirectory(prefix="vqabench-push-check-") as tmp:
        loaded = check_hub_folder(folder, cache_dir=cache_dir or tmp)
    meta, _ = read_card(folder)
    refuse_sample(
        meta.get(SAMPLE_KEY), what=str(folder), target=repo_id, said_by=f"its card ({SAMPLE_KEY})",
        allow=allow_sample,
    )  # fmt: skip
    declared = meta.get("configs") or []
    default = next((c["config_name"] for c in declared if c.get("default")), declared[0]["config_name"])
    configs = (default, *(c["config_name"] for c in declared if c["config_name"] != default))
    splits = {name: {s: len(d) for s, d in loaded[name].items()} for name in configs}
    summary = "; ".join(f"{c}: " + ", ".join(f"{s} {n}" for s, n in splits[c].items()) for c in configs)
    return PushPlan(
        folder=folder,
        repo_id=repo_id,
        endpoint=resolve_endpoint(endpoint),
        files=files,
        commit_message=commit_message or (f"Release {tag}" if tag else f"Upload {folder.name}"),
        commit_description=f"{len(files)} file(s) from {folder.name}, checked with load_dataset ({summary}).",
        create_pr=create_pr,
        tag=tag,
        create_repo=create_repo,
        private=private,
        configs=configs,
        splits=splits,
    )


# --- errors ------------------------------------------------------------------------------------------
class PushError(HubError):
    """A push failed; the message says what, if anything, changed on the Hub."""


def _call(
    what: Callable[[], T],
    plan: PushPlan,
    token: str | None,
    done: str = "",
    step: str = "",
    *,
    repo_missing_ok: bool = False,
    in_commit: bool = False,
    parent: str | None = None,
) -> T:
    """Run one Hub call; turn its failure (worded by :func:`builders.hub.errors.describe`, the one
    error path of every Hub call) into a PushError that says what already happened.

    ``done`` names what has changed on the Hub so far ("" = nothing) and ``step`` this call. A
    commit is atomic, so a refused commit changed nothing; a connection lost during the commit
    (``in_commit``) may have lost only the answer, and the message says so. ``parent``: the commit a
    commit names as its parent; the Hub's 412 then means another commit landed first.
    """
    from huggingface_hub.errors import OfflineModeIsEnabled, RepositoryNotFoundError

    prefix = f"{done}; {step} failed: " if done else ""
    unchanged = "" if done else " (nothing was pushed)"
    repo_type = getattr(plan, "repo_type", REPO_TYPE)  # a results push targets a model repo
    try:
        return what()
    except RepositoryNotFoundError as err:
        if repo_missing_ok:
            raise
        status = getattr(err.response, "status_code", None)
        raise PushError(
            f"{prefix}{repo_type} repo {plan.repo_id} does not exist"
            + (" or this token cannot see it" if status == 401 else "")
            + (" (create it with --create-repo or on the Hub)" if repo_type == REPO_TYPE else "")
            + unchanged
        ) from None
    except Exception as err:
        status = getattr(getattr(err, "response", None), "status_code", None)
        if status == 412 and parent is not None:  # parent_commit: main moved since it was read
            raise PushError(
                f"{prefix}another commit landed on main of {plan.repo_id} after {parent[:12]}, the revision "
                f"this push started from (a push at the same time?), so the Hub refused this commit: nothing of "
                f"it landed{unchanged}; look at the repo's history, then push again"
            ) from None
        found = describe(
            err,
            endpoint=plan.endpoint,
            repo_id=plan.repo_id,
            repo_type=repo_type,
            token=token,
            access="write to",
        )
        if found is None:
            raise
        message, unreachable = found
        if in_commit and unreachable and not isinstance(err, OfflineModeIsEnabled):
            raise PushError(
                f"{prefix}the connection to {plan.endpoint} failed during the commit ({type(err).__name__}): it may "
                f"or may not have landed; look at the history of {plan.repo_id} before pushing again"
            ) from None
        raise PushError(f"{prefix}{message}{unchanged}", unreachable=unreachable) from None


def _remote_files(api: Any, plan: PushPlan, token: str | None, done: str = "") -> tuple[str, ...]:
    """The repo's files at ``main`` (what a commit onto main, or a pull request against it, starts from)."""
    return _main(api, plan, token, done)[1]


def _main(api: Any, plan: PushPlan, token: str | None, done: str = "") -> tuple[str, tuple[str, ...]]:
    """``main``'s commit and its files, read in one call: the parent a commit names and the files it
    deletes are those of one and the same revision."""
    info = _call(
        lambda: api.repo_info(plan.repo_id, repo_type=REPO_TYPE, revision="main"),
        plan, token, done, "reading the repo's files", repo_missing_ok=True,
    )  # fmt: skip
    return info.sha, tuple(sorted(s.rfilename for s in info.siblings or ()))


def with_remote(plan: PushPlan, *, token: str | None = None) -> PushPlan:
    """``plan`` with the repo's current files, so :meth:`PushPlan.describe` lists the deletions.

    Read-only (a dry run may use it). A repo that does not exist yet has no files."""
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import RepositoryNotFoundError

    token = token or get_token()
    api = HfApi(endpoint=plan.endpoint, token=token)
    try:
        return replace(plan, remote_files=_remote_files(api, plan, token))
    except RepositoryNotFoundError:
        if not plan.create_repo:
            raise PushError(
                f"dataset repo {plan.repo_id} does not exist (create it with --create-repo or on the Hub)"
            ) from None
        return replace(plan, remote_files=())


def content_differences(plan: PushPlan, local: Path) -> list[str]:
    """How the downloaded revision in ``local`` differs from the folder, file by file (sha256), the
    data files the release lacks included; empty when it holds exactly the folder."""
    problems = []
    for f in plan.files:
        there = local / f.path_in_repo
        if not there.is_file():
            problems.append(f"{f.path_in_repo}: missing from the revision")
        elif (theirs := sha256_file(there)) != (ours := sha256_file(f.local)):
            problems.append(f"{f.path_in_repo}: sha256 {theirs[:16]}… on the Hub, {ours[:16]}… in the folder")
    remote = [p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()]
    extra = deletions([f.path_in_repo for f in plan.files], remote)
    problems += [f"{path}: a data file the folder does not have" for path in extra]
    return problems


def verify_revision(
    plan: PushPlan,
    revision: str,
    *,
    token: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> dict[str, dict[str, int]]:
    """Download ``revision`` of the repo, check that every file is byte for byte the folder's
    (:func:`content_differences`), and load it as :func:`plan_push` loaded the folder; ValueError naming
    each file that differs, or when it does not load or its split sizes differ from the folder's."""
    from huggingface_hub import snapshot_download

    with tempfile.TemporaryDirectory(prefix="vqabench-push-verify-") as tmp:
        local = Path(tmp) / "revision"
        snapshot_download(
            plan.repo_id, repo_type=REPO_TYPE, revision=revision, local_dir=local, token=token,
            endpoint=plan.endpoint, cache_dir=Path(tmp) / "hub-cache",
        )  # fmt: skip
        shutil.rmtree(local / ".cache", ignore_errors=True)  # snapshot_download's own bookkeeping
        differ = content_differences(plan, local)
        if differ:
            raise ValueError(
                f"revision {revision} does not hold this folder's bytes:\n  - " + "\n  - ".join(differ)
            )
        sums = recorded(read_card(local)[0], f"revision {revision}: {CARD_FILE}") or {}
        verify(
            local, sums, [f.path_in_repo for f in plan.files if f.path_in_repo != CARD_FILE]
        )  # the export's
        loaded = check_hub_folder(local, cache_dir=cache_dir or Path(tmp) / "datasets-cache")
    got = {name: {s: len(d) for s, d in loaded[name].items()} for name in plan.configs if name in loaded}
    if got != plan.splits:
        raise ValueError(f"revision {revision} loads with split sizes {got}, the folder with {plan.splits}")
    return got


def push(plan: PushPlan, *, token: str | None = None, verify: bool = True) -> PushResult:
    """Carry out ``plan`` (see the module docstring). Raises PushError saying what changed, if anything."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
    from huggingface_hub.errors import RepositoryNotFoundError

    token = token or get_token()
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN or run `hf auth login` (nothing was pushed)")
    api = HfApi(endpoint=plan.endpoint, token=token)
    created = False
    try:
        _call(
            lambda: api.repo_info(plan.repo_id, repo_type=REPO_TYPE),
            plan,
            token,
            repo_missing_ok=plan.create_repo,
        )
    except RepositoryNotFoundError:
        _call(
            lambda: api.create_repo(plan.repo_id, repo_type=REPO_TYPE, private=plan.private, exist_ok=True),
            plan,
            token,
        )
        created = True
    done = f"created the empty dataset repo {plan.repo_id}" if created else ""
    if plan.tag:
        refs = _call(
            lambda: api.list_repo_refs(plan.repo_id, repo_type=REPO_TYPE), plan, token, done, "listing tags"
        )
        existing = {t.name: t.target_commit for t in refs.tags}
        if plan.tag in existing:
            return _already_pushed(plan, existing[plan.tag], token, done, verify)
    # Read now, not at planning time: the deletions are those of the revision this commit names as
    # its parent, so that a commit landing in between makes the Hub refuse this one.
    parent, remote = _main(api, plan, token, done)
    plan = replace(plan, remote_files=remote)
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=str(f.local)) for f in plan.files
    ]
    operations += [CommitOperationDelete(path_in_repo=path) for path in plan.deletions]
    info: Any = _call(
        lambda: api.create_commit(
            plan.repo_id,
            operations,
            commit_message=plan.commit_message,
            commit_description=plan.commit_description,
            repo_type=REPO_TYPE,
            create_pr=plan.create_pr,
            parent_commit=parent,
        ),
        plan,
        token,
        done,
        "the commit",
        in_commit=True,
        parent=parent,
    )
    landed = f"commit {info.oid} landed ({info.pr_url or info.commit_url})"
    verified = None
    if verify:  # before the tag: a revision that does not hold the folder is never tagged
        try:
            verified = _call(
                lambda: verify_revision(plan, info.oid, token=token), plan, token, landed, "verifying it"
            )
        except (ValueError, OSError) as err:  # other bytes, does not load, other sizes, a failed download
            raise PushError(
                f"{landed}, but that revision is not this folder, so it was not tagged: {scrub(str(err), token)}"
                "\npush again (a new commit replaces it); if this repeats, the upload is damaged on the way"
            ) from None
    if tag := plan.tag:
        try:
            _call(
                lambda: api.create_tag(
                    plan.repo_id,
                    tag=tag,
                    revision=info.oid,
                    repo_type=REPO_TYPE,
                    tag_message=plan.commit_message,
                ),
                plan,
                token,
                landed + (" and was verified" if verify else ""),
                f"tag {plan.tag!r}",
            )
        except PushError as err:
            raise PushError(
                f"{err}\nthe upload is complete and loadable with revision={info.oid!r}; tag it later with "
                f"huggingface_hub.HfApi().create_tag({plan.repo_id!r}, tag={plan.tag!r}, revision={info.oid!r}, "
                f"repo_type={REPO_TYPE!r})"
            ) from None
    return PushResult(
        repo_id=plan.repo_id,
        commit_oid=info.oid,
        commit_url=info.commit_url,
        pr_url=info.pr_url,
        pr_revision=info.pr_revision,
        tag=plan.tag,
        created_repo=created,
        default_config=plan.configs[0],
        configs=plan.configs,
        deleted=plan.deletions,
        verified=verified,
    )


def _already_pushed(plan: PushPlan, oid: str, token: str | None, done: str, verify: bool) -> PushResult:
    """The tag exists: a rerun of a push interrupted after tagging, or a tag that is taken. Verified
    again (the tagged revision downloaded, every file compared): the same folder is done, anything else
    is refused as before."""
    taken = (f"{done}; " if done else "") + f"tag {plan.tag!r} already exists in {plan.repo_id} (at {oid})"
    unchanged = "" if done else " (nothing was pushed)"
    if not verify:
        raise PushError(f"{taken}; choose another tag{unchanged}")
    try:
        verified = _call(
            lambda: verify_revision(plan, oid, token=token), plan, token, done, "reading the tag"
        )
    except (ValueError, OSError) as err:
        raise PushError(
            f"{taken} and does not hold this folder ({scrub(str(err), token)}); choose another tag{unchanged}"
        ) from None
    return PushResult(
        repo_id=plan.repo_id,
        commit_oid=oid,
        commit_url=f"{plan.endpoint}/datasets/{plan.repo_id}/commit/{oid}",
        pr_url=None,
        pr_revision=None,
        tag=plan.tag,
        created_repo=False,
        default_config=plan.configs[0],
        configs=plan.configs,
        verified=verified,
        already_pushed=True,
    )
