"""A loopback stand-in for the platform: serves saved records at its paths.

A root folder holds records laid out as the platform serves them
(`api/matches/<id>/export/<N>.json`, `api/matches/<id>/report.json`,
`api/matches/<id>/report/<V>.json`, `api/matches/<id>/playing.json`,
`u/<handle>.json`, `u/<handle>/studies/<id>/{trials,seats}.csv`,
`u/<handle>/studies/<id>/playing.json`, `u/<handle>/recipes/<rid>.json`).
Tests may add `faults`: a path (without query) mapped to a function that
answers the request itself, for broken-network cases.

As the world answers (records.md §3), on request: `prefix` serves every path
under a mirror's prefix (`/mirror`: `/mirror/api/matches/...`; anything else
404); `gzip` compresses every answer whose request accepts it; `limit` =
(requests a second, burst, Retry-After) answers 429 past a token bucket;
`rate` sends at most that many bytes a second over all connections, as a
slow link does; `tls` = (certificate file, key file) serves HTTPS; `keepalive`
speaks HTTP/1.1 and keeps each connection open for the next request, as the
platform does (`drop`: yet closes it after each answer without a word).
`connections` counts the connections (and so TLS handshakes) accepted.
"""
import gzip as gzip_module
import json
import re
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

MATCH = re.compile(r"^/api/matches/(m_[0-9a-f]{12})/(export|report)$")
STUDY_FILE = re.compile(r"^/u/([a-z0-9_-]{1,32})/studies/(s_[0-9a-f]{8})/(trials|seats)\.csv$")
PROFILE = re.compile(r"^/u/([a-z0-9_-]{1,32})\.json$")
RECIPE = re.compile(r"^/u/([a-z0-9_-]{1,32})/recipes/([A-Za-z0-9_-]+)\.json$")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body, ctype="application/json", headers=()):
        if isinstance(body, str):
            body = body.encode("utf-8")
        compress = self.server.gzip and "gzip" in self.headers.get("Accept-Encoding", "")
        if compress:
            body = self.server.compressed(body)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in list(headers) + [("Content-Encoding", "gzip")] * compress:
            self.send_header(key, value)
        self.end_headers()
        self.server.throttled(self.wfile, body)

    def reason(self, status, text):
        self.send(status, json.dumps({"reason": text}))

    def file(self, path):
        for root in self.server.roots:
            p = root / path
            if p.is_file():
                return p
        return None

    def serve_file(self, rel):
        p = self.file(rel)
        if p is None:
            return self.reason(404, "not found")
        ctype = "text/csv" if p.suffix == ".csv" else "application/json"
        self.send(200, p.read_bytes(), ctype)

    def do_GET(self):
        self.server.requests.append(self.path)
        self.server.headers.append(self.headers)
        url = urlsplit(self.path)
        if not url.path.startswith(self.server.prefix + "/"):
            return self.reason(404, "not found")
        url = url._replace(path=url.path[len(self.server.prefix):])
        if self.server.busy():
            return self.send(429, json.dumps({"reason": "slow down"}), headers=[
                ("Retry-After", str(self.server.limit[2]))])
        fault = self.server.faults.get(url.path)
        if fault is not None:
            return fault(self)
        query = parse_qs(url.query)
        m = MATCH.match(url.path)
        if m:
            return self.match(m.group(1), m.group(2), query)
        m = STUDY_FILE.match(url.path)
        if m:
            playing = self.file("u/%s/studies/%s/playing.json" % m.groups()[:2])
            if playing is not None:
                return self.send(409, playing.read_bytes())
            return self.serve_file(url.path[1:])
        if PROFILE.match(url.path) or RECIPE.match(url.path):
            return self.serve_file(url.path[1:])
        self.reason(404, "not found")

    def match(self, mid, what, query):
        base = "api/matches/%s/" % mid
        playing = self.file(base + "playing.json")
        if playing is not None:
            return self.send(409, playing.read_bytes())
        if what == "export":
            page = query.get("page", ["1"])[0]
            if not page.isdigit():
                return self.reason(400, "page must be a number")
            return self.serve_file(base + "export/%d.json" % int(page))
        if "rubric" in query:
            version = query["rubric"][0]
            if self.file(base + "report.json") is None:
                return self.reason(404, "not found")
            if self.file(base + "report/%s.json" % version) is None:
                return self.reason(400, "unknown rubric version %r" % version)
            return self.serve_file(base + "report/%s.json" % version)
        self.serve_file(base + "report.json")


class KeptAlive(Handler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()  # each answer's head and body sent at once, as nginx's tcp_nodelay does
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        super().do_GET()
        self.close_connection = self.close_connection or self.server.keepalive == "drop"


class Quiet(ThreadingHTTPServer):
    """A test's server: a client gone mid-answer (a run stopped, a deadline passed, a connection
    dropped on purpose) is what the tests do, and prints nothing; any other fault its traceback."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, socket.timeout, ssl.SSLError)):
            super().handle_error(request, client_address)


class Server(Quiet):
    def __init__(self, roots, faults, prefix, gzip, limit, rate, tls, keepalive=False):
        super().__init__(("127.0.0.1", 0), KeptAlive if keepalive else Handler)
        self.keepalive, self.connections = keepalive, 0
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.socket = context.wrap_socket(self.socket, server_side=True)
        self.roots, self.faults, self.prefix = [Path(r) for r in roots], dict(faults or {}), prefix.rstrip("/")
        self.gzip, self.limit, self.rate = gzip, limit, rate
        self.requests, self.headers, self.refused = [], [], 0
        self.lock, self.cache = threading.Lock(), {}
        self.tokens, self.filled, self.link_free = (limit or (0, 0))[1], time.monotonic(), 0.0

    def process_request(self, request, client_address):
        self.connections += 1
        super().process_request(request, client_address)

    def compressed(self, body):
        with self.lock:
            if body not in self.cache:
                self.cache[body] = gzip_module.compress(body, 6, mtime=0)
            return self.cache[body]

    def busy(self):
        """Whether the token bucket is empty (a 429 then), else one token taken."""
        if self.limit is None:
            return False
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.limit[1], self.tokens + (now - self.filled) * self.limit[0])
            self.filled = now
            if self.tokens < 1:
                self.refused += 1
                return True
            self.tokens -= 1
            return False

    def throttled(self, out, body):
        """Write body; under `rate`, 16 KB at a time, each when the shared link is free for it."""
        if not self.rate:
            return out.write(body)
        for start in range(0, len(body), 16384):
            piece = body[start:start + 16384]
            with self.lock:
                begin = max(self.link_free, time.monotonic())
                self.link_free = begin + len(piece) / self.rate
            time.sleep(max(self.link_free - time.monotonic(), 0))
            out.write(piece)


class Platform:
    """`with Platform(root, ...) as p:` serves the roots at `p.url` (plus `prefix`, when given)."""

    def __init__(self, *roots, faults=None, prefix="", gzip=False, limit=None, rate=None, tls=None,
                 keepalive=False):
        self.httpd = Server(roots, faults, prefix, gzip, limit, rate, tls, keepalive)
        self.origin = "http%s://127.0.0.1:%d" % ("s" * bool(tls), self.httpd.server_address[1])
        self.url = self.origin + self.httpd.prefix

    @property
    def refused(self):
        """How many requests the rate limit answered 429."""
        return self.httpd.refused

    @property
    def connections(self):
        return self.httpd.connections

    @property
    def headers(self):
        return self.httpd.headers

    @property
    def requests(self):
        return self.httpd.requests

    @property
    def faults(self):
        return self.httpd.faults

    def __enter__(self):
        # A short poll lets each test's server shut down at once.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
