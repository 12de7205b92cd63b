"""The published values against the papers' text: every stored number on its seed line, in its row.

``tests/data/paper_tables/<seed>`` holds the papers' table lines as ``LINE<TAB>text`` (the tables,
captions and the two statistics sentences; nothing else of the papers is needed). Where the seed
folder is present (``/work/shared/seeds``, or ``$VQABENCH_SEEDS``), a test checks every excerpt line
against it verbatim. The checks on the numbers themselves (Totals from Easy/Hard and Table 3's
counts, group averages, inferred n, the lowest dimension per model) are worked out here from the
printed values, not taken from the code under test.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path

import pytest

from bqa.paper import LORA_HYPERPARAMETERS
from bqa.paper import published as bqa_published
from builders.report.paper_tables import PAPER_SELF_BLEU
from builders.scoring.paper_values import PaperValues
from marinelife16k.paper import PAPER
from marinelife16k.paper import published as marinelife_published

EXCERPTS = Path(__file__).parent / "data" / "paper_tables"
PAPERS = {"bqa": bqa_published(), "marinelife16k": marinelife_published()}


def _excerpt(seed: str) -> dict[int, str]:
    lines = (EXCERPTS / seed).read_text(encoding="utf-8").splitlines()
    return {int(number): text for number, text in (line.split("\t", 1) for line in lines)}


def _number(token: str) -> float | None:
    """A printed number (``4,651``, ``0.90``, ``2.9-0.13`` -> 2.9: an Average with its difference)."""
    token = token.strip().replace(",", "")
    for cut in range(len(token), 0, -1):
        try:
            return float(token[:cut])
        except ValueError:
            continue
    return None


def _tokens(text: str) -> list[str]:
    return [t for t in text.replace(" ", "\t").split("\t") if t]


@pytest.mark.parametrize("package", list(PAPERS))
def test_every_stored_value_is_on_its_line_in_its_row(package):
    values: PaperValues = PAPERS[package]
    lines = _excerpt(values.seed)
    checked = 0
    for table in values.tables:
        for row in table["rows"]:
            text = lines[row["line"]]
            found = [_number(t) for t in _tokens(text)]
            stored = [v for v in row["values"] if v is not None]
            if table["id"] != "statistics":  # a table row: the line starts with the row's label
                assert text.split("\t")[0] == row["label"], (table["name"], row["label"], text)
            position = 0
            for value in stored:
                if isinstance(value, list):  # Table 5's target modules, over two lines
                    words = " ".join(lines[n] for n in row["lines"])
                    assert all(v in words for v in value), (row["label"], value)
                elif isinstance(value, str):
                    assert text.split("\t")[1] == value, (row["label"], value)
                else:  # numbers in the stored order, as a subsequence of the line's numbers
                    while position < len(found) and not (
                        found[position] is not None and math.isclose(found[position], value, abs_tol=1e-9)
                    ):
                        position += 1
                    assert position < len(found), (
                        f"{table['name']} {row['label']}: {value} not on line {row['line']}"
                    )
                    position += 1
                checked += 1
    assert checked == {"bqa": 84, "marinelife16k": 221}[package]


@pytest.mark.parametrize("package", list(PAPERS))
def test_excerpt_is_the_seed_text(package):
    folder = Path(os.environ.get("VQABENCH_SEEDS", "/work/shared/seeds"))
    seed = folder / PAPERS[package].seed
    if not seed.is_file():
        pytest.skip(f"the seed text is not on this machine ({seed})")
    text = seed.read_text(encoding="utf-8").splitlines()
    for number, line in _excerpt(seed.name).items():
        assert text[number - 1] == line, number


def _table(package: str, table_id: str) -> dict:
    return PAPERS[package].table(table_id)


def test_bqa_totals_follow_from_easy_hard_except_the_two_flagged():
    """Table 3's counts weigh Easy and Hard; with each printed to 2 decimals (+-0.005) a Total must lie in
    the range they allow. Gemini's 0.61 and GPT-4o's 0.60 do not (0.487, 0.576): they are flagged."""
    sizes = {r["split"]: dict(zip(("Total", "Easy", "Hard"), r["values"], strict=True))
             for r in _table("bqa", "table3")["rows"]}  # fmt: skip
    assert sizes["test"] == {"Total": 1443, "Easy": 707, "Hard": 736}
    assert sizes["validation"] == {"Total": 1538, "Easy": 746, "Hard": 792}
    outside = []
    for table_id, split in (("table1", "test"), ("table4", "validation")):
        table = _table("bqa", table_id)
        n = sizes[split]
        assert [c["n"] for c in table["columns"]] == [n[c["subset"]] for c in table["columns"]]
        for row in table["rows"]:
            for start in range(0, len(row["values"]), 3):
                easy, hard, total = row["values"][start : start + 3]
                if easy is None or row["label"].startswith("Human"):
                    continue  # the human study's 100 questions are not the split
                low = ((easy - 0.005) * n["Easy"] + (hard - 0.005) * n["Hard"]) / n["Total"]
                high = ((easy + 0.005) * n["Easy"] + (hard + 0.005) * n["Hard"]) / n["Total"]
                column = table["columns"][start + 2]["name"]
                if not low - 0.005 <= total <= high + 0.005:
                    outside.append(
                        (
                            table_id,
                            row["label"],
                            column,
                            round((easy * n["Easy"] + hard * n["Hard"]) / n["Total"], 3),
                        )
                    )
                    assert column in row.get("flags", {}), (row["label"], column)
                else:
                    assert column not in row.get("flags", {}), (row["label"], column)
    assert outside == [("table1", "Gemini", "Total", 0.487), ("table1", "GPT-4o", "Total", 0.576)]


def test_marinelife_averages_are_the_group_means_except_the_flagged():
    mismatches = []
    for table_id in ("table3", "captions"):
        table = _table("marinelife16k", table_id)
        members: dict[str, list[list[float]]] = {}
        for row in table["rows"]:
            if "average_of" not in row:
                members.setdefault(row["group"], []).append(row["values"])
                continue
            group = members[row["average_of"]]
            for k, column in enumerate(table["columns"]):
                mean = sum(v[k] for v in group) / len(group)
                if not math.isclose(round(mean + 1e-9, 2), row["values"][k], abs_tol=1e-9):
                    mismatches.append((table_id, column["name"], row["values"][k], round(mean, 3)))
                    assert column["name"] in row.get("flags", {})
    assert mismatches == [("table3", "OEMU", 2.04, 2.048), ("table3", "PMT", 82.46, 82.475)]


def _explains(value: float, n: int, top: float, per_item: int) -> bool:
    """Whether some k/n (x top) prints as ``value``, rounded or truncated to its digits."""
    digits = len(repr(float(value)).split(".")[1].rstrip("0")) if "." in repr(float(value)) else 0
    unit = 10.0**-digits
    for k in range(per_item * n + 1):
        x = k * top / n
        if abs(x - value) <= unit / 2 + 1e-9 or value - 1e-9 <= x < value + unit - 1e-9:
            return True
    return False


def test_marinelife_inferred_n_explains_each_cell_and_cells_without_n_fit_none():
    without = []
    for table_id, top, per_item in (("table3", 100, 1), ("captions", 1, 5)):
        for cell in PAPERS["marinelife16k"].cells(table_id):
            if cell.row == "Average" or cell.column == "OEMU":
                continue
            if cell.n is None:
                without.append((table_id, cell.row.split(" [")[0], cell.column, cell.value))
                assert not any(_explains(cell.value, n, top, per_item) for n in (30, 17, 7)), cell
            else:
                assert cell.n_inferred and _explains(cell.value, cell.n, top, per_item), cell
    # The counts in PAPER_NOTES: 4 of Table 3's 84 model cells, 3 of the caption table's 72.
    assert [w for w in without if w[0] == "table3"] == [
        ("table3", "Gemma4-31B", "MBC-so", 89.3),
        ("table3", "Qwen2.5-VL-72B", "MBC-so", 90.5),
        ("table3", "InternVL3-78B", "MBC-so", 91.2),
        ("table3", "InternVL3-78B", "OBK", 83.4),
    ]
    assert len([w for w in without if w[0] == "captions"]) == 3


def test_lowest_dimension_per_model_is_sm_l_for_8_of_12():
    """The metric card's sentence: SM-l is the lowest of the seven accuracy dimensions for 8 of 12 models,
    PDO for 3 (one of them tied with SM-e), MBC-mo for 1."""
    table = _table("marinelife16k", "table3")
    dims = [c["name"] for c in table["columns"] if c["name"] != "OEMU"]
    lowest: Counter[str] = Counter()
    models = [r for r in table["rows"] if "average_of" not in r]
    for row in models:
        values = row["values"][: len(dims)]
        for dim, v in zip(dims, values, strict=True):
            if v == min(values):
                lowest[dim] += 1
    assert len(models) == 12
    assert lowest == Counter({"SM-l": 8, "PDO": 3, "SM-e": 1, "MBC-mo": 1})
    card = (Path(__file__).parents[1] / "metrics" / "marinelife_qa" / "README.md").read_text(encoding="utf-8")
    assert "for 8 of the 12 models, camera motion (PDO) for 3" in card
    assert "hardest dimension for most models" not in card


def test_the_former_hand_stored_values_now_come_from_the_data():
    assert PAPER_SELF_BLEU == {"train": 0.87, "validation": 0.86, "test": 0.85}
    assert PAPER["hours"] == 18.48 and PAPER["sentences_per_caption"] == 3.4 and PAPER["caption_words"] == 44
    assert PAPER["questions"] == 16080 and PAPER["splits"] == {"train": 1300, "validation": 200, "test": 500}
    assert LORA_HYPERPARAMETERS["lora_r"] == 128 and LORA_HYPERPARAMETERS["batch_size"] == 4
    assert LORA_HYPERPARAMETERS["lora_dropout"] == 0.05 and LORA_HYPERPARAMETERS["epochs"] == 1


def test_every_cell_has_unit_scale_table_row_and_says_how_its_n_was_had():
    for values in PAPERS.values():
        for cell in values.cells():
            assert cell.table and cell.row and cell.line > 0
            if cell.measure in ("accuracy", "judge_score"):
                assert cell.unit and cell.scale, cell
                assert cell.n_how, cell  # given (BQA: Table 3), inferred (MarineLife) or none, said how
            if cell.n_inferred:
                assert "inferred" in (cell.n_how or "")
