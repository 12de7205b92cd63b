"""Record replies from a scripted handler under fixed settings: how the bundled recordings are made."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from builders.llm import LLMClient, LLMSettings, export_replies
from builders.llm.recording import Recording
from builders.testing.chat_server import ChatServer


def scripted_settings(name: str) -> LLMSettings:
    """Fixed settings for a recording named ``name``: model ``name`` at ``http://<name>.invalid/v1``
    (``.invalid`` never resolves, so nothing real is reachable), greedy, no key."""
    return LLMSettings(
        model=name,
        base_url=f"http://{name}.invalid/v1",
        api_key_env=None,
        temperature=0.0,
        seed=0,
        progress=False,
    )


@contextmanager
def recording_session(
    recording: Recording,
    handler: Callable[[Mapping[str, Any]], Any],
    cache_path: str | Path,
    reported: str | None = None,
) -> Iterator[tuple[LLMClient, ChatServer]]:
    """A live client under ``recording``'s settings whose requests reach a local :class:`ChatServer`
    running ``handler`` (reporting model ``reported``), with the server as this client's HTTP proxy
    (:attr:`ChatServer.proxy_url`; nothing else in the process is rerouted), so the keys carry the
    recording's fixed base URL, not the server's port. On a clean exit the cache is
    exported to the recording's replies file (``stable=True``) and its settings are written; an error
    in the block or in the handler writes nothing."""
    with ChatServer(model=reported) as server:
        server.handler = handler
        with LLMClient(recording.settings, cache_path=cache_path, proxy=server.proxy_url) as client:
            yield client, server
        if server.errors:
            raise RuntimeError(f"the scripted responder failed: {server.errors[:3]}")
        if not server.chat_requests:
            raise RuntimeError("nothing was recorded: no request reached the scripted server")
    Path(recording.folder).mkdir(parents=True, exist_ok=True)
    export_replies(cache_path, recording.replies_path, stable=True)
    recording.write_settings()
