"""Every bench under bench/ runs, at the tiny size its --tiny option gives, and prints its figures:
so that none can rot while the scripts change under it. Nothing here times anything: the figures
a tiny run prints mean nothing, only that the bench still runs to its end."""
import re
import subprocess
import sys

import pytest

from conftest import REPO

NUMBER = r"[0-9]+(\.[0-9]+)?"
# bench: the lines of figures it must print, each a pattern matched against one line of its stdout
FIGURES = {
    "bench_match.py": [
        r"match: 2000 events, 4 pages, 4 seats, %s MB of JSON; Python [0-9.]+, median of 1 run\(s\), each a fresh "
        r"process" % NUMBER,
        r"read \+ json.loads: %s s CPU, peak RSS [0-9]+ MB" % NUMBER,
        r"recompute.py: +%s s CPU \(%s x read \+ json.loads; target <= 2 x\), peak RSS [0-9]+ MB \(target <= 80 MB\)"
        % (NUMBER, NUMBER),
    ],
    "bench_network.py": [
        r"match: 2000 events, 4 pages, 4 seats: %s MB of JSON, %s MB compressed \(%s x\)" % ((NUMBER,) * 3),
        r"link: 200 Mbit/s \(%s s to move the compressed pages, %s s the JSON\)" % (NUMBER, NUMBER),
        r"floor \(move compressed, gunzip, json.loads\): %s s" % NUMBER,
        r"the same as a fresh process \(a plain client: python3 started, modules imported\): %s s" % NUMBER,
        r"recompute.py, gzip: +%s s  \(%s x the floor, %s x the process; goal <= 2 x\)" % ((NUMBER,) * 3),
        r"recompute.py, identity: %s s  \(%s x the floor, %s x the process\)" % ((NUMBER,) * 3),
        r"2000 events, 4 pages \(5 requests\), TLS, 50 ms round trip:",
        r"  kept-alive floor \(one connection, one TLS context, gunzip, json.loads\): %s s" % NUMBER,
        r"  recompute.py: %s s \(%s x the floor\), 1 connection\(s\) and TLS handshake\(s\)" % (NUMBER, NUMBER),
    ],
    "bench_signflip.py": [r"python [0-9.]+, exact sign-flip test, alpha 0.05, the first 40 pairs of each case"] + [
        r"%s +n=40 +sum\|D\|=[0-9]+ +p=0\.[0-9]{10} +(exact|bound|enclosed) +%s s  peak RSS +[0-9]+ MiB"
        % (re.escape(case), NUMBER) for case in (
            "fitness +5", "fitness +3", "fitness 0", "uniform -1..1", "uniform 0..100", "uniform -100..100",
            "widest -100..100", "refused 170", "straddle 0..100", "wide alt 50 0..1000", "wide 100 0..2000",
            "wide 200 0..1000", "wide 128 0..1000") + tuple(
                "%s %d" % (family, pairs) for family in ("normal", "t2", "wealth", "wealth x5")
                for pairs in (100, 200, 500))],
    "bench_study.py": [
        r"python [0-9.]+, 10 pairs x 3 comparisons, 2 focal seats, 40 trial rows, 160 seat rows",
        r"whole script: best %s s, median %s s over 1 runs; peak RSS [0-9]+ MiB; exit 0" % (NUMBER, NUMBER),
        r"figures that match: ([0-9]+) of \1 compared; checks that agree: ([0-9]+) of \2 made",
    ],
    "bench_study_audit.py": [
        r"matches that recompute: 12 of 12 named",
        r"rows that agree with their match's record: trials.csv 12 of 12, seats.csv 48 of 48",
        r"12 matches, --jobs 2: exit 1, %s s, peak memory [0-9]+ MB \(Python [0-9.]+\)" % NUMBER,
    ],
    "bench_study_rows.py": [
        r"seats.csv of %d rows \(%s MB\): exit 1, %s s, peak so far [0-9]+ MB \(Python [0-9.]+\)"
        % (rows, NUMBER, NUMBER) for rows in (990, 2500)],
}
TIMEOUT_SECONDS = 120   # a tiny run takes a few seconds; this only stops a hung one


def test_every_bench_is_run_here():
    assert sorted(p.name for p in (REPO / "bench").glob("*.py")) == sorted(FIGURES)


@pytest.mark.parametrize("bench", sorted(FIGURES))
def test_the_bench_runs_at_its_tiny_size_and_prints_its_figures(bench):
    done = subprocess.run([sys.executable, str(REPO / "bench" / bench), "--tiny"], capture_output=True, text=True,
                          timeout=TIMEOUT_SECONDS, cwd=str(REPO))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    missing = [pattern for pattern in FIGURES[bench] if not any(re.fullmatch(pattern, line) for line in lines)]
    assert missing == [], done.stdout
    assert len(lines) == len(FIGURES[bench]), done.stdout


@pytest.mark.parametrize("bench", sorted(FIGURES))
def test_the_bench_says_what_tiny_is(bench):
    text = (REPO / "bench" / bench).read_text()
    assert "`--tiny`" in text.split('"""')[1] and "tests/test_benches.py" in text.split('"""')[1]
