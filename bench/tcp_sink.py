#!/usr/bin/env python3
"""tcp_sink.py - the receiving end of bench/loss_transfer.sh: accept one TCP
connection, read it to EOF, discard the data, and print

    bytes N seconds S

where S runs from the moment accept() returns (the handshake is done) to
EOF. Both senders are timed by this same clock, so neither pays for its
process start (lunar's DPDK start-up and XDP load take about 0.2 s, socat's
a few ms). Prints "listening rcvbuf R" once the socket listens (R: the
receive buffer Linux gave it). Exits 1 if nothing connects, or the
connection sends nothing, for --timeout seconds.
"""
import argparse
import socket
import struct
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True, help="TCP port to listen on")
    ap.add_argument("--addr", default="0.0.0.0", help="address to listen on (default any)")
    ap.add_argument("--rcvbuf", type=int, default=0,
                    help="fixed SO_RCVBUF in bytes (turns off the kernel's receive "
                         "autotuning; capped by net.core.rmem_max, then doubled by Linux)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds to wait for the connection, and for each read (default 600)")
    args = ap.parse_args()

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as ls:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if args.rcvbuf:
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
        ls.bind((args.addr, args.port))
        ls.listen(1)
        rcvbuf = ls.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        print(f"listening rcvbuf {rcvbuf}", flush=True)
        ls.settimeout(args.timeout)
        try:
            conn, _ = ls.accept()
        except socket.timeout:
            print(f"tcp_sink: no connection in {args.timeout} s", file=sys.stderr)
            return 1
        t0 = time.monotonic()
        # A kernel-side receive timeout: a Python-level one would add a
        # poll() before every read.
        conn.setblocking(True)
        sec = int(args.timeout)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO,
                        struct.pack("ll", sec, int((args.timeout - sec) * 1e6)))
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        total = 0
        with conn:
            while True:
                try:
                    n = conn.recv_into(view)
                except BlockingIOError:
                    print(f"tcp_sink: nothing for {args.timeout} s after {total} bytes",
                          file=sys.stderr)
                    return 1
                if n == 0:
                    break
                total += n
        t1 = time.monotonic()
    print(f"bytes {total} seconds {t1 - t0:.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
