#!/usr/bin/python3
"""Generate the seed corpus of fuzz_tcp_conn in tests/fuzz/corpus/fuzz_tcp_conn/.

Run from anywhere (plain python3, no scapy):
    python3 tests/fuzz/make_tcp_conn_corpus.py
and commit the result. The input format is described at the top of
fuzz_tcp_conn.c: a 16-byte set-up block (with the start mode: active,
passive, SYN cookie or simultaneous open, or LISTEN / SYN-SENT /
SYN-RECEIVED left to the operations), then operations, each a selector
byte and its arguments. Every start mode has seeds, and between them they
walk through all eleven states of RFC 9293 (the fuzz suite checks it:
fuzz/fuzz_tcp_conn_states). Files named regress_* are crash reproducers
kept by hand (the fuzzer's findings); this script leaves them alone and
replaces every other file.
"""
import struct

from fuzz_seeds import write_seeds

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

# set-up byte 0
PEER_TS, PEER_SACK, PEER_WS = 0x01, 0x02, 0x04
NO_TS, NO_SACK, NO_WS, NODELAY, NO_DELACK = 0x08, 0x10, 0x20, 0x40, 0x80
# set-up byte 15
KEEPALIVE, SYNACK_RTT = 0x04, 0x80
# start modes: set-up byte 14 bits 6-7, plus 4 with byte 1 bit 7
(ACTIVE, SYN_SENT, PASSIVE, COOKIE, SIMULTANEOUS, LISTEN, PASSIVE_ACKED,
 COOKIE_ACKED) = range(8)

# segment bases byte: SEQ base (bit0-1), ACK base (bit2-3)
SEQ_RCV_NXT, SEQ_RCV_ADV, SEQ_IRS = 0, 1, 2
ACK_SND_UNA, ACK_SND_MAX, ACK_SND_NXT = 0 << 2, 1 << 2, 2 << 2
TS_FLIP, TS_DELTA, SACKS, WINDOW = 0x10, 0x20, 0x40, 0x80


def setup(opts=PEER_TS | PEER_SACK | PEER_WS, wscale=7, mss=1460, iss=1000, irs=5000,
          window=65535, rcv_buf=0, snd_buf=0, k=0, mode=ACTIVE):
    return struct.pack(">BBHIIHBB", opts, wscale | (mode >> 2) << 7, mss, iss, irs, window,
                       rcv_buf | snd_buf << 3 | (mode & 3) << 6, k)


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

# From ESTABLISHED to CLOSED, three ways (RFC 9293 3.6):
# we close first: FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT, CLOSED;
ACTIVE_CLOSE = send(100) + CLOSE + seg(ACK) + seg(ACK | FIN) + event_loop(6, 2)
# the peer closes first: CLOSE-WAIT, LAST-ACK, CLOSED;
PASSIVE_CLOSE = seg(ACK | FIN, length=10) + recv() + CLOSE + seg(ACK)
# both at once: FIN-WAIT-1, CLOSING, TIME-WAIT, CLOSED.
SIMULTANEOUS_CLOSE = CLOSE + seg(ACK | FIN, ack_base=ACK_SND_UNA) + seg(ACK) + event_loop(6, 2)

# TCP options of a raw SYN: MSS 1460, SACK-permitted, timestamps, NOP, window scale 7.
SYN_OPTS = bytes([2, 4, 0x05, 0xb4, 4, 2, 8, 10]) + struct.pack(">II", 770, 0) + bytes([1, 3, 3, 7])

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

    # ---- the other start modes: the handshake states get the operations too ----
    # SYN-SENT: the peer's SYN-ACK (IRS 1234) completes it; the peer closes first.
    "syn_sent_synack": setup(mode=SYN_SENT) + seg(SYN | ACK, dseq=1234)
    + seg(ACK | PSH, length=700) + recv() + PASSIVE_CLOSE,
    # Data written in SYN-SENT goes once the SYN-ACK came; we close first.
    "syn_sent_data_first": setup(mode=SYN_SENT, k=SYNACK_RTT) + send(3000) + advance(3, 1)
    + seg(SYN | ACK, dseq=-77) + seg(ACK) + ACTIVE_CLOSE,
    # The SYN-ACK only after a retransmitted SYN (Karn: no RTT sample), no options.
    "syn_sent_synack_late": setup(opts=NO_TS | NO_SACK | NO_WS, mode=SYN_SENT) + next_deadline()
    + seg(SYN | ACK, dseq=9) + SIMULTANEOUS_CLOSE,
    # An ACK of something else gets a RST; a RST without ACK is ignored; one that
    # acknowledges the SYN refuses the connection.
    "syn_sent_refused": setup(mode=SYN_SENT) + seg(ACK, ack_base=ACK_SND_UNA) + seg(RST)
    + seg(RST | ACK),
    # No answer at all: the SYN is retransmitted until the connection times out.
    "syn_sent_timeout": setup(mode=SYN_SENT) + send(10) + event_loop(6, 10),
    # CLOSE in SYN-SENT deletes the connection; a later segment gets a RST.
    "syn_sent_close": setup(mode=SYN_SENT) + send(100) + CLOSE + seg(SYN | ACK),
    # Simultaneous open: the peer's SYN-ACK answers ours (RFC 9293 figure 8); both close.
    "simultaneous": setup(mode=SIMULTANEOUS) + seg(SYN | ACK, seq_base=SEQ_IRS)
    + seg(ACK, length=300) + recv() + SIMULTANEOUS_CLOSE,
    # ... or a plain ACK ends SYN-RECEIVED; we close first.
    "simultaneous_ack": setup(mode=SIMULTANEOUS, k=SYNACK_RTT) + send(2000) + seg(ACK)
    + seg(ACK) + ACTIVE_CLOSE,
    # CLOSE in SYN-RECEIVED waits for the handshake; the ACK brings the peer's FIN too.
    "simultaneous_close": setup(mode=SIMULTANEOUS) + CLOSE + seg(ACK | FIN) + seg(ACK)
    + event_loop(6, 2),
    # Passive open: the ACK ends the handshake with data; the peer closes first.
    "passive": setup(mode=PASSIVE) + seg(ACK | PSH, length=500) + recv() + send(2000)
    + seg(ACK) + PASSIVE_CLOSE,
    # The peer's SYN again (the SYN-ACK was lost): answered; the SYN-ACK times out once.
    "passive_syn_again": setup(mode=PASSIVE) + seg(SYN, seq_base=SEQ_IRS) + next_deadline()
    + seg(ACK) + ACTIVE_CLOSE,
    # An ACK of anything but our SYN-ACK gets a RST; then the right one.
    "passive_bad_ack": setup(mode=PASSIVE) + seg(ACK, ack_base=ACK_SND_UNA) + seg(ACK, dack=5)
    + seg(ACK) + SIMULTANEOUS_CLOSE,
    # RSTs in SYN-RECEIVED: in the window but not at RCV.NXT, a challenge ACK; at it, closed.
    "passive_rst": setup(mode=PASSIVE) + seg(RST, dseq=5) + seg(RST),
    # Nobody answers the SYN-ACK: retransmitted until the connection times out.
    "passive_timeout": setup(mode=PASSIVE, opts=PEER_WS, wscale=14) + event_loop(6, 10),
    # CLOSE in SYN-RECEIVED: the FIN follows the ACK; we close first.
    "passive_close_early": setup(mode=PASSIVE) + CLOSE + seg(ACK) + seg(ACK) + seg(ACK | FIN)
    + event_loop(6, 2),
    # The ACK brings the peer's FIN: ESTABLISHED then CLOSE-WAIT in one step.
    "passive_fin_in_ack": setup(mode=PASSIVE) + seg(ACK | FIN, length=20) + recv() + CLOSE
    + seg(ACK),
    # ABORT in SYN-RECEIVED sends a RST.
    "passive_abort": setup(mode=PASSIVE) + ABORT + seg(ACK),
    # A SYN cookie's connection: the ACK with data makes it; both close.
    "cookie": setup(mode=COOKIE) + seg(ACK, length=100) + recv() + SIMULTANEOUS_CLOSE,
    # The cookie's ACK in the next time slot; the peer offered no options and MSS 1000
    # (the cookie says 536); the peer closes first.
    "cookie_late_no_opts": setup(mode=COOKIE, opts=0, mss=1000, k=SYNACK_RTT) + seg(ACK)
    + send(3000) + seg(ACK) + PASSIVE_CLOSE,
    # The cookie connection's SYN-ACK times out once before the ACK comes.
    "cookie_timeout": setup(mode=COOKIE, rcv_buf=2) + next_deadline() + seg(ACK)
    + ACTIVE_CLOSE,
    # LISTEN: a RST is ignored, an ACK gets a RST, a SYN starts the handshake.
    "listen": setup(mode=LISTEN) + seg(RST) + seg(ACK) + seg(SYN, dseq=4321) + seg(ACK)
    + seg(ACK, length=100) + recv() + ACTIVE_CLOSE,
    # A raw SYN with every option; then the handshake's ACK, raw too.
    "listen_raw_syn": setup(mode=LISTEN) + raw(tcp_header(7777, 0, SYN, 29200, opts=SYN_OPTS))
    + raw(tcp_header(0, 1, ACK, 512, opts=bytes([1, 1, 8, 10]) + struct.pack(">II", 777, 0)))
    + SIMULTANEOUS_CLOSE,
    # CLOSE in LISTEN; a SYN then meets a closed connection.
    "listen_close": setup(mode=LISTEN) + CLOSE + seg(SYN),
    # A passive open already acknowledged: server-side data both ways; the peer closes first.
    "passive_acked": setup(mode=PASSIVE_ACKED, k=SYNACK_RTT) + seg(ACK, length=1000) + recv()
    + send(5000) + seg(ACK) + PASSIVE_CLOSE,
    # A cookie connection already acknowledged, small buffers; we close first.
    "cookie_acked": setup(mode=COOKIE_ACKED, opts=PEER_SACK | PEER_WS, rcv_buf=4, snd_buf=4)
    + send(3000) + seg(ACK) + ACTIVE_CLOSE,
}


def main():
    write_seeds("fuzz_tcp_conn", SEEDS)


if __name__ == "__main__":
    main()
