"""A run killed while appending leaves a torn last line; a second kill after the resumed run appended
more records must not make the step's log unreadable (issue 15, case 10).

Real ``vqabench bqa build`` processes against the real test chat server, SIGKILLed at an exact
request (tests/test_bqa_pipeline_crash.py's KillSwitch). The torn line is the bytes a kill in the
middle of ``write()`` leaves: the first part of a record, no newline.
"""

from __future__ import annotations

from test_bqa_pipeline_crash import LIMIT, MODEL, KillSwitch, build_args, step_files

from bqa.sample import sample_root
from builders.demo.bqa_sample import SAMPLE_NOTE
from builders.files.jsonio import read_jsonl
from builders.llm import LLMClient, LLMSettings
from builders.pipelines.bqa.runner import BuildOptions, build
from builders.testing.chat_server import ChatServer


def test_torn_tail_then_a_second_kill_resumes_to_the_clean_build(tmp_path):
    switch = KillSwitch()
    with ChatServer(model=None) as server:
        server.handler = switch
        work = tmp_path / "killed"
        args = build_args(work, server, ahead=1)  # one record per request
        switch.run(args, kill_at=6)  # killed in STEP2 with 5 records in the partial log
        partial = work / "steps" / "questions.partial.jsonl"
        lines = partial.read_bytes().splitlines(keepends=True)
        assert len(lines) == 5
        # The sixth record was being written when the process died: its first 40 bytes made it.
        partial.write_bytes(b"".join(lines) + lines[-1][:40])
        switch.run(args, kill_at=3)  # resumed, appended two records, killed again
        assert len(read_jsonl(partial)) == 7  # every line whole: the torn bytes were cut, not appended to
        switch.run(args, kill_at=None)
        assert (work / "steps" / "questions.jsonl").exists() and (work / "release").is_dir()

        clean = tmp_path / "clean"
        settings = LLMSettings(model=MODEL, base_url=server.url, api_key_env=None, progress=False)
        with LLMClient(settings, cache_path=clean / "llm-cache.sqlite") as client:
            assert build(clean, BuildOptions(sample_root(), limit=LIMIT, source_note=SAMPLE_NOTE), client).ok
    assert step_files(work) == step_files(clean)
