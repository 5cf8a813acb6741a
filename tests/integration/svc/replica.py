#!/usr/bin/env python3
"""replica.py - a small HTTP replica for the service and proxy tests and the
bench, listening on 127.0.0.1:$PORT (threads, keep-alive):
  GET /who      -> "$VERSION $PX_REPLICA" (just "$VERSION" without PX_REPLICA)
  GET /healthz  -> 200, or 503 while the file ./unhealthy-$PX_REPLICA exists
                   or always with SICK=1 in the environment (a bad version)
  GET /slow     -> 200 after 0.3 s (load for the autoscaler)
Each response goes out in one write: a replica killed with -9 has then sent
a whole response or none (which HAProxy retries on another server), never
headers without their body, which no proxy could hide."""
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLICA = os.environ.get("PX_REPLICA", "")
WHO = (os.environ.get("VERSION", "") + (f" {REPLICA}" if REPLICA else "") + "\n").encode()
SICK = f"unhealthy-{REPLICA}"
ALWAYS_SICK = os.environ.get("SICK") == "1"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # buffered, flushed once per request: a response leaves in one send, so
    # a kill -9 either precedes it (the proxy retries) or follows it
    wbufsize = -1

    def log_message(self, *args):
        pass

    def do_GET(self):
        code, body = 200, WHO
        if self.path == "/healthz" and (ALWAYS_SICK or os.path.exists(SICK)):
            code, body = 503, b"sick\n"
        elif self.path == "/slow":
            time.sleep(0.3)
        reason = "OK" if code == 200 else "Service Unavailable"
        head = f"HTTP/1.1 {code} {reason}\r\nContent-Length: {len(body)}\r\n\r\n"
        self.wfile.write(head.encode() + body)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
