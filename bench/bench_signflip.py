#!/usr/bin/env python3
"""Time the exact sign-flip test of recompute_study.py alone, at the platform's cap of 500 pairs.

Each case is run in a process of its own and prints p, how it was had (`exact` count, Hoeffding
`bound` or `enclosed`), the seconds and that process's peak resident memory. Values are in
thousandths, drawn from a fixed seed:

- `fitness +5`, `fitness +3`, `fitness 0`: each pair's values the mean of 3 focal seats' Fitness
  Index (tenths, seats from a normal with spread 14.7 points: differences spread 12), the treated
  arm ahead by 5, 3 or 0 points;
- `uniform -1..1`, `uniform 0..100`, `uniform -100..100`: both arms uniform on the range;
- `widest -100..100`: the widest differences values on [-100, 100] allow, 199.000 to 200.000 apart
  with signs that keep S1 near 0 (p near 1);
- `refused 170`: D = [199999, -199998] x 85 (once "needs 178 MiB, cap 128 MiB"; p 0.9389);
- `straddle 0..100`: arms uniform on [0, 100] moved to p within 1e-11 of alpha 0.05, where the
  first enclosure cannot tell the side of alpha and the next one does;
- `wide alt 50 0..1000`, `wide 100 0..2000`, `wide 200 0..1000`, `wide 128 0..1000`: a metric on a
  card's wide declared range (differences up to 1,000,000 or 2,000,000 thousandths), N pairs on
  [0, 1000] or [0, 2000]: `alt`, one value within 2.000 of each end, the ends swapped every pair
  (differences near +-1,000,000, S1 near 0), else both arms uniform on the range. The studies
  tests/test_signflip_wide.py recomputes whole (wide_pairs gives their values);
- `normal N`, `t2 N`, `wealth N`, `wealth x5 N` (N = 100, 200, 500 pairs): honest pages on a card's
  range [-2000, 2000], no effect (`family` gives their values): the treated value the control's
  (uniform on [-500, 500]) plus a normal difference of spread 500, or plus 500 times a Student t
  with 2 degrees of freedom; or both values wealth-like, lognormal with median 60 and spread factor
  10 (or 5). Each value held within the range.

    python3 bench/bench_signflip.py [--tiny] [CASE ...]

`--tiny` runs every case on its first 40 pairs only (TINY_PAIRS), in a few seconds: what CI runs
(tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import math
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import recompute_study  # noqa: E402

SEED = 20261115
SEAT_SPREAD = 14.7
FOCAL_SEATS = 3
ALPHA = 0.05
STRADDLE_SEED, STRADDLE_EFFECT = 20261119, 5968   # see straddle()
STRADDLE_MOVES = ((0, 12445), (2, 80600), (46, 37973), (52, 69222), (141, 70829))
TINY_PAIRS = 40


def fitness(effect):
    rng = random.Random(SEED + 500)

    def value(mean):
        tenths = 0
        for _ in range(FOCAL_SEATS):
            tenths += min(1000, max(0, round(rng.gauss(mean, SEAT_SPREAD) * 10)))
        return (tenths * 200 + FOCAL_SEATS) // (2 * FOCAL_SEATS)    # hu of the mean, in thousandths
    return [value(50 + effect) - value(50) for _ in range(500)]


def uniform(low, high, seed=SEED):
    rng = random.Random(seed)
    return [rng.randint(low * 1000, high * 1000) - rng.randint(low * 1000, high * 1000) for _ in range(500)]


def widest():
    rng = random.Random(SEED)
    diffs = []
    for _ in range(500):
        diffs.append(rng.randint(199000, 200000) * (-1 if sum(diffs) > 0 else 1))
    return diffs


def straddle():
    """Arms uniform on [0, 100], the treated arm STRADDLE_EFFECT ahead (held within the range), then
    each (pair, treated value) of STRADDLE_MOVES: found by bisection to bring p next to alpha."""
    rng = random.Random(STRADDLE_SEED)
    control = [rng.randint(0, 100000) for _ in range(500)]
    treated = [min(100000, rng.randint(0, 100000) + STRADDLE_EFFECT) for _ in range(500)]
    for pair, value in STRADDLE_MOVES:
        treated[pair] = value
    return [t - c for c, t in zip(control, treated)]


WIDE_SEED = 20261204
WIDE = {   # name: (pairs, the range's high end, one value near each end)
    "wide alt 50 0..1000": (50, 1000, True), "wide 100 0..2000": (100, 2000, False),
    "wide 200 0..1000": (200, 1000, False), "wide 128 0..1000": (128, 1000, False),
}


def wide_pairs(name):
    """(control, treated) values in thousandths of the case `name` of WIDE, on [0, high]."""
    pairs, high, alternate = WIDE[name]
    rng, top = random.Random(WIDE_SEED + pairs + high), high * 1000
    if not alternate:
        return [(rng.randint(0, top), rng.randint(0, top)) for _ in range(pairs)]
    ends = [(rng.randint(0, 2000), top - rng.randint(0, 2000)) for _ in range(pairs)]
    return [(bottom, near_top) if t % 2 == 0 else (near_top, bottom) for t, (bottom, near_top) in enumerate(ends)]


FAMILY_SEED = 20261207
FAMILIES = ("normal", "t2", "wealth", "wealth x5")


def family(name, pairs, effect=0.0):
    """(control, treated) values in thousandths on [-2000, 2000] (a card's range), `pairs` of the
    family `name`: `normal`, the treated value the control's plus a normal difference of spread 500
    (and mean `effect`); `t2`, plus `effect` and 500 times a Student t with 2 degrees of freedom;
    each control uniform on [-500, 500]; `wealth`, both lognormal with median 60 and spread factor
    10 (`wealth x5`: 5), the treated one times 1 + `effect`. Each value held within the range."""
    rng = random.Random(FAMILY_SEED + FAMILIES.index(name) * 1000 + pairs)

    def held(value):
        return min(2000000, max(-2000000, round(value * 1000)))
    values = []
    for _ in range(pairs):
        if name.startswith("wealth"):
            spread = math.log(5 if name.endswith("x5") else 10)
            control, treated = (60 * math.exp(rng.gauss(0, spread)) for _ in "ct")
            values.append((held(control), held(treated * (1 + effect))))
            continue
        control = rng.uniform(-500, 500)
        if name == "normal":
            difference = rng.gauss(effect, 500)
        else:
            difference = effect + 500 * rng.gauss(0, 1) / math.sqrt((rng.gauss(0, 1) ** 2 + rng.gauss(0, 1) ** 2) / 2)
        values.append((held(control), held(control + difference)))
    return values


CASES = {
    "fitness +5": lambda: fitness(5.0), "fitness +3": lambda: fitness(3.0), "fitness 0": lambda: fitness(0.0),
    "uniform -1..1": lambda: uniform(-1, 1), "uniform 0..100": lambda: uniform(0, 100),
    "uniform -100..100": lambda: uniform(-100, 100), "widest -100..100": widest,
    "refused 170": lambda: [199999, -199998] * 85, "straddle 0..100": straddle,
}
CASES.update((name, lambda name=name: [t - c for c, t in wide_pairs(name)]) for name in WIDE)
CASES.update(("%s %d" % (name, pairs), lambda name=name, pairs=pairs: [t - c for c, t in family(name, pairs)])
             for name in FAMILIES for pairs in (100, 200, 500))


def peak_mib():
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def run(name, pairs=None):
    diffs = CASES[name]()[:pairs]
    started = time.perf_counter()
    p, how = recompute_study.sign_flip_p(diffs, ALPHA)
    seconds = time.perf_counter() - started
    shown = "none (%s)" % how if p is None else "%.10f" % (p.numerator / p.denominator)
    print("%-19s n=%-4d sum|D|=%-9d p=%-14s %-8s %6.2f s  peak RSS %4.0f MiB" % (
        name, len(diffs), sum(abs(d) for d in diffs), shown, "" if p is None else how or "exact", seconds,
        peak_mib()))


def main(argv):
    tiny = ["--tiny"] if "--tiny" in argv else []
    argv = [arg for arg in argv if arg != "--tiny"]
    if argv[:1] == ["--case"]:
        return run(argv[1], TINY_PAIRS if tiny else None)
    unknown = [name for name in argv if name not in CASES]
    if unknown:
        sys.exit("bench_signflip.py: no case %s; the cases: %s" % (", ".join(map(repr, unknown)), ", ".join(CASES)))
    print("python %s, exact sign-flip test, alpha %s%s" % (
        sys.version.split()[0], ALPHA, ", the first %d pairs of each case" % TINY_PAIRS if tiny else ""), flush=True)
    for name in argv or CASES:
        subprocess.run([sys.executable, __file__, "--case", name] + tiny, check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
