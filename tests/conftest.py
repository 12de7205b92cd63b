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


@pytest.fixture(scope="session")
def built_samples(tmp_path_factory):
    """Both bundled samples rebuilt offline from their recorded replies (as ``vqabench demo`` does):
    ``{"bqa": BuiltSample, "marinelife16k": BuiltSample}``, each with a work folder and a Hub folder."""
    from builders.demo.samples import rebuild_bqa, rebuild_marinelife  # lazy: datasets is slow to import

    root = tmp_path_factory.mktemp("built-samples")
    return {
        "bqa": rebuild_bqa(root / "bqa-work", root / "bqa-hub", root / "bqa-cache"),
        "marinelife16k": rebuild_marinelife(root / "ml-work", root / "ml-hub", root / "ml-cache"),
    }
