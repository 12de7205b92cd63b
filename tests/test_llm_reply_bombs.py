"""The reply-size cap counts decoded bytes (issue 37, item 5): a 130 KB gzip or deflate body that
decodes to 128 MB was accepted whole (the cap counted the compressed bytes), and the process's
resident memory grew by hundreds of MB. Real ``vqabench`` processes against the local chat server
sending a real compressed bomb, under a cap lowered to 1 MB; the peak resident memory of each process
is measured (``os.wait4``)."""

from __future__ import annotations

import pytest
from test_llm_deadline import run_measured
from test_unfinished_runs import llm

from builders.scripted.bqa_responder import BQAResponder
from builders.testing.chat_faults import bomb_body
from builders.testing.chat_server import ChatServer, Fault

DECODED = 128 << 20  # 128 MB of reply text, 128 times the cap
CAP_MB = "1"


def evaluate(data, out, server: ChatServer) -> list[str]:
    return ["bqa", "evaluate", "--data", str(data), "--split", "test", "--out", str(out), "--limit", "2",
            "--num-frames", "2", *llm(server), "--llm-max-reply-mb", CAP_MB, "--llm-max-retries", "0",
            "--llm-concurrency", "1"]  # fmt: skip


@pytest.fixture(scope="module")
def clean_peak(built_samples, tmp_path_factory) -> int:
    """Peak resident MB of the same evaluation answered normally."""
    folder = tmp_path_factory.mktemp("clean")
    with ChatServer(model=None) as server:
        server.handler = BQAResponder()
        code, output, _, peak = run_measured(evaluate(built_samples["bqa"].hub, folder / "p.jsonl", server),
                                             folder / "log")  # fmt: skip
    assert code == 0, output
    return peak


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_bomb_is_refused_at_the_decoded_cap_with_memory_bounded(
    built_samples, tmp_path, clean_peak, encoding
):
    assert len(bomb_body(DECODED, encoding)) < 2**20  # under the cap as sent: only decoding shows it
    with ChatServer(model=None) as server:
        server.handler = lambda body: Fault.bomb(DECODED, encoding)
        code, output, _, peak = run_measured(
            evaluate(built_samples["bqa"].hub, tmp_path / "p.jsonl", server), tmp_path / "log"
        )
        asked = len(server.chat_requests)
    assert code == 1, output
    assert (
        f"2 x reply too large: the reply body decoded ({encoding}) grew past 1 MB (--llm-max-reply-mb)"
        in output
    )
    assert asked == 2  # one request per item, not retried: the same server would send it again
    assert not (tmp_path / "p.jsonl").exists()
    # Memory: a slice or two above the clean run's peak, nowhere near the 128 MB the bomb decodes to.
    assert peak < clean_peak + 32, (clean_peak, peak)
    print(f"{encoding} bomb: peak {peak} MB, clean run {clean_peak} MB")
