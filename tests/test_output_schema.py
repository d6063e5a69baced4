"""Every --json document either script prints has one shape, described by tests/output.schema.json:
the golden suite's recorded documents, and each kind made here from both scripts: a match, a batch, a
study with and without --matches, --against with changes and without, a saved copy not as saved,
a usage error and a record that cannot be read."""
import gzip
import hashlib
import json
import shutil

import pytest

from conftest import FIXTURES, REPO, run_script
from loopback import Platform

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (requirements-dev.txt) validates the documents")
SCHEMA = json.loads((REPO / "tests" / "output.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
KINDS = {kind: jsonschema.Draft202012Validator(dict(SCHEMA, oneOf=[{"$ref": "#/$defs/" + kind}]))
         for kind in ("error", "altered", "matches", "study")}
CLEAN = "m_b0bc344f1eac"
CUT = "m_6b97819aefda"  # its report a cent off the archive's wealth for a_2
OTHER = "m_1b23341c9524"
UNKNOWN = "m_000000000000"
M1 = "m_4be7ac37a1d7"
KIM = "/u/kim/studies/s_eee65f53"
LINKED = "/u/linked-lab/studies/s_9f54f5e8"


def problems(document):
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in VALIDATOR.iter_errors(document)]


def kinds(document):
    """The schema's kinds of document this one is: exactly one where it has the shape."""
    return [kind for kind, validator in KINDS.items() if validator.is_valid(document)]


def rehash(copy, name):
    """After a hand edit of a saved copy's file: saved.json's sha256 of it rewritten, the copy whole again."""
    about = json.loads((copy / "saved.json").read_text())
    about["sha256"][name] = hashlib.sha256((copy / name).read_bytes()).hexdigest()
    (copy / "saved.json").write_text(json.dumps(about))


def edit_json(copy, name, edit):
    document = json.loads((copy / name).read_text())
    edit(document)
    (copy / name).write_text(json.dumps(document))
    rehash(copy, name)


def edit_trials(copy):
    """trials.csv's first row says its trial failed: the copy is older than the record, and differs."""
    lines = (copy / "trials.csv").read_bytes().split(b"\r\n")
    assert b",completed," in lines[1]
    lines[1] = lines[1].replace(b",completed,", b",failed,", 1)
    (copy / "trials.csv").write_bytes(b"\r\n".join(lines))
    rehash(copy, "trials.csv")


def set_wealth(report):
    report["scorecards"][0]["wealth"] = 99.9


def made(done):
    """What a run printed: its JSON document, its exit status and its text as printed."""
    assert done.stdout.startswith("{"), (done.returncode, done.stdout[:200], done.stderr[:500])
    return {"document": json.loads(done.stdout), "exit": done.returncode, "stdout": done.stdout}


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """Each kind of document, made once by the scripts as a user runs them, by name."""
    tmp = tmp_path_factory.mktemp("documents")
    out = {}
    match = lambda *args: made(run_script("recompute.py", *args, "--json"))
    study = lambda *args: made(run_script("recompute_study.py", *args, "--json"))
    out["usage error, recompute.py"] = match("--frobnicate", CLEAN)
    out["usage error, recompute_study.py"] = study()
    with Platform(FIXTURES) as platform:
        url = platform.url
        for args, where in (([CLEAN], "m"), ([CLEAN, OTHER], "batch")):
            assert run_script("recompute.py", "--base", url, "--save", tmp / where, *args).returncode == 0
        for args, where in (([KIM], "s"), ([LINKED, "--matches"], "linked")):
            assert run_script("recompute_study.py", url + args[0], *args[1:], "--save", tmp / where).returncode == 0
        out["match"] = match("--base", url, CLEAN)
        out["batch"] = match("--base", url, CLEAN, OTHER, UNKNOWN)
        out["unreadable record, recompute.py"] = match("--base", url, UNKNOWN)
        out["unreadable record, recompute_study.py"] = study(url + "/u/kim/studies/s_00000000")
        out["study"] = study(url + KIM)
        out["study --matches"] = study(url + LINKED, "--matches")
        out["against unchanged, recompute.py"] = match("--base", url, "--against", tmp / "m" / CLEAN, CLEAN)
        out["against unchanged, recompute_study.py"] = study(url + KIM, "--against", tmp / "s")
        edit_json(tmp / "m" / CLEAN, "report.json", set_wealth)
        edit_trials(tmp / "s")
        edit_json(tmp / "linked" / M1, "report.json", set_wealth)
        out["against changed, recompute.py"] = match("--base", url, "--against", tmp / "m" / CLEAN, CLEAN)
        out["against changed, recompute_study.py"] = study(url + KIM, "--against", tmp / "s")
        out["against changed, recompute_study.py --matches"] = study(url + LINKED, "--matches", "--against",
                                                                     tmp / "linked")
    out["batch of saved copies"] = match(tmp / "batch")
    out["match --explain"] = match("--explain", FIXTURES / "api" / "matches" / CUT)
    kim = FIXTURES / KIM.lstrip("/")
    profile = json.loads((FIXTURES / "u" / "kim.json").read_text())
    profile["studies"][0]["reading"]["comparisons"][0]["mean"] = "2.204"  # 2.200 on the files
    (tmp / "kim.json").write_text(json.dumps(profile))
    out["study --explain"] = study("https://daishi.ai" + KIM, "--explain", "--trials", kim / "trials.csv",
                                   "--seats", kim / "seats.csv", "--page", tmp / "kim.json")
    out["saved study --matches"] = study(tmp / "linked", "--matches")
    shutil.copy(FIXTURES / "api" / "matches" / CLEAN / "report" / "2.3.json", tmp / "batch" / CLEAN / "report.json")
    out["altered copy, recompute.py"] = match(tmp / "batch" / CLEAN)
    shutil.copy(tmp / "s" / "seats.csv", tmp / "s" / "trials.csv")
    out["altered copy, recompute_study.py"] = study(tmp / "s")
    return out


# name: (kind, exit, what else the document must be to be this shape)
SHAPES = {
    "match": ("matches", 0, lambda d: len(d["matches"]) == 1 and d["unreadable"] == [] and "against" not in d),
    "batch": ("matches", 2, lambda d: [m["matchId"] for m in d["matches"]] == [CLEAN, OTHER]
              and [u["source"] for u in d["unreadable"]] == [UNKNOWN] and d["summary"]["matches"] == 3),
    "batch of saved copies": ("matches", 0, lambda d: len(d["matches"]) == 2
                              and all(m["copy"] for m in d["matches"])),
    "study": ("study", 0, lambda d: "matches" not in d and "matches" not in d["summary"]),
    "match --explain": ("matches", 1, lambda d: [r["derivation"]["sources"]["published"].split("/")[-1]
                                                 for s in d["matches"][0]["seats"] for r in s["figures"]
                                                 if "derivation" in r] == ["report.json.scorecards[1].wealth"]),
    "study --explain": ("study", 1, lambda d: [(f["label"], f["derivation"]["terms"]["n"]) for f in d["figures"]
                                               if "derivation" in f] == [("comparison 1 (with memory): mean", 21)]),
    "study --matches": ("study", 0, lambda d: len(d["matches"]) == d["summary"]["matches"] == 6),
    "saved study --matches": ("study", 0, lambda d: len(d["matches"]) == 6 and d["copy"]),
    "against unchanged, recompute.py": ("matches", 0, lambda d: d["against"]["changes"] == []),
    "against unchanged, recompute_study.py": ("study", 0, lambda d: d["against"]["changes"] == []),
    "against changed, recompute.py": ("matches", 1, lambda d: d["against"]["changes"] == [
        {"file": "report.json", "where": "scorecards[0].wealth", "was": 99.9, "now": 34.5}]),
    "against changed, recompute_study.py": ("study", 1, lambda d: d["against"]["changes"] == [
        {"file": "trials.csv", "where": "line 2 ended", "was": "failed", "now": "completed"}]),
    "against changed, recompute_study.py --matches": ("study", 1, lambda d: d["against"]["changes"] == [
        {"file": M1 + "/report.json", "where": "scorecards[0].wealth", "was": 99.9, "now": 335.25}]
        and len(d["matches"]) == 6),
    "altered copy, recompute.py": ("error", 1, lambda d: "sha256 differs" in d["error"]),
    "altered copy, recompute_study.py": ("altered", 1, lambda d: "not the file saved" in d["checks"][0]["check"]),
    "usage error, recompute.py": ("error", 2, lambda d: "unrecognized arguments: --frobnicate" in d["error"]),
    "usage error, recompute_study.py": ("error", 2, lambda d: "arguments are required: address" in d["error"]),
    "unreadable record, recompute.py": ("error", 2, lambda d: "404" in d["error"]),
    "unreadable record, recompute_study.py": ("error", 2, lambda d: "404" in d["error"]),
}
ERRORS = [name for name, (kind, _, _) in SHAPES.items() if kind == "error"]


def test_the_schema_is_a_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_recorded_json_document_has_the_shape():
    checked = 0
    for script in ("recompute", "recompute_study"):
        cases = json.loads(gzip.decompress((REPO / "tests" / "golden" / (script + ".json.gz")).read_bytes()))
        for name, case in cases.items():
            if "--json" in name:
                assert problems(json.loads(case["stdout"])) == [], name
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_kind_of_document_has_the_shape(documents, name):
    kind, status, shaped = SHAPES[name]
    got = documents[name]
    document = got["document"]
    assert problems(document) == [], name
    assert kinds(document) == [kind]
    assert got["exit"] == document["exit"] == status, document.get("error")
    assert document["script"] == ("recompute_study.py" if "study" in name else "recompute.py")
    assert shaped(document), document.get("against") or document.get("error") or document.get("checks")


def test_every_kind_the_schema_names_is_made_by_both_scripts(documents):
    made_by = {(kind, documents[name]["document"]["script"]) for name, (kind, _, _) in SHAPES.items()}
    assert made_by == {("error", "recompute.py"), ("error", "recompute_study.py"), ("matches", "recompute.py"),
                       ("study", "recompute_study.py"), ("altered", "recompute_study.py")}


MUTATIONS = {   # what is done to a document of the shape, by what it shows the schema refuses
    "a change without now": ("against changed, recompute.py", lambda d: d["against"]["changes"][0].pop("now")),
    "a change with a key more": ("against changed, recompute_study.py",
                                 lambda d: d["against"]["changes"][0].update(line=2)),
    "a match's change without was": ("against changed, recompute_study.py --matches",
                                     lambda d: d["against"]["changes"][0].pop("was")),
    "a key the schema does not name": ("match", lambda d: d.update(extra=1)),
    "a match without trusted": ("match", lambda d: d["matches"][0].pop("trusted")),
    "an unreadable match of exit 0": ("batch", lambda d: d["unreadable"][0].update(exit=0)),
    "a summary of matches without them": ("study", lambda d: d["summary"].update(matches=6)),
    "matches without differences": ("study --matches", lambda d: d.pop("differences")),
    "a trial's match of exit 3": ("study --matches", lambda d: d["matches"][0].update(exit=3)),
    "an error with a summary": ("usage error, recompute.py", lambda d: d.update(summary={})),
    "an error of exit 0": ("usage error, recompute_study.py", lambda d: d.update(exit=0)),
    "an empty error": ("unreadable record, recompute_study.py", lambda d: d.update(error="")),
    "an altered copy whose check agrees": ("altered copy, recompute_study.py",
                                           lambda d: d["checks"][0].update(agrees=True)),
    "a derivation without its sources": ("match --explain", lambda d: next(
        r for s in d["matches"][0]["seats"] for r in s["figures"] if "derivation" in r)["derivation"].pop("sources")),
    "a derivation of another document": ("study --explain", lambda d: next(
        f for f in d["figures"] if "derivation" in f)["derivation"].update(section="§4.2")),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_document_not_of_the_shape_is_refused(documents, mutation):
    """The schema is no formality: a key missing, one it does not name or a value out of its range fails."""
    name, mutate = MUTATIONS[mutation]
    document = json.loads(json.dumps(documents[name]["document"]))
    assert problems(document) == []
    mutate(document)
    assert problems(document) != [], name


@pytest.mark.parametrize("name", sorted(set(SHAPES) - set(ERRORS)))
def test_documents_are_indented_as_the_readme_says(documents, name):
    got = documents[name]
    assert got["stdout"] == json.dumps(got["document"], indent=1, ensure_ascii=True) + "\n"


@pytest.mark.parametrize("name", ERRORS)
def test_error_documents_are_indented_like_the_others(documents, name):
    got = documents[name]
    assert got["stdout"] == json.dumps(got["document"], indent=1, ensure_ascii=True) + "\n"
