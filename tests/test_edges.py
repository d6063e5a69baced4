"""Failing closed at the edges: only the released code runs, a signal ends a run with nothing left
half written, a record's fault is the record's, a password is never shown or kept, --help and
--version write as every output does, descriptors past 1,023, a proxy's interim answers, files
that are not regular files, and --save's folder as the system resolves it."""
import ast
import base64
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import FIXTURES, REPO
from hostile_common import run_child, safe_output_problems
from loopback import Platform

CLEAN = "m_b0bc344f1eac"       # 1 page, 2 seats
PAGED = "m_fe8687cb8321"       # 6 pages
LINKED = "/u/linked-lab/studies/s_9f54f5e8"   # 6 matches, end to end with --matches
KIM = "/u/kim/studies/s_eee65f53"
SCRIPTS = ("recompute.py", "recompute_study.py")


@pytest.fixture(autouse=True)
def no_proxy_set(monkeypatch):
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
            monkeypatch.delenv(name)


def env(**more):
    full = dict(os.environ, DAISHI_TIMEOUT="5", PYTHONIOENCODING="utf-8")
    full.pop("DAISHI_BASE", None)
    full.update(more)
    return full


def run(argv, **how):
    return subprocess.run([sys.executable] + [str(a) for a in argv], capture_output=True, text=True,
                          timeout=120, **dict({"env": env()}, **how))


def files_under(path):
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs + _)


# ---------------------------------------------------------------- nothing imported from the script's folder

def imported(script):
    """The top-level name of every module the script imports, at its top or at run time."""
    names = set()
    for node in ast.walk(ast.parse((REPO / script).read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names - {"sys"}  # built into the interpreter: never looked for on the path


@pytest.mark.parametrize("script", SCRIPTS)
def test_no_module_is_imported_from_the_scripts_folder(tmp_path, script):
    """A module named as one the script imports, lying beside it (a downloads folder): never run,
    offline, online, under --save (hashlib), --help (textwrap) or --matches."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    for name in SCRIPTS:
        shutil.copy(REPO / name, folder / name)
    names = imported(script) | {"selectors", "select", "socket", "ssl", "base64", "hashlib", "textwrap"}
    assert {"json", "hashlib", "textwrap", "base64", "selectors", "signal", "os"} <= names
    marker = tmp_path / "ran"
    for name in names:
        (folder / (name + ".py")).write_text("open(%r, 'a').write(%r + ' ')\n" % (str(marker), name))
    with Platform(FIXTURES) as p:
        runs = [["--help"], ["--version"]]
        if script == "recompute.py":
            runs += [[FIXTURES / "api" / "matches" / CLEAN], ["--base", p.url, "--save", tmp_path / "s", PAGED]]
        else:
            runs += [[p.url + LINKED, "--matches", "--save", tmp_path / "s"]]
        for argv in runs:
            out = run([folder / script] + argv, cwd=str(tmp_path))
            assert out.returncode == 0 and "Traceback" not in out.stderr, (argv, out.stderr[-800:])
    assert not marker.exists(), marker.read_text()


# ---------------------------------------------------------------- one interruption, whatever ends it

def hang_after(stop, path):
    """A fault that answers the head and then a byte at a time, until the test ends."""
    def fn(h):
        h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n")
        h.wfile.flush()
        while not stop.wait(0.2):
            try:
                h.wfile.write(b" ")
                h.wfile.flush()
            except OSError:
                return
    return {path: fn}


@pytest.fixture
def stop():
    event = threading.Event()
    yield event
    event.set()


SIGNALED = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]


@pytest.mark.parametrize("signum,code", SIGNALED)
@pytest.mark.parametrize("kind", ["match", "study"])
def test_each_signal_is_one_line_its_exit_and_nothing_left(tmp_path, stop, signum, code, kind):
    if kind == "match":
        hung, argv = "/api/matches/%s/report" % PAGED, lambda url: ["recompute.py", "--base", url, PAGED]
    else:
        hung = "/api/matches/m_4be7ac37a1d7/report"
        argv = lambda url: ["recompute_study.py", url + LINKED, "--matches", "--jobs", "4"]  # noqa: E731
    with Platform(FIXTURES, faults=hang_after(stop, hung)) as p:
        child = subprocess.Popen([sys.executable, str(REPO / argv(p.url)[0])] + argv(p.url)[1:]
                                 + ["--save", str(tmp_path / "s")], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env(DAISHI_TIMEOUT="50"))
        deadline = time.monotonic() + 30
        while not any(r.startswith(hung) for r in p.requests) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        child.send_signal(signum)
        out, err = child.communicate(timeout=20)
    assert (child.returncode, err) == (code, b"interrupted\n"), (child.returncode, err[-500:])
    assert os.listdir(tmp_path) == [], files_under(tmp_path)


HUNG = "/api/matches/m_4be7ac37a1d7/report"


def saving_study(p, tmp_path, stderr):
    """recompute_study.py --matches --jobs 16 --save, its stderr the pipe's end given (closed here
    once the child has it), once it has asked for the report that hangs."""
    child = subprocess.Popen([sys.executable, str(REPO / "recompute_study.py"), p.url + LINKED, "--matches",
                              "--jobs", "16", "--save", str(tmp_path / "s")],
                             stdout=subprocess.DEVNULL, stderr=stderr, env=env(DAISHI_TIMEOUT="50"))
    os.close(stderr)
    deadline = time.monotonic() + 30
    while not any(HUNG in r for r in p.requests) and time.monotonic() < deadline:
        time.sleep(0.02)
    return child


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_second_signal_while_the_first_removes_stops_nothing(tmp_path, stop, second):
    """The removal of what was begun runs to its end whatever signal comes meanwhile."""
    read, write = os.pipe()
    with Platform(FIXTURES, faults=hang_after(stop, HUNG)) as p:
        child = saving_study(p, tmp_path, write)
        time.sleep(0.3)
        for signum in (signal.SIGINT, second, second, signal.SIGINT):
            child.send_signal(signum)
            time.sleep(0.01)
        child.wait(timeout=20)
    err = os.read(read, 65536)
    os.close(read)
    assert (child.returncode, err) == (130, b"interrupted\n"), (child.returncode, err[-500:])
    assert os.listdir(tmp_path) == [], files_under(tmp_path)


def test_a_stderr_nobody_reads_holds_nothing_back(tmp_path, stop):
    """stderr a full pipe (a paused pager): the signal stops every request and removes every
    folder before the line is written; the run then waits to write it, and ends 130 once read."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        while True:
            os.write(write, b"x" * 65536)
    except BlockingIOError:
        pass
    os.set_blocking(write, True)
    with Platform(FIXTURES, faults=hang_after(stop, HUNG)) as p:
        child = saving_study(p, tmp_path, write)
        child.send_signal(signal.SIGINT)
        time.sleep(1)
        asked, left = len(p.requests), os.listdir(tmp_path)
        time.sleep(1)
        assert child.poll() is None  # still waiting to write its line
        assert len(p.requests) == asked and left == [] and os.listdir(tmp_path) == [], files_under(tmp_path)
        said = b""
        while child.poll() is None or not said.endswith(b"interrupted\n"):
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            said += chunk
        child.wait(timeout=20)
    os.close(read)
    assert child.returncode == 130 and said.endswith(b"interrupted\n"), said[-200:]


LOADING = """import os, runpy, signal, sys
class Hook:  # the signal arrives as the script imports argparse: while it loads
    def find_spec(self, name, path=None, target=None):
        if name == "argparse":
            os.kill(os.getpid(), signal.%s)
            import time; time.sleep(1)
        return None
sys.meta_path.insert(0, Hook())
sys.argv = [sys.argv[1], "--version"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize("signum,code", SIGNALED)
@pytest.mark.parametrize("stderr", ["pipe", "closed", "full"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_a_signal_while_the_script_loads_is_its_exit_whatever_stderr_is(signum, code, stderr, script):
    program = LOADING % signal.Signals(signum).name
    where = {"pipe": subprocess.PIPE, "closed": subprocess.DEVNULL, "full": open("/dev/full", "wb")}[stderr]
    argv = [sys.executable, "-c", program, str(REPO / script)]
    if stderr == "closed":
        argv = ["sh", "-c", '"$@" 2>&-', "sh"] + argv
    child = subprocess.run(argv, stdout=subprocess.PIPE, stderr=where, timeout=60)
    assert child.returncode == code and child.stdout == b"", (child.returncode, child.stderr)
    if stderr == "pipe":
        assert child.stderr == b"interrupted\n"


# ---------------------------------------------------------------- a record's fault is the record's

DUPLICATE = b'{"zz": 9007199254740993, "zz": 0, '


def forged_fixtures(tmp_path, relative):
    root = tmp_path / "platform"
    shutil.copytree(FIXTURES, root)
    page = root / relative
    page.write_bytes(DUPLICATE + page.read_bytes().lstrip()[1:])
    return root


@pytest.mark.parametrize("relative,named", [
    ("api/matches/%s/export/1.json" % CLEAN, "export page 1"),
    ("api/matches/%s/report.json" % CLEAN, "report")])
def test_an_integer_past_2_53_under_a_duplicate_key_is_the_records_fault(tmp_path, relative, named):
    root = forged_fixtures(tmp_path, relative)
    with Platform(root) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=5)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "%s: a key given twice: not a finite number, nor an integer within 2**53" % named in child.err, child.err
    assert "fault of this script" not in child.err and named in child.err, child.err


def test_under_matches_one_matchs_fault_is_that_matchs_and_the_others_are_audited(tmp_path):
    root = forged_fixtures(tmp_path, "api/matches/m_7ec03a773300/export/1.json")
    with Platform(root) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches", "--json"], tmp_path, timeout=5)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    doc = json.loads(child.out)
    exits = {m["match"]: m["exit"] for m in doc["matches"]}
    assert exits.pop("m_7ec03a773300") == 2 and set(exits.values()) == {0} and len(exits) == 5, exits
    assert "fault of this script" not in child.err + child.out


def test_a_profile_with_such_a_key_is_the_records_fault(tmp_path):
    root = forged_fixtures(tmp_path, "u/linked-lab.json")
    with Platform(root) as p:
        child = run_child("recompute_study.py", [p.url + LINKED], tmp_path, timeout=5)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert child.err == ("recompute_study.py: cannot read the study: the profile JSON: a key given twice: not a "
                         "finite number, nor an integer within 2**53\n"), child.err


# ---------------------------------------------------------------- secrets, in any form

@pytest.mark.parametrize("argv", [
    ["--rubric", "http://kim:pw SECRET@127.0.0.1:9/x", CLEAN],
    ["--save", "http://kim:pw SECRET@127.0.0.1:9/api/matches/%s/report" % CLEAN],
    ["--json", "--rubric", " http://kim:p@w SECRET@127.0.0.1:9 ", CLEAN],
    ["--base=http://kim:pw SECRET@127.0.0.1:9/?x", CLEAN]])
def test_a_password_is_shown_nowhere_in_a_usage_error(tmp_path, argv):
    child = run_child("recompute.py", argv, tmp_path)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "SECRET" not in child.out + child.err and "***@" in child.err, child.err


def test_a_study_address_with_spaces_and_a_password_is_sent_and_never_kept(tmp_path):
    with Platform(FIXTURES) as p:
        address = "  " + p.url.replace("http://", "http://kim:p w@SECRET@") + LINKED + " "
        child = run_child("recompute_study.py", [address, "--matches", "--save", tmp_path / "s"], tmp_path,
                          timeout=5)
        sent = {h.get("Authorization") for h in p.headers}
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert sent == {"Basic " + base64.b64encode(b"kim:p w@SECRET").decode()}
    kept = [(tmp_path / "s" / name).read_text() for name in files_under(tmp_path / "s") if name.endswith(".json")]
    assert len(kept) > 6 and not any("SECRET" in text for text in kept)
    assert "SECRET" not in child.out + child.err


# ---------------------------------------------------------------- --help and --version write as every output

@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize("option", ["--help", "--version"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_and_version_into_a_full_disk_or_a_closed_pipe(script, option, unbuffered):
    extra = {"PYTHONUNBUFFERED": unbuffered} if unbuffered else {}
    with open("/dev/full", "wb") as full:
        child = subprocess.run([sys.executable, str(REPO / script), option], stdout=full, stderr=subprocess.PIPE,
                               env=env(**extra), timeout=60)
    assert child.returncode == 2, child.stderr
    assert child.stderr.decode() == "%s: cannot write the result to stdout (No space left on device)\n" % script
    read, write = os.pipe()
    os.close(read)
    child = subprocess.run([sys.executable, str(REPO / script), option], stdout=write, stderr=subprocess.PIPE,
                           env=env(**extra), timeout=60)
    os.close(write)
    assert (child.returncode, child.stderr) == (141, b"")


def test_save_keeps_the_digest_of_the_file_as_it_was_read_before_the_first_request(tmp_path):
    """The script's file replaced during the run: saved.json names the bytes that run."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "recompute.py"
    shutil.copy(REPO / "recompute.py", script)
    before = hashlib.sha256(script.read_bytes()).hexdigest()

    def replace_then_answer(h):
        script.write_text("# another file\n")
        h.match(PAGED, "export", {"page": [h.path.split("page=")[-1]]} if "page=" in h.path else {})
    with Platform(FIXTURES, faults={"/api/matches/%s/export" % PAGED: replace_then_answer}) as p:
        out = run([script, "--base", p.url, "--save", tmp_path / "s", PAGED])
    assert out.returncode == 0, out.stderr
    about = json.loads((tmp_path / "s" / PAGED / "saved.json").read_text())
    assert about["scripts"]["recompute.py"] == {"version": "3.1", "sha256": before}


# ---------------------------------------------------------------- descriptors and a proxy's interim answers

PAST_SELECT = """import os, resource, runpy, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # each socket numbered past 1,023
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_kept_connection_numbered_past_1023_is_used_as_any(tmp_path):
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 1200:
        pytest.skip("this machine allows fewer than 1,200 descriptors")
    with Platform(FIXTURES, keepalive=True) as p:
        out = run(["-c", PAST_SELECT, REPO / "recompute.py", "--base", p.url, PAGED])
        connections = p.connections
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert connections == 1 and out.stdout.rstrip().endswith("every figure same, every check agrees")


class Interim(BaseHTTPRequestHandler):
    """A proxy that sends interim answers (100, 103) before its answer to CONNECT, then tunnels."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_CONNECT(self):
        import select
        import socket
        host, port = self.path.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)))
        self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
                         b"HTTP/1.1 200 Connection established\r\n\r\n")
        pair = [self.connection, upstream]
        while True:
            ready, _, _ = select.select(pair, [], [], 5)
            if not ready:
                return
            for sock in ready:
                data = sock.recv(65536)
                if not data:
                    return
                (upstream if sock is self.connection else self.connection).sendall(data)


def test_interim_answers_before_a_proxys_answer_to_connect_are_passed_over(tmp_path):
    cert, key = (str(REPO / "tests" / name) for name in ("loopback_cert.pem", "loopback_key.pem"))
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Interim)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        with Platform(FIXTURES, keepalive=True, tls=(cert, key)) as p:
            child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=5,
                              env={"HTTPS_PROXY": "http://127.0.0.1:%d" % proxy.server_address[1],
                                   "SSL_CERT_FILE": cert})
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)


# ---------------------------------------------------------------- files that are not regular files

@pytest.mark.parametrize("given,says", [
    ("/proc/self/mem", "/proc/self/mem: cannot read (Input/output error)"),
    ("/dev/zero", "/dev/zero: not a regular file: not read"),
    ("fifo", "fifo: not a regular file: not read")])
def test_a_file_given_that_is_not_a_regular_file_is_refused_without_being_opened(tmp_path, given, says):
    if given == "fifo":
        given = str(tmp_path / "fifo")
        os.mkfifo(given)
    started = time.monotonic()
    out = run([REPO / "recompute_study.py", "https://daishi.ai" + KIM, "--trials", given,
               "--seats", FIXTURES / KIM[1:] / "seats.csv", "--page", FIXTURES / "u" / "kim.json"])
    assert out.returncode == 2 and out.stdout == "" and time.monotonic() - started < 30
    assert says in out.stderr and "stdout" not in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr


def test_save_makes_only_the_folder_the_system_resolves(tmp_path):
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "work").mkdir()
    os.symlink(tmp_path / "real" / "deep", tmp_path / "work" / "link")
    with Platform(FIXTURES) as p:
        out = run([REPO / "recompute.py", "--base", p.url, "--save", "link/../out", CLEAN], cwd=str(tmp_path / "work"))
    assert out.returncode == 0, out.stderr
    assert os.listdir(tmp_path / "work") == ["link"]
    assert sorted(os.listdir(tmp_path / "real")) == ["deep", "out"]
    assert os.listdir(tmp_path / "real" / "out") == [CLEAN]


# ---------------------------------------------------------------- the guide

@pytest.mark.parametrize("script", SCRIPTS)
def test_the_guide_names_what_else_the_environment_can_change(script):
    doc = ast.get_docstring(ast.parse((REPO / script).read_text("utf-8")))
    environment = doc.split("\n- The environment read")[1].split("\n- ")[0]
    for name in ("SSLKEYLOGFILE", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "REQUEST_METHOD"):
        assert name in environment, name


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_guides_grep_shows_every_import_made_at_run_time(script):
    """Code loaded as a run goes (the network's modules at the first request, hashlib, textwrap,
    urllib.parse where first used) stands on a line the guide's grep shows."""
    from test_one_direction import trust_surface
    pattern, _ = trust_surface(script)
    lines = (REPO / script).read_text("utf-8").splitlines()
    inner = [node.lineno for top in ast.parse("\n".join(lines)).body if isinstance(top, (ast.FunctionDef, ast.ClassDef))
             for node in ast.walk(top) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert len(inner) >= 4 and [n for n in inner if not pattern.search(lines[n - 1])] == []


def surface(script):
    """The trust surface in lines: the code lines (no docstring, comment or blank line) of each
    innermost function holding a code line the guide's grep shows (its own def line aside), plus
    such lines outside any function; the lines before "--- constants" aside."""
    from test_one_direction import trust_surface
    pattern, _ = trust_surface(script)
    src = (REPO / script).read_text("utf-8")
    lines, tree = src.splitlines(), ast.parse(src)
    start = next(n for n, line in enumerate(lines, 1) if line.startswith("# --- constants"))
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))

    def code(n):
        return n not in docs and lines[n - 1].strip() and not lines[n - 1].strip().startswith("#")
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    spans, loose = set(), 0
    for n, line in enumerate(lines, 1):
        if n >= start and code(n) and pattern.search(line) and not line.lstrip().startswith("def "):
            owners = [f for f in functions if f.lineno <= n <= f.end_lineno]
            if owners:
                inner = min(owners, key=lambda f: f.end_lineno - f.lineno)
                spans.add((inner.lineno, inner.end_lineno))
            else:
                loose += 1
    return sum(sum(1 for n in range(a, b + 1) if code(n)) for a, b in spans) + loose


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_trust_surface_stays_within_500_lines(script):
    assert 300 < surface(script) <= 500, surface(script)


# ---------------------------------------------------------------- memory, whatever a file holds

def test_a_wide_character_cannot_make_a_files_text_outgrow_the_cap(monkeypatch):
    """One character past U+FFFF makes every character of a str take 4 bytes: a file whose text
    would pass MAX_BYTES so is refused before it is decoded; one that fits is read."""
    from conftest import load_script
    rc = load_script("recompute")
    monkeypatch.setattr(rc, "MAX_BYTES", 4096)
    wide = json.dumps({"a": "x" * 1100 + "\U0001F600"}, ensure_ascii=False).encode()
    with pytest.raises(rc.Unreadable, match=r"page: more than 4096 bytes once decoded \(4 bytes a character\)"):
        rc.parse_json(wide, "page")
    two = json.dumps({"a": "x" * 2100 + "\u0101"}, ensure_ascii=False).encode()
    with pytest.raises(rc.Unreadable, match=r"more than 4096 bytes once decoded \(2 bytes a character\)"):
        rc.parse_json(two, "page")
    assert rc.parse_json(json.dumps({"a": "x" * 3000 + "\u00e9"}, ensure_ascii=False).encode(), "page")["a"][-1] == "é"
    assert rc.parse_json(b'{"a": "' + b"x" * 4000 + b'"}', "page")["a"] == "x" * 4000


def test_a_csv_field_past_a_third_of_max_bytes_is_refused_as_it_is_read(tmp_path):
    """Its copies (the line, the record, the field) would pass the memory bound: refused; one of
    20 MiB is read (tests/test_hostile_study.py)."""
    study_dir = FIXTURES / KIM[1:]
    lines = (study_dir / "seats.csv").read_bytes().split(b"\n")
    header = lines[0].split(b",")
    row = lines[1].split(b",")
    row[header.index(b"name")] = b"A" * (22 << 20)
    (tmp_path / "seats.csv").write_bytes(b"\n".join([lines[0], b",".join(row)] + lines[2:]))
    out = run([REPO / "recompute_study.py", "https://daishi.ai" + KIM, "--trials", study_dir / "trials.csv",
               "--seats", tmp_path / "seats.csv", "--page", FIXTURES / "u" / "kim.json"])
    assert out.returncode == 2 and out.stdout == "", out.stderr
    assert out.stderr == ("recompute_study.py: cannot read the study: seats.csv line 2: field larger than field "
                          "limit (22369621)\n")


def test_under_matches_a_report_of_another_match_is_that_matchs_fault(tmp_path):
    root = tmp_path / "platform"
    shutil.copytree(FIXTURES, root)
    report = root / "api" / "matches" / "m_7ec03a773300" / "report.json"
    document = json.loads(report.read_text())
    document["matchId"] = "m_000000000000"
    report.write_text(json.dumps(document))
    with Platform(root) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches", "--json"], tmp_path, timeout=5)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    matches = {m["match"]: m for m in json.loads(child.out)["matches"]}
    assert matches["m_7ec03a773300"]["exit"] == 2
    assert 'report.matchId: "m_000000000000" is not the archive\'s m_7ec03a773300' in matches["m_7ec03a773300"]["error"]
    assert sorted(m["exit"] for m in matches.values()) == [0, 0, 0, 0, 0, 2]
