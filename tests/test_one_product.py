"""What a person meets in either script: text a console cannot encode, a narrow terminal, errors that
name their cause, usage errors in one line."""
import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios

from conftest import FIXTURES, REPO, run_script
from loopback import Platform

CLEAN = "m_b0bc344f1eac"


def named_copy(tmp_path, name):
    """A copy of the clean match whose first seat is called `name` (read as an unverified copy)."""
    copy = tmp_path / CLEAN
    shutil.copytree(FIXTURES / "api" / "matches" / CLEAN, copy)
    page = json.loads((copy / "export" / "1.json").read_text())
    page["archive"]["agents"][0]["name"] = name
    (copy / "export" / "1.json").write_text(json.dumps(page))
    return copy


def test_a_console_that_cannot_encode_a_name_gets_it_escaped(tmp_path):
    copy = named_copy(tmp_path, "\u00dcnsal")
    out = run_script("recompute.py", copy, "--all", env={"PYTHONIOENCODING": "ascii"})
    assert out.returncode == 0, out.stderr
    assert "\\xdcnsal" in out.stdout and out.stdout.endswith("every figure same, every check agrees\n")


def in_a_terminal(argv, columns):
    """stdout and stderr on a pseudo-terminal `columns` wide: (exit, what it showed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    child = subprocess.Popen([sys.executable] + argv, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    shown = read_to_the_end(leader)
    return child.wait(timeout=60), shown.decode("utf-8").replace("\r\n", "\n")


def read_to_the_end(leader, shown=b""):
    """What a pseudo-terminal shows until its last writer is gone; the terminal then closed."""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return shown


def test_tables_fit_a_terminal_of_80_columns():
    for argv in ([str(REPO / "recompute.py"), str(FIXTURES / "api" / "matches" / CLEAN)],):
        code, shown = in_a_terminal(argv, 80)
        assert code == 0, shown
        assert max(len(line) for line in shown.splitlines()) <= 80, shown
    code, wide = in_a_terminal(argv, 200)
    assert max(len(line) for line in wide.splitlines()) > 80     # 100 at most, where there is room
    assert max(len(line) for line in wide.splitlines()) <= 100


def test_an_argument_that_names_nothing_says_why(tmp_path):
    upper = run_script("recompute.py", "m_70232C5541D8")
    assert upper.returncode == 2 and upper.stderr == (
        "recompute.py: m_70232C5541D8 is not a match id: the hex digits are lowercase (m_70232c5541d8)\n")
    missing = run_script("recompute.py", tmp_path / "nope")
    assert missing.returncode == 2 and missing.stderr == "recompute.py: %s: no such folder\n" % (tmp_path / "nope")


def test_an_option_that_does_not_apply_is_refused_in_one_line(fixtures_platform, tmp_path):
    p, before = fixtures_platform, len(fixtures_platform.requests)
    pasted = run_script("recompute.py", "%s/matches/%s/report?rubric=2.2" % (p.url, CLEAN))
    assert pasted.returncode == 2 and pasted.stdout == "" and pasted.stderr == (
        "recompute.py: %s/matches/%s/report?rubric=2.2: an address's ?rubric= is not read: "
        "give --rubric 2.2 (see recompute.py --help)\n" % (p.url, CLEAN))
    both = run_script("recompute.py", "--base", p.url, "%s/matches/%s" % (p.url, CLEAN))
    assert both.returncode == 2 and both.stderr == (
        "recompute.py: %s/matches/%s: --base names the server for a match id, and an address names its own: "
        "give one or the other (see recompute.py --help)\n" % (p.url, CLEAN))
    assert len(p.requests) == before
    copy = FIXTURES / "api" / "matches" / CLEAN
    save = run_script("recompute.py", copy, "--save", tmp_path / "kept")
    assert save.returncode == 2 and save.stderr == (
        "recompute.py: %s: --save keeps what is downloaded, and this is a saved copy: copy the folder itself "
        "to keep it (see recompute.py --help)\n" % copy)
    assert not (tmp_path / "kept").exists()
    assert run_script("recompute.py", "%s/matches/%s" % (p.url, CLEAN)).returncode == 0


def test_each_help_is_enough_to_use_its_script():
    for script in ("recompute.py", "recompute_study.py"):
        out = run_script(script, "--help", env={"COLUMNS": "80"})
        assert out.returncode == 0 and out.stderr == ""
        assert max(len(line) for line in out.stdout.splitlines()) <= 80, script
        for needed in ("example: python3 " + script, "DAISHI_BASE", "DAISHI_TIMEOUT", "130, 143, 129 interrupted (Ctrl-C, SIGTERM, SIGHUP)",
                       "141 stdout closed", "exit status: 0 every figure matches"):
            assert needed in " ".join(out.stdout.split()), (script, needed)  # a phrase may wrap


KIM = "/u/kim/studies/s_eee65f53"


def study_files(tmp_path, old="with memory", new="with memory"):
    """The kim study's three files offline, an arm's label `old` written as `new`."""
    source = FIXTURES / "u" / "kim" / "studies" / "s_eee65f53"
    paths = (tmp_path / "trials.csv", tmp_path / "seats.csv", tmp_path / "kim.json")
    for path, original in zip(paths, (source / "trials.csv", source / "seats.csv", FIXTURES / "u" / "kim.json")):
        path.write_text(original.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    return ["https://daishi.ai" + KIM] + [x for pair in zip(("--trials", "--seats", "--page"), paths) for x in pair]


def test_the_study_script_escapes_what_a_console_cannot_encode(tmp_path):
    out = run_script("recompute_study.py", *study_files(tmp_path, new="mit Ged\u00e4chtnis"),
                     env={"PYTHONIOENCODING": "ascii"})
    assert out.returncode == 0, out.stderr
    assert "1 (mit Ged\\xe4chtnis)" in out.stdout and out.stdout.endswith("every figure same, every check agrees\n")


def test_the_study_tables_fit_a_terminal_of_80_columns(tmp_path):
    argv = [str(REPO / "recompute_study.py")] + [str(a) for a in study_files(tmp_path)]
    for columns, widest in ((80, 80), (200, 100)):
        code, shown = in_a_terminal(argv, columns)
        assert code == 0, shown
        assert 70 < max(len(line) for line in shown.splitlines()) <= widest, shown
    assert max(len(line) for line in run_script(*argv[:1] + argv[1:], env={"COLUMNS": "80"}).stdout.splitlines()) > 80


def test_the_study_script_reads_a_path_from_base_as_recompute_does(tmp_path):
    with Platform(FIXTURES) as p:   # its own: the requests it counts are its own
        path_from_base(p, tmp_path)


def path_from_base(p, tmp_path):
    for argv, env in ((["--base", p.url, KIM], {}), ([KIM], {"DAISHI_BASE": p.url + "/"})):
        del p.requests[:]
        out = run_script("recompute_study.py", *argv, env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("study s_eee65f53 at %s%s\n" % (p.url, KIM))
        assert p.requests == [KIM + "/trials.csv", KIM + "/seats.csv", "/u/kim.json"]
    del p.requests[:]
    both = run_script("recompute_study.py", "--base", p.url, p.url + KIM)
    assert both.returncode == 2 and both.stderr == (
        "recompute_study.py: --base names the server for a study's path (/u/<handle>/studies/<id>), and %s%s "
        "names its own: give one or the other (see recompute_study.py --help)\n" % (p.url, KIM))
    mirror = run_script("recompute_study.py", KIM, env={"DAISHI_BASE": p.url + "/mirror"})  # a prefix is read
    assert mirror.returncode == 2 and mirror.stderr == (
        "recompute_study.py: cannot read the study: trials.csv: 404 not found at %s/mirror%s/trials.csv: "
        "no such handle or study, or a run set (a run set has no files)\n" % (p.url, KIM))
    assert p.requests == ["/mirror" + KIM + "/trials.csv"]
    saved = tmp_path / "kim"
    assert run_script("recompute_study.py", p.url + KIM, "--save", saved).returncode == 0
    again = run_script("recompute_study.py", saved, "--save", tmp_path / "again")
    assert again.returncode == 2 and again.stderr == (
        "recompute_study.py: %s: --save keeps what is downloaded, and this is a saved copy: copy the folder "
        "itself to keep it (see recompute_study.py --help)\n" % saved)
    assert not (tmp_path / "again").exists()
    linked = run_script("recompute_study.py", "/u/linked-lab/studies/s_9f54f5e8", "--matches",
                        env={"DAISHI_BASE": p.url})
    assert linked.returncode == 0 and linked.stdout.endswith("\nevery figure same, every check agrees\n")
    assert "/api/matches/m_" in p.requests[-1]


def test_a_study_address_with_a_typo_is_shown_whole(fixtures_platform):
    typo = fixtures_platform.url + "/u/kim/studies/s_eee65f53x"
    out = run_script("recompute_study.py", typo)
    assert out.returncode == 2 and out.stderr == (
        "recompute_study.py: cannot read the study: not a study address: %s (expected https://daishi.ai/u/"
        "<handle>/studies/s_<8 hex digits>, handle and id in lowercase, its path /u/..., or a folder --save wrote)\n" % typo)


def test_a_differing_study_figure_is_marked_as_a_match_figure(conformance_platform):
    out = run_script("recompute_study.py", conformance_platform.url + "/u/mallory/studies/s_0af9fd0c")
    assert out.returncode == 1
    row = [line.split() for line in out.stdout.splitlines() if line.startswith("1 (tweak)    11")]
    assert row[0][3] == "0.236/0.232"
    assert "\nDIFFERS comparison 1 (tweak) mean: published 0.236, recomputed 0.232, -4 in the last place\n" in out.stdout
    assert out.stdout.endswith("\nDIFFERS: comparison 1 mean\n")


def test_matches_progress_on_a_terminal_is_one_line_and_ctrl_c_ends_it_cleanly():
    """--matches on a terminal: `match 1/6` is the only progress (no match's `page N/M` over it),
    and Ctrl-C clears it and says `interrupted` on a line of its own, exit 130."""
    import signal
    import time

    def stalled(handler):
        time.sleep(20)
        handler.reason(404, "not found")

    faults = {"/api/matches/m_4be7ac37a1d7/export": stalled}  # the first trial's match
    with Platform(FIXTURES, faults=faults) as p:
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 80, 0, 0))
        child = subprocess.Popen([sys.executable, str(REPO / "recompute_study.py"),
                                  p.url + "/u/linked-lab/studies/s_9f54f5e8", "--matches"],
                                 stdout=follower, stderr=follower)
        os.close(follower)
        shown, deadline = b"", time.monotonic() + 30
        while b"match 1/6" not in shown and time.monotonic() < deadline:
            shown += os.read(leader, 65536)
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=30)
        shown = read_to_the_end(leader, shown)
    assert code == 130, shown
    text = shown.decode("utf-8")
    assert "match 1/6" in text and "page " not in text
    assert text.endswith("match 1/6\x1b[K\r\x1b[Kinterrupted\r\n"), repr(text[-80:])
