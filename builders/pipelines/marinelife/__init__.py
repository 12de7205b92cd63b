"""MarineLife-16K regeneration: the paper's caption engine and QA generation, with an LLM.

Modules, in the order a run uses them:

- :mod:`.captioner` - stage 1: one draft caption from 8 frames sampled in order (step ``caption_drafts``);
- :mod:`.reviewer` - stage 2: S_c, the draft's alignment with the 13 attributes, scored by the judge
  rubric ``marinelife_caption_review`` (step ``caption_reviews``);
- :mod:`.refiner` - stage 3: below tau, a rewrite with the attributes (step ``caption_refinements``);
- :mod:`.caption_engine` - the three stages and the merged caption record of each video;
- :mod:`.qa_generation` - one request per video for the distractors; records built and validated
  by :mod:`marinelife16k.questions` / :mod:`marinelife16k.schema` (step ``qa``);
- :mod:`.runner` - :func:`~.runner.build`: attributes + videos -> work folder -> release, resumable,
  with a :class:`builders.runs.summary.BuildSummary`; recorded runs for offline replay;
- :mod:`.checks`, :mod:`.outcomes` - text checks behind the re-asks; per-reply cost accounting.

CLI: ``vqabench marinelife build`` (:mod:`builders.cli.marinelife`).
"""

from builders.pipelines.marinelife.runner import (
    MarineLifeBuildDetails,
    PipelineConfig,
    build,
    replay_client,
)

__all__ = ["MarineLifeBuildDetails", "PipelineConfig", "build", "replay_client"]
