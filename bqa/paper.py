"""The BQA paper's experimental settings, as data: what ``--preset bqa-paper`` sets and records.

From the paper (Ozaki et al.): STEP2-4 ran on ``gemini-1.5-pro`` (Section 3, 7.5) with Gemini's
safety settings at ``BLOCK_NONE`` (Table 6); the evaluated models are those of Table 1 with the
Hugging Face names of Appendix B; API models saw 1 frame per second and open models 16 frames
(Table 1, ``#F``: ``*`` = 1 fps); VideoLLaMA2 was LoRA-tuned on the train split with Table 5's
hyperparameters. Where the paper spells an id two ways, the provider's id is used and the paper's
spelling is kept next to it (``gpt-4o-2024-0806`` in Appendix B, ``gpt-4o-0806`` in 7.5, both
OpenAI's ``gpt-4o-2024-08-06``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from builders.scoring.paper_values import PaperValues, load_paper_values

GEMINI_OPENAI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai"
OPENAI_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class PaperModel:
    """One model of the paper: its row label in Table 1, the id it is asked by, what the paper
    called it, and the frames it saw (``fps`` for API models, ``num_frames`` for open ones)."""

    label: str
    model_id: str
    paper_name: str
    kind: str  # "api" or "open"
    fps: float | None = None
    num_frames: int | None = None
    base_url: str | None = None  # API models: the provider's OpenAI-compatible endpoint
    api_key_env: str | None = None

    @property
    def frames_label(self) -> str:
        """Table 1's ``#F`` cell: ``*`` for 1 fps, else the number of frames."""
        return "*" if self.fps == 1.0 else f"{self.fps:g} fps" if self.fps else str(self.num_frames)


def published() -> PaperValues:
    """Every number the paper prints in Tables 1-5, from ``bqa/paper_values.json``."""
    return load_paper_values("bqa")


def frames_of(cell: str) -> dict[str, Any]:
    """A ``#F`` cell of Tables 1 and 4 as frame settings: ``*`` = 1 fps, else a number of frames."""
    return {"fps": 1.0, "num_frames": None} if cell == "*" else {"fps": None, "num_frames": int(cell)}


def _frames(label: str) -> dict[str, Any]:
    """Table 1's ``#F`` of a row."""
    return frames_of(next(r["frames"] for r in published().table("table1")["rows"] if r["label"] == label))


#: Table 1's models in its row order (Appendix B's names for the open models; frames: Table 1's #F).
MODELS: tuple[PaperModel, ...] = (
    PaperModel("Gemini", "gemini-1.5-pro", "gemini-1.5-pro", "api", **_frames("Gemini"),
               base_url=GEMINI_OPENAI_BASE_URL, api_key_env="GEMINI_API_KEY"),
    PaperModel("GPT-4o", "gpt-4o-2024-08-06", "gpt-4o-2024-0806", "api", **_frames("GPT-4o"),
               base_url=OPENAI_BASE_URL, api_key_env="OPENAI_API_KEY"),
    PaperModel("Phi-3.5", "microsoft/Phi-3.5-vision-instruct", "Phi-3.5", "open", **_frames("Phi-3.5")),
    PaperModel("Qwen2-VL", "Qwen/Qwen2-VL-7B-Instruct", "Qwen2-VL", "open", **_frames("Qwen2-VL")),
    PaperModel("LLaVA-NeXT", "lmms-lab/LLaVA-NeXT-Video-7B-Qwen2", "LLaVA-NeXT", "open", **_frames("LLaVA-NeXT")),
    PaperModel("VideoLLaMA2", "DAMO-NLP-SG/VideoLLaMA2-7B-Base", "VideoLLaMA2", "open", **_frames("VideoLLaMA2")),
)  # fmt: skip
#: The model of STEP2 (questions), STEP3 (filter) and STEP4 (Easy/Hard).
GENERATION_MODEL = MODELS[0]

#: Table 6: every harm category at BLOCK_NONE, as the paper lists them. HARM_CATEGORY_DANGEROUS is
#: an older (PaLM-era) category that Gemini models do not rate; it is kept because the paper lists it.
GEMINI_SAFETY_SETTINGS: tuple[dict[str, str], ...] = tuple(
    {"category": category, "threshold": "BLOCK_NONE"}
    for category in (
        "HARM_CATEGORY_DANGEROUS",
        "HARM_CATEGORY_HARASSMENT",
        "HARM_CATEGORY_HATE_SPEECH",
        "HARM_CATEGORY_SEXUALLY_EXPLICIT",
        "HARM_CATEGORY_DANGEROUS_CONTENT",
    )
)

#: Table 5's keys as the trainers' configs name them (the rest: the trainers' defaults).
_TABLE5_KEYS = {"max length": "max_length", "batch size": "batch_size", "epoch": "epochs"}


#: Table 5: VideoLLaMA2's LoRA tuning, from the published values.
LORA_HYPERPARAMETERS: dict[str, object] = {
    _TABLE5_KEYS.get(row, row.replace(" ", "_")): values["Value"]
    for row, values in published().row_values("table5").items()
}
FINETUNED_MODEL = MODELS[-1]  # "VideoLLaMA2 (FT)" in Tables 1 and 4


def paper_model(name: str) -> PaperModel | None:
    """The paper's model called ``name``: its id, its Table 1 label or the paper's spelling (any case)."""
    wanted = name.strip().lower()
    for model in MODELS:
        if wanted in (model.model_id.lower(), model.label.lower(), model.paper_name.lower()):
            return model
    return None
