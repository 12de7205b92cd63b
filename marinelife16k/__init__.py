"""MarineLife-16K: motion-aware marine video QA and captioning."""

from marinelife16k.vocabulary import ATTRIBUTES, COLLECTIONS, DIMENSIONS, QUESTION_TYPES, camera_kind

__all__ = ["ATTRIBUTES", "COLLECTIONS", "DIMENSIONS", "QUESTION_TYPES", "camera_kind"]
