"""Reports over model predictions: Markdown tables, PNG plots and a machine-readable ``metrics.json``.

* :func:`write_bqa_report` - BQA: accuracy by difficulty, error rates by gender/age/ethnicity,
  emotion-group confusion of wrong answers, CoT rationale leakage.
* :func:`write_marinelife_report` - MarineLife-16K: accuracy per dimension (0-100), the paper's
  Table 3 summary, and judge scores (OEMU, captions) by static/moving camera from judge results.

Both take several models at once (``{name: predictions file}``) and lay them side by side. They
score with the functions behind ``metrics/`` (:mod:`bqa.accuracy`, :mod:`marinelife16k.accuracy`,
:mod:`builders.scoring`) and never call an LLM. Splits come from each dataset's opener
(:func:`bqa.data.open_split`, :func:`marinelife16k.data.open_split`). Modules: :mod:`.inputs`
(prediction files), :mod:`.tables` (Markdown and number formats), :mod:`.paper_tables` (the papers'
tables, shared with the demo), :mod:`.plots` (PNG), :mod:`.document` (the report folder), one module
per benchmark.
"""

from pathlib import Path

from builders.report.bqa_report import load_bqa_split, score_bqa, write_bqa_report
from builders.report.document import Report
from builders.report.inputs import named_paths, read_predictions
from builders.report.marinelife_report import (
    load_marinelife_split,
    read_judge_results,
    score_marinelife,
    write_marinelife_report,
)

#: The JSON schema of a predictions line (README, "Predictions files"), shipped in the package.
PREDICTIONS_SCHEMA = Path(__file__).with_name("predictions.schema.json")

__all__ = [
    "PREDICTIONS_SCHEMA",
    "Report",
    "load_bqa_split",
    "load_marinelife_split",
    "named_paths",
    "read_judge_results",
    "read_predictions",
    "score_bqa",
    "score_marinelife",
    "write_bqa_report",
    "write_marinelife_report",
]
