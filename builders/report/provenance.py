"""How each compared run was made, read from its predictions file, and the rule that a report puts
side by side only runs made the same way.

An evaluation runner writes, on every line, ``provenance`` (tool version, data, split, frames, the
model asked for) next to ``model`` (as the server reported it), ``prompt``/``prompt_version`` and
``answer_parser``; a hand-written file may carry any of them or none (see the predictions schema,
``builders/report/predictions.schema.json``). A value a file does not record is ``None``: it cannot
be checked, and the report says so. Runs whose frame spec, prompt version or parser version differ,
or that were made on different videos of the split (a named subset, :mod:`builders.hub.subset`,
against another or against the whole split), are refused unless ``allow_mixed``, and are then
marked in the report.

Frames are compared strictly: a run that records frames no registered rule names (a harness whose
model sampled the clip itself: ``{"rule": null, "sampled_by": ...}``) is never laid beside another
run, and a run that records no frames (a hand-written file, an old harness output) is not laid
beside one that does, unless ``allow_mixed``: nobody can say they saw the same frames. Runs none of
which records frames (hand-written files compared with each other) are shown as "not recorded".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypeGuard

from builders import tool_version
from builders.hub.source import DataSource, resolve_data
from builders.hub.subset import ALL, FIELD, describe, subset_key
from builders.report.harness_outputs import read_prediction_lines
from builders.report.tables import markdown_table
from builders.video.frame_rules import DEFAULT_RULE

#: What must agree between runs laid side by side (a difference changes what the numbers mean).
COMPARED: tuple[str, ...] = ("frames", "prompt", "rationale_prompt", "answer_parser", FIELD)
#: Everything recorded per run, in the order the report shows it.
FIELDS: tuple[str, ...] = (
    "model_asked",
    "model_reported",
    "frames",
    "prompt",
    "answer_parser",
    "tool",
    "data",
    "split",
    FIELD,
)
#: Recorded by some runs only (BQA's styles, presets): shown when at least one compared run has them.
OPTIONAL_FIELDS: tuple[str, ...] = (
    "style",
    "answer_leaking",
    "rationale_model",
    "rationale_prompt",
    "preset",
    "images",  # what a harness did to the frames' pixels (VLMEvalKit: JPEG, detail low)
)
MIXED_FLAG = "--allow-mixed"


def frames_known(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether a recorded frames value names frames a registered rule reproduces."""
    return isinstance(value, Mapping) and value.get("sampled_by") is None and _frame_key(value) is not None


def _frame_key(value: Mapping[str, Any]) -> Any:
    """The frame spec a recorded value means, as comparable JSON (a spec recorded before ``rule`` and
    ``video_input`` existed is the uniform rule's, as images); None when it is no frame spec."""
    from builders.video.frame_spec import FrameSpec  # lazy: start-up speed of the report command

    try:
        return FrameSpec.from_json(dict(value)).to_json()
    except (ValueError, TypeError):
        return None


def _frames(line: Mapping[str, Any], run: Mapping[str, Any]) -> Any:
    if "frames" in run:
        return run["frames"]
    if "fps" in line or "num_frames" in line:
        return {"fps": line.get("fps"), "num_frames": line.get("num_frames")}
    return None


def _line_values(line: Mapping[str, Any]) -> dict[str, Any]:
    recorded = line.get("provenance")
    run: Mapping[str, Any] = recorded if isinstance(recorded, Mapping) else {}
    preset = run.get("preset")
    if isinstance(preset, Mapping):
        frame_flags = {"--fps", "--num-frames", "--max-side", "--frame-rule", "--video-input"}
        overridden = frame_flags & set(preset.get("overridden") or ())
        preset = str(preset.get("name")) + (" (frames overridden)" if overridden else "")
    return {
        "model_asked": run.get("model_asked"),
        "model_reported": line.get("model"),
        "frames": _frames(line, run),
        "prompt": _versioned(line, "prompt"),
        "answer_parser": line.get("answer_parser"),
        "tool": run.get("tool"),
        "data": run.get("data"),
        "split": run.get("split"),
        "style": line.get("style") or run.get("style"),
        "answer_leaking": line.get("answer_leaking", run.get("answer_leaking")),
        "images": run.get("images"),
        "rationale_model": line.get("rationale_model"),
        "rationale_prompt": _versioned(line, "rationale_prompt"),
        "preset": preset,
        # A runner records its subset; a runner's line without one was made on the whole split.
        FIELD: run.get(FIELD, ALL) if run else None,
    }


def _versioned(line: Mapping[str, Any], field: str) -> str | None:
    """``name@version`` of a recorded prompt (the name alone when no version is recorded)."""
    name = line.get(field)
    if name and line.get(f"{field}_version") not in (None, ""):
        return f"{name}@{line[f'{field}_version']}"
    return name or None


def run_provenance(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One value per field over the file's lines: the value all lines that record it share, a list of
    the distinct values when they disagree, None when no line records it. Lines of open-ended
    questions (no ``answer_parser``) do not count against the parser."""
    seen: dict[str, list[Any]] = {f: [] for f in (*FIELDS, *OPTIONAL_FIELDS)}
    for line in read_prediction_lines(path):  # a harness output's lines too
        if not isinstance(line, dict):
            continue  # read_predictions names the bad line
        for field, value in _line_values(line).items():
            if value is not None and value not in seen[field]:
                seen[field].append(value)
    return {f: (v[0] if len(v) == 1 else v or None) for f, v in seen.items()}


def _show(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if subset_key(value) is not None:
        return describe(value)
    if isinstance(value, Mapping) and value.get("sampled_by"):
        return f"unknown (sampled by {value['sampled_by']})"
    if isinstance(value, Mapping) and set(value) <= {"fps", "num_frames", "max_side", "rule", "video_input"}:
        text = f"{value.get('num_frames')} frames" if value.get("fps") is None else f"{value['fps']} fps"
        if value.get("fps") is not None and value.get("num_frames") is not None:
            text += f" (at most {value['num_frames']})"
        if value.get("rule") not in (None, DEFAULT_RULE):
            text += f", {value['rule']} rule"
        if value.get("video_input") not in (None, "images"):
            text += f", as {value['video_input']}"
        return text + (f", max side {value['max_side']}" if value.get("max_side") else "")
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {v}" for k, v in value.items() if v is not None)
    return str(value)


def show(value: Any) -> str:
    """A recorded value as a table cell (several values within one file joined by ' / ')."""
    if isinstance(value, list):
        return " / ".join(_show(v) for v in value) + " (mixed within the file)"
    return _show(value)


def _key(field: str, value: Any) -> Any:
    """What must be equal between runs: the whole frame spec; the videos (every one, or a subset's
    hash); for a prompt or a parser, the version of each name (``name@version``): two prompts (the
    BQA styles) are a deliberate comparison, two versions of one prompt are not."""
    if field == FIELD:
        return "videos"
    if field == "frames" or not isinstance(value, str):
        return None
    return value.split("@", 1)[0]  # a prompt recorded without a version is its own name


def frames_as_designed(
    runs: Mapping[str, Mapping[str, Any]], designed: Mapping[str, Mapping[str, Any]]
) -> bool:
    """Whether the runs that record frames differ only where a paper's table has a column for it: each
    run's recorded frames are the ``fps``/``num_frames`` its table row prints (``designed``: run ->
    ``{"fps", "num_frames"}``; BQA's ``#F``: ``*`` = 1 fps, ``16``), and every other part of the frame spec
    (rule, size, input) is the same for all."""
    rest = []
    for name, run in runs.items():
        if "frames" not in run:
            continue
        value = run["frames"]
        if name not in designed or not frames_known(value):
            return False
        key = _frame_key(value)
        if (key["fps"], key["num_frames"]) != (designed[name].get("fps"), designed[name].get("num_frames")):
            return False
        rest.append({k: v for k, v in key.items() if k not in ("fps", "num_frames")})
    return bool(rest) and all(r == rest[0] for r in rest)


def mixed_settings(
    runs: Mapping[str, Mapping[str, Any]], *, allow_mixed: bool, frames_by_design: bool = False
) -> list[str]:
    """The :data:`COMPARED` fields on which ``runs`` (model -> :func:`run_provenance`) differ, as
    lines naming each model's value: another frame spec, or another version of the same prompt or
    parser. ValueError listing them unless ``allow_mixed``. A prompt or parser a file does not record
    is not compared (it is shown as "not recorded"); frames are (see the module doc). Runs that all
    followed one preset's frames (none overriding them, every one known), or whose frames differ only
    as the paper's table has them (``frames_by_design``: :func:`frames_as_designed`), may differ in
    frames: the paper set them per model, and its table prints them in a column."""
    differences = []
    # Only the runs that record frames count here: the judge results and the report itself
    # (:func:`compared_runs`) record videos alone.
    framed = [run for run in runs.values() if "frames" in run]
    presets = {run.get("preset") for run in framed}
    # One preset that sets the frames per model (the BQA paper: 1 fps for API models, 16 frames for open
    # ones), followed by every run: their frames differ as the paper's did, by design.
    frames_by_preset = (
        len(presets) == 1
        and isinstance(next(iter(presets)), str)
        and "overridden" not in str(presets)
        and all(frames_known(run.get("frames")) for run in framed)
    )
    for field in COMPARED:
        if field == "frames":
            frames = None if frames_by_preset or frames_by_design else _frames_difference(runs)
            if frames:
                differences.append(frames)
            continue
        recorded = {name: run.get(field) for name, run in runs.items() if run.get(field) is not None}
        versions: dict[Any, list[Any]] = {}
        for value in recorded.values():
            same = versions.setdefault(_key(field, value), [])
            compared = subset_key(value) if field == FIELD else value
            if compared not in same:
                same.append(compared)
        if any(len(v) > 1 for v in versions.values()) or any(isinstance(v, list) for v in recorded.values()):
            differences.append(f"{field}: " + "; ".join(f"{n} {show(v)}" for n, v in recorded.items()))
    if differences and not allow_mixed:
        hint = (
            "; a report on a named subset takes the run's --videos FILE or --video-sample N --seed S (and judge "
            "results made with the same)"
            if any(d.startswith(f"{FIELD}:") for d in differences)
            else ""
        )
        raise ValueError(
            "the runs were not made the same way, so their numbers are not comparable side by side: "
            + " | ".join(differences)
            + f"; report them separately, or pass {MIXED_FLAG} to lay them side by side marked as mixed{hint}"
        )
    return differences


def _frames_difference(runs: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The frames line of :func:`mixed_settings` (see the module doc), or None."""
    # The judge results and the report itself (:func:`compared_runs`) record videos only, no frames.
    values = {name: run.get("frames") for name, run in runs.items() if "frames" in run}
    keys = []
    for value in values.values():
        key = value if isinstance(value, list) else _frame_key(value) if frames_known(value) else None
        if key is not None and key not in keys:
            keys.append(key)
    recorded = [v for v in values.values() if v is not None]
    sampled = [v for v in recorded if not isinstance(v, list) and not frames_known(v)]
    within = any(isinstance(v, list) for v in recorded)
    missing = recorded and len(recorded) < len(values)
    if within or len(keys) > 1 or missing or (sampled and len(values) > 1):
        return "frames: " + "; ".join(f"{n} {show(v)}" for n, v in values.items())
    return None


#: The report itself, among the runs compared: it scores one set of videos.
THIS_REPORT = "(this report)"


def compared_runs(
    runs: Mapping[str, Mapping[str, Any]],
    scored: Any,
    *,
    restricted: bool,
    judged: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """What :func:`mixed_settings` compares for a report: each run as it recorded itself, except that
    a report restricted to a subset (``restricted``) scores every run on its videos (``scored``); the
    judge results' recorded videos (``judged``: label -> value); and the report's own videos, so that
    a run, or a judge result, on other videos than the report scores is refused too."""
    out = {name: {**run, **({FIELD: scored} if restricted else {})} for name, run in runs.items()}
    out.update({label: {FIELD: value} for label, value in (judged or {}).items()})
    out[THIS_REPORT] = {FIELD: scored}
    return out


def as_source(data: str | os.PathLike[str] | DataSource) -> DataSource:
    """A report's ``data``: a resolved :class:`DataSource` as is, a folder or repo id resolved."""
    return data if isinstance(data, DataSource) else resolve_data(data)


def report_provenance(
    source: DataSource, split: str, answer_parser: str | None, videos: Any = ALL
) -> dict[str, Any]:
    """The ``provenance`` block of a report's metrics.json: how the report itself was made, on which
    videos (``"all"``, or a named subset's :meth:`~builders.hub.subset.VideoSubset.record`)."""
    return {
        "tool": tool_version(),
        "dataset": source.provenance(),
        "split": split,
        "answer_parser": answer_parser,
        FIELD: videos,
    }


def runs_section_body(
    runs: Mapping[str, Mapping[str, Any]],
    mixed: list[str],
    extra: Mapping[str, Mapping[str, str | None]] | None = None,
) -> list[str]:
    """Markdown: one row per model with how its run was made, and the mixed-settings warning.
    ``extra``: more columns per model (e.g. the judge's rubric signature)."""
    extra = extra or {}
    columns = list(dict.fromkeys(c for cells in extra.values() for c in cells))
    labels = {
        "model_asked": "Model asked",
        "model_reported": "Model reported",
        "frames": "Frames",
        "prompt": "Prompt",
        "answer_parser": "Parser (run)",
        "tool": "Tool",
        "data": "Data (run)",
        "split": "Split (run)",
        "style": "Style",
        "answer_leaking": "Answer-leaking",
        "rationale_model": "Rationale model",
        "rationale_prompt": "Rationale prompt",
        "preset": "Preset",
        "images": "Images sent",
        FIELD: "Videos (run)",
    }
    fields = [*FIELDS, *(f for f in OPTIONAL_FIELDS if any(run.get(f) is not None for run in runs.values()))]
    rows = [
        [name, *(show(run.get(f)) for f in fields), *(extra.get(name, {}).get(c) for c in columns)]
        for name, run in runs.items()
    ]
    body = [
        markdown_table(
            ["Model", *(labels[f] for f in fields), *columns], rows, "l" * (1 + len(fields) + len(columns))
        )
    ]
    if mixed:
        body.insert(
            0,
            "**Mixed settings (" + MIXED_FLAG + "):** these runs were not made the same way, so their "
            "numbers are not strictly comparable: " + "; ".join(mixed) + ".",
        )
    return body
