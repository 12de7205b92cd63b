"""Everything that is not a dataset package, in sub-packages by layer (imports point down only;
``tests/test_layering.py`` keeps it so).

Primitives: :mod:`.files` (atomic files, JSON/JSONL), :mod:`.video` (frames: the researcher API
``from builders.video import sample_frames``), :mod:`.llm` (the one LLM client), :mod:`.hub` (Hub
layout, publishing), :mod:`.scoring` (generic scoring and the judge core), :mod:`.runs` (resumable
steps). Above the dataset packages: :mod:`.pipelines` (regeneration), :mod:`.evaluation` (model
runners), :mod:`.report`, :mod:`.demo`, :mod:`.cli`. Beside them: :mod:`.testing` (test doubles).
"""
