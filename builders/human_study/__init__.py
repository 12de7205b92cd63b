"""Human baselines as the papers ran them: draw a study, hand each rater a static page, score it.

* :func:`make_study` - a seeded draw from a split, at random (both papers') or stratified (Easy/Hard
  for BQA, question type for MarineLife-16K's open-ended questions), each item assigned to k raters
  (balanced; :mod:`.designs`: the papers' designs as one preset), and one folder
  per rater with an ``index.html`` that works from disk (no network, no server), its clips (audio
  removed) and ``study.json``. Nothing about the correct answers goes into those folders.
* :func:`score_study` - reads the raters' exported answer files back and computes BQA human accuracy
  (Easy/Hard/Total, Wilson intervals, majority vote, Fleiss' kappa, Krippendorff's alpha, per rater)
  or MarineLife-16K expert scores (mean per item and criterion, Krippendorff's alpha, agreement with
  the LLM judge); :func:`write_study_report` writes them as Markdown + PNG + metrics.json.

Modules: :mod:`.study` (the record), :mod:`.draw`, :mod:`.designs`, :mod:`.source` (the dataset openers),
:mod:`.rubric_page`, :mod:`.page` (+ ``page.html``), :mod:`.make`, :mod:`.answers`, :mod:`.score`,
:mod:`.report`.
"""

from builders.human_study.make import make_study
from builders.human_study.report import write_study_report
from builders.human_study.run import score_study
from builders.human_study.study import Study

__all__ = ["Study", "make_study", "score_study", "write_study_report"]
