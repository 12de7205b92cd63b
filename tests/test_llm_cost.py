"""Cost estimates (builders/llm/cost.py) and the frames LLM steps show (builders/runs/frames.py):
image-token rules on the providers' documented examples, JPEG sizes read from headers against
Pillow, prices, and frames decoded once with the same bytes and cache keys as before."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import numpy as np
import pytest
from PIL import Image

from builders.llm import LLMRequest, cache_key, user_message
from builders.llm.cost import Estimate, Price, estimate_request, image_tokens, jpeg_size, price_for
from builders.runs.frames import FrameImages, ProbeImages
from builders.testing.clips import write_clip
from builders.video.frame_spec import FrameSpec
from builders.video.sampler import frames_to_data_urls, sample_frames


@pytest.mark.parametrize(
    ("size", "family", "tokens"),
    [
        ((1024, 1024), "openai", 765),  # OpenAI's worked example: 768x768, 4 tiles
        ((2048, 4096), "openai", 1105),  # 1024x2048 -> 768x1536, 6 tiles
        ((512, 512), "openai", 255),  # one tile
        ((384, 384), "gemini", 258),
        ((1280, 720), "gemini", 516),  # two 768-px tiles
    ],
)
def test_image_token_rules_match_the_documented_examples(size, family, tokens):
    assert image_tokens(*size, family) == tokens


@pytest.mark.parametrize("progressive", [False, True])
def test_jpeg_size_is_read_from_the_header(progressive):
    buffer = io.BytesIO()
    rgb = np.random.default_rng(0).integers(0, 255, (250, 333, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(buffer, format="JPEG", quality=80, progressive=progressive)
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
    assert jpeg_size(url) == Image.open(io.BytesIO(buffer.getvalue())).size == (333, 250)
    assert jpeg_size("https://example.org/a.jpg") is None


def test_a_request_estimate_counts_text_images_and_the_output_hint():
    buffer = io.BytesIO()
    Image.new("RGB", (1024, 1024)).save(buffer, format="JPEG")
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
    request = LLMRequest([user_message("x" * 40, [url, url])], output_tokens=5)
    est = estimate_request(request, "gpt-4o")
    assert (est.requests, est.images, est.image_tokens, est.output_tokens) == (1, 2, 2 * 765, 5)
    assert est.text_tokens == 4 + 10  # message overhead + 40 characters / 4
    assert estimate_request(request, "gemini-2.5-flash").image_tokens == 2 * 258 * 4
    total = Estimate()
    total.add(est)
    total.add(est)
    assert total.input_tokens == 2 * est.input_tokens
    assert "$0.01" in total.format(Price(2.5, 10.0))  # 3,088 in at $2.5/M + 10 out at $10/M = $0.0078


def test_prices_come_from_the_options_or_an_editable_table(tmp_path):
    assert price_for("anything", 1.0, 2.0) == Price(1.0, 2.0)
    with pytest.raises(ValueError, match="both --price-in and --price-out"):
        price_for("m", 1.0, None)
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"_note": "mine", "my-model*": {"input": 0.5, "output": 1.5}}))
    assert price_for("My-Model-7B", table=table) == Price(0.5, 1.5)
    assert price_for("other", table=table) is None
    assert price_for("gpt-4o-2024-08-06") is not None  # the bundled table
    table.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a price table"):
        price_for("m", table=table)


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return write_clip(tmp_path_factory.mktemp("clip") / "c.mp4", num_frames=60, width=320, height=240)


def test_frames_are_the_bytes_the_sampler_encodes_and_keys_do_not_change(clip, tmp_path):
    spec = FrameSpec(fps=None, num_frames=6, max_side=200)
    expected = frames_to_data_urls(sample_frames(clip, 6, None, 200))
    images = FrameImages(tmp_path / "frames")
    urls = images(clip, spec)
    assert [str(u) for u in urls] == expected
    for url in urls:
        assert url.sha256 == hashlib.sha256(base64.b64decode(url.partition(",")[2])).hexdigest()
    key = {"base_url": "http://x/v1", "model": "m", "schema": None, "temperature": 0, "seed": 0}
    ours = cache_key(**key, messages=[user_message("q", urls)])
    plain = cache_key(**key, messages=[user_message("q", expected)])
    assert ours == plain
    # Another step (another object) on the same work folder decodes nothing.
    again = FrameImages(tmp_path / "frames")
    assert [str(u) for u in again(clip, spec)] == expected and again.decoded == 0
    assert images.decoded == 1
    images(clip, spec)
    assert images.decoded == 1  # kept in memory


def test_probed_frames_have_the_real_count_and_size_without_decoding(clip):
    for spec in (FrameSpec(fps=None, num_frames=5), FrameSpec(fps=2.0, max_side=100)):
        real = sample_frames(clip, spec.num_frames, spec.fps, spec.max_side)
        probed = ProbeImages()(clip, spec)
        assert len(probed) == len(real)
        h, w = real.frames.shape[1:3]
        assert {jpeg_size(u) for u in probed} == {(w, h)}
