#!/usr/bin/python3
"""Generate the seed corpora in tests/fuzz/corpus/<target>/ with scapy.

Run from anywhere (needs python3-scapy; use the system /usr/bin/python3):
    /usr/bin/python3 tests/fuzz/make_corpus.py
and commit the result. Each file is one fuzz input in the format of
tests/fuzz/fuzz_common.h: a flags byte (0x01 verify checksums, 0x02 fix
checksums up first, 0x04 odd address), for fuzz_udp/fuzz_tcp then the IPv4
source and destination (8 bytes), then the packet. fuzz_options seeds are
argument lists in the format of fuzz_options.c (flags byte, then option code
and NUL-terminated argument pairs). Existing files in the corpus directories
are replaced. (fuzz_netlink's seeds are captured from the kernel by
capture_netlink.py instead.)
"""
import os
import shutil
import socket
import struct

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPOption_EOL, IPOption_NOP,
                       IPOption_Router_Alert, IPOption_RR, Padding, raw)

HERE = os.path.dirname(os.path.abspath(__file__))
MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"
A, B = "10.0.0.1", "10.0.0.2"

VERIFY, FIXUP, UNALIGNED = 0x01, 0x02, 0x04


def eth(payload, dst=MAC_B, src=MAC_A):
    return Ether(dst=dst, src=src) / payload


ARPS = {
    "arp_request": ARP(op=1, hwsrc=MAC_A, psrc=A, pdst=B) / Padding(load=b"\0" * 18),
    "arp_reply": ARP(op=2, hwsrc=MAC_B, psrc=B, hwdst=MAC_A, pdst=A),
    "arp_probe": ARP(op=1, hwsrc=MAC_A, psrc="0.0.0.0", pdst=B),
}

L4 = {
    "icmp_echo": ICMP(type=8, id=0x1234, seq=1) / b"lunar-ping-0123456789",
    "icmp_reply": ICMP(type=0, id=0x1234, seq=2) / (b"x" * 56),
    "icmp_unreach": ICMP(type=3, code=3) / raw(IP(src=B, dst=A) / UDP(sport=1, dport=2)),
    # Errors quoting TCP (RFC 792: the IPv4 header and 8 bytes; RFC 1191 next-hop MTU).
    "icmp_frag_needed": ICMP(type=3, code=4, nexthopmtu=1280)
    / raw(IP(src=A, dst=B, flags="DF") / TCP(sport=61440, dport=80, seq=0x01020304)
          / (b"d" * 1400))[:28],
    "icmp_port_unreach_tcp": ICMP(type=3, code=3)
    / raw(IP(src=A, dst=B) / TCP(sport=61440, dport=80, seq=0x01020304)),
    "icmp_time_exceeded_opts": ICMP(type=11, code=0)
    / raw(IP(src=A, dst=B, options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(),
                                    IPOption_EOL()]) / TCP(sport=61440, dport=80))[:32],
    "icmp_param_problem": ICMP(type=12, code=0, ptr=20)
    / raw(IP(src=A, dst=B) / TCP(sport=61440, dport=80))[:32],
    "icmp_quote_short": ICMP(type=3, code=1) / raw(IP(src=A, dst=B) / TCP(sport=61440))[:24],
    "icmp_source_quench": ICMP(type=4, code=0)
    / raw(IP(src=A, dst=B) / TCP(sport=61440, dport=80))[:28],
    "udp": UDP(sport=40000, dport=4791) / b"hello, lunar",
    "udp_nocsum": UDP(sport=53, dport=5353, chksum=0) / b"q",
    "udp_empty": UDP(sport=1, dport=2),
    "tcp_syn": TCP(sport=43210, dport=80, seq=1000, flags="S", window=64240,
                   options=[("MSS", 1460), ("SAckOK", b""), ("Timestamp", (12345, 0)),
                            ("NOP", None), ("WScale", 7)]),
    "tcp_synack": TCP(sport=80, dport=43210, seq=5000, ack=1001, flags="SA", window=65160,
                      options=[("MSS", 8960), ("NOP", None), ("NOP", None), ("SAckOK", b""),
                               ("NOP", None), ("WScale", 9)]),
    "tcp_sack": TCP(sport=80, dport=43210, seq=0x11223344, ack=0x55667788, flags="PA",
                    window=502, options=[("NOP", None), ("NOP", None),
                                         ("Timestamp", (100, 200)), ("NOP", None),
                                         ("NOP", None),
                                         ("SAck", (3000, 4000, 5000, 6000, 7000, 8000))])
    / b"data",
    "tcp_data": TCP(sport=5001, dport=5002, seq=1, ack=1, flags="A", window=1024) / (b"z" * 100),
    "tcp_fin_unknown_opt": TCP(sport=7, dport=8, flags="FA",
                               options=[(30, b"\x01\x02"), ("NOP", None), ("NOP", None)]),
}


def ip(l4, **kw):
    fields = dict(src=A, dst=B, ttl=64, id=7)
    fields.update(kw)
    return IP(**fields) / l4


def ips():
    out = {name: ip(pkt) for name, pkt in L4.items()}
    out["ip_options"] = IP(src="10.1.2.3", dst="10.4.5.6", ttl=1,
                           options=[IPOption_RR(routers=["0.0.0.0"]),
                                    IPOption_Router_Alert()]) / UDP(sport=1, dport=2) / b"o"
    out["ip_padded"] = ip(UDP(sport=9, dport=9) / b"ab") / Padding(load=b"\0" * 16)
    out["ip_df"] = ip(L4["udp"], flags="DF", tos=0xb8)
    return out


def addrs(src=A, dst=B):
    return socket.inet_aton(src) + socket.inet_aton(dst)


# fuzz_options: code % 16 -> what the argument is fed to (see fuzz_options.c).
OPT = {"port": 0, "ip": 1, "gw": 2, "mtu": 3, "fault": 4, "pcap": 5, "reserved": 6, "core": 7,
       "verbose": 8, "tool": 9, "port_spec": 10, "fault_spec": 11, "count": 12, "duration": 13,
       "ipv4": 14, "check": 15,
       # code 9 with bit 6: bits 7, 5 and 4 pick one of eight (fuzz_options.c's by_bits).
       "idle_yield": 0x49, "xdp_syncookies": 0x59, "keepalive": 0x69, "sock_buf": 0x79,
       "tcp_limits": 0xC9, "pool": 0xD9, "probes": 0xE9, "hystart": 0xF9}

OPTIONS = {
    "af_xdp": [("port", "af_xdp:eth0"), ("reserved", "61440-65535"), ("core", "1")],
    "memif_server": [("port", "memif:/run/lunar/memif.sock:server"), ("ip", "192.168.77.2/24"),
                     ("gw", "192.168.77.1"), ("mtu", "9000"), ("pcap", "/tmp/lunar.pcap"),
                     ("verbose", "")],
    "memif_client": [("port", "memif:/tmp/a:b/memif.sock:client"), ("ip", "10.0.0.1"),
                     ("check", "")],
    "tap_fault": [("port", "tap:lunar0"), ("ip", "10.1.0.2/16"),
                  ("fault", "rx:drop=0.05,dup=1%,delay=2ms"),
                  ("fault", "tx:reorder=0.5,corrupt=0.001,delay=500us"), ("fault", "seed=0x1234"),
                  ("fault", "drop=0,dup=100%,delay=10000ms")],
    "tool_options": [("tool", "c"), ("count", "10"), ("duration", "1.5"), ("ipv4", "10.0.0.2"),
                     ("port_spec", "tap:t0"), ("fault_spec", "drop=5%,seed=7")],
    "bad_port": [("port", "af_xdp:this-name-is-too-long"), ("port", "memif:/x:sideways"),
                 ("port", "pcap:foo"), ("port", "tap:"), ("port", "af_xdp:a/b"),
                 ("port_spec", "memif::server"), ("port_spec", "nocolon")],
    "bad_fault": [("fault", "drop=1.5"), ("fault", "dup=nan"), ("fault", "delay=11s"),
                  ("fault", "delay=99999999999999999999us"), ("fault", "rx:"),
                  ("fault", "jitter=1"),
                  ("fault_spec", "drop"), ("fault_spec", "seed=x"), ("fault_spec", "x" * 300)],
    "bad_numbers": [("mtu", "575"), ("mtu", "9001"), ("reserved", "0-10"), ("reserved", "10-9"),
                    ("reserved", "1-65536"), ("core", "1024"), ("ip", "10.0.0.1/0"),
                    ("ip", "0.0.0.0/8"), ("ip", "10.0.0.256/24"), ("gw", "0.0.0.0"),
                    ("count", "0"), ("duration", "-1"), ("duration", "inf"), ("pcap", "p" * 300)],
    "long_args": [("reserved", "0000000000000000000000000001-65535"),
                  ("ip", "10.0.0.1/" + "0" * 60 + "24"), ("port", "memif:/" + "d" * 120)],
    "tcp_options": [("keepalive", "10,2,3"), ("keepalive", "off"), ("keepalive", "2,1"),
                    ("keepalive", "0.001,86400,1000"), ("tcp_limits", "conns=100,mem=1M"),
                    ("tcp_limits", "half-open=x"), ("pool", "4096"), ("xdp_syncookies", "off"),
                    ("xdp_syncookies", "maybe"), ("xdp_syncookies", "on"), ("sock_buf", "4M"),
                    ("sock_buf", "4095"), ("sock_buf", "1G"), ("sock_buf", "2G")],
    "probes_hystart_pool": [("probes", "rfc"), ("probes", "3"), ("probes", "09"),
                            ("hystart", "20,200"), ("hystart", "on"), ("hystart", "off"),
                            ("pool", "4096")],
    "idle_yield": [("idle_yield", "1"), ("idle_yield", "0"), ("idle_yield", "-1"),
                   ("idle_yield", "1000001")],
    "check_fails": [("check", ""), ("port", "tap:t0"), ("check", ""), ("port", "af_xdp:eth1"),
                    ("mtu", "9000"), ("check", "")],
}


def options_seed(flags, pairs):
    return bytes([flags]) + b"".join(bytes([OPT[k]]) + v.encode() + b"\0" for k, v in pairs)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def knb_seeds():
    """fuzz_knb_flow: a role byte (bit 0 client, bit 1 meter on; a client then
    gives kind, msg size high and low byte, iodepth), then operations (op % 5:
    0 handshake bytes in: length, bytes; 1 handshake out: how many; 2 payload
    out; 3 payload in; 4 time). The peer's messages are knb's wire format."""
    magic = struct.pack(">I", 0x4B4E4231)
    hello = magic + struct.pack(">HBBIIHH", 1, 0, 0, 4096, 4, 0, 0) + bytes(12)
    ack = magic + struct.pack(">HHHHI", 1, 0, 1, 0, 0)
    bad_version = magic + struct.pack(">HHHHI", 2, 1, 1, 0, 0)
    ops = bytes([2, 200, 4, 50, 3, 40, 2, 200, 3, 255, 4, 9, 3, 31, 2, 90])
    return {
        "server_rpc": bytes([2, 0, len(hello)]) + hello + bytes([1, 16]) + ops,
        "server_hello_in_pieces": bytes([0, 0, 7]) + hello[:7] + bytes([0, 25]) + hello[7:]
        + bytes([1, 16]) + ops,
        "client_rpc": bytes([3, 0, 0x10, 0x00, 3, 1, 32, 0, len(ack)]) + ack + ops,
        "client_stream": bytes([1, 1, 0x01, 0x00, 0, 1, 32, 0, len(ack)]) + ack + ops,
        "client_refused": bytes([1, 0, 0x01, 0x00, 0, 0, len(bad_version)]) + bad_version,
    }


HTTP_SEEDS = {
    "get": b"GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n",
    "get_query_close": b"GET /a/b?x=1 HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n",
    "put_expect": b"PUT /up.bin HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                  b"Expect: 100-continue\r\n\r\nhello",
    "head_http10": b"HEAD / HTTP/1.0\n\n",
    "leading_slashes": b"GET //etc/passwd HTTP/1.1\r\nHost: a\r\n\r\n",
    "dotdot": b"GET /a/../../etc HTTP/1.1\r\nHost: a\r\n\r\n",
    "put_tmp_name": b"PUT /d/.lunar-put.1.2 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
    "two_lengths": b"PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "chunked": b"PUT /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
    "http2": b"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
}


def main():
    for name, data in knb_seeds().items():
        write("fuzz_knb_flow", name, data)
    for name, data in HTTP_SEEDS.items():
        write("fuzz_http", name, data)
    for target in ["fuzz_eth", "fuzz_arp", "fuzz_ipv4", "fuzz_icmp", "fuzz_udp", "fuzz_tcp",
                   "fuzz_frame", "fuzz_options"]:
        shutil.rmtree(os.path.join(HERE, "corpus", target), ignore_errors=True)

    frames = {name: eth(p) for name, p in ips().items()}
    frames.update({name: eth(p, dst="ff:ff:ff:ff:ff:ff") for name, p in ARPS.items()})
    frames["vlan"] = Ether(dst=MAC_B, src=MAC_A) / Dot1Q(vlan=5) / ip(L4["udp"])

    for name, f in frames.items():
        write("fuzz_eth", name, bytes([0]) + raw(f))
        write("fuzz_frame", name, bytes([VERIFY]) + raw(f))
    write("fuzz_frame", "tcp_syn_fixup_unaligned", bytes([VERIFY | FIXUP | UNALIGNED])
          + raw(frames["tcp_syn"]))

    for name, a in ARPS.items():
        write("fuzz_arp", name, bytes([0]) + raw(a))

    for name, p in ips().items():
        write("fuzz_ipv4", name, bytes([VERIFY]) + raw(p))
    write("fuzz_ipv4", "udp_fixup", bytes([VERIFY | FIXUP | UNALIGNED]) + raw(ips()["udp"]))

    for name, p in L4.items():
        # Build inside IP so scapy computes the pseudo-header checksums.
        seg = raw(ip(p))[20:]
        if name.startswith("icmp"):
            write("fuzz_icmp", name, bytes([0]) + seg)
        elif name.startswith("udp"):
            write("fuzz_udp", name, bytes([VERIFY]) + addrs() + seg)
        else:
            write("fuzz_tcp", name, bytes([VERIFY]) + addrs() + seg)
    write("fuzz_icmp", "echo_fixup", bytes([FIXUP | UNALIGNED]) + raw(L4["icmp_echo"]))

    # Error buffer size: flags & 3 picks 512 (the tools'), 64, 8 or 2 bytes.
    for name, pairs in OPTIONS.items():
        write("fuzz_options", name, options_seed(0, pairs))
    write("fuzz_options", "bad_port_err8", options_seed(2, OPTIONS["bad_port"]))
    write("fuzz_options", "bad_numbers_err2", options_seed(3, OPTIONS["bad_numbers"]))


if __name__ == "__main__":
    main()
