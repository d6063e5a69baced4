"""A hostile server against both scripts, one case per attack family: it can
neither hang them (an absolute deadline per request, DAISHI_TIMEOUT), forge what
a person reads (one escaping function), exhaust memory, write through a symlink
under --save, nor turn a Ctrl-C or a closed pipe into a traceback."""
import hashlib
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import FIXTURES, REPO, load_script
from hostile_common import FORGED, answer, in_turn, run_child, run_main, safe_output_problems, trickle
from loopback import Platform

CLEAN = "m_b0bc344f1eac"
EXPORT = "/api/matches/%s/export" % CLEAN
STUDY = "/u/kim/studies/s_eee65f53"
TRIALS = STUDY + "/trials.csv"
SCRIPTS = {"match": ("recompute.py", EXPORT, lambda url: ["--base", url, CLEAN]),
           "study": ("recompute_study.py", TRIALS, lambda url: [url + STUDY])}
MAX_RSS_MB = 256


@pytest.fixture
def stop():
    event = threading.Event()
    yield event
    event.set()


def byte_by_byte(data):
    return lambda: (data[i:i + 1] for i in range(len(data)))


CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
HANGS = {
    "repeated 100 Continue": (lambda: itertools.repeat(b"HTTP/1.1 100 Continue\r\n\r\n"), 0),
    "dripped status line": (byte_by_byte(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"), 0.3),
    "dripped header line": (lambda: itertools.chain([b"HTTP/1.1 200 OK\r\nX-Pad: "], itertools.repeat(b"v")), 0.1),
    "dripped chunk-size line": (lambda: itertools.chain([CHUNKED], itertools.repeat(b"0")), 0.1),
    "endless trailers": (lambda: itertools.chain([CHUNKED + b"0\r\n"], itertools.repeat(b"X-T: v\r\n" * 64)), 0),
    "slow 409 body": (lambda: itertools.chain([b"HTTP/1.1 409 Conflict\r\nContent-Length: 40\r\n\r\n"],
                                              (b"{" for _ in range(40))), 0.3),
}


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
@pytest.mark.parametrize("hang", sorted(HANGS))
def test_hang_ends_at_the_deadline(tmp_path, stop, kind, hang):
    script, path, argv = SCRIPTS[kind]
    pieces, every = HANGS[hang]
    with Platform(FIXTURES, faults={path: trickle(stop, pieces, every)}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=1)
    stop.set()
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "within 1 s" in child.err, child.err
    assert child.seconds < 1 + 3, child.seconds
    assert child.peak_mb <= MAX_RSS_MB


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_a_retry_after_a_5xx_shares_the_deadline(tmp_path, stop, kind):
    """503 at once, then the retry dripped: the whole request still ends at its deadline
    (the retry once started a deadline of its own: twice the time and a pause)."""
    script, path, argv = SCRIPTS[kind]
    dripped = trickle(stop, byte_by_byte(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}       "), 0.2)
    with Platform(FIXTURES, faults={path: in_turn(answer(503, '{"reason": "busy"}'), dripped)}) as p:
        child = run_child(script, argv(p.url), tmp_path, timeout=2)
        tries = [r for r in p.requests if r.startswith(path)]
    stop.set()
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert len(tries) == 2 and "within 2 s" in child.err, (tries, child.err)
    assert child.seconds < 2 + 1.5, child.seconds


def test_deadline_variable_must_be_seconds(tmp_path):
    for script in ("recompute.py", "recompute_study.py"):
        child = run_child(script, ["x"], tmp_path, timeout="soon")
        assert child.code == 2 and "DAISHI_TIMEOUT" in child.err and "Traceback" not in child.err


# ---------------------------------------------------------------- forge

def match_folder(tmp_path, edit):
    folder = tmp_path / CLEAN
    shutil.copytree(str(FIXTURES / "api" / "matches" / CLEAN), str(folder))
    page, report = folder / "export" / "1.json", folder / "report.json"
    records = [json.loads(page.read_text()), json.loads(report.read_text())]
    edit(*records)
    page.write_text(json.dumps(records[0]))
    report.write_text(json.dumps(records[1]))
    return folder


def card(report, i=0):
    return report["scorecards"][i]


def erratum(**fields):
    e = {"id": "E1", "title": "t", "events": [], "agents": ["a_1"], "affects": ["wealth"], "scoresDepend": False}
    e.update(fields)
    return lambda page, report: page.__setitem__("errata", [e])


def both(key, value):
    def edit(page, report):
        page["archive"]["agents"][0][key] = value
        card(report)[key] = value
    return edit


MATCH_FORGERIES = {  # the field: (the edit, the exit it must end with)
    "rubricReason": (lambda page, report: report.__setitem__("rubricReason", FORGED), 0),
    "erratum title": (erratum(title=FORGED), 0),
    "erratum id": (erratum(id=FORGED), 0),
    "erratum seats": (erratum(agents=[FORGED]), 0),
    "erratum affects": (erratum(affects=[FORGED]), 0),
    "scorecard note": (lambda page, report: card(report).__setitem__("notes", [FORGED]), 0),
    "published grade": (lambda page, report: card(report).__setitem__("grade", FORGED), 1),
    "published achievement": (lambda page, report: card(report).__setitem__("achievements", [FORGED]), 1),
    "seat name": (both("name", FORGED), 0),
    "model name": (both("model", FORGED), 0),
}


def assert_escaped(o, code, as_json):
    """The documented exit, no raw control character, and the forged sequence shown escaped."""
    assert not safe_output_problems(o, code), safe_output_problems(o, code)
    if as_json:
        json.loads(o.out)
    else:
        assert "\\x1b[8m" in o.out, o.out


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case", sorted(MATCH_FORGERIES))
def test_forged_match_text_is_escaped(tmp_path, case, as_json):
    edit, code = MATCH_FORGERIES[case]
    folder = match_folder(tmp_path, edit)
    o = run_main(load_script("recompute"), [str(folder)] + (["--json"] if as_json else []))
    assert_escaped(o, code, as_json)


def test_forged_agent_id_is_escaped(tmp_path):
    """An agent id, everywhere the record names it: the same id, so the match reads, escaped."""
    folder = match_folder(tmp_path, lambda page, report: None)
    for f in (folder / "export" / "1.json", folder / "report.json"):
        f.write_text(f.read_text().replace('"a_1"', json.dumps(FORGED)))
    o = run_main(load_script("recompute"), [str(folder)])
    assert o.code == 0, o.code
    assert not safe_output_problems(o, 0)
    assert "\\x1b[8m" in o.out + o.err


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_forged_409_reason_is_escaped(tmp_path, kind):
    script, path, argv = SCRIPTS[kind]
    with Platform(FIXTURES, faults={path: answer(409, json.dumps({"reason": FORGED + "x" * 5000}))}) as p:
        child = run_child(script, argv(p.url), tmp_path)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "\\x1b]0;owned\\x07" in child.err and "\\u202e" in child.err, child.err
    assert child.err.count("\n") == 1 and len(child.err) < 700, child.err


def study_root(tmp_path, trials=None, seats=None, profile=None):
    root = tmp_path / "root"
    shutil.copytree(str(FIXTURES / "u"), str(root / "u"))
    files = {"trials": root / STUDY[1:] / "trials.csv", "seats": root / STUDY[1:] / "seats.csv",
             "profile": root / "u" / "kim.json"}
    for name, edit in (("trials", trials), ("seats", seats)):
        if edit:
            files[name].write_text(edit(files[name].read_text(encoding="utf-8")), encoding="utf-8")
    if profile:
        document = json.loads(files["profile"].read_text(encoding="utf-8"))
        reading = [s for s in document["studies"] if s["id"] == "s_eee65f53"][0]["reading"]
        profile(reading)
        files["profile"].write_text(json.dumps(document))
    return root


def csv_quoted(text):
    return '"%s"' % text.replace('"', '""')


STUDY_FORGERIES = {
    "arm label": ({"trials": lambda t: t.replace(",with memory,", "," + csv_quoted(FORGED) + ",")}, 0),
    "model name": ({"seats": lambda t: t.replace(",model-b,", "," + csv_quoted(FORGED) + ",")}, 1),
    "page figure": ({"profile": lambda r: r["comparisons"][0].__setitem__("mean", FORGED)}, 1),
    "withheld reason": ({"profile": lambda r: r["comparisons"][0].update(withheld=FORGED, verdict=None)}, 0),
    "page model": ({"profile": lambda r: r["models"][0].__setitem__("model", FORGED)}, 1),
}


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case", sorted(STUDY_FORGERIES))
def test_forged_study_text_is_escaped(tmp_path, case, as_json):
    edits, code = STUDY_FORGERIES[case]
    with Platform(study_root(tmp_path, **edits)) as p:
        o = run_main(load_script("recompute_study"), [p.url + STUDY] + (["--json"] if as_json else []))
    assert_escaped(o, code, as_json)


# ---------------------------------------------------------------- exhaust

def test_a_60_mb_page_of_empty_lists_is_refused_in_bounded_memory(tmp_path):
    root = tmp_path / "root"
    export = root / "api" / "matches" / CLEAN / "export"
    export.mkdir(parents=True)
    with open(str(export / "1.json"), "w") as f:
        f.write('{"page": 1, "pageCount": 1, "errata": [], "events": [')
        f.write("[]," * (20 << 20))
        f.write("[]]}")
    with Platform(root) as p:
        child = run_child("recompute.py", ["--base", p.url, CLEAN], tmp_path, timeout=30)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "export page 1" in child.err and "JSON values" in child.err, child.err
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


def test_a_3_mb_profile_builds_one_path_in_bounded_memory(tmp_path):
    """A 1 MB key over 900,000 zeros and one number no double holds: one path, cut when shown."""
    def profile(reading):
        reading["x" * (1 << 20)] = [0] * 900000 + [10 ** 400]
    root = study_root(tmp_path, profile=profile)
    with Platform(root) as p:
        child = run_child("recompute_study.py", [p.url + STUDY], tmp_path, timeout=30)
    assert not safe_output_problems(child, 2), safe_output_problems(child, 2)
    assert "[900000]" not in child.err and "characters in all" in child.err and len(child.err) < 700, child.err
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb
    rs = load_script("recompute_study")
    with pytest.raises(rs.Unreadable, match=r"^p: a\[1\]\.b\[1\]: not a finite number, nor an integer within"):
        rs.parse_json(b'{"a": [0, {"b": [1, 1e400]}]}', "p", True)
    assert rs.parse_json(b'{"a": [0, {"b": [1, 1e400]}]}', "p") == {"a": [0, {"b": [1, float("inf")]}]}
    assert rs.parse_json(b'{"a": [0, 1.5]}', "p", True) == {"a": [0, 1.5]}


def test_a_2_mb_arm_label_pads_no_line(tmp_path):
    label = "L" * (2 << 20)
    root = study_root(tmp_path, trials=lambda t: t.replace(",with memory,", "," + label + ",", 1))
    with Platform(root) as p:
        child = run_child("recompute_study.py", [p.url + STUDY], tmp_path, timeout=30)
    assert not safe_output_problems(child, 0), safe_output_problems(child, 0)
    assert len(child.out) < 60000 and max(len(line) for line in child.out.splitlines()) < 400, len(child.out)
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


def test_ranks_by_bisection_agree_with_counting_and_scale():
    rc = load_script("recompute")
    rng = random.Random(7)
    wealths = [rng.choice([0, 0.1, 0.30000000000000004, 0.3, 12.5, 1e300, 5]) for _ in range(2000)]
    assert rc.ranks(wealths, "2.4") == [1 + len([w for w in wealths if w > mine]) for mine in wealths]
    big = [rng.random() * 1000 for _ in range(80000)]
    t0 = time.monotonic()
    out = rc.ranks(big, "2.3")
    assert time.monotonic() - t0 < 2 and sorted(out) == list(range(1, 80001))


# ---------------------------------------------------------------- --save

@pytest.mark.parametrize("link", ["DIR/<id>", "DIR/<id>/export", "DIR/<id>/report.json"])
def test_match_save_never_writes_through_a_symlink(tmp_path, link):
    """A DIR/<id> already there (a link, or a folder holding one) and not a whole copy: refused
    before a request; keep places a copy by renaming a new folder, never through a link."""
    outside, save = tmp_path / "outside", tmp_path / "save"
    outside.mkdir()
    (save / CLEAN).mkdir(parents=True)
    target = {"DIR/<id>": save / CLEAN, "DIR/<id>/export": save / CLEAN / "export",
              "DIR/<id>/report.json": save / CLEAN / "report.json"}[link]
    if link == "DIR/<id>":
        target.rmdir()
    (outside / "report.json").write_text("mine")
    target.symlink_to(outside / ("report.json" if link.endswith(".json") else ""))
    rc = load_script("recompute")
    with Platform(FIXTURES) as p:
        o = run_main(rc, ["--base", p.url, CLEAN, "--save", str(save)])
        requests = list(p.requests)
    assert not safe_output_problems(o, 2), safe_output_problems(o, 2)
    assert "holds a copy with no saved.json" in o.err and requests == [], (o.err, requests)
    fresh = save / "fresh"
    staged = rc.new_copy(str(fresh))
    fresh.symlink_to(outside)   # a link put where the copy goes, while it is written
    with pytest.raises(rc.Unreadable, match=r"cannot keep .*fresh \(File exists\)"):
        rc.keep(staged, {"report.json": b"{}"}, {"address": "x"}, str(fresh))
    assert sorted(os.listdir(str(outside))) == ["report.json"] and (outside / "report.json").read_text() == "mine"
    assert not os.path.exists(staged)


def test_study_audit_save_never_writes_through_a_symlink(tmp_path):
    """recompute_study.py --matches --save DIR: a DIR there already (a link in it) is refused before
    any request, nothing written; a new DIR gets every match whole, each with saved.json."""
    study = "/u/linked-lab/studies/s_9f54f5e8"
    outside, save = tmp_path / "outside", tmp_path / "save"
    outside.mkdir()
    save.mkdir()
    (outside / "trials.csv").write_text("mine")
    (save / "trials.csv").symlink_to(outside / "trials.csv")
    with Platform(FIXTURES) as p:
        o = run_main(load_script("recompute_study"), [p.url + study, "--matches", "--save", str(save)])
        asked = list(p.requests)
        fresh = run_main(load_script("recompute_study"), [p.url + study, "--matches", "--save",
                                                          str(tmp_path / "fresh")])
    assert o.code == 2 and "is there already" in o.err and asked == [], o.err
    assert sorted(os.listdir(str(outside))) == ["trials.csv"] and (outside / "trials.csv").read_text() == "mine"
    assert (save / "trials.csv").is_symlink()
    assert fresh.code == 0, fresh.err
    folders = sorted(n for n in os.listdir(str(tmp_path / "fresh")) if n.startswith("m_"))
    assert len(folders) == 6 and all((tmp_path / "fresh" / n / "saved.json").is_file() for n in folders)
    assert not [f for f in tmp_path.rglob(".*part-*")]


def test_study_save_never_writes_through_a_symlink(tmp_path):
    outside, save = tmp_path / "outside", tmp_path / "save"
    outside.mkdir()
    save.mkdir()
    (outside / "trials.csv").write_text("mine")
    (save / "trials.csv").symlink_to(outside / "trials.csv")
    with Platform(FIXTURES) as p:
        o = run_main(load_script("recompute_study"), [p.url + STUDY, "--save", str(save)])
    assert o.code == 2 and "is there already" in o.err and (outside / "trials.csv").read_text() == "mine"
    assert (save / "trials.csv").is_symlink() and sorted(os.listdir(str(save))) == ["trials.csv"]


# ---------------------------------------------------------------- Ctrl-C, closed pipe

@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_ctrl_c_is_one_line_exit_130_nothing_half_saved(tmp_path, stop, kind):
    script, path, argv = SCRIPTS[kind]
    if kind == "match":  # page 1 saved whole, then the report hangs
        path = "/api/matches/%s/report" % CLEAN
    else:
        path = STUDY + "/seats.csv"
    save = tmp_path / "save"
    hang = trickle(stop, lambda: itertools.chain([b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"],
                                                 itertools.repeat(b" ")), 0.2)
    with Platform(FIXTURES, faults={path: hang}) as p:
        child = subprocess.Popen([sys.executable, str(REPO / script)] + argv(p.url) + ["--save", str(save)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=dict(os.environ, DAISHI_TIMEOUT="50"))
        deadline = time.monotonic() + 20
        while not any(r.startswith(path) for r in p.requests) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    stop.set()
    assert child.returncode == 130 and err == b"interrupted\n" and out == b"", (child.returncode, err)
    assert not save.exists() or os.listdir(str(save)) == []  # a copy is whole or absent


CLOSED_PIPE = {
    "match": ["recompute.py", str(FIXTURES / "api" / "matches" / CLEAN)],  # less than a buffer: seen at the flush
    "study": ["recompute_study.py", "https://daishi.ai" + STUDY, "--trials", str(FIXTURES / STUDY[1:] / "trials.csv"),
              "--seats", str(FIXTURES / STUDY[1:] / "seats.csv"), "--page", str(FIXTURES / "u" / "kim.json")],
}


@pytest.mark.parametrize("kind", sorted(CLOSED_PIPE))
def test_closed_stdout_is_a_quiet_exit_141(kind):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before a byte is written (`| head -0`)
    script, *args = CLOSED_PIPE[kind]
    child = subprocess.run([sys.executable, str(REPO / script)] + args, stdout=write, stderr=subprocess.PIPE, timeout=60)
    os.close(write)
    assert child.returncode == 141 and child.stderr == b"", (child.returncode, child.stderr)


def test_study_audit_ctrl_c_with_save_is_exit_130_nothing_half_saved(tmp_path, stop):
    """recompute_study.py --matches, --jobs 4 and --save, one match's report hanging: Ctrl-C ends
    at once with `interrupted`; the hanging match has no report and no saved.json, no temporary
    file is left, and every match with saved.json is whole."""
    study, hung = "/u/linked-lab/studies/s_9f54f5e8", "m_4be7ac37a1d7"
    path, save = "/api/matches/%s/report" % hung, tmp_path / "save"
    hang = trickle(stop, lambda: itertools.chain([b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"],
                                                 itertools.repeat(b" ")), 0.2)
    with Platform(FIXTURES, faults={path: hang}) as p:
        child = subprocess.Popen([sys.executable, str(REPO / "recompute_study.py"), p.url + study, "--matches",
                                  "--jobs", "4", "--save", str(save)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=dict(os.environ, DAISHI_TIMEOUT="50"))
        deadline = time.monotonic() + 20
        while not any(r.startswith(path) for r in p.requests) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    stop.set()
    assert child.returncode == 130 and err == b"interrupted\n", (child.returncode, err)
    assert time.monotonic() - started < 5
    assert not save.exists() and os.listdir(str(tmp_path)) == []  # the study's copy: whole or absent
