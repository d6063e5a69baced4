"""recompute_study.py --matches: a study end to end, every trial's match audited by recompute.py and
every row tied to its record (study.md §8), read once by the study script's own reader."""
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
M2 = "m_7ec03a773300"                         # trial 2 arm 0
PAIRED = "/u/kim/studies/s_eee65f53"          # fixtures: a paired study (no match records bundled)


def run(platform, path, *args):
    return run_script("recompute_study.py", platform.url + path, "--matches", *args)


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


def flat(text):
    """Text with its line breaks and wrapping undone, for lines a long folder name wraps."""
    return " ".join(text.replace(" \\\n", " ").split())


def failed_checks(document):
    return [c["check"] for c in document["checks"] if not c["agrees"]]


def test_every_linked_study_comes_out_as_the_manifest_says(conformance, conformance_platform, tmp_path):
    manifest = json.loads((conformance / "linked_manifest.json").read_text())
    assert len(manifest["studies"]) == 8
    for study in manifest["studies"]:
        saved = tmp_path / study["address"].rsplit("/", 1)[1]
        out = run(conformance_platform, study["address"], "--json", "--save", saved)
        assert out.returncode == study["endToEndExit"], (study["address"], out.stderr)
        document = json.loads(out.stdout)
        assert document["exit"] == study["endToEndExit"]
        assert findings(document) == expected_findings(study), study["address"]
        assert document["summary"]["matches"] == len(study["matches"])
        assert failed_checks(document) == []   # the files agree with each other and the page
        if study["endToEnd"] == "unreadable":
            missing = study["findings"][0]["match"]
            assert missing in out.stderr and out.stderr.count("\n") == 1
        offline = run_script("recompute_study.py", saved, "--matches", "--json")
        assert offline.returncode == study["endToEndExit"], (study["address"], offline.stderr)
        unflagged = lambda found: {f[:4] if f[0] == "missing" else f for f in found}   # offline: no 404
        assert unflagged(findings(json.loads(offline.stdout))) == unflagged(expected_findings(study))


def test_linked_text_output_names_the_column(conformance, conformance_platform):
    out = run(conformance_platform, "/u/linked-tamper/studies/s_a05e5269")
    assert out.returncode == 1, out.stderr
    assert ("\nrow fields that differ from their match's record: 1\n"
            "  seats.csv line 9 (trial 1 arm 1 seat 4) gathers: file 4, archive 3\n") in out.stdout
    assert "rows that agree with their match's record: trials.csv 8 of 8, seats.csv 31 of 32\n" in out.stdout


def test_fixture_study_audits_clean(fixtures_platform):
    out = run(fixtures_platform, STUDY)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    # each names the report read: its rows name 2.4, read as report?rubric=2.4 (its own rubric too)
    assert "\n%s (trial 1 arm 0) report?rubric=2.4: figures same 68 of 68; checks agree 68 of 68\n" % M1 in out.stdout
    assert "\nmatches that recompute: 6 of 6 named\n" in out.stdout
    assert "\nrows that agree with their match's record: trials.csv 6 of 6, seats.csv 24 of 24\n" in out.stdout
    assert "each seat's scores as its match's report published them" not in out.stdout
    assert all(len(line) <= 100 for line in out.stdout.splitlines())
    asked = [r for r in fixtures_platform.requests if r.startswith("/api/matches/%s/report" % M1)]
    assert sorted(asked)[-2:] == ["/api/matches/%s/report" % M1, "/api/matches/%s/report?rubric=2.4" % M1]


def copy_study(tmp_path, study=STUDY):
    """A served root of changed files, laid over the fixtures."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / study.lstrip("/"), root / study.lstrip("/"))
    return root


def edit_csv(path, edits):
    """edits: {(line, column): value}; a line of None removes the column."""
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    for (line, column), value in edits.items():
        lines = range(2, len(rows) + 1) if line == "every" else [line]
        index = rows[0].index(column)
        for n in lines:
            rows[n - 1][index] = value(rows[n - 1][index]) if callable(value) else value
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def run_edited(tmp_path, trials=None, seats=None, *args):
    root = copy_study(tmp_path)
    for name, edits in (("trials.csv", trials), ("seats.csv", seats)):
        if edits:
            edit_csv(root / STUDY.lstrip("/") / name, edits)
    with Platform(root, FIXTURES) as platform:
        return run(platform, STUDY, "--json", *args)


def test_a_changed_seats_value_and_a_changed_report_figure_are_caught_by_name(tmp_path):
    root = copy_study(tmp_path)
    edit_csv(root / STUDY.lstrip("/") / "seats.csv", {(3, "gathers"): "141"})   # trial 1 arm 0 seat 2: 140
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
    assert "\nDIFFERS a_3 wealth: published 351.51, recomputed 351.5, -1 in the last place\n" in out.stdout
    assert "\nmatches that recompute: 5 of 6 named\n" in out.stdout
    assert "trials.csv 6 of 6, seats.csv 23 of 24\n" in out.stdout
    assert all(len(line) <= 100 for line in out.stdout.splitlines())
    assert document["exit"] == 1
    assert findings(document) == {
        ("column", "seats.csv", 1, 0, 2, "gathers", "141", "140"),
        ("figure", M1, 1, 0, 3, "wealth", 351.51, 351.5),
    }
    assert document["summary"]["rowsAgree"] == {"trials.csv": 6, "seats.csv": 23}
    report = platform.url + "/api/matches/%s/report?rubric=2.4" % M1  # the report read, named
    assert document["matches"][0]["audits"][0]["report"] == report
    assert "\n  report read: %s\n" % report in out.stdout


def test_trials_fields_are_tied_too(tmp_path):
    out = run_edited(tmp_path, {(2, "rounds_planned"): "401", (3, "value"): "0.309"})
    document = json.loads(out.stdout)
    assert out.returncode == 1 and document["exit"] == 1
    assert findings(document) == {
        ("column", "trials.csv", 1, 0, None, "rounds_planned", "401", "400"),
        ("column", "trials.csv", 2, 0, None, "value", "0.309", "0.308"),
    }


def test_a_number_is_the_records_same_number_not_one_a_float_rounds_to(tmp_path):
    """`140.0` is 140; `140.000000000000001` (which float() reads as 140) is not."""
    longer = lambda digits: lambda v: v + digits if "." in v else v + "." + digits
    out = run_edited(tmp_path, None, {(3, "reputation"): longer("0"), (4, "spend"): longer("00")})
    assert out.returncode == 0, out.stdout[-2000:]
    out = run_edited(tmp_path / "b", None, {(3, "reputation"): longer("000000000000001")})
    document = json.loads(out.stdout)
    assert out.returncode == 1
    assert [(d["line"], d["column"]) for d in document["differences"]] == [(3, "reputation")]


# ------------------------------------------------- what the looser reader let through (issue cases)

def test_blanked_matches_fail_a_check_never_fewer_rows(tmp_path):
    """Every `match` blanked and values raised: the check names the first row, the values differ."""
    out = run_edited(tmp_path, {("every", "match"): "", ("every", "value"): lambda v: "%.3f" % (float(v) + 0.3)})
    document = json.loads(out.stdout)
    assert out.returncode == 1
    assert "every trials.csv row with a value names its match" in failed_checks(document)
    assert document["summary"]["matches"] == 0
    assert {f["key"].get("figure") for f in document["figures"] if not f["same"]} >= {"value"}
    out = run_edited(tmp_path / "b", {(3, "match"): ""})    # one row only: that row named
    document = json.loads(out.stdout)
    check = [c for c in document["checks"] if c["check"].startswith("every trials.csv row with a value")][0]
    assert out.returncode == 1 and check["detail"] == "trials.csv line 3: trial 2 arm 0 has a value and names no match"
    assert document["summary"]["matches"] == 5


def test_one_match_named_by_two_rows_fails_its_check(tmp_path):
    out = run_edited(tmp_path, {(3, "match"): M1})
    document = json.loads(out.stdout)
    assert out.returncode == 1
    check = [c for c in document["checks"] if c["check"] == "no match is named by two trials.csv rows"][0]
    assert check == {"check": "no match is named by two trials.csv rows", "agrees": False,
                     "detail": "trials.csv line 2: %s is named by 2 rows" % M1}
    assert document["summary"]["matches"] == 5
    assert any(d["trial"] == 2 for d in document["differences"])   # trial 2's rows are not M1's record


def test_another_studys_files_at_this_address_fail(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "u", root / "u")
    for name in ("trials.csv", "seats.csv"):
        text = (STUDY_DIR / name).read_text().replace("s_9f54f5e8", "s_9f54f5e9")
        (root / STUDY.lstrip("/") / name).write_text(text)
    with Platform(root, FIXTURES) as platform:
        out = run(platform, STUDY, "--json")
    assert out.returncode == 1
    assert "every trials.csv and seats.csv row names this study" in failed_checks(json.loads(out.stdout))


def test_seats_without_study_and_canary_columns_is_unreadable(tmp_path):
    root = copy_study(tmp_path)
    path = root / STUDY.lstrip("/") / "seats.csv"
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    rows = [list(reversed(row[1:-1])) for row in rows]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())
    with Platform(root, FIXTURES) as platform:
        out = run(platform, STUDY)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("recompute_study.py: cannot read the study: seats.csv line 1: the header is not")
    assert not [r for r in platform.requests if r.startswith("/api/")]


def test_trials_cut_inside_its_last_canary_fails_the_canary_check():
    body = (STUDY_DIR / "trials.csv").read_bytes().rstrip(b"\n")[:-10]

    def close_delimited(handler):   # no Content-Length: the answer ends where the connection does
        handler.send_response(200)
        handler.send_header("Content-Type", "text/csv")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(body)
        handler.close_connection = True

    with Platform(FIXTURES, faults={STUDY + "/trials.csv": close_delimited}) as platform:
        out = run(platform, STUDY, "--json")
    document = json.loads(out.stdout)
    assert out.returncode == 1
    check = document["checks"][0]
    assert check == {"check": "canary on every trials.csv row", "agrees": False,
                     "detail": "trials.csv line 7: canary missing or altered"}


def test_a_metric_written_with_a_space_is_not_a_seat_score_and_fails(tmp_path):
    out = run_edited(tmp_path, {("every", "metric"): "map_coverage "})
    document = json.loads(out.stdout)
    assert out.returncode == 1
    assert "the page's metric is the files'" in failed_checks(document)
    assert any("not a seat score" in t for t in document["trusted"])


def test_a_roster_seat_with_no_row_and_a_row_past_the_roster_fail_the_roster_check(tmp_path):
    root = copy_study(tmp_path)
    path = root / STUDY.lstrip("/") / "seats.csv"
    lines = path.read_text().splitlines(True)
    path.write_text("".join(lines[:3] + lines[4:]))   # trial 1 arm 0 loses seat 3
    with Platform(root, FIXTURES) as platform:
        document = json.loads(run(platform, STUDY, "--json").stdout)
    check = [c for c in document["checks"] if c["check"].startswith("every match's roster")][0]
    assert check["agrees"] is False
    assert check["detail"] == ("trials.csv line 2: trial 1 arm 0 has seat rows 1, 2, 4; %s's roster has 4 seats" % M1)
    assert document["exit"] == 1


def test_more_than_1000_matches_is_refused_before_any_is_fetched(tmp_path):
    root = copy_study(tmp_path)
    folder = root / STUDY.lstrip("/")
    trials = list(csv.reader(io.StringIO((folder / "trials.csv").read_text(), newline="")))
    seats = list(csv.reader(io.StringIO((folder / "seats.csv").read_text(), newline="")))
    t_rows, s_rows = [trials[0]], [seats[0]]
    for n in range(1, 1002):
        row = list(trials[1])
        row[1], row[4] = str(n), "m_%012x" % n
        t_rows.append(row)
        seat = list(seats[1])
        seat[1] = str(n)
        s_rows.append(seat)
    for name, rows in (("trials.csv", t_rows), ("seats.csv", s_rows)):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        (folder / name).write_text(buffer.getvalue())
    with Platform(root, FIXTURES) as platform:
        out = run(platform, STUDY)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == ("recompute_study.py: cannot read the study: trials.csv names 1001 matches; "
                          "a study plays at most 1000 (study.md §8)\n")
    assert not [r for r in platform.requests if r.startswith("/api/")]


def test_matches_needs_recompute_py_beside_the_script(tmp_path, fixtures_platform):
    shutil.copy(REPO / "recompute_study.py", tmp_path / "recompute_study.py")
    out = subprocess.run([sys.executable, str(tmp_path / "recompute_study.py"), fixtures_platform.url + STUDY,
                          "--matches"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "curl -sO https://daishi.ai/recompute.py" in out.stderr
    alone = subprocess.run([sys.executable, str(tmp_path / "recompute_study.py"), fixtures_platform.url + STUDY],
                           capture_output=True, text=True, timeout=60)
    assert alone.returncode == 0, alone.stderr   # without --matches it stands alone


def test_recompute_py_refuses_a_study_naming_the_command():
    with Platform(FIXTURES) as platform:
        for target in (platform.url + STUDY, STUDY):
            out = run_script("recompute.py", "--base", platform.url, target)
            assert out.returncode == 2 and out.stdout == ""
            assert out.stderr == ("recompute.py: %s is a study, not a match: audit it end to end with "
                                  "recompute_study.py %s --matches (see recompute.py --help)\n" % (target, target))
    assert platform.requests == []
    assert run_script("recompute.py", M1, "--jobs", "2").returncode == 2


def test_jobs_needs_matches_and_a_number(fixtures_platform):
    for args in (["--jobs", "2"], ["--matches", "--jobs", "0"], ["--matches", "--jobs", "17"], ["--matches", "--jobs", "x"]):
        out = run_script("recompute_study.py", fixtures_platform.url + STUDY, *args)
        assert out.returncode == 2 and "--jobs" in out.stderr, args
    out = run(fixtures_platform, STUDY, "--jobs", "1")
    assert out.returncode == 0, out.stderr


# ------------------------------------------------- saved copies, --against

def test_saved_study_re_audits_offline(fixtures_platform, tmp_path):
    saved = tmp_path / "saved"
    out = run(fixtures_platform, STUDY, "--save", saved)
    assert out.returncode == 0, out.stderr
    assert (saved / "trials.csv").read_bytes() == (STUDY_DIR / "trials.csv").read_bytes()
    assert (saved / M1 / "export" / "1.json").is_file() and (saved / M1 / "report" / "2.4.json").is_file()
    assert (saved / M1 / "saved.json").is_file()
    about = json.loads((saved / "saved.json").read_text())
    assert about["address"] == fixtures_platform.url + STUDY and re.fullmatch(r"[-0-9]{10}T[:0-9]{8}Z", about["savedAt"])
    assert about["sha256"] == {n: hashlib.sha256((STUDY_DIR / n).read_bytes()).hexdigest()
                              for n in ("trials.csv", "seats.csv")} | {
        "profile.json": hashlib.sha256((FIXTURES / "u" / "linked-lab.json").read_bytes()).hexdigest()}
    offline = run_script("recompute_study.py", saved, "--matches")
    assert offline.returncode == 0, offline.stderr
    tail = lambda text: text[text.index("\nmatches that recompute"):]
    assert tail(offline.stdout) == tail(out.stdout)
    assert offline.stdout.count(" report?rubric=2.4: figures same 68 of 68") == 6
    again = run(fixtures_platform, STUDY, "--save", saved)
    assert again.returncode == 2 and again.stdout == ""
    assert "is there already" in again.stderr
    (saved / M1 / "report" / "2.4.json").write_text("{}")
    broken = run_script("recompute_study.py", saved, "--matches")
    assert broken.returncode == 1
    assert "%s (trial 1 arm 0): report/2.4.json: not the file saved" % M1 in broken.stderr
    (saved / "seats.csv").write_text((saved / "seats.csv").read_text().replace(",140,", ",141,", 1))
    altered = run_script("recompute_study.py", saved, "--matches")
    assert altered.returncode == 1 and altered.stdout.startswith("saved copy of s_9f54f5e8: not what was saved\n")
    assert "check FAILS: seats.csv: not the file saved" in altered.stdout


def test_against_a_saved_study_names_each_change(fixtures_platform, tmp_path):
    saved = tmp_path / "saved"
    assert run(fixtures_platform, STUDY, "--save", saved).returncode == 0
    saved_at = json.loads((saved / "saved.json").read_text())["savedAt"]
    same = run(fixtures_platform, STUDY, "--against", saved)
    assert same.returncode == 0, same.stderr
    assert "unchanged since %s (%s)" % (saved_at, saved) in flat(same.stdout)
    root = copy_study(tmp_path)
    edit_csv(root / STUDY.lstrip("/") / "seats.csv", {(3, "gathers"): "141"})
    report = json.loads((FIXTURES / "api" / "matches" / M1 / "report" / "2.4.json").read_text())
    report["scorecards"][2]["wealth"] = 351.51
    (root / "api" / "matches" / M1 / "report").mkdir(parents=True)
    (root / "api" / "matches" / M1 / "report" / "2.4.json").write_text(json.dumps(report))
    with Platform(root, FIXTURES) as platform:
        out = run(platform, STUDY, "--against", saved)
        document = json.loads(run(platform, STUDY, "--against", saved, "--json").stdout)
    assert out.returncode == 1, out.stderr
    assert flat("CHANGED since %s (%s): 2 changes\n  seats.csv line 3 gathers: 140 -> 141\n"
                "  %s/report/2.4.json scorecards[2].wealth: 351.5 -> 351.51\n" % (saved_at, saved, M1)) in flat(out.stdout)
    assert document["exit"] == 1
    assert document["against"] == {"folder": str(saved), "savedAt": saved_at, "count": 2, "changes": [
        {"file": "seats.csv", "where": "line 3 gathers", "was": "140", "now": "141"},
        {"file": M1 + "/report/2.4.json", "where": "scorecards[2].wealth", "was": 351.5, "now": 351.51}]}
    (saved / M1).rename(saved / "m_000000000000")   # a match on each side only
    out = run(fixtures_platform, STUDY, "--against", saved)
    assert out.returncode == 1, out.stderr
    assert "  %s (the match): (absent) -> (read now)\n" % M1 in out.stdout


def test_a_missing_match_is_exit_2_and_the_others_are_still_audited(tmp_path):
    out = run_edited(tmp_path, {(3, "match"): "m_000000000000"})
    document = json.loads(out.stdout)
    assert out.returncode == 2 and document["exit"] == 2
    assert re.fullmatch(r"recompute_study.py: m_000000000000 \(trial 2 arm 0\): export page 1: 404 not found at "
                        r"http://127.0.0.1:\d+/api/matches/m_000000000000/export\?page=1\n", out.stderr), out.stderr
    assert document["summary"]["unreadable"] == ["m_000000000000"]
    assert document["summary"]["matchesRecompute"] == 5


def test_a_bad_field_names_file_line_and_column(tmp_path):
    out = run_edited(tmp_path, None, {(4, "gathers"): "4\x1bx"})
    assert out.returncode == 2
    assert out.stderr == ("recompute_study.py: cannot read the study: seats.csv line 4, column gathers: "
                          "'4\\x1bx' is not of the form -?[0-9]{1,15}\n")


def test_ctrl_c_stops_cleanly(tmp_path):
    def stall(handler):
        time.sleep(20)
    faults = {"/api/matches/%s/export" % M1: stall}
    with Platform(FIXTURES, faults=faults) as platform:
        process = subprocess.Popen([sys.executable, str(REPO / "recompute_study.py"), platform.url + STUDY,
                                    "--matches"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        while not any(M1 in r for r in platform.requests) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=15)
    assert process.returncode == 130
    assert stderr == "interrupted\n"
    assert time.monotonic() - started < 5
