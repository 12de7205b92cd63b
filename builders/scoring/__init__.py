"""Generic scoring behind the ``metrics/`` modules: answer parsing, statistics, Self-BLEU, tokenizers,
input validation, the LLM-judge core (:mod:`.judge`, :mod:`.rubrics`, :mod:`.rubric_files`) and
judge agreement.

No dataset is known here: BQA's and MarineLife-16K's scoring rules (accuracy tables, MarineLife's
judge rubrics) live in their own packages, over these functions. Each ``metrics/<name>/<name>.py``
is a thin ``evaluate`` wrapper over one tested function, so the numbers can be tested (and used)
without ``evaluate``.
"""
