"""MarineLife-16K: motion-aware marine video QA and captioning.

Modules: ``vocabulary`` (attributes, question types, dimensions, camera kinds), ``questions`` (the
deterministic part of each QA record), ``schema`` (the appendix's record and its validator),
``annotations`` (expert attribute files), ``splits`` (split by video), ``workfolder`` (what a pipeline
hands to the builder), ``features`` / ``builder`` / ``card`` / ``export`` (the Hub release),
``accuracy`` (per-dimension accuracy, behind ``metrics/marinelife_qa``), ``rubrics`` (the judge rubrics,
registered on import) and ``sample`` (bundled clips, attributes and ground-truth QA).
"""

from marinelife16k.vocabulary import ATTRIBUTES, COLLECTIONS, DIMENSIONS, QUESTION_TYPES, camera_kind

__all__ = ["ATTRIBUTES", "COLLECTIONS", "DIMENSIONS", "QUESTION_TYPES", "camera_kind"]
