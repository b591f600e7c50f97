#!/usr/bin/env python3
"""tcp_sink.py - the receiving end of bench/loss_transfer.sh: accept one TCP
connection, read it to EOF, discard the data, and print

    bytes N seconds S

where S runs from the moment accept() returns (the handshake is done) to
EOF. Both senders are timed by this same clock, so neither pays for its
process start (lunar's DPDK start-up and XDP load take about 0.2 s, socat's
a few ms). Prints "listening" once the socket listens.
"""
import argparse
import socket
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True, help="TCP port to listen on")
    ap.add_argument("--addr", default="0.0.0.0", help="address to listen on (default any)")
    ap.add_argument("--rcvbuf", type=int, default=0,
                    help="fixed SO_RCVBUF in bytes (turns off the kernel's receive "
                         "autotuning; the window advertised is then about half of it)")
    args = ap.parse_args()

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as ls:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if args.rcvbuf:
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
        ls.bind((args.addr, args.port))
        ls.listen(1)
        print("listening", flush=True)
        conn, _ = ls.accept()
        t0 = time.monotonic()
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        total = 0
        with conn:
            while True:
                n = conn.recv_into(view)
                if n == 0:
                    break
                total += n
        t1 = time.monotonic()
    print(f"bytes {total} seconds {t1 - t0:.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
