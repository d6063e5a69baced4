"""The network as the internet meets it: one kept-alive connection per thread and server, one
TLS context a run, no thread per request, pages read as they arrive (records.md §3)."""
import json
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest

from conftest import FIXTURES, REPO
from hostile_common import answer, run_child, safe_output_problems
from loopback import Platform, Quiet

CLEAN = "m_b0bc344f1eac"       # 1 page, 2 seats
PAGED = "m_fe8687cb8321"       # 6 pages
LINKED = "/u/linked-lab/studies/s_9f54f5e8"   # 6 matches, end to end with --matches
CERT, KEY = (str(REPO / "tests" / name) for name in ("loopback_cert.pem", "loopback_key.pem"))


@pytest.fixture
def no_proxy_set(monkeypatch):
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
            monkeypatch.delenv(name)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- one connection, one handshake

@pytest.mark.parametrize("tls", [False, True])
def test_a_match_of_six_pages_takes_one_connection(tmp_path, no_proxy_set, tls):
    with Platform(FIXTURES, keepalive=True, tls=(CERT, KEY) if tls else None) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5,
                          env={"SSL_CERT_FILE": CERT})
        asked, connections = len(p.requests), p.connections
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert (asked, connections) == (7, 1)


def test_a_study_end_to_end_takes_one_connection_per_thread(tmp_path, no_proxy_set):
    with Platform(FIXTURES, keepalive=True) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches", "--jobs", "2"],
                          tmp_path, timeout=5)
        asked, connections = len(p.requests), p.connections
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert asked > 12 and connections <= 3, (asked, connections)


def test_a_connection_the_server_closes_between_requests_is_opened_again_silently(tmp_path, no_proxy_set):
    """The server keeps HTTP/1.1 but closes each connection after its answer, without a word."""
    with Platform(FIXTURES, keepalive="drop") as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5)
        asked, connections = len(p.requests), p.connections
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert (asked, connections) == (7, 7) and child.err == ""


def test_a_page_1_fault_stops_the_download_at_page_1(tmp_path):
    page = json.loads((FIXTURES / "api" / "matches" / PAGED / "export" / "1.json").read_text())
    page["events"][0]["tick"] = "soon"
    path = "/api/matches/%s/export" % PAGED
    with Platform(FIXTURES, keepalive=True, faults={path: answer(200, json.dumps(page))}) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5)
        asked = [r for r in p.requests if r.startswith(path)]
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "export page 1" in child.err and "tick" in child.err and len(asked) == 1, (child.err, asked)


def test_a_saved_copy_is_downloaded_whole_though_a_page_is_at_fault(tmp_path):
    """--save keeps what the platform served, whole: every page, the fault's page and after."""
    page = json.loads((FIXTURES / "api" / "matches" / PAGED / "export" / "1.json").read_text())
    page["events"][0]["tick"] = "soon"
    path = "/api/matches/%s/export" % PAGED
    with Platform(FIXTURES, keepalive=True, faults={path: answer(200, json.dumps(page))}) as p:
        child = run_child("recompute.py", ["--save", tmp_path / "kept", "--base", p.url, PAGED],
                          tmp_path, timeout=5)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    kept = tmp_path / "kept" / PAGED
    assert sorted(os.listdir(kept / "export")) == ["%d.json" % n for n in range(1, 7)]
    assert (kept / "saved.json").exists() and (kept / "report.json").exists()


# ---------------------------------------------------------------- threads: --jobs + 1 at most

def threads_while_running(argv, limit=None):
    """(exit, stderr, the most threads the process ran at once), sampled from /proc."""
    env = dict(os.environ, DAISHI_TIMEOUT="10", PYTHONIOENCODING="utf-8")
    env.pop("DAISHI_BASE", None)
    cap = (lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))) if limit else None
    child = subprocess.Popen([sys.executable] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, preexec_fn=cap)
    most = 0
    while child.poll() is None:
        try:
            most = max(most, len(os.listdir("/proc/%d/task" % child.pid)))
        except OSError:
            break
        time.sleep(0.001)
    out, err = child.communicate(timeout=60)
    return child.returncode, err.decode("utf-8"), most


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_a_study_end_to_end_runs_at_most_jobs_plus_one_threads():
    with Platform(FIXTURES, keepalive=True) as p:
        code, err, most = threads_while_running(
            [str(REPO / "recompute_study.py"), p.url + LINKED, "--matches", "--jobs", "3"])
    assert code == 0, err
    assert 1 < most <= 4, most


def test_a_study_end_to_end_with_16_jobs_runs_within_a_1_gb_address_space():
    """`ulimit -v 1000000`: no thread per request, so 16 jobs fit."""
    with Platform(FIXTURES, keepalive=True) as p:
        code, err, most = threads_while_running(
            [str(REPO / "recompute_study.py"), p.url + LINKED, "--matches", "--jobs", "16"],
            limit=1000000 * 1024)
    assert code == 0 and err == "", err


# ---------------------------------------------------------------- proxies, as the environment names them

class Forwarding(BaseHTTPRequestHandler):
    """A proxy: GET of an absolute address passed on, CONNECT tunnelled; each noted."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.seen.append(("GET", self.path, self.headers.get("Proxy-Authorization")))
        host = self.path.split("/")[2]
        upstream = socket.create_connection((host.split(":")[0], int(host.split(":")[1])))
        upstream.sendall(b"GET /%s HTTP/1.0\r\n\r\n" % self.path.split("/", 3)[3].encode())
        raw = b""
        while True:
            piece = upstream.recv(65536)
            if not piece:
                break
            raw += piece
        head, _, body = raw.partition(b"\r\n\r\n")
        self.wfile.write(head.replace(b"HTTP/1.0", b"HTTP/1.1", 1) + b"\r\n\r\n" + body)

    def do_CONNECT(self):
        self.server.seen.append(("CONNECT", self.path, self.headers.get("Proxy-Authorization")))
        host, port = self.path.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)))
        self.send_response(200)
        self.end_headers()
        pair = [self.connection, upstream]
        while True:
            ready, _, _ = select.select(pair, [], [], 5)
            if not ready:
                break
            for sock in ready:
                data = sock.recv(65536)
                if not data:
                    return
                (upstream if sock is self.connection else self.connection).sendall(data)


@pytest.fixture
def proxy():
    server = Quiet(("127.0.0.1", 0), Forwarding)
    server.seen = []
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_an_https_proxy_tunnels_one_connection_and_its_password_is_sent_not_shown(
        tmp_path, no_proxy_set, proxy):
    address = "http://kim:pw-SECRET@127.0.0.1:%d" % proxy.server_address[1]
    with Platform(FIXTURES, keepalive=True, tls=(CERT, KEY)) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5,
                          env={"HTTPS_PROXY": address, "SSL_CERT_FILE": CERT})
        connections = p.connections
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert [(verb, auth) for verb, _, auth in proxy.seen] == [("CONNECT", "Basic a2ltOnB3LVNFQ1JFVA==")]
    assert connections == 1 and "SECRET" not in child.out + child.err


def test_an_http_proxy_is_asked_for_the_whole_address(tmp_path, no_proxy_set, proxy):
    with Platform(FIXTURES) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=5,
                          env={"HTTP_PROXY": "http://127.0.0.1:%d" % proxy.server_address[1]})
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert [path for _, path, _ in proxy.seen] == [
        p.url + "/api/matches/%s/export?page=1" % CLEAN, p.url + "/api/matches/%s/report" % CLEAN]


@pytest.mark.parametrize("script", ["recompute.py", "recompute_study.py"])
def test_a_proxys_password_is_never_shown(tmp_path, no_proxy_set, script):
    argv = ["--base", "http://example.org", CLEAN] if script == "recompute.py" else [
        "http://example.org/u/kim/studies/s_eee65f53"]
    child = run_child(script, argv, tmp_path, timeout=2,
                      env={"HTTP_PROXY": "http://kim:pw-SECRET@127.0.0.1:%d" % closed_port()})
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "SECRET" not in child.err and "the proxy 127.0.0.1:" in child.err, child.err


# ---------------------------------------------------------------- settings out of range

@pytest.mark.parametrize("script", ["recompute.py", "recompute_study.py"])
@pytest.mark.parametrize("name,value", [("DAISHI_TIMEOUT", "1e308"), ("DAISHI_TIMEOUT", "0"),
                                        ("DAISHI_TIMEOUT", "nan"), ("DAISHI_BUSY", "inf"),
                                        ("DAISHI_BUSY", "86401"), ("DAISHI_BUSY", "-5")])
def test_a_deadline_or_patience_out_of_range_is_a_usage_error(tmp_path, script, name, value):
    child = run_child(script, [CLEAN if script == "recompute.py" else "/u/kim/studies/s_eee65f53"],
                      tmp_path, env={name: value})
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert child.err == "%s: $%s must be a number of seconds above 0, a day (86400) at most (see %s --help)\n" % (
        script, name, script), child.err


# ---------------------------------------------------------------- one shared block in a run

def test_a_match_still_playing_under_matches_is_a_match_still_playing(tmp_path):
    """Under --matches one copy of the shared block serves the run: recompute.py's download sees
    the study's 409 as its own, and the match is said to be playing, not the study."""
    playing = tmp_path / "root" / "api" / "matches" / "m_4be7ac37a1d7"
    playing.mkdir(parents=True)
    (playing / "playing.json").write_text('{"reason": "round 120 of 400"}')
    with Platform(tmp_path / "root", FIXTURES, keepalive=True) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches"], tmp_path, timeout=5)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "m_4be7ac37a1d7 (trial 1 arm 0): cannot be read: export page 1: 409 the match is still playing: \\\n" in child.out, child.out
    assert "the study is still playing" not in child.out + child.err


def test_the_study_loads_recompute_with_its_own_shared_block():
    from conftest import load_script
    rs = load_script("recompute_study")
    rc = rs.load_recompute()
    assert rc.Unreadable is rs.Unreadable and rc.Network is rs.Network and rc.keep is rs.keep
    assert rc.Running.script == "recompute_study.py" and rc.SCRIPT == "recompute.py"
    assert len(rs.SHARED) > 40 and not rs.SHARED & {"main", "SCRIPT", "VERSION", "Match", "download"}


# ---------------------------------------------------------------- integers beyond 2**53, wherever they stand

@pytest.mark.parametrize("limit", [None, "0"])
@pytest.mark.parametrize("digits", ["9007199254740993", "1" * 40, "7" * 5000])
def test_an_integer_beyond_2_53_is_refused_where_no_check_reads_it(tmp_path, limit, digits):
    """In a key no rule reads: refused by the JSON reader, naming its place, whatever
    PYTHONINTMAXSTRDIGITS says (0 lifts Python's own cap)."""
    text = (FIXTURES / "api" / "matches" / CLEAN / "export" / "1.json").read_text()
    body = text.replace("{", '{"unread": {"n": [1, %s]}, ' % digits, 1)
    with Platform(FIXTURES, faults={"/api/matches/%s/export" % CLEAN: answer(200, body)}) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=10,
                          env={"PYTHONINTMAXSTRDIGITS": limit} if limit else {})
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "export page 1: unread.n[1]: not a finite number, nor an integer within 2**53" in child.err, child.err


def test_2_53_itself_is_read(tmp_path):
    rc = __import__("conftest").load_script("recompute")
    assert rc.parse_json(b'[9007199254740992, -9007199254740992, 0]', "x") == [2**53, -2**53, 0]
    with pytest.raises(rc.Unreadable) as beyond:
        rc.parse_json(b'{"a": [0, {"b": -9007199254740993}]}', "x")
    assert str(beyond.value) == "x: a[1].b: not a finite number, nor an integer within 2**53"
