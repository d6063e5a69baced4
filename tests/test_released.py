"""What runs is what was released, and a connection carries only its own answer: the study runs
only its own release's recompute.py, --version names each file's sha256, a kept-alive connection
never yields bytes that are not its answer's, a password is never shown or kept whatever it
holds, a record read through a proxy says so, and Ctrl-C during --save leaves nothing half
written."""
import base64
import hashlib
import io
import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import FIXTURES, REPO, load_script
from hostile_common import run_child, safe_output_problems
from loopback import MATCH, Platform

CLEAN = "m_b0bc344f1eac"       # 1 page, 2 seats
PAGED = "m_fe8687cb8321"       # 6 pages
LINKED = "/u/linked-lab/studies/s_9f54f5e8"   # 6 matches, end to end with --matches
BEGIN = "# ==================================================================== the shared block\n"


@pytest.fixture(autouse=True)
def no_proxy_set(monkeypatch):
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy"):
            monkeypatch.delenv(name)


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- the study runs its own release

def release_beside(tmp_path, change=None):
    """The study script in a folder of its own, beside a recompute.py changed by `change`."""
    shutil.copy(REPO / "recompute_study.py", tmp_path / "recompute_study.py")
    text = (REPO / "recompute.py").read_text("utf-8")
    (tmp_path / "recompute.py").write_text(change(text) if change else text, "utf-8")
    return tmp_path / "recompute_study.py"


def study(script, *argv, env=None):
    full = dict(os.environ, DAISHI_TIMEOUT="5", PYTHONIOENCODING="utf-8")
    full.pop("DAISHI_BASE", None)
    full.update(env or {})
    return subprocess.run([sys.executable, str(script)] + [str(a) for a in argv],
                          capture_output=True, text=True, env=full, timeout=120)


@pytest.mark.parametrize("change", [
    lambda t: t.replace('VERSION = "3.1"', 'VERSION = "3.0"'),  # another release
    lambda t: t.replace("0.25 * survival", "0.26 * survival"),  # one rule changed, the rest the same
    lambda t: t.replace(BEGIN, 'print("FORGED")\n' + BEGIN),  # a line added
    lambda t: t + "\ndef broken(:\n"])  # a file that cannot even be compiled
def test_a_recompute_py_not_the_one_released_with_the_study_is_never_run(tmp_path, change):
    """The study runs only the recompute.py whose sha256 it pins: another is refused before any of
    it runs and before any request, naming the file, both digests and where the released one is."""
    script = release_beside(tmp_path, change)
    with Platform(FIXTURES) as p:
        out = study(script, p.url + LINKED, "--matches")
        asked = list(p.requests)
    pinned = sha256(REPO / "recompute.py")
    assert out.returncode == 2 and out.stdout == "" and len(out.stderr.splitlines()) == 1, out.stderr
    assert out.stderr == (
        "recompute_study.py: --matches: %s has sha256 %s, not %s, that of the recompute.py "
        "released with recompute_study.py 3.1: not run; put the one released with it beside it "
        "(curl -sO https://daishi.ai/recompute.py)\n" % (tmp_path / "recompute.py", sha256(tmp_path / "recompute.py"),
                                                        pinned)), out.stderr
    assert asked == [] and "FORGED" not in out.stderr


def test_the_study_pins_the_recompute_py_beside_it():
    """Changing recompute.py without the study's pin fails here, saying the digest to pin."""
    study_script = load_script("recompute_study")
    digest = sha256(REPO / "recompute.py")
    assert study_script.RECOMPUTE_SHA256 == digest, (
        "recompute.py changed: set RECOMPUTE_SHA256 in recompute_study.py to %s" % digest)


def test_a_compiled_copy_beside_it_is_never_run(tmp_path):
    """A __pycache__ .pyc that Python would take without looking at the source (unchecked hash):
    the study compiles the bytes it checked, never the .pyc."""
    script = release_beside(tmp_path)
    forged = tmp_path / "forged.py"
    forged.write_text((REPO / "recompute.py").read_text("utf-8").replace(
        "def audit(archive, report):", "def audit(archive, report):\n    print('FORGED')\n    raise SystemExit(0)\n\n\ndef unused(archive, report):"), "utf-8")
    cache = tmp_path / "__pycache__" / ("recompute.%s.pyc" % sys.implementation.cache_tag)
    py_compile.compile(str(forged), cfile=str(cache), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    forged.unlink()
    before = cache.read_bytes()
    with Platform(FIXTURES) as p:
        out = study(script, p.url + LINKED, "--matches")
    assert out.returncode == 0 and "FORGED" not in out.stdout, out.stdout[-500:] + out.stderr
    assert cache.read_bytes() == before and sorted(os.listdir(tmp_path / "__pycache__")) == [cache.name]


def test_the_study_names_the_recompute_py_it_ran_and_a_saved_study_keeps_both(tmp_path):
    digest = sha256(REPO / "recompute.py")
    with Platform(FIXTURES) as p:
        out = study(REPO / "recompute_study.py", p.url + LINKED, "--matches", "--save", tmp_path / "s")
        doc = study(REPO / "recompute_study.py", p.url + LINKED, "--matches", "--json")
    assert out.returncode == 0 and doc.returncode == 0, out.stderr + doc.stderr
    line = "  recompute.py: 3.1, sha256 %s" % digest
    assert line in out.stdout.splitlines(), out.stdout[:800]
    assert json.loads(doc.stdout)["sources"]["recompute.py"] == line.split(": ", 1)[1]
    about = json.loads((tmp_path / "s" / "saved.json").read_text())
    assert about["scripts"] == {
        "recompute.py": {"version": "3.1", "sha256": digest},
        "recompute_study.py": {"version": "3.1", "sha256": sha256(REPO / "recompute_study.py")}}
    match = json.loads(next((tmp_path / "s").glob("m_*/saved.json")).read_text())
    assert match["scripts"] == {"recompute_study.py": about["scripts"]["recompute_study.py"]}


@pytest.mark.parametrize("script", ["recompute.py", "recompute_study.py"])
def test_version_names_the_file_and_its_sha256(script):
    out = study(REPO / script, "--version", env={"COLUMNS": "100"})
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == "%s 3.1\nsha256 %s\n" % (script, sha256(REPO / script))
    narrow = study(REPO / script, "--version", env={"COLUMNS": "60"})  # the digest kept whole
    assert narrow.stdout == out.stdout


def test_version_of_a_script_read_from_stdin_says_its_digest_is_not_known():
    out = subprocess.run([sys.executable, "-", "--version"], input=(REPO / "recompute.py").read_bytes(),
                         capture_output=True)
    assert out.returncode == 0
    assert out.stdout == b"recompute.py 3.1\nsha256 not known: the script was not read from a file\n"


# ---------------------------------------------------------------- a connection, its own answer

def framed(before=b"", after=b"", when=lambda h: True):
    """A fault that answers as the platform does, with `before` ahead of the answer and `after`
    behind it, in the same write, where when(handler)."""
    def fn(h):
        real, h.wfile = h.wfile, io.BytesIO()
        url = urlsplit(h.path)
        h.match(*MATCH.match(url.path).groups(), parse_qs(url.query))
        answer, h.wfile = h.wfile.getvalue(), real
        h.wfile.write(before * when(h) + answer + after * when(h))
    return fn


def paths(*matches):
    return ["/api/matches/%s/%s" % (m, what) for m in matches for what in ("export", "report")]


def test_bytes_after_a_body_are_never_read_as_the_next_answer(tmp_path):
    """Page 3's answer is followed, in the same write, by a whole forged report: the report the
    run audits is the one it asked for."""
    report = json.loads((FIXTURES / "api/matches" / PAGED / "report.json").read_text())
    report["scorecards"][0]["fitnessIndex"] += 7
    body = json.dumps(report).encode()
    forged = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    fault = framed(after=forged, when=lambda h: "page=3" in h.path)
    with Platform(FIXTURES, keepalive=True, faults={paths(PAGED)[0]: fault}) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5)
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert "DIFFERS" not in child.out


def test_stray_bytes_after_one_match_leave_the_next_clean(tmp_path):
    fault = framed(after=b'gentId":"a_1",' * 4 + b"\r\n" * 4)  # 64 bytes
    with Platform(FIXTURES, keepalive=True, faults={paths(CLEAN)[1]: fault}) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN, PAGED], tmp_path, timeout=5)
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert "2 matches: 2 read" in child.out, child.out


def test_a_stray_crlf_after_each_body_costs_a_connection_not_the_record(tmp_path):
    faults = dict.fromkeys(paths(PAGED), framed(after=b"\r\n"))
    with Platform(FIXTURES, keepalive=True, faults=faults) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5)
        connections = p.connections
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert connections <= 7, connections  # a new one where the CRLF waits on the connection


EARLY_HINTS = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"


def test_interim_answers_are_passed_over_for_the_final_one(tmp_path):
    faults = dict.fromkeys(paths(PAGED), framed(before=EARLY_HINTS * 2))
    with Platform(FIXTURES, keepalive=True, faults=faults) as p:
        child = run_child("recompute.py", ["--base", p.url, PAGED], tmp_path, timeout=5)
        connections = p.connections
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert connections == 1


def test_a_study_end_to_end_behind_early_hints_reads_every_match(tmp_path):
    mids = sorted(os.listdir(FIXTURES / "api" / "matches"))
    faults = dict.fromkeys(paths(*mids), framed(before=EARLY_HINTS))
    with Platform(FIXTURES, keepalive=True, faults=faults) as p:
        child = run_child("recompute_study.py", [p.url + LINKED, "--matches", "--jobs", "2"],
                          tmp_path, timeout=5)
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)


# ---------------------------------------------------------------- secrets and proxies

@pytest.mark.parametrize("password", ["pw@SECRET", "pw SECRET", "p@w SECRET@x"])
@pytest.mark.parametrize("given", ["--base", "DAISHI_BASE"])
def test_a_password_of_any_characters_is_sent_never_shown_or_kept(tmp_path, password, given):
    saved = tmp_path / "copies"
    with Platform(FIXTURES) as p:
        secret = p.url.replace("http://", "http://kim:%s@" % password)
        argv = (["--base", secret] if given == "--base" else []) + ["--save", saved, CLEAN]
        child = run_child("recompute.py", argv, tmp_path, timeout=5,
                          env={"DAISHI_BASE": secret} if given != "--base" else {})
        sent = {h.get("Authorization") for h in p.headers}
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert sent == {"Basic " + base64.b64encode(("kim:" + password).encode()).decode()}
    kept = (saved / CLEAN / "saved.json").read_text()
    assert json.loads(kept)["address"] == p.url.replace("http://", "http://***@") + "/api/matches/" + CLEAN
    for part in ("kim", "SECRET", "@x"):
        assert part not in kept + child.out + child.err


@pytest.mark.parametrize("script", ["recompute.py", "recompute_study.py"])
@pytest.mark.parametrize("variable,value", [("HTTP_PROXY", "http://[::1"), ("http_proxy", "http://kim:pw@:80")])
def test_a_proxy_variable_that_is_no_address_is_named(tmp_path, script, variable, value):
    argv = ["--base", "http://records.invalid", CLEAN] if script == "recompute.py" else [
        "http://records.invalid" + LINKED]
    child = run_child(script, argv, tmp_path, timeout=2, env={variable: value})
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "%s is not a proxy's address" % variable in child.err and "pw" not in child.err, child.err
    assert "fault of this script" not in child.err


def test_a_record_read_through_a_proxy_says_so_in_text_json_and_saved_json(tmp_path):
    """The loopback platform answers a proxy's request (an absolute address) as its own: the
    records come through "the proxy", as any http:// proxy could change them."""
    with Platform(FIXTURES) as p:
        proxy = "the proxy 127.0.0.1:%d (named by HTTP_PROXY)" % int(p.url.rsplit(":", 1)[1])
        env = {"HTTP_PROXY": p.url.replace("http://", "http://kim:pw-SECRET@")}
        base = ["--base", "http://records.invalid"]
        text = run_child("recompute.py", base + ["--save", tmp_path / "c", CLEAN], tmp_path, 5, env)
        doc = run_child("recompute.py", base + ["--json", CLEAN], tmp_path, 5, env)
        served = run_child("recompute_study.py", ["http://records.invalid" + LINKED, "--json"],
                           tmp_path, 5, env)
    again = run_child("recompute.py", [tmp_path / "c"], tmp_path)
    for child in (text, doc, served, again):
        assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
        assert "SECRET" not in child.out + child.err
    assert "  read through %s" % proxy in text.out.splitlines(), text.out
    assert json.loads(doc.out)["matches"][0]["proxy"] == proxy
    assert json.loads((tmp_path / "c" / CLEAN / "saved.json").read_text())["proxy"] == proxy
    sources = json.loads(served.out)["sources"]
    assert sources["trials.csv"].endswith("/trials.csv through " + proxy), sources
    unwrapped = again.out.replace(" \\\n    ", " ")
    assert ("from http://records.invalid/api/matches/%s through %s, saved" % (CLEAN, proxy)) in unwrapped


# ---------------------------------------------------------------- Ctrl-C during --save

def test_no_thread_writes_a_folder_once_ctrl_c_has_removed_it(tmp_path):
    """The race in slow motion: a worker has made its folder, Ctrl-C removes every folder being
    written, and the worker goes on to write its copy, or to begin another: nothing is written."""
    rc = load_script("recompute")
    try:
        staged = rc.new_copy(str(tmp_path / "study" / CLEAN))
        assert os.listdir(tmp_path / "study") == [os.path.basename(staged)]
        rc.STOPPED.set()  # as start does on Ctrl-C, then removes each folder being written
        for part in list(rc.PARTS):
            rc.discard(part)
        with pytest.raises(rc.Unreadable, match="--save: interrupted"):
            rc.keep(staged, {"export/1.json": b"{}"}, {"address": "x", "kind": "match"},
                    str(tmp_path / "study" / CLEAN))
        with pytest.raises(rc.Unreadable, match="--save: interrupted"):
            rc.new_copy(str(tmp_path / "study" / PAGED))
        assert os.listdir(tmp_path / "study") == []
    finally:
        rc.STOPPED.clear()


def test_a_folder_is_named_for_removal_before_it_exists(tmp_path, monkeypatch):
    """A Ctrl-C between making the folder and naming it finds it named already."""
    rc = load_script("recompute")
    made = []

    def mkdir(path, *mode):
        if ".part-" in path:
            made.append(path in rc.PARTS)
            raise KeyboardInterrupt
        return real(path, *mode)
    real = os.mkdir
    monkeypatch.setattr(rc.os, "mkdir", mkdir)
    with pytest.raises(KeyboardInterrupt):
        rc.new_copy(str(tmp_path / CLEAN))
    assert made == [True]


@pytest.mark.parametrize("delay", [0, 0.1, 0.2, 0.35, 0.5, 0.7])
def test_ctrl_c_during_a_study_saved_end_to_end_leaves_no_folder(tmp_path, delay):
    with Platform(FIXTURES, keepalive=True, rate=400000) as p:
        child = subprocess.Popen(
            [sys.executable, str(REPO / "recompute_study.py"), p.url + LINKED, "--matches",
             "--save", str(tmp_path / "s"), "--jobs", "4"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, DAISHI_TIMEOUT="5"))
        while not p.requests and child.poll() is None:  # the script loaded and running
            time.sleep(0.01)
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    left = [name for name in os.listdir(tmp_path) if name != "s"]
    if child.returncode == 0:  # done before the signal: a whole copy, nothing beside it
        assert left == [] and (tmp_path / "s" / "saved.json").exists()
        return
    assert child.returncode == 130 and err == b"interrupted\n", (child.returncode, err)
    assert left == [] and not (tmp_path / "s").exists(), left


@pytest.mark.parametrize("option", ["--trials", "--seats", "--page", "--recipe"])
def test_a_file_of_the_users_is_never_kept_as_what_the_platform_served(tmp_path, option):
    """A copy --save writes says what the platform served; a file given by the user is refused
    with --save, so a later audit can never call it verified from the study's address."""
    given = tmp_path / "given"
    given.write_text("trial,arm\n")
    out = study(REPO / "recompute_study.py", "http://127.0.0.1:9" + "/u/kim/studies/s_eee65f53",
                "--save", tmp_path / "s", option, given)
    assert out.returncode == 2 and out.stdout == "" and not (tmp_path / "s").exists()
    assert out.stderr == ("recompute_study.py: --save keeps what is downloaded, not a file of yours "
                          "(--trials, --seats, --page, --recipe): leave one out (see recompute_study.py "
                          "--help)\n")
