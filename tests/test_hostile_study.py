"""recompute_study.py against hostile study files, servers and addresses.

The contract (study.md §2 and §7, records.md §2): a file that is not of the
documented form ends in exit 2 with exactly one line on stderr naming the
file and, for a CSV file, the row (by its line in the file) and the column,
for a JSON file the field; never a traceback, and never "same" on stdout. A
study whose files read but whose figures differ or whose checks fail (a
canary missing on one row, a row naming another study) ends in exit 1. In
process, any exception other than SystemExit that escapes `main` breaks the
contract, and so does a refusal by the script's last-resort guard, which
names no file.

Categories: csv (hand-written hostile CSV files), json (hostile profile and
recipe JSON), fuzz (random mutations of the saved studies), network (a
loopback platform with faults), safety (study addresses and --save).
"""
import collections
import contextlib
import csv
import io
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, REPO, load_script
from hostile_common import (
    DELETE, HUGE_INT, answer, drip, dumps, endless, in_turn, label, mutate, r, raw, reading_problems,
    redirect, run_main, run_saving, shown, stall, tree, walk,
)
from hostile_study_util import (
    ANA, CANARY, COUNTS, KIM, POSITION, address, card_index, column_of, contract_problems, csv_bytes,
    csv_rows, flagged_problems, line_no, profile, recipe, refusal_problems, run_offline,
    serve_bytes, tally, word, write_rows,
)
from loopback import Platform


CATEGORIES = collections.OrderedDict([
    ("csv", "test_csv_"), ("json", "test_json_"), ("fuzz", "test_fuzz_"), ("network", "test_net_"),
    ("safety", "test_safety_"),
])


class NetworkUsed(BaseException):
    """An offline case tried to fetch: escapes `main`'s guard on purpose."""


@pytest.fixture(scope="module")
def rs():
    """The script for offline cases: any fetch is a test failure, never a silent network call."""
    module = load_script("recompute_study")

    def no_fetch(opener, url, what):
        raise NetworkUsed("an offline case fetched %s" % url)
    module.http_get = no_fetch
    return module


@pytest.fixture(scope="module")
def rn():
    """The script for network cases."""
    return load_script("recompute_study")


@pytest.fixture
def fast(rn, monkeypatch):
    """Short pauses and timeouts, so the network cases run quickly."""
    monkeypatch.setattr(rn, "RETRY_PAUSE_SECONDS", 0.05)
    monkeypatch.setenv("DAISHI_TIMEOUT", "1")
    return rn


@pytest.fixture(scope="module")
def shared_platform():
    with Platform(FIXTURES) as p:
        yield p


@pytest.fixture
def serving(shared_platform):
    """The module's loopback platform serving the fixtures, with these faults for one case."""
    @contextlib.contextmanager
    def serve(faults=None):
        p = shared_platform
        p.faults.clear()
        p.faults.update(faults or {})
        del p.requests[:]
        try:
            yield p
        finally:
            p.faults.clear()
    return serve


@pytest.fixture
def stop():
    event = threading.Event()
    yield event
    event.set()


# KIM is read under the fixed rule; a mutation that turns its rule to anytime
# still has a recipe to read (never the network).
KIM_RECIPE = {"id": "r_8eacf1c6", "stoppingRule": "anytime", "anytime": {"rho": 0.137}}


def offline(rs, study=KIM, **files):
    """KIM's saved files, with a recipe where a test turns its rule to anytime (a recipe given
    to a fixed-rule study is said not to be read)."""
    if study is KIM and files.get("recipe_") is None and "anytime" in repr(files.get("trials")):
        files["recipe_"] = KIM_RECIPE
    return run_offline(rs, study, **files)


def clip(text, n=40):
    text = repr(text)
    return text if len(text) <= n else text[:n] + "..."


# ---------------------------------------------------------------- baselines

@pytest.mark.parametrize("study", [KIM, ANA], ids=["fixed", "anytime"])
def test_csv_saved_study_reads_clean(rs, study):
    """The unmutated saved copies (re-written by the helpers) read clean: the
    hostile cases below each change one thing."""
    tally("csv")
    for name in ("trials.csv", "seats.csv"):
        assert write_rows(csv_rows(study, name)).encode("utf-8") == csv_bytes(study, name)
    o = offline(rs, study)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert re.search(r"figures that match: (\d+) of \1 compared", o.out)


# ---------------------------------------------------------------- csv: header

TRIALS_HEADER = csv_rows(KIM, "trials.csv")[0]
SEATS_HEADER = csv_rows(KIM, "seats.csv")[0]


def without_column(rows, name):
    i = rows[0].index(name)
    return [row[:i] + row[i + 1:] for row in rows]


def with_column(rows, at, name, value="x"):
    return [row[:at] + [name if n == 0 else value] + row[at:] for n, row in enumerate(rows)]


def swapped_columns(rows, a, b):
    i, j = rows[0].index(a), rows[0].index(b)
    out = []
    for row in rows:
        row = list(row)
        row[i], row[j] = row[j], row[i]
        out.append(row)
    return out


def renamed_header(rows, name, new):
    rows = [list(row) for row in rows]
    rows[0][rows[0].index(name)] = new
    return rows


def header_cases(name, header, middle):
    """(id, make rows from the saved rows, the columns the refusal must name: any one of them)."""
    last = len(header)
    return [
        ("%s missing first column %s" % (name, header[0]), lambda rows: without_column(rows, header[0]),
         (header[0],)),
        ("%s missing column %s" % (name, middle), lambda rows: without_column(rows, middle), (middle,)),
        ("%s missing last column canary" % name, lambda rows: without_column(rows, "canary"), ("canary",)),
        ("%s trial and arm swapped" % name, lambda rows: swapped_columns(rows, "trial", "arm"), ("trial", "arm")),
        ("%s extra column at the end" % name, lambda rows: with_column(rows, last, "extra"), ("extra",)),
        ("%s extra column in the middle" % name, lambda rows: with_column(rows, 5, "extra"), ("extra",)),
        ("%s column renamed (case)" % name, lambda rows: renamed_header(rows, middle, middle.title()),
         (middle, middle.title())),
        ("%s column twice" % name, lambda rows: with_column(rows, 2, "trial"), ("trial",)),
        ("%s header with spaces" % name, lambda rows: renamed_header(rows, "arm", " arm"), ("arm",)),
    ]


HEADER_CASES = ([("trials.csv",) + c for c in header_cases("trials.csv", TRIALS_HEADER, "value")]
                + [("seats.csv",) + c for c in header_cases("seats.csv", SEATS_HEADER, "fitness_index")])


@pytest.mark.parametrize("file,name,make,columns", HEADER_CASES, ids=[c[1] for c in HEADER_CASES])
def test_csv_header_not_the_columns_refused(rs, file, name, make, columns):
    """A header that is not the documented columns in order: refused, naming
    line 1 and a column that is missing, extra or out of place."""
    tally("csv")
    rows = make(csv_rows(KIM, file))
    o = offline(rs, **{file.split(".")[0]: rows})
    names = [line_no(1), tuple(word(c) for c in columns)]
    problems = refusal_problems(o, file, names)
    assert not problems, problems


# ---------------------------------------------------------------- csv: row shape

def row_cases(file):
    cases = []
    for what, change in (("short row (one field less)", lambda row: row[:-1]),
                         ("short row (half the fields)", lambda row: row[:len(row) // 2]),
                         ("short row (one field)", lambda row: row[:1]),
                         ("long row (one field more)", lambda row: row + ["x"]),
                         ("long row (an empty field more)", lambda row: row + [""]),
                         ("long row (twice the fields)", lambda row: row + row)):
        cases.append(("%s %s" % (file, what), file, change))
    return cases


ROW_CASES = row_cases("trials.csv") + row_cases("seats.csv")


@pytest.mark.parametrize("name,file,change", ROW_CASES, ids=[c[0] for c in ROW_CASES])
def test_csv_row_of_the_wrong_length_refused(rs, name, file, change):
    tally("csv")
    rows = csv_rows(KIM, file)
    rows[3] = change(rows[3])
    o = offline(rs, **{file.split(".")[0]: rows})
    problems = refusal_problems(o, file, [line_no(4)])
    assert not problems, problems


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
def test_csv_blank_line_between_rows_refused(rs, file):
    tally("csv")
    data = csv_bytes(KIM, file)
    lines = data.split(b"\r\n")
    lines.insert(4, b"")
    o = offline(rs, **{file.split(".")[0]: b"\r\n".join(lines)})
    problems = refusal_problems(o, file, [line_no(5)])
    assert not problems, problems


# ---------------------------------------------------------------- csv: encodings and line ends

def lf(data):
    return data.replace(b"\r\n", b"\n")


ALLOWED_ENCODINGS = [
    ("BOM", lambda d: b"\xef\xbb\xbf" + d),
    ("LF line ends", lf),
    ("BOM and LF line ends", lambda d: b"\xef\xbb\xbf" + lf(d)),
    ("CRLF line ends, no line end after the last row", lambda d: d[:-2]),
    ("LF line ends, no line end after the last row", lambda d: lf(d)[:-1]),
    ("header CRLF, rows LF", lambda d: d.split(b"\r\n", 1)[0] + b"\r\n" + lf(d.split(b"\r\n", 1)[1])),
]


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
@pytest.mark.parametrize("name,change", ALLOWED_ENCODINGS, ids=[a[0] for a in ALLOWED_ENCODINGS])
def test_csv_allowed_bom_and_line_ends_read_clean(rs, file, name, change):
    tally("csv")
    o = offline(rs, **{file.split(".")[0]: change(csv_bytes(KIM, file))})
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))


def set_cells(rows, column, value, where=lambda row: True):
    i = column_of(rows, column)
    for row in rows[1:]:
        if where(row):
            row[i] = value
    return rows


def arm_is(arm):
    return lambda row: row[2] == arm


QUOTED_ALLOWED = [
    ("trials.csv arm_label with a comma", "trials.csv",
     lambda rows: set_cells(rows, "arm_label", "with memory, long", arm_is("1"))),
    ("trials.csv arm_label with a newline", "trials.csv",
     lambda rows: set_cells(rows, "arm_label", "with\nmemory", arm_is("1"))),
    ("trials.csv arm_label with CRLF", "trials.csv",
     lambda rows: set_cells(rows, "arm_label", "with\r\nmemory", arm_is("1"))),
    ("trials.csv arm_label with quotes", "trials.csv",
     lambda rows: set_cells(rows, "arm_label", 'memory "v2", on', arm_is("1"))),
    ("trials.csv arm_label of non-ASCII text", "trials.csv",
     lambda rows: set_cells(rows, "arm_label", "m\u00e9moire \u8bb0\u5fc6 \U0001f9e0", arm_is("1"))),
    ("trials.csv scenario with a comma and newline", "trials.csv",
     lambda rows: set_cells(rows, "scenario", "frontier,\n12x12")),
    ("seats.csv name with a comma and newline", "seats.csv",
     lambda rows: set_cells(rows, "name", "Seat, the\nfirst")),
    ("seats.csv harness with quotes", "seats.csv",
     lambda rows: set_cells(rows, "harness", '0.6.12 "stable"')),
]


def quote_everything(rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL).writerows(rows)
    return out.getvalue()


@pytest.mark.parametrize("name,file,change", QUOTED_ALLOWED, ids=[q[0] for q in QUOTED_ALLOWED])
def test_csv_quoted_fields_with_commas_and_newlines_read_clean(rs, name, file, change):
    tally("csv")
    o = offline(rs, **{file.split(".")[0]: change(csv_rows(KIM, file))})
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
def test_csv_every_field_quoted_reads_clean(rs, file):
    tally("csv")
    o = offline(rs, **{file.split(".")[0]: quote_everything(csv_rows(KIM, file))})
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))


def first_line_of(rows, index, newline="\r\n"):
    """The line in the file where row `index` (0 the header) starts."""
    return write_rows(rows[:index], newline).count("\n") + 1


def test_csv_line_counted_past_a_field_with_newlines(rs):
    """Rows after a quoted field holding line breaks are named by their line in the file."""
    tally("csv")
    rows = set_cells(csv_rows(KIM, "trials.csv"), "arm_label", "with\nmemory", arm_is("1"))
    rows[9][column_of(rows, "value")] = "4x"
    o = offline(rs, trials=rows)
    start = first_line_of(rows, 9)
    end = start + write_rows(rows[9:10]).count("\n") - 1
    problems = refusal_problems(o, "trials.csv", [(line_no(start), line_no(end)), word("value")])
    assert not problems, problems


def test_csv_bad_quoted_multiline_field_named_by_its_row(rs):
    """A bad value inside a quoted field spanning two lines: the row's first or last line."""
    tally("csv")
    rows = csv_rows(KIM, "trials.csv")
    rows[3][column_of(rows, "value")] = "47\n65"
    o = offline(rs, trials=rows)
    problems = refusal_problems(o, "trials.csv", [(line_no(4), line_no(5)), word("value")])
    assert not problems, problems


def on_line(n, **changes):
    """trials.csv with each old bytes made new on line n (1 the header), once each, in turn."""
    def change(data):
        lines = data.split(b"\r\n")
        for old, new in changes.values():
            assert old in lines[n - 1]
            lines[n - 1] = lines[n - 1].replace(old, new, 1)
        return b"\r\n".join(lines)
    return change


BAD_QUOTING = [  # each named by its line, in the file's own terms (no word of Python's)
    ("unclosed quote", on_line(5, a=(b",fitness_index,", b',"fitness_index,')), 5,
     "trials.csv line 5: a quoted field opened here is never closed"),
    ("unclosed quote on a record's second line",  # the label's field goes on to line 3
     on_line(2, a=(b",DAISHI", b',"DAISHI'), b=(b",control,", b',"con\ntrol",')), 3,
     "trials.csv line 3: a quoted field opened here is never closed"),
    ("quote inside an unquoted field", on_line(4, a=(b",control,", b',con"trol,')), 4,
     "trials.csv line 4, column arm_label: not RFC 4180 CSV (a quote inside an unquoted field"),
    ("text after a closing quote", on_line(6, a=(b",control,", b',"control"x,')), 6,
     "trials.csv line 6: text after a quoted field's closing quote"),
    ("a lone CR", on_line(7, a=(b",completed,", b",comp\rleted,")), 7,
     "trials.csv line 7: a carriage return (CR) not followed by a line feed (LF), outside quotes"),
    ("a lone CR after a quoted field", on_line(3, a=(b",completed,", b',"completed"\rx,')), 3,
     "trials.csv line 3: a carriage return (CR) not followed by a line feed (LF), outside quotes"),
]


@pytest.mark.parametrize("name,change,line,says", BAD_QUOTING, ids=[b[0] for b in BAD_QUOTING])
def test_csv_broken_quoting_refused(rs, name, change, line, says):
    tally("csv")
    o = offline(rs, trials=change(csv_bytes(KIM, "trials.csv")))
    problems = refusal_problems(o, "trials.csv", [line_no(line), says])
    assert not problems, problems
    assert "newline" not in o.err and "expected" not in o.err and "end of data" not in o.err, o.err


NON_UTF8 = [
    ("a Latin-1 byte", b"\xe9"), ("a lone continuation byte", b"\x80"), ("0xff", b"\xff"),
    ("an overlong slash", b"\xc0\xaf"), ("a UTF-16 surrogate", b"\xed\xa0\x80"),
    ("a cut-off sequence", b"\xe2\x82"),
]


@pytest.mark.parametrize("file,column", [("trials.csv", "arm_label"), ("seats.csv", "name")])
def test_csv_non_utf8_bytes_refused_by_row_and_column(rs, file, column):
    """Bytes that are not UTF-8 inside row 5's field (each kind in turn):
    refused naming the line and column."""
    failures = []
    for name, bad in NON_UTF8:
        tally("csv")
        rows = csv_rows(KIM, file)
        marker = "@@bad@@"
        rows[5][column_of(rows, column)] = "a" + marker + "b"
        data = write_rows(rows).encode("utf-8").replace(marker.encode(), bad)
        o = offline(rs, **{file.split(".")[0]: data})
        problems = refusal_problems(o, file, [line_no(6), word(column)])
        if problems:
            failures.append((name, problems))
    assert not failures, failures


# ---------------------------------------------------------------- csv: field forms

COMMON_BAD = ["abc", "1e3", "1E3", "+5", " 5", "5 ", "5.", ".5", "NaN", "nan", "inf", "-inf", "Infinity",
              "0x10", "1_000", "1,000", "\uff15", "\u0665", "--5", "5-", "true", "\t5", "5\u00a0"]
CORE_BAD = ["abc", "1e3", "+5", " 5", "5.", ".5", "NaN", "inf"]
SIGNED_EXTRA = ["5.5", "5.0", "-5.", "- 5", "-+5"]
UNSIGNED_EXTRA = ["-0", "-5", "-0.0", "-5.5"]
KIND_BAD = {
    "int": SIGNED_EXTRA + ["-.5"],
    "value": ["47.6500", "47.6505", "1.2345", "-47.", "-.5", "47,65"],
    "tenths": UNSIGNED_EXTRA + ["52.55", "52.50", "52.5.1"],
    "coverage": UNSIGNED_EXTRA + ["0.0421", "0.4200"],
    "decimal": ["-5.", "-.5", "1.2.3"],
    "bool": ["True", "TRUE", "False", "1", "0", "yes", "t", " true", "true ", "null", "-0"],
    "level": UNSIGNED_EXTRA + ["95%", "0,95", "1e-1", "0.95.", "-0.95"],
}
ENUMS = {
    "ended": ["Completed", "complete", "completed ", " failed", "x", "0", "-0"],
    "no_value": ["Failed", "fail", "failed ", "no_trial", "0", "-0"],
    "pair": ["IN", "In", "yes", "in ", "1", "-0"],
    "stopping_rule": ["Fixed", "FIXED", "fixed ", "sequential", "1", "-0"],
    "pair_out": ["1", "1:", ":failed", "1:failed;", "1:Failed", "1:failed,2:failed", "a:failed", "+1:failed",
                 "1:failed; 2:failed", "1:unknown", "1;failed", " 1:failed"],
}
TRIALS_KINDS = collections.OrderedDict([
    ("trial", "int"), ("arm", "int"), ("map_seed", "int"), ("spawn_seed", "int"), ("ended", "enum"),
    ("rounds_played", "int"), ("rounds_planned", "int"), ("resumed_at", "int"), ("value", "value"),
    ("no_value", "enum"), ("pair", "enum"), ("pair_out", "enum"), ("in_comparison", "bool"),
    ("stopping_rule", "enum"), ("comparison_level", "level"),
])
SEATS_KINDS = collections.OrderedDict(
    [("trial", "int"), ("arm", "int"), ("seat", "int"), ("focal", "bool"), ("whole_trial", "bool"),
     ("fitness_index", "tenths"), ("rank", "int")]
    + [(d, "tenths") for d in ("survival", "economy", "social", "adaptation", "competitiveness")]
    + [(c, "int") for c in ("turns", "rounds_sat_out", "error_turns")] + [("spend", "decimal")]
    + [(c, "int") for c in ("rests", "looks", "moves", "gathers", "crafts", "builds", "repairs", "trains",
                            "trades", "attacks", "raids", "messages", "dormancies", "recoveries")]
    + [("reputation", "decimal"), ("aggression", "int"), ("map_coverage", "coverage")])
# One column of each kind takes every bad value; the others the core set and their kind's own.
FULL = {"trials.csv": {"trial", "value", "in_comparison", "comparison_level", "ended"},
        "seats.csv": {"seat", "fitness_index", "spend", "focal", "map_coverage"}}


# The documented forms (study.md §2, records.md §2.2-2.3), to keep a legal value out of the bad ones.
_REASONS = "failed|cancelled|seat_failed|stopped_short|resumed|version|unscored|unmeasured"
LEGAL = {
    "int": r"-?[0-9]+", "value": r"-?[0-9]+(\.[0-9]{1,3})?", "tenths": r"[0-9]+(\.[0-9])?",
    "coverage": r"[0-9]+(\.[0-9]{1,3})?", "decimal": r"-?[0-9]+(\.[0-9]+)?", "bool": r"true|false",
    "level": r"[0-9]+(\.[0-9]+)?", "ended": r"completed|failed|cancelled|stopped_short", "no_value": _REASONS,
    "pair": r"in|out", "stopping_rule": r"fixed|anytime",
    "pair_out": r"-?[0-9]+:(%s|no_trial|other_seeds)(;-?[0-9]+:(%s|no_trial|other_seeds))*" % (_REASONS, _REASONS),
}


def form_cases():
    cases = []
    for file, kinds in (("trials.csv", TRIALS_KINDS), ("seats.csv", SEATS_KINDS)):
        for column, kind in kinds.items():
            if kind == "enum":
                values = ENUMS[column] + (CORE_BAD if column in FULL[file] else ["abc", "NaN"])
            else:
                values = (COMMON_BAD + KIND_BAD[kind] if column in FULL[file] else CORE_BAD + KIND_BAD[kind][:3])
            legal = re.compile(LEGAL[column if kind == "enum" else kind])
            for value in values:
                if not legal.fullmatch(value):
                    cases.append((file, column, value))
    return cases


FORM_CASES = form_cases()
FORM_VALUES = collections.OrderedDict()
for _file, _column, _value in FORM_CASES:
    FORM_VALUES.setdefault((_file, _column), []).append(_value)


@pytest.mark.parametrize("file,column", list(FORM_VALUES), ids=["%s:%s" % k for k in FORM_VALUES])
def test_csv_field_of_the_wrong_form_refused(rs, file, column):
    """Row 3 (line 4) of the file holds a field not of its documented form: each
    bad value of the column in turn, every one refused naming line 4 and the column."""
    failures = []
    for value in FORM_VALUES[(file, column)]:
        tally("csv")
        rows = csv_rows(KIM, file)
        rows[3][column_of(rows, column)] = value
        o = offline(rs, **{file.split(".")[0]: rows})
        problems = refusal_problems(o, file, [line_no(4), word(column)])
        if problems:
            failures.append((value, problems))
    assert not failures, failures


REQUIRED = [("trials.csv", c) for c in ("trial", "arm", "pair")] + [
    ("seats.csv", c) for c in ("trial", "arm", "seat", "focal", "whole_trial")]


@pytest.mark.parametrize("file,column", REQUIRED)
def test_csv_required_field_empty_refused(rs, file, column):
    tally("csv")
    rows = csv_rows(KIM, file)
    rows[3][column_of(rows, column)] = ""
    o = offline(rs, **{file.split(".")[0]: rows})
    problems = refusal_problems(o, file, [line_no(4), word(column)])
    assert not problems, problems


def test_csv_comparison_level_empty_on_the_first_row_refused(rs):
    tally("csv")
    rows = csv_rows(KIM, "trials.csv")
    rows[1][column_of(rows, "comparison_level")] = ""
    o = offline(rs, trials=rows)
    problems = flagged_problems(o, "trials.csv", [line_no(2), word("comparison_level")])
    assert not problems, problems


# Numbers of a legal form but absurd size: read (exit 1, the figure differs)
# or refused naming the file, row and column; never the last-resort guard.
HUGE_FIELDS = [
    ("trials.csv", "value", "9" * 400), ("trials.csv", "value", "9" * 5000),
    ("trials.csv", "value", "-" + "9" * 400), ("trials.csv", "value", "9" * 400 + ".999"),
    ("trials.csv", "trial", "9" * 5000), ("trials.csv", "arm", "9" * 5000),
    ("trials.csv", "map_seed", "9" * 5000), ("trials.csv", "spawn_seed", "9" * 5000),
    ("trials.csv", "rounds_played", "9" * 5000),
    ("trials.csv", "comparison_level", "0.9999999999999999"),
    ("trials.csv", "comparison_level", "0." + "9" * 5000),
    ("trials.csv", "comparison_level", "0." + "0" * 400 + "1"),
    ("seats.csv", "fitness_index", "9" * 400), ("seats.csv", "fitness_index", "9" * 5000),
    ("seats.csv", "survival", "9" * 400), ("seats.csv", "survival", "9" * 5000),
    ("seats.csv", "trial", "9" * 5000), ("seats.csv", "seat", "9" * 5000),
    ("seats.csv", "rank", "9" * 5000), ("seats.csv", "spend", "9" * 5000),
    ("seats.csv", "map_coverage", "9" * 5000),
]


@pytest.mark.parametrize("file,column,value", HUGE_FIELDS,
                         ids=["%s:%s=%s(%d chars)" % (f, c, v[:6], len(v)) for f, c, v in HUGE_FIELDS])
def test_csv_number_of_absurd_size_flagged_by_name(rs, file, column, value):
    tally("csv")
    rows = csv_rows(KIM, file)
    rows[3 if column != "comparison_level" else 1][column_of(rows, column)] = value
    o = offline(rs, **{file.split(".")[0]: rows})
    line = 4 if column != "comparison_level" else 2
    problems = flagged_problems(o, file, [line_no(line), word(column)])
    assert not problems, problems


TEN_MB = 10 * 1024 * 1024


@pytest.mark.parametrize("file,column,fill,code", [
    ("trials.csv", "arm_label", "x", 0), ("trials.csv", "value", "9", 2), ("seats.csv", "name", "x", 0),
])
def test_csv_ten_megabyte_field_flagged_by_name(rs, file, column, fill, code):
    """A single 10 MB field on row 3: read, or refused naming the file, line and column."""
    tally("csv")
    rows = csv_rows(KIM, file)
    rows[3][column_of(rows, column)] = fill * TEN_MB
    o = offline(rs, **{file.split(".")[0]: rows})
    assert o.exc is None and o.code == code, (o.exc, o.code)
    if code == 0:
        return
    problems = refusal_problems(o, file, [line_no(4), word(column)])
    assert not problems, problems


NUL_CASES = [("trials.csv", "arm_label"), ("trials.csv", "value"), ("trials.csv", "canary"),
             ("seats.csv", "name"), ("seats.csv", "fitness_index")]


@pytest.mark.parametrize("file,column", NUL_CASES)
def test_csv_nul_byte_refused_by_row_and_column(rs, file, column):
    """A NUL byte inside row 3's field: a text file holds none; refused naming line and column."""
    tally("csv")
    rows = csv_rows(KIM, file)
    i = column_of(rows, column)
    rows[3][i] = rows[3][i][:2] + "\x00" + rows[3][i][2:]
    o = offline(rs, **{file.split(".")[0]: rows})
    if column == "canary" and o.code == 1:
        assert "FAILS" in o.out
        return
    problems = refusal_problems(o, file, [line_no(4), word(column)])
    assert not problems, problems


# ---------------------------------------------------------------- csv: empty files

EMPTY_FILES = [
    ("empty", b""), ("a BOM only", b"\xef\xbb\xbf"), ("one line end", b"\r\n"), ("spaces", b"   \n"),
]


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
@pytest.mark.parametrize("name,data", EMPTY_FILES, ids=[e[0] for e in EMPTY_FILES])
def test_csv_empty_file_refused(rs, file, name, data):
    tally("csv")
    o = offline(rs, **{file.split(".")[0]: data})
    problems = refusal_problems(o, file)
    assert not problems, problems


def test_csv_trials_header_only_refused(rs):
    tally("csv")
    o = offline(rs, trials=csv_rows(KIM, "trials.csv")[:1])
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems


@pytest.mark.parametrize("study", [KIM, ANA], ids=["fixed", "anytime"])
def test_csv_seats_header_only_flagged(rs, study):
    """No seat rows for published trials: a failed check (exit 1) or a refusal."""
    tally("csv")
    o = offline(rs, study, seats=csv_rows(study, "seats.csv")[:1])
    problems = flagged_problems(o, "seats.csv")
    assert not problems, problems


# ---------------------------------------------------------------- csv: canary, order, study

CANARY_BAD = [("missing", ""), ("altered", CANARY.replace("7f3c", "7f3d")), ("lower case", CANARY.lower()),
              ("trailing space", CANARY + " "), ("cut short", CANARY[:20])]


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
@pytest.mark.parametrize("name,value", CANARY_BAD, ids=[c[0] for c in CANARY_BAD])
def test_csv_canary_missing_or_altered_on_one_row_fails_a_check(rs, file, name, value):
    """A failed check, exit 1, its line naming the row."""
    tally("csv")
    rows = csv_rows(KIM, file)
    rows[3][column_of(rows, "canary")] = value
    o = offline(rs, **{file.split(".")[0]: rows})
    assert not reading_problems(o, (1,)), reading_problems(o, (1,))
    failing = [line for line in o.out.splitlines() if "FAILS" in line]
    assert any("canary" in line and file in line and line_no(4).search(line) for line in failing), failing


def swap(rows, i, j):
    rows[i], rows[j] = rows[j], rows[i]
    return rows


ORDER_CASES = [
    ("two rows swapped", lambda rows: swap(rows, 3, 4), (4, 5)),
    ("a row twice", lambda rows: rows[:4] + [list(rows[3])] + rows[4:], (4, 5)),
    ("last row first", lambda rows: [rows[0], rows[-1]] + rows[1:-1], (2, 3)),
    ("rows reversed", lambda rows: [rows[0]] + rows[:0:-1], (2, 3)),
    ("arms of one trial swapped", lambda rows: swap(rows, 1, 2), (2, 3)),
]


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
@pytest.mark.parametrize("name,change,lines", ORDER_CASES, ids=[c[0] for c in ORDER_CASES])
def test_csv_rows_out_of_order_refused(rs, file, name, change, lines):
    tally("csv")
    rows = change(csv_rows(KIM, file))
    o = offline(rs, **{file.split(".")[0]: rows})
    problems = refusal_problems(o, file, [tuple(line_no(n) for n in lines)])
    assert not problems, problems


OTHER_STUDY = ["s_00000000", "s_e4086cfe", "S_EEE65F53", "s_eee65f53 ", "", "../s_eee65f53"]


@pytest.mark.parametrize("file", ["trials.csv", "seats.csv"])
@pytest.mark.parametrize("other", OTHER_STUDY, ids=[repr(o) for o in OTHER_STUDY])
def test_csv_row_naming_another_study_flagged(rs, file, other):
    """One row's `study` is not the address's: a failed check (exit 1) naming the row, or a refusal."""
    tally("csv")
    rows = csv_rows(KIM, file)
    rows[3][column_of(rows, "study")] = other
    o = offline(rs, **{file.split(".")[0]: rows})
    problems = flagged_problems(o, file, [line_no(4), word("study")])
    assert not problems, problems
    if o.code == 1:
        failing = [line for line in o.out.splitlines() if "FAILS" in line]
        assert any(file in line and line_no(4).search(line) for line in failing), failing


def test_csv_every_row_naming_another_study_flagged(rs):
    """Files of another study read for this address: flagged on every row's `study`."""
    tally("csv")
    trials = set_cells(csv_rows(KIM, "trials.csv"), "study", "s_00000000")
    seats = set_cells(csv_rows(KIM, "seats.csv"), "study", "s_00000000")
    o = offline(rs, trials=trials, seats=seats)
    problems = flagged_problems(o, "trials.csv", [word("study")])
    assert not problems, problems


# ---------------------------------------------------------------- json: whole files

def kim_profile_text():
    return dumps(profile(KIM))


WHOLE_PROFILE = [
    ("truncated at half", lambda: kim_profile_text()[:len(kim_profile_text()) // 2], [POSITION]),
    ("one byte short", lambda: kim_profile_text()[:-1], [POSITION]),
    ("an opening brace", lambda: "{", [POSITION]),
    ("empty", lambda: "", [POSITION]),
    ("null", lambda: "null", []),
    ("a list", lambda: "[]", []),
    ("a string", lambda: '"kim"', []),
    ("a number", lambda: "1", []),
    ("trailing garbage", lambda: kim_profile_text() + "x", [POSITION]),
    ("two documents", lambda: kim_profile_text() + kim_profile_text(), [POSITION]),
    ("not UTF-8", lambda: kim_profile_text().encode("utf-8").replace(b"Memory on", b"Memory \xff"), []),
    ("HTML", lambda: "<!doctype html><html><body>Not found</body></html>", [POSITION]),
    ("studies missing", lambda: {"handle": "kim"}, ["studies"]),
    ("studies null", lambda: {"handle": "kim", "studies": None}, ["studies"]),
    ("studies an object", lambda: {"handle": "kim", "studies": {"s_eee65f53": {}}}, ["studies"]),
    ("studies a string", lambda: {"handle": "kim", "studies": "s_eee65f53"}, ["studies"]),
    ("studies empty", lambda: {"handle": "kim", "studies": []}, ["s_eee65f53"]),
    ("the card missing", lambda: dict(profile(KIM), studies=[c for c in profile(KIM)["studies"]
                                                             if c["id"] != KIM.id]), ["s_eee65f53"]),
    ("the card's id in capitals", lambda: json.loads(kim_profile_text().replace('"id": "s_eee65f53"',
                                                                               '"id": "S_EEE65F53"')),
     ["s_eee65f53"]),
    ("deeply nested", lambda: '{"studies": ' + "[" * 100000 + "]" * 100000 + "}", []),
    ("deeply nested objects", lambda: '{"studies": [' + '{"a":' * 100000 + "1" + "}" * 100000 + "]}", []),
    ("an integer of 5000 digits", lambda: kim_profile_text().replace('"trials": 24', '"trials": 1' + "0" * 4999),
     [("trials", POSITION)]),
]


@pytest.mark.parametrize("name,make,names", WHOLE_PROFILE, ids=[w[0] for w in WHOLE_PROFILE])
def test_json_whole_profile_refused(rs, name, make, names):
    tally("json")
    o = offline(rs, page=make())
    problems = refusal_problems(o, "profile", names)
    assert not problems, problems


CARD = ("studies", card_index(profile(KIM), KIM))
READING = CARD + ("reading",)


CARD_REFUSED = [
    (READING, DELETE, ["reading"]), (READING, None, ["reading"]), (READING, "x", ["reading"]),
    (READING, [], ["reading"]), (READING, 1, ["reading"]), (READING, True, ["reading"]),
    (CARD + ("kind",), "runset", ["run set"]),
    (READING + ("effect",), DELETE, ["effect"]), (READING + ("effect",), "ratio", ["effect"]),
    (READING + ("effect",), 1, ["effect"]), (READING + ("effect",), None, ["effect"]),
    (READING + ("effect",), ["difference"], ["effect"]),
]


@pytest.mark.parametrize("path,value,names", CARD_REFUSED,
                         ids=["%s=%s" % (label(c[0][2:]), shown(c[1])) for c in CARD_REFUSED])
def test_json_card_without_a_usable_reading_refused(rs, path, value, names):
    tally("json")
    prof = profile(KIM)
    splices = mutate(prof, path, value)
    o = offline(rs, page=dumps(prof, splices))
    # a run set is named as such: the card's kind
    problems = refusal_problems(o, ("profile", "card", "run set"), names)
    assert not problems, problems


def test_json_other_cards_of_any_shape_read_clean(rs):
    """Cards the address does not name are not read: any shape of them reads clean."""
    tally("json")
    prof = profile(KIM)
    prof["studies"] = [None, 1, "x", [], {"id": 5}, {"id": None, "reading": "x"}] + prof["studies"]
    o = offline(rs, page=prof)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))


# ---------------------------------------------------------------- json: the reading's fields

NONFINITE = [r("NaN"), r("Infinity"), r("-Infinity")]
HUGE = [r("1e400"), r("-1e400"), r(HUGE_INT)]
KINDS = {
    "count": [r('"24"'), r("null"), r("true"), r("[]"), r("{}"), r("-1"), r("1.5")] + HUGE,
    "figure": [2.2, r("null"), r("true"), r("[]"), r("{}"), "", "abc", "2.2.2", " 2.200", "+2.200", "2.200e0",
               "NaN", "Infinity", "2,200", "\uff12.200"] + HUGE,
    "interval": [r("null"), "x", r("1"), r("[]"), r('["1.0"]'), r('["1.0", "2.0", "3.0"]'), r("[1.0, 2.0]"),
                 r("[null, null]"), r('["a", "b"]'), r("{}"), r("[[], {}]"), r('["1e400", "-1e400"]')],
    "verdict": [r("1"), r("null"), r("true"), "Better", "", "maybe", r("[]"), r("{}")],
    "object": [r('"x"'), r("[]"), r("1"), r("null"), r("true")],
    "list": [r('"x"'), r("{}"), r("1"), r("null"), r("true")],
    "key": [r('"1"'), r("1e400"), r("-1e400"), r(HUGE_INT), r("[1]"), r("{}"), r("true"), r("null"), r("1.5"),
            r("-1"), r("99")],
    "model_key": [r("1"), r("1e400"), r(HUGE_INT), r("[]"), r("{}"), r("true"), r("null"), "MODEL-A", ""],
    "range": [r("null"), r('"0-100"'), r("[0]"), r("[0, 100, 1]"), r("[100, 0]"), r('["0", "100"]'),
              r("[0, 1e400]"), r("[true, 100]"), r("{}"), r("[0, 50]")],
    "direction": ["lower", "Higher", r("1"), r("null"), r("[]"), ""],
    "rule": ["anytime", "Fixed", r("null"), r("1"), r("[]")],
    "level": [r("0.95"), "0.9", "0.950001", r("null"), "NaN", "sNaN", "Infinity", r("1e400"), "95%", "",
              "0.9_5", "\u0660.\u0669\u0665"],
    "text": [r("1"), r("null"), r("[]"), "Fitness_Index", ""],
    "withheld": [r("false"), r("0"), "", r("[]"), "owner_stop"],
}
C0 = READING + ("comparisons", 0)
A0 = READING + ("arms", 0)
M0 = READING + ("models", 0)
READING_SPECS = [
    (READING + ("counts",), "object", ["counts"]),
    (READING + ("counts", "noValue"), "object", ["noValue"]),
    (READING + ("counts", "noValue", "seat_failed"), "count", ["noValue"]),
    (READING + ("counts", "noValue", "failed"), [1, r('"1"'), r("true")], ["noValue"]),
    (READING + ("comparisons",), "list", ["comparisons"]),
    (C0, "object", ["comparison"]),
    (C0 + ("arm",), "key", ["comparison"]),
    (C0 + ("n",), "count", ["n"]),
    (C0 + ("maps",), "count", ["maps"]),
    (C0 + ("mean",), "figure", ["mean"]),
    (C0 + ("p",), "figure", ["p"]),
    (C0 + ("interval",), "interval", ["interval"]),
    (C0 + ("mapInterval",), "interval", ["map interval"]),
    (C0 + ("bootstrap",), "interval", ["bootstrap"]),
    (C0 + ("verdict",), "verdict", ["verdict"]),
    (C0 + ("withheld",), "withheld", ["withheld"]),
    (READING + ("arms",), "list", ["arm"]),
    (A0, "object", ["arm"]),
    (A0 + ("arm",), "key", ["arm"]),
    (A0 + ("n",), "count", ["n"]),
    (A0 + ("mean",), "figure", ["mean"]),
    (A0 + ("interval",), "interval", ["interval"]),
    (READING + ("models",), "list", ["model"]),
    (M0, "object", ["model"]),
    (M0 + ("model",), "model_key", ["model"]),
    (M0 + ("seats",), "count", ["seats"]),
    (M0 + ("trials",), "count", ["trials"]),
    (M0 + ("mean",), "figure", ["mean"]),
    (M0 + ("interval",), "interval", ["interval"]),
    (READING + ("range",), "range", ["range"]),
    (READING + ("direction",), "direction", ["direction"]),
    (READING + ("stoppingRule",), "rule", ["stoppingRule"]),
    (READING + ("comparisonLevel",), "level", ["comparisonLevel"]),
    (READING + ("metric",), "text", ["metric"]),
    (READING + ("rubric",), "text", ["rubric"]),
]
for _key in ("trials", "rows", "valued", "seats", "pairsIn", "pairsOut"):
    READING_SPECS.append((READING + ("counts", _key), "count", [_key]))
for _key in ("n", "mean", "interval", "mapInterval", "maps", "p", "bootstrap", "verdict", "arm"):
    READING_SPECS.append((C0 + (_key,), [DELETE], [_key]))
for _path in (A0, M0, C0):
    # one entry more than the files have: an arm, model or comparison not in the files
    READING_SPECS.append((_path[:-1] + (len(walk(profile(KIM), _path[:-1])),),
                          [r('{"arm": 7, "model": "model-z", "n": 3, "seats": 3}')], ["not in the files"]))


def reading_cases():
    """Every value of a kind at its first field; every fourth at the others (arm and model keys: all)."""
    cases, seen = [], set()
    for path, kind, names in READING_SPECS:
        values = KINDS[kind] if isinstance(kind, str) else kind
        if isinstance(kind, str) and kind in seen and kind not in ("key", "model_key"):
            values = values[::4]
        if isinstance(kind, str):
            seen.add(kind)
        for value in values:
            cases.append((path, value, names))
    return cases


READING_CASES = collections.OrderedDict()
for _path, _value, _names in reading_cases():
    READING_CASES.setdefault((_path, tuple(_names)), []).append(_value)


@pytest.mark.parametrize("path,names", list(READING_CASES),
                         ids=["%s(%d)" % (label(k[0][2:]), i) for i, k in enumerate(READING_CASES)])
def test_json_reading_field_of_a_wrong_type_flagged(rs, path, names):
    """A figure, count or term of the wrong type or value: a DIFFERS or FAILS
    (exit 1), or a refusal naming the field; never exit 0, never the guard.
    Each value for the field in turn."""
    failures = []
    for value in READING_CASES[(path, names)]:
        tally("json")
        prof = profile(KIM)
        splices = mutate(prof, path, value)
        o = offline(rs, page=dumps(prof, splices))
        problems = flagged_problems(o, ("profile", "card"), [tuple(names)])
        if problems:
            failures.append((shown(value), problems))
    assert not failures, (label(path), failures)


@pytest.mark.parametrize("path", [C0 + ("n",), C0 + ("mean",), READING + ("counts", "trials"), A0 + ("mean",),
                                  READING + ("comparisonLevel",), READING + ("range", 1)],
                         ids=lambda p: label(p[2:]))
def test_json_non_finite_constant_refused(rs, path):
    """NaN, Infinity and -Infinity in turn: refused naming the field or its place in the text."""
    failures = []
    for constant in ("NaN", "Infinity", "-Infinity"):
        tally("json")
        prof = profile(KIM)
        splices = mutate(prof, path, r(constant))
        o = offline(rs, page=dumps(prof, splices))
        problems = refusal_problems(o, "profile", [(POSITION, path[-1] if isinstance(path[-1], str) else "range")])
        if problems:
            failures.append((constant, problems))
    assert not failures, failures


FIGURE_SIZE = [
    (C0 + ("mean",), "1" * 5000), (C0 + ("mean",), "2." + "0" * 400), (C0 + ("mean",), "2." + "0" * 5000),
    (C0 + ("p",), "0." + "1" * 400), (C0 + ("interval", 0), "-" + "1" * 5000),
    (A0 + ("mean",), "54." + "8" * 400), (M0 + ("interval", 1), "9" * 5000),
]


@pytest.mark.parametrize("path,value", FIGURE_SIZE, ids=["%s=%s(%d chars)" % (label(p[2:]), v[:4], len(v))
                                                         for p, v in FIGURE_SIZE])
def test_json_figure_of_absurd_length_flagged(rs, path, value):
    """A page figure of decimal digits, hundreds or thousands of them: DIFFERS or refused by name."""
    tally("json")
    prof = profile(KIM)
    mutate(prof, path, value)
    o = offline(rs, page=prof)
    names = [tuple(k for k in path if isinstance(k, str))[-1:]]
    problems = flagged_problems(o, ("profile", "card"), names)
    assert not problems, problems


# ---------------------------------------------------------------- json: the recipe

ANA_CARD = ("studies", card_index(profile(ANA), ANA))


def ana_recipe_text(rho):
    return '{"id": "r_2d6680de", "stoppingRule": "anytime", "anytime": {"rho": %s}}' % rho


RECIPE_REFUSED = [
    ("truncated", lambda: dumps(recipe(ANA))[:20], ["recipe", POSITION]),
    ("empty", lambda: "", ["recipe"]),
    ("a list", lambda: "[]", ["recipe"]),
    ("null", lambda: "null", ["recipe"]),
    ("id missing", lambda: {"anytime": {"rho": 0.137}}, ["recipe"]),
    ("id of another recipe", lambda: dict(recipe(ANA), id="r_00000000"), ["recipe"]),
    ("anytime missing", lambda: {"id": "r_2d6680de"}, ["rho"]),
    ("anytime null", lambda: {"id": "r_2d6680de", "anytime": None}, ["rho"]),
    ("anytime a number", lambda: {"id": "r_2d6680de", "anytime": 0.137}, ["rho"]),
    ("anytime a list", lambda: {"id": "r_2d6680de", "anytime": [0.137]}, ["rho"]),
    ("rho missing", lambda: {"id": "r_2d6680de", "anytime": {}}, ["rho"]),
]
for _rho in ['"0.137"', "true", "false", "null", "[]", "{}", "[0.137]", "0", "-0", "-0.0", "-0.137", "-1e400",
             "1e-400", "1e400", HUGE_INT, "-" + HUGE_INT]:
    RECIPE_REFUSED.append(("rho " + _rho[:12], (lambda v: lambda: ana_recipe_text(v))(_rho), ["rho"]))
for _rho in ["NaN", "Infinity", "-Infinity"]:
    RECIPE_REFUSED.append(("rho " + _rho, (lambda v: lambda: ana_recipe_text(v))(_rho), [("rho", POSITION)]))


@pytest.mark.parametrize("name,make,names", RECIPE_REFUSED, ids=[c[0] for c in RECIPE_REFUSED])
def test_json_recipe_without_a_usable_rho_refused(rs, name, make, names):
    tally("json")
    o = offline(rs, ANA, recipe_=make())
    problems = refusal_problems(o, "recipe", names)
    assert not problems, problems


@pytest.mark.parametrize("rho", ["5e-324", "1e-200", "1e-160", "1e300", "1e308", "9007199254740993", "1e20"])
def test_json_recipe_rho_positive_but_extreme_flagged(rs, rho):
    """A positive, finite rho of extreme size: the intervals differ (exit 1) or
    it is refused by name; never the last-resort guard."""
    tally("json")
    o = offline(rs, ANA, recipe_=ana_recipe_text(rho))
    problems = flagged_problems(o, "recipe", ["rho"])
    assert not problems, problems


CARD_RECIPE_BAD = [DELETE, None, 1, "", "../r_2d6680de", "r_2d6680de/../x", "r_2d6680de.json", "r 2d6680de",
                   "x" * 65, ["r_2d6680de"], "r_2d6680de\n"]


@pytest.mark.parametrize("value", CARD_RECIPE_BAD, ids=lambda v: shown(v)[:30])
def test_json_card_naming_no_usable_recipe_refused(rs, value):
    """Under the anytime rule the card's recipe names the recipe file: a bad one is refused, not read."""
    tally("json")
    prof = profile(ANA)
    mutate(prof, ANA_CARD + ("recipe",), value)
    o = offline(rs, ANA, page=prof)
    problems = refusal_problems(o, ("card", "profile"), ["recipe"])
    assert not problems, problems


# ---------------------------------------------------------------- fuzz

FUZZ = settings(max_examples=80, derandomize=True, deadline=None, database=None, print_blob=False,
                phases=(Phase.explicit, Phase.generate),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CELL_SPECIALS = ["", " ", "-0", "-1", "0", "1e3", "NaN", "inf", "true", "false", "in", "out", "fixed", "anytime",
                 "0.95", "1.0001", "99999999999999999999", "-99999999999999999999", "\x00", "\r", "\n", "\r\n",
                 '"', ",", "\ufeff", "\u202e", CANARY, "s_eee65f53", "100.0", "0.000", "-0.000"]
cell_text = st.one_of(
    st.sampled_from(CELL_SPECIALS),
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12),
    st.text(alphabet="0123456789.-+e, \"\n", max_size=10),
    st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{1,3})?", fullmatch=True),
)


def fuzz_csv(rs, study, file, rows):
    tally("fuzz")
    o = offline(rs, study, **{file.split(".")[0]: rows})
    problems = contract_problems(o)
    if o.code == 2 and not problems and file not in o.err:
        # a change to one file is refused by that file's name (or by a check it feeds)
        problems = [] if re.search(r"\b(card|profile|recipe)\b", o.err) else ["stderr does not name %s" % file]
    return problems


@FUZZ
@given(data=st.data())
def test_fuzz_csv_cell_replaced(rs, data):
    study = data.draw(st.sampled_from([KIM, ANA]), "study")
    file = data.draw(st.sampled_from(["trials.csv", "seats.csv"]), "file")
    rows = csv_rows(study, file)
    row = data.draw(st.integers(1, len(rows) - 1), "row")
    col = data.draw(st.integers(0, len(rows[0]) - 1), "column")
    rows[row][col] = data.draw(cell_text, "text")
    problems = fuzz_csv(rs, study, file, rows)
    assert not problems, (file, row, rows[0][col], rows[row][col], problems)


@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_fuzz_csv_rows_dropped_duplicated_swapped(rs, data):
    study = data.draw(st.sampled_from([KIM, ANA]), "study")
    file = data.draw(st.sampled_from(["trials.csv", "seats.csv"]), "file")
    rows = csv_rows(study, file)
    op = data.draw(st.sampled_from(["drop", "duplicate", "swap", "move", "drop column"]), "op")
    i = data.draw(st.integers(1, len(rows) - 1), "row")
    j = data.draw(st.integers(1, len(rows) - 1), "other row")
    if op == "drop":
        del rows[i]
    elif op == "duplicate":
        rows.insert(j, list(rows[i]))
    elif op == "swap":
        rows[i], rows[j] = rows[j], rows[i]
    elif op == "move":
        rows.insert(j, rows.pop(i))
    else:
        col = data.draw(st.integers(0, len(rows[0]) - 1), "column")
        for row in rows[i:i + 1]:
            del row[col]
    problems = fuzz_csv(rs, study, file, rows)
    assert not problems, (file, op, i, j, problems)


@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_fuzz_csv_bytes_cut_or_inserted(rs, data):
    study = KIM
    file = data.draw(st.sampled_from(["trials.csv", "seats.csv"]), "file")
    body = csv_bytes(study, file)
    at = data.draw(st.integers(0, len(body)), "offset")
    op = data.draw(st.sampled_from(["cut", "insert", "overwrite"]), "op")
    junk = data.draw(st.binary(min_size=1, max_size=6), "bytes")
    if op == "cut":
        body = body[:at]
    elif op == "insert":
        body = body[:at] + junk + body[at:]
    else:
        body = body[:at] + junk + body[at + len(junk):]
    problems = fuzz_csv(rs, study, file, body)
    assert not problems, (file, op, at, junk, problems)


def all_paths(obj, prefix=()):
    paths = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            paths += all_paths(value, prefix + (key,))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            paths += all_paths(value, prefix + (i,))
    return paths


def kind_of(value):
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 6, 10 ** 6),
                       st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_kinds = {
    "null": st.none(), "bool": st.booleans(),
    "number": st.one_of(st.integers(-10 ** 6, 10 ** 6), st.floats(allow_nan=False, allow_infinity=False)),
    "string": st.one_of(st.text(max_size=8), st.sampled_from(["0.95", "2.200", "-0.000", "inconclusive",
                                                                "higher", "fixed", "model-a"])),
    "list": st.lists(_json_leaf, max_size=3),
    "object": st.dictionaries(st.text(max_size=5), _json_leaf, max_size=3),
}
JSON_SPECIALS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", HUGE_INT, "-0.0", "0", "-1", "1.5",
                 "4294967297", '"' + "9" * 500 + '"', '"1.' + "0" * 400 + '"']


@st.composite
def json_mutation(draw, paths, original):
    path = draw(st.sampled_from(paths))
    value = walk(original, path)
    op = draw(st.sampled_from(["replace", "replace", "delete", "special"]))
    if op == "delete" and path and isinstance(path[-1], str):
        return path, DELETE
    if op == "special":
        return path, r(draw(st.sampled_from(JSON_SPECIALS)))
    other = draw(st.sampled_from(sorted(set(_kinds) - {kind_of(value)})))
    return path, draw(_kinds[other])


KIM_CARD_PATHS = [p for p in all_paths(profile(KIM)) if p[:2] == CARD and len(p) > 2]
ANA_CARD_PATHS = [p for p in all_paths(profile(ANA)) if p[:2] == ANA_CARD and len(p) > 2]
ANA_RECIPE_PATHS = [p for p in all_paths(recipe(ANA)) if p]


def fuzz_json(rs, study, target, change):
    tally("fuzz")
    path, value = change
    obj = profile(study) if target == "page" else recipe(study)
    splices = mutate(obj, path, value)
    o = offline(rs, study, **{target: dumps(obj, splices)})
    problems = contract_problems(o, ("profile", "card", "recipe"))
    assert not problems, (label(path), shown(value), problems)


@settings(FUZZ, max_examples=80)
@given(change=json_mutation(KIM_CARD_PATHS, profile(KIM)))
def test_fuzz_json_card_fixed_rule(rs, change):
    fuzz_json(rs, KIM, "page", change)


@settings(FUZZ, max_examples=50)
@given(change=json_mutation(ANA_CARD_PATHS, profile(ANA)))
def test_fuzz_json_card_anytime_rule(rs, change):
    fuzz_json(rs, ANA, "page", change)


@settings(FUZZ, max_examples=30)
@given(change=json_mutation(ANA_RECIPE_PATHS, recipe(ANA)))
def test_fuzz_json_recipe(rs, change):
    fuzz_json(rs, ANA, "recipe_", change)


# ---------------------------------------------------------------- network

TRIALS = "/u/kim/studies/s_eee65f53/trials.csv"
SEATS = "/u/kim/studies/s_eee65f53/seats.csv"
PROFILE = "/u/kim.json"
ANA_RECIPE = "/u/ana-lab/recipes/r_2d6680de.json"


def online(rn, platform, study=KIM, options=()):
    return run_main(rn, [address(study, platform.url)] + list(options))


def requests_for(platform, path):
    return [q for q in platform.requests if q.split("?")[0] == path]


@pytest.mark.parametrize("study", [KIM, ANA], ids=["fixed", "anytime"])
def test_net_served_study_reads_clean(serving, fast, study):
    tally("network")
    with serving() as p:
        o = online(fast, p, study)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))


@pytest.mark.parametrize("study_id", ["s_e4086cfe", "s_3784a222", "s_00000000"],
                         ids=["no files served", "a run set", "no such study"])
def test_net_404_on_the_csv_refused(serving, fast, study_id):
    tally("network")
    with serving() as p:
        o = run_main(fast, ["%s/u/kim/studies/%s" % (p.url, study_id)])
    problems = refusal_problems(o, "trials.csv", ["404"])
    assert not problems, problems


@pytest.mark.parametrize("path,file", [(SEATS, "seats.csv"), (PROFILE, ("profile", PROFILE))])
def test_net_404_on_another_file_refused(serving, fast, path, file):
    tally("network")
    with serving(faults={path: answer(404, '{"reason": "not found"}')}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, file, ["404"])
    assert not problems, problems


def test_net_404_on_the_recipe_refused(serving, fast):
    tally("network")
    with serving(faults={ANA_RECIPE: answer(404, '{"reason": "not found"}')}) as p:
        o = online(fast, p, ANA)
    problems = refusal_problems(o, ("recipe", ANA_RECIPE), ["404"])
    assert not problems, problems


def test_net_409_prints_the_reason(fast, tmp_path):
    tally("network")
    root = tmp_path / "platform"
    study = root / "u" / "kim" / "studies" / "s_eee65f53"
    study.mkdir(parents=True)
    (study / "playing.json").write_text(json.dumps({"reason": "The study is still playing: trial 7 of 24."}))
    with Platform(root, FIXTURES) as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv", ["409", "The study is still playing: trial 7 of 24."])
    assert not problems, problems


@pytest.mark.parametrize("body", ["", "not json", "[1, 2]", '{"reason": 5}', '{"reason": null}'],
                         ids=["empty", "not JSON", "a list", "reason a number", "reason null"])
def test_net_409_without_a_usable_reason_refused(serving, fast, body):
    tally("network")
    with serving(faults={TRIALS: answer(409, body)}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv", ["409"])
    assert not problems, problems


@pytest.mark.parametrize("status", [409, 500, 403])
@pytest.mark.parametrize("reason", ["line one\nline two", "carriage\rreturn", "x" * 5000, "tab\tand\x1b[2Jescape",
                                    "u2028\u2028separated"],
                         ids=["newline", "carriage return", "5000 chars", "escape", "line separator"])
def test_net_reason_of_any_text_stays_one_line(serving, fast, status, reason):
    tally("network")
    with serving(faults={TRIALS: answer(status, json.dumps({"reason": reason}))}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv", [str(status)])
    if reason.startswith("u2028") and not problems:
        # U+2028 ends a line for str.splitlines(): escaped or not, the refusal stays one line there too
        problems = [] if len(o.err.rstrip("\n").splitlines()) == 1 else ["U+2028 splits the refusal"]
    assert not problems, problems


def test_net_500_then_200_succeeds(serving, fast):
    """The script documents one retry of a server error."""
    tally("network")
    fault = in_turn(answer(500, '{"reason": "busy"}'), serve_bytes(csv_bytes(KIM, "trials.csv")))
    with serving(faults={TRIALS: fault}) as p:
        o = online(fast, p)
        asked = requests_for(p, TRIALS)
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert len(asked) == 2


@pytest.mark.parametrize("status", [500, 502, 503])
def test_net_5xx_twice_refused(serving, fast, status):
    tally("network")
    with serving(faults={TRIALS: answer(status, '{"reason": "down"}')}) as p:
        o = online(fast, p)
        asked = requests_for(p, TRIALS)
    problems = refusal_problems(o, "trials.csv", [str(status)])
    assert not problems, problems
    assert len(asked) == 2


@pytest.mark.parametrize("path,file", [(SEATS, "seats.csv"), (PROFILE, ("profile", PROFILE))])
def test_net_other_file_500_twice_refused(serving, fast, path, file):
    tally("network")
    with serving(faults={path: answer(500, "")}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, file, ["500"])
    assert not problems, problems


def _trials_bytes():
    return csv_bytes(KIM, "trials.csv")


def _row_boundary(body, n):
    """The offset just after the n-th line end."""
    at = 0
    for _ in range(n):
        at = body.index(b"\r\n", at) + 2
    return at


@pytest.mark.parametrize("when", ["before the headers", "mid-body", "in an error body"])
def test_net_stall_ends_within_a_bound(serving, fast, stop, when):
    tally("network")
    body = _trials_bytes()
    before = {"before the headers": b"",
              "mid-body": b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2],
              "in an error body": b'HTTP/1.1 409 Conflict\r\nContent-Length: 100\r\n\r\n{"reason": "pla'}[when]
    with serving(faults={TRIALS: stall(stop, 8, before)}) as p:
        t0 = time.monotonic()
        o = online(fast, p)
        elapsed = time.monotonic() - t0
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems
    assert elapsed < 3 * float(os.environ["DAISHI_TIMEOUT"]) + 1, elapsed


def test_net_slow_drip_ends_within_a_bound(serving, fast, stop, monkeypatch):
    """A byte every 0.3 s never trips a per-read timeout of 0.5 s: the answer
    must still end within a bound of the timeout, not after the last byte (3.6 s)."""
    tally("network")
    monkeypatch.setenv("DAISHI_TIMEOUT", "0.5")
    body = _trials_bytes()[:12]
    with serving(faults={TRIALS: drip(stop, body, 0.3)}) as p:
        t0 = time.monotonic()
        o = online(fast, p)
        elapsed = time.monotonic() - t0
    stop.set()
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems
    assert elapsed < 3 * float(os.environ["DAISHI_TIMEOUT"]) + 1, elapsed


def _head(length):
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n" % length


BROKEN_ANSWERS = [
    ("reset mid-body", lambda b: raw(_head(len(b)) + b[:len(b) // 2], linger_reset=True)),
    ("closed mid-body, mid-row", lambda b: raw(_head(len(b)) + b[:len(b) // 2 + 7])),
    ("closed short of Content-Length at a row boundary", lambda b: raw(_head(len(b)) + b[:_row_boundary(b, 20)])),
    ("closed short of Content-Length after the whole file", lambda b: raw(_head(len(b) + 4096) + b)),
    ("chunked, cut mid-chunk", lambda b: raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                             b"%x\r\n" % len(b) + b[:100])),
    ("chunked, cut at a chunk boundary", lambda b: raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                                       b"%x\r\n" % _row_boundary(b, 20) + b[:_row_boundary(b, 20)]
                                                       + b"\r\n")),
    ("chunked, bad chunk size",
     lambda b: raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")),
    ("close before answering", lambda b: raw(b"")),
    ("reset before answering", lambda b: raw(b"", linger_reset=True)),
    ("not HTTP", lambda b: raw(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")),
    ("bad status line", lambda b: raw(b"HTTP/1.1 OK\r\n\r\n")),
    ("status 999", lambda b: raw(b"HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\n{}")),
    ("101 headers", lambda b: raw(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(101))
                                  + b"Content-Length: 2\r\n\r\n{}")),
    ("header line too long", lambda b: raw(b"HTTP/1.1 200 OK\r\nX-Long: " + b"v" * 70000 + b"\r\n\r\n{}")),
    ("HTML page", lambda b: answer(200, "<!doctype html><html><body><h1>Welcome</h1></body></html>", "text/html")),
    ("HTML page, uppercase, after blank lines", lambda b: answer(200, "\r\n\r\n<HTML><BODY>Sign in</BODY></HTML>",
                                                                  "text/html")),
    ("JSON instead of CSV", lambda b: answer(200, '{"reason": "moved"}')),
    ("204 no content", lambda b: raw(b"HTTP/1.1 204 No Content\r\n\r\n")),
    ("418 with a JSON list", lambda b: answer(418, "[1, 2]")),
    ("gzip body", lambda b: raw(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\n\x1f\x8b\x08\x00")),
]


@pytest.mark.parametrize("name,make", BROKEN_ANSWERS, ids=[b[0] for b in BROKEN_ANSWERS])
def test_net_broken_answer_refused(serving, fast, name, make):
    """A broken answer to trials.csv: refused (exit 2) naming trials.csv, not read as a short file."""
    tally("network")
    with serving(faults={TRIALS: make(_trials_bytes())}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems


def test_net_html_profile_refused(serving, fast):
    tally("network")
    with serving(faults={PROFILE: answer(200, "<html><body>Sign in</body></html>", "text/html")}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, ("profile", PROFILE))
    assert not problems, problems


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_net_redirect_to_another_server_refused(serving, fast, code):
    tally("network")
    with Platform(FIXTURES) as other:
        to_other = redirect(code, lambda h: other.url + h.path)
        with serving(faults={TRIALS: to_other}) as p:
            o = online(fast, p)
        assert other.requests == []
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems


@pytest.mark.parametrize("where", ["http://localhost:{port}{path}", "http://127.0.0.1:{port}@evil.invalid{path}",
                                   "//127.0.0.2:{port}{path}", "https://127.0.0.1:{port}{path}",
                                   "file:///etc/passwd", "ftp://127.0.0.1:{port}/x"])
def test_net_redirect_elsewhere_never_followed(serving, fast, where):
    tally("network")
    with serving() as p:
        port = p.url.rsplit(":", 1)[1]
        p.faults[TRIALS] = redirect(302, lambda h: where.format(port=port, path="/mirror" + h.path))
        o = online(fast, p)
        followed = [q for q in p.requests if q.startswith("/mirror")]
    assert followed == []
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems


@pytest.mark.parametrize("form", ["relative", "absolute"])
def test_net_redirect_within_the_server_followed(serving, fast, form):
    tally("network")
    with serving() as p:
        prefix = "" if form == "relative" else p.url
        p.faults[TRIALS] = redirect(302, lambda h: prefix + "/mirror" + h.path)
        p.faults["/mirror" + TRIALS] = serve_bytes(_trials_bytes())
        o = online(fast, p)
        followed = [q for q in p.requests if q.startswith("/mirror")]
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert followed == ["/mirror" + TRIALS]


def test_net_redirect_loop_refused(serving, fast):
    tally("network")
    with serving() as p:
        p.faults[TRIALS] = redirect(302, lambda h: h.path)
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv")
    assert not problems, problems


def test_net_response_larger_than_the_cap_refused(serving, fast, monkeypatch):
    tally("network")
    monkeypatch.setattr(fast, "MAX_BYTES", 4096)
    with serving() as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv", ["4096"])
    assert not problems, problems


def test_net_response_larger_than_the_cap_without_a_length_refused(serving, fast, monkeypatch):
    tally("network")
    monkeypatch.setattr(fast, "MAX_BYTES", 4096)
    body = _trials_bytes()
    with serving(faults={TRIALS: raw(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body)}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv", ["4096"])
    assert not problems, problems


def test_net_endless_body_stops_at_the_cap(serving, fast, monkeypatch, stop):
    tally("network")
    monkeypatch.setattr(fast, "MAX_BYTES", 1 << 20)
    with serving(faults={TRIALS: endless(stop)}) as p:
        t0 = time.monotonic()
        o = online(fast, p)
        elapsed = time.monotonic() - t0
    problems = refusal_problems(o, "trials.csv", [str(1 << 20)])
    assert not problems, problems
    assert elapsed < 3 * float(os.environ["DAISHI_TIMEOUT"]) + 1, elapsed


def test_net_error_body_larger_than_the_cap_refused(serving, fast, monkeypatch, stop):
    """A 500 (and its retry) whose body never ends: refused once the cap is read."""
    tally("network")
    monkeypatch.setattr(fast, "MAX_BYTES", 1 << 20)

    def fn(h):
        h.close_connection = True
        try:
            h.wfile.write(b"HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\n")
            while not stop.is_set():
                h.wfile.write(b" " * 65536)
        except OSError:
            pass
    with serving(faults={TRIALS: fn}) as p:
        o = online(fast, p)
    problems = refusal_problems(o, "trials.csv", ["500"])
    assert not problems, problems


@pytest.mark.parametrize("file,cap", [("trials", 4096), ("seats", 20000), ("page", 50000)])
def test_net_saved_copy_larger_than_the_cap_refused(rs, monkeypatch, file, cap):
    """Each saved copy over the cap (the files before it under it): refused by name."""
    tally("network")
    monkeypatch.setattr(rs, "MAX_BYTES", cap)
    o = offline(rs, **({} if file != "page" else {file: "[" + " " * 60000 + "]"}))
    problems = refusal_problems(o, {"trials": "trials.csv", "seats": "seats.csv", "page": "profile"}[file], [str(cap)])
    assert not problems, problems


# ---------------------------------------------------------------- safety

BAD_ADDRESSES = [
    "{o}/u/KIM/studies/s_eee65f53", "{o}/u/kim/studies/s_EEE65F53", "{o}/u/kim/studies/S_eee65f53",
    "{o}/u/kim/studies/s_eee65f5", "{o}/u/kim/studies/s_eee65f533", "{o}/u/kim/studies/s_eee65f5g",
    "{o}/u/kim/studies/", "{o}/u//studies/s_eee65f53", "{o}/u/" + "k" * 33 + "/studies/s_eee65f53",
    "{o}/u/k.m/studies/s_eee65f53", "{o}/u/kim/studies/../studies/s_eee65f53", "{o}/u/../u/kim/studies/s_eee65f53",
    "{o}/u/kim/studies/s_eee65f53/..", "{o}/u/%2e%2e/kim/studies/s_eee65f53", "{o}/u/kim%2fstudies/studies/s_eee65f53",
    "{o}/u/kim/studies/s_eee65f53%2f..%2f..", "{o}/u/kim/studies/s_eee65f53%00", "{o}/u/kim/studies/s_eee65f53 ?x",
    "{o}/u/kim/studies/s_eee65f53//", "{o}/u/kim/studies/s_eee65f53/x?y",
    "{o}/u/kim/studies/s_eee65f53/trials.csv",
    "{o}/./u/kim/studies/s_eee65f53", "{o}//u/kim/studies/s_eee65f53", "{o}/u/kim//studies/s_eee65f53",
    "{o}/u/kim/studies/s_eee65f53;x", "{o}\\u\\kim\\studies\\s_eee65f53",
    "{o}/u/ki\nm/studies/s_eee65f53",
    "{o}/u/kim/stud\ries/s_eee65f53", "{o}/u/kim/studies/s_eee\t65f53", "\x00{o}/u/kim/studies/s_eee65f53",
    "{o}/u/k\u00efm/studies/s_eee65f53", "{o}/u/\uff4bim/studies/s_eee65f53", "{o}/u/\u043aim/studies/s_eee65f53",
    "{o}/u/kim/studies/s_\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667",
    "{o}/u/kim/studies/s_eee65f53\u200b", "{o}/u/kim\u2028/studies/s_eee65f53",
    "ftp://{h}/u/kim/studies/s_eee65f53", "file:///u/kim/studies/s_eee65f53", "{h}/u/kim/studies/s_eee65f53",
    "//{h}/u/kim/studies/s_eee65f53", "u/kim/studies/s_eee65f53", "kim/s_eee65f53", "s_eee65f53", "",
    "http://127.0.0.1:0/u/kim/studies/s_eee65f53", "http://127.0.0.1:99999/u/kim/studies/s_eee65f53",
    "http://127.0.0.1:x/u/kim/studies/s_eee65f53",
]


def bad_address(template, platform):
    return template.format(o=platform.url, h=platform.url.split("://", 1)[1])


PASTED_ADDRESSES = [   # what people paste: read as the study's address
    "{o}/u/kim/studies/s_eee65f53?x=1", "{o}/u/kim/studies/s_eee65f53?", "{o}/u/kim/studies/s_eee65f53#x",
    "{o}/u/kim/studies/s_eee65f53#", "{o}/u/kim/studies/s_eee65f53/", "{o}/u/kim/studies/s_eee65f53/?format=md",
    "{o}/u/kim/studies/s_eee65f53\n", "{o}/u/kim/studies/s_eee65f53\r\n", " {o}/u/kim/studies/s_eee65f53",
    "{o}/u/kim/studies/s_eee65f53 ", "\t{o}/u/kim/studies/s_eee65f53/#anchor\n",
]


@pytest.mark.parametrize("template", PASTED_ADDRESSES, ids=lambda t: repr(t)[:50])
def test_safety_pasted_address_reads_the_study(fast, shared_platform, template):
    tally("safety")
    p = shared_platform
    del p.requests[:]
    o = run_main(fast, [bad_address(template, p), "--json"])
    assert not reading_problems(o, (0,)), reading_problems(o, (0,))
    assert json.loads(o.out)["address"] == p.url + "/u/kim/studies/s_eee65f53"
    assert p.requests == ["/u/kim/studies/s_eee65f53/trials.csv", "/u/kim/studies/s_eee65f53/seats.csv",
                          "/u/kim.json"]


@pytest.mark.parametrize("template", BAD_ADDRESSES, ids=lambda t: repr(t)[:50])
def test_safety_bad_address_never_reaches_a_request(fast, shared_platform, tmp_path, monkeypatch, template):
    tally("safety")
    monkeypatch.chdir(tmp_path)
    p = shared_platform
    del p.requests[:]
    addr = bad_address(template, p)
    o = run_main(fast, [addr, "--save", str(tmp_path / "save")])
    assert p.requests == [], (addr, p.requests, o.code)
    problems = refusal_problems(o, None, ["address"])
    assert not problems, (addr, problems)
    assert tree(tmp_path) == set()


def test_safety_bad_address_with_saved_copies_refused(rs):
    """Even with every file given as a saved copy, the address must be of the form."""
    tally("safety")
    o = offline(rs)
    assert o.code == 0
    o = run_offline(rs, KIM, addr="https://daishi.ai/u/kim/studies/s_eee65f53;x=1")
    problems = refusal_problems(o, None, ["address"])
    assert not problems, problems


def hostile_root(tmp_path, study, trials=None, seats=None, prof=None, rec=None):
    from pathlib import Path
    root = Path(tmp_path) / "platform"
    d = root / "u" / study.handle / "studies" / study.id
    d.mkdir(parents=True)
    (d / "trials.csv").write_bytes(trials if trials is not None else csv_bytes(study, "trials.csv"))
    (d / "seats.csv").write_bytes(seats if seats is not None else csv_bytes(study, "seats.csv"))
    (root / "u" / (study.handle + ".json")).write_text(dumps(prof if prof is not None else profile(study)))
    if study.recipe:
        (root / "u" / study.handle / "recipes").mkdir()
        rec_name = (prof or profile(study))["studies"][card_index(prof or profile(study), study)].get("recipe")
        if isinstance(rec_name, str) and re.fullmatch(r"[A-Za-z0-9_-]+", rec_name):
            (root / "u" / study.handle / "recipes" / (rec_name + ".json")).write_text(
                dumps(rec if rec is not None else recipe(study)))
    return root


def path_named_trials(**cells):
    rows = csv_rows(KIM, "trials.csv")
    for column, value in cells.items():
        rows = set_cells(rows, column, value)
    return write_rows(rows).encode("utf-8")


def path_named_profile(study):
    prof = profile(study)
    prof["handle"] = "../../../evil"
    card = prof["studies"][card_index(prof, study)]
    card["title"] = "../../evil.json"
    card["address"] = "https://daishi.ai/u/../../evil"
    return prof


SAVE_RECORDS = [
    ("clean, fixed rule", 0, KIM, lambda: {}, {"trials.csv", "seats.csv", "profile.json", "saved.json"}),
    ("clean, anytime rule", 0, ANA, lambda: {}, {"trials.csv", "seats.csv", "profile.json", "recipe.json", "saved.json"}),
    ("rows naming paths", 1, KIM, lambda: {"trials": path_named_trials(study="../../../evil",
                                                                         arm_label="../../../evil.csv")},
     {"trials.csv", "seats.csv", "profile.json", "saved.json"}),
    ("a match naming a path", 2, KIM, lambda: {"trials": path_named_trials(match="/tmp/evil")}, {"trials.csv"}),
    ("profile naming paths", 0, KIM, lambda: {"prof": path_named_profile(KIM)},
     {"trials.csv", "seats.csv", "profile.json", "saved.json"}),
    ("recipe id a path", 2, ANA, lambda: {"prof": dict(profile(ANA), studies=[
        dict(c, recipe="../../../../evil") if c["id"] == ANA.id else c for c in profile(ANA)["studies"]])},
     {"trials.csv", "seats.csv", "profile.json"}),
    ("recipe naming a path", 0, ANA, lambda: {"rec": dict(recipe(ANA), file="../../evil.json")},
     {"trials.csv", "seats.csv", "profile.json", "recipe.json", "saved.json"}),
]


@pytest.mark.parametrize("name,code,study,make,allowed", SAVE_RECORDS, ids=[s[0] for s in SAVE_RECORDS])
def test_safety_save_writes_only_inside_dir(rn, tmp_path, monkeypatch, name, code, study, make, allowed):
    tally("safety")
    root = hostile_root(tmp_path, study, **make())
    o, written, outside = run_saving(rn, tmp_path, monkeypatch, root, [address(study, "{base}")])
    assert o.exc is None, o.exc
    assert o.code == code, o.code
    assert outside == [], outside
    assert written <= allowed, written
    if name.startswith("clean"):
        assert written == allowed


def test_safety_save_replaces_a_link_without_following_it(serving, rn, tmp_path):
    """A DIR there already, a link in it: refused before any request, the link and its target
    untouched (a copy is kept in a new folder, renamed into place once whole)."""
    tally("safety")
    target = tmp_path / "keep.txt"
    target.write_text("keep me")
    save = tmp_path / "save"
    save.mkdir()
    os.symlink(str(target), str(save / "trials.csv"))
    os.symlink(str(tmp_path / "absent.txt"), str(save / "seats.csv"))
    with serving() as p:
        o = run_main(rn, [address(KIM, p.url), "--save", str(save)])
        asked = list(p.requests)
    assert o.code == 2 and "is there already" in o.err and asked == [], o
    assert target.read_text() == "keep me"
    assert not (tmp_path / "absent.txt").exists()
    assert os.path.islink(str(save / "trials.csv"))
    assert tree(save) == {"trials.csv", "seats.csv"}


@pytest.mark.parametrize("where", ["an existing file", "under an existing file"])
def test_safety_save_dir_that_cannot_be_a_folder(serving, rn, tmp_path, where):
    """--save naming a file: refused with one line, nothing written, no exception."""
    tally("safety")
    blocker = tmp_path / "file"
    blocker.write_text("keep me")
    save = blocker if where == "an existing file" else blocker / "sub"
    with serving() as p:
        o = run_main(rn, [address(KIM, p.url), "--save", str(save)])
    assert blocker.read_text() == "keep me"
    assert tree(tmp_path) == {"file"}
    problems = refusal_problems(o, None, [str(save)])
    assert not problems, problems


def test_safety_save_leaves_no_partial_file_on_a_failure(serving, rn, tmp_path):
    """seats.csv fails: what was fetched is kept whole, nothing half-written."""
    tally("safety")
    save = tmp_path / "save"
    with serving(faults={SEATS: answer(404, "{}")}) as p:
        o = run_main(rn, [address(KIM, p.url), "--save", str(save)])
    assert not refusal_problems(o, "seats.csv", ["404"]), refusal_problems(o, "seats.csv", ["404"])
    assert tree(save) <= {"trials.csv"}
    for name in tree(save):
        assert (save / name).read_bytes() == csv_bytes(KIM, name)


# ---------------------------------------------------------------- the exact test's resources

# Runs the script as its child and writes the child's peak RSS (KiB) to the file named first: a
# small process that starts it, so that no parent's pages inflate it (the script ends by os._exit,
# so it cannot write its own).
MEASURED = """import resource, subprocess, sys
peak_file = sys.argv[1]
done = subprocess.run([sys.executable] + sys.argv[2:])
with open(peak_file, "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(done.returncode)
"""


def run_measured(args, limit=120):
    """The script as a user runs it: (exit, stdout, stderr, seconds, peak RSS in MiB)."""
    with tempfile.TemporaryDirectory() as folder:
        peak_file = os.path.join(folder, "peak")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", MEASURED, peak_file, str(REPO / "recompute_study.py")] + args,
                              capture_output=True, text=True, timeout=limit)
        seconds = time.monotonic() - started
        with open(peak_file) as peak:
            mib = int(peak.read()) / (2**20 if sys.platform == "darwin" else 2**10)  # bytes on macOS
            return done.returncode, done.stdout, done.stderr, seconds, mib


def test_csv_twenty_megabyte_quoted_field_read_in_bounded_memory(tmp_path):
    """A quoted field of 20 MB, every other character a doubled quote: read as one field, in
    memory that does not grow with it (a regex that backtracks per character took GBs)."""
    tally("csv")
    rows = csv_rows(KIM, "trials.csv")
    rows[3][column_of(rows, "arm_label")] = 'x"' * (10 * 1024 * 1024)
    (tmp_path / "trials.csv").write_text(write_rows(rows), encoding="utf-8")
    folder = FIXTURES / "u" / KIM.handle
    code, out, err, seconds, peak = run_measured([
        address(KIM), "--trials", str(tmp_path / "trials.csv"),
        "--seats", str(folder / "studies" / KIM.id / "seats.csv"), "--page", str(folder.parent / "kim.json")])
    assert (code, err) == (0, ""), (code, err)
    assert "every figure same, every check agrees" in out
    assert peak <= 256 and seconds < 60, (peak, seconds)


def big_study(root, pairs, effect, seed=20261130):
    """A fixed-rule study of `pairs` trials in the form of KIM's: each value the mean of 3 focal seats'
    Fitness Index (tenths), so the differences fall on every thousandth; the page's figures are KIM's."""
    rng = random.Random(seed)
    study = "s_0b16b16b"
    trials, seats = csv_rows(KIM, "trials.csv"), csv_rows(KIM, "seats.csv")
    t_row, s_row = trials[1], seats[1]
    t_rows, s_rows = [trials[0]], [seats[0]]
    tc, sc = (lambda c: column_of(trials, c)), (lambda c: column_of(seats, c))
    for trial in range(1, pairs + 1):
        for arm in (0, 1):
            total = 0.0
            for seat in (1, 2, 3):
                fitness = "%.1f" % min(100, max(0, round(rng.gauss(50 + effect * arm, 14.7), 1)))
                total += float(fitness)
                row = list(s_row)
                for column, text in (("study", study), ("trial", str(trial)), ("arm", str(arm)), ("seat", str(seat)),
                                     ("fitness_index", fitness), ("grade", grade(fitness))):
                    row[sc(column)] = text
                for column in ("survival", "economy", "social", "adaptation", "competitiveness"):
                    row[sc(column)] = fitness
                s_rows.append(row)
            units = math.floor(total / 3 * 1000 + 0.5)
            row = list(t_row)
            for column, text in (("study", study), ("trial", str(trial)), ("arm", str(arm)),
                                 ("map_seed", str(1000 + trial)), ("value", "%d.%03d" % divmod(units, 1000)),
                                 ("in_comparison", "true" if arm else ""), ("arm_label", ("control", "treated")[arm])):
                row[tc(column)] = text
            t_rows.append(row)
    folder = root / "u" / "kim" / "studies" / study
    folder.mkdir(parents=True)
    (folder / "trials.csv").write_text(write_rows(t_rows), encoding="utf-8")
    (folder / "seats.csv").write_text(write_rows(s_rows), encoding="utf-8")
    prof = profile(KIM)
    card = prof["studies"][card_index(prof, KIM)]
    card["id"], card["address"] = study, card["address"].replace(KIM.id, study)
    (root / "u" / "kim.json").write_text(json.dumps(prof))
    return "/u/kim/studies/" + study


def grade(fitness):
    return GRADER.grade_of(float(fitness), [float(fitness)] * 5, "2.4")


GRADER = load_script("recompute_study")

def test_net_500_pair_study_on_every_thousandth_counts_p_exactly_within_its_limits(tmp_path):
    """The platform's cap, a small effect (no bound settles it): the exact count runs, in bounded memory."""
    tally("network")
    with Platform(tmp_path) as p:
        code, out, err, seconds, peak = run_measured([p.url + big_study(tmp_path, 500, 0.3), "--all"])
    assert (code, err) == (1, ""), (code, err)          # the page's figures are another study's
    p_line = [line for line in out.splitlines() if line.startswith("comparison 1 (treated): p ")]
    assert len(p_line) == 1 and re.fullmatch(r"comparison 1 \(treated\): p +0\.1674 +0\.[0-9]{4} +DIFFERS [-+][0-9]+",
                                             p_line[0]), p_line
    assert "every value within fitness_index's range [0, 100]: agrees" in out
    assert "the exact sign-flip count" not in out and "Traceback" not in out + err
    assert peak <= 256 and seconds < 60, (peak, seconds)


def test_net_value_out_of_its_range_fails_a_check_and_leaves_the_exact_test_unrun(tmp_path):
    """One treated value of 200000.001 on a 0-100 metric: a failed check, p none, quickly."""
    tally("network")
    address_path = big_study(tmp_path, 500, 0.3)
    trials_file = tmp_path / address_path.lstrip("/") / "trials.csv"
    rows = list(csv.reader(io.StringIO(trials_file.read_text(encoding="utf-8"))))
    rows[4][column_of(rows, "value")] = "200000.001"         # trial 2's treated row, line 5
    trials_file.write_text(write_rows(rows), encoding="utf-8")
    with Platform(tmp_path) as p:
        code, out, err, seconds, peak = run_measured([p.url + address_path, "--all"])
    assert (code, err) == (1, ""), (code, err)
    assert ("every value within fitness_index's range [0, 100]: FAILS (trials.csv line 5: value 200000.001)"
            in out), out[-3000:]
    assert re.search(r"^comparison 1 \(treated\): p +0\.1674 +none +DIFFERS$", out, re.M), out[:3000]
    assert re.search(r"^comparison 1 \(treated\): verdict +inconclusive +none +DIFFERS$", out, re.M)
    assert peak <= 256 and seconds < 60, (peak, seconds)


# ---------------------------------------------------------------- the counts

RAN = set()  # the tests this process ran (one worker's share under pytest-xdist)


@pytest.fixture(autouse=True)
def noted(request):
    RAN.add(request.node.name)


def test_case_counts_by_category(request, capsys):
    """Runs last (file order): prints how many hostile cases each category ran."""
    selected = {name: any(ran.startswith(prefix) for ran in RAN) for name, prefix in CATEGORIES.items()}
    with capsys.disabled():
        sys.__stdout__.write("\nhostile study cases run: " + ", ".join(
            "%s %d" % (name, COUNTS[name]) for name in CATEGORIES)
            + "; total %d\n" % sum(COUNTS[name] for name in CATEGORIES))
        sys.__stdout__.flush()
    for name, was_selected in selected.items():
        if was_selected:
            assert COUNTS[name] > 0, name
