"""Helpers for the hostile-input tests of recompute_study.py.

A study is handed to `main` in-process as saved copies (--trials, --seats,
--page, --recipe) written to a temporary folder; any of the four may be
replaced by hostile bytes, text, CSV rows or a JSON object. A value the JSON
module cannot write (NaN, 1e400, a 400-digit integer) is spliced in as raw
text.
"""
import collections
import copy
import csv
import io
import json
import re
import tempfile
from pathlib import Path

from conftest import FIXTURES
from hostile_common import any_outcome_problems, dumps, escaped, run_main

CANARY = "DAISHI-CANARY 7f3c2a90-5b1e-4d6a-9c8e-2e4b1f0a6d35 do not train on this row"

Study = collections.namedtuple("Study", "handle id recipe")
KIM = Study("kim", "s_eee65f53", None)                    # fixed rule
ANA = Study("ana-lab", "s_0ed90190", "r_2d6680de")        # anytime rule


# A refusal at parse time may name the place by position instead of by field.
POSITION = re.compile(r"\b(line|column|char|offset|position) \d+")

# Per-category count of hostile cases run, printed by the last test.
COUNTS = collections.Counter()


def tally(category, n=1):
    COUNTS[category] += n


# ------------------------------------------------------------ the saved study

def address(study, origin="https://daishi.ai"):
    return "%s/u/%s/studies/%s" % (origin, study.handle, study.id)


def study_dir(study):
    return FIXTURES / "u" / study.handle / "studies" / study.id


_cache = {}


def _cached(path, parse):
    key = (str(path), parse)
    if key not in _cache:
        data = Path(path).read_bytes()
        _cache[key] = data if parse is None else parse(data)
    return copy.deepcopy(_cache[key])


def csv_bytes(study, name):
    """The saved trials.csv or seats.csv, as bytes."""
    return _cached(study_dir(study) / name, None)


def _rows(data):
    return [list(r) for r in csv.reader(io.StringIO(data.decode("utf-8"), newline=""))]


def csv_rows(study, name):
    """The saved file as a list of rows (header first), each a list of fields (a fresh copy)."""
    key = (str(study_dir(study) / name), "rows")
    if key not in _cache:
        _cache[key] = _rows((study_dir(study) / name).read_bytes())
    return [list(row) for row in _cache[key]]


def profile(study):
    return json.loads(_cached(FIXTURES / "u" / (study.handle + ".json"), None))


def recipe(study):
    return json.loads(_cached(FIXTURES / "u" / study.handle / "recipes" / (study.recipe + ".json"), None))


def card_index(prof, study):
    for i, card in enumerate(prof["studies"]):
        if card.get("id") == study.id:
            return i
    raise KeyError(study.id)


def write_rows(rows, newline="\r\n"):
    """Rows as CSV text: fields quoted only where needed (RFC 4180)."""
    out = io.StringIO()
    csv.writer(out, lineterminator=newline).writerows(rows)
    return out.getvalue()


def column_of(rows, name):
    return rows[0].index(name)


# ------------------------------------------------------------ JSON mutation



# ------------------------------------------------------------ running



def _content(value, kind):
    """bytes of a saved copy: CSV rows (a list) for a CSV file, an object for JSON."""
    if isinstance(value, (dict, list)):
        value = write_rows(value) if kind == "csv" else dumps(value)
    if isinstance(value, str):
        value = value.encode("utf-8")
    return value


def saved_files(folder, study, trials=None, seats=None, page=None, recipe_=None):
    """Write the four saved copies into `folder` (the fixture's where None);
    returns the --trials/--seats/--page/--recipe options."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "trials": ("trials.csv", trials if trials is not None else csv_bytes(study, "trials.csv")),
        "seats": ("seats.csv", seats if seats is not None else csv_bytes(study, "seats.csv")),
        "page": ("profile.json", page if page is not None else profile(study)),
    }
    if study.recipe is not None or recipe_ is not None:
        files["recipe"] = ("recipe.json", recipe_ if recipe_ is not None else recipe(study))
    options = []
    for option, (name, value) in files.items():
        (folder / name).write_bytes(_content(value, "csv" if name.endswith(".csv") else "json"))
        options += ["--" + option, str(folder / name)]
    return options


def run_offline(rs, study, trials=None, seats=None, page=None, recipe_=None, options=(), addr=None):
    with tempfile.TemporaryDirectory() as d:
        argv = [addr or address(study)] + saved_files(d, study, trials, seats, page, recipe_) + list(options)
        return run_main(rs, argv)


def stderr_lines(err):
    """Lines of stderr; a line ends at \\n, \\r or \\r\\n (a carriage return
    starts a new line on a terminal and for a reader in universal newline mode)."""
    lines = re.split(r"\r\n|\r|\n", err.rstrip("\n"))
    return [] if lines == [""] else lines


def word(name):
    """`name` as a whole token (so `value` is not found in `no_value`)."""
    return re.compile(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name))


def line_no(n):
    return re.compile(r"\bline %d\b" % n)


def refusal_problems(outcome, file=None, names=()):
    """How `outcome` falls short of: exit 2, one stderr line naming the file
    and each of `names` (a str, a compiled pattern or a tuple of alternatives),
    no traceback, no "same" on stdout."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    problems = []
    if outcome.code != 2:
        problems.append("exit %r, expected 2" % (outcome.code,))
    lines = stderr_lines(outcome.err)
    if "Traceback" in outcome.err:
        problems.append("a traceback on stderr")
    if len(lines) != 1:
        problems.append("%d lines on stderr, expected 1" % len(lines))
    for name in ([] if file is None else [file]) + list(names):
        alternatives = name if isinstance(name, tuple) else (name,)
        if not any(a.search(outcome.err) if hasattr(a, "search") else a in outcome.err for a in alternatives):
            problems.append("stderr does not name %s" % " or ".join(
                repr(getattr(a, "pattern", a)) for a in alternatives))
    if re.search(r"\bsame\b", outcome.out):
        problems.append('"same" on stdout')
    if problems:
        problems.append("exit %r; stderr: %r; stdout tail: %r" % (outcome.code, outcome.err[:300], outcome.out[-200:]))
    return problems


def flagged_problems(outcome, file=None, names=()):
    """A bad record that may read: exit 1 with a DIFFERS or FAILS on stdout,
    or a refusal (exit 2) naming the file and field."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    if outcome.code == 1:
        if not re.search(r"\b(DIFFERS|FAILS)\b", outcome.out) or "Traceback" in outcome.err:
            return ["exit 1 without a DIFFERS or FAILS line", outcome.out[-300:]]
        return []
    if outcome.code == 2:
        return refusal_problems(outcome, file, names)
    return ["exit %r, expected 1 (a figure differs or a check fails) or 2 (refused by name); stderr %r"
            % (outcome.code, outcome.err[:300])]


def contract_problems(outcome, files=("trials.csv", "seats.csv", "profile", "recipe")):
    """Any outcome: exit 0, 1 or 2; exit 2 is one line naming a file."""
    return any_outcome_problems(outcome, refusal_problems, files)


# ------------------------------------------------------------ network faults

def serve_bytes(body, ctype="text/csv"):
    def fn(h):
        h.send(200, body, ctype)
    return fn


