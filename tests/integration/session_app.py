#!/usr/bin/env python3
"""A web application for test_session.sh: listens on $PORT (loopback, as the
session host expects) and answers every request with what it saw: the path
with its query, the user the server's proxy names, the session's base path,
and the body of a POST. A GET asking to upgrade to "x-echo" (as a WebSocket
asks for "websocket") is answered 101 and then echoes what it gets,
upper-cased, until the client closes."""
import http.server
import os


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, body=b""):
        text = "path=%s user=%s base=%s body=%s\n" % (
            self.path, ",".join(self.headers.get_all("X-Forwarded-User") or []), os.environ.get("PHALANX_SESSION_BASE"),
            body.decode(errors="replace"))
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-App", "session-app")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.headers.get("Upgrade") == "x-echo":
            self.protocol_version = "HTTP/1.1"
            self.send_response(101)
            self.send_header("Upgrade", "x-echo")
            self.send_header("Connection", "Upgrade")
            self.send_header("X-Echo-Key", self.headers.get("X-Echo-Key", ""))
            self.end_headers()
            self.wfile.flush()
            while True:
                data = self.connection.recv(4096)
                if not data:
                    break
                self.connection.sendall(data.upper())
            self.close_connection = True
            return
        self.answer()

    def do_POST(self):
        self.answer(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
