#!/usr/bin/env python3
"""A stand-in for the Phalanx server's API, for the CLI's integration tests.

It serves the endpoints of src/proto/views.h over a Unix socket (HTTP/1.1,
JSON), keeps jobs in memory and checks requests the way the server must
(unknown partition, impossible GPU count), so the CLI's client, codecs,
commands and messages are exercised end to end as real processes. It is not
the scheduler: jobs stay PENDING unless the test moves them with
POST /test/run/{id} or /test/finish/{id}?state=..&exit=..

usage: cli_fake_server.py SOCKET_PATH
"""
import json
import os
import pwd
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

NODES = [{"name": "gpu%04d" % i, "addr": "127.0.0.1", "partitions": "batch,urgent",
          "state": "IDLE", "cpus": 64, "gpus": 8, "gpu_type": "h100", "mem_mib": 1024000}
         for i in range(1, 5)]
PARTS = [{"name": "batch", "nodelist": "gpu[0001-0004]", "is_default": True, "up": True,
          "max_time_s": 7 * 86400, "default_time_s": 3600, "nnodes": 4, "priority_tier": 1},
         {"name": "urgent", "nodelist": "gpu[0001-0004]", "is_default": False, "up": True,
          "max_time_s": 86400, "default_time_s": 3600, "nnodes": 4, "priority_tier": 2}]
SHARES = [{"account": "root", "depth": 0, "raw_shares": 0, "norm_shares": 0.0, "raw_usage": 10.0,
           "effective_usage": 1.0},
          {"account": "llm", "depth": 1, "raw_shares": 40, "norm_shares": 1.0, "raw_usage": 10.0,
           "effective_usage": 1.0},
          {"account": "llm", "user": "root", "depth": 2, "raw_shares": 1, "norm_shares": 1.0,
           "raw_usage": 10.0, "effective_usage": 1.0, "fairshare": 0.5}]
JOBS = []
NEXT = [10051]
LOCK = threading.Lock()


def error(code, field, message):
    return {"error": {"code": code, "field": field, "message": message}}


# Names the server's host knows and the CLI's may not (a directory such as
# LDAP that only the server reads): the CLI must ask GET /v1/whoami.
DIRECTORY = {4242: "alice"}


def user_name(uid):
    if uid in DIRECTORY:
        return DIRECTORY[uid]
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def submit(spec, uid):
    part = spec.get("partition") or "batch"
    if part not in ("batch", "urgent"):
        return 400, error("NOENT", "partition", "no partition '%s'" % part)
    if spec.get("gpus_per_node", 0) > 8:
        return 400, error("LIMIT", "gpus_per_node", "no node has %d GPUs (the most is 8)" % spec["gpus_per_node"])
    if spec.get("nodes_min", 1) > 4:
        return 400, error("LIMIT", "nodes_min", "partition batch has 4 nodes; the job asks for %d" % spec["nodes_min"])
    # As the server: a job that names no user is the caller's (SO_PEERCRED).
    spec.setdefault("user", user_name(uid))
    spec.setdefault("partition", part)
    spec.setdefault("account", "llm")
    spec.setdefault("qos", "normal")
    if not spec.get("time_limit_s"):
        spec["time_limit_s"] = 3600
    job = {"job_id": NEXT[0], "spec": spec, "state": "PENDING",
           "reason": "JobHeldUser" if spec.get("hold") else "Priority",
           "priority": 0 if spec.get("hold") else 1000, "submit_time": int(time.time()),
           "nnodes": spec.get("nodes_min", 1), "ncpus": max(1, spec.get("cpus_per_task", 1))}
    NEXT[0] += 1
    JOBS.append(job)
    return 201, {"job_id": job["job_id"]}


def find(jid):
    for j in JOBS:
        if str(j["job_id"]) == jid:
            return j
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def peer_uid(self):
        cred = self.connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", cred)[1]

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n)) if n else None

    def route(self, method):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        p = url.path.rstrip("/").split("/")[1:]
        if method == "POST" and p == ["v1", "jobs"]:
            return submit(self.body()["job"], self.peer_uid())
        if method == "GET" and p == ["v1", "whoami"]:
            return 200, {"user": user_name(self.peer_uid()), "uid": self.peer_uid()}
        if method == "GET" and p == ["v1", "jobs"]:
            # As the server: every job it holds, or those in the given states.
            states = q.get("state", [""])[0].split(",") if "state" in q else None
            return 200, {"jobs": [j for j in JOBS if states is None or j["state"] in states]}
        if method == "GET" and p == ["v1", "accounting"]:
            # As the server: flat rows, one per attempt.
            rows = []
            for j in JOBS:
                if j["state"] in ("PENDING", "RUNNING"):
                    continue
                row = {k: v for k, v in j.items() if k != "spec"}
                for k in ("name", "user", "account", "partition", "qos", "uid"):
                    if k in j["spec"]:
                        row[k] = j["spec"][k]
                rows.append(row)
            return 200, {"jobs": rows}
        if len(p) == 3 and p[:2] == ["v1", "jobs"]:
            j = find(p[2])
            if not j:
                return 404, error("NOENT", "job_id", "no job %s" % p[2])
            if method == "GET":
                return 200, j
            if method == "DELETE":
                if j["state"] not in ("PENDING", "RUNNING"):
                    return 409, error("STATE", "job_id", "job %s already finished" % p[2])
                j["state"], j["cancelled_by"] = "CANCELLED", "root"
                j["end_time"] = int(time.time())
                return 200, {}
            if method == "PATCH":
                patch = self.body()
                if "time_limit_s" in patch:
                    j["spec"]["time_limit_s"] = patch["time_limit_s"]
                return 200, j
        if method == "POST" and len(p) == 4 and p[:2] == ["v1", "jobs"]:
            j = find(p[2])
            if not j:
                return 404, error("NOENT", "job_id", "no job %s" % p[2])
            if p[3] == "hold":
                j["reason"], j["priority"] = "JobHeldUser", 0
            elif p[3] == "release":
                j["reason"], j["priority"] = "Priority", 1000
            return 200, {}
        if method == "GET" and p == ["v1", "nodes"]:
            return 200, {"nodes": NODES}
        if method == "POST" and len(p) == 4 and p[:2] == ["v1", "nodes"]:
            for n in NODES:
                if n["name"] == p[2]:
                    n["state"] = "DRAINED" if p[3] == "drain" else "IDLE"
                    n["reason"] = (self.body() or {}).get("reason") if p[3] == "drain" else None
                    # as the server: who drained it (the caller) and when
                    n["reason_user"] = user_name(self.peer_uid()) if p[3] == "drain" else None
                    n["reason_time"] = int(time.time()) if p[3] == "drain" else None
                    return 200, {}
            return 404, error("NOENT", "name", "no node %s" % p[2])
        if method == "GET" and p == ["v1", "partitions"]:
            return 200, {"partitions": PARTS}
        if method == "GET" and p == ["v1", "shares"]:
            return 200, {"shares": SHARES}
        if method == "POST" and p == ["test", "populate"]:
            for _ in range(int(q.get("n", ["0"])[0])):
                submit({"name": "filler", "user": "root", "time_limit_s": 600, "cpus_per_task": 1}, 0)
            return 200, {}
        if method == "POST" and len(p) == 3 and p[0] == "test":
            j = find(p[2])
            now = int(time.time())
            if p[1] == "run":
                j.update(state="RUNNING", reason="None", start_time=now - 5, nodelist="gpu0001")
            else:
                j.update(state=q.get("state", ["COMPLETED"])[0], end_time=now,
                         exit_code=int(q.get("exit", ["0"])[0]))
                j.setdefault("start_time", now - 5)
                j.setdefault("nodelist", "gpu0001")
            return 200, {}
        return 404, error("NOENT", "path", "no endpoint %s %s" % (method, url.path))

    def handle_one(self, method):
        with LOCK:
            status, obj = self.route(method)
        self.reply(status, obj)

    def do_GET(self):
        self.handle_one("GET")

    def do_POST(self):
        self.handle_one("POST")

    def do_DELETE(self):
        self.handle_one("DELETE")

    def do_PATCH(self):
        self.handle_one("PATCH")


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        sock, _ = super().get_request()
        return sock, ("local", 0)


def main():
    path = sys.argv[1]
    if os.path.exists(path):
        os.unlink(path)
    srv = Server(path, Handler)
    srv.serve_forever()


if __name__ == "__main__":
    main()
