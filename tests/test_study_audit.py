"""recompute.py on a study end to end: every trial's match audited, every row tied to its record."""
import csv
import hashlib
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time

from conftest import FIXTURES, REPO, run_script
from loopback import Platform

STUDY = "/u/linked-lab/studies/s_9f54f5e8"   # fixtures: a series of 6 matches, 4 seats each
STUDY_DIR = FIXTURES / STUDY.lstrip("/")
M1 = "m_4be7ac37a1d7"                         # trial 1 arm 0


def unwrapped(text):
    """A line put() wrapped at 100 columns (at a space, with ` \\`) joined again."""
    return text.replace(" \\\n    ", " ")


def run(platform, *args):
    return run_script("recompute.py", "--base", platform.url, *args)


def findings(document):
    """The result as the manifest's findings, to compare as sets."""
    out = set()
    for m in document["matches"]:
        trial, arm = m["trials"][0]
        if "error" in m:
            out.add(("missing", trial, arm, m["match"], "404" in m["error"]))
        for a in m["audits"]:
            for d in a["differs"]:
                out.add(("figure", m["match"], trial, arm, d["seat"], d["figure"], d["published"], d["recomputed"]))
    for d in document["differences"]:
        out.add(("column", d["file"], d["trial"], d["arm"], d["seat"], d["column"], d["value"], d["record"]))
    return out


def expected_findings(study):
    out = set()
    for f in study["findings"]:
        if "status" in f:
            out.add(("missing", f["trial"], f["arm"], f["match"], f["status"] == 404))
        elif "figure" in f:
            out.add(("figure", f["match"], f["trial"], f["arm"], f["seat"], f["figure"], f["published"],
                     f["recomputed"]))
        else:
            out.add(("column", "seats.csv", f["trial"], f["arm"], f["seat"], f["column"], f["seatsCsv"], f["record"]))
    return out


def test_every_linked_study_comes_out_as_the_manifest_says(conformance, conformance_platform):
    manifest = json.loads((conformance / "linked_manifest.json").read_text())
    assert len(manifest["studies"]) == 8
    for study in manifest["studies"]:
        out = run(conformance_platform, study["url"], "--json")
        assert out.returncode == study["endToEndExit"], (study["address"], out.stderr)
        document = json.loads(out.stdout)
        assert document["exit"] == study["endToEndExit"]
        assert findings(document) == expected_findings(study), study["address"]
        assert document["summary"]["matches"] == len(study["matches"])
        if study["endToEnd"] == "unreadable":
            missing = study["findings"][0]["match"]
            assert missing in out.stderr and out.stderr.count("\n") == 1


def test_linked_text_output_names_the_column(conformance, conformance_platform):
    out = run(conformance_platform, "/u/linked-tamper/studies/s_a05e5269")
    assert out.returncode == 1, out.stderr
    assert "  seats.csv line 9 (trial 1 arm 1 seat 4) gathers: file 4, archive 3\n" in out.stdout
    assert "seats.csv agrees with the records for 31 of 32 rows\n" in out.stdout
    assert "1 column differs:\n  (trial 1 arm 1 seat 4) gathers: file 4, archive 3\n" in out.stdout


def test_fixture_study_audits_clean(fixtures_platform):
    out = run(fixtures_platform, "https://daishi.ai" + STUDY)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "%s (trial 1 arm 0) under 2.4: figures same" % M1 in out.stdout
    assert "\n6 matches, 0 unreadable\n" in out.stdout
    assert "matches that recompute: 6 of 6; Fitness Index reproduced for 24 of 24 seats\n" in out.stdout
    assert "trials.csv agrees with the records for 6 of 6 rows\n" in out.stdout
    assert "seats.csv agrees with the records for 24 of 24 rows\n" in out.stdout
    assert all(len(line) <= 100 for line in out.stdout.splitlines())
    asked = [r for r in fixtures_platform.requests if r.startswith("/api/matches/%s/report" % M1)]
    assert sorted(asked) == ["/api/matches/%s/report" % M1, "/api/matches/%s/report?rubric=2.4" % M1]


def copy_study(tmp_path):
    """A served root of changed files, laid over the fixtures."""
    root = tmp_path / "root"
    shutil.copytree(STUDY_DIR, root / STUDY.lstrip("/"))
    return root


def edit_csv(path, line, column, value):
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    rows[line - 1][rows[0].index(column)] = value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def run_with_one_field(tmp_path, name, line, column, value):
    """The study audited with one field of trials.csv or seats.csv changed."""
    root = copy_study(tmp_path)
    edit_csv(root / STUDY.lstrip("/") / name, line, column, value)
    with Platform(root, FIXTURES) as platform:
        return run(platform, STUDY)


def test_a_changed_seats_value_and_a_changed_report_figure_are_caught_by_name(tmp_path):
    root = copy_study(tmp_path)
    edit_csv(root / STUDY.lstrip("/") / "seats.csv", 3, "gathers", "141")     # trial 1 arm 0 seat 2: 140
    match = root / "api" / "matches" / M1
    for name in ("report.json", "report/2.4.json"):
        report = json.loads((FIXTURES / "api" / "matches" / M1 / name).read_text())
        assert report["scorecards"][2]["wealth"] == 351.5
        report["scorecards"][2]["wealth"] = 351.51
        (match / name).parent.mkdir(parents=True, exist_ok=True)
        (match / name).write_text(json.dumps(report))
    with Platform(root, FIXTURES) as platform:
        out = run(platform, STUDY)
        document = json.loads(run(platform, STUDY, "--json").stdout)
    assert out.returncode == 1, out.stderr
    assert "  seats.csv line 3 (trial 1 arm 0 seat 2) gathers: file 141, archive 140\n" in out.stdout
    assert "  %s seat 3 wealth: published 351.51, recomputed 351.5\n" % M1 in out.stdout
    assert "matches that recompute: 5 of 6; Fitness Index reproduced for 24 of 24 seats\n" in out.stdout
    assert "seats.csv agrees with the records for 23 of 24 rows\n" in out.stdout
    assert all(len(line) <= 100 for line in out.stdout.splitlines())
    assert document["exit"] == 1
    assert findings(document) == {
        ("column", "seats.csv", 1, 0, 2, "gathers", "141", "140"),
        ("figure", M1, 1, 0, 3, "wealth", 351.51, 351.5),
    }


def test_trials_fields_are_tied_too(tmp_path):
    root = copy_study(tmp_path)
    trials = root / STUDY.lstrip("/") / "trials.csv"
    edit_csv(trials, 2, "rounds_planned", "401")
    edit_csv(trials, 3, "value", "0.309")
    with Platform(root, FIXTURES) as platform:
        document = json.loads(run(platform, STUDY, "--json").stdout)
    assert document["exit"] == 1
    assert findings(document) == {
        ("column", "trials.csv", 1, 0, None, "rounds_planned", "401", "400"),
        ("column", "trials.csv", 2, 0, None, "value", "0.309", "0.308"),
    }


def test_saved_study_re_audits_offline(fixtures_platform, tmp_path):
    saved = tmp_path / "saved"
    out = run(fixtures_platform, STUDY, "--save", saved)
    assert out.returncode == 0, out.stderr
    assert (saved / "trials.csv").read_bytes() == (STUDY_DIR / "trials.csv").read_bytes()
    assert (saved / M1 / "export" / "1.json").is_file() and (saved / M1 / "report" / "2.4.json").is_file()
    about = json.loads((saved / "saved.json").read_text())   # the schema recompute_study.py --save writes
    assert sorted(about) == ["address", "files", "saved", "script"]
    assert about["address"] == fixtures_platform.url + STUDY and re.fullmatch(r"[-0-9]{10}T[:0-9]{8}Z", about["saved"])
    assert about["files"] == {n: hashlib.sha256((STUDY_DIR / n).read_bytes()).hexdigest()
                              for n in ("trials.csv", "seats.csv")}
    offline = run_script("recompute.py", saved, "--base", "http://127.0.0.1:9")   # nothing listens there
    assert offline.returncode == 0, offline.stderr
    first, rest = unwrapped(offline.stdout).split("\n", 1)
    assert all(len(line) <= 100 for line in offline.stdout.splitlines())
    assert first == "saved copy of %s, saved %s (%s)" % (about["address"], about["saved"], saved)
    assert rest == out.stdout
    again = run(fixtures_platform, STUDY, "--save", saved)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == ("recompute.py: %s: --save %s: that folder already holds a saved study (saved.json): "
                            "save into another folder, or compare with --against\n" % (STUDY, saved))
    assert json.loads((saved / "saved.json").read_text()) == about
    (saved / M1 / "report" / "2.4.json").unlink()
    broken = run_script("recompute.py", saved)
    assert broken.returncode == 2
    assert "%s (trial 1 arm 0): " % M1 in broken.stderr and "2.4.json: cannot read" in broken.stderr


def test_against_a_saved_study_names_each_change(fixtures_platform, tmp_path):
    saved = tmp_path / "saved"
    assert run(fixtures_platform, STUDY, "--save", saved).returncode == 0
    saved_at = json.loads((saved / "saved.json").read_text())["saved"]
    same = run(fixtures_platform, STUDY, "--against", saved)
    assert same.returncode == 0, same.stderr
    assert "\nunchanged since %s (%s)\n\n6 matches, 0 unreadable\n" % (saved_at, saved) in unwrapped(same.stdout)
    root = copy_study(tmp_path)
    edit_csv(root / STUDY.lstrip("/") / "seats.csv", 3, "gathers", "141")
    report = json.loads((FIXTURES / "api" / "matches" / M1 / "report" / "2.4.json").read_text())
    report["scorecards"][2]["wealth"] = 351.51
    (root / "api" / "matches" / M1 / "report").mkdir(parents=True)
    (root / "api" / "matches" / M1 / "report" / "2.4.json").write_text(json.dumps(report))
    with Platform(root, FIXTURES) as platform:
        out = run(platform, STUDY, "--against", saved)
        document = json.loads(run(platform, STUDY, "--against", saved, "--json").stdout)
    assert out.returncode == 1, out.stderr
    assert ("\nCHANGED since %s (%s): 2 changes\n  seats.csv line 3 gathers: 140 -> 141\n"
            "  %s/report/2.4.json scorecards[2].wealth: 351.5 -> 351.51\n\n6 matches" % (saved_at, saved, M1)
            in unwrapped(out.stdout))
    assert document["exit"] == 1
    assert document["against"] == {"copy": str(saved), "savedAt": saved_at, "changes": [
        {"file": "seats.csv", "path": "line 3 gathers", "change": "changed", "old": "140", "new": "141"},
        {"file": M1 + "/report/2.4.json", "path": "scorecards[2].wealth", "change": "changed",
         "old": 351.5, "new": 351.51}]}
    (saved / M1).rename(saved / "m_000000000000")   # a match on each side only; the study's files as saved
    out = run(fixtures_platform, STUDY, "--against", saved)
    assert out.returncode == 1, out.stderr
    assert ("): 2 changes\n  m_000000000000 (the match): saved -> (absent)\n"
            "  %s (the match): (absent) -> read now\n" % M1) in out.stdout
    wrong = run(fixtures_platform, STUDY, "--against", saved / "m_000000000000", "--save", tmp_path / "new")
    assert wrong.returncode == 2 and not (tmp_path / "new").exists()
    assert wrong.stderr == ('recompute.py: %s: --against compares a study with a study folder --save wrote: %s\n'
                            % (STUDY, saved / "m_000000000000"))


def test_a_missing_match_is_exit_2_and_the_others_are_still_audited(tmp_path):
    out = run_with_one_field(tmp_path, "trials.csv", 3, "match", "m_000000000000")
    assert out.returncode == 2
    assert out.stderr == "recompute.py: m_000000000000 (trial 2 arm 0): export page 1: 404 not found\n"
    assert "\n6 matches, 1 unreadable: m_000000000000\n" in out.stdout
    assert "matches that recompute: 5 of 6; Fitness Index reproduced for 20 of 20 seats\n" in out.stdout


def test_a_bad_field_names_file_line_and_column(tmp_path):
    out = run_with_one_field(tmp_path, "seats.csv", 4, "gathers", "4\x1bx")
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == ('recompute.py: %s: seats.csv line 4, column gathers: "4\\u001bx" is not of the form '
                          "-?[0-9]{1,15}\n" % STUDY)


def test_a_study_is_audited_alone(fixtures_platform):
    out = run(fixtures_platform, STUDY, M1)
    assert out.returncode == 2
    assert "a study is audited alone" in out.stderr


def test_ctrl_c_stops_cleanly(tmp_path):
    def stall(handler):
        time.sleep(20)
    faults = {"/api/matches/%s/export" % M1: stall}
    with Platform(FIXTURES, faults=faults) as platform:
        process = subprocess.Popen([sys.executable, str(REPO / "recompute.py"), "--base", platform.url, STUDY],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not any(M1 in r for r in platform.requests) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=15)
    assert process.returncode == 130
    assert stderr == "interrupted\n"
    assert time.monotonic() - started < 5
