#!/usr/bin/env python3
"""Time recompute.py on a large generated match against reading its files and json.loads alone.

Generates a well-formed match of 200,000 events over 40 export pages and 8
seats (a report whose figures are the recomputed ones, so it audits clean),
saves it as a folder of copies, then runs in turn, each as a fresh process of
the Python that runs the bench (python3 started, its modules imported):

- the floor: read every page and the report and json.loads each, nothing else;
- recompute.py FOLDER, as a user runs it offline (output discarded): reading,
  checking, recomputing and printing every figure;

and prints each one's median CPU time (user + system) over the runs and its
peak RSS (the most over the runs), and the ratio of the two times.

Run: python3 bench/bench_match.py [--events N] [--pages P] [--seats S] [--runs R]
(under each Python to compare, e.g. PYENV_VERSION=3.9.18 python3 bench/bench_match.py)

`--tiny` runs it at a tiny size (2,000 events, 4 pages, 4 seats, one run), in a second or so:
what CI runs (tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recompute as rc  # noqa: E402

ITEMS = list(rc.ITEM_VALUES)
RESOURCES = ["wood", "stone", "ore", "fiber", "food"]


def generate(n_events, n_seats, rng):
    seats = ["a_%d" % (i + 1) for i in range(n_seats)]
    regions = ["r%d_%d" % (x, y) for x in range(12) for y in range(12)]
    end = 400
    events = [{"type": "agent_spawned", "tick": 0, "agentId": s, "region": rng.choice(regions)} for s in seats]
    structures, next_id = [], 0
    per_tick = max(1, n_events // end)
    tick = 1
    while len(events) < n_events:
        if len(events) % per_tick == 0 and tick < end:
            tick += 1
        who = rng.choice(seats)
        roll = rng.random()
        if roll < 0.35:
            events.append({"type": "gather", "tick": tick, "agentId": who, "region": rng.choice(regions[:20]),
                           "resource": rng.choice(RESOURCES), "gathered": rng.randint(1, 3)})
        elif roll < 0.5:
            events.append({"type": "move", "tick": tick, "agentId": who, "from": rng.choice(regions),
                           "to": rng.choice(regions)})
        elif roll < 0.62:
            other = rng.choice([s for s in seats if s != who])
            give = {rng.choice(ITEMS): rng.randint(1, 4)}
            receive = {rng.choice(ITEMS): rng.randint(1, 4)} if rng.random() < 0.9 else {}
            events.append({"type": "trade_completed", "tick": tick, "agentId": who, "from": who, "to": other,
                           "give": give, "receive": receive})
            events.append({"type": "trade_fulfilled", "tick": tick, "agentId": other, "from": who, "to": other})
        elif roll < 0.7:
            events.append({"type": "craft", "tick": tick, "agentId": who, "item": rng.choice(ITEMS), "count": 1})
        elif roll < 0.72:
            next_id += 1
            sid = "st_%d" % next_id
            structures.append(sid)
            events.append({"type": "build", "tick": tick, "agentId": who, "region": rng.choice(regions),
                           "structure": rng.choice(list(rc.STRUCTURES)), "structureId": sid})
        elif roll < 0.76 and structures:
            kind = rng.choice(["repair", "deposit", "withdraw"])
            event = {"type": kind, "tick": tick, "agentId": who, "structureId": rng.choice(structures)}
            if kind != "repair":
                event["items"] = {rng.choice(ITEMS): rng.randint(1, 3)}
            events.append(event)
        elif roll < 0.765:
            events.append({"type": "region_collapsed", "tick": tick, "region": rng.choice(regions[:20]),
                           "resource": rng.choice(RESOURCES)})
        elif roll < 0.77:
            events.append({"type": "attack", "tick": tick, "agentId": who,
                           "target": rng.choice([s for s in seats if s != who])})
        else:
            events.append({"type": rng.choice(["rest", "message", "train"]), "tick": tick, "agentId": who})
            if events[-1]["type"] == "train":
                events[-1]["stat"] = "strength"
    del events[n_events:]
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
    agents = [{"agentId": s, "name": "Seat %d" % (i + 1), "model": "model-%d" % (i % 3), "status": "active",
               "roundsAlive": end, "wealth": 0.0, "reputation": rng.randint(-2, 12), "aggression": rng.randint(0, 2),
               "trained": {"strength": 1, "vitality": 0, "endurance": 1},
               "inventory": {item: rng.randint(0, 9) for item in ITEMS}} for i, s in enumerate(seats)]
    archive = {"matchId": "m_0123456789ab", "config": {"engine_version": "0.5.0", "map": {"width": 12, "height": 12},
                                                       "rounds": end},
               "startedAtTick": 0, "endedAtTick": end, "agents": agents}
    return archive, events


def write_folder(folder, archive, events, pages):
    size = -(-len(events) // pages)
    os.makedirs(os.path.join(folder, "export"), exist_ok=True)
    for p in range(pages):
        page = {"matchId": archive["matchId"], "page": p + 1, "pageCount": pages, "errata": [],
                "events": events[p * size:(p + 1) * size]}
        if p == 0:
            page["archive"] = archive
        with open(os.path.join(folder, "export", "%d.json" % (p + 1)), "w") as f:
            json.dump(page, f)


def write_report(folder, report):
    with open(os.path.join(folder, "report.json"), "w") as f:
        json.dump(report, f)


def publish(folder, archive, events, pages):
    """Write pages and a report whose figures are the recomputed ones."""
    cards = [{"agentId": a["agentId"], "status": a["status"], "rank": 1, "wealth": 0.0, "fitnessIndex": 0.0, "grade": "F",
              "dimensions": dict.fromkeys(rc.DIMENSIONS, 0.0), "achievements": [],
              "raw": {"messagesSent": 5}} for a in archive["agents"]]
    report = {"matchId": archive["matchId"], "rubricVersion": "2.4", "rubricReason": None, "scorecards": cards}
    write_folder(folder, archive, events, pages)
    write_report(folder, report)
    replays = rc.wealth_replays(rc.read_match(rc.saved_match(folder), None)[0], set())[0]
    for agent, wealth in zip(archive["agents"], replays):
        agent["wealth"] = wealth
    write_folder(folder, archive, events, pages)
    results = rc.recompute(*rc.read_match(rc.saved_match(folder), None))[0]
    for card, result in zip(cards, results):
        fig = result["figures"]
        card.update(status=fig["status"], rank=fig["rank"], wealth=fig["wealth"], fitnessIndex=fig["fitnessIndex"], grade=fig["grade"],
                    achievements=fig["achievements"], dimensions={d: fig[d] for d in rc.DIMENSIONS})
        card["raw"].update({k: fig[k] for k in ("mapCoverage", "indexWealth", "indexReputation",
                                                  "circularReputation", "circularEstimated")})
    write_report(folder, report)


# The floor: a fresh process that reads each file named and parses it, nothing else.
FLOOR = """import json, sys
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        json.loads(f.read())
"""


# One run, measured from a small process of its own: Linux counts the RSS of the process that
# starts a child towards the child's peak, and the bench itself holds the generated match.
RUN = """import os, sys
actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]  # its output discarded
child = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ, file_actions=actions)
_, status, usage = os.wait4(child, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def run(argv):
    """(CPU seconds, peak RSS in bytes) of a fresh process running argv; it must end with exit 0."""
    status, seconds, peak = subprocess.check_output([sys.executable, "-c", RUN] + argv).split()
    assert status == b"0", "%s ended with status %s" % (argv[:2], status)
    return float(seconds), int(peak) * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS


def measure(runs, *commands):
    """Each command's median CPU time and largest peak RSS over `runs` rounds, run in turn so
    that a busy machine slows them alike."""
    figures = [([], []) for _ in commands]
    for _ in range(runs):
        for argv, (times, peaks) in zip(commands, figures):
            seconds, peak = run(argv)
            times.append(seconds)
            peaks.append(peak)
    return [(statistics.median(times), max(peaks)) for times, peaks in figures]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200000)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tiny", action="store_true", help="2,000 events, 4 pages, 4 seats, one run")
    args = parser.parse_args()
    if args.tiny:
        args.events, args.pages, args.seats, args.runs = 2000, 4, 4, 1
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "recompute.py")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "m_0123456789ab")
        archive, events = generate(args.events, args.seats, random.Random(7))
        publish(folder, archive, events, args.pages)
        names = [os.path.join(folder, "export", "%d.json" % (p + 1)) for p in range(args.pages)]
        names.append(os.path.join(folder, "report.json"))
        size = sum(os.path.getsize(n) for n in names)
        (parse, parse_peak), (total, peak) = measure(
            args.runs, [sys.executable, "-c", FLOOR] + names, [sys.executable, script, folder])
    print("match: %d events, %d pages, %d seats, %.1f MB of JSON; Python %s, median of %d run(s), each a fresh process"
          % (args.events, args.pages, args.seats, size / 1e6, platform.python_version(), args.runs))
    print("read + json.loads: %.3f s CPU, peak RSS %.0f MB" % (parse, parse_peak / 1e6))
    print("recompute.py:      %.3f s CPU (%.2f x read + json.loads; target <= 2 x), peak RSS %.0f MB (target <= 80 MB)"
          % (total, total / parse, peak / 1e6))


if __name__ == "__main__":
    main()
