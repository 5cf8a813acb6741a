#!/usr/bin/env python3
"""Keystroke-to-echo latency through a pseudo-terminal (bench/bench_pty.sh).

Usage: pty_echo.py [--raw] N COMMAND [ARGS...]. Runs COMMAND on a local pty
(as a person's terminal would) whose far end must echo what is typed (a
`cat` on a terminal in canonical mode: the terminal's own echo). Types one
key at a time and times each key's echo. --raw: the local pty does not echo
from the start (srun's raw mode, set before it runs), so every echo seen
came from the far end. Prints "p50 p99 n" in milliseconds; exits 1
when a key is not echoed within 10 s (the work did not happen).
"""
import os, pty, select, sys, time, tty

def read_until(fd, want, deadline):
    got = b""
    while want not in got:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return False
        chunk = os.read(fd, 4096)
        if not chunk:
            return False
        got += chunk
    return True

def main():
    args = sys.argv[1:]
    raw = args[0] == "--raw"
    if raw:
        args = args[1:]
    n = int(args[0])
    pid, fd = pty.fork()
    if pid == 0:
        if raw:
            tty.setraw(0)
        os.execvp(args[1], args[1:])
    # ready: a first key comes back (the remote terminal exists and echoes)
    start = time.monotonic()
    while True:
        os.write(fd, b"r")
        if read_until(fd, b"r", time.monotonic() + 1.0):
            break
        if time.monotonic() - start > 60:
            print("no echo within 60 s", file=sys.stderr)
            sys.exit(1)
    times = []
    keys = b"abcdefghijklmnopqrstuvwxyz"
    for i in range(n):
        k = keys[i % len(keys):i % len(keys) + 1]
        t0 = time.monotonic()
        os.write(fd, k)
        if not read_until(fd, k, t0 + 10):
            print("key %d not echoed within 10 s" % i, file=sys.stderr)
            sys.exit(1)
        times.append((time.monotonic() - t0) * 1000)
        time.sleep(0.005)  # typing, not a paste
    os.write(fd, b"\r\x04")  # end the line, then EOF: cat ends
    read_until(fd, b"\n", time.monotonic() + 5)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    times.sort()
    print("%.3f %.3f %d" % (times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], len(times)))

main()
