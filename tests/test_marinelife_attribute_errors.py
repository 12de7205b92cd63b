"""Attribute files whose cells cannot be trusted are errors naming file and line, the same in
``check-attributes`` and the build (issue 15, cases 4 and 12). ``check-attributes`` runs as a real
``vqabench`` process on real files."""

from __future__ import annotations

import csv
import json

import pytest
from test_marinelife_annotations import ROWS, _write_csv, _write_jsonl
from test_unfinished_runs import vqabench

from marinelife16k.annotations import read_annotations


def check(path) -> tuple[int, str]:
    done = vqabench(["marinelife", "check-attributes", str(path)])
    return done.returncode, done.stdout + done.stderr


def test_an_unquoted_comma_is_an_error_naming_the_line(tmp_path):
    good = _write_csv(tmp_path / "good.csv", ROWS)
    lines = good.read_text(encoding="utf-8").splitlines()
    # "small, oval body" is quoted by the csv writer; written by hand, it loses its quotes.
    assert '"small, oval body"' in lines[1]
    lines[1] = lines[1].replace('"small, oval body"', "small, oval body")
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = check(bad)
    assert code == 2, out
    assert f"{bad}: 1 problem(s)" in out
    header = len(lines[0].split(","))
    assert f"row 2 (mvk-1): line 2: {header + 1} cells, the header has {header}" in out
    with pytest.raises(ValueError, match=r"row 2 \(mvk-1\): line 2: \d+ cells"):
        read_annotations(bad)


def test_a_row_with_fewer_cells_and_an_unterminated_quote(tmp_path):
    good = _write_csv(tmp_path / "good.csv", ROWS)
    lines = good.read_text(encoding="utf-8").splitlines()
    short = tmp_path / "short.csv"
    with short.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(list(ROWS[0]))
        writer.writerow(list(ROWS[0].values())[:-2])  # the last two cells left out
    with pytest.raises(ValueError, match=r"row 2 \(mvk-1\): line 2: \d+ cells, the header has"):
        read_annotations(short)
    torn = tmp_path / "torn.csv"
    last_quote = lines[1].rindex('"')  # the quote closing row 2's last quoted cell goes missing
    lines[1] = lines[1][:last_quote] + lines[1][last_quote + 1 :]
    torn.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"row 2 \(mvk-1\): lines 2-\d+: .*a quote opened on that line may be unterminated"
    ):
        read_annotations(torn)


@pytest.mark.parametrize("value", [["orange", "white"], {"main": "orange"}, True])
def test_jsonl_values_that_are_not_strings_are_errors(tmp_path, value):
    rows = [dict(r) for r in ROWS]
    rows[1]["color"] = value
    path = _write_jsonl(tmp_path / "a.jsonl", rows)
    with pytest.raises(ValueError) as raised:
        read_annotations(path)
    assert f"line 2 (msc-7): column 'color': expected a string, got {type(value).__name__}" in str(
        raised.value
    )
    assert json.dumps(value)[:20] in str(raised.value)


def test_encoding_bom_and_empty_files(tmp_path):
    good = _write_csv(tmp_path / "good.csv", ROWS)
    text = good.read_text(encoding="utf-8")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(text.replace("clownfish", "poisson-clown é").encode("latin-1"))
    code, out = check(latin)
    assert code == 2 and f"{latin}, line 2: not UTF-8 (byte 0xe9" in out, out
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert read_annotations(bom) == read_annotations(good)  # the BOM is not part of "video_id"
    bom_jsonl = tmp_path / "bom.jsonl"
    bom_jsonl.write_bytes(b"\xef\xbb\xbf" + _write_jsonl(tmp_path / "plain.jsonl", ROWS).read_bytes())
    assert read_annotations(bom_jsonl) == read_annotations(tmp_path / "plain.jsonl")
    header_only = tmp_path / "empty.csv"
    header_only.write_text(text.splitlines()[0] + "\n", encoding="utf-8")
    code, out = check(header_only)
    assert code == 2 and f"{header_only}: no videos (the file has only a header)" in out
    build = vqabench(["marinelife", "build", "--attributes", str(header_only), "--video-root", str(tmp_path),
                      "--work", str(tmp_path / "w"), "--llm-model", "m", "--llm-api-key-env", "none"])  # fmt: skip
    assert build.returncode == 2 and f"{header_only}: no videos (the file has only a header)" in build.stderr
