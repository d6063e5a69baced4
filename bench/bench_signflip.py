#!/usr/bin/env python3
"""Time the exact sign-flip test of recompute_study.py alone, at the platform's cap.

Each pair's value is the mean of 3 focal seats' Fitness Index (tenths) kept to a
thousandth, so the differences fall on every thousandth of the 0-100 range:
seats drawn from a normal with spread 14.7 points (differences: spread 12), the
treated arm ahead by EFFECT points, from a fixed seed. For 500 pairs (or the
sizes given as arguments) and each effect it prints p, how it was had (`exact`
count, Hoeffding `bound` or `enclosed`), the seconds and the process's peak resident memory
so far. Effects run weakest last, so each peak is the exact count's own.

    python3 bench/bench_signflip.py [N ...]
"""
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import recompute_study  # noqa: E402

SIZES = (500,)
SEED = 20261115
EFFECTS = (5.0, 3.0, 0.0)     # points: 5 settled by the bound here, the others by the enclosure
SEAT_SPREAD = 14.7
FOCAL_SEATS = 3
ALPHA = 0.05


def value(rng, mean):
    tenths = 0
    for _ in range(FOCAL_SEATS):
        tenths += min(1000, max(0, round(rng.gauss(mean, SEAT_SPREAD) * 10)))
    return (tenths * 200 + FOCAL_SEATS) // (2 * FOCAL_SEATS)    # hu of the mean, in thousandths


def differences(n, effect, rng):
    return [value(rng, 50 + effect) - value(rng, 50) for _ in range(n)]


def peak_mib():
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def main(argv):
    sizes = [int(a) for a in argv] or SIZES
    print("python %s, exact sign-flip test, alpha %s" % (sys.version.split()[0], ALPHA))
    for n in sizes:
        for effect in EFFECTS:
            diffs = differences(n, effect, random.Random(SEED + n))
            started = time.perf_counter()
            p, how = recompute_study.sign_flip_p(diffs, ALPHA)
            seconds = time.perf_counter() - started
            print("n=%-4d effect %.1f  sum|D|=%-8d p=%-10s %-8s %7.2f s  peak RSS %.0f MiB" % (
                n, effect, sum(abs(d) for d in diffs), "none" if p is None else "%.4g" % (p.numerator / p.denominator),
                how or "exact", seconds, peak_mib()))


if __name__ == "__main__":
    main(sys.argv[1:])
