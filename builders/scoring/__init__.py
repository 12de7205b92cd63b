"""Scoring functions behind the ``metrics/`` modules: answer parsing, statistics, accuracies, Self-BLEU.

Each ``metrics/<name>/<name>.py`` is a thin ``evaluate`` wrapper over one function here, so the
numbers can be tested (and used) without ``evaluate``.
"""
