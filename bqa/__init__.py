"""BQA: body-language emotion question answering built from BoLD (Ozaki et al.).

Modules, one job each: :mod:`bqa.vocabulary` (labels, groups, demographic codes),
:mod:`bqa.bold` (BoLD CSV reader), :mod:`bqa.candidates` (STEP1), :mod:`bqa.records` (typed rows),
:mod:`bqa.features` (the ``datasets.Features``), :mod:`bqa.workfolder` (work folder contract),
:mod:`bqa.builder` (``GeneratorBasedBuilder``), :mod:`bqa.stats`, :mod:`bqa.card` and
:mod:`bqa.export` (Hub layout), :mod:`bqa.accuracy` (the scoring tables of the paper, behind
``metrics/bqa_accuracy``), :mod:`bqa.sample` (bundled BoLD-format sample).
"""

from bqa.vocabulary import DIFFICULTIES, EMOTION_GROUPS, EMOTIONS, GROUP_NAMES

__all__ = ["DIFFICULTIES", "EMOTIONS", "EMOTION_GROUPS", "GROUP_NAMES"]
