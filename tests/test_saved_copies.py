"""Saved copies are evidence, in both scripts: one saved.json schema, every file checked against it
before anything is read from it, a copy cut short said to be one, regular files inside the copy only."""
import hashlib
import json
import os
import shutil

import pytest

from conftest import FIXTURES, load_script, run_script
from hostile_common import run_child
from loopback import Platform

CLEAN = "m_b0bc344f1eac"
STUDY = "/u/linked-lab/studies/s_9f54f5e8"
M1 = "m_4be7ac37a1d7"
KIM = "/u/kim/studies/s_eee65f53"
SCHEMA = ["address", "id", "kind", "proxy", "rubric", "savedAt", "script", "scripts", "sha256", "version"]
MAX_RSS_MB = 256


def save_match(tmp_path, *ids, rubric=None):
    save = tmp_path / "save"
    with Platform(FIXTURES) as platform:
        out = run_script("recompute.py", "--base", platform.url, "--save", save, *ids,
                         *(["--rubric", rubric] if rubric else []))
        requests = list(platform.requests)
    return save, out, requests


def test_both_scripts_write_one_schema(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN)
    assert out.returncode == 0, out.stderr
    match = json.loads((save / CLEAN / "saved.json").read_text())
    with Platform(FIXTURES) as platform:
        done = run_script("recompute_study.py", platform.url + STUDY, "--matches", "--save", tmp_path / "study")
    assert done.returncode == 0, done.stderr
    study = json.loads((tmp_path / "study" / "saved.json").read_text())
    inner = json.loads((tmp_path / "study" / M1 / "saved.json").read_text())
    assert sorted(match) == sorted(study) == sorted(inner) == SCHEMA
    assert (match["kind"], match["script"], study["kind"], study["script"]) == (
        "match", "recompute.py", "study", "recompute_study.py")
    assert match["sha256"] == {n: hashlib.sha256((FIXTURES / "api" / "matches" / CLEAN / n).read_bytes()).hexdigest()
                               for n in ("export/1.json", "report.json")}


def test_a_swapped_report_is_a_failed_check_and_nothing_is_shown(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN)
    copy = save / CLEAN
    saved_at = json.loads((copy / "saved.json").read_text())["savedAt"]
    shutil.copy(FIXTURES / "api" / "matches" / CLEAN / "report" / "2.3.json", copy / "report.json")
    done = run_script("recompute.py", copy)
    line = "%s: report.json: not the file saved %s (sha256 differs)" % (copy, saved_at)
    assert done.returncode == 1
    assert done.stdout.replace(" \\\n    ", " ") == "check FAILS: %s\nFAILS: %s (not as saved)\n" % (line, copy)
    assert done.stderr == "recompute.py: %s\n" % line
    document = json.loads(run_script("recompute.py", copy, "--json").stdout)
    assert document["exit"] == 1 and "sha256 differs" in document["error"]


def test_a_copy_holding_only_its_saved_json_is_listed_never_skipped(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN, "m_1b23341c9524")
    for name in ("export", "report.json"):
        path = save / CLEAN / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    done = run_script("recompute.py", save)
    assert done.returncode == 1
    assert "\n2 matches: 1 read, 1 could not be read; 5 seats\n" in done.stdout
    assert "export/1.json: missing from the copy saved" in done.stderr


def test_one_id_named_twice_is_saved_and_audited_once(tmp_path):
    save, out, requests = save_match(tmp_path, CLEAN, CLEAN, " %s " % CLEAN)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "" and out.stdout.count("%s  rubric" % CLEAN) == 1
    assert requests == ["/api/matches/%s/export?page=1" % CLEAN, "/api/matches/%s/report" % CLEAN]
    folders = run_script("recompute.py", save / CLEAN, save / CLEAN)
    assert folders.returncode == 0 and folders.stdout.count("%s  rubric" % CLEAN) == 1


def test_a_save_cut_short_leaves_nothing_and_a_whole_copy_is_reused(tmp_path):
    """A download that fails midway keeps nothing (a copy is whole or absent); a later save keeps a
    whole one; a save after that reads it, verified, and asks the platform nothing."""
    save = tmp_path / "save"
    def refuse(handler):
        handler.send(500, b'{"reason": "down"}')
    with Platform(FIXTURES, faults={"/api/matches/%s/report" % CLEAN: refuse}) as platform:
        out = run_script("recompute.py", "--base", platform.url, "--save", save, CLEAN)
    assert out.returncode == 2 and not save.exists()
    again, out, _ = save_match(tmp_path, CLEAN)
    assert out.returncode == 0 and out.stderr == ""
    assert (save / CLEAN / "saved.json").is_file() and sorted(os.listdir(save)) == [CLEAN]
    reused, out, requests = save_match(tmp_path, CLEAN)   # a whole copy is never overwritten
    assert out.returncode == 0 and "the saved copy of" in out.stdout.replace("\\\n    ", "").split("\n")[0] and requests == []
    (save / CLEAN / "saved.json").unlink()   # a folder there that is not whole: refused
    refused, out, requests = save_match(tmp_path, CLEAN)
    assert out.returncode == 2 and "holds a copy with no saved.json" in out.stderr and requests == []


def test_a_fifo_in_a_saved_folder_is_refused_at_once(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN)
    copy = save / CLEAN
    (copy / "saved.json").unlink()
    (copy / "report.json").unlink()
    os.mkfifo(copy / "report.json")
    child = run_child("recompute.py", [copy], tmp_path, timeout=5)
    assert child.code == 2 and child.seconds < 20
    assert child.err == "recompute.py: %s: not a regular file: not read\n" % (copy / "report.json")
    study = tmp_path / "study"
    with Platform(FIXTURES) as platform:
        assert run_script("recompute_study.py", platform.url + KIM, "--save", study).returncode == 0
    (study / "seats.csv").unlink()
    os.mkfifo(study / "seats.csv")
    child = run_child("recompute_study.py", [study], tmp_path, timeout=5)
    assert child.code == 1 and child.seconds < 20
    assert "check FAILS: seats.csv: not the file saved" in child.out and "not a regular file" in child.out


def test_against_never_follows_a_link_out_of_the_old_copy(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN)
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "hunter2-do-not-show"}')
    os.symlink(secret, save / CLEAN / "export" / "2.json")
    with Platform(FIXTURES) as platform:
        for options in ([], ["--json"]):
            done = run_script("recompute.py", "--base", platform.url, "--against", save / CLEAN, CLEAN, *options)
            assert done.returncode == 0, done.stderr
            assert "hunter2" not in done.stdout + done.stderr
    (save / CLEAN / "export" / "2.json").unlink()   # a listed page a link out of the copy: named, not read
    (save / CLEAN / "export" / "1.json").unlink()
    os.symlink(secret, save / CLEAN / "export" / "1.json")
    with Platform(FIXTURES) as platform:
        done = run_script("recompute.py", "--base", platform.url, "--against", save / CLEAN, CLEAN, "--json")
    assert "hunter2" not in done.stdout + done.stderr and done.returncode == 1
    assert "export/1.json: not the file saved" in json.loads(done.stdout)["error"]
    (save / CLEAN / "saved.json").unlink()        # unverified: nothing to check it by, so not compared
    with Platform(FIXTURES) as platform:
        done = run_script("recompute.py", "--base", platform.url, "--against", save / CLEAN, CLEAN)
    assert done.returncode == 2 and "hunter2" not in done.stdout + done.stderr
    assert done.stderr.endswith("--against %s: no saved.json, so not a copy --save wrote (see recompute.py --help)\n"
                                % (save / CLEAN))


def test_against_a_trials_line_of_two_million_fields_stays_bounded(tmp_path):
    with Platform(FIXTURES) as platform:
        assert run_script("recompute_study.py", platform.url + KIM, "--save", tmp_path / "old").returncode == 0
        old = tmp_path / "old"
        lines = (old / "trials.csv").read_bytes().split(b"\r\n")
        lines[3] = b"," * 2000000
        (old / "trials.csv").write_bytes(b"\r\n".join(lines))
        about = json.loads((old / "saved.json").read_text())
        about["sha256"]["trials.csv"] = hashlib.sha256((old / "trials.csv").read_bytes()).hexdigest()
        (old / "saved.json").write_text(json.dumps(about))
        child = run_child("recompute_study.py", [platform.url + KIM, "--against", old], tmp_path, timeout=30)
    assert child.code == 1, child.err
    assert "  trials.csv line 4: %s... -> s_eee65f53,2,0,control," % ("," * 37) in child.out.replace(" \\\n    ", " ")
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


def test_against_a_copy_of_30_pages_of_12_mb_stays_bounded(tmp_path):
    """An old copy whose saved.json lists 30 pages, each a link inside it to one 12 MB page: refused
    once its files pass the 96 MB a copy may hold, within 256 MB, before anything is compared."""
    save, out, _ = save_match(tmp_path, CLEAN)
    copy = save / CLEAN
    big = copy / "big.json"
    big.write_text('{"padding": [%s0]}' % ("0," * (6 << 20)))
    about = json.loads((copy / "saved.json").read_text())
    digest = hashlib.sha256(big.read_bytes()).hexdigest()
    for n in range(2, 32):
        os.symlink(big, copy / "export" / ("%d.json" % n))
        about["sha256"]["export/%d.json" % n] = digest
    (copy / "saved.json").write_text(json.dumps(about))
    with Platform(FIXTURES) as platform:
        child = run_child("recompute.py", ["--base", platform.url, "--against", copy, CLEAN, "--json"], tmp_path,
                          timeout=30)
    assert child.code == 2, child.err
    assert child.err == ("recompute.py: --against: %s: more than 100663296 bytes in all: not a copy this "
                         "script reads\n" % copy)
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


def rewrite(old, name, body):
    """A file of a saved copy replaced, and saved.json made to list it as saved."""
    (old / name).write_bytes(body)
    about = json.loads((old / "saved.json").read_text())
    about["sha256"][name] = hashlib.sha256(body).hexdigest()
    (old / "saved.json").write_text(json.dumps(about))


def test_against_a_trials_csv_of_five_mb_of_one_field_lines_stays_bounded(tmp_path):
    """Every line a change, 2.5 million of them: counted, 40 shown, 1,000 kept, within 256 MB."""
    with Platform(FIXTURES) as platform:
        assert run_script("recompute_study.py", platform.url + KIM, "--save", tmp_path / "old").returncode == 0
        rewrite(tmp_path / "old", "trials.csv", b"x\n" * (5 << 19))
        child = run_child("recompute_study.py", [platform.url + KIM, "--against", tmp_path / "old", "--json"],
                          tmp_path, timeout=60)
    assert child.code == 1, child.err
    against = json.loads(child.out)["against"]
    assert against["count"] == 5 << 19 and len(against["changes"]) == 1000
    assert child.peak_mb <= MAX_RSS_MB, child.peak_mb


def test_against_an_old_report_of_990000_more_items_stays_bounded(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN)
    old = save / CLEAN
    report = json.loads((old / "report.json").read_text())
    report["scorecards"][0]["achievements"] += ["x"] * 990000
    rewrite(old, "report.json", json.dumps(report).encode())
    with Platform(FIXTURES) as platform:
        child = run_child("recompute.py", ["--base", platform.url, "--against", old, CLEAN, "--json"], tmp_path,
                          timeout=60)
    assert child.code == 1, child.err
    against = json.loads(child.out)["against"]
    assert against["count"] == 990000 and len(against["changes"]) == 1000
    assert len(child.out) < 1 << 20 and child.peak_mb <= MAX_RSS_MB, (len(child.out), child.peak_mb)


@pytest.mark.parametrize("names,code", [(40000, 1), (680000, 2), (990000, 2)])
def test_a_study_copy_whose_saved_json_lists_many_names_stays_bounded(tmp_path, names, code):
    """The study script as recompute.py: a saved.json of 40,000 names none of which is there is a
    failed check naming 40 and counting the rest; one past 4 MB is not read at all."""
    with Platform(FIXTURES) as platform:
        assert run_script("recompute_study.py", platform.url + KIM, "--save", tmp_path / "kim").returncode == 0
    about = json.loads((tmp_path / "kim" / "saved.json").read_text())
    about["sha256"].update(("trials-%d.csv" % n, "0" * 64) for n in range(names))
    (tmp_path / "kim" / "saved.json").write_text(json.dumps(about))
    child = run_child("recompute_study.py", [tmp_path / "kim", "--json"], tmp_path, timeout=60)
    assert child.code == code, child.err
    if code == 1:
        checks = json.loads(child.out)["checks"]
        assert len(checks) == 41 and checks[-1]["check"] == "  ... and %d more" % (names - 40)
        assert "saved.json lists trials-0.csv, not a file of a saved study" in checks[0]["check"]
    else:
        assert "saved.json: larger than 4194304 bytes" in child.err and child.err.count("\n") == 1
    assert len(child.out) < 20000 and child.peak_mb <= MAX_RSS_MB, (len(child.out), child.peak_mb)


def test_a_report_of_400000_achievements_is_shown_as_its_first_40_and_a_count(tmp_path):
    """A list a record holds is shown as its first 40 items and how many more, in the DIFFERS
    line and in --all's rows: the output stays short, however long the list."""
    copy = tmp_path / CLEAN
    shutil.copytree(FIXTURES / "api" / "matches" / CLEAN, copy)
    report = json.loads((copy / "report.json").read_text())
    report["scorecards"][0]["achievements"] += ["earned_%d" % i for i in range(400000)]
    (copy / "report.json").write_text(json.dumps(report))
    for argv in ([copy], ["--all", copy]):
        child = run_child("recompute.py", argv, tmp_path, timeout=60)
        assert child.code == 1, child.err
        joined = child.out.replace("\\\n    ", "")  # a wrapped line joined again
        assert "earned_38,... and 399961 more" in joined and "earned_39" not in joined
        assert len(child.out) < 30000 and child.peak_mb <= MAX_RSS_MB, (len(child.out), child.peak_mb)


def test_against_a_copy_saved_under_another_rubric_is_refused(tmp_path):
    """--against compares like with like: a copy saved under 2.0, read now under 2.4, is refused
    (exit 2), never reported as changed."""
    save, out, _ = save_match(tmp_path, CLEAN, rubric="2.0")
    assert out.returncode == 0, out.stderr
    with Platform(FIXTURES) as platform:
        again = run_script("recompute.py", "--base", platform.url, "--against", save / CLEAN,
                           "--rubric", "2.4", CLEAN)
        same = run_script("recompute.py", "--base", platform.url, "--against", save / CLEAN, CLEAN)
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr == (
        "recompute.py: --against %s holds the report under 2.0: compare like with like, with "
        "--rubric 2.0 or none (see recompute.py --help)\n" % (save / CLEAN))
    assert same.returncode == 0 and "unchanged since " in same.stdout, same.stderr


def test_a_study_save_says_where_it_kept_the_copy(tmp_path):
    with Platform(FIXTURES) as platform:
        out = run_script("recompute_study.py", platform.url + KIM, "--save", tmp_path / "kim")
    assert out.returncode == 0, out.stderr
    assert "\n  kept in: %s\n" % (tmp_path / "kim") in out.stdout
    assert (tmp_path / "kim" / "saved.json").is_file()


def test_against_with_two_matches_names_them_and_help(tmp_path):
    save, out, _ = save_match(tmp_path, CLEAN)
    assert out.returncode == 0, out.stderr
    with Platform(FIXTURES) as platform:
        two = run_script("recompute.py", "--base", platform.url, "--against", save / CLEAN, CLEAN, M1)
    assert (two.returncode, two.stdout) == (2, "")
    assert two.stderr == ("recompute.py: --against compares one match with one saved copy: %s %s "
                          "(see recompute.py --help)\n" % (CLEAN, M1))


def test_a_folder_that_cannot_be_listed_is_unreadable_not_a_stdout_fault(monkeypatch, capsys):
    """os.listdir refused on a copy's export/ (a permission a root test cannot take away, so
    refused here): exit 2 naming the folder, never "cannot write the result to stdout"."""
    rc = load_script("recompute")
    listdir = os.listdir

    def refused(path):
        if os.path.basename(str(path)) == "export":
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)
    monkeypatch.setattr(rc.os, "listdir", refused)
    copy = FIXTURES / "api" / "matches" / CLEAN
    assert rc.main([str(copy)]) == 2
    out, err = capsys.readouterr()
    assert err == "recompute.py: %s: cannot read the folder (Permission denied)\n" % (copy / "export")
