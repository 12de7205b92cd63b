"""Progress of a step, per item: a tqdm bar (rate, ETA) on a terminal, a plain line every
:data:`PLAIN_SECONDS` otherwise (a log file gets progress it can be read by, not carriage returns).

In the lowest layer, beside the files, because every long loop reports through it: the step loop
(:mod:`builders.runs.llm_step`) and the LLM client's batches (the judge), so a command run from a
script or CI is never silent for minutes."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from tqdm.auto import tqdm

PLAIN_SECONDS = 10.0


class PlainProgress:
    """``update(n)`` like tqdm's; prints ``desc: done/total (pct), rate/s, ETA`` at most every
    ``every`` seconds, and once more at the end of a run that printed any."""

    def __init__(
        self, total: int, initial: int, desc: str, stream: TextIO, every: float | None = None
    ) -> None:
        self.total, self.n, self.desc, self.stream = total, initial, desc, stream
        self.every = PLAIN_SECONDS if every is None else every
        self._start_n = initial
        self._started = self._last = time.monotonic()
        self._printed = False

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            self._print(now)

    def line(self, now: float) -> str:
        elapsed = max(now - self._started, 1e-9)
        rate = (self.n - self._start_n) / elapsed
        left = self.total - self.n
        eta = f"{left / rate:.0f} s" if rate > 0 else "?"
        pct = 100 * self.n / self.total if self.total else 100.0
        return f"{self.desc}: {self.n}/{self.total} items ({pct:.0f}%), {rate:.1f} items/s, {elapsed:.0f} s, ETA {eta}"

    def _print(self, now: float) -> None:
        print(self.line(now), file=self.stream, flush=True)
        self._printed = True

    def close(self) -> None:
        if self._printed:
            self._print(time.monotonic())


@contextmanager
def progress_bar(
    total: int, initial: int, desc: str, stream: TextIO | None = None
) -> Iterator[tqdm | PlainProgress]:
    """One bar for one step: tqdm when ``stream`` (stderr) is a terminal, else :class:`PlainProgress`."""
    stream = stream or sys.stderr
    if stream.isatty():
        with tqdm(total=total, initial=initial, desc=desc, unit="item", file=stream) as bar:
            yield bar
        return
    plain = PlainProgress(total, initial, desc, stream)
    try:
        yield plain
    finally:
        plain.close()
