"""Frames decoded in worker processes (builders/runs/frames.py, ``decoding_processes``): a long
step's clips past its first few are decoded outside the main process, to the same bytes a plain
in-process ``sample_frames`` + ``frames_to_data_urls`` gives (so the same reply-cache keys); a step
whose items share a few clips starts no process; a worker killed mid-step costs no clip; a clip
whose decoder dies every time is the only one rejected, by name."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from builders.llm import LLMClient, LLMRequest, LLMSettings, user_message
from builders.runs import frames
from builders.runs.frames import FrameImages, decode_images, decoding_processes
from builders.runs.llm_step import PROCESS_MIN_CLIPS, VIDEO_UNREADABLE, Outcome, run_llm_step
from builders.runs.steps import StepRecords
from builders.testing.clips import write_clip
from builders.video.frame_spec import FrameSpec
from builders.video.sampler import frames_to_data_urls, sample_frames
from builders.video.source import VideoError

SPEC = FrameSpec(fps=None, num_frames=6)


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("clips")
    count = PROCESS_MIN_CLIPS + 2
    return [write_clip(root / f"c{i:02d}.mp4", num_frames=30 + i, seed=i) for i in range(count)]


def _expected(clip: Path) -> list[str]:
    return frames_to_data_urls(sample_frames(clip, num_frames=6, threads=1))


def _children_with_open(path: Path) -> list[int]:
    """Processes of this user that have ``path`` open (from /proc), other than this one."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(os.readlink(fd) == str(path) for fd in (entry / "fd").iterdir()):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _ok(item, request, result):
    return Outcome({"id": item["id"]})


def test_a_long_step_decodes_its_first_clips_itself_and_the_rest_in_worker_processes(
    chat_server, tmp_path, clips, monkeypatch
):
    chat_server.handler = lambda body: "ok"
    seen: dict[str, list[str]] = {}
    pools: set[object] = set()
    here: list[str] = []  # clips decoded in this process
    decode_here = frames._decode_here
    monkeypatch.setattr(
        frames, "_decode_here", lambda clip, spec: here.append(clip.stem) or decode_here(clip, spec)
    )

    def request_of(item):
        urls = decode_images(item["clip"], SPEC)
        pools.add(frames._active)
        seen[item["id"]] = urls
        return LLMRequest([user_message("which?", urls)], output_tokens=1)

    items = [{"id": clip.stem, "clip": clip} for clip in clips]
    settings = LLMSettings(model="m", base_url=chat_server.url, api_key_env=None, progress=False)
    with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
        failures = run_llm_step(StepRecords(tmp_path, "s"), items, client, request_of, _ok, workers=2)
    assert failures == {} and frames._active is None  # the workers are gone with the step
    (pool,) = pools
    assert pool is not None and pool.asked == len(clips) and pool.started == 2 and pool.replaced == 0
    assert len(here) == PROCESS_MIN_CLIPS  # and the others in the workers
    for clip in clips:
        urls = seen[clip.stem]
        assert urls == _expected(clip)
        for url in urls:  # the hash the cache key uses is the JPEG's, taken where it was encoded
            assert url.sha256 == hashlib.sha256(base64.b64decode(url.partition(",")[2])).hexdigest()
    # No more items than clips decoded in process: the step starts no process.
    pools.clear()

    def request_short(item):
        pools.add(frames._active)
        return LLMRequest([user_message("which?", decode_images(item["clip"], SPEC))], output_tokens=1)

    with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
        run_llm_step(
            StepRecords(tmp_path, "t"), items[:PROCESS_MIN_CLIPS], client, request_short, _ok, workers=2
        )
    (pool,) = pools
    assert pool.asked == PROCESS_MIN_CLIPS and pool.started == 0


def test_a_step_whose_items_share_a_few_clips_starts_no_process(chat_server, tmp_path, clips):
    # BoLD clips with several annotated persons: many rows, each clip decoded once (FrameImages).
    chat_server.handler = lambda body: "ok"
    images = FrameImages()
    pools: set[object] = set()

    def request_of(item):
        pools.add(frames._active)
        return LLMRequest(
            [user_message(f"person {item['id']}?", images(item["clip"], SPEC))], output_tokens=1
        )

    items = [{"id": f"r{i}", "clip": clips[i % 3]} for i in range(3 * PROCESS_MIN_CLIPS)]
    settings = LLMSettings(model="m", base_url=chat_server.url, api_key_env=None, progress=False)
    with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
        failures = run_llm_step(StepRecords(tmp_path, "s"), items, client, request_of, _ok, workers=2)
    (pool,) = pools
    assert failures == {} and images.decoded == 3
    assert pool is not None and pool.asked == 3 and pool.started == 0


def test_a_worker_killed_mid_step_costs_no_clip(tmp_path):
    # Clips slow enough to decode that the kill lands while several are in the workers.
    slow = [
        write_clip(tmp_path / f"s{i}.mp4", num_frames=150, width=640, height=360, seed=i) for i in range(8)
    ]
    spec = FrameSpec(fps=None, num_frames=16)
    with decoding_processes(2) as processes, ThreadPoolExecutor(4) as threads:
        futures = [threads.submit(decode_images, clip, spec) for clip in slow]
        deadline = time.monotonic() + 30
        victims: list[int] = []
        while not victims and time.monotonic() < deadline:
            victims = [pid for clip in slow for pid in _children_with_open(clip)]
            time.sleep(0.002)
        assert victims, "no worker process was seen decoding"
        os.kill(victims[0], signal.SIGKILL)
        results = [f.result(timeout=120) for f in futures]
        assert processes.replaced == 1
    for clip, urls in zip(slow, results, strict=True):
        assert urls == frames_to_data_urls(sample_frames(clip, num_frames=16, threads=1))


def test_a_clip_that_kills_its_decoder_every_time_is_the_only_one_rejected(chat_server, tmp_path, clips):
    chat_server.handler = lambda body: "ok"
    culprit = write_clip(tmp_path / "culprit.mp4", num_frames=250, width=1280, height=720, seed=9)
    stop = threading.Event()

    def kill_its_decoders():  # whatever process opens the culprit dies, as with a decoder crash
        while not stop.is_set():
            for pid in _children_with_open(culprit):
                with contextlib.suppress(ProcessLookupError):  # it may have ended since
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.001)

    watcher = threading.Thread(target=kill_its_decoders, daemon=True)
    watcher.start()
    # The step's first clips are decoded in process: the culprit asks for its frames after them.
    items = [{"id": clip.stem, "clip": clip} for clip in clips] + [{"id": "culprit", "clip": culprit}]
    settings = LLMSettings(model="m", base_url=chat_server.url, api_key_env=None, progress=False)
    records = StepRecords(tmp_path, "s")
    done, lock, local_done = [0], threading.Lock(), threading.Event()

    def request_of(item):
        if item["id"] == "culprit":
            assert local_done.wait(timeout=120)
        urls = decode_images(item["clip"], SPEC)
        with lock:
            done[0] += 1
            if done[0] == PROCESS_MIN_CLIPS:
                local_done.set()
        return LLMRequest([user_message("which?", urls)], output_tokens=1)

    try:
        with LLMClient(settings, cache_path=tmp_path / "c.sqlite") as client:
            failures = run_llm_step(records, items, client, request_of, _ok, workers=2)
    finally:
        stop.set()
        watcher.join()
    assert failures == {}
    records.finish(item["id"] for item in items)
    (rejected,) = records.rejects()
    assert rejected["id"] == "culprit" and rejected["_reason"] == VIDEO_UNREADABLE
    assert f"{culprit}: the frame decoder process died on this clip" in rejected["_detail"]
    assert sorted(r["id"] for r in records.kept()) == sorted(clip.stem for clip in clips)


def test_decode_errors_cross_the_process_boundary_as_video_errors(tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x17" * 4000)
    with decoding_processes(2), pytest.raises(VideoError, match="broken.mp4"):
        decode_images(broken, SPEC)
    with decoding_processes(2), pytest.raises(FileNotFoundError, match="gone.mp4"):
        decode_images(tmp_path / "gone.mp4", SPEC)


def test_embedded_bytes_decode_in_processes_and_errors_name_the_cell(tmp_path, clips):
    cell = {"path": "clip.mp4", "bytes": clips[0].read_bytes()}  # a Hub folder's video value
    with decoding_processes(2) as processes:
        assert decode_images(cell, SPEC) == _expected(clips[0])
        with pytest.raises(VideoError, match=r"clip\.mp4 \(embedded bytes\)"):
            decode_images({"path": "clip.mp4", "bytes": b"\x00\x00\x00\x18ftypmp42" + b"\x17" * 4000}, SPEC)
        workers = [w.process for w in processes._idle]
        assert workers and all(w.poll() is None for w in workers)
    assert all(w.poll() == 0 for w in workers)  # stopped with the context, cleanly


def test_a_script_without_a_main_guard_runs_once(tmp_path, clips):
    script = tmp_path / "plain_script.py"
    script.write_text(  # no `if __name__ == "__main__":`, as many research scripts are written
        "import sys\n"
        "from pathlib import Path\n"
        "from builders.runs.frames import decode_images, decoding_processes\n"
        "from builders.video.frame_spec import FrameSpec\n"
        "with Path(sys.argv[1]).open('a') as log:\n"
        "    log.write('ran\\n')\n"
        "with decoding_processes(2):\n"
        "    print(len(decode_images(sys.argv[2], FrameSpec(fps=None, num_frames=4))))\n"
    )
    log = tmp_path / "runs.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # this checkout's package
    done = subprocess.run([sys.executable, str(script), str(log), str(clips[0])], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4"]
    assert log.read_text() == "ran\n"  # the workers did not run the script again


def test_other_errors_come_back_as_runtime_errors_naming_the_source():
    with (
        decoding_processes(2),
        pytest.raises(RuntimeError, match=r"^int: TypeError: unsupported video source type int"),
    ):
        decode_images(12345, SPEC)
