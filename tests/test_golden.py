"""Golden outputs: every bundled fixture and every record of the conformance corpus, run through
both scripts (text and --json; --all and each rubric version on the bundled records), against
the exit status, stdout and stderr recorded in tests/golden/<script>.json.gz.

A change of output is a change of behaviour: review it, then record the new outputs with
`python3 tests/test_golden.py` (it needs ../shared/conformance beside this clone). Cases of the
corpus are each skipped, with a message, where it is absent (named from tests/corpus_index.json).
"""
import contextlib
import difflib
import gzip
import hashlib
import io
import json
import sys

import pytest

import corpus
from conftest import ABSENT, FIXTURES, REPO, SHARED, load_script
from loopback import Platform

GOLDEN = REPO / "tests" / "golden"
SCRIPTS = {"recompute": load_script("recompute"), "recompute_study": load_script("recompute_study")}
RUBRICS = ("1.0", "2.0", "2.1", "2.2", "2.3", "2.4")
VIEWS = ([], ["--all"], ["--json"])
# The study names the recompute.py it runs by its sha256, which changes with every edit of it.
DIGEST = hashlib.sha256((REPO / "recompute.py").read_bytes()).hexdigest()


def views(where):
    """The views each record is run under: --all's rows on the bundled records only."""
    return VIEWS if where == "fixtures" else [v for v in VIEWS if v != ["--all"]]


def cases():
    """(name, script, root, argv): argv's `{base}` is the loopback server over root."""
    out = []
    for root, where in ((FIXTURES, "fixtures"), (SHARED, "corpus")):
        matches = sorted(p.name for p in (FIXTURES / "api" / "matches").iterdir()) if where == "fixtures" \
            else [m["id"] for m in corpus.cases("manifest.json")]
        for mid in matches:
            out += [("%s %s %s" % (where, mid, " ".join(v) or "text"), "recompute", root,
                     ["--base", "{base}", mid] + v) for v in views(where)]
            if where == "fixtures":  # the corpus under each version: test_recompute_conformance.py
                out += [("%s %s --rubric %s" % (where, mid, v), "recompute", root,
                         ["--base", "{base}", "--rubric", v, mid]) for v in RUBRICS]
        studies = sorted("/u/%s/studies/%s" % (p.parent.parent.name, p.name)
                         for p in (FIXTURES / "u").glob("*/studies/*")) if where == "fixtures" \
            else [s["address"] for s in corpus.cases("studies_manifest.json")]
        linked = [s for s in studies if "/linked" in s] if where == "fixtures" \
            else [s["address"] for s in corpus.cases("linked_manifest.json")]
        for address in sorted(set(studies) | set(linked)):
            out += [("%s %s %s" % (where, address, " ".join(v) or "text"), "recompute_study", root,
                     ["{base}" + address] + v) for v in views(where)]
        for address in linked:
            out += [("%s %s end to end %s" % (where, address, " ".join(v) or "text"), "recompute_study", root,
                     ["{base}" + address, "--matches", "--jobs", "2"] + v) for v in views(where)]
    return out


def run(script, root, argv):
    """The script's main(argv) against a loopback platform over root: exit, stdout, stderr."""
    with Platform(root) as platform:
        argv = [a.replace("{base}", platform.url) for a in argv]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = SCRIPTS[script].main(argv)
            except SystemExit as stop:
                code = stop.code
        said = {part: stream.getvalue().replace(platform.url, "{base}").replace(DIGEST, "{sha256}")
                for part, stream in (("stdout", out), ("stderr", err))}
        return dict(said, exit=code)


def recorded(script):
    path = GOLDEN / (script + ".json.gz")
    return json.loads(gzip.decompress(path.read_bytes())) if path.is_file() else {}


def packed(text):
    """gzip of text, the same bytes on every Python: no time and no name in the header (gzip.compress
    writes another header byte on 3.11 and 3.12 than on 3.9 and 3.13), so a file recorded anew with the
    same outputs is the same file."""
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=out, mtime=0) as f:
        f.write(text)
    return out.getvalue()


CASES = cases()
RECORDED = {script: recorded(script) for script in SCRIPTS}


@pytest.mark.parametrize("name,script,root,argv", CASES, ids=[c[0] for c in CASES])
def test_output_is_the_recorded_one(name, script, root, argv):
    if root == SHARED and not SHARED.is_dir():
        pytest.skip(ABSENT)
    want = RECORDED[script].get(name)
    assert want is not None, "no recorded output for %r: run python3 tests/test_golden.py" % name
    got = run(script, root, argv)
    for part in ("stdout", "stderr"):
        diff = list(difflib.unified_diff(want[part].splitlines(), got[part].splitlines(), "recorded", "now",
                                         lineterm="", n=1))
        assert not diff, "%s %s:\n%s" % (name, part, "\n".join(diff[:60]))
    assert got["exit"] == want["exit"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_recorded_file_is_what_recording_it_anew_writes(script):
    """Recording the same outputs again, on this Python, writes the same bytes."""
    raw = (GOLDEN / (script + ".json.gz")).read_bytes()
    assert packed(gzip.decompress(raw)) == raw


def test_every_case_is_recorded():
    """Every case, the corpus's too (named from its index where it is absent), has its outputs recorded."""
    names = {c[0] for c in CASES}
    assert sorted(names - set(RECORDED["recompute"]) - set(RECORDED["recompute_study"])) == []
    assert len([c for c in CASES if c[2] == SHARED]) > 150


if __name__ == "__main__":  # record the outputs of today's scripts
    if not SHARED.is_dir():
        sys.exit("the corpus ../shared/conformance is needed to record every case")
    GOLDEN.mkdir(exist_ok=True)
    for script in SCRIPTS:
        outputs = {name: run(s, root, argv) for name, s, root, argv in CASES if s == script}
        text = json.dumps(outputs, indent=0, sort_keys=True, ensure_ascii=False).encode("utf-8")
        (GOLDEN / (script + ".json.gz")).write_bytes(packed(text))
        print("%s: %d cases" % (script, len(outputs)))
