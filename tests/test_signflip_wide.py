"""The exact sign-flip test (study.md §4.5) on a card's wide declared range, where differences reach
1,000,000 or 2,000,000 thousandths and the exact count passes the cap: the coarsest level of
SIGN_FLIP_LEVELS, 4-byte slots, encloses p.

- Four honest studies of a metric that is not a seat score, on [0, 1000] or [0, 2000] (the cases
  `wide ...` of bench/bench_signflip.py, whose wide_pairs gives their values), each page printed
  from the script's own functions: the script exits 0 on the page (run offline as a user runs it
  for the case that takes the most memory; the others in this process, the counts given again as
  the page's p made them); on the page with p a unit off in its 4th place it exits 1, naming the
  true p; and p is "enclosed", its enclosure printing as its high end.
- The enclosures' bound against counts that visit every sign vector (n <= 20, wide values too), at
  the two coarse levels and at artificial coarser ones; and, on 24 to 40 wide pairs, against an
  exact count of subsets by a packed big integer written here.

The one study run as a process runs in the background while the tests in this process run: the
tests that read the runs come last in this file."""
import copy
import functools
import itertools
import json
import os
import random
import subprocess
import sys
import threading
import time
from bisect import bisect_left, bisect_right
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
import bench_signflip  # noqa: E402
import recompute_study as rs  # noqa: E402

STUDY, HANDLE = "s_5f0e0c01", "wide"
ADDRESS = "https://daishi.ai/u/%s/studies/%s" % (HANDLE, STUDY)
CASES = list(bench_signflip.WIDE)
MAPS = 10             # trial t plays map 1000 + t % MAPS: maps repeat, so each page has a map interval
PROCESS_CASE = "wide 100 0..2000"  # the most memory of the four: run as its own process
RUN_SECONDS = 600     # a run takes seconds; this only stops a hung one
COARSE = rs.SIGN_FLIP_LEVELS[:2]
# the level that encloses each case's p: the exact count (under 128 pairs) needs more than the cap;
# the first enclosure settles each
ENCLOSED_AT = dict.fromkeys(CASES, COARSE[0])


# ---------------------------------------------------------------- counts that need no script

def signed_sums(diffs):
    """Σ s_t D_t for each of the 2**n sign vectors s."""
    sums = [0]
    for d in diffs:
        sums = [x + d for x in sums] + [x - d for x in sums]
    return sums


def brute_force_count(diffs):
    """§4.5's count, every sign vector visited: each sum of the first half's signs beside the sorted
    sums of the second half's, those at least |S1| away from 0 found by bisection."""
    target = abs(sum(diffs))
    if target == 0:
        return 2 ** len(diffs)
    half = len(diffs) // 2
    right = sorted(signed_sums(diffs[half:]))
    return sum(len(right) - bisect_left(right, target - x) + bisect_right(right, -target - x)
               for x in signed_sums(diffs[:half]))


def packed_count(diffs):
    """§4.5's count as the script's docstring of sign_flip_count puts it, the plain way: twice the
    subsets of the m sizes |D_t| (D_t not 0) that sum to at most c = (A − |S1|) ÷ 2, times 2 for
    each D_t that is 0. The subsets of each sum x ≤ c are counted in slot x of one integer, m + 1
    bits a slot (a count is at most 2**m): adding a size a is poly + (poly << a slots), cut to the
    slots 0..c; the slots' total is the integer modulo 2**(m + 1) − 1 (a slot's weight is 1 there,
    and the total is below it)."""
    n, s1 = len(diffs), sum(diffs)
    if s1 == 0:
        return 2 ** n
    sizes = sorted(abs(d) for d in diffs if d)
    c, bits = (sum(sizes) - abs(s1)) // 2, len(sizes) + 1
    poly, reach = 1, 0
    for a in sizes:
        if a > c:
            break
        poly += poly << bits * a
        reach += a
        if reach > c:          # slots past c: cut (ascending sizes, so the first sizes need no cut)
            poly &= (1 << bits * (c + 1)) - 1
            reach = c
    return 2 * (poly % ((1 << bits) - 1)) << (n - len(sizes))


def test_the_counts_written_here_are_the_plain_enumeration():
    rng = random.Random(20261204)
    for _ in range(150):
        n = rng.randint(1, 11)
        scale = rng.choice((1, 40, 2000000))
        diffs = [rng.randint(-scale, scale) for _ in range(n)]
        plain = sum(1 for signs in itertools.product((1, -1), repeat=n)
                    if abs(sum(s * d for s, d in zip(signs, diffs))) >= abs(sum(diffs)))
        assert brute_force_count(diffs) == packed_count(diffs) == plain, diffs


# ---------------------------------------------------------------- four honest studies, recomputed whole

def seat_scores(rng):
    """A seat's five dimensions, its fitness index and grade as rubric.md §8 blends them."""
    dims = [min(max(rng.gauss(55, 14), 0.0), 100.0) for _ in rs.DIMENSIONS]
    seat = {d: rs.print_figure(v, 1) for d, v in zip(rs.DIMENSIONS, dims)}
    printed = [float(seat[d]) for d in rs.DIMENSIONS]
    index = rs.fitness_index(printed)
    seat["fitness_index"] = rs.print_figure(index, 1)
    seat["grade"] = rs.grade_of(index, printed, "2.4")
    return seat


def write_study(root, pairs):
    """trials.csv and seats.csv of a fixed-rule study of `score` (values in thousandths), one
    control and one treated arm, every trial paired; each trial a focal model-a seat and a guest."""
    rng = random.Random(len(pairs))
    trials, seats = [list(rs.TRIALS)], [list(rs.SEATS)]
    for trial, values in enumerate(pairs, 1):
        for arm, value in enumerate(values):
            trials.append([STUDY, trial, arm, ("control", "treated")[arm], "m_%012x" % (trial * 16 + arm),
                           1000 + trial % MAPS, 7 * trial, "completed", 400, 400, "", "score",
                           "%d.%03d" % divmod(value, 1000), "", "in", "", "" if arm == 0 else "true", "fixed",
                           "0.95", "frontier-12x12", "sha256:00", "2.4", "paired-v3", rs.CANARY])
            for seat, (model, focal) in enumerate((("model-a", "true"), ("guest", "false")), 1):
                row = dict.fromkeys(rs.SEATS, "")
                row.update(seat_scores(rng))
                row.update(study=STUDY, trial=trial, arm=arm, seat=seat, name="Seat %d" % seat, model=model,
                           harness="0.6.12", focal=focal, whole_trial="true", rubric="2.4", rank=seat,
                           status="active", canary=rs.CANARY)
                seats.append([row[c] for c in rs.SEATS])
    folder = root / "u" / HANDLE / "studies" / STUDY
    folder.mkdir(parents=True)
    for name, rows in (("trials.csv", trials), ("seats.csv", seats)):
        (folder / name).write_text("".join(",".join(map(str, r)) + "\r\n" for r in rows), encoding="utf-8")
    return folder


def reading_for(folder, bounds):
    """The page's reading as the platform prints it, from the script's own arithmetic (as
    bench/bench_study.py's reading_for); and the comparison's recomputed figures."""
    trial_rows = rs.read_trials((folder / "trials.csv").read_bytes())
    seat_rows = rs.read_seats((folder / "seats.csv").read_bytes())
    reading = {"rubric": "2.4", "metric": "score", "effect": "difference", "direction": "higher",
               "range": list(bounds), "stoppingRule": "fixed", "comparisonLevel": "0.95"}
    terms = rs.Terms(trial_rows, seat_rows, reading, None)
    assert not terms.seat_score and terms.bounds == bounds
    by_trial = {}
    for row in trial_rows:
        by_trial.setdefault(int(row["trial"]), {})[int(row["arm"])] = row

    def pair(interval, printer, places):
        return None if interval is None else [printer(end, places) for end in interval]
    c = rs.compare_arm(1, by_trial, terms, STUDY, None)
    comparisons = [{
        "arm": 1, "label": "treated", "n": c.n, "maps": c.maps, "verdict": c.verdict, "withheld": None,
        "mean": rs.print_comparison_figure(c.mean, 3), "interval": pair(c.interval, rs.print_comparison_figure, 3),
        "mapInterval": pair(c.map_interval, rs.print_comparison_figure, 3),
        "bootstrap": pair(c.bootstrap, rs.print_comparison_figure, 3),
        "p": rs.print_figure(c.p.numerator / c.p.denominator, 4)}]
    arms = []
    for arm in terms.arms:
        n, mean, interval = rs.arm_figures(arm, trial_rows, terms)
        arms.append({"arm": arm, "label": ("control", "treated")[arm], "n": n, "mean": rs.print_figure(mean, 2),
                     "interval": pair(interval, rs.print_figure, 2)})
    models = [{"model": m, "seats": n, "trials": g, "mean": rs.print_figure(mean, 1),
               "interval": pair(interval, rs.print_figure, 1)}
              for m, (n, g, mean, interval) in rs.model_figures(seat_rows).items()]
    reading.update(counts={"trials": len(by_trial), "rows": len(trial_rows), "valued": len(trial_rows),
                           "seats": len(seat_rows), "noValue": {}, "pairsIn": len(by_trial), "pairsOut": 0},
                   comparisons=comparisons, arms=arms, models=models)
    return reading, c


def write_page(path, reading):
    card = {"id": STUDY, "kind": "paired", "title": "wide", "recipe": "r_00000000", "address": ADDRESS,
            "reading": reading}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"handle": HANDLE, "studies": [card]}))
    return path


def moved(p, unit):
    """p's text a unit up (or down, from 1.0000) in its 4th place."""
    units = int(p.replace(".", "")) + unit
    return "%d.%04d" % divmod(units, 10 ** 4)


def run_offline(folder, page):
    """The script on the saved files, as a user runs it: (exit status, stdout, stderr, seconds, its peak
    resident memory in MiB or None)."""
    command = [sys.executable, str(REPO / "recompute_study.py"), ADDRESS, "--trials", str(folder / "trials.csv"),
               "--seats", str(folder / "seats.csv"), "--page", str(page)]
    env = dict(os.environ)
    env.pop("DAISHI_BASE", None)
    with open(str(page) + ".out", "w+") as out, open(str(page) + ".err", "w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        timer = threading.Timer(RUN_SECONDS, process.kill)
        timer.start()
        try:
            if hasattr(os, "wait4"):             # its own rusage: the peak of this one process
                _, status, usage = os.wait4(process.pid, 0)
                process.returncode = os.waitstatus_to_exitcode(status)
                peak = usage.ru_maxrss / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)
            else:
                process.wait()
                peak = None
        finally:
            timer.cancel()
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        return process.returncode, out.read(), err.read(), seconds, peak


class Study:
    """One case: its differences, the page, the sign_flip_count calls the page's p made, the runs."""


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    """Each case built and its page printed here, one after the other; the honest page of the case
    that takes the most memory (PROCESS_CASE) run as a user runs it, in a worker, while the tests go
    on; the other pages are run in this process (run_here)."""
    built = {}
    with ThreadPoolExecutor(2) as pool:
        for index, name in enumerate(CASES):
            pairs, high, _ = bench_signflip.WIDE[name]
            root = tmp_path_factory.mktemp("wide")
            study = Study()
            study.diffs = [t - c for c, t in bench_signflip.wide_pairs(name)]
            assert len(study.diffs) == pairs and max(map(abs, study.diffs)) <= high * 1000
            folder = write_study(root, bench_signflip.wide_pairs(name))
            study.calls = []
            count = rs.sign_flip_count

            def recorded(diffs, level=None):
                ends = count(diffs, level)
                study.calls.append((list(diffs), level, ends))
                return ends
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(rs, "sign_flip_count", recorded)
                study.reading, study.comparison = reading_for(folder, (0, high))
            study.p = study.reading["comparisons"][0]["p"]
            study.wrong_p = moved(study.p, -1 if index % 2 or study.p == "1.0000" else 1)
            wrong = copy.deepcopy(study.reading)
            wrong["comparisons"][0]["p"] = study.wrong_p
            study.page = write_page(root / "u" / (HANDLE + ".json"), study.reading)
            study.honest = pool.submit(run_offline, folder, study.page) if name == PROCESS_CASE else None
            study.folder, study.wrong_page = folder, write_page(root / "altered" / (HANDLE + ".json"), wrong)
            built[name] = study
        yield built


@pytest.mark.parametrize("name", CASES)
def test_each_wide_study_s_p_is_enclosed_and_prints_as_its_high_end(studies, name):
    study = studies[name]
    comparison = study.comparison
    assert comparison.p_how == "enclosed" and comparison.n == len(study.diffs)
    assert all(diffs == study.diffs for diffs, _, _ in study.calls)
    # each call sign_flip_p made: the exact count first (under 128 pairs), then the levels in order
    tried = [None] * (len(study.diffs) < rs.SIGN_FLIP_ENCLOSE_FROM) + list(rs.SIGN_FLIP_LEVELS)
    assert [level for _, level, _ in study.calls] == tried[:len(study.calls)]
    (_, level, ends), refused = study.calls[-1], study.calls[:-1]
    # all but the last over the cap; the last (a coarse level, but at 128 pairs on [0, 1000]) encloses p
    cap = "cap %d MiB" % (rs.SIGN_FLIP_MAX_BYTES >> 20)
    assert all(isinstance(why, str) and why.endswith(cap) for _, _, why in refused), refused
    assert level == ENCLOSED_AT[name]
    low, high = ends          # sign_flip_count(diffs, level), as sign_flip_p had it
    assert comparison.p == low <= high and high - low < Fraction(2, 10 ** 6)    # 4-byte slots: within ~2e-6
    assert rs.print_figure(float(low), 4) == rs.print_figure(float(high), 4) == study.p
    assert (low <= Fraction(0.05)) == (high <= Fraction(0.05))
    print("%s: %s; enclosed at %s: [%.12f, %.12f]" % (name, "; ".join(
        "%s %s" % (lv, why) for _, lv, why in refused), level, low, high))


# ---------------------------------------------------------------- the bound's proof, small n

def small_diffs(rng, widest):
    """Up to 20 differences: all wide (up to ±widest), all narrow, or the two mixed; some 0."""
    n = rng.randint(1, 20)
    kind = rng.choice(("wide", "narrow", "mixed"))
    diffs = []
    for _ in range(n):
        scale = widest if kind == "wide" or kind == "mixed" and rng.random() < 0.5 else 300
        diffs.append(rng.randint(-scale, scale) * (rng.random() > 0.05))
    return diffs


@pytest.mark.parametrize("level, every, block_bytes, widest, cases", [
    (COARSE[0], 3, rs.SUBSET_BLOCK_BYTES, 2000000, 12),
    (COARSE[1], 3, rs.SUBSET_BLOCK_BYTES, 2000000, 12),
    ((2, 3, 3), 2, 4099, 2000000, 12),      # 16-bit slots floored every 2 items, tails < e**-6 cut
    ((1, 1, 1), 4, 4093, 2000000, 16),      # 8-bit slots, tails < e**-2 cut
    ((1, 1, 1), 1, 13, 3000, 40),           # every item floored, classes of 13 bytes (narrow: few classes)
    ((2, 3, 3), 3, 7, 3000, 40),
])
def test_an_enclosure_holds_the_count_of_every_sign_vector(monkeypatch, level, every, block_bytes, widest,
                                                            cases):
    # p from the level alone, then the exact count where its enclosure prints apart or straddles alpha
    monkeypatch.setattr(rs, "SIGN_FLIP_FLOOR_EVERY", every)
    monkeypatch.setattr(rs, "SUBSET_BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(rs, "SIGN_FLIP_ENCLOSE_FROM", 0)
    monkeypatch.setattr(rs, "SIGN_FLIP_LEVELS", (level,))
    count = rs.sign_flip_count
    monkeypatch.setattr(rs, "sign_flip_count", functools.lru_cache(lambda diffs, level=None: count(list(diffs), level)))
    rng = random.Random(sum(level) * 100 + every)
    hows, loose = set(), 0
    for _ in range(cases):
        diffs = tuple(small_diffs(rng, widest))     # a tuple: each count is had once (lru_cache)
        exact = Fraction(brute_force_count(diffs), 2 ** len(diffs))
        if not sum(diffs):
            continue
        ends = rs.sign_flip_count(diffs, level)
        assert not isinstance(ends, str), (diffs, ends)           # n ≤ 20: far within the cap
        low, high = ends
        assert low <= exact <= high, diffs
        loose += low < high
        if level in COARSE:       # up to 20 pairs: no count outgrows a slot, no tail holds a subset
            assert low == exact == high, diffs
        p, how = rs.sign_flip_p(diffs, 0.05)
        hows.add(how)
        assert how in ("enclosed", None, "bound") and (how != "enclosed" or p == low), diffs
        assert how is not None or p == exact, diffs
        assert rs.print_figure(float(p), 4) == rs.print_figure(float(exact), 4), diffs
        assert (p <= Fraction(0.05)) == (exact <= Fraction(0.05)), diffs
    if level in COARSE:
        assert "enclosed" in hows
    else:                         # the artificial levels floor or cut, somewhere
        assert loose


# ---------------------------------------------------------------- the bound's proof, 24 to 40 wide pairs

def wide_diffs(n, seed, ahead, top=2000000):
    """n differences of two arms uniform on [0, top], the treated one `ahead` (held within the range)."""
    rng = random.Random(seed)
    return [min(top, rng.randint(0, top) + ahead) - rng.randint(0, top) for _ in range(n)]


@pytest.mark.parametrize("diffs", [
    wide_diffs(24, 1, 0),                                       # p 0.9442
    wide_diffs(32, 2, 300000),                                  # p 0.0391
    wide_diffs(40, 3, 700000),                                  # p 0.0065: tails of 2**40·e**-20 cut
    [1999000 + d % 997 for d in range(12)] + [-1998000 - d % 991 for d in range(12)],   # near ±2,000,000
], ids=["24 pairs", "32 pairs ahead", "40 pairs ahead", "24 pairs near +-2000000"])
def test_the_coarse_enclosures_hold_an_exact_count_on_wide_pairs(diffs):
    exact = Fraction(packed_count(diffs), 2 ** len(diffs))
    refused = []
    for level in COARSE:
        ends = rs.sign_flip_count(diffs, level)
        if isinstance(ends, str):        # none here: each fits
            assert ends.endswith("cap %d MiB" % (rs.SIGN_FLIP_MAX_BYTES >> 20))
            refused.append(level)
            continue
        low, high = ends
        assert low <= exact <= high, level
        # only tails cut (no count outgrows a slot), what each point cuts under 2**-30 of p here
        assert 0 <= high - low <= Fraction(2 * (len(diffs) // 3 + 1), 2 ** 31), level
        assert rs.print_figure(float(low), 4) == rs.print_figure(float(high), 4)
    assert refused == []


def test_the_coarse_enclosures_floor_counts_and_still_hold_the_exact_count():
    # Narrow differences, many pairs: a sum's count outgrows 4- and 5-byte slots, so bits are floored.
    rng, floored = random.Random(44), []
    for n, scale in ((40, 20), (60, 20), (60, 300)):
        diffs = [rng.randint(-scale, scale) + 1 for _ in range(n)]
        exact = Fraction(packed_count(diffs), 2 ** n)
        assert exact == Fraction(rs.sign_flip_count(diffs), 2 ** n)
        for level in COARSE:
            low, high = rs.sign_flip_count(diffs, level)
            assert low <= exact <= high, (n, scale, level)
            floored.append(low < high)
    assert floored == [True] * 6    # each loses something: floors (at 40 pairs, 5-byte slots only cut tails)


# ---------------------------------------------------------------- the four studies' runs (last: their
# subprocesses have run beside the tests above)

def run_here(study, page, monkeypatch, capsys):
    """The script's main on the case's files and `page`, in this process, each count the page's p
    made given again as it came (a count asked otherwise is a KeyError): (exit, stdout, stderr)."""
    known = {(tuple(diffs), level): ends for diffs, level, ends in study.calls}
    monkeypatch.setattr(rs, "sign_flip_count", lambda diffs, level=None: known[tuple(diffs), level])
    status = rs.main([ADDRESS, "--trials", str(study.folder / "trials.csv"), "--seats",
                      str(study.folder / "seats.csv"), "--page", str(page)])
    return (status, *capsys.readouterr())


@pytest.mark.parametrize("name", CASES)
def test_each_wide_study_s_honest_page_recomputes_same(studies, name, monkeypatch, capsys):
    study = studies[name]
    if study.honest is None:
        status, out, err = run_here(study, study.page, monkeypatch, capsys)
    else:
        status, out, err, seconds, peak = study.honest.result()
        print("%s: honest page, exit %d in %.1f s, peak RSS %s MiB" % (name, status, seconds, peak and round(peak)))
    assert (status, err) == (0, ""), out + err
    lines = out.splitlines()
    assert lines[-1] == "every figure same, every check agrees"
    assert "figures that match: 24 of 24 compared" in lines


@pytest.mark.parametrize("name", CASES)
def test_each_wide_study_with_p_a_unit_off_differs_naming_the_true_p(studies, name, monkeypatch, capsys):
    study = studies[name]
    status, out, err = run_here(study, study.wrong_page, monkeypatch, capsys)
    assert (status, err) == (1, ""), out + err
    lines = out.splitlines()
    off = int(study.p.replace(".", "")) - int(study.wrong_p.replace(".", ""))
    assert "DIFFERS comparison 1 (treated) p: published %s, recomputed %s, %+d in the last place" % (
        study.wrong_p, study.p, off) in lines
    assert lines[-1] == "DIFFERS: comparison 1 p" and "figures that match: 23 of 24 compared" in lines
