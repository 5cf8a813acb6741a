#!/usr/bin/env python3
"""replica.py - a small HTTP replica for the service tests and bench,
listening on 127.0.0.1:$PORT (threads, keep-alive):
  GET /who      -> "$VERSION $PX_REPLICA"
  GET /healthz  -> 200, or 503 while the file ./unhealthy-$PX_REPLICA exists
                   or always with SICK=1 in the environment (a bad version)
  GET /slow     -> 200 after 0.3 s (load for the autoscaler)"""
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WHO = f"{os.environ.get('VERSION', '')} {os.environ.get('PX_REPLICA', '')}\n".encode()
SICK = f"unhealthy-{os.environ.get('PX_REPLICA', '')}"
ALWAYS_SICK = os.environ.get("SICK") == "1"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        code, body = 200, WHO
        if self.path == "/healthz" and (ALWAYS_SICK or os.path.exists(SICK)):
            code, body = 503, b"sick\n"
        elif self.path == "/slow":
            time.sleep(0.3)
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
