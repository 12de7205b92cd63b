"""``vqabench bqa finetune-data``: a split as SFT data, each format checked against its trainer's
documented schema (the checks below are written from the documentation, not from the exporter):

- VideoLLaMA2 README, "Data Format": a JSON list of {"id", "video": path relative to --data_folder,
  "conversations": [{"from": "human", "value": "<video>\\n..."}, {"from": "gpt", "value": ...}]}.
- LLaMA-Factory data/README.md, "Multimodal Video Dataset" and "OpenAI Format": a JSON list, the
  messages column holding {role, content} turns, user and assistant alternating, user first; the number
  of videos (images) equals the number of <video> (<image>) tokens; dataset_info.json gives file_name,
  formatting "sharegpt", columns {"messages", "videos"|"images"} and tags role_tag/content_tag/
  user_tag/assistant_tag; media paths are relative to media_dir (default dataset_dir).
- ms-swift docs, Customization/Custom-dataset.md: JSONL, "messages" required ({role, content}),
  "images"/"videos" lists of paths (absolute preferred), <image>/<video> tags where they go.
- Table 5 of the paper for the configs.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from PIL import Image

from bqa.data import open_split
from builders.cli import main as cli_main
from builders.files.jsonio import read_jsonl

TABLE5 = {"lora_r": 128, "lora_alpha": 256, "lora_dropout": 0.05, "torch_dtype": "bfloat16", "seed": 42,
          "max_length": 2048, "batch_size": 4, "epochs": 1}  # fmt: skip
TARGETS = ["o_proj", "gate_proj", "up_proj", "v_proj", "q_proj", "down_proj", "k_proj"]


def check_videollama2(path: Path, data_folder: Path, rows: dict) -> None:
    items = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(items, list) and len(items) == len(rows)
    for item in items:
        assert set(item) == {"id", "video", "conversations"}
        assert (data_folder / item["video"]).is_file() and not Path(item["video"]).is_absolute()
        turns = item["conversations"]
        assert [t["from"] for t in turns] == ["human", "gpt"] and all(
            set(t) == {"from", "value"} for t in turns
        )
        assert turns[0]["value"].startswith("<video>\n") and turns[0]["value"].count("<video>") == 1
        row = rows[item["id"]]
        assert turns[1]["value"] == row["answer"] and row["question"] in turns[0]["value"]


def check_llama_factory(folder: Path, media_dir: Path, column: str, token: str, n_rows: int) -> None:
    info = json.loads((folder / "dataset_info.json").read_text(encoding="utf-8"))
    ((name, entry),) = info.items()
    assert entry["formatting"] == "sharegpt" and entry["columns"] == {"messages": "messages", column: column}
    assert entry["tags"] == {
        "role_tag": "role",
        "content_tag": "content",
        "user_tag": "user",
        "assistant_tag": "assistant",
    }
    items = json.loads((folder / entry["file_name"]).read_text(encoding="utf-8"))
    assert isinstance(items, list) and len(items) == n_rows and name == "bqa_train"
    for item in items:
        roles = [m["role"] for m in item["messages"]]
        assert roles == ["user", "assistant"] and all(set(m) == {"role", "content"} for m in item["messages"])
        assert item["messages"][0]["content"].count(token) == len(item[column]) >= 1
        assert all((media_dir / p).is_file() for p in item[column])


def check_ms_swift(path: Path, column: str, token: str, n_rows: int) -> None:
    lines = read_jsonl(path)
    assert len(lines) == n_rows
    for line in lines:
        assert "messages" in line and set(line) <= {"messages", "images", "videos"}
        assert [m["role"] for m in line["messages"]] == ["user", "assistant"]
        assert line["messages"][0]["content"].count(token) == len(line[column])
        assert all(Path(p).is_absolute() and Path(p).is_file() for p in line[column])


def check_configs(configs: Path, files: set[str]) -> None:
    assert json.loads((configs / "table5.json").read_text())["lora_target_modules"] == TARGETS
    assert {
        k: v for k, v in json.loads((configs / "table5.json").read_text()).items() if k in TABLE5
    } == TABLE5
    if "llamafactory_lora_sft.yaml" in files:
        lf = yaml.safe_load((configs / "llamafactory_lora_sft.yaml").read_text())
        assert (lf["stage"], lf["finetuning_type"], lf["lora_rank"], lf["lora_alpha"], lf["lora_dropout"]) == (
            "sft", "lora", 128, 256, 0.05)  # fmt: skip
        assert lf["lora_target"].split(",") == TARGETS and lf["cutoff_len"] == 2048 and lf["seed"] == 42
        assert (lf["per_device_train_batch_size"], lf["num_train_epochs"], lf["bf16"]) == (4, 1.0, True)
        assert (Path(lf["dataset_dir"]) / "dataset_info.json").is_file() and lf["dataset"] == "bqa_train"
    for script in ("swift_sft.sh", "videollama2_lora.sh"):
        if script in files:
            text = (configs / script).read_text()
            words = text.replace("\\\n", " ").split()
            values = {"--lora_rank": "128", "--lora_r": "128", "--lora_alpha": "256", "--lora_dropout": "0.05",
                      "--seed": "42", "--per_device_train_batch_size": "4", "--num_train_epochs": "1",
                      "--max_length": "2048", "--model_max_length": "2048", "--torch_dtype": "bfloat16"}  # fmt: skip
            given = {w: words[i + 1] for i, w in enumerate(words[:-1]) if w in values}
            assert given and all(values[k] == v for k, v in given.items()), given
            if script == "swift_sft.sh":
                i = words.index("--target_modules")
                assert words[i + 1 : i + 8] == TARGETS
            if (
                script == "videollama2_lora.sh"
            ):  # the repository's recipe beside Table 5 (its finetune_lora.sh)
                recipe = {"--mm_vision_select_layer": "-2", "--learning_rate": "2e-5", "--mm_projector_lr": "2e-5",
                          "--lr_scheduler_type": "cosine", "--warmup_ratio": "0.03"}  # fmt: skip
                assert {w: words[i + 1] for i, w in enumerate(words[:-1]) if w in recipe} == recipe
                accumulation = text.split("--gradient_accumulation_steps ")[1].split(" \\\n")[0]
                assert accumulation == "$((128 / (${NPROC_PER_NODE:-1} * 4)))"
                for gpus in (1, 4):  # the shell's arithmetic: 32 on one GPU, 8 on the paper's four
                    done = subprocess.run(["sh", "-c", f"echo {accumulation}"], env={"NPROC_PER_NODE": str(gpus)},
                                          capture_output=True, text=True, check=True)  # fmt: skip
                    assert done.stdout.strip() == str(128 // (gpus * 4))
                assert "'batch size 4' on the paper's four A100 GPUs is ambiguous" in text
                subprocess.run(["sh", "-n", str(configs / script)], check=True)  # the script parses
                note = json.loads((configs / "table5.json").read_text())["batch_size_note"]
                assert "4 per device" in note and "global batch of 128" in note


@pytest.mark.parametrize("source", ["hub", "work"])
def test_video_export_validates_for_each_format(built_samples, tmp_path, source, capsys):
    data = getattr(built_samples["bqa"], source)
    out = tmp_path / "ft"
    assert cli_main(["bqa", "finetune-data", "--data", str(data), "--split", "train", "--out", str(out)]) == 0
    assert "15 train items" in capsys.readouterr().out
    rows = {r["id"]: r for r in open_split(data, "train").rows}
    check_videollama2(out / "llava" / "bqa_train.json", out, rows)
    check_llama_factory(out / "llama_factory", out, "videos", "<video>", len(rows))
    check_ms_swift(out / "ms_swift" / "bqa_train.jsonl", "videos", "<video>", len(rows))
    check_configs(out / "configs", {p.name for p in (out / "configs").iterdir()})
    # the clips are the release's own bytes
    video = open_split(data, "train").video(next(iter(rows)))
    clip = video["bytes"] if isinstance(video, dict) else Path(video).read_bytes()
    assert (out / "videos" / f"{next(iter(rows))}.mp4").read_bytes() == clip


def test_frames_export_and_refusals(built_samples, tmp_path):
    hub = built_samples["bqa"].hub
    out = tmp_path / "frames"
    assert cli_main(["bqa", "finetune-data", "--data", str(hub), "--out", str(out), "--media", "frames",
                     "--num-frames", "8", "--limit", "4"]) == 0  # fmt: skip
    assert not (out / "llava").exists()  # documented for videos only: left out of "all"
    check_llama_factory(out / "llama_factory", out, "images", "<image>", 4)
    check_ms_swift(out / "ms_swift" / "bqa_train.jsonl", "images", "<image>", 4)
    check_configs(out / "configs", {p.name for p in (out / "configs").iterdir()})
    first = json.loads((out / "llama_factory" / "bqa_train.json").read_text())[0]
    assert len(first["images"]) == 8 and re.search(r"8 frames spread evenly", first["messages"][0]["content"])
    assert Image.open(out / first["images"][0]).size == (160, 120)  # the sample clips' frame size
    with pytest.raises(ValueError, match="one video file per item"):
        cli_main(["-v", "bqa", "finetune-data", "--data", str(hub), "--out", str(tmp_path / "x"), "--media", "frames",
                  "--format", "llava"])  # fmt: skip
    with pytest.raises(ValueError, match="unknown format"):
        cli_main(
            [
                "-v",
                "bqa",
                "finetune-data",
                "--data",
                str(hub),
                "--out",
                str(tmp_path / "y"),
                "--format",
                "axolotl",
            ]
        )
