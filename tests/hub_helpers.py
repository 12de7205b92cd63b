"""Pointing huggingface_hub at the local test Hub (builders.testing.hub_server) with no way out.

``use_endpoint`` points huggingface_hub at a URL and keeps its token file and caches in a temporary
home (the ``outside_attempts`` fixture of conftest.py refuses any other connection). Shared by the
push, results and leaderboard tests.
"""

from __future__ import annotations

from pathlib import Path


def use_endpoint(monkeypatch, url: str, home: Path) -> None:
    """Point huggingface_hub at ``url`` (env for this process's reads, constants for its import-time
    copies) and keep its token file and caches in ``home``."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(home / "agent_harnesses.json"), raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.delenv("HF_OIDC_RESOURCE", raising=False)


def record_checksums(folder: Path) -> None:
    """Record a hand-edited Hub folder's files in its card as the export does (a test that rewrites a
    shard on purpose, not as damage)."""
    from builders.hub.checksums import CHECKSUMS_KEY, record
    from builders.hub.layout import CARD_FILE, read_card, render_card

    meta, body = read_card(folder)
    meta[CHECKSUMS_KEY] = record(folder, CARD_FILE)
    (folder / CARD_FILE).write_text(render_card(meta, body), encoding="utf-8")
