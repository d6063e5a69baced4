#!/usr/bin/env python3
"""Time a study audited end to end: 1,000 matches (500 trials, two arms) from the loopback server.

Generates the study in a temporary folder by copying the six matches of the
fixtures' linked study under new ids (and their trials.csv and seats.csv rows
under new trial numbers), serves it from tests/loopback.py, and runs
`recompute_study.py ADDRESS --matches --jobs N` as a user would. Reports the wall
time and the audit's peak resident memory (the child's ru_maxrss). The profile's
card is the fixture's, so the page's figures and counts differ from the files'
(exit 1): what is timed is the audit of every match and row.

Run: python3 bench/bench_study_audit.py [--matches 1000] [--jobs 4]

`--tiny` runs it at a tiny size (12 matches, --jobs 2), in a few seconds: what CI runs
(tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import argparse
import csv
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from loopback import Platform  # noqa: E402

SOURCE = REPO / "fixtures" / "u" / "linked-lab" / "studies" / "s_9f54f5e8"
STUDY = "/u/bench/studies/s_0000be4c"


def rows_of(path):
    return list(csv.reader(io.StringIO(path.read_text(), newline="")))


def generate(root, count):
    trials, seats = rows_of(SOURCE / "trials.csv"), rows_of(SOURCE / "seats.csv")
    t_head, s_head = trials[0], seats[0]
    t_col, s_col = {c: i for i, c in enumerate(t_head)}, {c: i for i, c in enumerate(s_head)}
    sources = trials[1:]
    out_t, out_s = [t_head], [s_head]
    for i in range(count):
        row = list(sources[i % len(sources)])
        old, new = row[t_col["match"]], "m_%012x" % (i + 1)
        trial, arm = str(i // 2 + 1), str(i % 2)
        for seat in seats[1:]:
            if (seat[s_col["trial"]], seat[s_col["arm"]]) == (row[t_col["trial"]], row[t_col["arm"]]):
                seat = list(seat)
                seat[s_col["trial"]], seat[s_col["arm"]] = trial, arm
                out_s.append(seat)
        row[t_col["trial"]], row[t_col["arm"]], row[t_col["match"]] = trial, arm, new
        out_t.append(row)
        src, dst = REPO / "fixtures" / "api" / "matches" / old, root / "api" / "matches" / new
        for path in src.rglob("*.json"):
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text().replace(old, new))
    folder = root / STUDY.lstrip("/")
    folder.mkdir(parents=True)
    profile = (REPO / "fixtures" / "u" / "linked-lab.json").read_text().replace("s_9f54f5e8", "s_0000be4c")
    (root / "u" / "bench.json").write_text(profile.replace('"linked-lab"', '"bench"'))
    for name, rows in (("trials.csv", out_t), ("seats.csv", out_s)):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        (folder / name).write_text(buffer.getvalue())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--tiny", action="store_true", help="12 matches, --jobs 2")
    args = parser.parse_args()
    if args.tiny:
        args.matches, args.jobs = 12, 2
    root = Path(tempfile.mkdtemp(prefix="bench-study-"))
    try:
        generate(root, args.matches)
        with Platform(root) as platform:
            started = time.monotonic()
            out = subprocess.run([sys.executable, str(REPO / "recompute_study.py"), platform.url + STUDY,
                                  "--matches", "--jobs", str(args.jobs)], capture_output=True, text=True)
            elapsed = time.monotonic() - started
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        lines = out.stdout.strip().splitlines()
        print("\n".join(l for l in lines if l.startswith(("matches that", "rows that"))) or out.stderr.strip())
        print("%d matches, --jobs %d: exit %d, %.1f s, peak memory %.0f MB (Python %s)" % (
            args.matches, args.jobs, out.returncode, elapsed, peak_kb / 1024, sys.version.split()[0]))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
