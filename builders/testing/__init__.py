"""Real test doubles shared by tests, benchmarks and the sample-recording scripts (:mod:`.samples`).

Not in the wheel (``setup.py`` leaves ``builders.testing`` out; ``.ci/run`` checks the file list): it
runs from a source checkout, where an editable install (``pip install -e .``) imports it.

Media: :mod:`.clips` (MP4 writers with the frame index painted in). Servers on 127.0.0.1:
:mod:`.chat_server` (OpenAI-compatible; its replies and faults in :mod:`.chat_faults`, request
readers in :mod:`.chat_requests`, schema-valid and invalid values in :mod:`.schema_examples`) and
:mod:`.hub_server` (the Hub protocol). Scripted models: :mod:`.bqa_responder`,
:mod:`.marinelife_responder`, :mod:`.baseline_responder`; :mod:`.recorder` records them; synthetic
text in :mod:`.questions`. A double imitates what it stands for and never imports the code under
test (pipelines, runners, dataset code other than the vocabularies): ``tests/test_layering.py``.
"""
