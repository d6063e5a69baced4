#!/usr/bin/env python3
"""Peak memory of recompute_study.py on a large seats.csv: 99,000 rows (read) and 250,000 (refused).

The rows repeat the fixtures' linked study's seats under new trial numbers; the study's own
trials.csv and page are read beside them, so the figures and checks differ (exit 1) for the first
and the second is refused past 100,000 rows (exit 2). What is measured is the child's peak
resident memory (ru_maxrss) and wall time. Target: under 256 MB for both.

Run: python3 bench/bench_study_rows.py [--tiny]

`--tiny` writes 990 rows and 2,500 instead (neither refused), in a second or so: what CI runs
(tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import argparse
import csv
import io
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "fixtures" / "u" / "linked-lab" / "studies" / "s_9f54f5e8"


def seats_file(rows, path):
    head, *body = list(csv.reader(io.StringIO((STUDY / "seats.csv").read_text(), newline="")))
    with open(path, "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(head)
        for n in range(rows):
            row = list(body[n % len(body)])
            row[1], row[3] = str(n // 4 + 1), str(n % 4 + 1)
            writer.writerow(row)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="990 rows and 2,500")
    args = parser.parse_args()
    for rows in (990, 2500) if args.tiny else (99000, 250000):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "seats.csv"
            seats_file(rows, path)
            started = time.monotonic()
            out = subprocess.run([sys.executable, str(REPO / "recompute_study.py"),
                                  "https://daishi.ai/u/linked-lab/studies/s_9f54f5e8",
                                  "--trials", str(STUDY / "trials.csv"), "--seats", str(path),
                                  "--page", str(REPO / "fixtures" / "u" / "linked-lab.json")],
                                 capture_output=True, text=True)
            elapsed = time.monotonic() - started
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print("seats.csv of %d rows (%.0f MB): exit %d, %.1f s, peak so far %.0f MB (Python %s)" % (
                rows, path.stat().st_size / 1e6, out.returncode, elapsed, peak, sys.version.split()[0]))


if __name__ == "__main__":
    main()
