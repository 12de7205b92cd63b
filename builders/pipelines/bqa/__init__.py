"""The BQA regeneration pipeline: the paper's four steps over BoLD, then the 6:2:2 split.

Modules, one job each: :mod:`.prepare` (STEP1 candidates, clips without audio),
:mod:`.step2_questions`, :mod:`.step3_filter` (rules, then an LLM verdict), :mod:`.step4_difficulty`
(Easy/Hard, asking models as :mod:`builders.evaluation.bqa_answers` does), :mod:`.split` (6:2:2 by
film, stratified), :mod:`.runner` (``build`` and BQA's part of its
:class:`builders.runs.summary.BuildSummary`). The frames each step sends are a
:class:`builders.video.frame_spec.FrameSpec`; every LLM step runs in :mod:`builders.runs.llm_step`.
CLI: ``vqabench bqa build``; the sample's offline rebuild is :mod:`builders.demo.bqa_sample`.
"""

from builders.pipelines.bqa.runner import STEPS, BQABuildDetails, BuildOptions, build
from builders.pipelines.bqa.split import grouped_stratified_split, split_release
from builders.video.frame_spec import FrameSpec

__all__ = [
    "STEPS",
    "BQABuildDetails",
    "BuildOptions",
    "FrameSpec",
    "build",
    "grouped_stratified_split",
    "split_release",
]
