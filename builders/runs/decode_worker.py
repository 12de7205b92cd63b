"""A frame-decoding worker process (:class:`builders.runs.frames.DecodeProcesses`).

Reads ``(source, spec)`` pickles from stdin until it closes and writes one reply pickle per clip
to what was stdout; stdout itself is pointed at stderr, so a library's print cannot corrupt the
replies. Ctrl-C is ignored: the parent handles it and closes the worker's input.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from builders.runs.frames import decode_reply  # lazy: the signal is ignored before the imports

    tasks = sys.stdin.buffer
    while True:
        try:
            source, spec = pickle.load(tasks)
        except EOFError:
            return
        pickle.dump(decode_reply(source, spec), replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


if __name__ == "__main__":
    main()
