"""The one frames-to-JPEG encoder: what an LLM request shows of a frame, and what the tools save.

Every JPEG this project writes of a video frame goes through :func:`jpeg_bytes`, so a frame's bytes
(and with them the reply-cache keys, which hash the data URLs) are the same whichever path encoded
it: :func:`builders.video.sampler.frames_to_data_urls`, the step loop's frame cache and decode
workers (:mod:`builders.runs.frames`), ``vqabench frames --out-dir`` and the demo's contact sheet.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["JPEG_QUALITY", "jpeg_bytes"]

#: JPEG quality of every frame shown to an LLM (and the default of ``vqabench frames --out-dir``).
#: It is part of every request's bytes, hence of every reply-cache key: changing it re-asks everything.
JPEG_QUALITY = 85


def jpeg_bytes(rgb: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    """One H x W x 3 uint8 RGB frame as JPEG bytes (Pillow's encoder)."""
    import numpy as np  # lazy: the CLI reads JPEG_QUALITY for its help without loading them
    from PIL import Image

    if not 1 <= quality <= 95:
        raise ValueError(f"JPEG quality must be in 1..95, got {quality}")
    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"a frame must be an H x W x 3 uint8 RGB array, got {rgb.dtype} {rgb.shape}")
    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
