#!/usr/bin/python3
"""echo_server.py - a TCP echo server for the integration tests: a
non-blocking select loop (unlike socat PIPE, which can block on its own
pipe), one connection at a time; it half-closes once the peer has
half-closed and everything was echoed.

usage: echo_server.py PORT
"""
import selectors
import socket
import sys


def serve(port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(16)
    while True:
        conn, _ = ls.accept()
        conn.setblocking(False)
        sel = selectors.DefaultSelector()
        pending = bytearray()
        eof = False
        sel.register(conn, selectors.EVENT_READ)
        while True:
            want = selectors.EVENT_WRITE if pending else 0
            if not eof and len(pending) < (4 << 20):
                want |= selectors.EVENT_READ
            if not want:
                break
            sel.modify(conn, want)
            for _, ev in sel.select(timeout=30):
                if ev & selectors.EVENT_READ:
                    data = conn.recv(1 << 16)
                    if data:
                        pending += data
                    else:
                        eof = True
                if ev & selectors.EVENT_WRITE and pending:
                    n = conn.send(pending)
                    del pending[:n]
            if eof and not pending:
                break
        conn.shutdown(socket.SHUT_WR)
        sel.close()
        conn.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
