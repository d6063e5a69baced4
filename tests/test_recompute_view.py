"""recompute.py as a person sees it: the table, batches, saved copies, --against,
pasted addresses, progress, JSON errors and --help (loopback server and offline)."""
import io
import json
import os
import shutil

from conftest import FIXTURES, load_script, run_script
from hostile_common import run_main
from loopback import Platform

CLEAN = "m_b0bc344f1eac"      # 2 seats, rubric 2.4
EXPLAINED = "m_1b23341c9524"  # 5 seats, erratum E3
OLD_1_0 = "m_e728aaaa03cd"    # 5 seats, no events, rubric 1.0
TAMPERED = "m_6b97819aefda"   # report.json scorecards[1] wealth 65.0 -> 65.01
PLAYING = "m_4a5ad60e37d4"
MATCHES = FIXTURES / "api" / "matches"


def run(platform, *args, **kw):
    return run_script("recompute.py", "--base", platform.url, *args, **kw)


def unwrapped(text):
    """A wrapped line joined again (a long path wraps at a space with ` \\`)."""
    return text.replace(" \\\n    ", " ")


def narrow(out):
    """Lines wider than 100 columns, the verdict (the last line, never wrapped) aside."""
    lines = out.stdout.splitlines()[:-1] + out.stderr.splitlines()
    return [line for line in lines if len(line) > 100]


def test_default_view_is_one_table_row_per_seat(fixtures_platform):
    out = run(fixtures_platform, EXPLAINED)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) <= 30 and narrow(out) == []
    head = lines.index("seat  wealth  status  rank  survive  economy  social  adapt  compete  index  grade")
    assert lines[head + 1] == "a_1   361.08  active  2     100.0    92.2     100.0   100.0  72.3     93.9   A"
    assert lines[head + 6].startswith("seat  achievements        coverage  idxWealth  idxRep  circular  estimated")
    assert out.stdout.endswith("\nevery figure same, every check agrees\n")
    assert "same" not in out.stdout.replace("figures same", "").replace("every figure same", "")


def test_not_compared_cells_are_bracketed(fixtures_platform):
    out = run(fixtures_platform, OLD_1_0)
    assert out.returncode == 0, out.stderr
    assert "a_2   survivor,prospered,earned_reputation  (716.48/691.0)" in out.stdout
    assert "a_2 wealth replay not compared: inventory only: no event log shows the structures" in out.stdout
    assert "a_1: counters not recorded; no events or counters were recorded for this agent" in out.stdout


def test_every_figure_differs_names_seat_and_last_place(tmp_path):
    shutil.copytree(MATCHES / CLEAN, tmp_path / CLEAN)
    report = json.loads((tmp_path / CLEAN / "report.json").read_text())
    card = report["scorecards"][0]
    card["dimensions"]["economy"] = 44.9        # recomputed 44.5
    card["raw"]["indexWealth"] = 29.848        # recomputed 29.85
    card["grade"] = "A"                         # recomputed B
    (tmp_path / CLEAN / "report.json").write_text(json.dumps(report))
    out = run_script("recompute.py", tmp_path / CLEAN)
    assert out.returncode == 1
    assert out.stdout.splitlines()[-1] == "DIFFERS: a_1 economy, a_1 grade, a_1 indexWealth"
    assert [l for l in out.stdout.splitlines() if l.startswith("DIFFERS ")] == [
        "DIFFERS a_1 economy: published 44.9, recomputed 44.5, -4 in the last place",
        "DIFFERS a_1 grade: published A, recomputed B",
        "DIFFERS a_1 indexWealth: published 29.848, recomputed 29.85, +2 in the last place"]
    assert "a_1   34.5    active  2     100.0    44.9/44.5  100.0   100.0  3.0      71.6   A/B " in out.stdout
    doc = json.loads(run_script("recompute.py", "--json", tmp_path / CLEAN).stdout)
    rows = {r["label"]: r for s in doc["matches"][0]["seats"] for r in s["figures"]}
    assert rows["a_1 economy"]["difference"] == -4 and rows["a_1 grade"]["difference"] is None
    assert rows["a_1 indexWealth"]["key"] == {"match": CLEAN, "seat": "a_1", "figure": "indexWealth"}


def test_long_server_text_is_wrapped_with_a_marker(tmp_path):
    shutil.copytree(MATCHES / OLD_1_0, tmp_path / "m")
    report = json.loads((tmp_path / "m" / "report.json").read_text())
    report["rubricReason"] = "word " * 60
    report["scorecards"][0]["notes"] = ["x" * 250]
    (tmp_path / "m" / "report.json").write_text(json.dumps(report))
    out = run_script("recompute.py", tmp_path / "m")
    assert out.returncode == 0, out.stderr
    assert narrow(out) == []
    assert "  read under 1.0: word word" in out.stdout and " \\\n    word word" in out.stdout


def test_batch_names_sources_and_counts_published_wealth(fixtures_platform, tmp_path):
    for copy in ("t1", "t2"):
        shutil.copytree(MATCHES / TAMPERED, tmp_path / copy / TAMPERED)
    out = run(fixtures_platform, tmp_path / "t1" / TAMPERED, tmp_path / "t2" / TAMPERED, CLEAN, PLAYING)
    assert out.returncode == 2
    for copy in ("t1", "t2"):  # a long temporary path wraps to the terminal
        assert "\n  read from %s\n" % (tmp_path / copy / TAMPERED) in unwrapped(out.stdout)
    assert ("Fitness Index reproduced for 12 of 12 seats; final wealth (published) for 10 of 12\n"
            "wealth replay (inventory and structures) reproduced for 12 of 12 seats (0 not compared)\n"
            in out.stdout)
    assert "\nDIFFERS: %s a_2 wealth, %s a_2 wealth; NOT READ: " % (tmp_path / "t1" / TAMPERED,
                                                                   tmp_path / "t2" / TAMPERED) in unwrapped(out.stdout)
    assert "\ncould not be read: %s: export page 1: 409 The match is still playing" % PLAYING in out.stdout
    assert narrow(out) == []


def test_save_then_audit_the_folder_of_matches(fixtures_platform, tmp_path):
    save = tmp_path / "s"
    first = run(fixtures_platform, "--save", save, CLEAN, EXPLAINED, TAMPERED, PLAYING)
    assert first.returncode == 2
    about = json.loads((save / CLEAN / "saved.json").read_text())
    assert (about["kind"], about["id"], about["rubric"]) == ("match", CLEAN, None)
    assert about["savedAt"].endswith("Z") and len(about["savedAt"]) == 20
    import hashlib
    assert about["sha256"] == {name: hashlib.sha256((MATCHES / CLEAN / name).read_bytes()).hexdigest()
                               for name in ("export/1.json", "report.json")}
    assert sorted(os.listdir(save)) == sorted([CLEAN, EXPLAINED, TAMPERED])  # a 409 is no record to keep
    assert first.stderr == ("recompute.py: %s: export page 1: 409 The match is still playing: round 212 of 400. "
                            "(nothing kept)\n" % PLAYING)
    again = run_script("recompute.py", save)
    assert (again.returncode, again.stderr) == (1, "")
    assert unwrapped(again.stdout).count("\n  read from %s" % save) == 3
    assert "\n3 matches: 3 read, 0 could not be read; 12 seats\n" in again.stdout
    assert unwrapped(again.stdout).endswith("\nDIFFERS: %s a_2 wealth\n" % TAMPERED)  # by its id


def test_saved_rubric_copy_is_read_under_its_rubric(fixtures_platform, tmp_path):
    out = run(fixtures_platform, "--save", tmp_path, "--rubric", "2.2", CLEAN)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / CLEAN / "saved.json").read_text())["rubric"] == "2.2"
    again = run_script("recompute.py", tmp_path / CLEAN)
    assert again.returncode == 0, again.stderr
    kept, first = out.stdout.split("\n", 1)
    assert kept == "kept in %s" % (tmp_path / CLEAN)
    assert unwrapped(again.stdout).split("\n", 1) == ["saved copy of %s from %s/api/matches/%s, saved %s, every "
        "file verified" % (CLEAN, fixtures_platform.url, CLEAN, json.loads((tmp_path / CLEAN / "saved.json")
                                                                          .read_text())["savedAt"]), first]
    assert "rubric 2.2" in again.stdout


def test_a_second_save_into_the_same_dir_reuses_the_whole_copy(fixtures_platform, tmp_path):
    """A whole copy there already: audited from it (verified), not downloaded nor written again."""
    assert run(fixtures_platform, "--save", tmp_path, CLEAN).returncode == 0
    before = (tmp_path / CLEAN / "saved.json").read_bytes()
    requests = len(fixtures_platform.requests)
    out = run(fixtures_platform, "--save", tmp_path, CLEAN)
    assert out.returncode == 0 and out.stderr == ""
    saved_at = json.loads(before)["savedAt"]
    assert unwrapped(out.stdout).startswith(
        "%s: the saved copy of %s, kept there before, audited instead of the platform (every file verified); "
        "to audit the platform now, name another DIR or leave out --save\n%s  rubric" % (tmp_path / CLEAN, saved_at, CLEAN))
    assert (tmp_path / CLEAN / "saved.json").read_bytes() == before
    assert len(fixtures_platform.requests) == requests


def test_against_names_one_changed_report_figure(fixtures_platform, tmp_path):
    assert run(fixtures_platform, "--save", tmp_path, CLEAN).returncode == 0
    saved_at = json.loads((tmp_path / CLEAN / "saved.json").read_text())["savedAt"]
    same = run(fixtures_platform, "--against", tmp_path / CLEAN, CLEAN)
    assert same.returncode == 0, same.stderr
    assert unwrapped(same.stdout).startswith("unchanged since %s (%s)\n%s  rubric 2.4" % (saved_at, tmp_path / CLEAN, CLEAN))
    shutil.copytree(MATCHES / CLEAN, tmp_path / "now")
    report = json.loads((tmp_path / "now" / "report.json").read_text())
    report["scorecards"][1]["dimensions"]["social"] = 99.9
    (tmp_path / "now" / "report.json").write_text(json.dumps(report))
    out = run_script("recompute.py", "--against", tmp_path / CLEAN, tmp_path / "now")
    assert out.returncode == 1
    assert unwrapped(out.stdout).startswith("CHANGED since %s (%s): 1 change\n"
                                 "  report.json scorecards[1].dimensions.social: 100.0 -> 99.9\n"
                                 % (saved_at, tmp_path / CLEAN))
    doc = json.loads(run_script("recompute.py", "--json", "--against", tmp_path / CLEAN, tmp_path / "now").stdout)
    assert doc["exit"] == 1
    assert doc["against"]["changes"] == [{"file": "report.json", "where": "scorecards[1].dimensions.social",
                                          "was": 100.0, "now": 99.9}]


def test_against_a_copy_of_another_match_is_refused(fixtures_platform, tmp_path):
    assert run(fixtures_platform, "--save", tmp_path, CLEAN).returncode == 0
    out = run(fixtures_platform, "--against", tmp_path / CLEAN, TAMPERED)
    assert out.returncode == 2 and out.stdout == ""
    assert "is a copy of %s, not of %s" % (CLEAN, TAMPERED) in out.stderr
    out = run(fixtures_platform, "--against", tmp_path / "absent", CLEAN)
    assert (out.returncode, out.stderr) == (
        2, "recompute.py: --against %s: no such folder (see recompute.py --help)\n" % (tmp_path / "absent"))


def test_pasted_addresses_are_read(fixtures_platform):
    for pasted in ("%s/matches/%s" % (fixtures_platform.url, CLEAN),
                   " %s/api/matches/%s/export?page=2 " % (fixtures_platform.url, CLEAN),
                   "%s/api/matches/%s/report" % (fixtures_platform.url, CLEAN)):
        out = run_script("recompute.py", pasted)
        assert out.returncode == 0, (pasted, out.stderr)
        assert "%s: figures same 34 of 34" % CLEAN in out.stdout


def test_refusals_say_what_is_expected(fixtures_platform):
    out = run(fixtures_platform, "matches/m_b0bc")
    assert out.returncode == 2
    assert ("is neither a match id (m_ and 12 lowercase hex digits), nor a match address "
            "(https://daishi.ai/matches/m_...), nor a folder of saved copies") in out.stderr
    out = run_script("recompute.py", CLEAN, env={"DAISHI_BASE": "bogus"})
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ('recompute.py: %s: DAISHI_BASE must be an http:// or https:// address, got "bogus" '
                          "(see recompute.py --help)\n" % CLEAN)
    out = run_script("recompute.py", "--base", "ftp://x", CLEAN)
    assert out.stderr.startswith("recompute.py: %s: --base must be" % CLEAN)


def test_json_errors_are_json(fixtures_platform):
    out = run(fixtures_platform, "--json", "--rubric", "9.9", CLEAN)
    assert out.returncode == 2
    doc = json.loads(out.stdout)
    assert set(doc) == {"script", "version", "exit", "error"} and doc["exit"] == 2
    assert doc["error"] == out.stderr.strip() and "--rubric" in doc["error"]
    out = run(fixtures_platform, "--json", PLAYING)
    assert out.returncode == 2
    assert json.loads(out.stdout) == {"script": "recompute.py", "version": "3.1", "exit": 2,
                                      "error": out.stderr.strip()}
    assert out.stderr.strip().endswith("409 The match is still playing: round 212 of 400.")


def test_help_ends_with_the_exit_codes():
    out = run_script("recompute.py", "--help")
    assert out.returncode == 0
    assert "\nexit status: 0 every figure matches" in out.stdout
    assert " ".join(out.stdout.split()).endswith(
        "130, 143, 129 interrupted (Ctrl-C, SIGTERM, SIGHUP); 141 stdout closed")
    assert narrow(out) == []


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_only(tmp_path, monkeypatch):
    rc = load_script("recompute")
    page = json.loads((MATCHES / CLEAN / "export" / "1.json").read_text())
    events = page["events"]
    pages = [dict(page, pageCount=3, events=events[:30]), dict(page, page=2, pageCount=3, events=events[30:60]),
             dict(page, page=3, pageCount=3, events=events[60:])]
    for p in pages[1:]:
        p.pop("archive")
    root = tmp_path / "api" / "matches" / CLEAN
    (root / "export").mkdir(parents=True)
    for n, p in enumerate(pages, 1):
        (root / "export" / ("%d.json" % n)).write_text(json.dumps(p))
    shutil.copy(MATCHES / CLEAN / "report.json", root / "report.json")
    with Platform(tmp_path) as platform:
        piped = run_main(rc, ["--base", platform.url, CLEAN])
        assert (piped.code, piped.err) == (0, "")
        terminal = Terminal()
        monkeypatch.setattr("sys.stderr", terminal)
        assert rc.main(["--base", platform.url, "--json", CLEAN]) == 0
    assert terminal.getvalue() == "\r%s: page 2/3\x1b[K\r%s: page 3/3\x1b[K\r\x1b[K" % (CLEAN, CLEAN)
