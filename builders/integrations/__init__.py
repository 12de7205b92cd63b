"""BQA and MarineLife-16K inside the evaluation harnesses researchers already run.

- :mod:`builders.integrations.lmms_eval`: an lmms-eval task folder (``--include_path``) with the
  tasks ``bqa``, ``bqa_cot``, ``marinelife16k_mcq`` and ``marinelife16k_open``;
- :mod:`builders.integrations.vlmevalkit`: VLMEvalKit video datasets ``BQA_16frame``, ``BQA_1fps``
  and ``MarineLife16K_8frame``.

Both score through this project's parser, metrics and judge (:mod:`builders.integrations.items`), so
their numbers equal ``vqabench report`` on the same replies, and what they write can be read back
by the report (:mod:`builders.report.harness_outputs`). Neither harness is imported here.
"""

from __future__ import annotations

from pathlib import Path

#: Harness name (the ``vqabench integrations path`` argument) -> the folder shipped for it.
FOLDERS: dict[str, Path] = {
    "lmms-eval": Path(__file__).resolve().parent / "lmms_eval",
    "vlmevalkit": Path(__file__).resolve().parent / "vlmevalkit",
}
