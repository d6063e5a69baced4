"""A loopback stand-in for the platform: serves saved records at its paths.

A root folder holds records laid out as the platform serves them
(`api/matches/<id>/export/<N>.json`, `api/matches/<id>/report.json`,
`api/matches/<id>/report/<V>.json`, `api/matches/<id>/playing.json`,
`u/<handle>.json`, `u/<handle>/studies/<id>/{trials,seats}.csv`,
`u/<handle>/studies/<id>/playing.json`, `u/<handle>/recipes/<rid>.json`).
Tests may add `faults`: a path (without query) mapped to a function that
answers the request itself, for broken-network cases.
"""
import json
import re
import threading
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

    def send(self, status, body, ctype="application/json"):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

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
        url = urlsplit(self.path)
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


class Platform:
    """`with Platform(root, ...) as p:` serves the roots at `p.url`."""

    def __init__(self, *roots, faults=None):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.roots = [Path(r) for r in roots]
        self.httpd.faults = dict(faults or {})
        self.httpd.requests = []
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]

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
