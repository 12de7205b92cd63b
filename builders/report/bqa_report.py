"""The BQA report: one or more models' predictions on one split, as Markdown tables, PNGs and JSON.

Every number comes from :func:`bqa.accuracy.bqa_accuracy` (the function behind the
``metrics/bqa_accuracy`` module), called once per model on the raw replies: Easy/Hard/Total accuracy (the
paper's Table 1), error rates by gender, age and ethnicity with a chi-square test (Figure 4), the
emotion groups of wrong answers with "Others" for replies that are no emotion (Figure 6), and, for
chain-of-thought runs, how often the rationale gives the answer away. Rates carry 95% Wilson
intervals. The report lays those results side by side, one column (or panel) per model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bqa.accuracy import (
    DEMOGRAPHIC_FIELDS,
    BQAAccuracy,
    ErrorBreakdown,
    Leakage,
    bqa_accuracy,
    bqa_parser,
    resolve_group_mapping,
)
from bqa.data import open_split
from bqa.predictions import accuracy_inputs, item_fields
from bqa.vocabulary import (
    DEFAULT_DEMOGRAPHIC_CODES,
    DEFAULT_GROUP_MAPPING,
    DIFFICULTIES,
    OTHERS,
    GroupMapping,
)
from builders.files.jsonio import read_json_object
from builders.hub.source import DataSource
from builders.hub.subset import VideoSelection, VideoSubset, filter_by_video, recorded
from builders.report.bqa_paper import compare_with_paper, published_rows, table_frames
from builders.report.document import Report, Section, report_folder, write_report
from builders.report.inputs import align, preview, read_predictions
from builders.report.paired import accuracy_pairs, paired_section
from builders.report.paper_comparison import PaperRequest, paper_section
from builders.report.paper_tables import (
    LEAK_FOOTNOTE,
    BQARow,
    bqa_table,
    confusion_table,
    frames_cell,
)
from builders.report.parser_change import parser_change_section, run_parser_change
from builders.report.plots import Bar, grouped_bars, heatmaps
from builders.report.provenance import (
    as_source,
    compared_runs,
    frames_as_designed,
    mixed_settings,
    report_provenance,
    run_provenance,
    runs_section_body,
)
from builders.report.tables import fmt_number, fmt_p_value, fmt_rate, markdown_table, parse_reasons_table
from builders.scoring.answer_parsing import DEFAULT_PARSER
from builders.scoring.parser_change import ChangeItem
from builders.scoring.stats import Rate

COLUMNS: tuple[str, ...] = (
    "id",
    "answer",
    "choices",
    "answer_group",
    "choice_groups",
    "difficulty",
    *DEMOGRAPHIC_FIELDS,
)
TOTAL = "Total"


@dataclass(frozen=True)
class BQASplit:
    """The reference side of a report: one split's rows (``COLUMNS`` only) and its label tables."""

    source: str
    split: str
    rows: list[dict[str, Any]]
    group_mapping: GroupMapping
    demographic_codes: Mapping[str, Mapping[int, str]] | None = None
    data: DataSource | None = None  # where the split was read from (provenance)
    subset: VideoSubset | None = None  # the clips scored (None: all of the split's)
    outside_ids: tuple[str, ...] = ()  # items of the split's other clips (their replies are ignored)


def load_bqa_split(
    data: str | os.PathLike[str] | DataSource,
    split: str,
    *,
    group_mapping: GroupMapping | str | Path | None = None,
    videos: VideoSelection | None = None,
) -> BQASplit:
    """Rows of ``split`` from an exported Hub folder, a BQA work folder (``release/`` inside) or a
    Hub repo id (:func:`builders.hub.source.resolve_data`).

    The group mapping is ``group_mapping``, else the work folder's own, else the default; it must
    agree with the rows' ``answer_group``/``choice_groups``, or the confusion table would be wrong.
    ``videos``: only the items of a named subset of the split's clips (a BQA item is one clip).
    """
    source = as_source(data)
    opened = open_split(source.folder, split, COLUMNS, check_clips=False)
    if group_mapping is not None:
        mapping = resolve_group_mapping(group_mapping)
    else:
        mapping = opened.group_mapping or DEFAULT_GROUP_MAPPING
    if not opened.rows:
        raise ValueError(f"{opened.source}: the {split} split is empty")
    _check_mapping(opened.rows, mapping, opened.source)
    subset = (
        videos.choose([r["id"] for r in opened.rows], split=split, source=opened.source) if videos else None
    )
    rows = filter_by_video(opened.rows, lambda r: r["id"], subset)
    kept = {r["id"] for r in rows}
    outside = tuple(r["id"] for r in opened.rows if r["id"] not in kept)
    return BQASplit(opened.source, split, rows, mapping, opened.demographic_codes, source, subset, outside)


def _check_mapping(rows: Sequence[Mapping[str, Any]], mapping: GroupMapping, source: str) -> None:
    for row in rows:
        for label, group in zip(
            [row["answer"], *row["choices"]], [row["answer_group"], *row["choice_groups"]], strict=True
        ):
            if mapping.group_of.get(label) != group:
                raise ValueError(
                    f"{source}, item {row['id']}: the data puts {label!r} in group {group!r}, the mapping "
                    f"{mapping.name!r} in {mapping.group_of.get(label)!r}; pass the release's mapping "
                    "(--group-mapping FILE)"
                )


def score_bqa(
    split: BQASplit,
    predictions: Mapping[str, str | os.PathLike[str]],
    *,
    allow_missing: bool,
    allow_mixed: bool = False,
    answer_parser: str | None = None,
    paper: PaperRequest | None = None,
) -> dict:
    """Per model: the ``bqa_accuracy`` result, plus the ids behind its missing and unparsed counts
    and how the run was made; between models, exact McNemar tests. Runs made with other frames,
    prompt or parser versions are refused unless ``allow_mixed`` (then listed under ``mixed``), but
    for frames that differ as the paper's ``#F`` column has them (:func:`table_frames`; ``paper``'s
    ``--as`` maps a run to its row, e.g. the fine-tuned one).
    ``answer_parser``: ``NAME@VERSION`` that reads the replies (default: the current default); each
    model's ``parser_change`` compares it with the version its run recorded."""
    parser = bqa_parser(answer_parser or DEFAULT_PARSER)
    if not predictions:
        raise ValueError("no predictions to report on")
    runs = {name: run_provenance(path) for name, path in predictions.items()}
    scored = recorded(split.subset)
    designed = table_frames(runs, split.split, paper or PaperRequest())
    mixed = mixed_settings(
        compared_runs(runs, scored, restricted=split.subset is not None),
        allow_mixed=allow_mixed,
        frames_by_design=frames_as_designed(runs, designed),
    )
    ids = [r["id"] for r in split.rows]
    items = [item_fields(r) for r in split.rows]
    models: dict[str, Any] = {}
    correct: dict[str, list[bool]] = {}
    for name, path in predictions.items():
        aligned = align(
            read_predictions(path, "id"),
            ids,
            source=str(path),
            split=split.split,
            allow_missing=allow_missing,
            ignored_ids=split.outside_ids,
        )
        lines = [
            {**item, "raw_output": text, "rationale": rationale}
            for item, text, rationale in zip(items, aligned.texts, aligned.rationales, strict=True)
        ]
        result = bqa_accuracy(
            **accuracy_inputs(lines),
            group_mapping=split.group_mapping,
            demographic_codes=split.demographic_codes,
            answer_parser=parser.signature,
        )
        readings = [
            ChangeItem(line["raw_output"], line["choices"], None, line["choices"].index(line["reference"]))
            for line in lines
        ]
        scores = result.to_dict()
        correct[name] = scores.pop("correct")
        style = runs[name].get("style")
        style = style if isinstance(style, str) else None  # several within one file: not one style
        leaking = runs[name].get("answer_leaking") is True or style == "multimodal_cot"
        models[name] = {
            "predictions": str(path),
            "style": style,
            "answer_leaking": leaking,
            "missing_ids": aligned.missing,
            "unparsed_ids": [ids[i] for i in result.unparsed_indices],
            "metrics": scores,
            "provenance": runs[name],
            "parser_change": run_parser_change(
                runs[name]["answer_parser"],
                parser,
                readings,
                ids,
                bqa_parser,
                explicit=answer_parser is not None,
            ),
        }
    source = split.data
    return {
        "benchmark": "BQA",
        "data": split.source,
        "split": split.split,
        "n_items": len(ids),
        "group_mapping": split.group_mapping.name,
        "answer_parser": parser.signature,
        "interval": "95% Wilson score interval",
        "provenance": None
        if source is None
        else report_provenance(
            source, split.split, parser.signature, split.subset.record() if split.subset else scored
        ),
        "mixed": mixed,
        "paired": accuracy_pairs(correct),
        "models": models,
    }


def paper_rows(
    models: Mapping[str, Mapping[str, Any]], human: Mapping[str, Any] | None = None
) -> list[BQARow]:
    """The rows of the paper's table: the Human row first (a ``human-study score`` result), then one
    row per model, its runs in other styles (the same recorded model asked for) beside its plain run.
    A run recording no style is a plain (single-word) run; one recording no model is its own row."""
    rows: list[BQARow] = []
    if human is not None:
        # A score recording no draw was made before draws had names: its study was stratified.
        draw = "Rand" if human.get("draw", "stratified") == "random" else "Strat"
        results = {"single_word": {f"accuracy{k}": human["human"][d]["accuracy"]
                                   for k, d in (("_easy", "Easy"), ("_hard", "Hard"), ("", TOTAL))}}  # fmt: skip
        rows.append(BQARow(f"Human ({draw}{human['n_items']})", "-", results))
    by_model: dict[str, list[dict[str, Any]]] = {}
    for name, m in models.items():
        asked = m["provenance"].get("model_asked")
        style = m.get("style") or "single_word"
        runs = by_model.setdefault(asked if isinstance(asked, str) else f"\0{name}", [])
        row = next((r for r in runs if style not in r["results"]), None)
        if row is None:
            row = {"label": name, "frames": frames_cell(m["provenance"].get("frames")), "results": {}}
            runs.append(row)
        if style == "single_word":  # the plain run names the row, and gives its #F
            row.update(label=name, frames=frames_cell(m["provenance"].get("frames")))
        row["results"][style] = m["metrics"]
    rows += [BQARow(r["label"], r["frames"], r["results"]) for runs in by_model.values() for r in runs]
    return rows


def _paper_section(
    models: Mapping[str, dict], human: Mapping[str, Any] | None, split: str, paper: Sequence[Mapping] = ()
) -> Section:
    table = {"test": "Table 1", "validation": "Table 4"}.get(split, "Table 1")
    printed = published_rows({row for p in paper for row in p["matched"].values()}, split) if paper else []
    body = [
        f"The paper's {table} layout: one row per model, Easy / Hard / Total accuracy, a model's runs in "
        "other evaluation styles beside its plain run (paired by the model they asked for)."
        + (" The Human row is the human study's pooled accuracy over its raters." if human else "")
        + (
            " Rows 'paper: …' are the paper's own values for the rows the runs were matched to (--paper)."
            if printed
            else ""
        ),  # fmt: skip
        bqa_table([*paper_rows(models, human), *printed], split),
    ]
    leaking = [name for name, m in models.items() if m["answer_leaking"]]
    if leaking:
        body.insert(0, f"**Answer-leaking runs:** {', '.join(leaking)}. {LEAK_FOOTNOTE[2:]}")
    return Section(f"{table} layout ({split} split)", body, [])


# --- rendering ---------------------------------------------------------------------------------------
def _difficulty_section(models: Mapping[str, BQAAccuracy], out_dir: Path, split: str) -> Section:
    first = next(iter(models.values()))
    labels = list(first.by_difficulty())  # Easy, Hard, Total
    rates: dict[str, dict[str, Rate]] = {name: m.by_difficulty() for name, m in models.items()}
    rows = [
        [label, first.by_difficulty()[label].n, *(fmt_rate(r[label].value, r[label].interval) for r in rates.values())]
        for label in labels
    ]  # fmt: skip
    series = {
        name: [Bar(r[label].value, r[label].interval, r[label].n) for label in labels]
        for name, r in rates.items()
    }
    figure = grouped_bars(
        out_dir / "accuracy_by_difficulty.png",
        title=f"BQA accuracy by difficulty, {split} split, n={first.n} (95% Wilson intervals)",
        categories=labels,
        series=series,
        xlabel="difficulty (STEP4: Easy = the generating LLM answered right)",
        ylabel="accuracy",
        ylim=(0.0, 1.0),
    )
    table = markdown_table(["Difficulty", "n", *models], rows)
    return Section("Accuracy by difficulty", [table], [(figure, "Accuracy by difficulty")])


def _demographic_section(
    field: str, models: Mapping[str, BQAAccuracy], out_dir: Path, split: str, known: Sequence[str]
) -> Section:
    """``known``: every group label of ``field``; one without items is drawn as "no data" and named."""
    title = f"Error rate by {field}"
    breakdowns: dict[str, ErrorBreakdown] = {}
    for name, m in models.items():
        breakdown = m.breakdown(field)
        assert breakdown is not None  # the report always gives the demographic columns
        breakdowns[name] = breakdown
    seen: list[str] = []
    for b in breakdowns.values():
        seen += [g for g in b.groups if g not in seen]
    empty = [g for g in known if g not in seen]
    # The vocabulary's order (Kid, Teenager, Adult), groups without items in their place; labels
    # outside the vocabulary after them.
    groups = [*known, *(g for g in seen if g not in known)]
    first = next(iter(breakdowns.values())).groups
    rows: list[list[Any]] = []
    for g in groups:
        cells = [breakdowns[name].groups.get(g) for name in models]
        rows.append(
            [g, first[g].n if g in first else None]
            + [fmt_rate(c.rate.value, c.rate.interval) if c else None for c in cells]
        )
    disparity = {name: b.disparity for name, b in breakdowns.items()}
    rows.append(["largest gap", None, *(fmt_number(d.max_gap) for d in disparity.values())])
    rows.append(
        [
            "chi-square p-value (dof)",
            None,
            *(f"{fmt_p_value(d.p_value)} ({d.dof})" if d.p_value is not None else None for d in disparity.values()),
        ]
    )  # fmt: skip
    warned: dict[str, list[str]] = {}  # one line per distinct warning, naming the models it concerns
    for name, d in disparity.items():
        if d.warning:
            warned.setdefault(d.warning, []).append(name)
    notes = [f"- {', '.join(names)}: {warning}" for warning, names in warned.items()]
    unlabelled = next(iter(breakdowns.values())).n_missing
    if unlabelled:
        notes.append(f"- {unlabelled} item(s) have no {field} label and are left out of this table.")
    if empty:
        notes.append(f"- No item of this split is labelled {', '.join(empty)}: shown as – (no data).")
    labelled = sum(c.n for c in next(iter(breakdowns.values())).groups.values())
    series = {
        name: [
            Bar(c.rate.value, c.rate.interval, c.n) if c else Bar(None)
            for c in (breakdowns[name].groups.get(g) for g in groups)
        ]
        for name in models
    }
    figure = grouped_bars(
        out_dir / f"error_rate_by_{field}.png",
        title=f"BQA error rate by {field}, {split} split, n={labelled} labelled "
        "(95% Wilson intervals; higher = more mistakes)",
        categories=groups,
        series=series,
        xlabel=field,
        ylabel="error rate (wrong or unparsed answers)",
        ylim=(0.0, 1.0),
    )
    body = [markdown_table([field.capitalize(), "n", *models], rows)]
    if notes:
        body.append("\n".join(notes))
    return Section(title, body, [(figure, title)])


def _confusion_section(
    models: Mapping[str, BQAAccuracy], mapping: GroupMapping, out_dir: Path, split: str
) -> Section:
    true_groups = list(mapping.group_names)
    answered = [*true_groups, OTHERS]
    body = [
        "Wrong answers only: the row is the emotion group of the correct answer, the column the group "
        f"of the emotion the model answered; {OTHERS} = a reply that names no emotion."
    ]
    panels = {}
    for name, m in models.items():
        table = m.confusion
        body.append(f"**{name}**\n\n" + confusion_table(table))
        # The Markdown table's orientation: row = correct group, column = what the model answered.
        panels[name] = [[table[t][a] for a in answered] for t in true_groups]
    figure = heatmaps(
        out_dir / "confusion_emotion_groups.png",
        title=f"BQA wrong answers by emotion group, {split} split (mapping {mapping.name})",
        panels=panels,
        row_labels=true_groups,
        col_labels=answered,
        xlabel="answered group",
        ylabel="correct answer's group",
        total_label="wrong answers",
    )
    return Section(
        "Wrong answers by emotion group", body, [(figure, "Emotion-group confusion of wrong answers")]
    )


def _leakage_section(models: Mapping[str, BQAAccuracy]) -> Section | None:
    leaks: dict[str, Leakage] = {name: m.leakage for name, m in models.items() if m.leakage is not None}
    if not leaks:
        return None

    def share(n: int, v: Leakage) -> str:
        return f"{n} ({n / (v.leaking.n + v.non_leaking.n):.1%})"

    rows = [
        ["rationales that give the answer away", *(share(v.leaking.n, v) for v in leaks.values())],
        ["rationales the check cannot classify", *(share(len(v.undetermined_indices), v) for v in leaks.values())],
        ["accuracy without the leaking items", *(fmt_rate(v.non_leaking.value, v.non_leaking.interval) for v in leaks.values())],
        ["accuracy on the leaking items", *(fmt_rate(v.leaking.value, v.leaking.interval) for v in leaks.values())],
    ]  # fmt: skip
    note = (
        "A chain-of-thought rationale gives the answer away when the one choice it points to is the correct "
        "one: named alone, given by its letter, or with every other choice ruled out (the stage-1 prompt's "
        "own form; the paper's CoT caveat). A rationale pointing to the correct choice and to others cannot "
        "be classified. "
    )
    if any(v.undetermined_indices for v in leaks.values()):
        note += (
            "Some rationales cannot be classified, so accuracy without the leaking items is no fairer "
            "comparison: compare CoT results only with CoT results of the same style, by their intervals."
        )
    else:
        note += (
            "The check classified every rationale: accuracy without the leaking items (with its interval) "
            "is the fairer comparison."
        )
    return Section("Chain-of-thought rationale leakage", [note, markdown_table(["", *leaks], rows)], [])


def _human_result(human: str | os.PathLike[str] | Mapping[str, Any] | None, split: str) -> dict | None:
    if human is None:
        return None
    data = dict(human) if isinstance(human, Mapping) else read_json_object(Path(human))
    if data.get("benchmark") != "BQA" or "human" not in data:
        raise ValueError(
            f"{human}: not a BQA human-study result (vqabench human-study score writes one: metrics.json)"
        )
    if data.get("split") != split:
        raise ValueError(
            f"{human}: the human study is on the {data.get('split')!r} split, the report on {split!r}"
        )
    return data


def _inputs_table(metrics: Mapping[str, Any]) -> str:
    rows = []
    for name, m in metrics["models"].items():
        unparsed = m["unparsed_ids"]
        rows.append(
            [
                name,
                f"`{m['predictions']}`",
                len(m["missing_ids"]),
                f"{len(unparsed)} {preview(unparsed, 5)}" if unparsed else 0,
            ]
        )
    return markdown_table(["Model", "Predictions", "Missing", "Unparsed (scored wrong)"], rows, "llrl")


def write_bqa_report(
    data: str | os.PathLike[str] | DataSource,
    split: str,
    predictions: Mapping[str, str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    allow_missing: bool = False,
    group_mapping: GroupMapping | str | Path | None = None,
    allow_mixed: bool = False,
    answer_parser: str | None = None,
    human: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    videos: VideoSelection | None = None,
    paper: PaperRequest | None = None,
) -> Report:
    """Score each model's predictions on ``split`` of ``data`` and write the report to ``out_dir``.

    ``data``: a folder, a Hub repo id or a resolved :class:`~builders.hub.source.DataSource`.
    ``predictions``: model name -> JSONL file (``{"id", "raw_output", "rationale"?}`` per line).
    Writes ``report.md``, ``metrics.json`` and the PNGs it links. ``allow_mixed``: lay side by side
    runs made with other frames, prompt or parser versions (marked), instead of refusing.
    ``answer_parser``: ``NAME@VERSION`` reading the replies (``--parser``; default the current
    default); the "Answer parser change" section shows what it changes against each run's own.
    ``human``: a BQA human study's result (``human-study score``'s metrics.json, or its content) on
    this split: the Human row of the paper's table.
    ``videos``: score only a named subset of the split's clips (recorded with its ids in metrics.json).
    ``paper``: put each run that maps to a paper model beside the paper's table (``--paper``, ``--as``).
    """
    reference = load_bqa_split(data, split, group_mapping=group_mapping, videos=videos)
    metrics = score_bqa(
        reference,
        predictions,
        allow_missing=allow_missing,
        allow_mixed=allow_mixed,
        answer_parser=answer_parser,
        paper=paper,
    )
    human_result = _human_result(human, split)
    if human_result is not None:
        metrics["human"] = {k: human_result[k] for k in ("study_id", "split", "n_items", "raters", "human")}
        metrics["human"]["draw"] = human_result.get(
            "draw", "stratified"
        )  # unrecorded: made before draws had names
    out = report_folder(out_dir)
    models = metrics["models"]
    if paper is not None and paper.compare:
        metrics["paper"] = compare_with_paper(models, split, paper)
    scores = {name: BQAAccuracy.from_dict(m["metrics"]) for name, m in models.items()}
    counts = {d: sum(r["difficulty"] == d for r in reference.rows) for d in DIFFICULTIES}
    label = reference.data.label if reference.data else reference.source
    scope = f" ({reference.subset.label})" if reference.subset else ""
    intro = [
        f"Data: {label} ({reference.source}), split `{split}`{scope}: {len(reference.rows)} items "
        f"({', '.join(f'{n} {d}' for d, n in counts.items())}). Emotion groups: mapping "
        f"`{reference.group_mapping.name}`.",
        "Replies are parsed with the shared answer parser (a letter A-D or the emotion's name); a reply "
        "that names no choice, or no reply (--allow-missing), is unparsed and counts as wrong. Intervals "
        "are 95% Wilson score intervals.",
        _inputs_table(metrics),
    ]
    codes = {**DEFAULT_DEMOGRAPHIC_CODES, **(reference.demographic_codes or {})}
    sections = [
        *(paper_section(table) for table in metrics.get("paper", [])),
        _paper_section(models, metrics.get("human"), split, metrics.get("paper", ())),
        Section(
            "How each run was made",
            runs_section_body({n: m["provenance"] for n, m in models.items()}, metrics["mixed"]),
        ),
        _difficulty_section(scores, out, split),
        *(_demographic_section(f, scores, out, split, list(codes[f].values())) for f in DEMOGRAPHIC_FIELDS),
        _confusion_section(scores, reference.group_mapping, out, split),
    ]
    paired = paired_section(metrics["paired"])
    if paired:
        sections.append(paired)
    leakage = _leakage_section(scores)
    if leakage:
        sections.append(leakage)
    reasons = {name: score.parse_reasons for name, score in scores.items()}
    sections.append(Section("Answer parsing", parse_reasons_table(reasons, metrics["answer_parser"])))
    change = parser_change_section({name: m["parser_change"] for name, m in models.items()})
    if change:
        sections.append(change)
    inputs = [*predictions.values(), *([reference.data.folder] if reference.data else [])]
    return write_report(out, f"BQA report: {split} split", intro, sections, metrics, inputs=inputs)
