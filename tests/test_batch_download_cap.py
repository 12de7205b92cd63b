"""The Batch API client has the chat path's caps (issue 37): an output file whose gzip body inflates past
``--llm-max-reply-mb`` is refused at the cap, not decoded into memory first, against the local batch server."""

from __future__ import annotations

import gzip
import resource
import zlib

import pytest

from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message
from builders.testing.batch_server import BatchServer

BOMB_MB = 64  # decoded; its gzip is ~64 KB


def bomb(content: bytes) -> tuple[bytes, dict[str, str]]:
    """The real output lines, then megabytes of blank lines: gzipped, a megabyte at a time, into a small body."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    blank = b"\n" * 2**20
    body = z.compress(content) + b"".join(z.compress(blank) for _ in range(BOMB_MB)) + z.flush()
    return body, {"Content-Encoding": "gzip"}


def test_an_output_file_that_inflates_past_the_cap_is_refused(tmp_path):
    settings = LLMSettings(model="m", base_url="", api_key_env=None, progress=False, max_reply_mb=1.0)
    with BatchServer() as server:
        server.encode_content = bomb
        settings = settings.model_copy(update={"base_url": server.url})
        with LLMClient(settings, cache_path=tmp_path / "cache.sqlite", mode="batch") as client:
            assert client.batch is not None
            client.batch.poll_seconds = 0.01
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            with pytest.raises(
                RuntimeError,
                match=r"batch_1 .*file-2 was refused: the reply body decoded \(gzip\) grew past 1 MB",
            ):
                client.run([LLMRequest([user_message("Name a colour.")])])
            grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        downloads = [r for r in server.requests if r.path.endswith("/content")]
    assert len(downloads) == 1  # refused, not retried: the same server would send it again
    assert grown_kb < BOMB_MB * 1024 // 2  # the 64 MB were never held


def test_under_the_cap_the_same_encoded_download_is_read(tmp_path):
    with BatchServer() as server:
        server.encode_content = lambda content: (gzip.compress(content), {"Content-Encoding": "gzip"})
        settings = LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=tmp_path / "cache.sqlite", mode="batch") as client:
            assert client.batch is not None
            client.batch.poll_seconds = 0.01
            results = client.run([LLMRequest([user_message("Name a colour.")])])
    assert [r.ok for r in results] == [True]
