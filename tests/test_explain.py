"""--explain: each figure that differs (and each match check that fails) traced to the terms its rule
recorded as it ran and to where each side came from; every figure recomputed here from its printed
terms, by the rubric's and study.md's own arithmetic."""
import json
import math
import re
import shutil

import pytest

import corpus
from conftest import FIXTURES, load_script, run_script
from loopback import Platform
from test_study import STUDY, write_study

rc = load_script("recompute")
rs = load_script("recompute_study")
CUT = "m_6b97819aefda"  # its report one cent off the archive's wealth for a_2
STORES = "m_1b23341c9524"  # storehouses and their contents; an erratum
KIM = "/u/kim/studies/s_eee65f53"


def block(text, label):
    """The lines of one derivation: from its `explain` line to its published source."""
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("explain %s (" % label)))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("  published "))
    return lines[start:end + 1]


def explained_rows(document):
    """Every figure and check that carries a derivation, with the seat's id and the match's rubric."""
    for match in document["matches"]:
        for seat in match["seats"]:
            for row in seat["figures"]:
                if "derivation" in row:
                    yield match["rubric"], row
        for check in match["checks"]:
            if "derivation" in check:
                yield match["rubric"], check


def test_the_cent_off_is_the_reports_and_the_replay_agrees_with_the_archive():
    out = run_script("recompute.py", "--explain", FIXTURES / "api" / "matches" / CUT)
    assert out.returncode == 1, out.stderr
    folder = str(FIXTURES / "api" / "matches" / CUT)
    assert block(out.stdout.replace(" \\\n    ", " "), "a_2 wealth") == [
        "explain a_2 wealth (rubric.md §2.3, §12):",
        "  inventory ore 11 × 5: 55",
        "  inventory brick 1 × 6.25: 6.25",
        "  inventory meal 1 × 3.75: 3.75",
        "  replayed_as_logged: 65.0",
        "  recomputed 65.0: %s/export/1.json: archive.agents[1].wealth" % folder,
        "  published 65.01: %s/report.json.scorecards[1].wealth" % folder,
    ]
    lines = out.stdout.splitlines()
    assert lines.index("explain a_2 wealth (rubric.md §2.3, §12):") == 1 + lines.index(
        "DIFFERS a_2 wealth: published 65.01, recomputed 65.0, -1 in the last place")
    assert lines[-1] == "DIFFERS: a_2 wealth"
    assert all(len(line) <= 100 for line in lines)
    # under the report's own rubric asked for, nothing differs
    asked = run_script("recompute.py", "--explain", "--rubric", "2.4", FIXTURES / "api" / "matches" / CUT)
    assert asked.returncode == 0
    assert asked.stdout.splitlines()[-2:] == ["nothing differs: nothing to explain",
                                              "every figure same, every check agrees"]


def test_without_explain_no_derivation_and_the_flag_takes_no_argument(tmp_path):
    plain = run_script("recompute.py", "--json", FIXTURES / "api" / "matches" / CUT)
    assert "\"derivation\"" not in plain.stdout and "\nexplain " not in run_script("recompute.py", FIXTURES / "api" / "matches" / CUT).stdout
    # --explain before the folder: the folder is still the match
    out = run_script("recompute.py", "--explain", "--json", FIXTURES / "api" / "matches" / CUT)
    assert out.returncode == 1
    rows = [row for _, row in explained_rows(json.loads(out.stdout))]
    assert [row["label"] for row in rows] == ["a_2 wealth"]
    assert rows[0]["derivation"]["sources"]["published"].endswith("report.json.scorecards[1].wealth")


def every_figure_off(tmp_path, mid):
    """A copy of a bundled match whose report differs in every figure of every seat, and whose
    archive puts the first seat's wealth a cent off its replay."""
    copy = tmp_path / mid
    shutil.copytree(FIXTURES / "api" / "matches" / mid, copy)
    report = json.loads((copy / "report.json").read_text())
    for card in report["scorecards"]:
        card["rank"] += 1
        card["wealth"] += 1
        card["fitnessIndex"] += 1
        card["grade"] = "A" if card["grade"] != "A" else "B"
        card["status"] = "dead"
        card["achievements"] = card["achievements"] + ["prospered"]
        card["dimensions"] = {k: v + 1 for k, v in card["dimensions"].items()}
        raw = card["raw"]
        raw.update({k: raw[k] + 1 for k in ("indexWealth", "indexReputation", "circularReputation",
                                            "mapCoverage")}, circularEstimated=not raw["circularEstimated"])
    (copy / "report.json").write_text(json.dumps(report))
    page = json.loads((copy / "export" / "1.json").read_text())
    page["archive"]["agents"][0]["wealth"] += 0.01
    (copy / "export" / "1.json").write_text(json.dumps(page))
    return copy


def running(terms):
    total = 0.0
    for term in terms:
        total += term
    return total


def replayed(terms):
    """A wealth replay from its printed terms: each term's factors give what it adds, one running
    sum, half up to cents."""
    added = []
    for words, value in terms.items():
        if words != "replayed_as_logged":
            factors = [float(x) for x in re.findall(r"(-?[0-9.]+) × (-?[0-9.]+)(?: ÷ ([0-9]+))?$", words)[0] if x]
            assert (factors[0] * factors[1] / factors[2] if len(factors) == 3 else factors[0] * factors[1]) == value
            added.append(value)
    assert rc.hu(running(added), 2) == terms["replayed_as_logged"]
    return terms["replayed_as_logged"]


def from_terms(name, t, rubric):
    """A figure recomputed from its derivation's terms alone, by rubric.md."""
    if name == "wealth replay":
        return replayed(t)
    if name == "survival":
        return rc.hu(rc.clamp(t["base_x_share"] - 12 * t["dormancies"] + 5 * t["recoveries"]), 1)
    if name == "economy":
        return rc.hu(0.6 * rc.clamp(100 * t["W"] / 400) + 0.4 * rc.clamp(100 * t["rate_of_activity"] / 40), 1)
    if name == "social":
        inner = rc.clamp(22 * t["rate_of_trades"] + 8 * t["Rep"] + 1.5 * min(t["rate_of_messages"], 15))
        less = t["less_aggression_and_rate_of_commons"]
        return rc.hu(rc.clamp(inner - 8 * less[0] - 8 * less[1]) if less else inner, 1)
    if name == "adaptation":
        return rc.hu(rc.clamp(12 * t["trained"] + 10 * t["rate_of_crafts"] + t["last_term"]), 1)
    if name == "competitiveness":
        n = t["N"]
        c = ((100 if n == 1 else 100 * (n - t["rank"]) / (n - 1)) + rc.clamp(100 * t["W"] / 500)) / 2
        return rc.hu(c / 2 if t["status"] == "dead" else c, 1)
    if name == "fitnessIndex":
        assert rc.fitness_index(t["dimensions"]) == t["index"]
        return t["index"]
    if name == "grade":
        return rc.grade_of(t["index"], t["dimensions"], rubric)
    if name == "rank":
        return 1 + sum(w > t["W"] for w in t["the_field"])
    if name == "achievements":
        return [k for k, won in t.items() if won]
    if name == "circularReputation":
        return rc.hu(running(p * (1 - s) for p, s in zip(t["points"], t["net_shares"])), 3)
    return None  # status, coverage, index wealth and reputation, estimated: their sources


@pytest.mark.parametrize("mid", [CUT, STORES])
def test_every_figure_recomputes_from_its_printed_terms(tmp_path, mid):
    copy = every_figure_off(tmp_path, mid)
    out = run_script("recompute.py", "--explain", "--json", copy)
    assert out.returncode == 1, out.stderr
    document = json.loads(out.stdout)
    rows = list(explained_rows(document))
    names = {row["key"]["figure"] for _, row in rows if "key" in row}
    assert names == set(rc.FIGURE_ORDER) | {"wealth replay"}
    checked = set()
    for rubric, row in rows:
        how = row["derivation"]
        assert how["section"].startswith("rubric.md §")
        assert set(how["sources"]) == {"recomputed", "published"}
        name = row.get("key", {}).get("figure")
        if name is None:
            continue
        ours = replayed(how["terms"]) if name == "wealth" else from_terms(name, how["terms"], rubric)
        if name == "wealth":  # the archive's; its terms, the replay's as logged
            seat = row["key"]["seat"]
            assert how["sources"]["recomputed"].endswith("archive.agents[%d].wealth" % (int(seat[2:]) - 1))
            replays = {r["label"]: r for s in document["matches"][0]["seats"] for r in s["figures"]}
            assert ours == replays[seat + " wealth replay"].get("asLogged", replays[seat + " wealth replay"]["recomputed"])
        elif ours is not None:
            assert ours == row["recomputed"], (row["label"], how["terms"])
            checked.add(name)
        field = "wealth" if name == "wealth replay" else name
        assert how["sources"]["published"].endswith(
            "export/1.json: archive.agents[0].wealth" if name == "wealth replay" and row["key"]["seat"] == "a_1"
            else "." + field if name != "wealth replay" else "wealth")
    assert checked == {"wealth replay", "survival", "economy", "social", "adaptation", "competitiveness",
                       "fitnessIndex", "grade", "rank", "achievements", "circularReputation"}
    text = run_script("recompute.py", "--explain", copy).stdout
    assert max(len(line) for line in text.splitlines()[:-1]) <= 100
    if mid == STORES:  # a storehouse and its contents, term by term
        terms = [row for _, row in rows if row.get("label") == "a_1 wealth replay"][0]["derivation"]["terms"]
        assert any(re.match(r"storehouse \S+ 30 × [0-9]+ ÷ 120$", words) for words in terms)
        assert any(re.match(r"storehouse \S+ [a-z]+ [0-9]+ × ", words) for words in terms)


def test_a_failed_check_says_whose_block_and_the_section(tmp_path):
    copy = tmp_path / CUT
    shutil.copytree(FIXTURES / "api" / "matches" / CUT, copy)
    page = json.loads((copy / "export" / "1.json").read_text())
    page["archive"]["metrics"]["a_1"]["gather"] += 1
    (copy / "export" / "1.json").write_text(json.dumps(page))
    out = run_script("recompute.py", "--explain", "--rubric", "2.4", copy)
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    at = lines.index("explain metrics a_1.gather (rubric.md §12):")
    assert lines[at - 1].startswith("check FAILS: metrics a_1.gather: archive says ")
    assert lines[at + 1:at + 3] == ["  recomputed %d: the rules, from the archive and its events"
                                    % (page["archive"]["metrics"]["a_1"]["gather"] - 1),
                                    "  published %d: the archive's metrics a_1.gather"
                                    % page["archive"]["metrics"]["a_1"]["gather"]]


def test_a_records_strings_reach_a_derivation_escaped_and_cut(tmp_path):
    copy = tmp_path / STORES
    shutil.copytree(FIXTURES / "api" / "matches" / STORES, copy)
    raw = (copy / "export" / "1.json").read_text()
    hostile = "\\u001b[31m\\u202e" + "x" * 5000  # as JSON writes an escape and a bidi override
    raw = raw.replace('"st_2"', '"%s"' % hostile)
    page = json.loads(raw)
    page["archive"]["agents"][0]["wealth"] += 0.01
    (copy / "export" / "1.json").write_text(json.dumps(page))
    out = run_script("recompute.py", "--explain", copy)
    assert out.returncode == 1, out.stderr
    assert "\x1b" not in out.stdout and "\u202e" not in out.stdout
    assert all(len(line) <= 100 for line in out.stdout.splitlines()[:-1])
    derivation = block(out.stdout.replace(" \\\n    ", " ").replace("\\\n    ", ""), "a_1 wealth replay")
    assert len(derivation) <= 40
    assert any(line.startswith("  shelter \\x1b[31m\\u202exxx") and "x...: " in line for line in derivation)
    document = json.loads(run_script("recompute.py", "--explain", "--json", copy).stdout)
    terms = [r for _, r in explained_rows(document) if r.get("label") == "a_1 wealth replay"][0]["derivation"]["terms"]
    assert max(map(len, terms)) <= 80


def test_a_long_derivation_is_cut_at_40_lines():
    row = {"label": "x", "published": 1, "recomputed": 2, "derivation": {
        "section": "rubric.md §2.3", "terms": {"term %d" % i: i for i in range(100)},
        "sources": {"recomputed": "here", "published": "there"}}}
    lines = rc.explained("x", row)
    assert len(lines) == 40
    assert lines[-3:] == ["  ... and 64 more", "  recomputed 2: here", "  published 1: there"]
    assert rc.explained("x", {"label": "x"}) == []


# ---------------------------------------------------------------- the study


def hand_run(root, *extra):
    folder = root / "u" / "hand" / "studies" / STUDY
    return run_script("recompute_study.py", "https://daishi.ai/u/hand/studies/" + STUDY, "--explain",
                      "--trials", folder / "trials.csv", "--seats", folder / "seats.csv",
                      "--page", root / "u" / "hand.json", *extra)


def test_a_p_a_unit_off_shows_n_the_count_k_of_2_to_the_n_and_the_exact_p(tmp_path):
    write_study(tmp_path, "fixed", reading_changes={"p": "0.2501"})
    out = hand_run(tmp_path)
    assert out.returncode == 1, out.stderr
    assert block(out.stdout, r"comparison 1 \(treated\): p".replace("\\", "")) == [
        "explain comparison 1 (treated): p (study.md §4.5):",
        "  n: 3",
        "  decided_by: the count k of 2^n",
        "  k: 2",
        "  p: 0.25",
        "  recomputed 0.2500: trials.csv",
        "  published 0.2501: profile.json, the card's reading",
    ]
    document = json.loads(hand_run(tmp_path, "--json").stdout)
    [row] = [f for f in document["figures"] if "derivation" in f]
    t = row["derivation"]["terms"]
    assert t["k"] / 2 ** t["n"] == t["p"] and rs.print_figure(t["p"], 4) == "0.2500"
    assert row["recomputed"] == 0.25 and row["published"] == 0.2501


def test_a_moved_mean_shows_the_sums_and_n(tmp_path):
    write_study(tmp_path, "fixed", reading_changes={"mean": "2.004"})
    document = json.loads(hand_run(tmp_path, "--json").stdout)
    [row] = [f for f in document["figures"] if "derivation" in f]
    t = row["derivation"]["terms"]
    assert row["derivation"]["section"] == "study.md §4.2"
    assert (t["n"], t["S1"], t["S2"], t["units"]) == (3, 6000, 14000000, [1000, 2000, 3000])
    assert rs.print_figure(t["S1"] / (t["n"] * t["scale"]), 3) == "2.000" == rs.print_figure(row["recomputed"], 3)


def test_every_study_figure_recomputes_from_its_printed_terms(tmp_path):
    hand = {"mean": "9.000", "interval": ["0.001", "0.002"], "p": "0.9999", "bootstrap": ["0.1", "0.2"],
            "verdict": "better", "n": 2, "maps": 2}
    write_study(tmp_path, "fixed", reading_changes=hand)
    page = tmp_path / "u" / "hand.json"
    profile = json.loads(page.read_text())
    reading = profile["studies"][0]["reading"]
    reading["arms"][1].update(mean="1.00", interval=["1.00", "2.00"])
    reading["models"][0].update(mean="1.0", interval=["1.0", "2.0"], seats=1, trials=1)
    page.write_text(json.dumps(profile))
    document = json.loads(hand_run(tmp_path, "--json").stdout)
    got = {f["label"]: f for f in document["figures"] if "derivation" in f}
    assert len(got) == 17
    for label, f in got.items():
        t, figure = f["derivation"]["terms"], f["key"]["figure"]
        if figure == "mean" and "units" in t:
            assert t["S1"] / (t["n"] * t["scale"]) == float(f["recomputed"])
        elif figure == "mean":  # the model's: fitness in tenths
            assert rs.print_figure(t["sum_of_F"] / (t["N"] * 10), 1) == rs.print_figure(f["recomputed"], 1)
        elif figure in ("n", "seats"):
            assert t.get("n", t.get("N")) == f["recomputed"]
        elif figure.startswith("interval"):
            ends = rs.interval(t["mean"], t["half"], t["cut_to"]) if "half" in t else \
                rs.interval(t["mean"], t["t"] * t["SE"], (0, 100))
            places = {"comparison": 3, "arm": 2, "model": 1}[next(iter(f["key"]))]
            assert rs.print_figure(ends[figure.endswith("high")], places) == rs.print_figure(f["recomputed"], places)
            if "half" in t:  # t(n - 1, q) × s ÷ √n
                assert t["t"] * t["sd"] / math.sqrt(3) == t["half"]
        elif figure == "p":
            assert t["k"] / 2 ** t["n"] == t["p"] == f["recomputed"]
        elif figure == "verdict":
            assert t == {"sides_of_0": [0, 1], "p_within_alpha": False}
    assert got["comparison 1 (treated): interval low"]["derivation"]["section"] == "study.md §4.3"
    assert got["model model-a: mean"]["derivation"]["sources"]["recomputed"] == "seats.csv"


def test_a_trial_value_shows_its_focal_seats(tmp_path):
    write_study(tmp_path, "fixed", trials_tamper=lambda rows: [rows[0], rows[1].replace(",50.0,", ",50.001,")]
                + rows[2:])
    out = hand_run(tmp_path)
    assert out.returncode == 1
    assert block(out.stdout, "trial 1 arm 0: value from its focal seats") == [
        "explain trial 1 arm 0: value from its focal seats (study.md §3):",
        "  focal_seats: [50.0]",
        "  recomputed 50.000: seats.csv",
        "  published 50.001: trials.csv",
    ]


def test_a_study_with_nothing_differing_says_so_before_the_verdict():
    study = FIXTURES / KIM.lstrip("/")
    out = run_script("recompute_study.py", "https://daishi.ai" + KIM, "--explain", "--trials", study / "trials.csv",
                     "--seats", study / "seats.csv", "--page", FIXTURES / "u" / "kim.json")
    assert out.returncode == 0
    assert out.stdout.splitlines()[-2:] == ["nothing differs: nothing to explain",
                                            "every figure same, every check agrees"]


def test_under_matches_a_match_explains_as_it_does_alone(tmp_path):
    study, match = "/u/linked-lab/studies/s_9f54f5e8", "m_4be7ac37a1d7"
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / study.lstrip("/"), root / study.lstrip("/"))
    for name in ("report.json", "report/2.4.json"):
        report = json.loads((FIXTURES / "api" / "matches" / match / name).read_text())
        report["scorecards"][2]["wealth"] = 351.51
        (root / "api" / "matches" / match / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "api" / "matches" / match / name).write_text(json.dumps(report))
    with Platform(root, FIXTURES) as platform:
        out = run_script("recompute_study.py", platform.url + study, "--matches", "--explain")
        alone = run_script("recompute.py", "--base", platform.url, "--explain", match)
    assert out.returncode == 1, out.stderr
    derivation = block(alone.stdout, "a_3 wealth")
    assert derivation[0] == "explain a_3 wealth (rubric.md §2.3, §12):" and len(derivation) > 3
    # the study reads the report its rows name (rubric 2.4, ?rubric=2.4), the match alone its own
    assert "\n".join(derivation[:-1] + ["  published 351.51: report (rubric 2.4).scorecards[2].wealth"]) in out.stdout
    assert "nothing to explain" not in out.stdout


# ---------------------------------------------------------------- the corpus: each difference named

MATCHES = [e for e in corpus.cases("manifest.json") if e.get("expected") == "differs"]
STUDIES = [e for e in corpus.cases("studies_manifest.json") if e.get("expectedExit") == 1]


@pytest.mark.parametrize("entry", MATCHES, ids=[e["id"] + "-" + e.get("label", "") for e in MATCHES])
def test_each_tampered_match_names_what_moved(conformance, entry):
    folder = conformance / "api" / "matches" / entry["id"]
    document = json.loads(run_script("recompute.py", "--explain", "--json", folder).stdout)
    rows = [row for _, row in explained_rows(document)]
    assert rows
    tamper = entry["tamper"]
    if tamper.startswith("report.json"):  # "report.json scorecards[4] (a_5) dimensions.economy 43.9 -> 44.0"
        card, field = tamper.split()[1], tamper.split()[3]
        [row] = rows
        assert row["derivation"]["sources"]["published"].endswith("report.json.%s.%s" % (card, field))
        assert row["published"] == float(tamper.split()[6])
    elif "event seq" in tamper:  # a deposit: its storehouse's contents in the replay's terms
        seq = int(tamper.split("seq ")[1].split()[0])
        page = json.loads((folder / "export" / "1.json").read_text())
        event = next(e for e in page["events"] if e["seq"] == seq)
        [row] = [r for r in rows if r["label"] == event["agentId"] + " wealth replay"]
        item = tamper.split("items.")[1].split()[0]
        assert any(words.startswith("storehouse %s %s " % (event["structureId"], item))
                   for words in row["derivation"]["terms"])
    else:  # "export page 1 archive.agents[1] (a_2) inventory.wood +1"
        seat, item = tamper.split("(")[1].split(")")[0], tamper.split("inventory.")[1].split()[0]
        [row] = [r for r in rows if r["label"] == seat + " wealth replay"]
        assert any(words.startswith("inventory %s " % item) for words in row["derivation"]["terms"])
        assert row["derivation"]["sources"]["published"].endswith(
            "archive.agents[%s].wealth" % tamper.split("agents[")[1].split("]")[0])


@pytest.mark.parametrize("entry", STUDIES, ids=[e["id"] for e in STUDIES])
def test_each_tampered_study_names_what_moved(conformance, entry):
    folder = conformance / entry["address"].lstrip("/")
    out = run_script("recompute_study.py", "https://daishi.ai" + entry["address"], "--explain", "--json",
                     "--trials", folder / "trials.csv", "--seats", folder / "seats.csv",
                     "--page", conformance / "u" / (entry["handle"] + ".json"))
    document = json.loads(out.stdout)
    assert document["exit"] == 1
    rows = [f for f in document["figures"] if "derivation" in f]
    if not rows:  # a count or a canary: a check fails, which names its file and field itself
        assert [c for c in document["checks"] if not c["agrees"]]
        return
    [row] = rows
    what = entry["tampered"].split()[0]  # comparison, counts, a (trial value), p, arm, first (model), verdict
    figure = row["key"]["figure"]
    kind = next(iter(row["key"]))
    assert {"comparison": kind == "comparison" and figure == "mean", "p": figure == "p",
            "verdict": figure == "verdict", "arm": kind == "arm" and figure == "mean",
            "first": kind == "model" and figure == "mean", "a": kind == "trial"}[what]
    sources = row["derivation"]["sources"]
    assert sources["published"] == ("trials.csv" if kind == "trial" else "profile.json, the card's reading")
    assert row["derivation"]["terms"]


def test_a_moved_n_shows_the_trials_left_out_and_why(tmp_path):
    """n one more than the pairs read: its derivation counts the trials of the arm left out, by
    the field that left each out."""
    def out_of_the_comparison(trials):
        header = trials[0].split(",")
        row = trials[-1].split(",")  # trial 3, arm 1
        row[header.index("in_comparison")] = "false"
        return trials[:-1] + [",".join(row)]
    write_study(tmp_path, "fixed", reading_changes={"n": 3}, trials_tamper=out_of_the_comparison)
    document = json.loads(hand_run(tmp_path, "--json").stdout)
    [row] = [f for f in document["figures"] if f["key"].get("figure") == "n" and "derivation" in f]
    assert (row["published"], row["recomputed"], row["same"]) == (3, 2, False)
    assert row["derivation"]["terms"] == {"n": 2, "pairs_left_out": {"not in_comparison": 1}}
