"""``--video-input video``: one MP4 ``video_url`` part holding exactly the frame spec's frames.

The round trip goes through the real client and the real local chat server, which decodes the
video it receives (a full PyAV decode, :func:`builders.scripted.chat_requests.decode_video_url`);
the expected frames come from a full sequential decode of the clip, never from the sampler.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import av
import numpy as np
import pytest

from builders.evaluation.bqa_answers import answer_request
from builders.llm import LLMClient, LLMSettings
from builders.llm.cache import ReplyCache
from builders.llm.messages import data_url_bytes, user_message
from builders.scripted.chat_requests import decode_video_url, last_user_text, video_urls
from builders.testing.clips import read_frame_code, write_clip
from builders.video.frame_spec import FrameSpec

CHOICES = ["Happiness", "Sadness", "Anger", "Fear"]


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return write_clip(tmp_path_factory.mktemp("video-input") / "clip.mp4", num_frames=125, audio=True)


def full_decode(path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


@pytest.mark.parametrize(
    "spec",
    [
        FrameSpec(fps=None, num_frames=16, video_input="video"),
        FrameSpec(fps=1.0, video_input="video", rule="lmms-eval"),
        FrameSpec(fps=None, num_frames=8, video_input="video", rule="vlmevalkit", max_side=80),
        FrameSpec(fps=50.0, video_input="video"),  # above the clip's rate: every frame shown twice
    ],
    ids=["uniform16", "lmms-eval-1fps", "vlmevalkit8-small", "repeats"],
)
def test_video_url_holds_exactly_the_spec_frames(clip, spec):
    (url,) = spec.data_urls(clip)
    assert url.startswith("data:video/mp4;base64,")
    decoded = decode_video_url(url)
    sampled = spec.sample(clip)
    assert len(decoded) == len(sampled) == spec.frame_count([url])
    for k, rgb in enumerate(decoded):
        assert np.array_equal(rgb, sampled.frames[k])
    if spec.max_side is None:  # and those are the clip's own frames, by the codes they carry
        everything = full_decode(clip)
        assert [read_frame_code(rgb) for rgb in decoded] == sampled.indices
        assert all(np.array_equal(decoded[k], everything[i]) for k, i in enumerate(sampled.indices))
    with av.open(__import__("io").BytesIO(data_url_bytes(url))) as container:
        stream = container.streams.video[0]
        assert not container.streams.audio  # audio-free
        times = [float(f.time) for f in container.decode(stream)]
    assert times == sorted(times) and len(set(times)) == len(times)
    if spec.fps != 50.0:  # each frame at its time in the clip (from the first sampled frame)
        assert times == pytest.approx([t - sampled.timestamps[0] for t in sampled.timestamps], abs=1e-4)


def test_round_trip_through_the_chat_server(clip, chat_server, tmp_path):
    """The request a runner builds carries one video_url; the server decodes the spec's frames."""
    seen = []

    def handler(body):
        seen.append(len(video_urls(body)))
        return "Happiness"

    chat_server.handler = handler
    video = FrameSpec(fps=None, num_frames=16, video_input="video")
    images = FrameSpec(fps=None, num_frames=16)
    settings = LLMSettings(model="m", base_url=chat_server.url, api_key_env=None, progress=False)
    requests = [answer_request("How does the person feel?", CHOICES, clip, spec) for spec in (video, images)]
    with LLMClient(settings, cache_path=tmp_path / "cache.sqlite") as client:
        keys = [client.key_of(r) for r in requests]
        results = client.run(requests)
    assert all(r.ok for r in results) and sorted(seen) == [0, 1]
    assert keys[0] != keys[1]  # the input kind is part of the reply-cache key
    ((frames,),) = [videos for videos in chat_server.videos if videos]
    everything = full_decode(clip)
    indices = np.round(np.linspace(0, 124, 16)).astype(int)
    assert len(frames) == 16
    assert all(np.array_equal(frames[k], everything[i]) for k, i in enumerate(indices))
    # the prompt counts frames, not URLs
    for request in chat_server.chat_requests:
        assert "16 frames spread evenly over the clip" in last_user_text(request.body)
    with ReplyCache(tmp_path / "cache.sqlite") as cache:
        assert len(cache) == 2
        # the key holds a digest of the video, not megabytes of base64
        assert all(len(row.to_json()) < 10_000 for row in cache)


def test_server_refuses_an_undecodable_video(chat_server):
    body = {"model": "m", "messages": [user_message("what?", ["data:video/mp4;base64,AAAAIGZ0eXBpc29t"])]}
    request = urllib.request.Request(
        chat_server.url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=5)
    assert err.value.code == 400
    assert "no decodable video" in json.loads(err.value.read())["error"]["message"]
    assert chat_server.chat_requests[-1].fault == "bad-video"


def test_message_parts():
    message = user_message("q", ["data:video/mp4;base64,AAAA", "data:image/jpeg;base64,AAAA"])
    assert [p["type"] for p in message["content"]] == ["video_url", "image_url", "text"]
    with pytest.raises(ValueError, match="data:video"):
        user_message("q", ["file:///clip.mp4"])
