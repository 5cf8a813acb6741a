#!/usr/bin/env python3
"""client.py - a bounded HTTP client loop for the service tests and bench:
GET URL (optionally with a Host header) until COUNT requests are done or
SECONDS have passed, CONCURRENCY loops at once, each keeping its connection
alive (a new one after an error). A request fails on a connection error or
a status other than 200. Prints 'requests N failed M seconds S' and up to
five failures; exits 0 (the caller judges the numbers). The loop also ends
when the file $PX_CLIENT_STOP exists.
usage: client.py URL COUNT SECONDS [CONCURRENCY [HOST]]"""
import os
import http.client
import sys
import threading
import time
from urllib.parse import urlparse

URL, COUNT, SECONDS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
CONC = int(sys.argv[4]) if len(sys.argv) > 4 else 1
HOST = sys.argv[5] if len(sys.argv) > 5 else None
u = urlparse(URL)
path = u.path + ("?" + u.query if u.query else "")
lock = threading.Lock()
done = failed = 0
errors = []
stop_at = time.monotonic() + SECONDS


STOP = os.environ.get("PX_CLIENT_STOP")


def take():
    global done
    with lock:
        if done >= COUNT or time.monotonic() >= stop_at or (STOP and os.path.exists(STOP)):
            return False
        done += 1
        return True


def loop():
    global failed
    conn = None
    while take():
        try:
            if conn is None:
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
            conn.request("GET", path, headers={"Host": HOST} if HOST else {})
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                raise RuntimeError(f"status {r.status}")
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except Exception as e:  # noqa: BLE001 - every failure counts
            with lock:
                failed += 1
                if len(errors) < 5:
                    errors.append(f"{time.strftime('%H:%M:%S')} {e!r}")
            if conn:
                conn.close()
            conn = None


t0 = time.monotonic()
threads = [threading.Thread(target=loop) for _ in range(CONC)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"requests {done} failed {failed} seconds {time.monotonic() - t0:.2f}")
for e in errors:
    print("  " + e)
