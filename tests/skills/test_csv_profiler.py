"""Tests for skills/csv-profiler/scripts/profile_csv.py."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.scripts import run_script

SCRIPT = Path(__file__).resolve().parents[2] / "skills" / "csv-profiler" / "scripts" / "profile_csv.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return run_script(SCRIPT, *args)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "column types" in result.stdout


def test_text_report_types_nulls_and_notes(tmp_path):
    csv_file = write(tmp_path, "orders.csv",
                     "id,customer,total,paid,ordered_on\n"
                     "1,Ann,9.50,yes,2024-01-03\n"
                     "2,Bob,12,no,2024-02-11\n"
                     "3,Cy,,yes,2023-12-30\n")
    result = run(str(csv_file))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "rows: 3  columns: 5  delimiter: ','"
    assert lines[3].split() == ["column", "type", "nulls", "null%", "distinct", "min", "max"]
    assert lines[4].split() == ["id", "integer", "0", "0.0", "3", "1", "3"]
    assert lines[6].split() == ["total", "float", "1", "33.3", "2", "9.5", "12"]
    assert lines[7].split() == ["paid", "boolean", "0", "0.0", "2", "no", "yes"]
    assert lines[8].split() == ["ordered_on", "date", "0", "0.0", "3", "2023-12-30", "2024-02-11"]
    assert "note: column 'id' is unique (candidate key)" in lines


def test_json_report_ragged_rows_duplicates_and_nulls(tmp_path):
    csv_file = write(tmp_path, "people.tsv",
                     "name\tage\tage\n"
                     "ann\t31\tx\n"
                     "bob\tNA\n"
                     "cy\t40\ty\tz\n")
    result = run(str(csv_file), "--json", "--delimiter", "\t")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["rows"] == 3
    assert report["duplicate_headers"] == ["age"]
    assert report["ragged_rows"] == [{"line": 3, "fields": 2}, {"line": 4, "fields": 4}]
    age = report["columns"][1]
    assert (age["type"], age["nulls"], age["distinct"], age["min"], age["max"], age["mean"]) == \
        ("integer", 1, 2, "31", "40", "35.5")
    third = report["columns"][2]
    assert third["nulls"] == 1  # the missing trailing field of "bob"


def test_max_rows_and_empty_column(tmp_path):
    csv_file = write(tmp_path, "a.csv", "k,blank\n1,\n2,\n3,\n")
    result = run(str(csv_file), "--max-rows", "2")
    assert result.returncode == 0
    assert "rows: 2  columns: 2" in result.stdout
    assert "note: column 'blank' has no values" in result.stdout
    assert "note: stopped after --max-rows 2; figures describe a sample" in result.stdout


def test_missing_file_fails_with_message(tmp_path):
    result = run(str(tmp_path / "nope.csv"))
    assert result.returncode == 2
    assert "error: file not found" in result.stderr


def test_empty_file_and_bad_encoding_fail(tmp_path):
    empty = write(tmp_path, "empty.csv", "")
    assert run(str(empty)).returncode == 2
    latin = tmp_path / "latin.csv"
    latin.write_bytes("name\nJos\xe9\n".encode("latin-1"))
    result = run(str(latin))
    assert result.returncode == 2
    assert "--encoding latin-1" in result.stderr
    assert run(str(latin), "--encoding", "latin-1").returncode == 0
