"""Helpers for the hostile-input tests of recompute.py.

Records are written as saved copies (a folder holding `export/<N>.json` and
`report.json`) and read by `main` in-process; a value the JSON module cannot
write (NaN, 1e400, a 400-digit integer) is spliced in as raw text.
"""
import collections
import copy
import json
import os
import re
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from conftest import FIXTURES
from hostile_common import any_outcome_problems, dumps, escaped, run_main

CLEAN = "m_b0bc344f1eac"      # 2 seats, 95 events, 1 page, rubric 2.4
EXPLAINED = "m_1b23341c9524"  # 5 seats, 969 events, erratum E3
MATCHES = FIXTURES / "api" / "matches"
PAGE_1 = os.path.join("export", "1.json")
PAGE_2 = os.path.join("export", "2.json")
REPORT = "report.json"


# A refusal of NaN or Infinity at parse time may name the place by position.
POSITION = re.compile(r"\b(line|column|char|offset|position) \d+")

# Per-category count of hostile cases run, printed by the last test.
COUNTS = collections.Counter()


def tally(category, n=1):
    COUNTS[category] += n


# ------------------------------------------------------------ records

_cache = {}


def fixture(match, name):
    key = (match, name)
    if key not in _cache:
        _cache[key] = json.loads((MATCHES / match / name).read_text("utf-8"))
    return copy.deepcopy(_cache[key])


def page_one(match=CLEAN):
    return fixture(match, "export/1.json")


def report_of(match=CLEAN, name="report.json"):
    return fixture(match, name)




def write_record(folder, pages, report, extra=None):
    """pages: list of dict / str / bytes (None leaves the page out)."""
    folder = Path(folder)
    (folder / "export").mkdir(parents=True, exist_ok=True)
    for n, page in enumerate(pages, 1):
        if page is None:
            continue
        _write(folder / "export" / ("%d.json" % n), page)
    if report is not None:
        _write(folder / "report.json", report)
    for name, content in (extra or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        _write(folder / name, content)
    return folder


def _write(path, content):
    if isinstance(content, (dict, list)):
        content = dumps(content)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)


# ------------------------------------------------------------ running



def run_offline(rc, pages, report, extra=None, options=()):
    with tempfile.TemporaryDirectory() as d:
        folder = write_record(Path(d) / "rec", pages, report, extra)
        return run_main(rc, list(options) + [str(folder)])


def refusal_problems(outcome, file=None, names=()):
    """How `outcome` falls short of: exit 2, one stderr line naming the file
    and the field, no traceback, no "same" on stdout. A line ends at \n, \r
    or \r\n (a carriage return starts a new line for a reader in universal
    newline mode, and on a terminal)."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    problems = []
    if outcome.code != 2:
        problems.append("exit %r, expected 2" % (outcome.code,))
    lines = re.split(r"\r\n|\r|\n", outcome.err.rstrip("\n"))
    lines = [] if lines == [""] else lines
    if "Traceback" in outcome.err:
        problems.append("a traceback on stderr")
    if len(lines) != 1:
        problems.append("%d lines on stderr, expected 1" % len(lines))
    line = outcome.err
    for name in ([] if file is None else [file]) + list(names):
        alternatives = name if isinstance(name, tuple) else (name,)
        if not any(a.search(line) if hasattr(a, "search") else a in line for a in alternatives):
            problems.append("stderr does not name %s" % " or ".join(
                repr(getattr(a, "pattern", a)) for a in alternatives))
    if re.search(r"\bsame\b", outcome.out):
        problems.append('"same" on stdout')
    if problems:
        problems.append("stderr: %r; stdout tail: %r" % (outcome.err[:300], outcome.out[-200:]))
    return problems


def contract_problems(outcome, files=(PAGE_1, REPORT)):
    """Any outcome: exit 0, 1 or 2; exit 2 is one line naming a file."""
    return any_outcome_problems(outcome, refusal_problems, files)


# ------------------------------------------------------------ network faults

def serve_fixture(match, rel):
    """A fault that answers with the saved copy `rel` (e.g. export/1.json)."""
    body = (MATCHES / match / rel).read_bytes()

    def fn(h):
        h.send(200, body)
    return fn


def serve_page_from(match):
    """A fault that answers export?page=N with the saved page N."""
    def fn(h):
        page = parse_qs(urlsplit(h.path).query).get("page", ["1"])[0]
        p = MATCHES / match / "export" / ("%s.json" % page)
        if not page.isdigit() or not p.is_file():
            return h.reason(404, "not found")
        h.send(200, p.read_bytes())
    return fn


