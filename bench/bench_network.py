#!/usr/bin/env python3
"""Time recompute.py downloading a large match over a slow link, with compression and without.

Generates the 200,000-event, 40-page, 8-seat match of bench_match.py, serves it from the loopback
test server (tests/loopback.py) over a link throttled to 20 Mbit/s (every byte the server sends,
all connections together), and measures, best of several runs:

- floor: moving the match's compressed pages and report over that link (one request after the
  other, as the script asks) and parsing them (gzip, then json.loads), nothing else;
- process floor: the same as a plain client in a fresh process (python3 started, its modules
  imported), as a user would run one;
- gzip: `recompute.py --base URL MATCH` as a user runs it (a fresh process, output discarded),
  the server compressing as the platform does (records.md §3);
- identity: the same against a server that does not compress.

Run: python3 bench/bench_network.py [--mbit 20] [--runs 3] [--events N] [--pages P]
(--mbit 0: loopback as it is, no link; the server keeps connections alive, as the platform does)

With --latency MS (a round trip; users are about 50 ms away), the link is a delay of MS/2 each way
instead (a TCP relay of this file's own, every byte held that long, no rate), over TLS with the
test CA (tests/loopback_cert.pem), the server keeping connections alive as the platform does;
it measures a 30-page match (6,000 events) and the 200,000-event one (40 pages):

- kept-alive floor: a plain client sending the same requests over one kept-alive connection with
  one TLS context, decompressing and parsing each answer;
- recompute.py as a user runs it, with the connections and TLS handshakes the server counted.

`--tiny` runs it at a tiny size (2,000 events, 4 pages, 4 seats, a 200 Mbit/s link, one run; then
the latency mode on the same match at 50 ms), in a few seconds: what CI runs (tests/test_benches.py), so that the bench cannot rot; its figures mean nothing.
"""
import argparse
import gzip
import http.client
import json
import os
import queue
import random
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import bench_match  # noqa: E402
from loopback import Platform  # noqa: E402

MATCH = "m_0123456789ab"
CERT, KEY = (os.path.join(HERE, "..", "tests", name) for name in ("loopback_cert.pem", "loopback_key.pem"))


class Delay:
    """A TCP relay on loopback that holds every byte `seconds` in each direction, as a distant
    server's link does (latency, not bandwidth)."""

    def __init__(self, port, seconds):
        self.port, self.seconds = port, seconds
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "https://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            server = socket.create_connection(("127.0.0.1", self.port))
            for a, b in ((client, server), (server, client)):
                held = queue.Queue()
                threading.Thread(target=self.read, args=(a, held), daemon=True).start()
                threading.Thread(target=self.write, args=(b, held), daemon=True).start()

    def read(self, sock, held):
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            held.put((time.monotonic() + self.seconds, data))
            if not data:
                return

    def write(self, sock, held):
        while True:
            due, data = held.get()
            time.sleep(max(due - time.monotonic(), 0))
            try:
                if not data:
                    sock.shutdown(socket.SHUT_WR)
                    return
                sock.sendall(data)
            except OSError:
                return


def kept_alive_floor(url, pages):
    """The same requests over one kept-alive connection with one TLS context, each answer
    decompressed and parsed."""
    context = ssl.create_default_context(cafile=CERT)
    conn = http.client.HTTPSConnection(url.split("//")[1], context=context)
    for path in ["/export?page=%d" % n for n in range(1, pages + 1)] + ["/report"]:
        conn.request("GET", "/api/matches/" + MATCH + path, headers={"Accept-Encoding": "gzip"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200 and response.headers.get("Content-Encoding") == "gzip"
        json.loads(gzip.decompress(body))
    conn.close()


def latency(args):
    """The 30-page match and the 200,000-event one, over TLS, MS/2 away each way."""
    for events, pages in ((6000, 30), (args.events, args.pages)) if not args.tiny else ((2000, 4),):
        with tempfile.TemporaryDirectory() as root:
            folder = os.path.join(root, "api", "matches", MATCH)
            archive, log = bench_match.generate(events, args.seats, random.Random(7))
            bench_match.publish(folder, archive, log, pages)
            with Platform(root, gzip=True, tls=(CERT, KEY), keepalive=True) as p:
                delay = Delay(int(p.url.rsplit(":", 1)[1]), args.latency / 2000)
                kept_alive_floor(delay.url, pages)  # each answer compressed once, before any run
                best = {"floor": float("inf"), "script": float("inf")}
                for _ in range(args.runs):
                    best["floor"] = min(best["floor"], timed(kept_alive_floor, delay.url, pages))
                    before = p.connections
                    best["script"] = min(best["script"], timed(whole, delay.url, {"SSL_CERT_FILE": CERT}))
                    connections = p.connections - before
        print("%d events, %d pages (%d requests), TLS, %g ms round trip:" % (events, pages, pages + 1, args.latency))
        print("  kept-alive floor (one connection, one TLS context, gunzip, json.loads): %.2f s" % best["floor"])
        print("  recompute.py: %.2f s (%.2f x the floor), %d connection(s) and TLS handshake(s)"
              % (best["script"], best["script"] / best["floor"], connections))


def floor(url, pages):
    """Each page and the report over the link, compressed, one request after the other on one
    kept-alive connection (as a plain client sends them), then decompressed and parsed."""
    conn = http.client.HTTPConnection(url.split("//")[1])
    for path in ["/export?page=%d" % n for n in range(1, pages + 1)] + ["/report"]:
        conn.request("GET", "/api/matches/" + MATCH + path, headers={"Accept-Encoding": "gzip"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200 and response.headers.get("Content-Encoding") == "gzip"
        json.loads(gzip.decompress(body))
    conn.close()


# The floor as a user meets it: a plain client in a fresh process (python3 started, its modules
# imported), the same requests on one kept-alive connection, each answer decompressed and parsed.
PLAIN_CLIENT = """import gzip, http.client, json, sys
conn = http.client.HTTPConnection(sys.argv[1].split("//")[1])
for n in range(1, int(sys.argv[2]) + 2):
    path = "/export?page=%d" % n if n <= int(sys.argv[2]) else "/report"
    conn.request("GET", "/api/matches/" + sys.argv[3] + path, headers={"Accept-Encoding": "gzip"})
    json.loads(gzip.decompress(conn.getresponse().read()))
"""


def process_floor(url, pages):
    assert subprocess.call([sys.executable, "-c", PLAIN_CLIENT, url, str(pages), MATCH]) == 0


def whole(url, env=None):
    with open(os.devnull, "w") as sink:
        status = subprocess.call([sys.executable, os.path.join(HERE, "..", "recompute.py"), "--base", url, MATCH],
                                 stdout=sink, env=dict(os.environ, DAISHI_TIMEOUT="120", **(env or {})))
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
    parser.add_argument("--latency", type=float, help="a round trip of this many ms over TLS, no rate")
    args = parser.parse_args()
    if args.latency is not None and not args.tiny:
        return latency(args)
    if args.tiny:
        args.events, args.pages, args.seats, args.mbit, args.runs = 2000, 4, 4, 200, 1
    rate = args.mbit * 1e6 / 8 or None  # --mbit 0: loopback as it is, no link
    with tempfile.TemporaryDirectory() as root:
        folder = os.path.join(root, "api", "matches", MATCH)
        archive, events = bench_match.generate(args.events, args.seats, random.Random(7))
        bench_match.publish(folder, archive, events, args.pages)
        names = [os.path.join(folder, "export", "%d.json" % (n + 1)) for n in range(args.pages)]
        names.append(os.path.join(folder, "report.json"))
        raw = [open(name, "rb").read() for name in names]
        size, packed = sum(map(len, raw)), sum(len(gzip.compress(body, 6, mtime=0)) for body in raw)
        best = {"floor": float("inf"), "process": float("inf"), "gzip": float("inf"), "identity": float("inf")}
        with Platform(root, gzip=True, rate=rate, keepalive=True) as zipped, \
                Platform(root, rate=rate, keepalive=True) as plain:
            floor(zipped.url, args.pages)  # the server compresses each page once, before any run is timed
            for _ in range(args.runs):  # in turn, so that a busy machine slows each alike
                best["floor"] = min(best["floor"], timed(floor, zipped.url, args.pages))
                best["process"] = min(best["process"], timed(process_floor, zipped.url, args.pages))
                best["gzip"] = min(best["gzip"], timed(whole, zipped.url))
                best["identity"] = min(best["identity"], timed(whole, plain.url))
    print("match: %d events, %d pages, %d seats: %.1f MB of JSON, %.2f MB compressed (%.1f x)"
          % (args.events, args.pages, args.seats, size / 1e6, packed / 1e6, size / packed))
    print("link: %g Mbit/s (%.2f s to move the compressed pages, %.1f s the JSON)"
          % (args.mbit, packed / (rate or float("inf")), size / (rate or float("inf"))))
    print("floor (move compressed, gunzip, json.loads): %.2f s" % best["floor"])
    print("the same as a fresh process (a plain client: python3 started, modules imported): %.2f s"
          % best["process"])
    print("recompute.py, gzip:     %.2f s  (%.2f x the floor, %.2f x the process; goal <= 2 x)"
          % (best["gzip"], best["gzip"] / best["floor"], best["gzip"] / best["process"]))
    print("recompute.py, identity: %.2f s  (%.2f x the floor, %.2f x the process)"
          % (best["identity"], best["identity"] / best["floor"], best["identity"] / best["process"]))
    if args.tiny:  # the latency mode too, at a 50 ms round trip
        args.latency = 50
        latency(args)


if __name__ == "__main__":
    main()
