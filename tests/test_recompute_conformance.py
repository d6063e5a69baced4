"""The matches of the platform's conformance corpus, served over loopback HTTP.

Each case skipped, with a message, where ../shared/conformance is not beside this clone: the cases
are then named from tests/corpus_index.json, and the `conformance` fixture skips each.
"""
import json

import pytest

import corpus
from conftest import load_script, run_script

rc = load_script("recompute")
MATCHES = corpus.cases("manifest.json")
READABLE = [e for e in MATCHES if e["expected"] != "playing"]


def manifest():
    return json.loads((corpus.SHARED / "manifest.json").read_text("utf-8"))


def ids(entries):
    return [e["id"] + "-" + e.get("label", "") for e in entries]


@pytest.mark.parametrize("entry", MATCHES, ids=ids(MATCHES))
def test_match_comes_out_as_the_manifest_says(conformance_platform, entry):
    out = run_script("recompute.py", "--base", conformance_platform.url, entry["id"])
    assert "Traceback" not in out.stderr
    wide = [line for line in (out.stdout + out.stderr).splitlines() if len(line) > 100]
    assert wide == []
    expected = entry["expected"]
    if expected == "playing":
        assert out.returncode == 2
        assert "still playing" in out.stderr
        return
    differs = [line for line in out.stdout.splitlines() if line.startswith("DIFFERS ")]
    if expected in ("same", "explained"):
        assert out.returncode == 0, differs or out.stderr
        assert (": explained by E" in out.stdout) == (expected == "explained")
    else:
        assert expected == "differs"
        assert out.returncode == 1
        assert differs, out.stdout
        tamper = entry["tamper"]
        # "DIFFERS a_5 economy: published 44.0, recomputed 43.9, +1 in the last place"
        named = {line.split(":")[0].split(" ", 2)[2] for line in differs}
        if "report.json" in tamper:  # e.g. "report.json scorecards[4] (a_5) dimensions.economy 43.9 -> 44.0"
            figure = tamper.split()[3].split(".")[-1]
            assert figure in named
            seat = tamper.split("(")[1].split(")")[0]
            was, now = tamper.split()[4], tamper.split()[6]  # the last place is the one the record prints
            ulps = int(round((float(was) - float(now)) * 10 ** len(now.split(".")[1])))
            assert any(line.startswith("DIFFERS %s %s: " % (seat, figure))
                       and line.endswith(", %+d in the last place" % ulps) for line in differs), differs
        else:  # a tampered archive or event: the wealth no longer replays
            assert "wealth replay" in named


@pytest.mark.parametrize("entry", READABLE, ids=ids(READABLE))
def test_every_rubric_version_recomputes(conformance, entry):
    """Each saved `report/<V>.json` recomputes under V (read in-process, for speed)."""
    folder = conformance / "api/matches" / entry["id"]
    versions = sorted(p.stem for p in (folder / "report").glob("*.json"))
    assert versions == list(rc.RUBRICS)
    for version in versions:
        archive, report = rc.read_match(rc.saved_match(str(folder), version), version)
        result = rc.audit(archive, report)
        wrong = [r["label"] for s in result["seats"] for r in s["figures"]
                 if r["same"] is False and r["key"]["figure"] != "wealth replay"]
        assert wrong == [], version
        assert result["checksAgree"] == result["checksMade"]


def test_unknown_match_id(conformance, conformance_platform):
    out = run_script("recompute.py", "--base", conformance_platform.url, manifest()["unknownMatchId"])
    assert out.returncode == 2
    assert "404" in out.stderr


def test_corpus_summary(conformance, conformance_platform):
    """All clean and explained matches at once: one summary line over every seat."""
    clean = [e["id"] for e in MATCHES if e["expected"] in ("same", "explained")]
    assert len(clean) == 40
    out = run_script("recompute.py", "--base", conformance_platform.url, *clean)
    assert out.returncode == 0
    seats = sum(e["fieldSize"] for e in MATCHES if e["expected"] in ("same", "explained"))
    assert "\n%d matches: %d read, 0 could not be read; %d seats\n" % (len(clean), len(clean), seats) in out.stdout
    assert ("Fitness Index reproduced for %d of %d seats; final wealth (published) for %d of %d\n"
            % (seats, seats, seats, seats)) in out.stdout
    assert "differ:" not in out.stdout and "could not be read:" not in out.stdout
    assert [line for line in out.stdout.splitlines() if len(line) > 100] == []


def test_the_index_is_the_corpus_manifests(conformance):
    """tests/corpus_index.json names every case of the corpus, so that none vanishes where it is absent."""
    index = json.loads(corpus.INDEX.read_text("utf-8"))
    assert index == corpus.index(), "the corpus changed: write its index anew, python3 tests/corpus.py"
