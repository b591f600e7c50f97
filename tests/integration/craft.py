#!/usr/bin/python3
"""craft.py - send exact, hand-made packets from a namespace for the
integration tests (scapy). Each scenario prints how many packets of each
kind it sent, so the test can compare with lunar's counters.

usage: craft.py IFACE SRC_IP DST_IP DST_MAC SCENARIO [SPORT DPORT COUNT]
scenarios:
  steer    10 TCP SYN to reserved port 61500 (lunar's), 3 UDP to 61500 and
           2 TCP SYN to 9999 (both the kernel's)
  hostile  one malformed TCP/IPv4 packet per drop reason, all to port 61500
  blind    a blind attacker (RFC 5961 1) on the connection SPORT -> DPORT: it
           knows the 4-tuple, not the sequence numbers. COUNT each of RST,
           SYN and data segments (PSH|ACK, 100 bytes) with sequence and
           acknowledgment numbers drawn at random (seeded: every run the same)
"""
import random
import socket
import sys

from scapy.all import IP, TCP, UDP, Ether, Raw, checksum, conf, sendp

conf.verb = 0


def blind(eth, src, dst, sport, dport, count):
    rnd = random.Random(5961)
    ip = IP(src=src, dst=dst)
    for _ in range(count):
        yield "blind-rst", eth / ip / TCP(sport=sport, dport=dport, flags="R", seq=rnd.getrandbits(32))
        yield "blind-syn", eth / ip / TCP(sport=sport, dport=dport, flags="S", seq=rnd.getrandbits(32))
        yield "blind-data", eth / ip / TCP(sport=sport, dport=dport, flags="PA", seq=rnd.getrandbits(32),
                                            ack=rnd.getrandbits(32)) / Raw(b"EVIL" * 25)


def frames(src, dst, dmac, scenario, extra=()):
    eth = Ether(dst=dmac, type=0x0800)
    if scenario == "blind":
        yield from blind(eth, src, dst, *map(int, extra))
        return
    if scenario == "steer":
        for i in range(10):
            yield "tcp-reserved", eth / IP(src=src, dst=dst) / TCP(sport=40000 + i, dport=61500, flags="S")
        for i in range(3):
            yield "udp-reserved", eth / IP(src=src, dst=dst) / UDP(sport=40100 + i, dport=61500) / Raw(b"x" * 8)
        for i in range(2):
            yield "tcp-kernel", eth / IP(src=src, dst=dst) / TCP(sport=40200 + i, dport=9999, flags="S")
        return
    if scenario != "hostile":
        raise SystemExit(f"unknown scenario {scenario}")
    base = IP(src=src, dst=dst)
    # IP_BAD_CHECKSUM
    yield "IP_BAD_CHECKSUM", eth / IP(src=src, dst=dst, chksum=0x1234) / TCP(dport=61500, flags="S")
    # TCP_BAD_CHECKSUM
    yield "TCP_BAD_CHECKSUM", eth / base / TCP(dport=61500, flags="S", chksum=0x1234)
    # IP_FRAGMENT: first fragment (MF set, offset 0) still carries the TCP header
    yield "IP_FRAGMENT", eth / IP(src=src, dst=dst, flags="MF") / TCP(dport=61500, flags="S") / Raw(b"y" * 16)
    # IP_BAD_OPTIONS: a timestamp option whose length byte is 0 (RFC 1122 3.2.1.8)
    tcp = bytes(IP(src=src, dst=dst) / TCP(sport=40400, dport=61500, flags="S"))[20:]
    hdr = bytearray(bytes(IP(src=src, dst=dst, proto=6, ihl=6, len=24 + len(tcp), chksum=0))[:20])
    hdr += b"\x44\x00\x00\x00"
    hdr[10:12] = checksum(bytes(hdr)).to_bytes(2, "big")
    yield "IP_BAD_OPTIONS", eth / Raw(bytes(hdr) + tcp)
    # TCP_BAD_OFFSET: data offset 15 words in a 20-byte segment
    yield "TCP_BAD_OFFSET", eth / base / TCP(dport=61500, flags="S", dataofs=15)
    # TCP_BAD_OPTION: MSS option with length 3, checksum right so only the option is wrong
    seg = bytearray(bytes(TCP(sport=40300, dport=61500, flags="S"))[:20]) + b"\x02\x03\x05\xb4"
    seg[12] = 6 << 4
    seg[16:18] = b"\x00\x00"
    csum = tcp_checksum(src, dst, bytes(seg))
    seg[16:18] = csum.to_bytes(2, "big")
    yield "TCP_BAD_OPTION", eth / IP(src=src, dst=dst, proto=6) / Raw(bytes(seg))


def tcp_checksum(src, dst, seg):
    """RFC 9293 3.1 checksum over the IPv4 pseudo-header and the segment."""
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + bytes([0, 6]) + len(seg).to_bytes(2, "big")
    return checksum(pseudo + seg)


def main():
    if len(sys.argv) not in (6, 9) or (len(sys.argv) == 9) != (sys.argv[5] == "blind"):
        print(__doc__)
        raise SystemExit(2)
    iface, src, dst, dmac, scenario = sys.argv[1:6]
    counts = {}
    batch = []
    for kind, f in frames(src, dst, dmac, scenario, sys.argv[6:]):
        batch.append(f)
        counts[kind] = counts.get(kind, 0) + 1
    sendp(batch, iface=iface)  # one socket for all: as fast as scapy goes
    for kind, n in counts.items():
        print(f"sent {kind} {n}")


if __name__ == "__main__":
    main()
