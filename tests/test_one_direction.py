"""The one-direction design: one shared block, an audit guide that stays true, copies kept whole,
the streams and the script's own failures as the design says."""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, REPO, load_script, run_script
from loopback import Platform

SCRIPTS = ("recompute.py", "recompute_study.py")
BEGIN = "# ==================================================================== the shared block\n"
END = "# ==================================================================== the shared block's end\n"
CLEAN = "m_b0bc344f1eac"
KIM = "/u/kim/studies/s_eee65f53"


def block(script):
    text = (REPO / script).read_text("utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1, script
    return text[text.index(BEGIN):text.index(END) + len(END)]


def test_the_shared_block_is_the_same_text_in_both_scripts():
    a, b = (block(s) for s in SCRIPTS)
    assert a == b
    assert len(a.splitlines()) > 300  # the network, copies, keep and the terminal: not a stub


def test_same_named_definitions_are_the_same_text():
    defs = []
    for script in SCRIPTS:
        src = (REPO / script).read_text("utf-8")
        lines = src.splitlines()  # a definition's lines, decorators and all (get_source_segment is slow)
        defs.append({n.name: lines[min([n.lineno] + [d.lineno for d in n.decorator_list]) - 1:n.end_lineno]
                     for n in ast.parse(src).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))})
    drift = sorted(n for n in set(defs[0]) & set(defs[1]) - {"main"} if defs[0][n] != defs[1][n])
    assert drift == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_audit_guide_names_places_that_exist(script):
    """Each `name (line N)` the docstring names is defined at that line, in the shared block where
    it says so: the one function that sends requests and the one that writes files."""
    src = (REPO / script).read_text("utf-8")
    lines = src.splitlines()
    doc = ast.get_docstring(ast.parse(src))
    anchors = re.findall(r"([A-Za-z_.]+) \(line (\d+)\)", doc)
    assert {name for name, _ in anchors} >= {"Network.get", "keep"}, anchors
    for name, number in anchors:
        line = lines[int(number) - 1].strip()
        assert re.match(r"(def|class) %s\b" % re.escape(name.split(".")[-1]), line), (name, line)


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_pep_723_header_asks_for_nothing(script):
    head = (REPO / script).read_text("utf-8").split('"""')[0]
    assert '# /// script\n# requires-python = ">=3.9"\n# dependencies = []\n# ///\n' in head


# What touches the world, by the call that does it: each is named in the guide's bullet.
TOUCHES = {
    "Sent": {"http.client.HTTPConnection", "http.client.HTTPSConnection", "conn.request",
             "conn.getresponse", "conn.set_tunnel", "socket.create_connection", "socket.socket",
             "urllib.request.urlopen", "urllib.request.build_opener"},
    "The environment read": {"os.environ.get", "os.getenv", "os.environ", "urllib.request.getproxies",
                             "urllib.request.proxy_bypass", "ssl.create_default_context",
                             "shutil.get_terminal_size", "os.get_terminal_size"},
    "Written": {"os.rename", "os.replace", "os.makedirs", "os.mkdir", "os.rmdir", "os.remove",
                "os.unlink", "shutil.rmtree", "shutil.move", "shutil.copy", "shutil.copytree",
                "tempfile.mkdtemp", "tempfile.mkstemp", "os.dup2", "os.write", "os.symlink"},
    "Read": {"os.listdir", "os.scandir", "os.walk", "spec.loader.exec_module",
             "importlib.util.spec_from_file_location", "importlib.import_module"},
}


def touches(script):
    """(bullet, the function or method, the call) of each call in the script that touches the world."""
    found = set()

    def visit(node, name):
        for child in ast.iter_child_nodes(node):
            inner = name
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                inner = name + "." + child.name if isinstance(node, ast.ClassDef) else (name or child.name)
            if isinstance(child, (ast.Call, ast.Subscript)):
                call = ast.unparse(child.func if isinstance(child, ast.Call) else child.value)
                if call in ("open", "os.open", "os.fdopen"):
                    mode = " ".join(ast.unparse(a) for a in child.args[1:] + [k.value for k in child.keywords])
                    found.add(("Written" if re.search("['\"][^'\"]*[wxa+]|WRONLY|RDWR|CREAT", mode) else "Read",
                               name, call))
                for bullet, calls in TOUCHES.items():
                    if call in calls:
                        found.add((bullet, name, call))
            visit(child, inner)

    visit(ast.parse((REPO / script).read_text("utf-8")), None)
    return found


def guide_bullets(script):
    doc = ast.get_docstring(ast.parse((REPO / script).read_text("utf-8")))
    return {b.split(",")[0].split(":")[0].strip(): b for b in doc.split("\n- ")[1:]}


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_guide_names_every_place_that_sends_writes_reads_or_reads_the_environment(script):
    """A scan of the source for requests, writes, reads and environment reads finds none that the
    guide's bullet does not name (with its line, which the test above holds true)."""
    bullets = guide_bullets(script)
    places = touches(script)
    assert {bullet for bullet, _, _ in places} == set(TOUCHES), places
    unnamed = sorted((bullet, name, call) for bullet, name, call in places
                     if not re.search(r"(^|[^.\w])%s \(line \d+\)" % re.escape(name), bullets[bullet]))
    assert unnamed == []


def test_the_scan_finds_what_it_looks_for():
    """The scan above would see a write, a request or an environment read added anywhere."""
    found = touches("recompute.py")
    assert ("Written", "placed", "os.rename") in found and ("Sent", "ask", "conn.request") in found
    assert ("The environment read", "setting", "os.environ.get") in found
    assert ("Read", "read_file", "os.open") in found and ("Written", "keep", "open") in found


def test_two_saves_of_one_match_at_once_leave_one_whole_copy(tmp_path):
    """Two --save runs of one match into one folder at once: one keeps a whole copy that verifies,
    the other is refused (or audits that copy); never a copy holding files of both."""
    with Platform(FIXTURES) as p:
        runs = [subprocess.Popen([sys.executable, str(REPO / "recompute.py"), "--base", p.url,
                                  "--save", str(tmp_path / "copies"), CLEAN],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
        outs = [(r.wait(timeout=60), r.stderr.read()) for r in runs]
    codes = sorted(code for code, _ in outs)
    assert codes in ([0, 0], [0, 2]), outs
    if codes == [0, 2]:
        assert any("is there already" in err or "cannot keep" in err for _, err in outs), outs
    copy = tmp_path / "copies" / CLEAN
    assert sorted(os.listdir(tmp_path / "copies")) == [CLEAN]  # no temporary folder left
    again = run_script("recompute.py", copy)
    assert again.returncode == 0 and "every file verified" in again.stdout, again.stdout
    listed = json.loads((copy / "saved.json").read_text())["sha256"]
    assert sorted(listed) == sorted(str(f.relative_to(copy)) for f in copy.rglob("*.json")
                                    if f.name != "saved.json")


def close_stderr():
    os.close(2)


@pytest.mark.parametrize("stderr", ["full", "closed"])
@pytest.mark.parametrize("script,argv", [
    ("recompute.py", ["--base", "{url}", CLEAN]),
    ("recompute_study.py", ["{url}" + KIM])])
def test_a_stderr_that_takes_nothing_changes_no_exit_status(script, argv, stderr):
    """stderr /dev/full, or closed before the script starts: best effort, the audit's exit."""
    with Platform(FIXTURES) as p, open("/dev/full", "w") as full:
        args = [a.replace("{url}", p.url) for a in argv]
        out = subprocess.run([sys.executable, str(REPO / script)] + args, stdout=subprocess.PIPE,
                             stderr=full, text=True, timeout=60,
                             preexec_fn=close_stderr if stderr == "closed" else None)
    assert out.returncode == 0 and out.stdout.endswith("every figure same, every check agrees\n")


@pytest.mark.parametrize("name", ["recompute", "recompute_study"])
def test_the_scripts_own_failure_says_so(monkeypatch, capsys, name):
    """An exception in the script's own code: named as the script's failure, never the record's."""
    script = load_script(name)

    def broken(*args, **kwargs):
        raise TypeError("a bug")

    monkeypatch.setattr(script, "parse_args" if name == "recompute" else "parse_arguments", broken)
    monkeypatch.setattr(sys, "argv", [name + ".py", CLEAN])
    monkeypatch.setattr(os, "_exit", sys.exit)  # a run ends by os._exit: here, as SystemExit
    with pytest.raises(SystemExit) as stop:
        script.start(script.main)
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err == ("%s.py: %s.py 3.1 failed (TypeError: a bug): a fault of this script, not of the "
                   "record; please report it\n" % (name, name))


@pytest.mark.parametrize("script,argv,shown", [
    ("recompute.py", ["--base", "{auth}", CLEAN], "cannot reach 127.0.0.1:9"),
    ("recompute.py", ["--json", "{auth}/matches/" + CLEAN], "cannot reach 127.0.0.1:9"),
    ("recompute.py", ["{auth}/match/" + CLEAN], "http://***@127.0.0.1:9/match/"),
    ("recompute_study.py", ["--base", "{auth}", KIM], "cannot reach 127.0.0.1:9"),
    ("recompute_study.py", ["--json", "{auth}" + KIM], "cannot reach 127.0.0.1:9"),
    ("recompute_study.py", ["{auth}/u/kim/studies/s_x"], "http://***@127.0.0.1:9/u/kim/")])
def test_a_password_in_an_address_is_never_shown(script, argv, shown):
    auth = "http://kim:s3cret@127.0.0.1:9"  # nothing listens on port 9
    out = run_script(script, *[a.replace("{auth}", auth) for a in argv],
                     env={"DAISHI_TIMEOUT": "2"})
    assert out.returncode == 2
    assert "s3cret" not in out.stdout + out.stderr
    assert shown in out.stderr, out.stderr


@pytest.mark.parametrize("script,record,given", [
    ("recompute.py", CLEAN, "--base"), ("recompute.py", CLEAN, "DAISHI_BASE"),
    ("recompute_study.py", "/u/linked-lab/studies/s_9f54f5e8", "DAISHI_BASE")])
def test_a_password_is_not_kept_in_saved_json(tmp_path, script, record, given):
    """A password in the server's address, by --base or DAISHI_BASE: kept and shown as ***@, in
    every saved.json (the study's matches' too), and never on the terminal, saving or re-auditing."""
    saved = tmp_path / "copies"
    with Platform(FIXTURES) as p:
        secret = p.url.replace("http://", "http://kim:s3cret@")
        argv = (["--base", secret] if given == "--base" else []) + ["--save", saved, record]
        argv += ["--matches"] if script == "recompute_study.py" else []
        out = run_script(script, *argv, env={"DAISHI_BASE": secret} if given != "--base" else {})
    again = run_script(script, saved, *argv[-1:] if script == "recompute_study.py" else [])
    assert out.returncode == again.returncode == 0, out.stderr + again.stderr
    abouts = [json.loads(path.read_text()) for path in saved.rglob("saved.json")]
    assert len(abouts) == (7 if script == "recompute_study.py" else 1)
    assert all(about["address"].startswith("http://***@127.0.0.1:") for about in abouts)
    shown = out.stdout + out.stderr + again.stdout + again.stderr
    assert "s3cret" not in shown and "kim:" not in shown and "http://***@127.0.0.1:" in shown


@pytest.mark.parametrize("script,argv,says", [
    ("recompute_study.py", ["{url}" + KIM, "--jobs", "4"], "--jobs goes with --matches"),
    ("recompute_study.py", ["{url}" + KIM, "--matches", "--jobs", "9" * 5000],
     "--jobs takes a number from 1 to 16"),
    ("recompute_study.py", ["{url}" + KIM, "--matches", "--jobs", "\u00b2"],
     "--jobs takes a number from 1 to 16"),
    ("recompute_study.py", [CLEAN], "is a match: audit it with recompute.py " + CLEAN)])
def test_usage_errors_name_the_option_in_one_line(script, argv, says):
    with Platform(FIXTURES) as p:
        out = run_script(script, *[a.replace("{url}", p.url) for a in argv])
        asked = list(p.requests)
    assert out.returncode == 2 and says in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert asked == [] and ("--help" in out.stderr or "recompute.py" in says)


def test_recipe_on_a_fixed_rule_study_is_said_not_read(tmp_path):
    recipe = tmp_path / "recipe.json"
    recipe.write_text('{"anytime": {"rho": 1}}')
    with Platform(FIXTURES) as p:
        out = run_script("recompute_study.py", p.url + KIM, "--recipe", recipe)
    assert out.returncode == 0 and out.stderr == ""
    shown = out.stdout.replace(" \\\n    ", " ")
    assert "  recipe.json: not read (--recipe %s): the rule is fixed, not anytime\n" % recipe in shown


def test_the_study_script_writes_nothing_beside_itself(tmp_path):
    for name in SCRIPTS:
        (tmp_path / name).write_bytes((REPO / name).read_bytes())
    with Platform(FIXTURES) as p:
        out = subprocess.run([sys.executable, str(tmp_path / "recompute_study.py"),
                              p.url + "/u/linked-lab/studies/s_9f54f5e8", "--matches"],
                             capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""))
    assert out.returncode == 0, out.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(SCRIPTS)


# ---------------------------------------------------------------- what users and attackers meet
def saved_match(tmp_path):
    with Platform(FIXTURES) as p:
        out = run_script("recompute.py", "--base", p.url, "--save", tmp_path / "copies", CLEAN)
    assert out.returncode == 0, out.stderr
    return tmp_path / "copies" / CLEAN


def test_a_stray_file_beside_a_whole_copy_is_neither_read_nor_shown(tmp_path):
    copy = saved_match(tmp_path)
    (copy / "playing.json").write_text('{"reason": "a stray file \\u001b[31m"}')
    out = run_script("recompute.py", copy)
    assert out.returncode == 0 and "every file verified" in out.stdout
    assert "stray" not in out.stdout + out.stderr


@pytest.mark.parametrize("names,code,says", [
    (40000, 1, "missing from the copy saved"), (680000, 2, "saved.json: larger than 4194304 bytes"),
    (990000, 2, "saved.json: larger than 4194304 bytes")])
def test_a_saved_json_of_many_names_is_refused_in_one_line(tmp_path, names, code, says):
    """A saved.json listing 40,000 files none of which is there: a failed check that names 40 and
    counts the rest; one past 4 MB (680,000 names, 58 MB, under the 64 MB a record's file may
    take; 990,000, 79 MB): not read at all, within 256 MB."""
    copy = saved_match(tmp_path)
    about = json.loads((copy / "saved.json").read_text())
    about["sha256"].update(("export/%d.json" % n, "0" * 64) for n in range(2, names))
    (copy / "saved.json").write_text(json.dumps(about))
    from hostile_common import run_child
    out = run_child("recompute.py", ["--json", copy], tmp_path, timeout=60)
    assert out.code == code and says in out.err and out.err.count("\n") == 1
    assert len(out.out) < 20000  # the error cut short: the text lists 40, counts the rest
    assert out.peak_mb <= 256, out.peak_mb


def test_many_faults_of_a_copy_are_counted_not_all_listed(tmp_path):
    copy = saved_match(tmp_path)
    about = json.loads((copy / "saved.json").read_text())
    about["sha256"].update(("export/%d.json" % n, "0" * 64) for n in range(2, 5000))
    (copy / "saved.json").write_text(json.dumps(about))
    out = run_script("recompute.py", copy)
    assert out.returncode == 1
    assert out.stdout.count("missing from the copy saved") == 40 and "... and 4958 more" in out.stdout


def test_an_argument_both_a_match_id_and_a_folder_is_refused_naming_both(tmp_path):
    (tmp_path / CLEAN).mkdir()
    out = subprocess.run([sys.executable, str(REPO / "recompute.py"), CLEAN], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr == ("recompute.py: %s names both a match and a folder here: give ./%s for the "
                          "folder, or move it (see recompute.py --help)\n" % (CLEAN, CLEAN))


def test_one_id_from_two_servers_is_two_sources():
    with Platform(FIXTURES) as a, Platform(FIXTURES) as b:
        out = run_script("recompute.py", CLEAN, "%s/matches/%s" % (b.url, CLEAN),
                         env={"DAISHI_BASE": a.url})
        asked = (len(a.requests), len(b.requests))
    assert out.returncode == 0 and asked[0] > 0 and asked[1] > 0
    assert "2 matches: 2 read" in out.stdout


@pytest.mark.parametrize("script,option,record", [
    ("recompute.py", "--save", CLEAN),
    ("recompute.py", "--save", "https://daishi.ai/matches/" + CLEAN),
    ("recompute.py", "--against", CLEAN),
    ("recompute_study.py", "--save", "https://daishi.ai/u/kim/studies/s_eee65f53"),
    ("recompute_study.py", "--against", "/u/kim/studies/s_eee65f53"),
])
def test_save_with_its_folder_left_out_says_so(script, option, record):
    out = run_script(script, option, record)
    assert out.returncode == 2 and out.stdout == "" and out.stderr == (
        "%s: %s takes a folder: %s DIR %s (see %s --help)\n" % (script, option, option, record, script))


def test_a_study_path_that_is_no_folder_says_so():
    out = run_script("recompute_study.py", "./nosuchdir/")
    assert out.returncode == 2
    assert out.stderr == "recompute_study.py: cannot read the study: ./nosuchdir/: no such folder\n"


def test_a_match_folder_of_a_saved_study_that_leads_out_is_not_read(tmp_path):
    study = "/u/linked-lab/studies/s_9f54f5e8"
    saved = tmp_path / "saved"
    with Platform(FIXTURES) as p:
        out = run_script("recompute_study.py", p.url + study, "--matches", "--save", saved)
    assert out.returncode == 0, out.stderr
    mid = sorted(n for n in os.listdir(saved) if n.startswith("m_"))[0]
    os.rename(saved / mid, tmp_path / mid)
    os.symlink(tmp_path / mid, saved / mid)
    again = run_script("recompute_study.py", saved, "--matches")
    assert again.returncode == 2 and "a link leading outside" in again.stderr
    (saved / mid).unlink()
    os.rename(tmp_path / mid, saved / mid)
    (saved / mid / "saved.json").unlink()
    unverified = run_script("recompute_study.py", saved, "--matches")
    assert unverified.returncode == 2 and "not a verified copy of %s" % mid in unverified.stderr
    assert "every file verified" in unverified.stdout.replace(" \\\n    ", " ").splitlines()[0]


def test_wrapping_a_long_line_is_linear_and_fits():
    rc = load_script("recompute")
    line = " ".join("word%d" % i for i in range(400000))  # about 4 MB
    lines = rc.wrapped(line, 60)
    assert all(len(part) <= 60 for part in lines) and len(lines) > 50000
    assert " ".join(part.rstrip(" \\").strip() for part in lines) == line


MATCHES = FIXTURES / "api" / "matches"
AT_60 = [
    ("recompute", ["--all"] + [str(MATCHES / m) for m in ("m_6b97819aefda", "m_e728aaaa03cd")]),
    ("recompute", [str(MATCHES / m) for m in ("m_6b97819aefda", "m_47445e62fef6", "m_000000000000")]),
    ("recompute_study", ["{url}/u/linked-lab/studies/s_9f54f5e8", "--all"]),
    ("recompute_study", ["{url}/u/linked-lab/studies/s_9f54f5e8", "--matches"]),
]


@pytest.mark.parametrize("name,argv", AT_60)
def test_every_line_fits_a_terminal_of_60_columns_but_the_verdict(monkeypatch, name, argv):
    """On a terminal 60 columns wide every line fits (wrapped with ` \\` where long), except the
    verdict, which is always the last line, whole."""
    from hostile_common import run_main
    script = load_script(name)
    monkeypatch.setattr(script, "terminal_width", lambda: 60)
    with Platform(FIXTURES) as p:
        o = run_main(script, [a.replace("{url}", p.url) for a in argv])
    assert o.exc is None and o.code in (0, 1, 2), o
    lines = o.out.rstrip("\n").split("\n")
    assert [line for line in lines[:-1] if len(line) > 60] == []
    assert not lines[-1].startswith(" ") and lines[-1].split(":")[0] in (
        "DIFFERS", "FAILS", "NOT READ", "every figure same, every check agrees"), lines[-1]


@pytest.mark.parametrize("name", ["recompute", "recompute_study"])
def test_keep_refuses_a_folder_made_while_it_writes(tmp_path, monkeypatch, name):
    """An empty folder made at the target after keep began (after any check before the rename):
    refused, left as it was, and nothing of the copy left behind."""
    script = load_script(name)
    target = tmp_path / "copies" / "m_b0bc344f1eac"
    dumps = script.json.dumps

    def meanwhile(*args, **kwargs):  # saved.json is written last, just before the rename
        target.mkdir(exist_ok=True)
        return dumps(*args, **kwargs)

    staged = script.new_copy(str(target))
    monkeypatch.setattr(script.json, "dumps", meanwhile)
    with pytest.raises(script.Unreadable) as refused:
        script.keep(staged, {"report.json": b"{}"}, {"kind": "match", "address": "x"}, str(target))
    assert "--save: cannot keep" in str(refused.value) and "exists" in str(refused.value)
    assert os.listdir(target) == [] and os.listdir(target.parent) == [target.name]


# ---------------------------------------------------------------- the trust surface, by one grep

MACHINE = set().union(*TOUCHES.values()) | {
    "os.urandom", "os.fstat", "os.stat", "os._exit", "exec", "selectors.DefaultSelector", "signal.signal",
    "csv.field_size_limit",
    "shutil.rmtree", "os.path.isdir", "os.path.isfile", "os.path.lexists", "os.path.realpath", "isdir",
    "lexists", "sys.stdout.isatty", "sys.stderr.isatty", "sock.makefile", "self.sock.settimeout",
    "self.raw.readinto", "conn.sock.settimeout"}


# The shared block's own doors, as the rest of a script calls them: each call is shown too.
ENTRIES = {"open", "os.open", "os.fdopen", "keep", "new_copy", "read_file", "saved_match", "rc.saved_match",
           "download", "rc.download", "writing"}


def trust_surface(script):
    """(the guide's grep pattern, the names of the functions it lists outside the shared block)."""
    src = (REPO / script).read_text("utf-8")
    command = re.search(r"\n    (grep -nE .*? %s)\n" % re.escape(script), src, re.S).group(1)
    pattern = "|".join(re.findall(r"-e '([^']*)'", command))
    listed = src[src.index(command):].split("in one of:", 1)[1].split(":", 1)[0]
    return re.compile(pattern.replace("[[]", r"\[")), set(re.findall(r"([A-Za-z_]+) \(line \d+\)", listed))


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_guides_grep_shows_every_call_that_touches_the_machine(script):
    """Each call of the scan's list (requests, files and folders, the environment, signals,
    descriptors, the exit, code run) stands on a line the guide's grep shows."""
    src = (REPO / script).read_text("utf-8")
    lines = src.splitlines()
    pattern, _ = trust_surface(script)
    missed = []
    for node in ast.walk(ast.parse(src)):
        call = isinstance(node, ast.Call) and ast.unparse(node.func)
        if call and (call in MACHINE | ENTRIES or call.endswith("net.get")):
            if not pattern.search(lines[node.lineno - 1]):
                missed.append((node.lineno, ast.unparse(node.func)))
    assert missed == []


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_line_the_grep_shows_is_in_the_shared_block_or_in_the_guides_list(script):
    """What the grep shows outside the guide itself, the lines that start the script and the
    shared block stands in a function the guide's short list names (with its line, held true
    above)."""
    src = (REPO / script).read_text("utf-8")
    lines = src.splitlines()
    pattern, listed = trust_surface(script)
    tree = ast.parse(src)
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("# --- constants"))
    begin, end = (lines.index(marker.rstrip("\n")) + 1 for marker in (BEGIN, END))
    owner = {}
    for node in tree.body:
        for n in range(node.lineno, node.end_lineno + 1):
            owner[n] = getattr(node, "name", None)
    outside = [(n, owner.get(n)) for n, line in enumerate(lines, 1) if pattern.search(line)
               and tree.body[0].end_lineno < n and not n < start and not begin <= n <= end]
    assert outside and {name for _, name in outside} <= listed, sorted(
        (n, name) for n, name in outside if name not in listed)
