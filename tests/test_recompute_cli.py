"""recompute.py end to end on the project's saved copies, over loopback HTTP and offline."""
import json

from conftest import FIXTURES, run_script

CLEAN = "m_b0bc344f1eac"      # 2 seats, 95 events, rubric 2.4
EXPLAINED = "m_1b23341c9524"  # erratum E3: deposits that never took effect
OLD_1_0 = "m_e728aaaa03cd"    # no events, report under 1.0
TAMPERED = "m_6b97819aefda"   # report.json scorecards[1] wealth 65.0 -> 65.01
PLAYING = "m_4a5ad60e37d4"


def run(platform, *args):
    return run_script("recompute.py", "--base", platform.url, *args)


def test_clean_match_every_figure_same(fixtures_platform):
    out = run(fixtures_platform, CLEAN)
    assert out.returncode == 0, out.stderr
    assert "DIFFERS" not in out.stdout
    assert "%s: figures same 34 of 34; checks agree 32 of 32" % CLEAN in out.stdout
    assert "errata: none" in out.stdout
    assert "taken on trust: messages sent" in out.stdout


def test_pages_are_followed(fixtures_platform):
    run(fixtures_platform, EXPLAINED)
    wanted = "/api/matches/%s/export?page=1" % EXPLAINED
    assert wanted in fixtures_platform.requests


def test_erratum_explains_the_replay(fixtures_platform):
    out = run(fixtures_platform, EXPLAINED)
    assert out.returncode == 0, out.stderr
    assert out.stdout.index("a_1   361.08  active  2 ") < out.stdout.index("erratum E3")
    assert "\na_1 wealth replay: as logged 694.33; without E3's events 361.08: explained by E3\n" in out.stdout


def test_tampered_wealth_differs(fixtures_platform):
    out = run(fixtures_platform, TAMPERED)
    assert out.returncode == 1
    [line] = [l for l in out.stdout.splitlines() if l.startswith("DIFFERS ")]
    assert line == "DIFFERS a_2 wealth: published 65.01, recomputed 65.0, -1 in the last place"
    assert out.stdout.endswith("\nDIFFERS: a_2 wealth\n")   # the last line is the verdict
    [row] = [l for l in out.stdout.splitlines() if l.startswith("a_2   65.01/65.0  active  1 ")]
    rows = run(fixtures_platform, "--all", TAMPERED).stdout.splitlines()
    assert "  wealth              65.01                    65.0                     DIFFERS -1" in rows
    assert line in rows
    assert len([l for l in rows if l.endswith("same")]) == 84


def test_rubric_1_0_report_reads_with_its_reason(fixtures_platform):
    out = run(fixtures_platform, OLD_1_0)
    assert out.returncode == 0, out.stderr
    assert "rubric 1.0" in out.stdout
    assert "read under 1.0: A saved copy of the report served on 12 March 2026" in out.stdout
    assert "no events or counters were recorded for this agent" in out.stdout


def test_rubric_option_asks_for_the_version(fixtures_platform):
    out = run(fixtures_platform, "--rubric", "2.2", CLEAN)
    assert out.returncode == 0, out.stderr
    assert "rubric 2.2" in out.stdout
    assert "/api/matches/%s/report?rubric=2.2" % CLEAN in fixtures_platform.requests


def test_the_report_read_under_rubric_is_named_even_under_its_own(fixtures_platform, tmp_path):
    """The report's own rubric is 2.4, yet --rubric 2.4 reads another document (report?rubric=2.4)
    than none does (report, one cent off): the header names it, in the text and in --json, served,
    saved (its address, as saved.json names it), and from a folder laid out as served (its file)."""
    address = fixtures_platform.url + "/api/matches/%s/report?rubric=2.4" % TAMPERED
    header = "%s  rubric 2.4  engine 0.5.0  188 rounds  5 seats  230 events" % TAMPERED
    out = run(fixtures_platform, "--rubric", "2.4", TAMPERED)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == [header, "  report read: " + address]
    plain = run(fixtures_platform, TAMPERED)
    assert plain.returncode == 1 and plain.stdout.splitlines()[1].startswith("trade ledger: ")
    document = json.loads(run(fixtures_platform, "--json", "--rubric", "2.4", TAMPERED).stdout)
    assert document["matches"][0]["report"] == address
    assert "report" not in json.loads(run(fixtures_platform, "--json", TAMPERED).stdout)["matches"][0]
    saved = run(fixtures_platform, "--rubric", "2.4", "--save", tmp_path / "copies", TAMPERED)
    folder = tmp_path / "copies" / TAMPERED
    for out, report in [
        (saved, address),
        (run_script("recompute.py", folder), address),  # saved under 2.4: so read, as saved.json names it
        (run_script("recompute.py", "--rubric", "2.4", FIXTURES / "api" / "matches" / TAMPERED),
         FIXTURES / "api" / "matches" / TAMPERED / "report" / "2.4.json"),
    ]:
        assert out.returncode == 0, out.stderr
        unwrapped = out.stdout.replace(" \\\n    ", " ").replace("\\\n    ", "")  # a long path wraps
        assert "\n%s\n  report read: %s\n" % (header, report) in unwrapped


def test_unknown_rubric_refused_before_any_request(fixtures_platform):
    out = run(fixtures_platform, "--rubric", "3.0", CLEAN)
    assert out.returncode == 2
    assert "3.0" in out.stderr and "Traceback" not in out.stderr


def test_playing_match_exits_2_with_the_platform_reason(fixtures_platform):
    out = run(fixtures_platform, PLAYING)
    assert out.returncode == 2
    assert out.stderr == "recompute.py: %s: export page 1: 409 The match is still playing: round 212 of 400.\n" % PLAYING
    assert out.stdout == ""


def test_unknown_match_is_404(fixtures_platform):
    out = run(fixtures_platform, "m_ae46e7653d21")
    assert out.returncode == 2
    assert out.stderr == ("recompute.py: m_ae46e7653d21: export page 1: 404 not found at "
                          "%s/api/matches/m_ae46e7653d21/export?page=1\n" % fixtures_platform.url)


def test_malformed_id_never_reaches_a_url(fixtures_platform):
    before = len(fixtures_platform.requests)
    for bad in ("m_AA6F85FAB659", "m_aa6f85fab65", "../../etc/passwd", "m_aa6f85fab659?x=1"):
        out = run(fixtures_platform, bad)
        assert out.returncode == 2
        assert {"m_AA6F85FAB659": "the hex digits are lowercase", "../../etc/passwd": "no such folder"}.get(
            bad, "neither a match id") in out.stderr
    assert len(fixtures_platform.requests) == before


def test_several_matches_summary_and_worst_exit(fixtures_platform):
    out = run(fixtures_platform, CLEAN, TAMPERED, EXPLAINED)
    assert out.returncode == 1
    assert out.stdout.endswith(
        "\n3 matches: 3 read, 0 could not be read; 12 seats\n"
        "Fitness Index reproduced for 12 of 12 seats; final wealth (published) for 11 of 12\n"
        "wealth replay (inventory and structures) reproduced for 12 of 12 seats (0 not compared)\n"
        "figures same 203 of 204; checks agree 212 of 212\n"
        "DIFFERS: %s a_2 wealth\n" % TAMPERED)
    out = run(fixtures_platform, CLEAN, PLAYING)
    assert out.returncode == 2
    assert "\n2 matches: 1 read, 1 could not be read; 2 seats\n" in out.stdout
    assert "\ncould not be read: %s: export page 1: 409 The match is still playing" % PLAYING in out.stdout


def test_offline_folder_and_save(fixtures_platform, tmp_path):
    out = run(fixtures_platform, "--save", str(tmp_path), EXPLAINED)
    assert out.returncode == 0, out.stderr
    saved = tmp_path / EXPLAINED
    assert sorted(p.relative_to(saved).as_posix() for p in saved.rglob("*.json")) == [
        "export/1.json", "report.json", "saved.json"]
    for name in ("export/1.json", "report.json"):
        assert (saved / name).read_bytes() == (FIXTURES / "api/matches" / EXPLAINED / name).read_bytes()
    about = json.loads((saved / "saved.json").read_text())
    assert about["address"] == "%s/api/matches/%s" % (fixtures_platform.url, EXPLAINED)
    assert sorted(about) == ["address", "id", "kind", "proxy", "rubric", "savedAt", "script", "scripts", "sha256",
                             "version"]
    assert (about["kind"], about["id"], about["script"]) == ("match", EXPLAINED, "recompute.py")
    offline = run_script("recompute.py", str(saved))
    assert offline.returncode == 0, offline.stderr
    first, rest = offline.stdout.split("every file verified\n", 1)
    assert first.replace(" \\\n    ", " ") + "every file verified" == "saved copy of %s from %s, saved %s, every file verified" % (
        EXPLAINED, about["address"], about["savedAt"])
    assert ("kept in %s\n" % saved + rest).replace(" \\\n    ", " ") == out.stdout.replace(" \\\n    ", " ")


def test_offline_missing_report_exits_2(tmp_path):
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / "1.json").write_bytes(
        (FIXTURES / "api/matches" / CLEAN / "export/1.json").read_bytes())
    out = run_script("recompute.py", str(tmp_path))
    assert out.returncode == 2
    assert "incomplete copy (no saved.json): every page present, no report.json" in out.stderr
    empty = run_script("recompute.py", str(tmp_path / "export"))
    assert empty.returncode == 2
    assert "no saved match here (expected export/1.json and report.json" in empty.stderr


def test_json_document(fixtures_platform):
    out = run(fixtures_platform, "--json", CLEAN, TAMPERED)
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert (doc["script"], doc["exit"]) == ("recompute.py", 1)
    assert doc["summary"]["seats"] == 7
    assert {k: doc["summary"][k] for k in ("figuresSame", "figuresCompared", "checksAgree", "checksMade")} == {
        "figuresSame": 118, "figuresCompared": 119, "checksAgree": 138, "checksMade": 138}
    assert doc["summary"]["differ"] == [TAMPERED]
    first, second = doc["matches"]
    assert (first["matchId"], first["exit"], first["figuresSame"], first["figuresCompared"]) == (CLEAN, 0, 34, 34)
    row = [r for s in second["seats"] for r in s["figures"] if r["same"] is False]
    assert row == [{"key": {"match": TAMPERED, "seat": "a_2", "figure": "wealth"}, "label": "a_2 wealth",
                    "published": 65.01, "recomputed": 65.0, "same": False, "difference": -1}]
    assert first["checks"][0] == {"check": "metrics a_1.gather", "agrees": True, "detail": None,
                                  "published": 27, "recomputed": 27}


def test_base_from_environment(fixtures_platform):
    out = run_script("recompute.py", CLEAN, env={"DAISHI_BASE": fixtures_platform.url})
    assert out.returncode == 0, out.stderr


def test_served_archive_of_another_match_refused(tmp_path):
    import shutil
    from loopback import Platform
    shutil.copytree(FIXTURES / "api/matches" / CLEAN, tmp_path / "api/matches/m_aaaaaaaaaaaa")
    with Platform(tmp_path) as platform:
        out = run(platform, "m_aaaaaaaaaaaa")
    assert out.returncode == 2
    assert "archive.matchId m_b0bc344f1eac is not the match asked for, m_aaaaaaaaaaaa" in out.stderr


def test_server_refusing_a_rubric_version_is_400(tmp_path):
    import shutil
    from loopback import Platform
    shutil.copytree(FIXTURES / "api/matches" / CLEAN, tmp_path / "api/matches" / CLEAN)
    (tmp_path / "api/matches" / CLEAN / "report/2.2.json").unlink()
    with Platform(tmp_path) as platform:
        out = run(platform, "--rubric", "2.2", CLEAN)
    assert out.returncode == 2
    assert out.stderr.strip().endswith("report (rubric 2.2): 400 refused: unknown rubric version '2.2' at "
                                       "%s/api/matches/%s/report?rubric=2.2" % (platform.url, CLEAN))
