"""The dataset card of a BQA release: YAML metadata (``card_data``) and Markdown prose (``card_body``).

``builders.hub.layout.write_hub_folder`` adds ``configs`` and ``dataset_info`` to the YAML; this module
supplies the rest, and prose that states the release's own numbers, group mapping, demographic
tables and provenance (taken from the records, not from what a run was configured to do).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bqa.features import FEATURES, SPLITS
from bqa.records import PROVENANCE_STEPS, BQARecord
from bqa.stats import DEMOGRAPHICS, TOTAL, ReleaseStats
from bqa.vocabulary import DEFAULT_MAPPING_NAME, DIFFICULTIES, EMOTIONS
from bqa.workfolder import ReleaseMeta

DEFAULT_REPO_ID = "naist-nlp/BQA"
CITATION = """@article{ozaki2025bqa,
  title  = {BQA: Body Language Question Answering Dataset for Video Large Language Models},
  author = {Ozaki, Shintaro and Hayashi, Kazuki and Oba, Miyu and Sakai, Yusuke and
            Kamigaito, Hidetaka and Watanabe, Taro},
  year   = {2025}
}"""

#: One line per feature of :data:`bqa.features.FEATURES` (a test checks that none is missing).
FIELD_DESCRIPTIONS: dict[str, str] = {
    "id": "`<folder>_<film>_<clip>_p<person>`, unique over the release",
    "video": "the clip (MP4, H.264, 25 fps, about 5 s, audio removed), bytes embedded",
    "question": "the question, written by an LLM from the clip and the four choices (STEP2)",
    "choices": "the 4 emotion labels offered, in presentation order",
    "answer": "the right choice: the emotion with the highest BoLD score",
    "answer_group": "the emotion group of the answer",
    "choice_groups": "the emotion group of each choice (all different)",
    "difficulty": "`Easy` if the STEP4 model answered right, `Hard` otherwise",
    "gender": "gender of the person, as annotated in BoLD",
    "age": "age group of the person, as annotated in BoLD",
    "ethnicity": "ethnicity of the person, as annotated in BoLD",
    "emotions": "the 26 BoLD emotion scores (crowd-sourced, normalised), keyed by label",
    "valence": "BoLD valence score",
    "arousal": "BoLD arousal score",
    "dominance": "BoLD dominance score",
    "annotation_confidence": "BoLD's confidence in the row's annotation",
    "source": "the BoLD row: clip path under `videos/`, BoLD split file, film, person id, frame range",
    "provenance": "per LLM step (question, filter, difficulty): model id as reported, prompt name and version",
}

LIMITATIONS = (
    "**Labels come from BoLD's crowd annotations.** Emotion scores and the demographic labels "
    "(gender, age, ethnicity) were assigned by annotators and can be wrong or biased; the paper "
    "notes that annotators may not separate the 26 emotions well, which is why they are grouped.",
    "**The 4-group mapping is a simplification** (after James, 1890) and the distractors are drawn "
    "from it; some pairs of emotions from different groups are close.",
    "**Easy/Hard is relative to one model.** The labels record whether the STEP4 model (in the paper, "
    "the model that also wrote the questions) could answer them; they are not human difficulty ratings.",
    "**Old films, varied quality.** BoLD clips come from films of uneven video quality; better "
    "video might raise every model's accuracy.",
    "**Frames.** The paper feeds 16 frames to open models and 1 frame per second to API models; "
    "more frames may change results.",
    "**Faces dominate.** Errors concentrate on neutral faces and faces hidden by glasses or hats: "
    "models read faces more than bodies.",
    "**Chain-of-thought leaks answers.** Rationales often name the answer; CoT scores should be "
    "reported apart from plain scores.",
    "**Small human baseline.** The paper's human accuracy comes from 100 test questions and 3 annotators.",
    "**Culture.** Body language differs across cultures; the data mostly shows adult white men.",
)


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for bound, label in bounds:
        if n < bound:
            return label
    return "1M<n<10M"


def card_data(stats: ReleaseStats, *, pretty_name: str = "BQA") -> dict[str, Any]:
    """The card's YAML keys besides ``configs`` and ``dataset_info``."""
    return {
        "pretty_name": pretty_name,
        "language": ["en"],
        "license": "other",
        "license_name": "bold-research-use",
        "task_categories": ["video-text-to-text", "multiple-choice"],
        "task_ids": ["multiple-choice-qa"],
        "size_categories": [size_category(stats.splits[TOTAL].size)],
        "tags": ["body-language", "emotion", "video-question-answering", "bias-analysis"],
    }


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _distribution(stats: ReleaseStats, key: str, title: str) -> str:
    columns = [s for s in (*SPLITS, TOTAL) if s in stats.splits]
    labels = list(getattr(stats.splits[TOTAL], key))
    rows = []
    for label in labels:
        cells = []
        for split in columns:
            split_stats = stats.splits[split]
            count = getattr(split_stats, key).get(label, 0)
            share = f" ({100 * count / split_stats.size:.1f}%)" if split_stats.size else ""
            cells.append(f"{count}{share}")
        rows.append([label, *cells])
    return _table([title, *columns], rows)


def _provenance(splits: Mapping[str, Sequence[BQARecord]]) -> str:
    rows = []
    for step in PROVENANCE_STEPS:
        seen = Counter(
            (p.model, p.prompt, p.prompt_version)
            for records in splits.values()
            for p in (getattr(r.provenance, step) for r in records)
        )
        rows += [[step, f"`{m}`", f"`{p}`", v, n] for (m, p, v), n in sorted(seen.items())]
    return _table(["step", "model (as reported)", "prompt", "version", "rows"], rows)


def card_body(
    stats: ReleaseStats,
    meta: ReleaseMeta,
    splits: Mapping[str, Sequence[BQARecord]],
    *,
    repo_id: str = DEFAULT_REPO_ID,
    pretty_name: str = "BQA",
) -> str:
    """The card's Markdown prose for a release."""
    total = stats.splits[TOTAL]
    split_rows = []
    for split in (*SPLITS, TOTAL):
        s = stats.splits[split]
        bleu = "-" if s.self_bleu is None else f"{s.self_bleu:.2f}"
        split_rows.append([split, s.size, *(s.difficulty.get(d, 0) for d in DIFFICULTIES), s.films, bleu])
    mapping = meta.group_mapping
    mapping_note = (
        "This is the project's default mapping. The paper's figure of the grouping is not available as "
        "text; what its text states is kept (Confidence and Affection are Happiness, Surprise is Pleasure, "
        "Anger is Anger, Embarrassment is Sadness) and the other labels were placed by valence/arousal "
        "quadrant."
        if mapping.name == DEFAULT_MAPPING_NAME
        else "This release uses a mapping supplied by its maintainers instead of the project's default "
        f"(`{DEFAULT_MAPPING_NAME}`)."
    )
    group_rows = [
        [g, ", ".join(labels), stats.splits[TOTAL].answer_group.get(g, 0)]
        for g, labels in mapping.groups.items()
    ]
    code_rows = [
        [key, ", ".join(f"{code} = {label}" for code, label in sorted(meta.demographic_codes[key].items()))]
        for key in DEMOGRAPHICS
    ]
    difficulty_models = sorted({r.provenance.difficulty.model for rs in splits.values() for r in rs})
    field_rows = [[f"`{name}`", _feature_type(FEATURES[name]), FIELD_DESCRIPTIONS[name]] for name in FEATURES]
    answers = ", ".join(f"{label} ({n})" for label, n in total.answer.items())
    parts = [
        f"# {pretty_name}: Body Language Question Answering",
        f"{pretty_name} asks a video language model which emotion a person's body language shows in a short "
        "clip. Each row is one person in one clip of the Body Language Dataset (BoLD, Luo et al., 2020) "
        "with a question and four emotion labels to choose from: the label that BoLD's annotators scored "
        "highest, and one distractor from each of the three other emotion groups. It follows Ozaki et al., "
        "*BQA: Body Language Question Answering Dataset for Video Large Language Models*.",
        f"This release: **{total.size}** questions over **{total.films}** source films "
        f"({', '.join(f'{s} {stats.splits[s].size}' for s in SPLITS)}), "
        f"{total.difficulty.get('Easy', 0)} Easy and {total.difficulty.get('Hard', 0)} Hard. "
        f"Source: {meta.source}; split {meta.split_rule}; seed {meta.seed}.",
        "## Loading",
        "```python\nfrom datasets import Video, load_dataset\n\n"
        f'ds = load_dataset("{repo_id}")  # DatasetDict: train, validation, test\n'
        'row = ds["test"][0]  # decoding `video` needs torchcodec (and torch)\n```',
        "Without torch, read the video as bytes and sample frames with PyAV "
        "(`builders.video.sampler` from the project's tooling: `pip install videoqa-bench-tools`, which also "
        "gives the `vqabench` command and the metrics):",
        "```python\nfrom builders.video.sampler import sample_frames\n\n"
        'test = ds["test"].cast_column("video", Video(decode=False))\n'
        'row = test[0]  # row["video"] == {"path": "<id>.mp4", "bytes": b"..."}\n'
        'frames = sample_frames(row["video"], num_frames=16)  # 16 uniform frames, as for open models\n'
        'per_second = sample_frames(row["video"], fps=1)  # 1 fps, as for API models\n'
        "frames.frames  # uint8 RGB arrays; frames.indices, frames.timestamps\n```",
        "The model is asked to answer with one word, the emotion; score predictions with the project's "
        "`metrics/bqa_accuracy` module (Easy/Hard/Total accuracy and the breakdowns by demographics and group), "
        "installed with `pip install videoqa-bench-tools`: "
        '`evaluate.load(builders.metric_path("bqa_accuracy"))`.',
        "## Data fields",
        _table(["field", "type", "meaning"], field_rows),
        f"Emotion labels (BoLD order): {', '.join(EMOTIONS)}.",
        "## Splits and statistics",
        _table(["split", "rows", *DIFFICULTIES, "films", "Self-BLEU-4"], split_rows),
        (
            "No source film has rows in two splits."
            if not stats.shared_films
            else f"{len(stats.shared_films)} source film(s) have rows in more than one split."
        )
        + f" Self-BLEU: {stats.self_bleu_note} "
        "(lower is more diverse; the paper reports 0.87 / 0.86 / 0.85).",
        "### Answer groups",
        _distribution(stats, "answer_group", "group"),
        f"Answers by label: {answers}.",
        "### Demographics",
        "Distributions of the persons' annotated gender, age and ethnicity (Figure 3 of the paper).",
        _distribution(stats, "gender", "gender"),
        _distribution(stats, "age", "age"),
        _distribution(stats, "ethnicity", "ethnicity"),
        "## Emotion groups",
        f"Mapping used: `{mapping.name}`. {mapping_note} A maintainer can rebuild with another mapping "
        "(a JSON or YAML file); every release states the one it used here.",
        _table(["group", "emotions", "answers"], group_rows),
        "## Demographic codes",
        "BoLD stores gender, age and ethnicity as integer codes whose meaning is not published as text. "
        "This release decoded them with the table below (the project's documented reading, replaceable "
        "by a file): compare with BoLD's own documentation before drawing conclusions from them.",
        _table(["field", "codes"], code_rows),
        "## Easy and Hard",
        "After a question passed the filters, a model answered it from the clip and the four choices: "
        "`Easy` if it chose the answer, `Hard` if it did not. "
        f"Model(s) that set the labels in this release: {', '.join(f'`{m}`' for m in difficulty_models)}. "
        "In the paper, accuracy on Hard test questions is far below that on Easy ones, for the labelling "
        "model and for others (Gemini 0.08 vs 0.91, GPT-4o 0.38 vs 0.78).",
        "## How it was built",
        "1. **Candidates** (no LLM): answer = highest BoLD score (ties go to the label first in BoLD "
        "order); one distractor from each other group, scoring below the answer; seeded shuffle.\n"
        "2. **Question**: an LLM sees the clip and the four choices and writes one question.\n"
        "3. **Filter**: rule checks (one line, ends with `?`, names no choice), then an LLM check that the "
        "question is objective, does not leak the answer and is not harmful.\n"
        "4. **Difficulty**: an LLM answers the question (Easy/Hard).\n\n"
        "Audio was removed from every clip so that models must read the body language.",
        _provenance(splits),
        "## Known limitations",
        "\n".join(f"- {line}" for line in LIMITATIONS),
        "## License",
        "BoLD is distributed for research without a clear license; use this dataset for research only "
        "and follow BoLD's terms of access. The questions were generated by the models listed above, "
        "under their providers' terms.",
        "## Citation",
        f"```bibtex\n{CITATION}\n```",
    ]
    return "\n\n".join(parts) + "\n"


def _feature_type(feature: Any) -> str:
    if isinstance(feature, dict):
        return "struct"
    name = type(feature).__name__
    if name == "Value":
        return feature.dtype
    if name == "List":
        return f"list[{_feature_type(feature.feature)}]"
    return name
