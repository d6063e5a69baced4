"""What a new user meets first: an older Python, the README's first screen, refusals that name what
is wrong, a copy kept earlier named as such, a narrow terminal, and the names the output gives."""
import ast
import glob
import hashlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, load_script, run_script
from loopback import Platform

SCRIPTS = ("recompute.py", "recompute_study.py")
MATCHES = FIXTURES / "api" / "matches"
CLEAN = "m_b0bc344f1eac"      # 2 seats, every figure same
TAMPERED = "m_6b97819aefda"   # report.json: a_2 wealth 65.0 -> 65.01
EXPLAINED = "m_1b23341c9524"  # erratum E3, every figure same
LINKED = "/u/linked-lab/studies/s_9f54f5e8"
KIM = "/u/kim/studies/s_eee65f53"
NOWHERE = "http://127.0.0.1:9"  # nothing listens: a request made would be a failure to read


def joined(text):
    """Wrapped lines joined again: each ends with `\\`, the next goes on after four spaces."""
    return text.replace("\\\n    ", "")


# ---------------------------------------------------------------- a Python older than 3.9
def older_pythons():
    """The interpreters older than 3.9 that pyenv holds here, if any."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = sorted(glob.glob(os.path.join(root, "versions", "3.[5-8].*", "bin", "python3")))
    return found or [pytest.param(None, marks=pytest.mark.skip(reason="no Python 3.5-3.8 under pyenv here"))]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("python", older_pythons())
def test_an_older_python_says_in_one_line_that_it_needs_3_9(python, script):
    out = subprocess.run([python, str(REPO / script), "m_aa6f85fab659"], capture_output=True, text=True,
                         env=dict(os.environ, DAISHI_BASE=NOWHERE), timeout=60)
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "%s needs Python 3.9 or later; this is Python %s\n" % (script, version)


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_version_check_runs_first_whatever_python_runs_it(script):
    """Python 3.8 as sys.version_info says it: one line, exit 2, before anything else runs."""
    program = ("import runpy, sys; sys.version_info = (3, 8, 18, 'final', 0); sys.version = '3.8.18 (as 3.8)'; "
               "sys.argv = [%r, 'm_aa6f85fab659']; runpy.run_path(%r, run_name='__main__')"
               % (script, str(REPO / script)))
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=dict(os.environ, DAISHI_BASE=NOWHERE), timeout=60)
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", "%s needs Python 3.9 or later; this is Python 3.8.18\n" % script)


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_parses_as_python_3_6_so_the_check_can_run(script):
    """An older Python compiles the whole file before the check runs: the file keeps to 3.6's grammar
    (no `:=`, no `/` parameters, no `match`) as far as ast's feature_version tells (most on 3.11
    and later; the interpreters older than 3.9 found here tell the rest), and the check is the
    first statement after the imports every Python 3 has."""
    source = (REPO / script).read_text("utf-8")
    tree = ast.parse(source, feature_version=(3, 6))
    docstring, imports, check = tree.body[:3]
    assert [alias.name for alias in imports.names] == ["sys"]
    assert ast.get_source_segment(source, check.test) == "sys.version_info < (3, 9)"
    with pytest.raises(SyntaxError):  # what 3.6 cannot read fails here
        ast.parse(source + "\nmatch x:\n    case 1:\n        pass\n", feature_version=(3, 6))


# ---------------------------------------------------------------- the README's first screen
def start_here():
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("\n## Start here\n", 1)[1].split("\n## ", 1)[0]
    return [line.split("  #")[0].strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)
            for line in block.splitlines()]


def test_the_first_screen_installs_into_a_virtual_environment_and_tests_as_ci_does():
    """A system Python (Debian 12, Ubuntu 23.04 and later) refuses `pip install` outside a virtual
    environment: the first screen makes one first; its test command is the one CI runs."""
    commands = start_here()
    venv = [i for i, c in enumerate(commands) if re.match(r"python3 -m venv \.venv && \. \.venv/bin/activate$", c)]
    pip = [i for i, c in enumerate(commands) if "pip install" in c]
    assert venv and pip and venv[0] < min(pip), commands
    assert "python3 -m pytest -q -rs -n auto tests" in commands
    ci = (REPO / ".ci" / "run").read_text()
    assert "  python3 -m pytest -q -rs -n auto tests  # the test command README.md gives" in ci


def test_the_first_screen_says_what_is_skipped_without_the_corpus_and_why():
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("\n## Start here\n", 1)[1].split("\n## ", 1)[0]
    said = re.search(r"conformance corpus beside the clone\s+\(`\.\./shared/conformance`: .*? the (\d+) tests that "
                     r"run it are reported\s+skipped, each saying so", section, re.S)
    assert said and int(said.group(1)) > 300, section


def test_the_first_command_audits_a_bundled_match_and_says_what_it_read():
    [first] = [c for c in start_here() if c.startswith("python3 recompute.py ")]
    out = subprocess.run([sys.executable] + first.split()[1:], cwd=REPO, capture_output=True, text=True,
                         timeout=120)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout.split("\n")[0] == ("a copy laid out as the platform serves it, no saved.json to "
                                         "verify its files by")
    assert out.stdout.endswith("\nevery figure same, every check agrees\n")


def printed_values(document):
    """Every (key, value) of a JSON document whose value is not a list or an object."""
    if isinstance(document, dict):
        return {pair for key, value in document.items() for pair in
                (printed_values(value) if isinstance(value, (dict, list)) else {(key, json.dumps(value))})}
    return {pair for value in document for pair in printed_values(value)} if isinstance(document, list) else set()


def test_each_readme_json_example_is_what_its_command_prints():
    """Each value a JSON example of the README shows (`…` aside) is in the document its command prints."""
    readme = (REPO / "README.md").read_text("utf-8")
    examples = re.findall(r"```bash\n(python3 recompute(?:_study)?\.py --json [^\n]*)\n```\n\n```json\n(.*?)```",
                          readme, re.S)
    assert [command.split()[1] for command, _ in examples] == list(SCRIPTS)
    for command, shown in examples:
        out = subprocess.run([sys.executable] + command.split()[1:], cwd=REPO, capture_output=True, text=True,
                             timeout=120)
        document = json.loads(out.stdout)
        assert out.returncode == document["exit"] == {"recompute.py": 2}.get(command.split()[1], 0)
        pairs = re.findall(r'"(\w+)": ("(?:[^"\\]|\\.)*"|-?[0-9.]+|null|true|false)', shown)
        assert len(pairs) > 25
        printed = printed_values(document)
        assert [(k, v) for k, v in pairs if "\u2026" not in v and (k, v) not in printed] == [], command


# ---------------------------------------------------------------- refusals that say what is wrong
def test_a_match_id_given_to_the_study_script_with_base_is_named_a_match():
    out = run_script("recompute_study.py", "--base", NOWHERE, "m_70232c5541d8")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("recompute_study.py: m_70232c5541d8 is a match: audit it with recompute.py "
                          "m_70232c5541d8 (see recompute_study.py --help)\n")


@pytest.mark.parametrize("path", ["/u/kim/studies/s_eee65f5", "/u/kim/study/s_eee65f53"])
def test_a_study_path_of_the_wrong_form_is_not_a_study_address(path):
    out = run_script("recompute_study.py", path, env={"DAISHI_BASE": NOWHERE})
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("recompute_study.py: cannot read the study: not a study address: %s (expected "
                          "https://daishi.ai/u/<handle>/studies/s_<8 hex digits>, handle and id in lowercase, its path /u/..., or a "
                          "folder --save wrote)\n" % path)


def test_a_folder_that_is_not_there_is_named_so(tmp_path):
    out = run_script("recompute_study.py", tmp_path / "absent")
    assert (out.returncode, out.stderr) == (
        2, "recompute_study.py: cannot read the study: %s: no such folder\n" % (tmp_path / "absent"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_against_a_folder_that_is_not_there_says_so(script, tmp_path):
    target = {"recompute.py": CLEAN, "recompute_study.py": NOWHERE + KIM}[script]
    out = run_script(script, "--base", NOWHERE, "--against", tmp_path / "absent", target) \
        if script == "recompute.py" else run_script(script, "--against", tmp_path / "absent", target)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "%s: --against %s: no such folder (see %s --help)\n" % (script, tmp_path / "absent", script)


def test_a_save_that_cannot_write_is_not_a_study_that_cannot_be_read(tmp_path):
    """--save's faults name --save, never `cannot read the study`; nothing is asked of the platform."""
    (tmp_path / "file").write_text("")
    out = run_script("recompute_study.py", NOWHERE + KIM, "--save", tmp_path / "file" / "in" / "kim")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "recompute_study.py: --save: cannot write %s (Not a directory)\n" % (
        tmp_path / "file" / "in" / "kim")
    (tmp_path / "kim").mkdir()
    out = run_script("recompute_study.py", NOWHERE + KIM, "--save", tmp_path / "kim")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("recompute_study.py: --save: %s is there already: to audit the platform now, name "
                          "another DIR or leave out --save; to audit a copy kept there, name the folder "
                          "alone (see recompute_study.py --help)\n" % (tmp_path / "kim"))


# ---------------------------------------------------------------- a copy kept earlier
def test_save_into_a_folder_that_holds_the_match_says_first_that_it_audits_that_copy(tmp_path):
    with Platform(FIXTURES) as platform:
        first = run_script("recompute.py", "--base", platform.url, "--save", tmp_path, CLEAN)
        assert first.returncode == 0, first.stderr
        asked = len(platform.requests)
        again = run_script("recompute.py", "--base", platform.url, "--save", tmp_path, CLEAN)
        document = json.loads(run_script("recompute.py", "--base", platform.url, "--json", "--save",
                                         tmp_path, CLEAN).stdout)
        assert len(platform.requests) == asked   # nothing downloaded
    saved_at = json.loads((tmp_path / CLEAN / "saved.json").read_text())["savedAt"]
    line = ("%s: the saved copy of %s, kept there before, audited instead of the platform (every file "
            "verified); to audit the platform now, name another DIR or leave out --save" % (tmp_path / CLEAN, saved_at))
    assert (again.returncode, again.stderr) == (0, "")
    assert joined(again.stdout).split("\n")[:2] == [line, "%s  rubric 2.4  engine 0.5.3  50 rounds  2 seats  "
                                                          "95 events" % CLEAN]
    assert document["matches"][0]["copy"] == line and "kept" not in document["matches"][0]


# ---------------------------------------------------------------- a narrow terminal
def test_an_address_too_long_for_the_line_breaks_after_a_slash_never_within_a_name():
    rc = load_script("recompute")
    line = "  trials.csv: served http://127.0.0.1:41234/u/kim/studies/s_0af9fd0c/trials.csv"
    assert rc.wrapped(line, 60) == ["  trials.csv: served \\",
                                    "    http://127.0.0.1:41234/u/kim/studies/s_0af9fd0c/\\",
                                    "    trials.csv"]
    assert rc.wrapped("x" * 70, 60) == ["x" * 59 + "\\", "    " + "x" * 11]   # no space or /: within it


def test_a_wrapped_line_joins_again_exactly():
    rc, rng = load_script("recompute"), random.Random(31)
    for _ in range(3000):
        line = " ".join("".join(rng.choice("ab/") for _ in range(rng.choice((1, 3, 9, 70))))
                        for _ in range(rng.randint(1, 12)))
        for width in (60, 77, 100):
            parts = rc.wrapped(line, width)
            assert max(map(len, parts)) <= width and joined("\n".join(parts)) == line, (line, parts)


def test_the_study_header_at_60_columns_keeps_each_address_whole_but_at_slashes(monkeypatch):
    from hostile_common import run_main
    study = load_script("recompute_study")
    monkeypatch.setattr(study, "terminal_width", lambda: 60)
    with Platform(FIXTURES) as p:
        o = run_main(study, [p.url + LINKED])
        url = p.url
    assert (o.exc, o.code) == (None, 0), o
    assert max(len(line) for line in o.out.split("\n")) <= 60
    served = "%s/u/linked-lab/studies/s_9f54f5e8/" % url
    assert "\n  trials.csv: served \\\n    %s\\\n    trials.csv\n" % served in o.out
    assert "  trials.csv: served %strials.csv\n" % served in joined(o.out)


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("columns", [60, 80])
def test_help_is_as_wide_as_columns_says(script, columns):
    out = run_script(script, "--help", env={"COLUMNS": str(columns)})
    assert (out.returncode, out.stderr) == (0, "")
    lines = out.stdout.split("\n")
    assert max(map(len, lines)) <= columns and max(map(len, lines)) > columns - 12
    assert [line.split(":")[0] for line in lines if line.startswith(("example:", "environment:", "exit status:"))] \
        == ["example", "environment", "exit status"]
    assert ".md" not in out.stdout   # the platform's documents are the README's to name


# ---------------------------------------------------------------- the names the output gives
def test_a_batch_verdict_names_each_match_by_its_id_offline_as_online():
    offline = run_script("recompute.py", MATCHES / TAMPERED, MATCHES / EXPLAINED)
    with Platform(FIXTURES) as platform:
        online = run_script("recompute.py", "--base", platform.url, TAMPERED, EXPLAINED)
    for out in (offline, online):
        assert (out.returncode, out.stderr) == (1, "")
        assert out.stdout.endswith("\nDIFFERS: %s a_2 wealth\n" % TAMPERED)


def test_the_study_verdict_names_a_seat_as_its_match_does(tmp_path):
    """A match of the study whose report is one cent off: the verdict names `a_3 wealth`, the words
    of the match's own block."""
    mid = "m_4be7ac37a1d7"
    root = tmp_path / "root"
    for name in ("report.json", "report/2.4.json"):
        report = json.loads((MATCHES / mid / name).read_text())
        report["scorecards"][2]["wealth"] = 351.51
        (root / "api" / "matches" / mid / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "api" / "matches" / mid / name).write_text(json.dumps(report))
    with Platform(root, FIXTURES) as platform:
        out = run_script("recompute_study.py", platform.url + LINKED, "--matches")
    assert (out.returncode, out.stderr) == (1, "")
    assert "\nDIFFERS a_3 wealth: published 351.51, recomputed 351.5, -1 in the last place\n" in out.stdout
    assert out.stdout.endswith("\nDIFFERS: %s a_3 wealth\n" % mid)


# ---------------------------------------------------------------- what a newcomer met on a fresh clone
PLAYING = "m_4a5ad60e37d4"
STUDY_FILES = "fixtures/u/kim/studies/s_eee65f53"   # a study's files as the platform serves them


def run_in(cwd, script, *args, env=None):
    """A script run from `cwd` (relative paths as a user types them), DAISHI_BASE unset unless given."""
    full = dict(os.environ)
    full.pop("DAISHI_BASE", None)
    full.update(env or {})
    return subprocess.run([sys.executable, str(REPO / script)] + [str(a) for a in args], cwd=str(cwd),
                          capture_output=True, text=True, env=full, timeout=120)


def test_a_match_still_playing_is_never_kept_and_the_save_says_nothing_was_kept(tmp_path):
    """--save on a 409 keeps nothing and says so; once the match has finished, the same command
    downloads it, keeps it and says where."""
    root = tmp_path / "root" / "api" / "matches" / CLEAN
    shutil.copytree(MATCHES / CLEAN, root)
    (root / "playing.json").write_text('{"reason": "The match is still playing: round 12 of 50."}')
    with Platform(tmp_path / "root") as platform:
        playing = run_in(tmp_path, "recompute.py", "--base", platform.url, "--save", "pl", CLEAN)
        document = json.loads(run_in(tmp_path, "recompute.py", "--base", platform.url, "--save", "pl", "--json",
                                     CLEAN).stdout)
        (root / "playing.json").unlink()    # the match has finished
        done = run_in(tmp_path, "recompute.py", "--base", platform.url, "--save", "pl", CLEAN)
    line = ("recompute.py: %s: export page 1: 409 The match is still playing: round 12 of 50. (nothing kept)"
            % CLEAN)
    assert (playing.returncode, playing.stdout, playing.stderr) == (2, "", line + "\n")
    assert document == {"script": "recompute.py", "version": "3.1", "exit": 2, "error": line}
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split("\n")[0] == "kept in pl/%s" % CLEAN
    assert sorted(os.listdir(tmp_path / "pl" / CLEAN)) == ["export", "report.json", "saved.json"]


def test_a_record_downloaded_whole_is_kept_though_it_cannot_be_read_and_the_error_says_where(tmp_path):
    """What the platform served with 200 is evidence, kept whole; the error line says where."""
    root = tmp_path / "root" / "api" / "matches" / CLEAN
    shutil.copytree(MATCHES / CLEAN, root)
    page = json.loads((root / "export" / "1.json").read_text())
    page["events"][0]["tick"] = "soon"
    (root / "export" / "1.json").write_text(json.dumps(page))
    with Platform(tmp_path / "root") as platform:
        out = run_in(tmp_path, "recompute.py", "--base", platform.url, "--save", "pl", CLEAN)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.startswith("recompute.py: %s: export page 1: " % CLEAN)
    assert out.stderr.endswith(" (kept in pl/%s)\n" % CLEAN) and out.stderr.count("\n") == 1
    assert sorted(os.listdir(tmp_path / "pl" / CLEAN)) == ["export", "report.json", "saved.json"]


def test_a_409_an_earlier_version_kept_is_named_as_such(tmp_path):
    copy = tmp_path / "pl" / PLAYING
    copy.mkdir(parents=True)
    body = (MATCHES / PLAYING / "playing.json").read_bytes()
    (copy / "playing.json").write_bytes(body)
    about = {"kind": "match", "id": PLAYING, "address": "https://daishi.ai/api/matches/" + PLAYING,
             "savedAt": "2026-11-20T10:00:00Z", "rubric": None, "script": "recompute.py", "version": "3.0",
             "sha256": {"playing.json": hashlib.sha256(body).hexdigest()}}
    (copy / "saved.json").write_text(json.dumps(about))
    out = run_in(tmp_path, "recompute.py", "--base", NOWHERE, "--save", "pl", PLAYING)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("recompute.py: pl/%s/playing.json: 409 The match is still playing: round 212 of 400. "
                          "(a 409 kept as a copy by an earlier version: move it aside)\n" % PLAYING)


def test_a_study_match_still_playing_is_not_kept_in_the_studys_copy(tmp_path):
    mid = "m_4be7ac37a1d7"
    playing = tmp_path / "root" / "api" / "matches" / mid
    playing.mkdir(parents=True)
    (playing / "playing.json").write_text('{"reason": "round 120 of 400"}')
    with Platform(tmp_path / "root", FIXTURES) as platform:
        out = run_in(tmp_path, "recompute_study.py", platform.url + LINKED, "--matches", "--save", "d")
    assert out.returncode == 2
    assert "%s (trial 1 arm 0): export page 1: 409 the match is still playing: round 120 of 400\n" % mid \
        in out.stderr
    assert mid not in os.listdir(tmp_path / "d") and "m_7ec03a773300" in os.listdir(tmp_path / "d")


def test_recompute_py_names_the_study_command_that_reads_a_studys_files():
    """A study's files with no saved.json: the command named reads them (with the study's address)."""
    out = run_in(REPO, "recompute.py", STUDY_FILES)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("recompute.py: %s holds a study's files and no saved.json, not a match: audit them with "
                          "recompute_study.py <the study's address> --trials %s/trials.csv --seats %s/seats.csv "
                          "(see recompute.py --help)\n" % (STUDY_FILES, STUDY_FILES, STUDY_FILES))
    command = out.stderr.split("audit them with ")[1].split(" (see")[0].split()
    with Platform(FIXTURES) as platform:
        named = run_in(REPO, *[platform.url + KIM if word == "<the" else word for word in command
                               if word not in ("study's", "address>")])
    assert (named.returncode, named.stderr) == (0, ""), named.stderr
    assert named.stdout.endswith("\nevery figure same, every check agrees\n")


@pytest.mark.parametrize("matches", [False, True])
def test_recompute_py_names_the_study_command_that_reads_a_saved_study(tmp_path, matches):
    with Platform(FIXTURES) as platform:
        saved = run_in(tmp_path, "recompute_study.py", platform.url + LINKED, "--save", "d", *["--matches"] * matches)
        assert saved.returncode == 0, saved.stderr
    out = run_in(tmp_path, "recompute.py", "d")
    command = "recompute_study.py d" + " --matches" * matches
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", "recompute.py: d is a study's copy, not a match: audit it with %s (see recompute.py --help)\n" % command)
    named = run_in(tmp_path, *command.split())
    assert (named.returncode, named.stderr) == (0, "")
    against = run_in(tmp_path, "recompute.py", "--against", "d", CLEAN)
    assert (against.returncode, against.stdout, against.stderr) == (
        2, "", "recompute.py: --against: d is a study's copy, not a match: audit it with %s (see recompute.py "
               "--help)\n" % command)


@pytest.mark.parametrize("folder", ["copies", "copies/" + CLEAN])
def test_recompute_study_py_names_recompute_py_for_a_folder_of_matches(tmp_path, folder):
    with Platform(FIXTURES) as platform:
        assert run_in(tmp_path, "recompute.py", "--base", platform.url, "--save", "copies", CLEAN).returncode == 0
    out = run_in(tmp_path, "recompute_study.py", folder)
    assert (out.returncode, out.stdout, out.stderr) == (
        2, "", "recompute_study.py: %s holds matches, not a study: audit them with recompute.py %s (see "
               "recompute_study.py --help)\n" % (folder, folder))
    against = run_in(tmp_path, "recompute_study.py", NOWHERE + KIM, "--against", folder)
    assert (against.returncode, against.stdout, against.stderr) == (
        2, "", "recompute_study.py: --against %s holds matches, not a study: audit them with recompute.py %s (see "
               "recompute_study.py --help)\n" % (folder, folder))
    named = run_in(tmp_path, "recompute.py", folder)
    assert (named.returncode, named.stderr) == (0, "")


def test_daishi_base_is_checked_only_where_a_record_is_read_from_it(tmp_path):
    """A DAISHI_BASE that is no address stops nothing that does not read from it: a saved copy, a
    study's full address; a match id, which it would serve, is refused naming it."""
    bad = {"DAISHI_BASE": "notaurl"}
    with Platform(FIXTURES) as platform:
        assert run_in(tmp_path, "recompute_study.py", platform.url + KIM, "--save", "kim").returncode == 0
        study = run_in(tmp_path, "recompute_study.py", platform.url + KIM, env=bad)
        address = run_in(tmp_path, "recompute.py", "%s/matches/%s" % (platform.url, CLEAN), env=bad)
    for out in (run_in(REPO, "recompute.py", "fixtures/api/matches/" + CLEAN, env=bad),
                run_in(tmp_path, "recompute_study.py", "kim", env=bad), study, address):
        assert (out.returncode, out.stderr) == (0, ""), out.stderr
        assert out.stdout.endswith("\nevery figure same, every check agrees\n")
    for script, target in (("recompute.py", CLEAN), ("recompute_study.py", KIM)):
        out = run_in(tmp_path, script, target, env=bad)
        assert (out.returncode, out.stdout) == (2, "")
        named = {"recompute.py": script + ": " + CLEAN, "recompute_study.py": script}[script]
        assert out.stderr == '%s: DAISHI_BASE must be an http:// or https:// address, got "notaurl" (see %s ' \
            "--help)\n" % (named, script)


@pytest.mark.parametrize("script,args,shown", [
    ("recompute.py", ["--base", "http://[::1", CLEAN], CLEAN + ": http://[::1"),
    ("recompute.py", ["http://[::1/api/matches/" + CLEAN], CLEAN + ": http://[::1/api/matches/%s/export?page=1" % CLEAN),
    ("recompute_study.py", ["--base", "http://[::1", KIM], "http://[::1"),
])
def test_an_address_with_a_bracket_left_open_is_a_usage_error_naming_it(script, args, shown):
    """urllib cannot split it (the IPv6 address's [ never closed): exit 2 naming it, never "a
    fault of this script", and nothing sent."""
    out = run_script(script, *args)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "%s: %s is not an address (Invalid IPv6 URL) (see %s --help)\n" % (script, shown, script)


def test_an_offline_audit_loads_none_of_the_networks_modules():
    """Read from a folder, a match is audited without http.client, ssl, urllib and the rest imported
    (the guide says so: they are imported where first used), which starts it the sooner."""
    # -S: no site-packages' .pth file imports any of them first; -X importtime names each import
    out = subprocess.run([sys.executable, "-S", "-X", "importtime", str(REPO / "recompute.py"), str(MATCHES / CLEAN)],
                         capture_output=True, text=True, timeout=60)
    imported = {line.rpartition("|")[2].strip() for line in out.stderr.splitlines()}
    assert out.returncode == 0 and out.stdout.endswith("every figure same, every check agrees\n")
    assert "json" in imported and "argparse" in imported  # what it does import is listed
    network = {"base64", "http.client", "select", "ssl", "textwrap", "urllib.parse", "urllib.request"}
    assert imported & network == set()


def test_a_404_where_base_doubles_a_path_segment_says_what_base_is():
    hint = "(--base names the server, and a mirror's prefix, that /api/... and /u/... follow)"
    with Platform(FIXTURES) as platform:
        match = run_script("recompute.py", "--base", platform.url + "/api", CLEAN)
        study = run_script("recompute_study.py", "--base", platform.url + "/u", KIM)
        unknown = run_script("recompute.py", "--base", platform.url, "m_0000000000aa")
        url = platform.url
    assert (match.returncode, match.stdout) == (2, "")
    assert match.stderr == "recompute.py: %s: export page 1: 404 not found at %s/api/api/matches/%s/export?page=1 " \
        "%s\n" % (CLEAN, url, CLEAN, hint)
    assert (study.returncode, study.stdout) == (2, "")
    assert study.stderr == ("recompute_study.py: cannot read the study: trials.csv: 404 not found at %s/u%s/"
                            "trials.csv %s: no such handle or study, or a run set (a run set has no files)\n"
                            % (url, KIM, hint))
    assert (unknown.returncode, unknown.stderr) == (2, "recompute.py: m_0000000000aa: export page 1: 404 not "
                                                       "found at %s/api/matches/m_0000000000aa/export?page=1\n" % url)


def test_a_handle_in_capitals_is_said_to_be_lowercase():
    out = run_script("recompute_study.py", "/u/Kim/studies/s_eee65f53", env={"DAISHI_BASE": NOWHERE})
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("recompute_study.py: cannot read the study: not a study address: /u/Kim/studies/"
                          "s_eee65f53 (expected https://daishi.ai/u/<handle>/studies/s_<8 hex digits>, handle "
                          "and id in lowercase, its path /u/..., or a folder --save wrote)\n")


def test_every_usage_error_names_help(tmp_path):
    """The four the README's line on usage errors once did not hold for."""
    with Platform(FIXTURES) as platform:
        assert run_in(tmp_path, "recompute_study.py", platform.url + KIM, "--save", "kim").returncode == 0
        (tmp_path / "copies" / CLEAN).mkdir(parents=True)   # a copy with no saved.json
        outs = {
            "recompute.py: --against /x: no such folder": run_in(tmp_path, "recompute.py", "--against", "/x", CLEAN),
            "recompute_study.py: --save: kim is there already: to audit the platform now, name another DIR or "
            "leave out --save; to audit a copy kept there, name the folder alone":
                run_in(tmp_path, "recompute_study.py", platform.url + KIM, "--save", "kim"),
            "recompute_study.py: --against kim holds s_eee65f53, not s_9f54f5e8":
                run_in(tmp_path, "recompute_study.py", platform.url + LINKED, "--against", "kim"),
            "recompute.py: %s: --save: copies/%s holds a copy with no saved.json, not whole: name another DIR or "
            "move it aside" % (CLEAN, CLEAN): run_in(tmp_path, "recompute.py", "--base", platform.url, "--save", "copies", CLEAN),
        }
    for line, out in outs.items():
        script = line.split(":")[0]
        assert (out.returncode, out.stdout, out.stderr) == (2, "", "%s (see %s --help)\n" % (line, script))


@pytest.mark.parametrize("name", ["recompute", "recompute_study"])
def test_a_dumb_terminal_gets_no_control_sequences(monkeypatch, name):
    script = load_script(name)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for term, want in (("dumb", "\rpage 2/3" + " " * 51 + "\r\r" + " " * 59 + "\r"),
                       ("xterm", "\rpage 2/3\x1b[K\r\x1b[K")):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        monkeypatch.setenv("TERM", term)
        script.progress("page 2/3")
        script.progress("")
        assert terminal.getvalue() == want, term
