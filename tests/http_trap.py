"""A test server that every plain-HTTP request of this test process reaches: proof that a replay
sends nothing, whatever host the code under test would name."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from builders.testing.chat_server import ChatServer

PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy")


@contextmanager
def http_trap() -> Iterator[ChatServer]:
    """A running :class:`ChatServer` set as this process's HTTP proxy for the block (the proxy
    variables are restored afterwards); its ``requests`` log shows anything that was sent."""
    with ChatServer() as server, pytest.MonkeyPatch.context() as env:
        for name in PROXY_VARIABLES:
            env.delenv(name, raising=False)
        env.setenv("HTTP_PROXY", server.proxy_url)
        env.setenv("http_proxy", server.proxy_url)
        yield server
