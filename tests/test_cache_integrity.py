"""Damaged caches are never used silently (issue 32, case 5): every reply-cache row carries a content
hash, checked on every read; frame-cache files carry the hash of each frame.

The bit-flip measurement: a real SQLite reply cache filled through the client from the real test chat
server, then, one at a time, 200 random single bits of the file flipped and the same requests asked
again. Each flip is classified: no effect; detected, as a named error (SQLite cannot read the file),
as a row restored (a damaged key or index: the row is found again, nothing paid) or as a damaged row
logged and asked again (paid again, counted); dropped without notice (asked again, nothing logged);
or unnoticed (a reply that differs from the one recorded). The last two must never happen.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import sqlite3

import pytest
from test_unfinished_runs import llm, vqabench

from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message
from builders.llm.cache import CacheDamaged, export_replies, read_replies
from builders.scripted.bqa_responder import BQAResponder, schema_name
from builders.scripted.chat_requests import frames_digest, image_urls
from builders.testing.chat_server import ChatServer

SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "confidence": {"type": "integer"},
        "reason": {"type": "string"},
    },
    "required": ["answer", "confidence", "reason"],
}
LABELS = ("Happiness", "Pleasure", "Anger", "Sadness")


def requests(n: int = 24) -> list[LLMRequest]:
    return [
        LLMRequest(
            [user_message(f"Item {i}: which emotion group fits clip {i:03d}?")], SCHEMA, ("probe", "1")
        )
        for i in range(n)
    ]


def answer(body) -> dict:
    """A deterministic reply per request, independent of the cache under test."""
    text = json.dumps(body["messages"], sort_keys=True)
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    parts = ("shoulders", "hands", "head", "stance")
    return {
        "answer": LABELS[h % 4],
        "confidence": h % 100,
        "reason": f"The person's {parts[h // 4 % 4]} and slow movement over the clip fit {LABELS[h % 4]} best.",
    }


def settings(server: ChatServer) -> LLMSettings:
    return LLMSettings(model="m", base_url=server.url, api_key_env=None, progress=False, max_retries=0)


def test_single_bit_flips_in_the_reply_cache_are_never_used_unnoticed(tmp_path, caplog):
    flips, seed = 200, 32
    with ChatServer(model=None) as server:
        server.handler = answer
        pristine = tmp_path / "cache.sqlite"
        with LLMClient(settings(server), cache_path=pristine) as client:
            expected = [r.value for r in client.run(requests())]
        assert len(server.chat_requests) == 24
        data = pristine.read_bytes()
        assert not (tmp_path / "cache.sqlite-wal").exists()  # checkpointed on close: one file holds it all
        rng = random.Random(seed)
        outcome: dict[str, int] = {"no effect": 0, "named error": 0, "detected, restored": 0,
                                   "detected, asked again": 0, "dropped without notice, asked again": 0,
                                   "unnoticed": 0}  # fmt: skip
        paid_again, unnoticed = 0, []
        for trial in range(flips):
            offset, bit = rng.randrange(len(data)), rng.randrange(8)
            damaged = bytearray(data)
            damaged[offset] ^= 1 << bit
            path = tmp_path / f"flip-{trial}.sqlite"
            path.write_bytes(bytes(damaged))
            server.reset()
            caplog.clear()
            try:
                with caplog.at_level(logging.WARNING), LLMClient(settings(server), cache_path=path) as client:
                    got = [r.value if r.ok else r.error for r in client.run(requests())]
                    noticed, restored = bool(client.cache.damaged), client.cache.repaired
            except CacheDamaged as err:
                assert str(path) in str(err) and "\n" not in str(err)
                outcome["named error"] += 1
                continue
            finally:
                for leftover in tmp_path.glob(f"flip-{trial}.sqlite*"):
                    leftover.unlink()
            asked = len(server.chat_requests)
            paid_again += asked
            if got != expected:
                outcome["unnoticed"] += 1
                unnoticed.append((offset, bit))
            elif asked and noticed:
                assert "is damaged" in caplog.text
                outcome["detected, asked again"] += 1
            elif asked:
                outcome["dropped without notice, asked again"] += 1
            elif restored:
                assert "restored" in caplog.text or "rebuilding it" in caplog.text
                outcome["detected, restored"] += 1
            else:
                outcome["no effect"] += 1
    print(f"{flips} single-bit flips in a {len(data)}-byte cache of 24 replies: {outcome}; "
          f"{paid_again} requests paid again in all")  # fmt: skip
    assert outcome["unnoticed"] == 0, unnoticed
    # Every row the lookup could not see was found: a damaged key or index costs no second payment.
    assert outcome["dropped without notice, asked again"] == 0
    assert sum(outcome.values()) == flips


def test_a_changed_letter_in_a_cached_reply_is_asked_again_not_used(tmp_path, caplog):
    with ChatServer(model=None) as server:
        server.handler = answer
        path = tmp_path / "cache.sqlite"
        with LLMClient(settings(server), cache_path=path) as client:
            first = client.run_one(requests(1)[0])
        # One letter of the stored value and of the raw reply: "Anger" -> "Angel", the way an edit would.
        with sqlite3.connect(path) as db:
            db.execute("UPDATE replies SET value = replace(value, 'a', 'e'), raw = replace(raw, 'a', 'e')")
        server.reset()
        with caplog.at_level(logging.WARNING), LLMClient(settings(server), cache_path=path) as client:
            again = client.run_one(requests(1)[0])
        assert again.value == first.value and not again.cached
        assert len(server.chat_requests) == 1
        assert (
            f"reply cache {path}: the row of key {first.key[:16]} is damaged (content hash mismatch)"
            in caplog.text
        )
        # Asked again, the row is sound once more.
        server.reset()
        with LLMClient(settings(server), cache_path=path) as client:
            assert client.run_one(requests(1)[0]).cached and not client.cache.damaged

        # Replay mode sends nothing: a damaged row is a named miss.
        with sqlite3.connect(path) as db:
            db.execute("UPDATE replies SET raw = raw || ' '")
        with (
            LLMClient(settings(server), cache_path=path, mode="replay") as client,
            pytest.raises(Exception) as err,
        ):
            client.run_one(requests(1)[0])
        assert "damaged recorded reply" in str(err.value) and str(path) in str(err.value)


def test_recorded_replies_carry_their_hash_and_a_changed_row_is_refused(tmp_path):
    with ChatServer(model=None) as server:
        server.handler = answer
        with LLMClient(settings(server), cache_path=tmp_path / "c.sqlite") as client:
            client.run(requests(3))
    export_replies(tmp_path / "c.sqlite", tmp_path / "r.jsonl")
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert all(len(json.loads(line)["sha256"]) == 64 for line in lines)
    assert len(read_replies(tmp_path / "r.jsonl")) == 3
    row = json.loads(lines[1])
    row["value"]["confidence"] += 1
    (tmp_path / "r.jsonl").write_text("\n".join([lines[0], json.dumps(row), lines[2]]) + "\n")
    with pytest.raises(ValueError, match=r"r\.jsonl, line 2: .*does not match its sha256"):
        read_replies(tmp_path / "r.jsonl")
    # A cache with a damaged row is not exported as if it were sound.
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        db.execute("UPDATE replies SET prompt_tokens = prompt_tokens + 1 WHERE rowid = 1")
    with pytest.raises(CacheDamaged, match="1 damaged row"):
        export_replies(tmp_path / "c.sqlite", tmp_path / "again.jsonl")
    assert not (tmp_path / "again.jsonl").exists()


def test_a_row_whose_digest_was_set_to_null_is_refused_and_asked_again(tmp_path, caplog):
    """No older cache format exists to accept a row without a digest from (issue 37, item 14): such a
    row is damaged, named and asked again, never used (the old code gave it a digest and used it)."""
    path = tmp_path / "cache.sqlite"
    with ChatServer(model=None) as server:
        server.handler = answer
        with LLMClient(settings(server), cache_path=path) as client:
            first = client.run(requests(2))
        with sqlite3.connect(path) as db:
            db.execute("UPDATE replies SET digest = NULL, value = replace(value, 'e', 'E') WHERE key = ?",
                       (first[0].key,))  # fmt: skip
        server.reset()
        with caplog.at_level(logging.WARNING), LLMClient(settings(server), cache_path=path) as client:
            again = client.run(requests(2))
        assert len(server.chat_requests) == 1  # the row without a digest, and only it, asked again
    assert [r.value for r in again] == [r.value for r in first]
    assert (not again[0].cached, again[1].cached) == (True, True)
    assert (
        f"reply cache {path}: the row of key {first[0].key[:16]} is damaged (no content hash)" in caplog.text
    )


# --- real vqabench processes ------------------------------------------------------------------------


def test_a_damaged_frame_cache_file_is_decoded_again_not_sent(tmp_path):
    """STEP2 writes each clip's frames to ``<work>/frames``; STEP4, in the next run, reads them back. A
    byte flipped inside each file's JPEG data must not reach the endpoint: every STEP4 request shows the
    frames STEP2 showed (a full decode of the same clip)."""
    work = tmp_path / "work"
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        base = ["bqa", "build", "--sample", "--work", str(work), "--limit", "6", *llm(server)]
        first = vqabench([*base, "--steps", "candidates,clips,questions"])
        assert first.returncode == 0, first.stdout + first.stderr
        step2 = {frames_digest(image_urls(r.body)) for r in server.chat_requests}
        files = sorted((work / "frames").rglob("*.jpgs"))
        assert len(step2) == len(files) >= 4  # a clip of the sample's first 6 rows is shared
        for path in files:
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0x10  # inside a JPEG's entropy-coded data: still decodes, other pixels
            path.write_bytes(bytes(data))
        server.reset()
        rest = vqabench(base)
        assert rest.returncode == 0, rest.stdout + rest.stderr
        step4 = [r.body for r in server.chat_requests if schema_name(r.body) is None]
    assert len(step4) >= 4
    assert {frames_digest(image_urls(body)) for body in step4} <= step2
    assert (
        any(f"frame cache {f}: frame" in rest.stderr for f in files)
        and "does not match its sha256" in rest.stderr
    )


def test_one_changed_letter_in_a_cached_reply_does_not_change_a_prediction(built_samples, tmp_path):
    """``bqa evaluate`` twice over one reply cache; between the runs one cached reply is edited to name
    another choice. The second run must not score the edited reply: it asks again and says why."""
    work = built_samples["bqa"].work
    cache = tmp_path / "eval.sqlite"
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        args = ["bqa", "evaluate", "--data", str(work), "--split", "test", "--limit", "3", "--num-frames", "2",
                "--llm-cache", str(cache), *llm(server)]  # fmt: skip
        first = vqabench([*args, "--out", str(tmp_path / "a.jsonl")])
        assert first.returncode == 0, first.stdout + first.stderr
        before = {p["id"]: p["parsed_answer"] for p in read_jsonl(tmp_path / "a.jsonl")}
        with sqlite3.connect(cache) as db:
            key, value = db.execute("SELECT key, value FROM replies ORDER BY key LIMIT 1").fetchone()
            row = next(p for p in read_jsonl(tmp_path / "a.jsonl") if json.dumps(p["raw_output"]) == value)
            other = next(c for c in row["choices"] if c != row["parsed_answer"])
            db.execute("UPDATE replies SET raw = ?, value = ? WHERE key = ?", (other, json.dumps(other), key))
        server.reset()
        second = vqabench([*args, "--out", str(tmp_path / "b.jsonl")])
        assert second.returncode == 0, second.stdout + second.stderr
        assert len(server.chat_requests) == 1  # the damaged reply, asked again; the others were cached
    after = {p["id"]: p["parsed_answer"] for p in read_jsonl(tmp_path / "b.jsonl")}
    assert after == before
    assert (
        f"reply cache {cache}: the row of key {key[:16]} is damaged (content hash mismatch)" in second.stderr
    )
