"""What the MarineLife-16K paper states about its own release and experiments, as information.

Its figures (Table 1 row, "Statistics", split sizes), the places where those disagree with its own
rules, the model it built and judged with, and the models of its Table 3 with their groups and
backbones as printed. Nothing here is a default: this project calls no model unless one is named
(``--llm-model``), and a paid API only when its key is given.
"""

from __future__ import annotations

from typing import Any

from builders.scoring.paper_values import PaperValues, load_paper_values


def published() -> PaperValues:
    """Every number the paper prints in Table 1's row, its statistics, Table 3 and the caption table,
    from ``marinelife16k/paper_values.json``."""
    return load_paper_values("marinelife16k")


def _release_figures() -> dict[str, Any]:
    figures = {cell.info("key"): cell.value for cell in published().cells("table1")}
    counts = {cell.row: cell.value for cell in published().cells("statistics")}
    splits = {split: counts.pop(split) for split in ("train", "validation", "test")}
    return {**figures, **counts, "splits": splits}


#: The paper's own figures for its full release (Table 1 row, "Statistics", "Dataset Split").
PAPER: dict[str, Any] = _release_figures()
#: Where the paper's own figures disagree with its rules (or with each other).
PAPER_NOTES: tuple[str, ...] = (
    "Sentences per caption: the paper's Table 1 reports 3.4, but its captioner and refiner prompts ask for "
    '"one complete English video-captioning sentence" of fewer than 80 words, so a caption that follows the '
    "rule has 1 sentence; a release built with these rules measures about 1.",
    'Human study: the paper rates "100 questions across four open-ended QA types", but its QA rules define '
    "two open-ended types (camera_object_open_ended and caption).",
    'Dimensions: the paper classifies its evaluation "into five dimensions", lists six (MBC, PMT, OBK, SM, PDO, '
    "OEMU), reports eight columns in Table 3 (MBC-so, MBC-mo, PMT, PDO, OBK, SM-e, SM-l, OEMU) and speaks of "
    '"nine dimensions" in its conclusion.',
    "Evaluation set: the split has 500 test videos, but most cells of Table 3 are k/30 (SM-l's k/17) and most "
    "of the caption table's sums of 0-5 scores over 7 captions, truncated or rounded to the printed digits, so "
    "the models were scored on a small subset of them (use --videos / --video-sample to report on a named "
    "subset). Not every cell fits: 4 of Table 3's 84 model cells (MBC-so 89.3, 90.5, 91.2; OBK 83.4) and 3 of "
    "the caption table's 72 (1.72, 3.02, 3.01) are no k/30, k/17 or k/7.",
    "Averages: Table 3's group averages are the means of its rows except 2.04 (7B-8B OEMU; the mean is 2.048) and "
    "82.46 (closed-source PMT; the mean is 82.475); the caption table's moving-minus-static differences are taken "
    "between rounded averages (e.g. 7B-8B BEH -0.13, the unrounded difference is -0.124).",
    "Release size: the paper describes 2,000 videos but says its submission releases a subset of 500 videos.",
)


#: The model the paper's data engine (captioner, reviewer, refiner, QA generation) and its LLM judge used.
BUILD_MODEL = JUDGE_MODEL = "GPT-5.5"
#: (name as Table 3 prints it, group, backbone as Table 3 prints it; "-" for closed models), from the
#: published values, in the table's order.
PAPER_MODELS: tuple[tuple[str, str, str], ...] = tuple(
    (row["model"], row["group"], row["backbone"])
    for row in published().table("table3")["rows"]
    if "model" in row
)
#: Table 3's model groups, in the paper's order.
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(group for _, group, _ in PAPER_MODELS))
#: The paper's evaluation setting of those models.
EVALUATION = "8 uniformly sampled frames per video, as an ordered image sequence; open models from their official Hugging Face releases"
