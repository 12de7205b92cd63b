"""Shared pytest fixtures. Keep each fixture small and documented; helpers may add their own here."""

from __future__ import annotations

import socket

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


LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture
def outside_attempts(monkeypatch) -> list:
    """Refuse (and record) every connection or name lookup that is not to the loopback: a test that
    talks to the local Hub server asserts the list is empty, i.e. nothing went anywhere else."""
    attempts: list = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(self, address):
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            attempts.append(address)
            raise OSError(f"test guard: no network ({address})")
        return connect(self, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if host not in LOOPBACK and host is not None:
            attempts.append(host)
            raise socket.gaierror(f"test guard: no name lookups ({host})")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    return attempts


@pytest.fixture
def plot_record(monkeypatch) -> list:
    """Every figure the report helper saves during the test, checked as drawn (tests/plot_checks.py):
    assert ``plot_checks.assert_figures_fit(plot_record)`` after writing reports."""
    from plot_checks import spy_on_figures

    import builders.report.plots as plots

    record: list = []
    spy_on_figures(plots, monkeypatch.setattr, record)
    return record
