"""BQA as a Hub benchmark: the tasks its ``eval.yaml`` declares, one per headline number of the paper.

Table 1 of the paper reports accuracy on the test split as Easy / Hard / Total, on a 0-1 scale
(Gemini 0.91 / 0.08 / 0.61, a Total its own Easy and Hard do not give: ``bqa/paper_values.json`` flags
it). Total is the headline; Easy and Hard are their own leaderboards because
they rank models differently (the Hard items are the ones the labelling model got wrong).
"""

from __future__ import annotations

from builders.hub.benchmark import Benchmark, Task

_COMMON = {
    "config": "default",
    "split": "test",
    "metric": "accuracy",
    "scale": (0.0, 1.0),
    "higher_is_better": True,
}


def _task(task_id: str, name: str, key: str, n: str, what: str) -> Task:
    return Task(
        id=task_id,
        name=name,
        description=f"Accuracy on {what} of the test split: the share of questions whose reply names the "
        "right emotion (replies parsed with the project's answer parser; an unparsed reply is wrong).",
        value=("metrics", key),
        interval=("metrics", f"{key}_ci95"),
        n=("metrics", n),
        **_COMMON,  # type: ignore[arg-type]
    )


BENCHMARK = Benchmark(
    name="BQA",
    description=(
        "BQA (Body Language Question Answering) asks a video language model which of four emotions a "
        "person's body language shows in a short BoLD clip (audio removed). Questions are Easy or Hard by "
        "whether the model that labelled them answered right. Scores are accuracy on the test split, 0-1, "
        "as in Table 1 of Ozaki et al. (2025)."
    ),
    tasks=(
        _task("bqa_total", "Accuracy (Total)", "accuracy", "n", "all questions"),
        _task("bqa_easy", "Accuracy (Easy)", "accuracy_easy", "n_easy", "the Easy questions"),
        _task("bqa_hard", "Accuracy (Hard)", "accuracy_hard", "n_hard", "the Hard questions"),
    ),
)
#: The name of the ``.eval_results/<stem>.yaml`` file a model repo gets for this benchmark.
RESULTS_FILE_STEM = "bqa"
