#!/usr/bin/env python3
"""Time the exact sign-flip test of recompute_study.py alone.

Differences are Fitness-Index-like: each the difference of two indices kept to
a tenth (so a multiple of 100 thousandths), drawn from a normal with mean 3
and spread 12 points, from a fixed seed. Prints, for n = 200, 1000 and 5000
pairs (or the sizes given as arguments), the seconds the test takes and the
process's peak resident memory so far.

    python3 bench/bench_signflip.py [N ...]
"""
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import recompute_study  # noqa: E402

SIZES = (200, 1000, 5000)
SEED = 20261115
MEAN_POINTS = 3.0
SPREAD_POINTS = 12.0


def differences(n, rng):
    return [round(rng.gauss(MEAN_POINTS, SPREAD_POINTS) * 10) * 100 for _ in range(n)]


def peak_mib():
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


def main(argv):
    sizes = [int(a) for a in argv] or SIZES
    print("python %s, exact sign-flip test" % sys.version.split()[0])
    for n in sizes:
        diffs = differences(n, random.Random(SEED + n))
        started = time.perf_counter()
        p = recompute_study.sign_flip_p(diffs)
        seconds = time.perf_counter() - started
        print("n=%-5d sum|D|=%-7d tenths  p=%-10.4g %8.3f s  peak RSS %.0f MiB"
              % (n, sum(abs(d) for d in diffs) // 100, p.numerator / p.denominator, seconds, peak_mib()))


if __name__ == "__main__":
    main(sys.argv[1:])
