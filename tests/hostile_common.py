"""What both hostile-input suites share: mutating JSON records, running a
script's main() in-process, and loopback faults that answer a request badly
(functions of the handler, for loopback.Platform's `faults`).
"""
import collections
import contextlib
import io
import itertools
import json
import re
import socket
import struct
import threading
import traceback
from pathlib import Path

HUGE_INT = "1" + "0" * 400   # a JSON number whose double is +inf, written as an integer
DELETE = object()            # as a mutation: remove the key or element

Outcome = collections.namedtuple("Outcome", "code out err exc")
_tokens = itertools.count()


def walk(obj, path):
    for key in path:
        obj = obj[key]
    return obj


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


def run_main(script, argv):
    """`main(argv)` with stdout and stderr captured; `exc` is a traceback
    when an exception other than SystemExit escaped `main`."""
    out, err = io.StringIO(), io.StringIO()
    code, exc = None, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = script.main(list(argv))
    except SystemExit as stop:
        code = stop.code
    except Exception:
        exc = traceback.format_exc()
    return Outcome(code, out.getvalue(), err.getvalue(), exc)


def escaped(outcome):
    return outcome.exc.strip().splitlines()[-1] if outcome.exc else None


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


def r(text):
    """A value spliced into the record as raw JSON text."""
    return "raw:" + text


def shown(value):
    if value is DELETE:
        return "<deleted>"
    return value[4:] if isinstance(value, str) and value.startswith("raw:") else json.dumps(value)


def label(path):
    out = ""
    for key in path:
        out += "[%d]" % key if isinstance(key, int) else ("." if out else "") + key
    return out


def reading_problems(outcome, codes):
    """How `outcome` falls short of a record that reads (a match or a study): an exit in `codes`,
    no traceback."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    problems = []
    if outcome.code not in codes:
        problems.append("exit %r, expected one of %s (stderr %r)" % (outcome.code, codes, outcome.err[:300]))
    if "Traceback" in outcome.err:
        problems.append("a traceback on stderr")
    return problems


def any_outcome_problems(outcome, refusal_problems, files):
    """Any outcome: exit 0, 1 or 2; exit 2 a refusal (by the suite's rule) naming one of `files`."""
    if outcome.exc:
        return ["an exception escaped main: %s" % escaped(outcome)]
    if outcome.code == 2:
        problems = refusal_problems(outcome)
        if not any(f in outcome.err for f in files):
            problems.append("stderr names none of %s: %r" % (files, outcome.err[:300]))
        return problems
    return reading_problems(outcome, (0, 1))


def inside(path, root):
    """Whether path is root or under it, after resolving links and `..`."""
    path, root = Path(path).resolve(), Path(root).resolve()
    return path == root or root in path.parents


def run_saving(script, tmp_path, monkeypatch, root, argv):
    """main(argv + --save DIR) against a loopback server over `root`, from a
    working folder beside DIR: (outcome, files written under DIR relative to
    it, paths written anywhere outside DIR)."""
    from loopback import Platform
    work = tmp_path / "work"
    save = work / "a" / "save"
    (work / "cwd").mkdir(parents=True)
    monkeypatch.chdir(work / "cwd")
    before = tree(tmp_path)
    with Platform(root) as p:
        outcome = run_main(script, [a.replace("{base}", p.url) for a in argv] + ["--save", str(save)])
    new = tree(tmp_path) - before
    outside = sorted(n for n in new if not inside(tmp_path / n, save) and not inside(save, tmp_path / n))
    written = {(tmp_path / n).relative_to(save).as_posix() for n in new
               if (tmp_path / n).is_file() and inside(tmp_path / n, save)}
    return outcome, written, outside


# ---------------------------------------------------------------- hang, forge, exhaust

# What a terminal would act on, were it printed raw: every control but the newline, and the
# bidi characters and Unicode separators.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
# ESC/OSC that would clear the screen, retitle the window and hide the rest, a carriage return,
# bidi overrides and isolates, and a newline with a forged closing line.
FORGED = "B\r\x1b[8m\x1b]0;owned\x07\x1b[2J\u202e\u2066\u200f\x85\u2028\nALL FIGURES SAME"


def trickle(stop, pieces, every):
    """Write each of `pieces()` (perhaps endless) after `every` seconds, until the client goes."""
    def fn(h):
        h.close_connection = True
        try:
            for piece in pieces():
                if every and stop.wait(every) or stop.is_set():
                    return
                h.wfile.write(piece)
                h.wfile.flush()
        except OSError:
            pass
    return fn


_PEAK = ("import resource, subprocess, sys\n"
         "r = subprocess.run(sys.argv[2:])\n"
         "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
         "sys.exit(r.returncode)\n")

Child = collections.namedtuple("Child", "code out err seconds peak_mb")


def run_child(script, argv, tmp_path, timeout=1, env=None):
    """The script in a fresh process as a user runs it, with DAISHI_TIMEOUT=`timeout`:
    exit, stdout, stderr, seconds taken and its peak resident memory in MB."""
    import os
    import subprocess
    import sys
    import time
    full = dict(os.environ, DAISHI_TIMEOUT=str(timeout), PYTHONIOENCODING="utf-8")
    full.pop("DAISHI_BASE", None)
    full.update(env or {})
    peak = tmp_path / ("peak-%d" % next(_tokens))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", _PEAK, str(peak), sys.executable,
                        str(Path(__file__).resolve().parent.parent / script)] + [str(a) for a in argv],
                       capture_output=True, env=full, timeout=60)
    return Child(p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8"),
                 time.monotonic() - t0, int(peak.read_text()) / 1024)


def safe_output_problems(outcome, code):
    """The exact exit, no traceback, no raw control character in stdout or stderr."""
    problems = []
    if getattr(outcome, "exc", None):
        problems.append("an exception escaped main: %s" % escaped(outcome))
    if outcome.code != code:
        problems.append("exit %r, expected %d (stderr %r)" % (outcome.code, code, outcome.err[:300]))
    if "Traceback" in outcome.err:
        problems.append("a traceback on stderr")
    for name, text in (("stdout", outcome.out), ("stderr", outcome.err)):
        bad = RAW_CONTROL.search(text)
        if bad:
            problems.append("%s holds a raw %r at %d: %r" % (name, bad.group(), bad.start(),
                                                            text[max(bad.start() - 60, 0):bad.start() + 20]))
    if "\nALL FIGURES SAME" in outcome.out:
        problems.append("a forged line reached stdout")
    return problems
