#!/usr/bin/python3
"""Generate the seed corpus of fuzz_tcp_conn in tests/fuzz/corpus/fuzz_tcp_conn/.

Run from anywhere (plain python3, no scapy):
    python3 tests/fuzz/make_tcp_conn_corpus.py
and commit the result. The input format is described at the top of
fuzz_tcp_conn.c: a 16-byte set-up block, then operations, each a selector
byte and its arguments. Files named regress_* are crash reproducers kept
by hand (the fuzzer's findings); this script leaves them alone and
replaces every other file.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "fuzz_tcp_conn")

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

# set-up byte 0
PEER_TS, PEER_SACK, PEER_WS = 0x01, 0x02, 0x04
NO_TS, NO_SACK, NO_WS, NODELAY, NO_DELACK = 0x08, 0x10, 0x20, 0x40, 0x80
# set-up byte 15
KEEPALIVE, SYNACK_RTT = 0x04, 0x80

# segment bases byte: SEQ base (bit0-1), ACK base (bit2-3)
SEQ_RCV_NXT, SEQ_RCV_ADV, SEQ_IRS = 0, 1, 2
ACK_SND_UNA, ACK_SND_MAX, ACK_SND_NXT = 0 << 2, 1 << 2, 2 << 2
TS_FLIP, TS_DELTA, SACKS, WINDOW = 0x10, 0x20, 0x40, 0x80


def setup(opts=PEER_TS | PEER_SACK | PEER_WS, wscale=7, mss=1460, iss=1000, irs=5000,
          window=65535, rcv_buf=0, snd_buf=0, k=0):
    return struct.pack(">BBHIIHBB", opts, wscale, mss, iss, irs, window,
                       rcv_buf | snd_buf << 3, k)


def seg(flags, dseq=0, dack=0, length=0, seq_base=SEQ_RCV_NXT, ack_base=ACK_SND_MAX,
        window=None, ts_delta=None, sacks=None, sel=0):
    bases = seq_base | ack_base
    if window is not None:
        bases |= WINDOW
    if ts_delta is not None:
        bases |= TS_DELTA
    if sacks:
        bases |= SACKS
    b = struct.pack(">BBBhh", sel, flags, bases, dseq, dack)
    if window is not None:
        b += struct.pack(">H", window)
    b += struct.pack(">H", length)
    if ts_delta is not None:
        b += struct.pack(">b", ts_delta)
    if sacks:
        b += bytes([len(sacks) - 1])
        for left, ln in sacks:
            b += struct.pack(">hH", left, ln)
    return b


def raw(header_and_payload, relative=True):
    return bytes([5 if relative else 4]) + struct.pack(">H", len(header_and_payload)) + \
        header_and_payload


def tcp_header(seq, ack, flags, window, payload=b"", sport=80, dport=61440, opts=b""):
    doff = (20 + len(opts)) // 4
    return struct.pack(">HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                       doff << 4, flags, window, 0, 0) + opts + payload


# time units (index): 1us, 50us, 500us, 4ms, 50ms, 250ms, 1s, 5s
def advance(unit, mult):
    return bytes([6, unit, mult])


def next_deadline():
    return bytes([6, 1 << 3, 0])


def event_loop(unit, mult):
    return bytes([6, unit | 2 << 3, mult])


def send(n):
    return bytes([8]) + struct.pack(">H", n)


def recv(max_slices=16):
    return bytes([10, max_slices - 1])


CLOSE, OUTPUT, ABORT = bytes([12]), bytes([13]), bytes([15])

SEEDS = {
    # Two in-order segments (fast path), read, answer with data, acknowledged.
    "in_order": setup() + seg(ACK | PSH, length=1000, ack_base=ACK_SND_UNA)
    + seg(ACK | PSH, length=1000, ack_base=ACK_SND_UNA) + recv() + send(3000)
    + seg(ACK, ack_base=ACK_SND_MAX) + event_loop(4, 20),
    # A hole, a second out-of-order segment, then the fill (SACK blocks, reassembly).
    "ooo_hole_fill": setup() + seg(ACK, dseq=1000, length=1000)
    + seg(ACK, dseq=2500, length=500) + seg(ACK, dseq=0, length=1000)
    + seg(ACK, dseq=0, length=500) + recv() + recv(),
    # Same without timestamps and window scaling, 4 SACK blocks possible.
    "ooo_no_ts": setup(opts=PEER_SACK, wscale=0) + seg(ACK, dseq=100, length=100)
    + seg(ACK, dseq=300, length=100) + seg(ACK, dseq=500, length=100)
    + seg(ACK, dseq=700, length=100) + seg(ACK, dseq=900, length=100)
    + seg(ACK, dseq=0, length=1000) + recv(),
    # The peer closes; we close; our FIN is acknowledged: LAST-ACK -> CLOSED.
    "fin": setup() + seg(ACK | FIN, length=10) + recv() + CLOSE + seg(ACK)
    + advance(6, 3),
    # We close first, the peer acknowledges and sends its FIN: TIME-WAIT, then CLOSED.
    "fin_time_wait": setup() + send(100) + CLOSE + seg(ACK) + seg(ACK | FIN)
    + event_loop(6, 2),
    # Simultaneous close: CLOSING.
    "fin_closing": setup() + CLOSE + seg(ACK | FIN, ack_base=ACK_SND_UNA) + seg(ACK)
    + event_loop(6, 2),
    # RST at RCV.NXT resets; one off by one only gets a challenge ACK.
    "rst": setup() + send(100) + seg(RST, dseq=1) + seg(RST | ACK),
    # Three duplicate ACKs: fast retransmit, then a partial and a full ACK.
    "dupacks": setup(k=0, opts=PEER_TS | PEER_SACK | PEER_WS | NODELAY) + send(20000)
    + seg(ACK, ack_base=ACK_SND_UNA) + seg(ACK, ack_base=ACK_SND_UNA)
    + seg(ACK, ack_base=ACK_SND_UNA) + seg(ACK, ack_base=ACK_SND_UNA)
    + seg(ACK, ack_base=ACK_SND_UNA, dack=1448) + seg(ACK, ack_base=ACK_SND_MAX)
    + send(5000) + seg(ACK, ack_base=ACK_SND_MAX),
    # Zero window: the persist timer probes, then the window opens.
    "zero_window": setup() + seg(ACK, window=0) + send(5000) + next_deadline()
    + next_deadline() + seg(ACK, ack_base=ACK_SND_UNA, window=0)
    + seg(ACK, ack_base=ACK_SND_UNA, window=512) + seg(ACK, ack_base=ACK_SND_MAX),
    # Our receive window fills (4 KiB buffer), then the application reads.
    "rcv_window_full": setup(rcv_buf=2) + seg(ACK, length=1448) + seg(ACK, length=1448)
    + seg(ACK, length=1448) + seg(ACK, length=1448) + recv(1) + recv(),
    # A SYN in ESTABLISHED: challenge ACK (RFC 5961 4.2).
    "syn_in_established": setup() + seg(SYN, dseq=-1) + seg(SYN | ACK, dseq=0),
    # Retransmission timeouts until the user timeout gives up.
    "rto": setup() + send(3000) + next_deadline() + next_deadline() + advance(7, 2),
    # Keep-alive probes go unanswered.
    "keepalive": setup(k=KEEPALIVE) + advance(6, 3) + next_deadline() + next_deadline()
    + next_deadline() + next_deadline(),
    # PAWS: an old timestamp is refused.
    "paws": setup() + seg(ACK, length=100, ts_delta=-100) + seg(ACK, length=100),
    # SACK blocks from the peer, relative to SND.UNA.
    "peer_sack": setup() + send(10000) + seg(ACK, ack_base=ACK_SND_UNA,
                                             sacks=[(1448, 1448), (4344, 1448)]),
    # Raw segments (tcp_parse), SEQ/ACK relative to RCV.NXT / SND.UNA.
    "raw": setup() + raw(tcp_header(0, 0, ACK | PSH, 512, b"x" * 100))
    + raw(tcp_header(100, 0, ACK | FIN, 512, b"y" * 10,
                     opts=bytes([1, 1, 8, 10]) + struct.pack(">II", 900, 0))),
    # Sequence numbers that wrap around 2^32.
    "wrap": setup(iss=0xfffffc00, irs=0xfffffe00) + seg(ACK, length=1000) + send(2000)
    + seg(ACK) + recv() + CLOSE + seg(ACK | FIN) + advance(6, 2),
    # The application aborts.
    "abort": setup() + send(100) + ABORT + seg(ACK),
    # A tiny send buffer, Nagle on, delayed ACKs, no options at all.
    "small_bufs": setup(opts=NO_TS | NO_SACK | NO_WS, wscale=0, mss=536, rcv_buf=7, snd_buf=7)
    + send(50) + send(100) + seg(ACK, length=500) + OUTPUT + advance(2, 2) + recv(),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if not name.startswith("regress_"):
            os.unlink(os.path.join(OUT, name))
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
