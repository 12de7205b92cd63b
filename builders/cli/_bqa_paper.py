"""``--preset bqa-paper``: the BQA paper's models, frames and Gemini safety settings (:mod:`bqa.paper`).

Argparse-cheap: :mod:`bqa.paper` loads when the preset is applied (importing the ``bqa`` package
loads its vocabulary and YAML, which every command's ``--help`` would pay for); the help names the
models from :data:`PAPER_MODEL_LABELS`, which a test checks against :data:`bqa.paper.MODELS`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from builders.cli._presets import Preset, extra_body_path, given_extra_body, register_preset

if TYPE_CHECKING:
    from bqa.paper import PaperModel

#: Table 1's model labels, in its order (bqa.paper.MODELS), and the STEP2-4 model.
PAPER_MODEL_LABELS = ("Gemini", "GPT-4o", "Phi-3.5", "Qwen2-VL", "LLaVA-NeXT", "VideoLLaMA2")
GENERATION_MODEL_ID = "gemini-1.5-pro"

SAFETY_KEYS = ("safety_settings", "safetySettings")
SAFETY_NOT_SENT = (
    "not sent: Gemini's OpenAI-compatible endpoint documents no field for safety settings (its "
    "extra_body.google takes e.g. cached_content and thinking_config; a safety_settings field there has been "
    "reported refused with HTTP 400); pass them with --llm-extra-body where an endpoint takes them (Vertex AI's "
    "OpenAI-compatible endpoint: extra_body.google.safety_settings)"
)


def safety_record(args: argparse.Namespace) -> dict[str, Any]:
    """Table 6's settings, and whether this run's request fields carry safety settings (and where)."""
    from bqa.paper import GEMINI_SAFETY_SETTINGS

    where = extra_body_path(given_extra_body(args), SAFETY_KEYS)
    return {
        "requested": [dict(s) for s in GEMINI_SAFETY_SETTINGS],
        "sent": where is not None,
        "where": where and f"request body: {where}",
        "note": None if where else SAFETY_NOT_SENT,
    }


def _model_settings(model: PaperModel, fill: Callable[[str, Any], None], args: argparse.Namespace) -> dict:
    fill("llm_model", model.model_id)
    if model.base_url:
        fill("llm_base_url", model.base_url)
        fill("llm_api_key_env", model.api_key_env)
    dest, other = ("fps", "num_frames") if model.fps else ("num_frames", "fps")
    if getattr(args, other) is None:
        fill(dest, model.fps or model.num_frames)  # sets it, or records a given value that differs
    else:  # the other kind of frame option was given: it wins, and is recorded
        fill(other, None)
    record: dict[str, Any] = {"paper_model": model.label, "model_id": model.model_id, "paper_name": model.paper_name,
                              "frames": model.frames_label}  # fmt: skip
    if model.model_id.startswith("gemini"):
        record["gemini_safety_settings"] = safety_record(args)
    return record


def _apply(args: argparse.Namespace, command: str, fill: Callable[[str, Any], None]) -> dict[str, Any]:
    from bqa.paper import GENERATION_MODEL, MODELS, paper_model

    if command == "bqa build":
        return {"steps": "STEP2-4", **_model_settings(GENERATION_MODEL, fill, args)}
    asked = args.llm_model
    if not asked:
        raise ValueError(
            "--preset bqa-paper evaluates one of the paper's models: pass --llm-model with one of "
            + ", ".join(f"{m.model_id} ({m.label})" for m in MODELS)
        )
    model = paper_model(asked)
    if model is None:
        raise ValueError(
            f"--preset bqa-paper: {asked!r} is not one of the paper's models ("
            + ", ".join(m.model_id for m in MODELS)
            + "); drop --preset to evaluate another model"
        )
    args.llm_model = None  # a label ("GPT-4o") becomes the id the paper's model is asked by
    return _model_settings(model, fill, args)


BQA_PAPER = register_preset(
    Preset(
        name="bqa-paper",
        help=f"build: {GENERATION_MODEL_ID} for STEP2-4 at 1 fps, Gemini safety settings BLOCK_NONE "
        "(Table 6) recorded; evaluate: --llm-model one of the paper's models ("
        + ", ".join(PAPER_MODEL_LABELS)
        + "), API models at 1 fps, open models 16 frames",
        commands=("bqa build", "bqa evaluate"),
        apply=_apply,
    )
)
