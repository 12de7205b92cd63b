"""One error path for every Hub call: a failure becomes one line that says what could not be done and
why (offline, unreachable, not found, not authorised, refused), with the token scrubbed out.

Every command that talks to the Hub (``push``, ``results push``, ``leaderboard --hub``, a ``--data``
repo id) wraps its calls in :func:`hub_errors`; the CLI prints a :class:`HubError` as one line with
exit status 2, like every other expected failure, never huggingface_hub's traceback or its
multi-line advice.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager


class HubError(RuntimeError):
    """A Hub call failed. ``unreachable``: the Hub could not be reached at all (offline mode, no
    connection): nothing is known about the repo, as opposed to the Hub answering no."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


def transport_errors() -> tuple[type[BaseException], ...]:
    """Exceptions meaning "no connection", across the HTTP clients huggingface_hub has used."""
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, name in (
        ("httpx2", "TransportError"),
        ("httpx", "TransportError"),
        ("requests", "ConnectionError"),
    ):
        try:
            errors.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def server_reason(err: BaseException, token: str | None = None) -> str:
    """The server's own message (not the library's multi-line advice), with the token scrubbed."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    lines = str(err).strip().splitlines()
    text = getattr(err, "server_message", None) or (lines[0] if lines else type(err).__name__)
    return scrub(f"HTTP {status}: {text}" if status else text, token)


def describe(
    err: BaseException,
    *,
    endpoint: str,
    repo_id: str | None = None,
    repo_type: str = "dataset",
    token: str | None = None,
    access: str = "read",
    revision: str | None = None,
) -> tuple[str, bool] | None:
    """``(one line, unreachable)`` for a failed Hub call, or None when ``err`` is no Hub failure.
    ``access`` words a refused token: "read" or "write to"."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    repo = f"{repo_type} repo {repo_id}" if repo_id else "the repo"
    if isinstance(err, OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set, so the Hub is not contacted (unset it, or set HF_HUB_OFFLINE=0)", True
    if isinstance(err, transport_errors()):
        return (
            f"cannot reach the Hub at {endpoint} ({type(err).__name__}); check the network or HF_ENDPOINT",
            True,
        )
    if isinstance(err, GatedRepoError):
        return f"{repo} is gated: accept its terms on the Hub and log in (HF_TOKEN or `hf auth login`)", False
    if isinstance(err, RevisionNotFoundError):
        asked = f"revision {revision!r}" if revision else "such revision"
        return f"{repo} has no {asked} ({server_reason(err, token)})", False
    if isinstance(err, RepositoryNotFoundError):
        return f"{repo} does not exist, or is private (log in with HF_TOKEN or `hf auth login`)", False
    if isinstance(err, HfHubHTTPError):
        status = getattr(err.response, "status_code", None)
        if status in (401, 403):
            who = repo_id or repo
            return (
                f"not authorised to {access} {who} (check HF_TOKEN / hf auth login): {server_reason(err, token)}",
                False,
            )
        return f"the Hub refused the request ({server_reason(err, token)})", False
    return None


@contextmanager
def hub_errors(
    what: str,
    *,
    endpoint: str,
    repo_id: str | None = None,
    repo_type: str = "dataset",
    token: str | None = None,
    revision: str | None = None,
) -> Iterator[None]:
    """Turn a failed Hub call inside the block into ``HubError("<what>: <why>")``; other errors pass."""
    try:
        yield
    except Exception as err:
        found = describe(
            err, endpoint=endpoint, repo_id=repo_id, repo_type=repo_type, token=token, revision=revision
        )
        if found is None:
            raise
        raise HubError(f"{what}: {found[0]}", unreachable=found[1]) from None
