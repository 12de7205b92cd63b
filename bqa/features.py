"""BQA's schema: the one declaration of its ``datasets.Features`` and split names.

Labels are stored as strings, not ``ClassLabel``: the group mapping and the demographic tables
can be replaced by a maintainer (see :mod:`bqa.vocabulary`), and metrics compare a model's
one-word answer with the label text. The vocabularies are listed in the dataset card.

``video`` is ``datasets.Video()``; decoding it needs torchcodec (and torch). Without them, read
it as ``{"path", "bytes"}`` with ``ds.cast_column("video", Video(decode=False))`` and sample
frames with ``builders.video.sampler.sample_frames``.
"""

from __future__ import annotations

import datasets

from bqa.vocabulary import EMOTIONS

#: Split names of a release (the paper's "valid" is ``validation``, the datasets convention).
SPLITS: tuple[str, ...] = ("train", "validation", "test")

_string = datasets.Value("string")
_score = datasets.Value("float32")
_step = {"model": _string, "prompt": _string, "prompt_version": _string}

FEATURES = datasets.Features(
    {
        "id": _string,
        "video": datasets.Video(),
        "question": _string,
        "choices": datasets.List(_string),  # always 4 (bqa.records checks it); no fixed length:
        # a fixed-length list cannot be written in card YAML that survives a key-sorting YAML tool
        "answer": _string,
        "answer_group": _string,
        "choice_groups": datasets.List(_string),
        "difficulty": _string,
        "difficulty_reason": _string,
        "gender": _string,
        "age": _string,
        "ethnicity": _string,
        "emotions": {label: _score for label in EMOTIONS},
        "valence": _score,
        "arousal": _score,
        "dominance": _score,
        "annotation_confidence": _score,
        "source": {
            "bold_video": _string,
            "bold_split": _string,
            "film_id": _string,
            "person_id": datasets.Value("int32"),
            "min_frame": datasets.Value("int32"),
            "max_frame": datasets.Value("int32"),
        },
        "provenance": {"question": _step, "filter": _step, "difficulty": _step},
    }
)

#: Every column except the video, for statistics and previews that must not read video bytes.
TEXT_COLUMNS: tuple[str, ...] = tuple(name for name in FEATURES if name != "video")
