"""Video frames: open a clip (path, bytes or a datasets ``{path, bytes}`` value), index the frames a
full sequential decode outputs, sample them exactly, encode them for a chat request, remove audio.

Depends on nothing else in the project but :mod:`builders.files`. The researcher API is
re-exported here (resolved on first use, so importing the package does not load PyAV)::

    from builders.video import sample_frames, frames_to_data_urls
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ClipReader": "builders.video.sampler",
    "Frames": "builders.video.sampler",
    "sample_frames": "builders.video.sampler",
    "frames_to_data_urls": "builders.video.sampler",
    "remove_audio": "builders.video.remux",
    "VideoError": "builders.video.source",
    "FrameSpec": "builders.video.frame_spec",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'builders.video' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
