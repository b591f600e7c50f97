#!/usr/bin/python3
"""paced_source.py - a kernel TCP sender for the integration tests that
spreads a file over a given time, so that a transfer lasts long enough for
something to happen to it meanwhile (tcp_attack.sh's forged segments).
Accepts one connection, sends the file in 64 KiB writes at an even pace,
then closes.

usage: paced_source.py PORT FILE SECONDS
"""
import socket
import sys
import time


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        raise SystemExit(2)
    port, path, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    data = open(path, "rb").read()
    chunk = 64 << 10
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    conn, _ = ls.accept()
    start = time.monotonic()
    for off in range(0, len(data), chunk):
        conn.sendall(data[off:off + chunk])
        due = start + seconds * (off + chunk) / len(data)
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    conn.close()


if __name__ == "__main__":
    main()
