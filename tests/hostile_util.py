"""Helpers for the hostile-input tests of recompute.py.

Records are written as saved copies (a folder holding `export/<N>.json` and
`report.json`) and read by `main` in-process; a value the JSON module cannot
write (NaN, 1e400, a 400-digit integer) is spliced in as raw text.
"""
import collections
import contextlib
import copy
import io
import itertools
import json
import os
import re
import socket
import struct
import tempfile
import threading
import traceback
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from conftest import FIXTURES

CLEAN = "m_b0bc344f1eac"      # 2 seats, 95 events, 1 page, rubric 2.4
EXPLAINED = "m_1b23341c9524"  # 5 seats, 969 events, erratum E3
MATCHES = FIXTURES / "api" / "matches"
PAGE_1 = os.path.join("export", "1.json")
PAGE_2 = os.path.join("export", "2.json")
REPORT = "report.json"

HUGE_INT = "1" + "0" * 400   # a JSON number whose double is +inf, written as an integer
DELETE = object()            # as a mutation: remove the key or element

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


def walk(obj, path):
    for key in path:
        obj = obj[key]
    return obj


_tokens = itertools.count()


def mutate(obj, path, value):
    """Set (or, with DELETE, remove) the value at `path`; returns raw splices.

    A `value` that is a str starting with `raw:` is spliced as JSON text.
    """
    parent = walk(obj, path[:-1])
    key = path[-1]
    if value is DELETE:
        del parent[key]
        return {}
    if isinstance(parent, list) and key == len(parent):
        parent.append(None)  # one element past the end: add it
    if isinstance(value, str) and value.startswith("raw:"):
        token = "@@hostile-%d@@" % next(_tokens)
        parent[key] = token
        return {json.dumps(token): value[4:]}
    parent[key] = value
    return {}


def dumps(obj, splices=None):
    text = json.dumps(obj, ensure_ascii=False)
    for token, raw in (splices or {}).items():
        assert token in text
        text = text.replace(token, raw)
    return text


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

Outcome = collections.namedtuple("Outcome", "code out err exc")


def run_main(rc, argv):
    """`main(argv)` with stdout and stderr captured; `exc` is a traceback
    when an exception other than SystemExit escaped `main`."""
    out, err = io.StringIO(), io.StringIO()
    code, exc = None, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = rc.main(list(argv))
    except SystemExit as stop:
        code = stop.code
    except Exception:
        exc = traceback.format_exc()
    return Outcome(code, out.getvalue(), err.getvalue(), exc)


def run_offline(rc, pages, report, extra=None, options=()):
    with tempfile.TemporaryDirectory() as d:
        folder = write_record(Path(d) / "rec", pages, report, extra)
        return run_main(rc, list(options) + [str(folder)])


def escaped(outcome):
    return outcome.exc.strip().splitlines()[-1] if outcome.exc else None


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


def reading_problems(outcome, codes=(0, 1)):
    """How `outcome` falls short of a record that reads: an exit in `codes`,
    no traceback."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    problems = []
    if outcome.code not in codes:
        problems.append("exit %r, expected one of %s (stderr %r)" % (outcome.code, codes, outcome.err[:300]))
    if "Traceback" in outcome.err:
        problems.append("a traceback on stderr")
    return problems


def contract_problems(outcome, files=(PAGE_1, REPORT)):
    """Any outcome: exit 0, 1 or 2; exit 2 is one line naming a file."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    if outcome.code == 2:
        problems = refusal_problems(outcome)
        if not any(f in outcome.err for f in files):
            problems.append("stderr names none of %s: %r" % (files, outcome.err[:300]))
        return problems
    return reading_problems(outcome, (0, 1))


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


def answer(status, body, ctype="application/json"):
    def fn(h):
        h.send(status, body, ctype)
    return fn


def in_turn(*fns):
    """The first request gets fns[0], the next fns[1], ...; then the last again."""
    calls = []
    lock = threading.Lock()

    def fn(h):
        with lock:
            i = min(len(calls), len(fns) - 1)
            calls.append(i)
        return fns[i](h)
    return fn


def redirect(code, location_for):
    """A redirect; `location_for(handler)` gives the Location."""
    def fn(h):
        h.send_response(code)
        h.send_header("Location", location_for(h))
        h.send_header("Content-Length", "0")
        h.end_headers()
    return fn


def raw(data, linger_reset=False):
    """Write `data` as the whole answer (status line included), then close."""
    def fn(h):
        h.close_connection = True
        try:
            h.wfile.write(data)
            h.wfile.flush()
            if linger_reset:
                h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                h.connection.close()
        except OSError:
            pass
    return fn


def stall(stop, seconds, before=b""):
    """Write `before` (perhaps nothing), then wait `seconds` (or until `stop`)."""
    def fn(h):
        h.close_connection = True
        try:
            if before:
                h.wfile.write(before)
                h.wfile.flush()
            stop.wait(seconds)
        except OSError:
            pass
    return fn


def drip(stop, body, every):
    """Headers at once, then the body one byte every `every` seconds."""
    def fn(h):
        h.close_connection = True
        try:
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n" % len(body))
            h.wfile.flush()
            for i in range(len(body)):
                if stop.wait(every):
                    return
                h.wfile.write(body[i:i + 1])
                h.wfile.flush()
        except OSError:
            pass
    return fn


def endless(stop, limit=256 << 20):
    """A 200 with no length that writes spaces until the client goes away."""
    def fn(h):
        h.close_connection = True
        try:
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
            block, sent = b" " * 65536, 0
            while sent < limit and not stop.is_set():
                h.wfile.write(block)
                sent += len(block)
        except OSError:
            pass
    return fn


def tree(root):
    """Every path under root, relative, as posix strings."""
    root = Path(root)
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}
