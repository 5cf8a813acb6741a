#!/usr/bin/env python3
"""endpoints_stub.py - a stand-in for the server's endpoints API, for
test_proxy.sh: GET /v1/services/endpoints[?wait=SEQ] answers the JSON in
FILE (re-read on every look; with ?wait it holds the request, up to 25 s,
until FILE's seq differs from SEQ, as the server's long poll does);
POST /v1/services/NAME/load appends 'NAME BODY' to LOADS.
usage: endpoints_stub.py PORT FILE LOADS"""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PORT, FILE, LOADS = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def current():
    with open(FILE) as f:
        text = f.read()
    return json.loads(text)["seq"], text


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path != "/v1/services/endpoints":
            return self.answer(404, '{"error":"not found"}')
        wait = parse_qs(url.query).get("wait")
        seq, text = current()
        deadline = time.monotonic() + 25
        while wait and str(seq) == wait[0] and time.monotonic() < deadline:
            time.sleep(0.02)
            seq, text = current()
        self.answer(200, text)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        parts = self.path.split("/")
        if len(parts) == 5 and parts[4] == "load":
            with open(LOADS, "a") as f:
                f.write(f"{parts[3]} {body}\n")
            return self.answer(204 if False else 200, "{}")
        self.answer(404, '{"error":"not found"}')


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
