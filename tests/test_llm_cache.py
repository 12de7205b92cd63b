"""The reply cache: key recipe, storage, JSONL export/import, concurrent writers."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from builders.llm import (
    CachedReply,
    ReplyCache,
    cache_key,
    export_replies,
    import_replies,
    load_replies,
    user_message,
)
from builders.llm.messages import data_url_bytes
from builders.video.sampler import frames_to_data_urls


def _key(**changes):
    base = dict(
        base_url="http://h/v1",
        model="m",
        messages=[user_message("hi")],
        schema=None,
        temperature=0.0,
        seed=0,
        max_tokens=None,
        extra_body=None,
        prompt=("p", "1"),
    )
    return cache_key(**{**base, **changes})


def _reply(key: str, **changes) -> CachedReply:
    row = dict(
        key=key,
        model="m",
        model_reported="m-001",
        prompt_name="p",
        prompt_version="1",
        raw='{"a": 1}',
        value={"a": 1},
        prompt_tokens=10,
        completion_tokens=3,
        attempts=1,
        created="2026-01-01T00:00:00Z",
        elapsed=0.25,
    )
    return CachedReply(**{**row, **changes})


def test_key_changes_with_everything_that_changes_a_reply():
    base = _key()
    assert len(base) == 64 and base == _key()
    variants = [
        _key(base_url="http://other/v1"),
        _key(model="m2"),
        _key(messages=[user_message("hi!")]),
        _key(schema={"type": "object"}),
        _key(temperature=0.7),
        _key(seed=1),
        _key(max_tokens=100),
        _key(extra_body={"reasoning_effort": "low"}),
        _key(prompt=("p", "2")),
        _key(prompt=None),
    ]
    assert len(set(variants)) == len(variants) and base not in variants
    assert _key(base_url="http://h/v1/") == base  # one endpoint, one spelling


def test_key_hashes_image_bytes(monkeypatch):
    url, other = frames_to_data_urls([np.zeros((8, 8, 3), np.uint8), np.full((8, 8, 3), 200, np.uint8)])
    assert data_url_bytes(url)[:3] == b"\xff\xd8\xff"  # JPEG bytes
    key = _key(messages=[user_message("x", [url])])
    assert key == _key(messages=[user_message("x", [url])])
    assert key != _key(messages=[user_message("x", [other])])
    # The key is the hash of the bytes, not of the URL text: same bytes, same key, independently computed.
    digest = hashlib.sha256(base64.b64decode(url.split(",", 1)[1])).hexdigest()
    manual = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": f"sha256:{digest}"}}]}
    manual["content"].append({"type": "text", "text": "x"})
    from builders.llm.cache import _hash_images

    assert _hash_images([user_message("x", [url])]) == [manual]
    # Credentials play no part.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-something-else")
    assert _key(messages=[user_message("x", [url])]) == key


def test_put_get_stats_and_replace(tmp_path):
    path = tmp_path / "sub" / "cache.sqlite"
    with ReplyCache(path) as cache:
        cache.put(_reply("b" * 64))
        cache.put(_reply("a" * 64, value=["x"], raw='["x"]', prompt_name=None, prompt_version=None))
        cache.put(_reply("b" * 64, raw='{"a": 2}', value={"a": 2}))  # refresh overwrites
        assert len(cache) == 2
        assert cache.get("b" * 64).value == {"a": 2}
        assert cache.get("c" * 64) is None
        assert [r.key for r in cache] == ["a" * 64, "b" * 64]
        stats = cache.stats()
    assert stats["replies"] == 2 and stats["prompt_tokens"] == 20 and stats["completion_tokens"] == 6
    assert stats["models"] == {"m-001": 2}
    assert stats["prompts"] == {"(none)": 1, "p@1": 1}


def test_export_import_round_trip_is_deterministic(tmp_path):
    source = tmp_path / "a.sqlite"
    with ReplyCache(source) as cache:
        for i in (3, 1, 2):
            cache.put(_reply(f"{i:064d}", value={"i": i, "text": "ünïcode"}))
    first, second = tmp_path / "r1.jsonl", tmp_path / "r2.jsonl"
    assert export_replies(source, first) == 3
    lines = first.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["key"] for line in lines] == sorted(json.loads(line)["key"] for line in lines)
    assert "ünïcode" in lines[0]
    # Import into a fresh cache and export again: byte-identical.
    assert import_replies(first, tmp_path / "b.sqlite") == 3
    export_replies(tmp_path / "b.sqlite", second)
    assert first.read_bytes() == second.read_bytes()
    memory = load_replies(first)
    assert memory.get(f"{2:064d}").value == {"i": 2, "text": "ünïcode"}


def test_bad_replies_file_names_the_line(tmp_path):
    path = tmp_path / "r.jsonl"
    good = _reply("a" * 64).to_json()
    path.write_text(good + "\n\n" + '{"key": "x"}\n')
    with pytest.raises(ValueError, match=r"r\.jsonl, line 3: not a recorded reply: missing fields"):
        load_replies(path)
    path.write_text("not json\n")
    with pytest.raises(ValueError, match="line 1"):
        import_replies(path, tmp_path / "c.sqlite")
    with pytest.raises(FileNotFoundError, match="no reply cache"):
        export_replies(tmp_path / "missing.sqlite", tmp_path / "out.jsonl")


def test_concurrent_writer_processes(tmp_path):
    """Four processes writing 300 rows each into one file at the same time: nothing lost."""
    path = tmp_path / "shared.sqlite"
    script = textwrap.dedent(
        """
        import sys, time
        from pathlib import Path
        from builders.llm.cache import CachedReply, ReplyCache
        path, worker, workers = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        # Start together (imports take different times), so the writes really overlap.
        (path.parent / f"ready-{worker}").touch()
        while len(list(path.parent.glob("ready-*"))) < workers:
            time.sleep(0.005)
        with ReplyCache(path) as cache:
            for i in range(300):
                cache.put(CachedReply(f"{worker}-{i:04d}", "m", None, None, None, "r", {"w": worker, "i": i},
                                      1, 1, 1, "2026-01-01T00:00:00Z", 0.0))
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(w), "4"], stderr=subprocess.PIPE)
        for w in range(4)
    ]
    errors = [p.communicate(timeout=120)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    with ReplyCache(path) as cache:
        assert len(cache) == 1200
        assert cache.get("3-0299").value == {"w": 3, "i": 299}
        assert {r.value["w"] for r in cache} == {0, 1, 2, 3}
