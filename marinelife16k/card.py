"""The dataset card of a MarineLife-16K release: YAML metadata (``card_data``) and Markdown (``card_body``).

``builders.hub.layout.write_hub_folder`` adds ``configs`` and ``dataset_info``; this module supplies the rest:
the research-only terms, the attribute and dimension tables, how to join ``qa`` to ``videos``, how to
get frames, and the release's own numbers (counted from its files, not from what a run intended).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from builders import INSTALL_HINT
from marinelife16k.features import FEATURES
from marinelife16k.paper import BUILD_MODEL, EVALUATION, JUDGE_MODEL, PAPER_MODELS
from marinelife16k.questions import MOTION_TYPE, QUESTION_TEXTS
from marinelife16k.stats import clip_durations, release_stats, stat_tables
from marinelife16k.vocabulary import (
    ATTRIBUTES,
    CAPTION_CRITERIA,
    CAPTION_CRITERION_DEFINITIONS,
    CAPTION_CRITERION_NAMES,
    CAPTION_CRITERION_TITLES,
    DIMENSIONS,
    QUESTION_TYPES,
)
from marinelife16k.workfolder import NOT_ASKED, NOT_CENTRAL, Release

DEFAULT_REPO_ID = "<namespace>/MarineLife-16K"
CITATION = """@misc{marinelife16k,
  title = {MarineLife-16K: An Attribute-Rich Video-Text Dataset for Motion-Aware Marine Video Understanding}
}"""
#: The two collections the videos come from (the paper's [22] and [23]).
SOURCE_CITATIONS = """@inproceedings{truong2023mvk,
  title     = {Marine Video Kit: A New Marine Video Dataset for Content-Based Analysis and Retrieval},
  author    = {Truong, Quang-Trung and Vu, Tuan-Anh and Ha, Tan-Sang and Loko{\\v{c}}, Jakub and
               Wong, Yue-Him and Joneja, Ajay and Yeung, Sai-Kit},
  booktitle = {MultiMedia Modeling (MMM)},
  year      = {2023},
  doi       = {10.1007/978-3-031-27077-2_42}
}

@inproceedings{truong2025msc,
  title     = {{MSC}: A Marine Wildlife Video Dataset with Grounded Segmentation and Clip-Level Captioning},
  author    = {Truong, Quang-Trung and Wong, Yuk-Kwan and Dang, Vo Hoang Kim Tuyen and Gotama, Rinaldi and
               Nguyen, Duc Thanh and Yeung, Sai-Kit},
  booktitle = {ACM International Conference on Multimedia (ACM MM)},
  year      = {2025}
}"""
LICENSE_FILE = "LICENSE.md"
GATED_PROMPT = (
    "MarineLife-16K is for research only: its videos come from MVK and MSC, used with their owners' "
    "permission for research. By requesting access you agree to use it for research only and to ask the "
    "MVK and MSC data owners before any other use."
)
GATED_FIELDS: dict[str, Any] = {
    "Name": "text",
    "Affiliation": "text",
    "Country": "country",
    "I will use this dataset for research only": "checkbox",
    "I will ask the MVK and MSC data owners before any other use": "checkbox",
}

TERMS = (
    "This dataset is released for **research purposes only**. It uses or is derived from data licensed "
    "from the MVK and MSC datasets; the authors obtained the permission of their data owners to use them "
    "for research. Any other use needs the permission of those owners."
)

#: One line per attribute (a test checks that none is missing).
ATTRIBUTE_DESCRIPTIONS: dict[str, str] = {
    "central_object": "the main subject the video is about (species, diver, coral, plant...)",
    "object_2": "first additional object seen in the video (empty if none)",
    "object_3": "second additional object (empty if none)",
    "object_4": "third additional object (empty if none); at most four objects per video",
    "texture": "texture or pattern of the central object",
    "color": "color(s) of the central object",
    "size_shape": "size and shape of the central object",
    "environment": "the underwater setting (reef, seagrass meadow, open water...); may be empty",
    "lighting": "lighting conditions; may be empty",
    "video_clarity": "video sharpness: clear or blurry",
    "movement_behavior": "movement, behaviour or state of the central object; may be empty",
    "camera_position": "what the camera frames: the full scene, one viewing angle, or part of the central object",
    "camera_angle": "camera angle and movement: pan (left/right), tilt (up/down), dolly/translation, static...",
}

#: One line per evaluation dimension (a test checks that none is missing).
DIMENSION_DESCRIPTIONS: dict[str, str] = {
    "MBC-so": "Marine Biotic Communities, single object: identify the central object",
    "MBC-mo": "Marine Biotic Communities, multiple objects: pick the list of objects that are all present",
    "PMT": "Phenotypic/Morphological Traits: color, size and shape of the central object",
    "PDO": "Perspective-Dependent Observations: camera position/view and angle/movement",
    "OBK": "Organism Behavioral Kinematics: movement or state of the central object",
    "SM-e": "Spatiotemporal Monitoring, environment",
    "SM-l": "Spatiotemporal Monitoring, lighting",
    "OEMU": "Open-Ended with Motion Understanding: how the camera captures the object and its activity "
    "(LLM judge, 0-5: camera 35 %, activity 30 %, camera-object relation 35 %)",
    "caption": "video captioning, judged 0-5 (5 = no hallucination) on "
    + "; ".join(
        f"{c}, {CAPTION_CRITERION_NAMES[c]}: {CAPTION_CRITERION_DEFINITIONS[c]}" for c in CAPTION_CRITERIA
    )
    + " Reported for static and moving cameras.",
}

_SECRET_WORDS = ("key", "token", "secret", "password", "authorization")
#: The paper's condition and answer of type 7, and how this release applies them.
MOTION_RULE = (
    "only if `movement_behavior` describes the movement or state of the central object (the paper's "
    "condition): the QA-generation LLM decides it in a field of its own reply, and the answer is that "
    "movement alone, cut out of `movement_behavior` word for word (checked)"
)


def _size_category(n: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if n < limit:
            return name
    return "n>1M"


def card_data(release: Release) -> dict[str, Any]:
    """The card's YAML keys other than ``configs`` and ``dataset_info``."""
    return {
        "pretty_name": "MarineLife-16K",
        "language": ["en"],
        "license": "other",
        "license_name": "marinelife16k-research-only",
        "license_link": LICENSE_FILE,
        # Attributes by domain experts; captions from the caption engine (LLM + expert review);
        # questions from rules over the attributes, distractors written by an LLM.
        "annotations_creators": ["expert-generated", "machine-generated"],
        "language_creators": ["expert-generated", "machine-generated"],
        "multilinguality": ["monolingual"],
        "source_datasets": ["extended|MVK", "extended|MSC"],
        "task_categories": ["video-text-to-text", "visual-question-answering"],
        "size_categories": [_size_category(len(release.records))],
        "tags": ["marine", "underwater", "video-question-answering", "video-captioning", "camera-motion"],
        "extra_gated_prompt": GATED_PROMPT,
        "extra_gated_fields": dict(GATED_FIELDS),
    }


def license_text() -> str:
    """The ``LICENSE.md`` that ``license_link`` points at."""
    return f"# MarineLife-16K: terms of use\n\n{TERMS}\n"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _public(value: Any) -> Any:
    """Provenance without anything that looks like a credential (keys are named, never shown)."""
    if isinstance(value, Mapping):
        return {
            k: _public(v) for k, v in value.items() if not any(w in str(k).lower() for w in _SECRET_WORDS)
        }
    if isinstance(value, list):
        return [_public(v) for v in value]
    return value


def _statistics(release: Release) -> str:
    """The release's statistics (:mod:`marinelife16k.stats`), beside the paper's, hours measured from
    the clips when they are all on disk."""
    files = {row["id"]: release.video_file(row) for row in release.videos}
    durations = clip_durations(files) if all(path.is_file() for path in files.values()) else None
    stats = release_stats(release.videos, release.records, durations=durations)
    blocks = []
    for table in stat_tables(stats):
        blocks += [f"**{table.title}**", _table(table.header, table.rows)]
        if table.note:
            blocks.append(table.note)
    notes = "\n".join(f"- {note}" for note in stats["paper_notes"])
    blocks += ["### Where the paper's figures disagree with its rules", notes]
    return "\n\n".join(blocks)


def _paper_models() -> str:
    rows = [[name, group, backbone] for name, group, backbone in PAPER_MODELS]
    return f"""The paper built its captions and questions (captioner, reviewer, refiner, QA generation) with
{BUILD_MODEL} and used {JUDGE_MODEL} as its LLM judge. It evaluated these models ({EVALUATION}); the
names, groups and backbones are its Table 3's (the text calls Claude-Opus-4.8 "Claude-4.8-Opus"):

{_table(["model", "group", "backbone"], rows)}

This is information about the paper, not a setting: this release's own build models are in the build
metadata above, and the tools call no model (and no paid API) unless one is named with `--llm-model`."""


def _not_asked(release: Release) -> str:
    """Which conditional questions the videos do not get and why (the release's ``not_asked``)."""
    entries = release.not_asked()
    counts = Counter((e["type"], e["why"]) for e in entries)
    rows = [[f"`{t}`", why, n] for (t, why), n in sorted(counts.items())]
    motion = [e for e in entries if e["type"] == MOTION_TYPE and e["why"] == NOT_CENTRAL]
    parts = [
        "Conditional questions a video does not get, and why: its attribute is empty, or (type "
        "`central_object_motion`) its `movement_behavior` does not describe the central object.",
        _table(["type", "why", "videos"], rows) if rows else "Every video gets every conditional question.",
    ]
    if motion:  # all of them: the attributes do not tell which these are (an empty attribute does)
        parts += [
            "Videos whose `movement_behavior` is not about the central object (no `central_object_motion`):",
            _table(["video", "reason"], [[f"`{e['id']}`", e["reason"]] for e in motion]),
        ]
    return "\n\n".join(parts)


#: What the paper describes that this release does not carry, and why (said here, not left unsaid).
OUT_OF_SCOPE = (
    "- **Caption quality control.** The paper had six human reviewers assess all 2,000 captions. This "
    "project has no workflow for that review and the release records no reviewer, verdict or correction: "
    "its captions are the caption engine's output as built (the reviewer score S_c and the refiner are "
    "LLM steps, not the human check). The paper publishes neither the reviewers' verdicts nor a protocol "
    "to reproduce.\n"
    "- **Location and country.** The paper counts 27 recording locations in 7 countries, but names "
    "neither per video, and the MVK and MSC attribute files this release is built from have no such "
    "field: the release has none, and its statistics cannot count them."
)
_ABOUT = (
    "Motion-aware question answering and captioning over marine videos. Each video carries 13 attributes "
    "annotated by domain experts, a final caption produced by a human-in-the-loop caption engine, and six "
    "to nine questions: multiple-choice questions whose right answer is an attribute value, and open-ended "
    "questions judged by an LLM."
)
_FULL_RELEASE = (
    "The full release has 2,000 videos from the MVK and MSC collections (1,300 / 200 / 500 for train / "
    "validation / test, split by video) and 16,080 questions."
)


def _sample_note(release: Release) -> str | None:
    return (release.meta.get("provenance") or {}).get("sample")


def _opening(release: Release) -> str:
    """What this folder is: the release, or (first, before anything else) a sample of the tooling's."""
    note = _sample_note(release)
    if not note:
        return f"{_ABOUT} {_FULL_RELEASE}"
    videos = len({r["id"] for r in release.records})
    return (
        f"**This is a sample, not the dataset**: {videos} videos and {len(release.records)} questions, "
        f"{note}. videoqa-bench-tools ships it to exercise its tooling offline: its clips are synthetic and "
        "its replies scripted, so its numbers say nothing about marine video or any model.\n\n"
        f"What it imitates: {_ABOUT[0].lower()}{_ABOUT[1:]} {_FULL_RELEASE}"
    )


def card_body(release: Release, *, repo_id: str = DEFAULT_REPO_ID) -> str:
    """The card's Markdown, with this release's numbers and provenance."""
    attribute_rows = [[f"`{name}`", ATTRIBUTE_DESCRIPTIONS[name]] for name in ATTRIBUTES]
    type_rows = []
    for name, qtype in QUESTION_TYPES.items():
        when = "always" if qtype.mandatory else f"only if `{qtype.condition_attribute}` is non-empty"
        if name == MOTION_TYPE:
            when = MOTION_RULE
        type_rows.append([f"`{name}`", qtype.question_format, qtype.dimension, when, QUESTION_TEXTS[name]])
    dimension_rows = [[d, DIMENSION_DESCRIPTIONS[d]] for d in (*DIMENSIONS, "caption")]
    caption_rows = [
        [f"{c}, {CAPTION_CRITERION_NAMES[c]}", CAPTION_CRITERION_TITLES[c], CAPTION_CRITERION_DEFINITIONS[c]]
        for c in CAPTION_CRITERIA
    ]
    qa_fields = ", ".join(f"`{name}`" for name in FEATURES["qa"])
    meta = {k: v for k, v in release.meta.items() if k not in ("video_root", NOT_ASKED)}  # listed above
    return f"""
# MarineLife-16K{" (sample)" if _sample_note(release) else ""}

{_opening(release)}

## Terms of use

{TERMS} Access is gated: the Hub asks for these terms to be accepted (see `{LICENSE_FILE}`).

## Configs

- **`qa`** (default): one row per question. Fields: {qa_fields}. `dimension` is the evaluation
  dimension of the question type; `evidence_attributes` holds the attribute values the answer is built
  from (null for attributes it does not use).
- **`videos`**: one row per video: `video` (MP4 bytes), the ids, the 13 attributes, the final
  `caption` and `camera_kind` (static or moving). The videos are stored here only, once.

Every question's split is the split of its video: no video appears in two splits.

## Loading and joining

```python
from datasets import Video, load_dataset

qa = load_dataset("{repo_id}", "qa", split="test")
videos = load_dataset("{repo_id}", "videos", split="test")
# Without torch/torchcodec, read videos as bytes instead of decoding them:
videos = videos.cast_column("video", Video(decode=False))
row_of = {{video_id: i for i, video_id in enumerate(videos["id"])}}

question = qa[0]
video = videos[row_of[question["id"]]]  # qa.id == videos.id == "{{collection}}--{{video file stem}}"
print(question["prompt"], question["answer"])
```

Frames: the paper feeds 8 uniformly sampled frames. With this project's tools (the `builders` package
and the `vqabench` command; {INSTALL_HINT}),
`builders.video.sampler.sample_frames(video["video"], num_frames=8)` decodes them with PyAV from the
`{{"path", "bytes"}}` value; `evaluate.load(builders.metric_path("marinelife_qa"))` scores
multiple-choice replies on the whole `qa` split (open-ended rows are skipped and counted).

## Attributes

{_table(["attribute", "meaning"], attribute_rows)}

Rows may leave `object_2`-`object_4`, `environment`, `lighting` and `movement_behavior` empty.

## Question types

Multiple-choice prompts are the question, then `(A) ... (B) ... (C) ... (D) ...` and
`Answer with the option letter only.`; the answer is the letter. The right option is built from the
attributes (`color: ...; size/shape: ...` for appearance, `camera position/view: ...; camera
angle/movement: ...` for camera motion, the comma-separated central and additional objects for
object detection, the central object's own movement or state, cut out of `movement_behavior`, for
`central_object_motion`); the three wrong options
were written by an LLM (see the build metadata below for this release's source). Open-ended prompts are the question
alone; `answer_text` is the reference answer (for `caption`, the video's final caption).
Ids: `question_id` = `{{collection}}--{{video file stem}}--q{{index}}`, indices 1, 2, ... per video.

{_table(["type", "format", "dimension", "asked", "question"], type_rows)}

## Evaluation dimensions

{_table(["dimension", "what it measures"], dimension_rows)}

Caption criteria (the judge's rubric `marinelife_caption` asks exactly these; 5 = no hallucination):

{_table(["criterion", "asked as", "what it scores"], caption_rows)}

Multiple-choice dimensions are scored by accuracy. **Static vs moving camera** (`camera_kind`):
moving when `camera_angle` or `camera_position` names a camera movement (pan, tilt, dolly, tracking or
following, zoom, translation, orbit, handheld, drift, sweep, truck, pedestal, "camera moves") that is
not negated ("no panning"); static otherwise. The paper does not publish its rule; this one is ours.

## This release

{_statistics(release)}

{_not_asked(release)}

Build metadata:

```json
{json.dumps(_public(meta), indent=2, ensure_ascii=False)}
```

## The paper's models

{_paper_models()}

## Out of scope

{OUT_OF_SCOPE}

## Citation

The MarineLife-16K paper, and the two collections its videos come from (MVK, MSC):

```bibtex
{CITATION}

{SOURCE_CITATIONS}
```
"""
