#!/usr/bin/env python3
"""Time recompute_study.py on a generated 200-pair study with 3 comparisons.

The study is written to a temporary folder laid out like the platform's
records: a control and three arms, 200 trials each, every trial paired, 40
maps repeated (so every comparison also has a map interval), four seats per
match (FOCAL focal seats of model-a, one model-b, one guest), fixed rule at
level 0.95. Fitness indices are kept to a tenth, so a trial's value is the
mean of its focal seats; with 2 focal seats (the default) values fall on
0.05, with 3 they take every thousandth. The page's reading is filled in
from the script's own functions, so the timed run compares every figure.

The whole script runs as a user runs it (offline, from the saved files) a
few times; it prints the best and median seconds and the peak resident
memory of those runs.

    python3 bench/bench_study.py [--pairs 200] [--focal 2] [--runs 3]

`--tiny` runs it at a tiny size (10 pairs, one run), in a second or so: what CI runs
(tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import argparse
import json
import math
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import recompute_study as rs  # noqa: E402

STUDY = "s_be0c0001"
HANDLE = "bench"
ARMS = ("control", "memory", "planner", "memory + planner")
ARM_EFFECT_POINTS = (0.0, 1.5, 3.0, -1.0)
MAPS = 40
SEED = 20261115


def seat_scores(rng, shift):
    dims = [min(max(rng.gauss(55 + shift, 14), 0.0), 100.0) for _ in rs.DIMENSIONS]
    seat = {d: rs.print_figure(v, 1) for d, v in zip(rs.DIMENSIONS, dims)}
    printed = [float(seat[d]) for d in rs.DIMENSIONS]
    index = rs.fitness_index(printed)
    seat["fitness_index"] = rs.print_figure(index, 1)
    seat["grade"] = rs.grade_of(index, printed, "2.4")
    return seat


def write_study(root, pairs, focal):
    rng = random.Random(SEED)
    trials, seats = [list(rs.TRIALS)], [list(rs.SEATS)]
    for trial in range(1, pairs + 1):
        map_seed = 1000 + trial % MAPS
        for arm, label in enumerate(ARMS):
            shift = ARM_EFFECT_POINTS[arm]
            roster = [("model-a", True)] * focal + [("model-b", False), ("guest", False)]
            cards = [seat_scores(rng, shift if is_focal else 0.0) for _, is_focal in roster]
            total = 0.0
            for card, (_, is_focal) in zip(cards, roster):
                if is_focal:
                    total += float(card["fitness_index"])
            value = math.floor(total / focal * 1000 + 0.5)
            trials.append([STUDY, trial, arm, label, "m_%012x" % (trial * 16 + arm), map_seed, 7 * trial,
                           "completed", 400, 400, "", "fitness_index", "%d.%03d" % divmod(value, 1000), "",
                           "in", "", "" if arm == 0 else "true", "fixed", "0.95", "frontier-12x12",
                           "sha256:00", "2.4", "paired-v3", rs.CANARY])
            for seat_number, (card, (model, is_focal)) in enumerate(zip(cards, roster), 1):
                row = {c: "" for c in rs.SEATS}
                row.update(card)
                row.update(study=STUDY, trial=trial, arm=arm, seat=seat_number, name="Seat %d" % seat_number,
                           model=model, harness="0.6.12", focal="true" if is_focal else "false",
                           whole_trial="true", rubric="2.4", rank=seat_number, status="active",
                           canary=rs.CANARY)
                seats.append([row[c] for c in rs.SEATS])
    folder = root / "u" / HANDLE / "studies" / STUDY
    folder.mkdir(parents=True)
    for name, rows in (("trials.csv", trials), ("seats.csv", seats)):
        (folder / name).write_text("".join(",".join(str(f) for f in r) + "\r\n" for r in rows), encoding="utf-8")
    return folder


def reading_for(folder):
    """The page's reading as the platform would print it, from the script's own arithmetic."""
    trial_rows = rs.read_trials((folder / "trials.csv").read_bytes())
    seat_rows = rs.read_seats((folder / "seats.csv").read_bytes())
    reading = {"rubric": "2.4", "metric": "fitness_index", "effect": "difference", "direction": "higher",
               "range": [0, 100], "stoppingRule": "fixed", "comparisonLevel": "0.95"}
    terms = rs.Terms(trial_rows, seat_rows, reading, None)   # the fixed rule: no rho
    by_trial = {}
    for row in trial_rows:
        by_trial.setdefault(int(row["trial"]), {})[int(row["arm"])] = row

    def pair(interval, printer, places):
        return None if interval is None else [printer(end, places) for end in interval]
    comparisons = []
    for arm in terms.compared:
        c = rs.compare_arm(arm, by_trial, terms, STUDY, None)
        comparisons.append({
            "arm": arm, "label": ARMS[arm], "n": c.n, "maps": c.maps, "verdict": c.verdict, "withheld": None,
            "mean": rs.print_comparison_figure(c.mean, 3),
            "interval": pair(c.interval, rs.print_comparison_figure, 3),
            "mapInterval": pair(c.map_interval, rs.print_comparison_figure, 3),
            "bootstrap": pair(c.bootstrap, rs.print_comparison_figure, 3),
            "p": rs.print_figure(c.p.numerator / c.p.denominator, 4)})
    arms = []
    for arm in terms.arms:
        n, mean, interval = rs.arm_figures(arm, trial_rows, terms)
        arms.append({"arm": arm, "label": ARMS[arm], "n": n, "mean": rs.print_figure(mean, 2),
                     "interval": pair(interval, rs.print_figure, 2)})
    models = [{"model": m, "seats": n, "trials": g, "mean": rs.print_figure(mean, 1),
               "interval": pair(interval, rs.print_figure, 1)}
              for m, (n, g, mean, interval) in rs.model_figures(seat_rows).items()]
    pairs_in = len(by_trial)
    reading.update(counts={"trials": pairs_in, "rows": len(trial_rows), "valued": len(trial_rows),
                           "seats": len(seat_rows), "noValue": {}, "pairsIn": pairs_in, "pairsOut": 0},
                   comparisons=comparisons, arms=arms, models=models)
    return reading


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--focal", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="10 pairs, one run")
    args = parser.parse_args(argv)
    if args.tiny:
        args.pairs, args.runs = 10, 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = write_study(root, args.pairs, args.focal)
        profile = root / "u" / (HANDLE + ".json")
        card = {"id": STUDY, "kind": "paired", "title": "bench", "recipe": "r_00000000",
                "address": "https://daishi.ai/u/%s/studies/%s" % (HANDLE, STUDY), "reading": reading_for(folder)}
        profile.write_text(json.dumps({"handle": HANDLE, "studies": [card]}))
        command = [sys.executable, str(REPO / "recompute_study.py"), card["address"],
                   "--trials", str(folder / "trials.csv"), "--seats", str(folder / "seats.csv"),
                   "--page", str(profile)]
        seconds, last = [], None
        for _ in range(args.runs):
            started = time.perf_counter()
            last = subprocess.run(command, capture_output=True, text=True)
            seconds.append(time.perf_counter() - started)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)
    tail = [line for line in last.stdout.splitlines() if line.startswith(("figures that", "checks that"))]
    print("python %s, %d pairs x %d comparisons, %d focal seats, %d trial rows, %d seat rows"
          % (sys.version.split()[0], args.pairs, len(ARMS) - 1, args.focal, args.pairs * len(ARMS),
             args.pairs * len(ARMS) * (args.focal + 2)))
    print("whole script: best %.2f s, median %.2f s over %d runs; peak RSS %.0f MiB; exit %d"
          % (min(seconds), statistics.median(seconds), args.runs, peak, last.returncode))
    print("; ".join(tail))


if __name__ == "__main__":
    main(sys.argv[1:])
