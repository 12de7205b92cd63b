"""BQA: body-language emotion question answering built from BoLD (Ozaki et al.)."""

from bqa.vocabulary import DIFFICULTIES, EMOTION_GROUPS, EMOTIONS, GROUP_NAMES

__all__ = ["DIFFICULTIES", "EMOTIONS", "EMOTION_GROUPS", "GROUP_NAMES"]
