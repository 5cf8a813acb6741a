#!/usr/bin/env python3
"""A stand-in for `phalanx server`'s agent endpoints (proto/agent_msg.h), so
the agent's daemon is tested over real HTTP before and apart from the real
server. It keeps no state on disk: restarting it is a server restart.

Agent side:  POST /v1/agent/register, GET /v1/agent/work, POST /v1/agent/report,
             POST /v1/agent/heartbeat
Test side:   POST /test/launch?node=N (body: a launch), POST /test/signal?node=N,
             POST /test/step?node=N (body: a step order),
             POST /test/work?node=N (body: {"launch":[...],"step":[...],"signal":[...]},
             queued at once, so that the agent takes them in one answer),
             GET /test/reports, GET /test/registrations, GET /test/heartbeats,
             POST /test/reports_down, POST /test/reports_up,
             POST /test/forget?node=N (drops N's orders sent so far, as the
             server drops those an agent acknowledged; otherwise a restarted
             agent, asking from seq 0, is sent every order again)
Usage: mock_server.py ADDR PORT
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

lock = threading.Condition()
orders = {}          # node -> [(seq, kind, obj)]
seq = 0
reports = []
registrations = {}   # node -> [report bodies]
heartbeats = {}      # node -> count
reports_down = False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(n) or b"null")

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        if u.path == "/v1/agent/work":
            node, after = q["node"][0], int(q.get("after", ["0"])[0])
            deadline = time.time() + 5
            with lock:
                while True:
                    mine = [o for o in orders.get(node, []) if o[0] > after]
                    if mine or time.time() >= deadline:
                        break
                    lock.wait(deadline - time.time())
                top = max([after] + [o[0] for o in mine])
            work = {"seq": top,
                    "launch": [o[2] for o in mine if o[1] == "launch"],
                    "signal": [o[2] for o in mine if o[1] == "signal"]}
            steps = [o[2] for o in mine if o[1] == "step"]
            if steps:  # as the server: the key only when there are steps
                work["step"] = steps
            self.reply(200, work)
        elif u.path == "/test/reports":
            with lock:
                self.reply(200, reports)
        elif u.path == "/test/registrations":
            with lock:
                self.reply(200, registrations)
        elif u.path == "/test/heartbeats":
            with lock:
                self.reply(200, heartbeats)
        else:
            self.reply(404, {"error": {"code": "NOENT", "message": u.path}})

    def do_POST(self):
        global seq, reports_down
        u = urlparse(self.path)
        q = parse_qs(u.query)
        b = self.body()
        with lock:
            if u.path == "/v1/agent/register":
                registrations.setdefault(b["node"], []).append(b)
                self.reply(200, {"heartbeat_s": 1, "node": b["node"]})
            elif u.path == "/v1/agent/report":
                if reports_down:
                    self.reply(503, {"error": {"code": "AGAIN", "message": "down"}})
                    return
                reports.append(b)
                self.reply(200, {})
            elif u.path == "/v1/agent/heartbeat":
                heartbeats[b["node"]] = heartbeats.get(b["node"], 0) + 1
                self.reply(200, {})
            elif u.path in ("/test/launch", "/test/signal", "/test/step"):
                seq += 1
                kind = u.path[len("/test/"):]
                orders.setdefault(q["node"][0], []).append((seq, kind, b))
                lock.notify_all()
                self.reply(200, {"seq": seq})
            elif u.path == "/test/work":
                for kind in ("launch", "step", "signal"):
                    for o in b.get(kind, []):
                        seq += 1
                        orders.setdefault(q["node"][0], []).append((seq, kind, o))
                lock.notify_all()
                self.reply(200, {"seq": seq})
            elif u.path == "/test/forget":
                orders[q["node"][0]] = []
                self.reply(200, {})
            elif u.path == "/test/reports_down":
                reports_down = True
                self.reply(200, {})
            elif u.path == "/test/reports_up":
                reports_down = False
                self.reply(200, {})
            else:
                self.reply(404, {"error": {"code": "NOENT", "message": u.path}})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # an agent killed mid-poll drops its connection: expected here


if __name__ == "__main__":
    srv = Server((sys.argv[1], int(sys.argv[2])), Handler)
    srv.serve_forever()
