"""The platform's conformance corpus, ../shared/conformance beside this clone, as the tests read it.

The tests of the corpus are parametrized over its manifests' cases. Where the corpus is absent, each of
them is still collected, from tests/corpus_index.json (the cases' names, kept from the manifests), and
reported skipped saying why (ABSENT): none vanishes from the count. After the corpus changes, write the
index anew with `python3 tests/corpus.py` (test_the_index_is_the_corpus_manifests' says when).
"""
import json
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance"
INDEX = Path(__file__).resolve().parent / "corpus_index.json"
ABSENT = "../shared/conformance is absent: the platform's conformance corpus is not beside this clone"
# each manifest: its list of cases, and what of each case a test's name or parameters need
KEPT = {"manifest.json": ("matches", ("id", "label", "expected")),
        "studies_manifest.json": ("studies", ("id", "address", "expectedExit")),
        "linked_manifest.json": ("studies", ("id", "address"))}


def present():
    return SHARED.is_dir()


def cases(manifest):
    """The manifest's cases: the corpus's own where it is beside the clone, else the index's names (a
    corpus without the manifest then fails each case, on the records it lacks)."""
    path = SHARED / manifest
    if path.is_file():
        return json.loads(path.read_text("utf-8"))[KEPT[manifest][0]]
    return json.loads(INDEX.read_text("utf-8"))[manifest]


def index():
    """What the index keeps of the corpus's manifests: each case's names, in the manifests' order."""
    out = {}
    for manifest, (key, names) in KEPT.items():
        entries = json.loads((SHARED / manifest).read_text("utf-8"))[key]
        out[manifest] = [{name: entry[name] for name in names if name in entry} for entry in entries]
    return out


if __name__ == "__main__":
    if not present():
        sys.exit("the corpus %s is needed to write its index" % SHARED)
    INDEX.write_text(json.dumps(index(), indent=1, sort_keys=True) + "\n", "utf-8")
    print("%s: %s" % (INDEX.name, ", ".join("%d %s" % (len(v), k) for k, v in index().items())))
