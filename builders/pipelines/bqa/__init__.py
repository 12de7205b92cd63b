"""The BQA regeneration pipeline (the paper's four steps over BoLD) and the model evaluation runner.

Modules, one job each: :mod:`.prepare` (STEP1 candidates, clips without audio), :mod:`.frames`
(which frames the LLM sees), :mod:`.llm_step` (the batched, resumable loop of every LLM step),
:mod:`.step2_questions`, :mod:`.step3_filter` (rules, then an LLM verdict), :mod:`.step4_difficulty`
(Easy/Hard), :mod:`.answers` (asking for and reading an answer: STEP4 and evaluation), :mod:`.split`
(6:2:2 by film, stratified), :mod:`.runner` (``build`` and its summary), :mod:`.evaluate`
(predictions JSONL for any OpenAI-compatible VideoLLM), :mod:`.sample_replay` (the bundled sample,
rebuilt offline from recorded replies). CLI: ``vqabench bqa build`` / ``vqabench bqa evaluate``.
"""

from builders.evaluation.bqa import EvalSummary, evaluate
from builders.pipelines.bqa.runner import STEPS, BuildOptions, BuildSummary, build
from builders.pipelines.bqa.split import grouped_stratified_split, split_release
from builders.video.frame_spec import FrameSpec

__all__ = [
    "STEPS",
    "BuildOptions",
    "BuildSummary",
    "EvalSummary",
    "FrameSpec",
    "build",
    "evaluate",
    "grouped_stratified_split",
    "split_release",
]
