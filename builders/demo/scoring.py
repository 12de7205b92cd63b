"""Score prediction files with every metric of the project, the way users do: ``evaluate.load`` on the
metric folders the package gives them (:func:`builders.metric_path`: inside an installed wheel, or
``<repo>/metrics/<name>`` in a checkout). A missing metrics folder is an error, never a quiet switch
to other code; ``Metrics(..., folder=None)`` calls the functions behind the metrics directly (the
tests compare both), and :attr:`Metrics.via` says which ran.

Where those folders are not next to the installed ``builders`` package (a non-editable install), the
same functions behind them are called directly (:mod:`bqa.accuracy`, :mod:`marinelife16k.accuracy`,
:mod:`builders.scoring`, :func:`builders.evaluation.marinelife.judge_marinelife`), and
:attr:`Metrics.via` says so. The judge replays recorded replies only, and every setting that enters
a cache key is passed to it explicitly (``none`` for one recorded as off), so ``VQABENCH_JUDGE_*``
variables of the caller's environment can neither change a key nor reach a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from builders import metrics_dir
from builders.llm import Recording


class Metrics:
    """``bqa_accuracy``, ``self_bleu``, ``marinelife_qa`` and ``judge``, each returning the metric's
    result dict. ``folder``: the metric folders (default: :func:`builders.metrics_dir`, which fails
    when they are missing; None: call the functions behind them directly)."""

    def __init__(self, judge: Recording, folder: Path | None | str = "auto") -> None:
        self.judge_recording = judge
        self.folder = metrics_dir() if folder == "auto" else (Path(folder) if folder else None)
        self._modules: dict[tuple[str, str | None], Any] = {}

    @property
    def via(self) -> str:
        if self.folder is None:
            return "builders.scoring / builders.scoring.rubrics functions (called directly, not the metric modules)"
        return "evaluate.load(builders.metric_path('<name>'))"

    def module(self, name: str, config: str | None = None) -> Any:
        """The ``evaluate`` module ``name`` (with ``config``), loaded once."""
        if (name, config) not in self._modules:
            import evaluate

            if self.folder is None:
                raise RuntimeError("no metrics folder to load evaluate modules from")
            self._modules[name, config] = evaluate.load(str(self.folder / name), config)
        return self._modules[name, config]

    def bqa_accuracy(self, **inputs: Any) -> dict[str, Any]:
        if self.folder is None:
            from bqa.accuracy import bqa_accuracy

            return bqa_accuracy(**inputs).to_dict()
        return self.module("bqa_accuracy").compute(**inputs)

    def self_bleu(self, sentences: Sequence[str]) -> dict[str, Any]:
        if self.folder is None:
            from builders.scoring.self_bleu import self_bleu

            result = self_bleu(list(sentences))
            return {"self_bleu": result.score, "signature": result.signature}
        return self.module("self_bleu").compute(predictions=list(sentences))

    def marinelife_qa(self, **inputs: Any) -> dict[str, Any]:
        if self.folder is None:
            from marinelife16k.accuracy import marinelife_accuracy

            return marinelife_accuracy(**inputs).to_dict()
        return self.module("marinelife_qa").compute(**inputs)

    def judge(self, rubric: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The judge metric with rubric ``rubric`` on ``inputs`` (predictions, references, questions,
        camera, evidence), answered from the recorded judge replies."""
        s = self.judge_recording.settings
        if self.folder is None:
            from builders.evaluation.marinelife import judge_marinelife

            with self.judge_recording.replay_client() as client:
                return judge_marinelife(rubric, inputs, client).to_dict()
        # Explicit "none", not None: None would let a VQABENCH_JUDGE_* default in.
        recorded = {name: "none" if value is None else value for name, value in s.cache_identity().items()}
        return self.module("judge", rubric).compute(
            **inputs, **recorded, api_key_env="none", replies_path=str(self.judge_recording.replies_path)
        )
