"""The exact sign-flip test (study.md §4.5) on the families of honest differences that once passed
its memory cap at scale (bench/bench_signflip.py's `family`, values on a card's range [-2000, 2000]):
normal differences of spread 500, 500 times a Student t with 2 degrees of freedom, wealth-like
values (lognormal, median 60, spread factor 10). Each case's true p is in signflip_truth.json: an
exact count of sign vectors by a plain generating function (its "method"), made once, offline.

- sign_flip_p prints each true p and puts it on its side of alpha: exactly (the count at once, under
  128 pairs, where it fits) or by an enclosure holding it, the coarsest first; next to a 4-place
  edge or to alpha the coarse enclosures straddle it and a finer one settles it; with the finer
  ones over the cap, a p within 3e-7 of alpha is not recomputed, and the reason says so.
- The 100-pair wealth-like case as a whole study page: exit 0 on the honest page, run as a user runs
  it; exit 1 with p a unit off in its 4th place, naming the true p.
"""
import copy
import json
import sys
from fractions import Fraction

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
import bench_signflip  # noqa: E402
import recompute_study as rs  # noqa: E402
from test_signflip_wide import ADDRESS, moved, reading_for, run_offline, write_page, write_study  # noqa: E402

TRUTH = json.loads((REPO / "tests" / "signflip_truth.json").read_text(encoding="utf-8"))
CASES = {case["name"]: case for case in TRUTH["cases"]}
ALPHA = TRUTH["alpha"]
# the count that settles each p: None the count at once (60 pairs fit it), else an enclosure's level
SETTLED_AT = dict.fromkeys(CASES, rs.SIGN_FLIP_LEVELS[0])
SETTLED_AT.update({
    "normal, 60 pairs": None, "wealth, 60 pairs": None,
    "wealth, 80 pairs, treated x2, p 5e-8 past a rounding edge": rs.SIGN_FLIP_LEVELS[1],
    "t2, 80 pairs, 120 ahead, p 1e-8 past alpha": rs.SIGN_FLIP_LEVELS[1],
    "t2, 80 pairs, 120 ahead, p 2.5e-9 past alpha": rs.SIGN_FLIP_LEVELS[1],
})
NEAR_ALPHA = "t2, 80 pairs, 120 ahead, p 2.5e-9 past alpha"
STUDY_CASE = "wealth, 100 pairs"
RANGE = (-2000, 2000)


def true_p(case):
    return Fraction(int(case["count"]), 2 ** len(case["diffs"]))


def settled(ends):
    """An enclosure [lo, hi] that prints alike on one side of alpha."""
    return len({(rs.print_figure(float(end), 4), end <= Fraction(ALPHA)) for end in ends}) == 1


def counted(monkeypatch, diffs):
    """sign_flip_p(diffs, ALPHA), and each sign_flip_count it made as (level, what it gave), in order."""
    calls, count = [], rs.sign_flip_count

    def recorded(diffs, level=None):
        calls.append((level, count(diffs, level)))
        return calls[-1][1]
    monkeypatch.setattr(rs, "sign_flip_count", recorded)
    return rs.sign_flip_p(diffs, ALPHA), calls


def test_the_truth_file_holds_each_family_and_the_cases_next_to_an_edge():
    assert {case["family"] for case in CASES.values()} == {"normal", "t2", "wealth"}
    assert {case["pairs"] for case in CASES.values()} == {60, 80, 100}
    for case in CASES.values():      # each case as the bench draws it
        diffs = [t - c for c, t in bench_signflip.family(case["family"], case["pairs"], case["effect"])]
        diffs[0] = diffs[0] if case["first"] is None else case["first"]
        assert diffs == case["diffs"], case["name"]
    edge = true_p(CASES["wealth, 80 pairs, treated x2, p 5e-8 past a rounding edge"])
    assert 0 < edge - Fraction(6325, 10 ** 5) < Fraction(6, 10 ** 8)
    assert 0 < true_p(CASES[NEAR_ALPHA]) - Fraction(ALPHA) < Fraction(3, 10 ** 9)


@pytest.mark.parametrize("name", list(CASES))
def test_each_case_s_p_prints_as_its_true_p_on_its_side_of_alpha(monkeypatch, name):
    case = CASES[name]
    truth = true_p(case)
    (p, how), calls = counted(monkeypatch, case["diffs"])
    assert rs.print_figure(float(p), 4) == rs.print_figure(float(truth), 4) == case["p"]
    assert (p <= Fraction(ALPHA)) == (truth <= Fraction(ALPHA))
    level, ends = calls[-1]                        # the count that settled p
    assert level == SETTLED_AT[name]
    if level is None:
        assert how is None and p == truth == Fraction(ends, 2 ** len(case["diffs"]))
    else:
        low, high = ends
        assert how == "enclosed" and p == low <= truth <= high and settled(ends)
    # before it, the count at once over the cap (from 128 pairs, none), then each level in order,
    # each holding the true p but straddling an edge or alpha
    tried = [None] * (len(case["diffs"]) < rs.SIGN_FLIP_ENCLOSE_FROM) + list(rs.SIGN_FLIP_LEVELS)
    assert [level for level, _ in calls] == tried[:len(calls)]
    for level, ends in calls[:-1]:
        if level is None:
            assert ends.startswith("needs ") and ends.endswith(" MiB, cap 120 MiB")
        else:
            assert ends[0] <= truth <= ends[1] and not settled(ends), level


def test_p_next_to_alpha_with_the_finer_levels_over_the_cap_is_not_recomputed_saying_why(monkeypatch):
    # 5-byte slots need 79 MiB here at the least: under a cap of 60 MiB only the 4-byte enclosure
    # fits, and it straddles alpha
    monkeypatch.setattr(rs, "SIGN_FLIP_MAX_BYTES", 60 * 2 ** 20)
    p, why = rs.sign_flip_p(CASES[NEAR_ALPHA]["diffs"], ALPHA)
    assert p is None
    assert why == ("needs 250 MiB, cap 60 MiB; p within 0.049999803 to 0.050000059, across alpha or a "
                   "4-place rounding edge")


# ---------------------------------------------------------------- the 100-pair case, a whole study

@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The case's files, its honest page and the page with p a unit off; and the (p, how) its
    comparison had."""
    case = CASES[STUDY_CASE]
    pairs = bench_signflip.family("wealth", 100)
    assert [t - c for c, t in pairs] == case["diffs"]
    root = tmp_path_factory.mktemp("family")
    folder = write_study(root, pairs)
    reading, comparison = reading_for(folder, RANGE)
    assert comparison.p_how == "enclosed" and reading["comparisons"][0]["p"] == case["p"]
    wrong = copy.deepcopy(reading)
    wrong["comparisons"][0]["p"] = moved(case["p"], 1)
    return {"folder": folder, "page": write_page(root / "u" / "wide.json", reading),
            "wrong": write_page(root / "altered" / "wide.json", wrong), "p": (comparison.p, comparison.p_how)}


def test_the_family_study_s_honest_page_recomputes_same(study):
    status, out, err, seconds, peak = run_offline(study["folder"], study["page"])
    print("%s: honest page, exit %d in %.1f s" % (STUDY_CASE, status, seconds))
    assert (status, err) == (0, ""), out + err
    lines = out.splitlines()
    assert lines[-1] == "every figure same, every check agrees"
    assert "figures that match: 24 of 24 compared" in lines


def test_the_family_study_with_p_a_unit_off_differs_naming_the_true_p(study, monkeypatch, capsys):
    # in this process, the comparison's p given again as it came
    monkeypatch.setattr(rs, "sign_flip_p", lambda diffs, alpha: study["p"])
    status = rs.main([ADDRESS, "--trials", str(study["folder"] / "trials.csv"), "--seats",
                      str(study["folder"] / "seats.csv"), "--page", str(study["wrong"])])
    out, err = capsys.readouterr()
    assert (status, err) == (1, ""), out + err
    lines = out.splitlines()
    true, wrong = CASES[STUDY_CASE]["p"], moved(CASES[STUDY_CASE]["p"], 1)
    assert "DIFFERS comparison 1 (treated) p: published %s, recomputed %s, -1 in the last place" % (
        wrong, true) in lines
    assert lines[-1] == "DIFFERS: comparison 1 p" and "figures that match: 23 of 24 compared" in lines
