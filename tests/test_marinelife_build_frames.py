"""``marinelife build`` takes the shared frame flags (as ``bqa build`` does) and its PipelineConfig holds a
FrameSpec; the default frames give the same requests, so the same cache keys, as before the spec: the
sample's replies, recorded with ``num_frames``/``max_side`` settings, still answer every request."""

from __future__ import annotations

import json

import pytest
from http_trap import http_trap

from builders.cli import main as cli_main
from builders.llm import ReplayMissError
from builders.pipelines.marinelife.runner import CONFIG_FILE, PipelineConfig, load_recording
from builders.video.frame_spec import FrameSpec
from marinelife16k.sample import sample_attributes_path, sample_root, sample_video_root

RECORDING = load_recording(sample_root())


def _args(work, *extra: str) -> list[str]:
    settings = RECORDING.settings
    return ["marinelife", "build", "--work", str(work), "--attributes", str(sample_attributes_path()),
            "--video-root", str(sample_video_root()), "--llm-model", settings.model,
            "--llm-base-url", settings.base_url, "--llm-api-key-env", "none",
            "--llm-replies", str(RECORDING.replies_path), *extra]  # fmt: skip


def test_old_recorded_settings_read_as_a_frame_spec():
    recorded = json.loads(RECORDING.settings_path.read_text())["options"]
    assert {"num_frames", "max_side"} <= set(recorded) and "frames" not in recorded  # written before the spec
    config = PipelineConfig.from_outputs(recorded)
    assert config.frames == FrameSpec(fps=None, num_frames=8, max_side=512)
    assert config.outputs() == recorded  # a work folder bound before the spec resumes as it is
    other = PipelineConfig(frames=FrameSpec(fps=1.0, max_side=512, rule="uniform", video_input="video"))
    assert PipelineConfig.from_outputs(other.outputs()) == other
    with pytest.raises(ValueError, match=r"unknown pipeline settings \['frames_per_clip'\]"):
        PipelineConfig.from_outputs({**recorded, "frames_per_clip": 8})


def test_default_and_spelled_out_frames_hit_every_recorded_reply(tmp_path, capsys):
    # Through the shared frame flags, spelled out or left to the default: every request is found among the
    # replies recorded before the frame spec existed, and nothing is sent.
    with http_trap() as server:
        assert cli_main(_args(tmp_path / "default")) == 0
        assert cli_main(_args(tmp_path / "spelled", "--num-frames", "8", "--max-side", "512")) == 0
        assert server.requests == []
    bound = json.loads((tmp_path / "default" / CONFIG_FILE).read_text())["config"]
    assert bound == json.loads(RECORDING.settings_path.read_text())["options"]
    release = [(tmp_path / w / "release" / "qa.jsonl").read_bytes() for w in ("default", "spelled")]
    assert release[0] == release[1]
    assert "status: complete" in capsys.readouterr().out


@pytest.mark.parametrize("frames", [["--fps", "1"], ["--video-input", "video"], ["--num-frames", "6"]])
def test_other_frames_are_other_requests(tmp_path, frames):
    # Another frame spec makes other requests: none of them was recorded (the captioner's first step misses).
    with http_trap() as server, pytest.raises(ReplayMissError, match="have no recorded reply"):
        cli_main(["-v", *_args(tmp_path / "w", *frames)])
    assert server.requests == []
    bound = json.loads((tmp_path / "w" / CONFIG_FILE).read_text())["config"]
    assert PipelineConfig.from_outputs(bound).frames != PipelineConfig().frames


def test_sample_replay_refuses_other_frames(tmp_path):
    with pytest.raises(ValueError, match="recorded with other settings: --frames"):
        cli_main(["-v", "marinelife", "build", "--sample", "--replay", "--work", str(tmp_path), "--fps", "1"])
