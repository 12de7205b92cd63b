"""torchcodec as a peer of ``benchmarks/frames.py``, run by a Python that has it (and torch).

PyPI's torchcodec needs a torch build of its own (0.16 and 0.17: a CUDA build, which runs on the
CPU), kept out of the project's environment: make a separate one, e.g.

    python3 -m venv ~/venvs/tc && ~/venvs/tc/bin/pip install torch==2.14.1 torchcodec

and give its Python to ``benchmarks/frames.py --torchcodec-python ~/venvs/tc/bin/python``. This
script needs nothing from the project. It reads one JSON task per line on stdin (``path``,
``stream``, ``indices``, ``seek_mode``, ``threads``) and answers each with a JSON line (``shape``,
``wall`` and ``cpu`` seconds of the decode alone: opening the file and ``get_frames_at``, torch
imported beforehand as in a user's process; or ``error``) followed by the frames' raw bytes (RGB,
N x H x W x 3 uint8). Its first line says it is ready and which versions it runs.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    import torch
    import torchcodec
    from torchcodec.decoders import VideoDecoder

    out = sys.stdout.buffer
    ready = {"torchcodec": torchcodec.__version__, "torch": torch.__version__}
    out.write(json.dumps(ready).encode() + b"\n")
    out.flush()
    for line in sys.stdin:
        task = json.loads(line)
        data = b""
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            decoder = VideoDecoder(
                task["path"],
                stream_index=task["stream"],
                seek_mode=task["seek_mode"],
                num_ffmpeg_threads=task["threads"],
                dimension_order="NHWC",
            )
            frames = decoder.get_frames_at(task["indices"]).data.numpy()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            data = frames.tobytes()
            answer = {"shape": list(frames.shape), "wall": wall, "cpu": cpu}
        except Exception as err:  # reported as the peer's verdict on this shape
            answer = {"error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
        out.write(json.dumps(answer).encode() + b"\n" + data)
        out.flush()


if __name__ == "__main__":
    main()
