"""The MarineLife-16K report: per-dimension accuracy and judge scores, one column per model.

Multiple-choice accuracy comes from :func:`marinelife16k.accuracy.marinelife_accuracy`
(0-100 per dimension, 95% Wilson intervals; the paper's Table 3), called once per model on the raw
replies. Open-ended answers are scored by the LLM judge, which this report does not call: it reads
the judge's results, already computed, from a JSON file (``--judge-results``)::

    {"<model>": {"oemu": <judge result>, "caption": <judge result>}, ...}

``oemu`` is the judge on the ``camera_object_open_ended`` questions (the OEMU column of Table 3),
``caption`` the judge on captions (BEH, AH, ECF for static and moving camera: Table 4); either may
be left out. A judge result is the judge metric's output, read as a
:class:`~builders.scoring.judge_results.JudgeResult`: ``score``, ``criteria``, ``n``, ``n_failed`` and
``by_camera`` = ``{"static"|"moving": {"score", "criteria", "n"}}`` (without ``by_camera`` the camera
rows show –), intervals keyed by their level (``score_ci95``; files written before the level was
recorded read as 95%). The whole result (``judge``, ``failed``...) is kept in metrics.json.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from builders.files.jsonio import read_json_object
from builders.hub.source import DataSource
from builders.hub.subset import FIELD, VideoSelection, VideoSubset, filter_by_video, recorded
from builders.report.document import Report, Section, report_folder, write_report
from builders.report.harness_outputs import read_prediction_lines
from builders.report.inputs import align, read_predictions
from builders.report.judge_join import join_by_predictions_file
from builders.report.model_groups import Arranged, ModelRow, arrange, read_models_file
from builders.report.paired import accuracy_pairs, paired_section, score_pairs
from builders.report.paper_comparison import PaperRequest, paper_section
from builders.report.paper_tables import (
    camera_scores,
    caption_table,
    caption_values,
    group_averages,
    table3,
    table3_values,
)
from builders.report.parser_change import parser_change_section, run_parser_change
from builders.report.plots import Bar, grouped_bars
from builders.report.provenance import (
    as_source,
    compared_runs,
    mixed_settings,
    report_provenance,
    run_provenance,
    runs_section_body,
)
from builders.report.tables import fmt_number, fmt_rate, markdown_table, parse_reasons_table
from builders.scoring.answer_parsing import DEFAULT_PARSER
from builders.scoring.judge_results import JudgeResult, JudgeScores, results_to_dict
from builders.scoring.parser_change import ChangeItem
from marinelife16k.accuracy import (
    ACCURACY_DIMENSIONS,
    OVERALL,
    MarineLifeAccuracy,
    marinelife_accuracy,
    marinelife_parser,
)
from marinelife16k.data import open_split
from marinelife16k.predictions import accuracy_inputs, item_fields, joined_lines
from marinelife16k.rubrics import CAMERA_GROUP, JUDGE_TASKS
from marinelife16k.vocabulary import (
    CAMERA_KINDS,
    CAPTION_CRITERIA,
    DIMENSION_OF_TYPE,
    MULTIPLE_CHOICE,
    OPTION_LABELS,
)

log = logging.getLogger(__name__)

OEMU, CAPTION = "oemu", "caption"
JUDGE_SCALE = (0.0, 5.0)


@dataclass(frozen=True)
class MarineLifeSplit:
    """The reference side: the split's multiple-choice rows and the ids of its open-ended questions
    (of a named subset of its videos, when one is given)."""

    source: str
    split: str
    rows: list[dict[str, Any]]  # multiple-choice only, as a predictions line's item fields
    open_ended_ids: list[str]
    data: DataSource  # where the split was read from (provenance)
    subset: VideoSubset | None = None  # the videos scored (None: all of the split's)
    outside_ids: tuple[str, ...] = ()  # questions of the split's other videos (their replies are ignored)


def load_marinelife_split(
    data: str | os.PathLike[str] | DataSource, split: str, videos: VideoSelection | None = None
) -> MarineLifeSplit:
    """``split`` of the ``qa`` config of an exported Hub folder, of a MarineLife-16K work folder, or
    of a Hub repo id (:func:`builders.hub.source.resolve_data`); with ``videos``, only the questions
    of that named subset of its videos (:mod:`builders.hub.subset`)."""
    source = as_source(data)
    opened = open_split(source.folder, split, check_videos=False)
    if not opened.rows:
        raise ValueError(f"{opened.source}: the {split} split has no questions")
    subset = videos.choose(list(opened.videos), split=split, source=opened.source) if videos else None
    kept = filter_by_video(opened.rows, lambda r: r["id"], subset)
    rows = [item_fields(r, opened.videos[r["id"]]) for r in kept]
    mcq = [r for r in rows if r["question_format"] == MULTIPLE_CHOICE]
    open_ids = [r["question_id"] for r in rows if r["question_format"] != MULTIPLE_CHOICE]
    chosen = {r["question_id"] for r in kept}
    outside = tuple(r["question_id"] for r in opened.rows if r["question_id"] not in chosen)
    return MarineLifeSplit(opened.source, split, mcq, open_ids, source, subset, outside)


#: What a predictions line needs for the judge without --data (what 'marinelife evaluate' writes).
JUDGE_LINE_FIELDS: tuple[str, ...] = (
    "question_id",
    "type",
    "raw_output",
    "reference",
    "question",
    "camera_kind",
)


def judgeable_rows(
    path: str | os.PathLike[str],
    data: DataSource | None,
    split: str,
    *,
    allow_missing: bool = False,
    videos: VideoSelection | None = None,
) -> tuple[list[dict[str, Any]], list[str], VideoSubset | None]:
    """The predictions lines ``vqabench marinelife judge`` judges, the open-ended question ids left
    without an answer, and the named subset of videos judged (None: all).

    Without ``data`` the file must be an evaluation runner's (each line carries its question,
    reference and camera kind). With ``data`` any predictions file (``question_id`` and the raw
    reply) is joined to the split's open-ended questions; a reply for a question outside the split
    is an error, and so is an open-ended question without one unless ``allow_missing``. ``videos``
    keeps the questions of a named subset of the split's videos (``--video-sample`` draws from the
    split, so it needs ``data``; ``--videos FILE`` without ``data`` must name videos the file has).
    """
    if data is None:
        rows = read_prediction_lines(path)  # or an lmms-eval log / VLMEvalKit result file
        needed = (*JUDGE_LINE_FIELDS, "video") if videos else JUDGE_LINE_FIELDS
        for number, row in enumerate(rows, 1):
            absent = [k for k in needed if not isinstance(row, dict) or k not in row]
            if absent:
                raise ValueError(
                    f"{path}, line {number}: no {', '.join(absent)}: not a 'marinelife evaluate' output; pass "
                    "--data FOLDER_OR_REPO (and --split) to join each answer to the dataset's question"
                )
        if videos is None:
            return rows, [], None
        in_file = sorted({row["video"] for row in rows})
        chosen = replace(videos.choose(in_file, split=split, source=str(path)), of=None)
        return filter_by_video(rows, lambda row: row["video"], chosen), [], chosen
    opened = open_split(data.folder, split, check_videos=False)
    subset = videos.choose(list(opened.videos), split=split, source=opened.source) if videos else None
    kept = filter_by_video(opened.rows, lambda r: r["id"], subset)
    open_ids = [r["question_id"] for r in kept if r["question_format"] != MULTIPLE_CHOICE]
    judged = set(open_ids)
    aligned = align(
        read_predictions(path, "question_id"),
        open_ids,
        source=str(path),
        split=split,
        allow_missing=allow_missing,
        ignored_ids=[r["question_id"] for r in opened.rows if r["question_id"] not in judged],
    )
    missing = set(aligned.missing)
    replies = {i: t for i, t in zip(open_ids, aligned.texts, strict=True) if i not in missing}
    return joined_lines(kept, opened.videos, replies), aligned.missing, subset


def score_marinelife(
    split: MarineLifeSplit,
    predictions: Mapping[str, str | os.PathLike[str]],
    *,
    allow_missing: bool,
    answer_parser: str | None = None,
) -> dict[str, Any]:
    """Per model: the ``marinelife_accuracy`` result on the split's multiple-choice questions (with
    intervals clustered by video), how its run was made (``provenance``) and, under ``correct``,
    right/wrong per question for the paired tests. ``answer_parser``: ``NAME@VERSION`` that reads
    the replies (default: the current default); ``parser_change`` compares it with the version each
    run recorded."""
    parser = marinelife_parser(answer_parser or DEFAULT_PARSER)
    ids = [r["question_id"] for r in split.rows]
    models: dict[str, Any] = {}
    for name, path in predictions.items():
        if not ids:
            raise ValueError(f"{split.source}: the {split.split} split has no multiple-choice questions")
        aligned = align(
            read_predictions(path, "question_id"),
            ids,
            source=str(path),
            split=split.split,
            allow_missing=allow_missing,
            ignored_ids=[*split.open_ended_ids, *split.outside_ids],  # judged separately; other videos
        )
        lines = [{**item, "raw_output": text} for item, text in zip(split.rows, aligned.texts, strict=True)]
        result = marinelife_accuracy(
            **accuracy_inputs(lines), videos=[line["video"] for line in lines], answer_parser=parser.signature
        )
        scores = result.to_dict()
        correct = scores.pop("correct")
        provenance = run_provenance(path)
        readings = [
            ChangeItem(
                line["raw_output"], line["options"], OPTION_LABELS, OPTION_LABELS.index(line["reference"])
            )
            for line in lines
        ]
        models[name] = {
            "predictions": str(path),
            "missing_ids": aligned.missing,
            "accuracy": scores,
            "provenance": provenance,
            "correct": correct,
            "parser_change": run_parser_change(
                provenance["answer_parser"],
                parser,
                readings,
                ids,
                marinelife_parser,
                explicit=answer_parser is not None,
            ),
        }
    return models


# --- judge results ----------------------------------------------------------------------------------
def _judge_result(data: object, where: str) -> JudgeResult:
    result = JudgeResult.from_dict(data, where)
    for camera in result.by(CAMERA_GROUP):
        if camera not in CAMERA_KINDS:
            raise ValueError(
                f"{where}.by_{CAMERA_GROUP}.{camera}: unknown camera kind (expected one of {list(CAMERA_KINDS)})"
            )
    return result


def read_judge_results(paths: Iterable[str | os.PathLike[str]]) -> dict[str, dict[str, JudgeResult]]:
    """model -> task (``oemu``/``caption``) -> judge result, merged over files (no overlaps)."""
    merged: dict[str, dict[str, JudgeResult]] = {}
    for path in paths:
        data = read_json_object(path)
        if not data:
            raise ValueError(f'{path}: expected {{"<model>": {{"oemu": ..., "caption": ...}}}}')
        for model, tasks in data.items():
            if not isinstance(tasks, dict) or not tasks:
                raise ValueError(f"{path}: {model}: expected an object with 'oemu' and/or 'caption'")
            for task, result in tasks.items():
                if task not in JUDGE_TASKS:
                    raise ValueError(
                        f"{path}: {model}: unknown judge task {task!r} (expected {list(JUDGE_TASKS)})"
                    )
                if task in merged.get(model, {}):
                    raise ValueError(f"{path}: {model}: {task} judge results are given twice")
                merged.setdefault(model, {})[task] = _judge_result(result, f"{path}: {model}.{task}")
    return merged


# --- rendering ---------------------------------------------------------------------------------------
def _clustered(result: MarineLifeAccuracy, key: str) -> str:
    return fmt_rate(result.rates[key].value, (result.clustered or {}).get(key), 1)


def _accuracy_section(models: Mapping[str, dict], out_dir: Path, split: str) -> Section:
    scores = {name: MarineLifeAccuracy.from_dict(m["accuracy"]) for name, m in models.items()}
    first = next(iter(scores.values()))
    keys = [*ACCURACY_DIMENSIONS, OVERALL]
    rows = [
        [k, first.rates[k].n, *(fmt_rate(r.rates[k].value, r.rates[k].interval, 1) for r in scores.values())]
        for k in keys
    ]
    clustered = [[k, first.rates[k].n, *(_clustered(r, k) for r in scores.values())] for k in keys]
    unparsed: list[list[Any]] = [
        ["unparsed replies (scored wrong)", None, *(r.n_unparsed[OVERALL] for r in scores.values())]
    ]
    series = {
        name: [Bar(r.rates[k].value, r.rates[k].interval, r.rates[k].n) for k in keys]
        for name, r in scores.items()
    }
    figure = grouped_bars(
        out_dir / "accuracy_by_dimension.png",
        title=f"MarineLife-16K multiple-choice accuracy by dimension, {split} split, n={first.overall.n} "
        "(95% Wilson intervals)",
        categories=keys,
        series=series,
        xlabel="dimension",
        ylabel="accuracy (0-100)",
        ylim=(0.0, 100.0),
    )
    legend = ", ".join(f"{d} = {t}" for t, d in DIMENSION_OF_TYPE.items() if d in ACCURACY_DIMENSIONS)
    body = [
        markdown_table(["Dimension", "n", *models], rows + unparsed),
        f"Question types: {legend}. A dimension without questions in this split shows –. Intervals: 95% Wilson.",
        "The same accuracies with 95% cluster-robust intervals clustered by video: the split asks several "
        "questions of each video and a model's answers on one video go together, so these do not assume "
        "independent questions (trust them where they are wider; none with fewer than 2 videos or at 0 or "
        "100%; with few videos they are themselves approximate).",
        markdown_table(["Dimension (clustered by video)", "n", *models], clustered),
    ]
    return Section("Multiple-choice accuracy by dimension (0-100)", body, [(figure, "Accuracy by dimension")])


GROUPS_NOTE = (
    "Model groups and backbones come from --models FILE (name,group,backbone). An Average row is the mean of "
    'its group\'s model rows (over the models that have the value; "(k of n)" when only k of its n models '
    "have it), unrounded before it is shown; a group of one model, or models in no group, have none."
)


def _table3_section(
    accuracy: Mapping[str, dict], judge: Mapping[str, dict], groups: Arranged
) -> tuple[Section, list[dict[str, Any]]]:
    entries = {
        row.name: (accuracy.get(row.name, {}).get("accuracy"), judge.get(row.name, {}).get(OEMU))
        for row in groups.rows
    }
    body = [
        table3(groups, entries),
        "Multiple-choice accuracy (0-100) per dimension and the OEMU judge score (0-5), in the layout of the "
        f"paper's Table 3. {GROUPS_NOTE}",
    ]
    return Section("Table 3 (paper layout)", body, []), group_averages(groups, table3_values(groups, entries))


def _caption_section(
    judge: Mapping[str, dict], groups: Arranged
) -> tuple[Section, list[dict[str, Any]]] | None:
    captions = {row.name: judge.get(row.name, {}).get(CAPTION) for row in groups.rows}
    if not any(captions.values()):
        return None
    body = [
        caption_table(groups, captions),
        "Caption judge scores (0-5) on Biological Entity Hallucination (BEH), Action Hallucination (AH) and "
        "Environmental Context Fabrication (ECF), for videos with a static and a moving camera, in the layout of "
        f"the paper's caption table. {GROUPS_NOTE} A moving-camera average is followed by its difference from "
        "the static-camera average (moving minus static, of the unrounded averages; the paper subtracts its "
        "rounded ones, so its differences may be 0.01 off).",
    ]
    return Section("Caption table (paper layout)", body, []), group_averages(
        groups, caption_values(groups, captions)
    )


def _cell(result: JudgeResult, camera: str | None) -> JudgeScores:
    """The result's means for one camera kind (None: all), empty when it does not report that kind."""
    return camera_scores(result, camera) or _NOT_REPORTED


_NOT_REPORTED = JudgeScores(None, None, {}, {}, 0)


def _judge_rows(results: Mapping[str, JudgeResult]) -> list[list[object]]:
    """Rows ``camera: measure`` x one column per model, for one judge task."""
    cameras = (None, *CAMERA_KINDS)
    measures = list(dict.fromkeys(c for r in results.values() for k in cameras for c in _cell(r, k).criteria))
    rows: list[list[object]] = [["all: failed judge calls", *(r.n_failed for r in results.values())]]
    for camera in cameras:
        label = camera or "all"
        cells = [camera_scores(r, camera) for r in results.values()]
        rows.append([f"{label}: n judged", *(None if c is None else c.n for c in cells)])
        rows.append([f"{label}: score", *(fmt_number(None if c is None else c.score, 2) for c in cells)])
        rows += [
            [f"{label}: {m}", *(fmt_number(None if c is None else c.criteria.get(m), 2) for c in cells)]
            for m in measures
        ]
    return rows


def _bar(cell: JudgeScores | None, criterion: str | None = None) -> Bar:
    """A bar of the result's score (or one criterion's) with its interval; empty when not reported."""
    if cell is None:
        return Bar(None, None, None)
    if criterion is None:
        return Bar(cell.score, cell.score_interval, cell.n)
    return Bar(cell.criteria.get(criterion), cell.criteria_intervals.get(criterion), cell.n)


def _levels(results: Iterable[JudgeResult]) -> str:
    """The intervals' level for a figure title: ``95%``, or each result's own when they differ."""
    levels = {round(100 * r.confidence, 6) for r in results}
    return f"{levels.pop():g}%" if len(levels) == 1 else "each result's level of"


def _judge_figure(
    out_dir: Path, name: str, title: str, categories: list[str], series: dict[str, list[Bar]], xlabel: str
) -> tuple[Path, str]:
    path = grouped_bars(
        out_dir / name,
        title=title,
        categories=categories,
        series=series,
        xlabel=xlabel,
        ylabel="judge score (0-5)",
        ylim=JUDGE_SCALE,
    )
    return path, title


def _judge_section(judge: Mapping[str, dict[str, JudgeResult]], out_dir: Path, split: str) -> Section | None:
    oemu = {name: tasks[OEMU] for name, tasks in judge.items() if OEMU in tasks}
    captions = {name: tasks[CAPTION] for name, tasks in judge.items() if CAPTION in tasks}
    if not oemu and not captions:
        return None
    body = [
        "Mean judge scores on the paper's 0-5 scale, computed by the judge metric (not by this report); "
        "failed judge calls are counted, not scored. Camera kinds come from the camera attributes."
    ]
    figures = []
    if oemu:
        body += [f"**{JUDGE_TASKS[OEMU].title}**", markdown_table(["", *oemu], _judge_rows(oemu))]
        cameras = (None, *CAMERA_KINDS)
        series = {name: [_bar(camera_scores(r, k)) for k in cameras] for name, r in oemu.items()}
        figures.append(
            _judge_figure(
                out_dir,
                "judge_oemu_by_camera.png",
                f"MarineLife-16K OEMU judge score by camera, {split} split, "
                f"n={'/'.join(str(r.n) for r in oemu.values())} judged ({_levels(oemu.values())} t intervals)",
                ["all", *CAMERA_KINDS],
                series,
                "camera (static / moving)",
            )
        )
    if captions:
        columns = [(cam, c) for cam in CAMERA_KINDS for c in CAPTION_CRITERIA]
        body += [f"**{JUDGE_TASKS[CAPTION].title}**", markdown_table(["", *captions], _judge_rows(captions))]
        series = {
            name: [_bar(camera_scores(r, cam), c) for cam, c in columns] for name, r in captions.items()
        }
        figures.append(
            _judge_figure(
                out_dir,
                "judge_captions_by_camera.png",
                f"MarineLife-16K caption judge scores by camera (BEH, AH, ECF), {split} split, "
                f"n={'/'.join(str(r.n) for r in captions.values())} judged ({_levels(captions.values())} t intervals)",
                [f"{cam} {c}" for cam, c in columns],
                series,
                "camera and criterion",
            )
        )
    return Section("Judge scores by camera (0-5)", body, figures)


def split_model_warning(prediction_names: Iterable[str], judge_names: Iterable[str]) -> str | None:
    """A warning naming both sides when some predictions and some judge results match no name of the
    other: probably one model under two names, which the report would show as two rows."""
    predictions, judged = list(prediction_names), list(judge_names)
    only_predictions = [n for n in predictions if n not in judged]
    only_judged = [n for n in judged if n not in predictions]
    if not only_predictions or not only_judged:
        return None
    return (
        f"predictions named {only_predictions} have no judge results and judge results named {only_judged} "
        "have no predictions: if they are the same model it shows as two rows; give the predictions the "
        f"judge results' name (--predictions {only_judged[0]}=FILE)"
    )


def write_marinelife_report(
    data: str | os.PathLike[str] | DataSource,
    split: str,
    predictions: Mapping[str, str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    judge_results: Sequence[str | os.PathLike[str]] = (),
    allow_missing: bool = False,
    allow_mixed: bool = False,
    answer_parser: str | None = None,
    models: str | os.PathLike[str] | Sequence[ModelRow] | None = None,
    videos: VideoSelection | None = None,
    paper: PaperRequest | None = None,
) -> Report:
    """Score each model's multiple-choice replies on ``split`` of ``data``, add the judge results,
    and write ``report.md``, ``metrics.json`` and the PNGs to ``out_dir``.

    ``data``: a folder, a Hub repo id or a resolved :class:`~builders.hub.source.DataSource`.
    ``predictions``: model name -> JSONL (``{"question_id", "raw_output"}`` per line; replies to
    open-ended questions may be present and are left to the judge). ``allow_mixed``: lay side by
    side runs made with other frames, prompt or parser versions (marked), instead of refusing.
    ``answer_parser``: ``NAME@VERSION`` reading the replies (``--parser``; default the current
    default); the "Answer parser change" section shows what it changes against each run's own.
    ``models``: a ``--models`` CSV (or its rows, :mod:`builders.report.model_groups`) giving each
    model's group and backbone for the paper's layouts of Table 3 and the caption table.
    ``videos``: score only a named subset of the split's videos (replies to other videos' questions
    are ignored); the subset, with its ids, is recorded in metrics.json, and runs or judge results
    recorded on other videos are refused unless ``allow_mixed``.
    ``paper``: put each run that maps to a paper model beside Table 3 and the caption table (``--paper``).
    """
    if paper is not None and not paper.compare:
        raise ValueError(
            "--as maps runs to the paper's rows for --paper here (Table 3 has no #F column): give --paper"
        )
    judge, joined = join_by_predictions_file(read_judge_results(judge_results), predictions)
    for note in joined:
        log.info(note)
    if not predictions and not judge:
        raise ValueError("nothing to report: give --predictions and/or --judge-results")
    listed = read_models_file(models) if isinstance(models, (str, os.PathLike)) else models
    groups = arrange([*predictions, *judge], listed, where=str(models) if listed is not None else "--models")
    reference = load_marinelife_split(data, split, videos)
    accuracy = score_marinelife(
        reference, predictions, allow_missing=allow_missing, answer_parser=answer_parser
    )
    signature = marinelife_parser(answer_parser or DEFAULT_PARSER).signature
    judged = {
        f"{name} (judge {task})": (result.provenance or {}).get(FIELD)
        for name, tasks in judge.items()
        for task, result in tasks.items()
    }
    runs_compared = compared_runs(
        {n: m["provenance"] for n, m in accuracy.items()},
        recorded(reference.subset),
        restricted=reference.subset is not None,
        judged=judged,
    )
    mixed = mixed_settings(runs_compared, allow_mixed=allow_mixed)
    correct = {name: m.pop("correct") for name, m in accuracy.items()}
    out = report_folder(out_dir)
    names = list(dict.fromkeys([*accuracy, *judge]))
    split_warning = split_model_warning(accuracy, judge)
    if split_warning:
        log.warning(split_warning)
    judged_items = {
        task: {
            name: {i.question_id: i.score for i in tasks[task].judged_items() if i.question_id is not None}
            for name, tasks in judge.items()
            if task in tasks
        }
        for task in JUDGE_TASKS
    }
    paired = {
        "accuracy": accuracy_pairs(correct),
        **{
            task: score_pairs({n: s for n, s in by_model.items() if s})
            for task, by_model in judged_items.items()
        },
    }
    metrics: dict[str, Any] = {
        "benchmark": "MarineLife-16K",
        "data": reference.source,
        "split": split,
        "n_multiple_choice": len(reference.rows),
        "n_open_ended": len(reference.open_ended_ids),
        "interval": "95% Wilson score interval (accuracy); ci95_cluster: 95% cluster-robust interval by video",
        "answer_parser": signature,
        "provenance": report_provenance(
            reference.data,
            split,
            signature,
            reference.subset.record() if reference.subset else recorded(None),
        ),
        "mixed": mixed,
        "paired": paired,
        "models": {
            name: {**accuracy.get(name, {}), "judge": results_to_dict(judge.get(name, {}))} for name in names
        },
    }
    rows = [
        [
            name,
            f"`{accuracy[name]['predictions']}`" if name in accuracy else None,
            len(accuracy[name]["missing_ids"]) if name in accuracy else None,
            accuracy[name]["accuracy"]["n_unparsed"][OVERALL] if name in accuracy else None,
            ", ".join(judge.get(name, {})) or None,
        ]
        for name in names
    ]
    scope = f" of {reference.subset.label}" if reference.subset else ""
    intro = [
        f"Data: {reference.data.label} ({reference.source}), split `{split}`{scope}: {len(reference.rows)} "
        f"multiple-choice and {len(reference.open_ended_ids)} open-ended questions.",
        "Multiple-choice replies are parsed with the shared answer parser (an option letter or the "
        "option's text); a reply that names no option, or no reply (--allow-missing), counts as wrong. "
        "Intervals are 95% Wilson score intervals.",
        markdown_table(["Model", "Predictions", "Missing", "Unparsed", "Judge results"], rows, "llrrl"),
    ]
    if split_warning:
        intro.append(f"**Warning:** {split_warning}.")
    rubrics = {
        name: {
            f"Judge ({task})": None if result.judge is None else result.judge.signature
            for task, result in tasks.items()
            if task in JUDGE_TASKS
        }
        for name, tasks in judge.items()
    }
    runs = {name: accuracy.get(name, {}).get("provenance", {}) for name in names}
    sections = [Section("How each run was made", runs_section_body(runs, mixed, rubrics))]
    if paper is not None and paper.compare:
        from builders.report.marinelife_paper import compare_with_paper  # it reads this module's judge tasks

        metrics["paper"] = compare_with_paper(accuracy, judge, paper)
        sections = [*(paper_section(table) for table in metrics["paper"]), *sections]
    if accuracy:
        sections.append(_accuracy_section(accuracy, out, split))
    table3_section, table3_groups = _table3_section(accuracy, judge, groups)
    sections.append(table3_section)
    captioned = _caption_section(judge, groups)
    if captioned:
        sections.append(captioned[0])
    metrics["groups"] = {
        "models": [{"name": r.name, "group": r.group, "backbone": r.backbone} for r in groups.rows],
        "table3": table3_groups,
        "caption": captioned[1] if captioned else [],
    }
    if groups.without_results:
        intro.append(
            f"Listed in the models file without results here (not shown): {', '.join(groups.without_results)}."
        )
    judge_section = _judge_section(judge, out, split)
    if judge_section:
        sections.append(judge_section)
    paired_tests = paired_section(paired["accuracy"], {JUDGE_TASKS[t].title: paired[t] for t in JUDGE_TASKS})
    if paired_tests:
        sections.append(paired_tests)
    if accuracy:
        reasons = {name: m["accuracy"]["parse_reasons"] for name, m in accuracy.items()}
        sections.append(Section("Answer parsing", parse_reasons_table(reasons, metrics["answer_parser"])))
        change = parser_change_section(
            {name: m["parser_change"] for name, m in accuracy.items()}, scale=100.0
        )
        if change:
            sections.append(change)
    inputs = [*predictions.values(), *judge_results, *([reference.data.folder] if reference.data else [])]
    return write_report(out, f"MarineLife-16K report: {split} split", intro, sections, metrics, inputs=inputs)
