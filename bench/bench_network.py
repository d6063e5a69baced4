#!/usr/bin/env python3
"""Time recompute.py downloading a large match over a slow link, with compression and without.

Generates the 200,000-event, 40-page, 8-seat match of bench_match.py, serves it from the loopback
test server (tests/loopback.py) over a link throttled to 20 Mbit/s (every byte the server sends,
all connections together), and measures, best of several runs:

- floor: moving the match's compressed pages and report over that link (one request after the
  other, as the script asks) and parsing them (gzip, then json.loads), nothing else;
- gzip: `recompute.py --base URL MATCH` as a user runs it (a fresh process, output discarded),
  the server compressing as the platform does (records.md §3);
- identity: the same against a server that does not compress.

Run: python3 bench/bench_network.py [--mbit 20] [--runs 3] [--events N] [--pages P]

`--tiny` runs it at a tiny size (2,000 events, 4 pages, 4 seats, a 200 Mbit/s link, one run), in a
few seconds: what CI runs (tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import bench_match  # noqa: E402
from loopback import Platform  # noqa: E402

MATCH = "m_0123456789ab"


def floor(url, pages):
    """Each page and the report over the link, compressed, then decompressed and parsed."""
    for path in ["/export?page=%d" % n for n in range(1, pages + 1)] + ["/report"]:
        request = urllib.request.Request(url + "/api/matches/" + MATCH + path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request) as response:
            body = response.read()
            assert response.headers.get("Content-Encoding") == "gzip"
        json.loads(gzip.decompress(body))


def whole(url):
    with open(os.devnull, "w") as sink:
        status = subprocess.call([sys.executable, os.path.join(HERE, "..", "recompute.py"), "--base", url, MATCH],
                                 stdout=sink, env=dict(os.environ, DAISHI_TIMEOUT="120"))
    assert status == 0, "the generated match should audit clean"


def timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200000)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--mbit", type=float, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="2,000 events, 4 pages, 4 seats, 200 Mbit/s, one run")
    args = parser.parse_args()
    if args.tiny:
        args.events, args.pages, args.seats, args.mbit, args.runs = 2000, 4, 4, 200, 1
    rate = args.mbit * 1e6 / 8
    with tempfile.TemporaryDirectory() as root:
        folder = os.path.join(root, "api", "matches", MATCH)
        archive, events = bench_match.generate(args.events, args.seats, random.Random(7))
        bench_match.publish(folder, archive, events, args.pages)
        names = [os.path.join(folder, "export", "%d.json" % (n + 1)) for n in range(args.pages)]
        names.append(os.path.join(folder, "report.json"))
        raw = [open(name, "rb").read() for name in names]
        size, packed = sum(map(len, raw)), sum(len(gzip.compress(body, 6, mtime=0)) for body in raw)
        best = {"floor": float("inf"), "gzip": float("inf"), "identity": float("inf")}
        with Platform(root, gzip=True, rate=rate) as zipped, Platform(root, rate=rate) as plain:
            floor(zipped.url, args.pages)  # the server compresses each page once, before any run is timed
            for _ in range(args.runs):  # in turn, so that a busy machine slows each alike
                best["floor"] = min(best["floor"], timed(floor, zipped.url, args.pages))
                best["gzip"] = min(best["gzip"], timed(whole, zipped.url))
                best["identity"] = min(best["identity"], timed(whole, plain.url))
    print("match: %d events, %d pages, %d seats: %.1f MB of JSON, %.2f MB compressed (%.1f x)"
          % (args.events, args.pages, args.seats, size / 1e6, packed / 1e6, size / packed))
    print("link: %g Mbit/s (%.2f s to move the compressed pages, %.1f s the JSON)"
          % (args.mbit, packed / rate, size / rate))
    print("floor (move compressed, gunzip, json.loads): %.2f s" % best["floor"])
    print("recompute.py, gzip:     %.2f s  (%.2f x the floor; goal <= 2 x)" % (best["gzip"], best["gzip"] / best["floor"]))
    print("recompute.py, identity: %.2f s  (%.2f x the floor)" % (best["identity"], best["identity"] / best["floor"]))


if __name__ == "__main__":
    main()
