#!/usr/bin/python3
"""Generate the seed corpus of fuzz_tcp_stack in tests/fuzz/corpus/fuzz_tcp_stack/.

Run from anywhere (plain python3, no scapy):
    python3 tests/fuzz/make_tcp_stack_corpus.py
and commit the result. The input format is described at the top of
fuzz_tcp_stack.c: a 10-byte set-up block (configuration, limits, the
peers' SYN options, the random seed), then operations, each a selector
byte (operation + 32 * the flow, socket or listener it is about) and its
arguments. Each seed is one scenario, named for what it reaches (listed
in SEEDS); `FUZZ_TCP_STACK_VERBOSE=1 ./fuzz_tcp_stack <seed>` shows its
segments and the stack's counters at the end. Files named regress_* are
crash reproducers kept by hand; this script leaves them alone and
replaces every other file.
"""
import struct

from fuzz_seeds import write_seeds

FIN, SYN, RST, PSH, ACK, ECE, CWR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x40, 0x80

# set-up byte 0
NO_TS, NO_SACK, NO_WS, NODELAY, NO_DELACK, NO_COOKIES, ZC_FRAMES, NO_RACK = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80)
# buffer sizes (set-up byte 1): indices into rcv_bufs / snd_bufs
RCV_64K, RCV_4K, RCV_16K, RCV_1000, RCV_256K, RCV_3000, RCV_65535, RCV_1M = range(8)
SND_64K, SND_4K, SND_16K, SND_1500, SND_256K, SND_100, SND_200K, SND_1M = range(8)
NEWRENO, CUBIC, DCTCP = range(3)
MTU_1500, MTU_9000, MTU_1280, MTU_600 = range(4)
# the peers' SYN options (set-up byte 6, the SYN operation's options byte)
PEER_TS, PEER_SACK, PEER_WS = 0x01, 0x02, 0x04
MSS_1460, MSS_536, MSS_8960, MSS_64, MSS_NONE, MSS_1200, MSS_65535, MSS_88 = range(8)
ALL_OPTS = PEER_TS | PEER_SACK | PEER_WS | 2 << 6  # window shift 7
# set-up byte 7
KEEPALIVE, SYN_RETRIES_1, REASS_SEGS_4, REASS_BYTES_3000 = 0x01, 0x02, 0x04, 0x08
USER_TIMEOUT_1S, IW_1 = 0x40, 0x80
# time units (index): 1us, 100us, 1ms, 4ms, 50ms, 250ms, 1s, 10s
US1, US100, MS1, MS4, MS50, MS250, S1, S10 = range(8)
# ICMP kinds (index into icmp_kinds): fragmentation needed, net / host / protocol /
# port unreachable, administratively prohibited, ...
FRAG_NEEDED, NET_UNREACH, HOST_UNREACH, PROTO_UNREACH, PORT_UNREACH = 0, 4, 5, 6, 7
ADMIN_PROHIBITED, TIME_EXCEEDED, PARAM_PROBLEM, SOURCE_QUENCH = 8, 11, 12, 13
# the ICMP operation's quote SEQ base
Q_ACKED, Q_LAST_SENT, Q_ISS, Q_FAR = range(4)
PORT_80, PORT_8080, PORT_CLOSED = 0, 1, 2


def setup(opts=0, rcv=RCV_64K, snd=SND_64K, cc=NEWRENO, conns=8, mtu=MTU_1500, ecn=False,
          two_queues=False, half_open=None, time_wait=None, mem=0, syn=ALL_OPTS | MSS_1460 << 3,
          misc=0, seed=1):
    half_open = conns if half_open is None else half_open
    time_wait = conns // 2 if time_wait is None else time_wait
    b2 = (conns - 1) | mtu << 4 | (0x40 if ecn else 0) | (0x80 if two_queues else 0)
    return bytes([opts, rcv | snd << 3 | cc << 6, b2, half_open, time_wait, mem, syn, misc]) + \
        struct.pack(">H", seed)


def op(code, k=0):
    return bytes([code | k << 5])


# ---- the peers ----

def seg(k, flags, dseq=0, dack=0, length=0, seq_base=0, ack_base=0, window=None, ecn=0,
        sacks=None):
    bases = seq_base | ack_base << 2
    if window is not None:
        bases |= 0x80
    if sacks:
        bases |= 0x40
    b = op(0, k) + struct.pack(">BBhh", flags, bases, dseq, dack)
    if window is not None:
        b += struct.pack(">H", window)
    b += struct.pack(">H", length | ecn << 14)
    if sacks:
        b += bytes([len(sacks) - 1])
        for left, ln in sacks:
            b += struct.pack(">hH", left, ln)
    return b


def syn(k, iss, port=PORT_80, new=False, peer_b=False, ecn=False, opts=None, data=None):
    b = port | (0x04 if new else 0) | (0x08 if peer_b else 0) | (0x10 if ecn else 0)
    b |= (0x20 if opts is not None else 0) | (0x40 if data is not None else 0)
    out = op(4, k) + bytes([b]) + struct.pack(">I", iss)
    if opts is not None:
        out += bytes([opts])
    if data is not None:
        out += bytes([data])
    return out


def hs_ack(k, data=None, fin=False, flip_ts=False, dack=0):
    b = (0x01 if data is not None else 0) | (0x02 if fin else 0) | (0x04 if flip_ts else 0)
    b |= (dack & 15) << 4
    return op(5, k) + bytes([b]) + (bytes([data]) if data is not None else b"")


def synack(k, iss, ecn=False, dack=0):
    return op(6, k) + bytes([(0x01 if ecn else 0) | (dack & 15) << 4]) + struct.pack(">I", iss)


def data(k, n, fin=False, from_acked=False, ecn=0):
    b = (0x01 if fin else 0) | (0x02 if from_acked else 0)
    return op(7, k) + bytes([b]) + struct.pack(">H", n | ecn << 14)


def ack_all(k, window_hi=0xff):
    return op(8, k) + bytes([window_hi])


def raw(k, header, relative=False, bad_csum=False, dst=0, src=0, ecn=0):
    b = (0x01 if relative else 0) | (0x02 if bad_csum else 0) | dst << 2 | src << 4 | ecn << 6
    return op(9, k) + bytes([b, len(header)]) + header


def tcp_header(sport, dport, seq, ack, flags, window=65535, payload_len=0):
    return struct.pack(">HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                       5 << 4, flags, window, 0, 0) + bytes(payload_len)


def icmp(k, kind, mtu=0, quote=0, seq_base=Q_ACKED, dseq=0, not_ours=False, udp=False,
         from_peer=False, alone=True):
    """An ICMP error quoting flow k; alone: delivered on its own (it must find the socket)."""
    b = quote | (0x04 if not_ours else 0) | (0x08 if udp else 0) | seq_base << 4
    b |= (0x40 if from_peer else 0) | (0x80 if alone else 0)
    return op(10, k) + bytes([kind, b]) + struct.pack(">Hh", mtu, dseq)


def flood(n, port8080=False, ecn=False):
    return op(11) + bytes([(n - 1) | (0x20 if port8080 else 0) | (0x40 if ecn else 0)])


# ---- time and the application ----

def time(unit, mult, mode=0):
    return op(12) + bytes([unit | mode << 3, mult])


def steps(unit, mult):
    return time(unit, mult, mode=1)


def next_deadline():
    return time(MS1, 1, mode=2)


POLL = op(13)


def connect(k, peer_b=False, port=0):
    return op(14, k) + bytes([(1 if peer_b else 0) | port << 1])


def accept(k):
    return op(15, k)


def send(k, n):
    return op(16, k) + struct.pack(">H", n)


def send_zc(k, n):
    return op(17, k) + struct.pack(">H", n)


def read(k, max_256=0):
    return op(18, k) + bytes([max_256])


def read_zc(k, slices=8):
    return op(19, k) + bytes([slices - 1])


def zc_done(k, count=4):
    return op(20, k) + bytes([count - 1])


def shutdown(k):
    return op(21, k)


def close(k):
    return op(22, k)


def abort(k):
    return op(23, k)


INLINE, READ_CB, REPLY_CB, CLOSE_CB = 0x01, 0x02, 0x04, 0x08


def mode(k, m):
    return op(24, k) + bytes([m])


def listen(k, backlog=0, auto=False):
    return op(25, k) + bytes([backlog | (0x80 if auto else 0)])


def listener_close(k):
    return op(26, k)


def limits(conns, half_open, time_wait, mem):
    return op(27) + bytes([conns - 1, half_open, time_wait, mem])


# ---- scenarios ----

def passive_open(k, iss=1000, port=PORT_80, new=False, peer_b=False, take=True):
    """The peer of flow k connects to our listener; the application accepts into socket k."""
    return syn(k, iss, port=port, new=new, peer_b=peer_b) + POLL + hs_ack(k) + \
        (accept(k) if take else POLL)


def active_open(k, iss=5000, peer_b=False, port=0):
    """Socket k connects to a peer, which answers."""
    return connect(k, peer_b=peer_b, port=port) + synack(k, iss) + POLL


def syn_flood_fills_backlog(n=4, port8080=False):
    return flood(n, port8080) + POLL


SEEDS = {
    # A server: handshake, data both ways, the peer closes first, then we do; TIME-WAIT
    # is the peer's, our socket ends in LAST-ACK and is acknowledged.
    "passive_echo": setup() + listen(0, backlog=4) + passive_open(0) + data(0, 1000) + POLL
    + read(0) + send(0, 3000) + ack_all(0) + data(0, 0, fin=True) + POLL + read(0) + close(0)
    + ack_all(0) + time(S1, 2),
    # A client sends 20 KB in windows the peer opens; we close first: FIN-WAIT-1, -2,
    # the peer's FIN, TIME-WAIT until it ends.
    "active_transfer": setup(cc=CUBIC) + active_open(0) + send(0, 20000) + ack_all(0)
    + time(MS1, 1) + ack_all(0) + time(MS1, 1) + ack_all(0) + close(0) + ack_all(0)
    + data(0, 0, fin=True) + POLL + time(S1, 2),
    # Several connections at once on both listeners and to both peers, bursts
    # interleaving them; aborts, a shutdown, reads in callbacks.
    "many_conns": setup(conns=16) + listen(0) + listen(1, auto=True)
    + syn(0, 100) + syn(1, 200, port=PORT_8080) + syn(2, 300, peer_b=True) + POLL
    + hs_ack(0) + hs_ack(1, data=50) + hs_ack(2) + POLL + accept(0) + accept(2)
    + active_open(3) + active_open(4, peer_b=True, port=7) + mode(1, READ_CB)
    + data(0, 500) + data(1, 700) + data(2, 900) + data(3, 300) + data(4, 100) + POLL
    + send(3, 4000) + send(4, 100) + shutdown(4) + abort(2) + read(0) + read_zc(3) + zc_done(3)
    + ack_all(3) + ack_all(4) + data(4, 0, fin=True) + POLL + close(0) + close(1) + close(3)
    + close(4) + time(S1, 3),
    # Simultaneous open: our SYN crosses the peer's.
    "simultaneous_open": setup() + connect(0) + seg(0, SYN, seq_base=1) + POLL + hs_ack(0)
    + POLL + send(0, 100) + ack_all(0) + close(0),
    # SYN cookies: a flood fills a 1-deep backlog, the real client's SYN gets a
    # cookie, its ACK makes the connection, data flows.
    "cookie_backlog": setup() + listen(0, backlog=1) + syn_flood_fills_backlog(3)
    + syn(0, 4000) + POLL + hs_ack(0, data=100) + POLL + accept(0) + read(0) + send(0, 2000)
    + ack_all(0) + close(0) + ack_all(0) + data(0, 0, fin=True) + POLL,
    # Cookies for the stack-wide half-open limit (2), not a backlog.
    "cookie_half_open_limit": setup(half_open=2) + listen(0) + flood(3) + POLL
    + syn(0, 7000, peer_b=True) + POLL + hs_ack(0) + POLL + accept(0) + data(0, 300) + POLL
    + read_zc(0) + send_zc(0, 1000) + close(0) + zc_done(0),
    # A valid cookie meets a full accept queue (dropped, counted), then is taken once
    # the application accepted; a wrong cookie gets a RST.
    "cookie_no_room_and_bad": setup() + listen(0, backlog=1) + passive_open(1, iss=10, take=False)
    + flood(2) + POLL + syn(2, 3000) + POLL + hs_ack(2) + POLL + accept(1) + data(2, 10)
    + POLL + accept(2) + syn(3, 99) + POLL + hs_ack(3, dack=3) + POLL,
    # SYN cookies off: the backlog drops SYNs; the half-open limit too.
    "no_cookies_drops": setup(opts=NO_COOKIES, half_open=3) + listen(0, backlog=2) + flood(5)
    + POLL + listen(1) + flood(4, port8080=True) + POLL + time(S1, 5),
    # Connection table of 2: a third SYN is dropped (no RST) and taken when retransmitted
    # after one ends; connect gets -ENOBUFS meanwhile.
    "conn_limit": setup(conns=2, time_wait=0) + listen(0) + passive_open(0) + passive_open(1)
    + syn(2, 333) + POLL + connect(3) + abort(0) + syn(2, 333) + POLL + hs_ack(2) + accept(2)
    + close(1) + close(2),
    # TIME-WAIT: at most 1 of a table of 3; a new connection recycles the oldest, one
    # more entering TIME-WAIT pushes out another.
    "time_wait_recycle": setup(conns=3, time_wait=1) + active_open(0) + close(0) + ack_all(0)
    + data(0, 0, fin=True) + POLL + active_open(1, port=1) + close(1) + ack_all(1)
    + data(1, 0, fin=True) + POLL + active_open(2, port=2) + active_open(3, port=3)
    + active_open(4, port=4) + time(S1, 2),
    # mem_max 64 KiB: sends cut short and woken when ACKs free memory; a receiver that
    # does not read runs into the cap (pressure, refused payload).
    "mem_limit": setup(snd=SND_256K, rcv=RCV_256K, mem=1) + active_open(0) + send(0, 60000)
    + send(0, 60000) + ack_all(0) + time(MS1, 1) + send(0, 30000) + listen(0)
    + passive_open(1, port=PORT_80) + b"".join(data(1, 1400) for _ in range(40)) + POLL
    + read(1) + ack_all(0) + close(0) + close(1),
    # Fragmentation needed (RFC 1191) for what is in flight: resent smaller; then an
    # absurd MTU, one not lower, one below the floor.
    "icmp_frag_needed": setup() + listen(0) + passive_open(0) + send(0, 10000)
    + icmp(0, FRAG_NEEDED, mtu=1000) + POLL + icmp(0, FRAG_NEEDED, mtu=40)
    + icmp(0, FRAG_NEEDED, mtu=1400) + icmp(0, FRAG_NEEDED, mtu=300, alone=False)
    + ack_all(0, 0x80) + POLL + ack_all(0)
    + close(0) + ack_all(0),
    # Port unreachable for our SYN: the connect fails (hard error in SYN-SENT).
    "icmp_connect_refused": setup() + connect(0) + icmp(0, PORT_UNREACH, seq_base=Q_ISS)
    + POLL + close(0) + connect(1, peer_b=True) + icmp(1, HOST_UNREACH, seq_base=Q_ISS)
    + POLL + time(S1, 5),
    # Errors that change nothing: soft ones, out of the window, not our datagram, UDP,
    # cut short, a source quench.
    "icmp_soft_and_ignored": setup() + active_open(0) + send(0, 3000)
    + icmp(0, HOST_UNREACH, seq_base=Q_ACKED) + icmp(0, TIME_EXCEEDED, from_peer=True)
    + icmp(0, PORT_UNREACH, seq_base=Q_FAR) + icmp(0, NET_UNREACH, not_ours=True)
    + icmp(0, PROTO_UNREACH, udp=True) + icmp(0, PARAM_PROBLEM, quote=2)
    + icmp(0, SOURCE_QUENCH) + POLL + time(S1, 6),
    # RFC 6069: two probes and three timeouts of data no one ACKs, then unreachables
    # quoting SND.UNA undo the backoff (the last expires the timer at once); the ACK
    # ends it.
    "icmp_rto_revert": setup() + active_open(0) + send(0, 3000) + next_deadline()
    + next_deadline() + next_deadline() + next_deadline() + next_deadline()
    + icmp(0, HOST_UNREACH, seq_base=Q_ACKED)
    + icmp(0, NET_UNREACH, seq_base=Q_ACKED) + icmp(0, HOST_UNREACH, seq_base=Q_ACKED)
    + POLL + ack_all(0) + POLL + close(0),
    # Segments for no connection: a SYN to a closed port and data after an abort get
    # RSTs; a RST gets nothing.
    "rst_no_connection": setup() + syn(0, 50, port=PORT_CLOSED) + listen(0) + passive_open(1)
    + abort(1) + data(1, 100) + seg(1, RST | ACK) + POLL,
    # Raw segments: one of flow 0's numbered from what each side saw, one with a bad
    # checksum, SYNs to the broadcast addresses, one from the router's address.
    "raw_segments": setup() + listen(0) + passive_open(0)
    + raw(0, tcp_header(0, 0, 0, 0, ACK | PSH, payload_len=40), relative=True)
    + raw(0, tcp_header(0, 0, 0, 0, ACK, payload_len=10), relative=True, bad_csum=True)
    + raw(0, tcp_header(40000, 80, 1, 0, SYN), dst=2) + raw(0, tcp_header(40001, 80, 1, 0, SYN), dst=3)
    + raw(0, tcp_header(40002, 80, 1, 0, SYN), src=2) + POLL + read(0) + close(0),
    # Out-of-order data and SACK: a hole, data beyond it, the hole filled; held reads.
    "ooo_sack": setup(misc=REASS_SEGS_4) + listen(0) + passive_open(0) + seg(0, ACK, 1000, 0, 500)
    + seg(0, ACK, 2000, 0, 500) + POLL + data(0, 1000, from_acked=True) + POLL + read_zc(0, 4)
    + send(0, 5000) + seg(0, ACK, 0, -3000, 0, seq_base=1, sacks=[(-2000, 1000)]) + POLL
    + zc_done(0, 2) + close(0) + zc_done(0, 4),
    # A zero window: probes; the peer goes silent and the connection ends at the user
    # timeout (after the application closed it).
    "zero_window_persist": setup(misc=USER_TIMEOUT_1S) + listen(0) + passive_open(0)
    + send(0, 3000) + ack_all(0, window_hi=0) + send(0, 2000) + steps(MS50, 4) + ack_all(0, 0)
    + close(0) + time(S1, 3),
    # Orphaned FIN-WAIT-2: the peer acknowledges our FIN and never sends its own.
    "orphan_fin_wait2": setup() + active_open(0) + close(0) + ack_all(0) + time(S1, 11),
    # Keep-alive probes to a silent peer end the connection.
    "keepalive_timeout": setup(misc=KEEPALIVE) + active_open(0) + time(S1, 1) + steps(MS250, 2)
    + next_deadline() + time(S1, 2),
    # Inline callbacks that read and reply: a burst of three segments, each answered in place.
    "inline_reply": setup(opts=NODELAY) + listen(0) + passive_open(0) + mode(0, INLINE | REPLY_CB)
    + data(0, 100) + data(0, 200) + data(0, 300) + POLL + ack_all(0) + mode(0, CLOSE_CB)
    + data(0, 0, fin=True) + POLL + ack_all(0),
    # Zero-copy framing (a header pool, chained frames) at MTU 9000 with jumbo MSS.
    "zc_frames_jumbo": setup(opts=ZC_FRAMES, mtu=MTU_9000, snd=SND_256K,
                             syn=ALL_OPTS | MSS_8960 << 3) + active_open(0) + send_zc(0, 50000)
    + ack_all(0) + send(0, 20000) + ack_all(0) + time(MS1, 5) + ack_all(0) + close(0),
    # Two workers' plan: segments of the other worker's connections are dropped.
    "foreign_queue": setup(two_queues=True) + listen(0) + syn(0, 1) + syn(1, 2) + syn(2, 3)
    + POLL + hs_ack(0) + hs_ack(1) + hs_ack(2) + POLL + active_open(3) + accept(0) + accept(1),
    # A listener closed in the middle of a handshake: the half-open connection goes with
    # it, the peer's ACK is reset.
    "listener_close_mid_handshake": setup() + listen(0) + syn(0, 42) + POLL + listener_close(0)
    + hs_ack(0) + POLL + listen(0) + passive_open(1) + listener_close(0) + close(1),
    # DCTCP with ECN: an ECN-setup SYN answered, CE-marked data, ECE echoed.
    "dctcp_ecn": setup(cc=DCTCP, ecn=True) + connect(0) + synack(0, 9, ecn=True) + POLL
    + send(0, 8000) + data(0, 1000, ecn=3) + data(0, 1000, ecn=3) + POLL
    + seg(0, ACK | ECE, seq_base=1) + POLL + ack_all(0) + close(0),
    # Packet-pool pressure: tiny segments the application does not read, each holding a
    # packet buffer, until the pool runs low, then critical (the out-of-order ones beyond
    # a hole are pruned, payload refused); the pool is sampled as time passes.
    "pool_pressure": setup(rcv=RCV_1M) + listen(0) + passive_open(0)
    + seg(0, ACK, 30000, 0, 500) + seg(0, ACK, 31000, 0, 500)
    + b"".join(b"".join(data(0, 10) for _ in range(32)) + time(US100, 1) for _ in range(18))
    + time(MS1, 2) + read(0) + data(0, 30000 - 18 * 32 * 10, from_acked=True) + POLL
    + time(MS1, 2) + read(0) + close(0),
    # Limits lowered below what is held act on what comes next.
    "limits_lowered": setup(conns=6) + listen(0) + passive_open(0) + passive_open(1)
    + passive_open(2) + limits(2, 1, 0, 1) + syn(3, 5) + POLL + close(0) + ack_all(0)
    + data(0, 0, fin=True) + POLL + limits(6, 6, 3, 0) + syn(3, 5) + POLL + hs_ack(3)
    + accept(3) + close(1) + close(2) + close(3),
    # Small MTU and buffers, no options, delayed ACKs, timeouts with retransmissions.
    "small_mtu_retransmit": setup(opts=NO_TS | NO_SACK | NO_WS, mtu=MTU_600, rcv=RCV_4K,
                                  snd=SND_16K, syn=MSS_536 << 3, misc=IW_1)
    + active_open(0) + send(0, 16000) + steps(MS50, 3) + ack_all(0) + next_deadline()
    + ack_all(0) + data(0, 3000) + POLL + read(0, 4) + time(S1, 1) + close(0),
}


def main():
    write_seeds("fuzz_tcp_stack", SEEDS)


if __name__ == "__main__":
    main()
