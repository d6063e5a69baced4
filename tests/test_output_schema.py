"""Every --json document either script prints has one shape, described by tests/output.schema.json:
the golden suite's recorded documents, errors, a saved copy not as saved, and --against in both."""
import gzip
import json
import shutil

import pytest

from conftest import FIXTURES, REPO, run_script
from loopback import Platform

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (requirements-dev.txt) validates the documents")
SCHEMA = json.loads((REPO / "tests" / "output.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
CLEAN = "m_b0bc344f1eac"
KIM = "/u/kim/studies/s_eee65f53"


def problems(document):
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in VALIDATOR.iter_errors(document)]


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


def test_errors_altered_copies_and_against_have_the_shape(tmp_path):
    documents = [json.loads(run_script("recompute.py", "m_NOT", "--json").stdout),
                 json.loads(run_script("recompute_study.py", "--json").stdout)]
    with Platform(FIXTURES) as platform:
        assert run_script("recompute.py", "--base", platform.url, "--save", tmp_path / "m", CLEAN).returncode == 0
        assert run_script("recompute_study.py", platform.url + KIM, "--save", tmp_path / "s").returncode == 0
        documents.append(json.loads(run_script("recompute.py", "--base", platform.url, "--against",
                                               tmp_path / "m" / CLEAN, CLEAN, "--json").stdout))
        documents.append(json.loads(run_script("recompute_study.py", platform.url + KIM, "--against",
                                               tmp_path / "s", "--json").stdout))
    shutil.copy(tmp_path / "s" / "seats.csv", tmp_path / "s" / "trials.csv")
    documents.append(json.loads(run_script("recompute_study.py", tmp_path / "s", "--json").stdout))
    assert [d["exit"] for d in documents] == [2, 2, 0, 0, 1]
    assert documents[2]["against"]["changes"] == documents[3]["against"]["changes"] == []
    for document in documents:
        assert problems(document) == [], document
