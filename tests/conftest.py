"""Shared pytest fixtures. Keep each fixture small and documented; helpers may add their own here."""

from __future__ import annotations

import pytest

from builders.testing.chat_server import ChatServer


@pytest.fixture
def chat_server():
    """A fresh :class:`~builders.testing.chat_server.ChatServer` on 127.0.0.1 (random port), no
    latency, no faults, reporting model ``test-model-2026-01``; stopped after the test. Script it
    with ``chat_server.handler``, ``queue_faults``, ``fault_rate``, ``latency``."""
    with ChatServer() as server:
        yield server
