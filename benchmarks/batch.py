"""Writing a round's batch files at the papers' sizes: time, peak memory, bytes and shards, per row.

Generates BQA-shaped requests (7,632 rows over 3,000 clips) and MarineLife-shaped ones (16,080 rows
over 2,000 videos), each with ``--frames`` JPEG frames of its clip, and runs them through the real
batch path (:class:`builders.llm.batch.BatchMode`: each request queued by an LLM session, its body
captured from the SDK, spooled on disk, then written as shards). Prints the totals and, to show both
are flat in the number of rows, the first half's per-row time and memory growth against the second's.

    python benchmarks/batch.py [--frames 8] [--size 128] [--max-mb 200]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from PIL import Image

from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message

SHAPES = {"BQA": (7_632, 3_000), "MarineLife": (16_080, 2_000)}


def clip_frames(clip: int, frames: int, size: int) -> list[str]:
    rng = np.random.default_rng(clip)
    urls = []
    for _ in range(frames):
        pixels = rng.integers(0, 255, (size * 3 // 4, size, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, "JPEG", quality=85)
        urls.append("data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode())
    return urls


def run(name: str, rows: int, clips: int, frames: int, size: int, max_mb: float) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    with tempfile.TemporaryDirectory() as folder:
        settings = LLMSettings(model="gpt-4o-2024-08-06", base_url="http://batch.invalid/v1", api_key_env=None,
                               progress=False)  # fmt: skip
        client = LLMClient(settings, cache_path=Path(folder) / "llm-cache.sqlite", mode="batch")
        batch = client.batch
        assert batch is not None
        batch.max_mb = max_mb
        images: dict[int, list[str]] = {}
        marks: list[tuple[float, int]] = []

        async def queue_all() -> None:
            async with client.session() as session:
                for row in range(rows):
                    clip = row % clips
                    urls = images.get(clip) or images.setdefault(clip, clip_frames(clip, frames, size))
                    if len(images) > 64:  # keep a few clips' frames, as the step's decode cache does
                        images.pop(next(iter(images)))
                    text = f"Row {row}. Which emotion does the person show?\nA. Happiness\nB. Anger\nC. Pleasure\nD. Sadness"
                    await session.complete(
                        LLMRequest([user_message(text, urls)], schema=schema, schema_name="A")
                    )
                    if row in (0, rows // 2, rows - 1):
                        marks.append((time.perf_counter(), tracemalloc.get_traced_memory()[0]))

        tracemalloc.start()
        started = time.perf_counter()
        asyncio.run(queue_all())
        shards = batch.write_round()
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        total = sum(s.bytes for s in shards)
        (t0, m0), (t1, m1), (t2, m2) = marks
        first, second = (t1 - t0) / (rows // 2), (t2 - t1) / (rows - 1 - rows // 2)
        print(f"{name}: {rows:,} rows over {clips:,} clips, {frames} frames of {size}px: {elapsed:.1f} s "
              f"({1000 * elapsed / rows:.2f} ms a row), peak traced memory {peak / 2**20:.1f} MB, "
              f"{total / 2**20:,.1f} MB in {len(shards)} shard(s) ({total / rows / 1024:.1f} KB a row)")  # fmt: skip
        print(f"  per row, second half / first half: time {second / first:.2f}x; memory growth first half "
              f"{(m1 - m0) / (rows // 2):.0f} B a row, second half {(m2 - m1) / (rows - 1 - rows // 2):.0f} B a row")  # fmt: skip
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--size", type=int, default=128, help="frame width in pixels")
    parser.add_argument("--max-mb", type=float, default=200.0)
    parser.add_argument("--only", choices=sorted(SHAPES))
    args = parser.parse_args()
    for name, (rows, clips) in SHAPES.items():
        if args.only in (None, name):
            run(name, rows, clips, args.frames, args.size, args.max_mb)


if __name__ == "__main__":
    main()
