"""A BQA split as supervised fine-tuning data (the paper's "(FT)" rows: VideoLLaMA2 LoRA-tuned on the
train split, Table 5), in the formats the trainers people use read:

- ``llava``: the LLaVA-style conversation JSON that VideoLLaMA2 (and LLaVA-NeXT) train from: a JSON
  list of ``{"id", "video", "conversations": [{"from": "human", "value": "<video>\\n..."}, {"from":
  "gpt", "value": "<answer>"}]}``, ``video`` relative to the export folder (``--data_folder``).
- ``llama-factory``: LLaMA-Factory's sharegpt format with OpenAI-style messages: a JSON list of
  ``{"messages": [{"role": "user", ...}, {"role": "assistant", ...}], "videos": [...]}`` (or
  ``"images"``, one ``<image>`` per frame), with the ``dataset_info.json`` entry LLaMA-Factory needs
  (``formatting: sharegpt``, ``columns``, ``tags``); paths relative to its ``media_dir``.
- ``ms-swift``: ms-swift's standard JSONL (``{"messages": [...], "videos": [...]}`` or ``"images"``),
  with absolute paths as its documentation prefers.

The user turn is the evaluation's own single-word prompt (``bqa_answer_single_word``), the target the
correct choice in one word (the paper: "answer with the correct choice in a single word"). Media:
``video`` (the clips, audio already removed) or ``frames`` (the frames the evaluation would show,
as JPEGs). ``configs/`` holds ready runs of each trainer with Table 5's hyperparameters (LoRA r 128,
alpha 256, dropout 0.05, bf16, seed 42, max length 2048, batch 4, 1 epoch, the 7 projection modules).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bqa.paper import FINETUNED_MODEL, LORA_HYPERPARAMETERS
from builders.evaluation.bqa_answers import SINGLE_WORD, answer_prompt, format_options
from builders.files.folders import atomic_directory, entry_path
from builders.files.jsonio import (
    copy_file_atomic,
    write_bytes_atomic,
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)
from builders.hub.split_data import SplitData
from builders.runs.frames import jpeg_bytes
from builders.video.frame_spec import FrameSpec

LLAVA, LLAMA_FACTORY, MS_SWIFT = "llava", "llama-factory", "ms-swift"
FORMATS: tuple[str, ...] = (LLAVA, LLAMA_FACTORY, MS_SWIFT)
MEDIA: tuple[str, ...] = ("video", "frames")
#: A model each messages-format trainer supports with video (the paper tuned VideoLLaMA2, which only
#: its own repository trains: the LLaVA-style file and configs/videollama2_lora.sh).
DEFAULT_MODEL, DEFAULT_TEMPLATE = "Qwen/Qwen2-VL-7B-Instruct", "qwen2_vl"
VIDEO_TOKEN, IMAGE_TOKEN = "<video>", "<image>"
#: Left in every folder this export writes: only such a folder (or an empty or new one) is replaced.
FINETUNE_MARKER = ".vqabench-finetune"


@dataclass
class FinetuneExport:
    """What :func:`export_finetune_data` wrote: the export folder, and per format its data file(s)."""

    folder: Path
    split: str
    items: int
    media: str
    files: dict[str, list[Path]] = field(default_factory=dict)
    configs: list[Path] = field(default_factory=list)

    def format(self) -> str:
        lines = [f"fine-tuning data: {self.items} {self.split} items, media {self.media}, in {self.folder}"]
        lines += [
            f"  {name}: {', '.join(str(p.relative_to(self.folder)) for p in paths)}"
            for name, paths in self.files.items()
        ]
        lines.append(f"  configs (Table 5): {', '.join(p.name for p in self.configs)}")
        return "\n".join(lines)  # fmt: skip


def _prompt(row: dict[str, Any], frame_description: str) -> str:
    return answer_prompt(SINGLE_WORD).render(
        frame_description=frame_description, question=row["question"], options=format_options(row["choices"])
    )


def _write_media(data: SplitData, row_id: str, tmp: Path, media: str, frames: FrameSpec) -> list[str]:
    """The item's media under ``tmp`` (``videos/<id>.mp4``, or ``frames/<id>/NN.jpg``); their relative
    paths. The id names a file through :func:`entry_path`: an id that would leave the folder is refused."""
    where = f"{data.source}, {data.split} split, row id {row_id!r}"
    source = data.video(row_id)
    if media == "video":
        target = entry_path(tmp / "videos", f"{row_id}.mp4", where)
        if isinstance(source, Mapping) and source.get("bytes"):  # a Hub folder's embedded clip
            write_bytes_atomic(target, source["bytes"])
        elif isinstance(source, Mapping):
            copy_file_atomic(source["path"], target)
        elif isinstance(source, bytes | bytearray | memoryview):  # the clip's bytes themselves
            write_bytes_atomic(target, bytes(source))
        else:
            copy_file_atomic(source, target)
        return [target.relative_to(tmp).as_posix()]
    folder = entry_path(tmp / "frames", row_id, where)
    sampled = frames.sample(source)
    return [
        write_bytes_atomic(folder / f"{k:02d}.jpg", jpeg_bytes(rgb)).relative_to(tmp).as_posix()
        for k, rgb in enumerate(sampled.frames)
    ]


def export_finetune_data(
    data: SplitData,
    out: str | Path,
    *,
    formats: Sequence[str] = FORMATS,
    media: str = "video",
    frames: FrameSpec | None = None,
    limit: int | None = None,
    model: str = DEFAULT_MODEL,
    template: str = DEFAULT_TEMPLATE,
    protect: Mapping[str, str | Path] | None = None,
) -> FinetuneExport:
    """Write ``data``'s rows (the first ``limit``) to ``out`` in ``formats`` with ``media``; see the
    module doc. ``frames``: which frames (``frames`` media; default 16 uniform, the paper's setting for
    open models). ``model``/``template``: what the LLaMA-Factory and ms-swift configs tune.

    ``out`` is written as a whole (:func:`~builders.files.folders.atomic_directory`): only a new or
    empty folder, or one this export wrote, is replaced; never one of ``protect`` (the dataset read)."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"unknown format(s) {unknown}; choose from {', '.join(FORMATS)}")
    if media not in MEDIA:
        raise ValueError(f"unknown media {media!r}; choose from {', '.join(MEDIA)}")
    if media == "frames" and LLAVA in formats:
        raise ValueError(
            "the LLaVA-style format (VideoLLaMA2, LLaVA-NeXT) documents one video file per item: use "
            "--media video for it, or --format llama-factory / ms-swift for frames"
        )
    frames = frames or FrameSpec(fps=None, num_frames=16)
    out = Path(out).resolve()
    with atomic_directory(out, marker=FINETUNE_MARKER, protect=protect or {}) as tmp:
        result = _export(data, out, tmp, formats, media, frames, limit, model, template)
    result.files = {k: [out / p.relative_to(tmp) for p in v] for k, v in result.files.items()}
    result.configs = [out / p.relative_to(tmp) for p in result.configs]
    return result


def _export(
    data: SplitData, out: Path, tmp: Path, formats: Sequence[str], media: str, frames: FrameSpec,
    limit: int | None, model: str, template: str,
) -> FinetuneExport:  # fmt: skip
    """Write the export into ``tmp``; the paths the files name are those they will have under ``out``."""
    rows = data.rows[:limit] if limit else data.rows
    items = []
    for row in rows:
        paths = _write_media(data, row["id"], tmp, media, frames)
        described = "frames" if media == "video" else frames.describe(len(paths))
        items.append((row, paths, _prompt(row, described)))
    name = f"bqa_{data.split}"
    result = FinetuneExport(out, data.split, len(items), media)
    if LLAVA in formats:
        records = [
            {"id": row["id"], "video": paths[0],
             "conversations": [{"from": "human", "value": f"{VIDEO_TOKEN}\n{prompt}"},
                               {"from": "gpt", "value": row["answer"]}]}
            for row, paths, prompt in items
        ]  # fmt: skip
        result.files[LLAVA] = [write_json_atomic(tmp / "llava" / f"{name}.json", records)]
    column = "videos" if media == "video" else "images"

    def messages(paths: list[str], prompt: str, answer: str) -> list[dict[str, str]]:
        tokens = VIDEO_TOKEN if media == "video" else IMAGE_TOKEN * len(paths)
        return [{"role": "user", "content": f"{tokens}{prompt}"}, {"role": "assistant", "content": answer}]

    if LLAMA_FACTORY in formats:
        folder = tmp / "llama_factory"
        records = [
            {"messages": messages(paths, prompt, row["answer"]), column: paths}
            for row, paths, prompt in items
        ]
        info = {name: {"file_name": f"{name}.json", "formatting": "sharegpt",
                       "columns": {"messages": "messages", column: column},
                       "tags": {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                                "assistant_tag": "assistant"}}}  # fmt: skip
        result.files[LLAMA_FACTORY] = [
            write_json_atomic(folder / f"{name}.json", records),
            write_json_atomic(folder / "dataset_info.json", info),
        ]
    if MS_SWIFT in formats:
        records = [{"messages": messages(paths, prompt, row["answer"]), column: [str(out / p) for p in paths]}
                   for row, paths, prompt in items]  # fmt: skip
        result.files[MS_SWIFT] = [write_jsonl_atomic(tmp / "ms_swift" / f"{name}.jsonl", records)]
    result.configs = _write_configs(out, tmp, name, result, media, model, template)
    return result


#: What VideoLLaMA2's own LoRA recipe sets beyond Table 5 (DAMO-NLP-SG/VideoLLaMA2,
#: scripts/custom/finetune_lora.sh; the paper: "others were set to default settings"). Without them
#: the trainer's defaults apply: vision-tower layer -1, learning rate 5e-5, no gradient accumulation.
VIDEOLLAMA2_RECIPE: dict[str, str] = {
    "--mm_vision_select_layer": "-2",
    "--mm_projector_lr": "2e-5",
    "--learning_rate": "2e-5",
    "--weight_decay": "0.",
    "--warmup_ratio": "0.03",
    "--lr_scheduler_type": "cosine",
    "--image_aspect_ratio": "pad",
    "--tf32": "True",
    "--gradient_checkpointing": "True",
}
#: The recipe's global batch (GLOBAL_BATCH_SIZE=128 over LOCAL_BATCH_SIZE=4 per device).
RECIPE_GLOBAL_BATCH = 128
BATCH_SIZE_NOTE = (
    "Table 5's 'batch size 4' on the paper's four A100 GPUs is ambiguous: 4 per device (the recipe's "
    "LOCAL_BATCH_SIZE, used here as per_device_train_batch_size), or 4 in all. Whether the authors kept the "
    f"recipe's global batch of {RECIPE_GLOBAL_BATCH} (gradient accumulation {RECIPE_GLOBAL_BATCH} / (GPUs x 4): 8 "
    "on 4 GPUs) is not said; videollama2_lora.sh keeps the recipe's, other trainers accumulate nothing."
)


def _write_configs(
    out: Path, tmp: Path, name: str, result: FinetuneExport, media: str, model: str, template: str
) -> list[Path]:
    """Table 5's hyperparameters, as a record and as one ready run per trainer exported for (written
    into ``tmp``, naming the paths under ``out``)."""
    hp = LORA_HYPERPARAMETERS
    modules = hp["lora_target_modules"]
    if not isinstance(modules, list | tuple):
        raise TypeError(f"LORA_HYPERPARAMETERS['lora_target_modules'] must be a list, got {modules!r}")
    targets = [str(m) for m in modules]
    folder = tmp / "configs"
    written = [
        write_json_atomic(
            folder / "table5.json",
            {
                "source": "BQA paper, Appendix B.1, Table 5",
                **hp,
                "batch_size_note": BATCH_SIZE_NOTE,
                "videollama2_recipe": {
                    "source": "DAMO-NLP-SG/VideoLLaMA2 scripts/custom/finetune_lora.sh",
                    "global_batch_size": RECIPE_GLOBAL_BATCH,
                    **VIDEOLLAMA2_RECIPE,
                },
            },
        )  # fmt: skip
    ]
    if LLAMA_FACTORY in result.files:
        config = {
            "model_name_or_path": model, "trust_remote_code": True,
            "stage": "sft", "do_train": True, "finetuning_type": "lora",
            "lora_rank": hp["lora_r"], "lora_alpha": hp["lora_alpha"], "lora_dropout": hp["lora_dropout"],
            "lora_target": ",".join(targets),
            "dataset": name, "dataset_dir": str(out / "llama_factory"), "media_dir": str(out),
            "template": template, "cutoff_len": hp["max_length"],
            **({"video_maxlen": 16} if media == "video" else {}),
            "output_dir": str(out / "saves" / "llama_factory_lora"),
            "per_device_train_batch_size": hp["batch_size"], "num_train_epochs": float(hp["epochs"]),  # type: ignore[arg-type]
            "bf16": hp["torch_dtype"] == "bfloat16", "seed": hp["seed"],
        }  # fmt: skip
        text = "# LLaMA-Factory LoRA SFT with the BQA paper's Table 5 hyperparameters (llamafactory-cli train <this>)\n"
        written.append(
            write_text_atomic(
                folder / "llamafactory_lora_sft.yaml", text + yaml.safe_dump(config, sort_keys=False)
            )
        )
    if MS_SWIFT in result.files:
        args = ["swift", "sft", "--model", model, "--train_type", "lora", "--dataset", str(out / result.files[MS_SWIFT][0].relative_to(tmp)),
                "--lora_rank", str(hp["lora_r"]), "--lora_alpha", str(hp["lora_alpha"]),
                "--lora_dropout", str(hp["lora_dropout"]), "--target_modules", *targets,
                "--torch_dtype", str(hp["torch_dtype"]), "--seed", str(hp["seed"]), "--max_length", str(hp["max_length"]),
                "--per_device_train_batch_size", str(hp["batch_size"]), "--num_train_epochs", str(hp["epochs"]),
                "--output_dir", str(out / "saves" / "ms_swift_lora")]  # fmt: skip
        written.append(_script(folder / "swift_sft.sh", "ms-swift LoRA SFT, Table 5", args))
    if LLAVA in result.files:
        args = ["torchrun", "--nproc_per_node", "${NPROC_PER_NODE:-1}", "videollama2/train.py",
                "--lora_enable", "True", "--lora_r", str(hp["lora_r"]), "--lora_alpha", str(hp["lora_alpha"]),
                "--lora_dropout", str(hp["lora_dropout"]),
                "--model_type", "videollama2", "--model_path", "mistralai/Mistral-7B-Instruct-v0.2",
                "--vision_tower", "openai/clip-vit-large-patch14-336", "--mm_projector_type", "stc_connector",
                "--pretrain_mm_mlp_adapter", f"{FINETUNED_MODEL.model_id}/mm_projector.bin",
                "--data_path", str(out / result.files[LLAVA][0].relative_to(tmp)), "--data_folder", str(out), "--num_frames", "16",
                "--bf16", "True", "--seed", str(hp["seed"]), "--model_max_length", str(hp["max_length"]),
                "--per_device_train_batch_size", str(hp["batch_size"]), "--num_train_epochs", str(hp["epochs"]),
                "--gradient_accumulation_steps",
                f"$(({RECIPE_GLOBAL_BATCH} / (${{NPROC_PER_NODE:-1}} * {hp['batch_size']})))",
                *(a for flag, value in VIDEOLLAMA2_RECIPE.items() for a in (flag, value)),
                "--output_dir", str(out / "saves" / "videollama2_lora")]  # fmt: skip
        title = (
            f"VideoLLaMA2 LoRA ({FINETUNED_MODEL.model_id}): Table 5's values, the rest as the repository's "
            f"recipe (scripts/custom/finetune_lora.sh); run from a VideoLLaMA2 checkout\n# {BATCH_SIZE_NOTE}"
        )
        written.append(_script(folder / "videollama2_lora.sh", title, args))  # fmt: skip
    return written


def _script(path: Path, title: str, args: list[str]) -> Path:
    """A shell script running ``args``, one option (with its values) per line."""
    quoted = [
        a if a.startswith("$") else shlex.quote(a) for a in args
    ]  # "${VAR:-1}", "$((...))": the shell's
    lines: list[list[str]] = []
    for arg in quoted:
        if not lines or arg.startswith("--"):
            lines.append([arg])
        else:
            lines[-1].append(arg)
    body = " \\\n  ".join(" ".join(line) for line in lines)
    return write_text_atomic(path, f"#!/bin/sh\n# {title}\nset -e\n{body}\n")
