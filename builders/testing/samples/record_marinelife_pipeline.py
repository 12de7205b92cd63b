"""Record the replies that rebuild the bundled sample offline: ``python -m builders.testing.samples.record_marinelife_pipeline``.

There is no model here. The replies come from a deterministic *scripted responder*
(:mod:`builders.scripted.marinelife_responder`) served by the real test chat server, and the whole
regeneration pipeline (:mod:`builders.pipelines.marinelife`) runs against it. They exist to exercise
the tooling offline (``vqabench marinelife build --sample --replay --work WORK``), not as model output.

Writes, next to this file (or under ``--out``):

* ``pipeline_replies.jsonl`` - the run's reply cache, exported (one validated reply per request, sorted by
  key; no request text, no credentials). Creation times and durations are zeroed so that recording
  again without changes gives the same file.
* ``pipeline_settings.json`` - the settings that make up the cache keys (model, base URL, temperature,
  seed, max tokens, extra body) and the pipeline configuration, which a replay must use.

The cache key includes the base URL, and the test server listens on a random port. So the run uses
a fixed, never-resolved base URL (``http://scripted-marinelife-sample.invalid/v1``) and reaches the server as an HTTP proxy
(``LLMClient(..., proxy=server.proxy_url)``, that client's requests alone): the keys
do not depend on the port.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from builders.llm import Recording
from builders.pipelines.marinelife.runner import PIPELINE, MarineLifeBuildDetails, PipelineConfig, build
from builders.runs.summary import BuildSummary
from builders.scripted.marinelife_responder import MarineLifeResponder
from builders.testing.recorder import recording_session, scripted_settings
from marinelife16k.annotations import read_annotations
from marinelife16k.sample import sample_attributes_path, sample_root, sample_video_root

MODEL = "scripted-marinelife-sample"  # also names the never-resolving endpoint http://<MODEL>.invalid/v1
REPORTED_MODEL = "scripted-marinelife-responder"  # what the server says answered: not a model
NOTE = (
    "Replies of a deterministic scripted responder (builders.scripted.marinelife_responder), not of a model; "
    "they exist to rebuild the sample offline with 'vqabench marinelife build --sample --replay --work WORK'."
)


def sample_recording(folder: str | os.PathLike[str], config: PipelineConfig) -> Recording:
    return Recording(Path(folder), PIPELINE, scripted_settings(MODEL), config.outputs(), NOTE)


def record(
    out_dir: str | os.PathLike[str] | None = None,
    *,
    config: PipelineConfig | None = None,
    work_dir: str | os.PathLike[str] | None = None,
) -> BuildSummary[MarineLifeBuildDetails]:
    """Run the pipeline on the sample against the scripted responder; write the replies and settings
    to ``out_dir`` (default: the sample folder). Returns the run's summary."""
    config = config or PipelineConfig()
    out = Path(out_dir) if out_dir is not None else sample_root()
    rows = read_annotations(sample_attributes_path(), video_root=sample_video_root())
    recording = sample_recording(out, config)
    with tempfile.TemporaryDirectory(prefix="marinelife-record-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp) / "work"
        responder = MarineLifeResponder(rows, sample_video_root(), config.frames)
        session = recording_session(recording, responder, Path(tmp) / "llm-cache.sqlite", REPORTED_MODEL)
        with session as (client, _):
            summary = build(
                work,
                client,
                attributes=sample_attributes_path(),
                video_root=sample_video_root(),
                config=config,
            )
            if not summary.ok:  # raised inside the session: nothing is written
                raise RuntimeError(f"the sample run did not complete:\n{summary.format()}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder to write (default: the installed sample folder)")
    parser.add_argument(
        "--work", type=Path, help="keep the run's work folder here (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    summary = record(args.out, work_dir=args.work)
    print(summary.format())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
