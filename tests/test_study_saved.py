"""recompute_study.py: what a person sees: the root causes first, the tables, 100 columns,
saved folders read offline, --against, the JSON vocabulary and its errors, --help."""
import json
import shutil

import pytest

from conftest import FIXTURES, run_script
from loopback import Platform
from test_study import _manifest_studies

SCRIPT = "recompute_study.py"
ANA = "/u/ana-lab/studies/s_0ed90190"
KIM = "/u/kim/studies/s_eee65f53"


def edit_trials(folder, line, old, new):
    path = folder / "trials.csv"
    lines = path.read_bytes().split(b"\r\n")
    assert old.encode() in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old.encode(), new.encode(), 1)
    path.write_bytes(b"\r\n".join(lines))


@pytest.fixture
def saved(tmp_path):
    """The anytime fixture study saved by --save from a server that is gone afterwards."""
    with Platform(FIXTURES) as p:
        done = run_script(SCRIPT, p.url + ANA, "--save", tmp_path / "old")
        url = p.url
    assert done.returncode == 0, done.stderr
    return tmp_path / "old", url


def test_saved_folder_round_trip_offline(saved, tmp_path):
    folder, url = saved
    record = json.loads((folder / "saved.json").read_text())
    assert record["address"] == url + ANA and record["savedAt"].endswith("Z")
    assert (record["kind"], record["id"], record["script"], record["rubric"]) == (
        "study", "s_0ed90190", "recompute_study.py", None)
    assert sorted(record["sha256"]) == ["profile.json", "recipe.json", "seats.csv", "trials.csv"]
    import hashlib
    assert record["sha256"]["trials.csv"] == hashlib.sha256((folder / "trials.csv").read_bytes()).hexdigest()
    # The server is gone: the folder alone reads, to every figure matching.
    done = run_script(SCRIPT, folder, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["summary"]["figuresSame"] == out["summary"]["figuresCompared"] > 40
    assert out["copy"] == "saved copy of s_0ed90190 from %s, saved %s, every file verified" % (
        url + ANA, record["savedAt"])
    assert out["sources"]["trials.csv"] == "saved copy %s" % (folder / "trials.csv")
    # A second --save into that folder is refused before anything is read or written.
    before = (folder / "trials.csv").read_bytes()
    done = run_script(SCRIPT, url + ANA, "--save", folder)
    assert done.returncode == 2 and "--save: %s is there already" % folder in done.stderr
    assert (folder / "trials.csv").read_bytes() == before


def test_saved_folder_without_a_file_it_lists_is_not_what_was_saved(saved):
    folder, _ = saved
    (folder / "recipe.json").unlink()
    done = run_script(SCRIPT, folder)
    saved_at = json.loads((folder / "saved.json").read_text())["savedAt"]
    assert done.returncode == 1 and done.stderr == ""
    assert done.stdout == ("saved copy of s_0ed90190: not what was saved\ncheck FAILS: recipe.json: missing from "
                           "the copy saved %s (saved.json lists it)\n" % saved_at)


def test_offline_options_never_fetch_the_recipe():
    with Platform(FIXTURES) as p:
        base = FIXTURES / "u" / "ana-lab" / "studies" / "s_0ed90190"
        done = run_script(SCRIPT, p.url + ANA, "--trials", base / "trials.csv", "--seats", base / "seats.csv",
                          "--page", FIXTURES / "u" / "ana-lab.json")
        assert p.requests == []
    assert done.returncode == 2 and "--recipe FILE" in done.stderr


def files_of(folder, url):
    """The saved files given one by one: read as they are now, not checked against saved.json."""
    return [url + ANA] + [a for option, name in (("--trials", "trials.csv"), ("--seats", "seats.csv"),
            ("--page", "profile.json"), ("--recipe", "recipe.json")) for a in (option, folder / name)]


def test_against_names_the_changed_value(saved, tmp_path):
    folder, url = saved
    new = tmp_path / "new"
    shutil.copytree(str(folder), str(new))
    done = run_script(SCRIPT, new, "--against", folder)
    assert done.returncode == 0, done.stdout
    record = json.loads((folder / "saved.json").read_text())
    assert "unchanged since %s (%s)" % (record["savedAt"], folder) in " ".join(
        done.stdout.replace(" \\\n", " ").split())
    edit_trials(new, 7, ",53.75,", ",54.75,")
    altered = run_script(SCRIPT, new, "--against", folder)    # the edited copy is no longer what was saved
    assert altered.returncode == 1 and "check FAILS: trials.csv: not the file saved" in altered.stdout
    assert "figures" not in altered.stdout
    done = run_script(SCRIPT, *files_of(new, url), "--against", folder)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    at = lines.index("  trials.csv line 7 value: 53.75 -> 54.75")
    assert lines[at - 1].endswith(": 1 change")
    # before the audit: the root cause it moves comes after it, with its file and line
    cause = lines.index("  trials.csv line 7: trial 2 arm 2 value 54.750; its focal seats give 53.750 (-1000)")
    assert at < cause < lines.index("checks")
    out = json.loads(run_script(SCRIPT, *files_of(new, url), "--against", folder, "--json").stdout)
    assert out["against"]["changes"] == [{"file": "trials.csv", "where": "line 7 value", "was": "53.75",
                                          "now": "54.75"}]
    assert out["exit"] == 1


def test_against_a_changed_page_figure(saved, tmp_path):
    folder, url = saved
    new = tmp_path / "new"
    shutil.copytree(str(folder), str(new))
    profile = json.loads((new / "profile.json").read_text())
    card = [c for c in profile["studies"] if c["id"] == "s_0ed90190"][0]
    old_mean = card["reading"]["arms"][0]["mean"]
    card["reading"]["arms"][0]["mean"] = "49.99"
    profile["studies"].append({"id": "s_99999999", "kind": "runset"})    # another study: not a change
    (new / "profile.json").write_text(json.dumps(profile))
    out = json.loads(run_script(SCRIPT, *files_of(new, url), "--against", folder, "--json").stdout)
    assert out["against"]["changes"] == [{"file": "profile.json (the study's card)",
                                          "where": "[0].reading.arms[0].mean", "was": old_mean, "now": "49.99"}]


def test_against_another_study_or_no_saved_folder(saved, tmp_path):
    folder, _ = saved
    base = FIXTURES / "u" / "kim" / "studies" / "s_eee65f53"
    args = ["https://daishi.ai" + KIM, "--trials", base / "trials.csv", "--seats", base / "seats.csv",
            "--page", FIXTURES / "u" / "kim.json", "--against"]
    done = run_script(SCRIPT, *args, folder)
    assert done.returncode == 2 and "--against %s holds s_0ed90190, not s_eee65f53" % folder in done.stderr
    done = run_script(SCRIPT, *args, tmp_path)
    assert done.returncode == 2 and "--against %s: not a folder --save wrote" % tmp_path in done.stderr


def test_json_errors_and_usage_errors_are_documents():
    done = run_script(SCRIPT, "https://daishi.ai/u/kim/studies/nope", "--json")
    assert done.returncode == 2
    out = json.loads(done.stdout)
    assert out == {"script": SCRIPT, "version": "3.1", "exit": 2, "error": done.stderr.strip()}
    assert "expected https://daishi.ai/u/<handle>/studies/s_<8 hex digits>" in out["error"]
    for args, error in ((["--json"], "the following arguments are required: address"),
                        (["x", "--json", "--bogus"], "unrecognized arguments: --bogus")):
        done = run_script(SCRIPT, *args)
        assert done.returncode == 2
        line = "%s: %s (see %s --help)" % (SCRIPT, error, SCRIPT)
        assert json.loads(done.stdout) == {"script": SCRIPT, "version": "3.1", "exit": 2, "error": line}
        assert done.stderr == line + "\n"
    done = run_script(SCRIPT, "--bogus")    # one line, as recompute.py's, naming --help
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "%s: the following arguments are required: address (see %s --help)\n" % (SCRIPT, SCRIPT)


def test_help_ends_with_the_exit_codes():
    done = run_script(SCRIPT, "--help")
    assert done.returncode == 0
    tail = " ".join(done.stdout.split()[-53:])
    assert tail.startswith("exit status") or "exit status: 0 every figure matches" in tail
    assert tail.endswith("2 the study cannot be read, a figure not recomputed, the platform busy, or a usage "
                         "error; 130, 143, 129 interrupted (Ctrl-C, SIGTERM, SIGHUP); 141 stdout closed")
    assert "--against OLD" in done.stdout and "--all" in done.stdout


def test_one_edited_value_leads_with_its_root_cause(tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(str(FIXTURES / "u" / "kim" / "studies" / "s_eee65f53"), str(folder))
    edit_trials(folder, 7, ",63.5,", ",68.5,")
    args = ["https://daishi.ai" + KIM, "--trials", folder / "trials.csv",
            "--seats", folder / "seats.csv", "--page", FIXTURES / "u" / "kim.json"]
    done = run_script(SCRIPT, *args)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    cause = [i for i, line in enumerate(lines) if line.startswith("  trials.csv line 7: ")]
    assert cause and cause[0] < min(i for i, line in enumerate(lines) if line.startswith("comparisons"))
    assert lines[cause[0]].endswith("value 68.500; its focal seats give 63.500 (-5000)")
    assert "trial values from their focal seats: 44 of 45 agree" in lines
    assert any("DIFFERS:" in line for line in lines)
    every = run_script(SCRIPT, *args, "--all").stdout.splitlines()
    head = [line for line in every if line.startswith("trial value ")]
    assert head and head[0].split() == ["trial", "value", "trials.csv", "recomputed"]
    row = [line for line in every if line.startswith("trial 3 arm 1: value from its focal seats ")]
    assert row[0].split()[-4:] == ["68.500", "63.500", "DIFFERS", "-5000"]


@pytest.mark.parametrize("study", _manifest_studies(), ids=lambda s: s["id"])
def test_conformance_text_fits_100_columns(conformance_platform, study):
    for extra in ([], ["--all"]):
        done = run_script(SCRIPT, conformance_platform.url + study["address"], *extra)
        assert done.returncode == study["expectedExit"]
        assert max(len(line) for line in done.stdout.splitlines() or [""]) <= 100, study["id"]


def test_a_study_of_many_changed_matches_keeps_a_bounded_list_of_changes(monkeypatch):
    """--against over 300 matches, each with 1,000 changes and the first one slow: the changes
    kept are the first 1,000 in trial order, and the memory held is that of the few matches
    gathered ahead, not of every match's changes (57 MB here when every match is gathered at
    once, and growing with the study)."""
    import argparse
    import time
    import tracemalloc

    from conftest import load_script

    rs = load_script("recompute_study")

    def changed_match(rc, mid, rows, study):
        if mid == "m_000":
            time.sleep(1.0)  # every other match is done before the first is reported
        changes = [
            {"file": mid + "/export/1.json", "where": "seats[%d].wealth" % i,
             "was": i * 1.5, "now": "%s-%d" % ("x" * 40, i)}
            for i in range(1000)
        ]
        return {"match": mid, "count": 1000, "changes": changes, "exit": 1}

    monkeypatch.setattr(rs, "match_result", changed_match)
    groups = {"m_%03d" % i: ([], []) for i in range(300)}
    tracemalloc.start()
    try:
        study = argparse.Namespace(args=argparse.Namespace(jobs=4))
        results = rs.audit_all(None, groups, study)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = [change for r in results for change in r.pop("changes", [])]
    assert [r["count"] for r in results] == [1000] * 300
    assert len(kept) == 1000 and {c["file"] for c in kept} == {"m_000/export/1.json"}
    assert peak < 32 << 20, "%.0f MB held" % (peak / 2**20)
