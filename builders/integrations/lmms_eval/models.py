"""Which frames the lmms-eval model of this run sends, seen from the task.

lmms-eval never tells a task which model runs it, but the model is on the call stack whenever a task
function runs: ``simple_evaluate`` holds it (``lm``) while the tasks are built (``process_docs``),
and the model's own ``generate_until`` calls ``doc_to_visual`` (``self``). :func:`calling_model`
finds it there, and :func:`model_frames` says what it does with a video (lmms-eval 0.7.2 and 0.7.3,
``lmms_eval/models/simple/openai.py`` and ``lmms_eval/models/chat/openai.py``):

- the simple ``openai`` model (``--force_simple``) decodes the clip itself with the
  ``lmms-eval-openai`` rule (``max_frames_num``, default 10; ``video_fps``) and sends full-size PNG
  frames: the task hands it the clip and records that spec;
- the chat ``openai`` model (the default) would sample through qwen-vl-utils, resize every frame
  (e.g. to 392x280) and, through an encoder cache keyed by ``id()`` of frames already freed, send
  earlier frames again: the task hands it the frames of the same ``lmms-eval-openai`` spec as images
  (kept alive for the request, sent as they are), so it sends what the simple model would, before
  the text; with ``pass_video_url`` the server samples the clip: unknown;
- any other model samples the clip its own way: the task hands it the clip and records the frames
  as unknown (``sampled_by``), which the report refuses to lay beside other runs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

from builders.integrations.items import unknown_frames
from builders.video.frame_spec import FrameSpec

RULE = "lmms-eval-openai"
_SIMPLE = ("lmms_eval.models.simple.openai", "OpenAICompatible")
_CHAT = ("lmms_eval.models.chat.openai", "OpenAICompatible")


@dataclass(frozen=True)
class ModelFrames:
    """What the task hands the model (``"video"``: the clip's path; ``"images"``: the frames of
    ``spec``) and what the model then sends (``spec``; None: frames no registered rule names)."""

    model: str
    hand: str
    spec: FrameSpec | None
    settings: str = ""

    def record(self) -> dict[str, Any]:
        """The ``frames`` value of the run's provenance."""
        if self.spec is not None:
            return self.spec.to_json()
        return unknown_frames(f"lmms-eval model {self.model}{f' ({self.settings})' if self.settings else ''}")


def _is_lmms_model(value: Any) -> bool:
    return any(c.__module__ == "lmms_eval.api.model" and c.__name__ == "lmms" for c in type(value).__mro__)


def calling_model() -> Any | None:
    """The lmms-eval model instance on the call stack (see the module doc), or None."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        local = frame.f_locals
        for name in ("self", "lm"):
            if name in local and _is_lmms_model(local[name]):
                return local[name]
        frame = frame.f_back
    return None


def _name(model: Any) -> tuple[str, str]:
    return type(model).__module__, type(model).__qualname__


def _openai_spec(model: Any) -> FrameSpec:
    fps = getattr(model, "video_fps", None)
    count = int(getattr(model, "max_frames_num", 10))
    return FrameSpec(fps=float(fps) if fps and fps > 0 else None, num_frames=count, rule=RULE)


def _same_method(model: Any, cls_name: tuple[str, str], method: str) -> bool:
    """``method`` is the one of the class ``cls_name`` itself (a subclass may sample otherwise)."""
    for cls in type(model).__mro__:
        if method in cls.__dict__:
            return (cls.__module__, cls.__qualname__) == cls_name
    return False


def model_frames(model: Any | None) -> ModelFrames:
    """What ``model`` (None: not found on the stack) sends of a clip; see the module doc."""
    if model is None:
        return ModelFrames("(not found on the call stack)", "video", None)
    module, name = _name(model)
    label = f"{module}.{name}"
    settings = ", ".join(
        f"{k}={getattr(model, k)}" for k in ("max_frames_num", "video_fps", "fps", "max_num_frames", "nframes")
        if getattr(model, k, None) is not None
    )  # fmt: skip
    if (module, name) == _SIMPLE or (
        _same_method(model, _SIMPLE, "encode_video") and _same_method(model, _SIMPLE, "generate_until")
    ):
        return ModelFrames(label, "video", _openai_spec(model), settings)
    if (module, name) == _CHAT or _same_method(model, _CHAT, "generate_until"):
        if getattr(model, "pass_video_url", False):
            return ModelFrames(label, "video", None, f"{settings}, pass_video_url: the server samples")
        return ModelFrames(label, "images", _openai_spec(model), settings)
    return ModelFrames(label, "video", None, settings)
