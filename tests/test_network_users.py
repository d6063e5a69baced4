"""The network as users meet it (records.md §3), against both scripts: rate limits with Retry-After,
gzip, a client that names itself, proxies and certificates named in errors, mirrors under a prefix,
answers bounded whatever a server sends, and a stdout that takes no more. Each case runs the script
as a user does, with a short deadline (DAISHI_TIMEOUT) and Retry-After 1."""
import gzip
import hashlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler

import pytest

from conftest import FIXTURES, REPO, load_script
from hostile_common import answer, in_turn, run_child, run_main, safe_output_problems
from loopback import Platform, Quiet

CLEAN = "m_b0bc344f1eac"       # 1 page, 2 seats
PAGED = "m_fe8687cb8321"       # 6 pages
EXPORT = "/api/matches/%s/export" % CLEAN
STUDY = "/u/kim/studies/s_eee65f53"
TRIALS = STUDY + "/trials.csv"
LINKED = "/u/linked-lab/studies/s_9f54f5e8"   # 6 matches, end to end with --matches
CERT, KEY = (str(REPO / "tests" / name) for name in ("loopback_cert.pem", "loopback_key.pem"))
RC, RS = load_script("recompute"), load_script("recompute_study")
SCRIPTS = {"match": ("recompute.py", EXPORT, lambda url: ["--base", url, CLEAN]),
           "study": ("recompute_study.py", TRIALS, lambda url: [url + STUDY])}
MAX_RSS_MB = 256


def one_line_exit(child, code):
    """The exact exit, no traceback, no raw control character, one line on stderr."""
    problems = safe_output_problems(child, code)
    if child.err.count("\n") != 1:
        problems.append("%d lines on stderr: %r" % (child.err.count("\n"), child.err))
    return problems


def busy(seconds, times=None, status=429):
    """A fault: `status` with Retry-After (records.md §3), to the first `times` requests (None: to every one),
    then what the platform serves."""
    def fn(h):
        h.send(status, '{"reason": "slow down"}', headers=[("Retry-After", str(seconds))])
    return fn if times is None else in_turn(*[fn] * times, served)


def served(h):
    """What the platform serves at the request's path, the fault aside."""
    path, _, query = h.path.partition("?")
    h.serve_file(path[1:] + ("/%s.json" % query.split("=")[1] if path.endswith("/export") else ""))


# ---------------------------------------------------------------- rate limits

@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_429_with_retry_after_is_waited_out_outside_the_deadline(tmp_path, kind):
    """Two 429s with Retry-After 1, under a 1 s deadline: each wait is outside the request's deadline."""
    script, path, argv = SCRIPTS[kind]
    with Platform(FIXTURES, faults={path: busy(1, times=2)}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=1)
        asked = [r for r in p.requests if r.startswith(path)]
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert len(asked) == 3 and child.err == ""


def test_503_with_retry_after_is_waited_out(tmp_path):
    with Platform(FIXTURES, faults={EXPORT: busy(1, times=1, status=503)}) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=1)
        asked = [r for r in p.requests if r.startswith(EXPORT)]
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert len(asked) == 2


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_retry_after_over_60_gives_up_at_once_saying_busy(tmp_path, kind):
    script, path, argv = SCRIPTS[kind]
    with Platform(FIXTURES, faults={path: busy(61)}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=1)
        asked = [r for r in p.requests if r.startswith(path)]
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "the platform was busy" in child.err and "429" in child.err and "61 s" in child.err, child.err
    assert "unreadable" not in child.err and "cannot read" not in child.err and len(asked) == 1


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_a_429_without_retry_after_is_asked_once_more_then_busy(tmp_path, kind):
    script, path, argv = SCRIPTS[kind]
    with Platform(FIXTURES, faults={path: answer(429, '{"reason": "slow down"}')}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=2)
        asked = [r for r in p.requests if r.startswith(path)]
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "the platform was busy" in child.err and "slow down" in child.err, child.err
    assert "cannot read" not in child.err and len(asked) == 2


@pytest.mark.parametrize("name", ["recompute", "recompute_study"])
def test_the_run_gives_up_when_its_waits_pass_the_budget(monkeypatch, name):
    """Always 429, Retry-After 1, a budget of 2 s: a few waits, then "busy", exit 2."""
    script = load_script(name)
    monkeypatch.setenv("DAISHI_BUSY", "2")
    monkeypatch.setenv("DAISHI_TIMEOUT", "1")
    path, argv = SCRIPTS["match" if name == "recompute" else "study"][1:]
    with Platform(FIXTURES, faults={path: busy(1)}) as p:
        o = run_main(script, argv(p.url))
        asked = [r for r in p.requests if r.startswith(path)]
    assert o.code == 2 and o.exc is None and "the platform was busy" in o.err, o
    assert "past the 2 s a run waits for a busy platform in all (DAISHI_BUSY), after 2 s of waiting" in o.err, o.err
    assert o.err.count("\n") == 1 and 2 <= len(asked) <= 3


def test_a_rate_limited_study_end_to_end_slows_and_says_how_long_it_waited(tmp_path):
    """A limit stricter than the platform's (4 a second, bursts of 8, Retry-After 1) on a 6-match study
    audited 4 at a time, 38 requests: every match recomputes, and the summary says how long it waited."""
    with Platform(FIXTURES, limit=(4, 8, 1)) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches", "--jobs", "4"], tmp_path, timeout=2)
        refused = p.refused
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    lines = child.out.splitlines()
    assert "matches that recompute: 6 of 6 named" in lines and lines[-1] == "every figure same, every check agrees"
    [waited] = [line for line in lines if line.startswith("waits for the platform (a 429's or 503's Retry-After): ")]
    assert refused >= 1 and int(waited.split(": ")[1].rstrip(" s")) >= 1, (refused, waited)


def test_a_rate_limited_match_download_reads_every_page(tmp_path):
    with Platform(FIXTURES, limit=(2, 2, 1)) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=1)
        refused = p.refused
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert refused >= 2 and "figures same" in child.out


# ---------------------------------------------------------------- compression

def same_run(script, argv, tmp_path, **platform):
    """The child's output against a plain server and against one configured so."""
    outs = []
    for options in ({}, platform):
        with Platform(FIXTURES, **options) as p:
            child = run_child(script, [a.replace("{base}", p.url) for a in argv], tmp_path, timeout=2)
            outs.append((child.code, child.out.replace(p.url, "{base}"), child.err))
            asked = p.headers
    return outs, asked


@pytest.mark.parametrize("script,argv", [("recompute.py", ["--base", "{base}", PAGED]),
                                         ("recompute_study.py", ["{base}" + LINKED, "--matches"])])
def test_gzip_is_asked_for_and_read_the_same(tmp_path, script, argv):
    (plain, zipped), asked = same_run(script, argv, tmp_path, gzip=True)
    assert plain == zipped and plain[0] == 0, (plain, zipped)
    assert {h.get("Accept-Encoding") for h in asked} == {"gzip"}


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_save_keeps_the_decoded_record(tmp_path, kind):
    script, _, argv = SCRIPTS[kind]
    save = tmp_path / "save"
    with Platform(FIXTURES, gzip=True) as p:
        child = run_child(script, argv(p.url) + ["--save", str(save)], tmp_path, timeout=2)
        asked = {h.get("Accept-Encoding") for h in p.headers}
    assert child.code == 0 and asked == {"gzip"}, (child.err, asked)
    if kind == "match":
        saved, about = save / CLEAN / "export" / "1.json", json.loads((save / CLEAN / "saved.json").read_text())
        original, digest = FIXTURES / "api" / "matches" / CLEAN / "export" / "1.json", about["sha256"]["export/1.json"]
    else:
        saved, about = save / "trials.csv", json.loads((save / "saved.json").read_text())
        original, digest = FIXTURES / TRIALS.lstrip("/"), about["sha256"]["trials.csv"]
    assert saved.read_bytes() == original.read_bytes()
    assert digest == hashlib.sha256(original.read_bytes()).hexdigest()


def gzip_bomb(megabytes):
    """A 200 whose gzip body decodes to `megabytes` MB of spaces (about 1/1000 of that sent)."""
    squeeze, block = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS), b" " * (1 << 20)
    body = b"".join(squeeze.compress(block) for _ in range(megabytes)) + squeeze.flush()

    def fn(h):
        h.send_response(200)
        for key, value in (("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
                           ("Content-Length", str(len(body)))):
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(body)
    return fn


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_a_gzip_bomb_is_refused_while_decompressing(tmp_path, kind):
    """1 GB of spaces in 1 MB: refused once the decoded size passes the 64 MiB cap, never expanded."""
    script, path, argv = SCRIPTS[kind]
    with Platform(FIXTURES, faults={path: gzip_bomb(1024)}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=10)
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert str(64 << 20) in child.err, child.err
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


def encoded(encoding, body):
    def fn(h):
        h.send_response(200)
        for key, value in (("Content-Encoding", encoding), ("Content-Length", str(len(body)))):
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(body)
    return fn


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
@pytest.mark.parametrize("encoding", ["br", "deflate", "gzip, br"])
def test_another_encoding_is_refused_by_name(tmp_path, kind, encoding):
    script, path, argv = SCRIPTS[kind]
    with Platform(FIXTURES, faults={path: encoded(encoding, b"\x0b\x02\x80{}\x03")}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=1)
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert re.search("the [\"']%s[\"'] encoding" % encoding, child.err), child.err


def test_gzip_no_header_names_says_compressed(tmp_path):
    script, path, argv = SCRIPTS["match"]
    with Platform(FIXTURES, faults={path: answer(200, gzip.compress(b'{"page": 1}'))}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=1)
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "gzip-compressed, and no Content-Encoding says so" in child.err, child.err


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_a_gzip_stream_cut_short_is_refused(tmp_path, kind):
    script, path, argv = SCRIPTS[kind]
    cut = gzip.compress((FIXTURES / "api" / "matches" / CLEAN / "export" / "1.json").read_bytes())[:-9]
    with Platform(FIXTURES, faults={path: encoded("gzip", cut)}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=1)
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "cut short" in child.err, child.err


def test_compression_fits_a_slow_link_into_the_deadline(tmp_path):
    """A 6-page match over a 6 KB/s link, a request's deadline 2 s: page 1 (23 KB, 3.8 s) passes it
    uncompressed (the deadline covers the body too); compressed (3.5 KB, 0.6 s) every page is in time."""
    with Platform(FIXTURES, rate=6000) as p:
        slow = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=2)
    with Platform(FIXTURES, rate=6000, gzip=True) as p:
        fast = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=2)
    assert not one_line_exit(slow, 2) and "within 2 s" in slow.err, slow.err
    assert not safe_output_problems(fast, 0), safe_output_problems(fast, 0)


# ---------------------------------------------------------------- the client's name

@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_user_agent_is_the_script_and_its_version(tmp_path, kind):
    script, _, argv = SCRIPTS[kind]
    with Platform(FIXTURES) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=2)
        agents = {h.get("User-Agent") for h in p.headers}
    assert child.code == 0
    assert agents == {"%s/%s" % (script, (RC if kind == "match" else RS).VERSION)}
    assert RC.VERSION == RS.VERSION == "3.1"


# ---------------------------------------------------------------- errors that name the culprit

@pytest.fixture
def no_proxy_set(monkeypatch):
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
            monkeypatch.delenv(name)


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy"])
def test_a_stale_proxy_is_blamed_not_the_server(tmp_path, no_proxy_set, kind, variable):
    script, _, argv = SCRIPTS[kind]
    proxy = "127.0.0.1:%d" % closed_port()
    with Platform(FIXTURES) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=2, env={variable: "http://" + proxy})
        assert p.requests == []
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "the proxy %s (named by %s)" % (proxy, variable) in child.err, child.err
    assert "Connection refused" in child.err and p.url[7:] not in child.err.replace(p.url, ""), child.err


class Refusing(BaseHTTPRequestHandler):
    """A proxy that wants a password: 407 to every request, a tunnel's too."""
    def log_message(self, *args):
        pass

    def refuse(self):
        self.send_response(407)
        self.send_header("Proxy-Authenticate", 'Basic realm="office"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_CONNECT = refuse


@pytest.fixture
def refusing_proxy():
    server = Quiet(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield "127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_answering_407_is_named(tmp_path, no_proxy_set, refusing_proxy, kind, scheme):
    script, _, argv = SCRIPTS[kind]
    base = "%s://127.0.0.1:%d" % (scheme, closed_port())
    variable = scheme.upper() + "_PROXY"
    child = run_child(script, argv(base), tmp_path, timeout=2, env={variable: "http://" + refusing_proxy})
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "the proxy %s (named by %s)" % (refusing_proxy, variable) in child.err, child.err
    assert "407" in child.err, child.err


def test_no_proxy_leaves_the_proxy_out(tmp_path, no_proxy_set):
    with Platform(FIXTURES) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=2,
                          env={"HTTP_PROXY": "http://127.0.0.1:%d" % closed_port(), "NO_PROXY": "127.0.0.1"})
    assert child.code == 0, child.err


@pytest.mark.parametrize("argv,env,named", [
    (["--base", "{base}", CLEAN], {}, "--base"),
    ([CLEAN], {"DAISHI_BASE": "{base}"}, "DAISHI_BASE"),
    (["{base}/matches/" + CLEAN], {}, "the address"),
    (["{base}/mirror/api/matches/%s/export?page=1" % CLEAN], {}, "the address"),
])
def test_an_unreachable_server_is_named_with_what_named_it(tmp_path, no_proxy_set, argv, env, named):
    base = "http://127.0.0.1:%d" % closed_port()
    child = run_child("recompute.py", [a.replace("{base}", base) for a in argv], tmp_path, timeout=2,
                      env={k: v.replace("{base}", base) for k, v in env.items()})
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "cannot reach %s (named by %s)" % (base[7:], named) in child.err, child.err


@pytest.mark.parametrize("argv,env,named", [
    (["{base}" + STUDY], {}, "the study's address"),
    ([STUDY, "--base", "{base}/"], {}, "--base"),
    ([STUDY], {"DAISHI_BASE": "{base}"}, "DAISHI_BASE"),
])
def test_an_unreachable_study_server_is_named_with_what_named_it(tmp_path, no_proxy_set, argv, env, named):
    base = "http://127.0.0.1:%d" % closed_port()
    child = run_child("recompute_study.py", [a.replace("{base}", base) for a in argv], tmp_path, timeout=2,
                      env={k: v.replace("{base}", base) for k, v in env.items()})
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "%s (named by %s)" % (base[7:], named) in child.err and "Connection refused" in child.err, child.err


def test_a_refused_redirect_names_the_address_not_base(tmp_path):
    with Platform(FIXTURES) as other, Platform(FIXTURES, faults={
            EXPORT: lambda h: (h.send_response(302), h.send_header("Location", other.url + h.path),
                               h.send_header("Content-Length", "0"), h.end_headers())}) as p:
        child = run_child("recompute.py", [p.url + "/matches/" + CLEAN], tmp_path, timeout=2)
        assert other.requests == []
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "another server than the one named by the address" in child.err and "--base" not in child.err


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_an_untrusted_certificate_says_what_to_do_and_the_advice_works(tmp_path, no_proxy_set, kind):
    script, _, argv = SCRIPTS[kind]
    with Platform(FIXTURES, tls=(CERT, KEY)) as p:
        refused = run_child(script, argv(p.url), tmp_path, timeout=3, env={"SSL_CERT_FILE": os.devnull})
        trusted = run_child(script, argv(p.url), tmp_path, timeout=3, env={"SSL_CERT_FILE": CERT})
    assert not one_line_exit(refused, 2), one_line_exit(refused, 2)
    assert "the certificate of %s (named by" % p.url[8:] in refused.err, refused.err
    assert "set SSL_CERT_FILE to its certificate" in refused.err, refused.err
    assert "on macOS, run Install Certificates.command" in refused.err, refused.err
    assert trusted.code == 0, trusted.err


# ---------------------------------------------------------------- mirrors under a prefix

@pytest.mark.parametrize("argv,env", [
    (["--base", "{mirror}/", PAGED], {}),
    ([PAGED], {"DAISHI_BASE": "{mirror}"}),
    (["{mirror}/matches/" + PAGED], {}),
    (["{mirror}/api/matches/%s/export?page=2" % PAGED], {}),
    (["{mirror}/api/matches/%s/report" % PAGED], {}),
])
def test_a_match_under_a_mirrors_prefix(tmp_path, argv, env):
    with Platform(FIXTURES, prefix="/daishi/mirror") as p:
        child = run_child("recompute.py", [a.replace("{mirror}", p.url) for a in argv], tmp_path, timeout=2,
                          env={k: v.replace("{mirror}", p.url) for k, v in env.items()})
        asked = list(p.requests)
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert len(asked) == 7 and all(r.startswith("/daishi/mirror/api/matches/" + PAGED) for r in asked), asked


@pytest.mark.parametrize("argv,env", [
    (["{mirror}" + STUDY], {}),
    (["{mirror}" + LINKED, "--matches"], {}),
    ([STUDY, "--base", "{mirror}/"], {}),
    ([LINKED, "--matches"], {"DAISHI_BASE": "{mirror}"}),
])
def test_a_study_under_a_mirrors_prefix(tmp_path, argv, env):
    with Platform(FIXTURES, prefix="/mirror") as p:
        child = run_child("recompute_study.py", [a.replace("{mirror}", p.url) for a in argv], tmp_path,
                          timeout=2, env={k: v.replace("{mirror}", p.url) for k, v in env.items()})
        asked = list(p.requests)
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert asked and all(r.startswith("/mirror/") for r in asked), asked
    assert len(asked) == (3 if "--matches" not in argv else 38), asked  # 3 files; 6 matches: 23 pages, 12 reports


@pytest.mark.parametrize("argv,env,named", [
    ([STUDY, "--base", "ftp://127.0.0.1"], {}, "--base"),
    ([STUDY], {"DAISHI_BASE": "bogus"}, "DAISHI_BASE"),
    ([STUDY], {"DAISHI_BASE": "http://127.0.0.1/m?x=1"}, "DAISHI_BASE"),
])
def test_a_study_base_must_be_an_address(tmp_path, argv, env, named):
    child = run_child("recompute_study.py", argv, tmp_path, timeout=1, env=env)
    assert child.code == 2 and "%s must be an http:// or https:// address" % named in child.err, child.err


# ---------------------------------------------------------------- bounded whatever a server sends

def test_ten_thousand_empty_pages_are_refused_at_the_first(tmp_path):
    page = json.loads((FIXTURES / "api" / "matches" / CLEAN / "export" / "1.json").read_text())
    page.update(pageCount=10000, events=[])
    with Platform(FIXTURES, faults={EXPORT: answer(200, json.dumps(page))}) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=1)
        asked = [r for r in p.requests if r.startswith(EXPORT)]
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert "export page 1: page 1 of 10000 holds no events" in child.err and len(asked) == 1, child.err


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_a_3_million_digit_integer_without_pythons_limit(tmp_path, kind):
    """PYTHONINTMAXSTRDIGITS=0 lifts Python's own cap: the scripts' guard still reads no such integer."""
    digits = "7" * 3000000
    if kind == "match":
        text = (FIXTURES / "api" / "matches" / CLEAN / "export" / "1.json").read_text()
        body, path, argv = text.replace('"wealth":', '"wealth":%s,"was":' % digits, 1), EXPORT, \
            ["--base", "{base}", CLEAN]
        where = "wealth"
    else:
        profile = json.loads((FIXTURES / "u" / "kim.json").read_text())
        body, path, argv = json.dumps(profile).replace("{", '{"n": %s, ' % digits, 1), "/u/kim.json", \
            ["{base}" + STUDY]
        where = "profile"
    with Platform(FIXTURES, faults={path: answer(200, body)}) as p:
        child = run_child(kind == "match" and "recompute.py" or "recompute_study.py",
                          [a.replace("{base}", p.url) for a in argv], tmp_path, timeout=10,
                          env={"PYTHONINTMAXSTRDIGITS": "0"})
    assert not one_line_exit(child, 2), one_line_exit(child, 2)
    assert where in child.err, child.err


def test_a_download_gathers_every_page_and_the_report_by_name():
    with Platform(FIXTURES) as p:
        net = RC.Network("recompute.py/3.1", 30, 60)
        match = RC.download(net, p.url, "--base", PAGED, (None,), tell=False, whole=True)
    assert sorted(match.files) == ["export/%d.json" % n for n in range(1, 7)] + [
        "report.json"]
    assert match.origin == p.url + "/api/matches/" + PAGED and match.about is None


def test_a_download_hands_the_reader_each_page_as_it_asks_and_keeps_none():
    with Platform(FIXTURES) as p:
        net = RC.Network("recompute.py/3.1", 30, 60)
        match = RC.download(net, p.url, "--base", PAGED, (None,), tell=False)
        asked = list(p.requests)
        archive, report = RC.read_match(match, None)
        later = p.requests[len(asked):]
    assert asked == ["/api/matches/%s/export?page=1" % PAGED] and sorted(match.files) == ["export/1.json"]
    assert later == ["/api/matches/%s/export?page=%d" % (PAGED, n) for n in range(2, 7)] + [
        "/api/matches/%s/report" % PAGED]
    assert archive["id"] == PAGED and report["rubric"] == "2.4"


def test_pages_of_50_mb_each_are_refused_past_the_copy_cap(tmp_path):
    """Six pages, each padded with 50 MB of spaces (within the 64 MiB cap of a page): refused once
    the match's files pass the 96 MiB a copy may hold, in bounded memory."""
    pages = FIXTURES / "api" / "matches" / PAGED / "export"
    padded = {n: (pages / ("%d.json" % n)).read_bytes().rstrip()[:-1] + b" " * (50 << 20) + b"}" for n in range(1, 7)}

    def fn(h):
        h.send(200, padded[int(h.path.rsplit("=", 1)[1])])
    with Platform(FIXTURES, faults={"/api/matches/%s/export" % PAGED: fn}) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=20)
    assert child.code == 2 and child.err == (
        "recompute.py: %s: %s/api/matches/%s: more than 100663296 bytes in all: not a record this "
        "script reads\n" % (PAGED, p.url, PAGED)), child.err
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


# ---------------------------------------------------------------- a stdout that takes no more

OUTPUTS = {   # each prints well past a pipe's buffer: the write fails inside the run, not at the exit
    "match": ["recompute.py", "--all"] + [str(FIXTURES / "api" / "matches" / m) for m in
                                          ("m_1b23341c9524", "m_47445e62fef6", "m_fe8687cb8321", CLEAN)],
    "study": ["recompute_study.py", str(FIXTURES / "u" / "linked-lab" / "studies" / "s_9f54f5e8"), "--all"],
}


def offline_study(tmp_path):
    """The linked study saved with its matches, to read offline."""
    save = tmp_path / "saved"
    with Platform(FIXTURES) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches", "--save", str(save)], tmp_path)
    assert child.code == 0, child.err
    return ["recompute_study.py", str(save), "--matches", "--all"]


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
@pytest.mark.parametrize("view", [[], ["--json"]])
def test_a_full_stdout_is_one_line_and_exit_2(tmp_path, kind, view):
    script, *args = offline_study(tmp_path) if kind == "study" else OUTPUTS[kind]
    with open("/dev/full", "w") as full:
        child = subprocess.run([sys.executable, str(REPO / script)] + args + view, stdout=full,
                               stderr=subprocess.PIPE, timeout=60)
    assert child.returncode == 2, (child.returncode, child.stderr)
    assert child.stderr.decode() == "%s: cannot write the result to stdout (No space left on device)\n" % script


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_a_closed_stdout_is_one_line_and_exit_2(kind):
    script, *args = OUTPUTS[kind]
    child = subprocess.run([sys.executable, str(REPO / script)] + args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60, preexec_fn=lambda: os.close(1))
    assert child.returncode == 2, (child.returncode, child.stderr)
    assert child.stderr.decode() == "%s: cannot write the result to stdout (it is closed)\n" % script


def test_a_pipe_closed_before_the_first_write_is_quiet_141():
    """stdout a pipe whose reader is gone before the script starts (`| true`): certain, not timing."""
    script, *args = OUTPUTS["match"]
    read, write = os.pipe()
    os.close(read)
    child = subprocess.Popen([sys.executable, str(REPO / script)] + args, stdout=write,
                             stderr=subprocess.PIPE)
    os.close(write)
    err = child.stderr.read()
    assert child.wait(timeout=60) == 141 and err == b"", (child.returncode, err)


class FakeClock:
    """time as Network reads it: monotonic() and sleep(), sleeping only on the clock."""

    def __init__(self):
        self.now, self.slept = 1000.0, []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(round(seconds, 6))
        self.now += seconds


@pytest.mark.parametrize("name", ["recompute", "recompute_study"])
def test_paced_requests_come_in_bursts_of_18_then_9_a_second(monkeypatch, name):
    """The study end to end keeps a little under the platform's rate (bursts of 20, then 10 a
    second) on its own: 18 at once, then one every 1/9 s; no pause on a request whose turn has
    come."""
    script = load_script(name)
    clock = FakeClock()
    monkeypatch.setattr(script, "time", clock)
    net = script.Network("a/1", 30, 60, paced=True)
    for _ in range(25):
        net.take_turn()
    assert clock.slept == [round(1 / 9, 6)] * 7
    unpaced, clock.slept = script.Network("a/1", 30, 60), []
    for _ in range(25):
        unpaced.take_turn()
    assert clock.slept == []


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("name", ["recompute", "recompute_study"])
def test_a_wait_for_a_busy_platform_is_shown_on_a_terminal_and_counted(monkeypatch, name):
    script = load_script(name)
    clock, terminal = FakeClock(), Terminal()
    monkeypatch.setattr(script, "time", clock)
    monkeypatch.setattr(sys, "stderr", terminal)
    net = script.Network("a/1", 30, 5)
    busy = script.Unreadable("export page 2: the platform was busy (429 Too Many Requests)")
    busy.wait, busy.status = 2, 429
    net.wait_out(busy)
    net.take_turn()
    assert terminal.getvalue() == "\rwaiting 2 s: the platform asks (429)\x1b[K"
    assert clock.slept == [2] and net.waited == 2
    net.wait_out(busy)
    net.take_turn()
    with pytest.raises(script.Unreadable) as over:
        net.wait_out(busy)  # 2 + 2 + 2 > 5
    assert str(over.value) == ("export page 2: the platform was busy (429 Too Many Requests); it asks "
                               "to wait 2 s more, past the 5 s a run waits for a busy platform in "
                               "all (DAISHI_BUSY), after 4 s of waiting: try again later")


def test_a_test_server_says_nothing_of_a_client_gone_mid_answer(capfd):
    """A run stopped or past its deadline leaves the server a closed connection: no traceback for
    that on a passing run, but one for any other fault of the server's."""
    with Platform(FIXTURES) as p:
        for error in (ConnectionResetError(104, "reset"), BrokenPipeError(32, "pipe"), KeyError("x")):
            try:
                raise error
            except Exception:
                p.httpd.handle_error(None, ("127.0.0.1", 1))
    err = capfd.readouterr().err
    assert err.count("Exception occurred during processing of request") == 1 and "KeyError" in err, err
