#!/usr/bin/python3
"""Capture real rtnetlink traffic as seeds for fuzz_netlink (needs root and ip).

    sudo /usr/bin/python3 tests/fuzz/capture_netlink.py

Builds a throw-away network namespace (veth pairs va/vb and vc/vd,
neighbours in several states, routes incl. RTA_MULTIPATH, other tables and
types), then, from inside it, records what the kernel sends a socket subscribed like the
watcher's: the neighbour and route dumps and the notifications that `ip`
commands cause. Replaces the seeds in tests/fuzz/corpus/fuzz_netlink/ (but
not the regress_* reproducers) and deletes the namespace. Commit the result.

Seed format (see fuzz_netlink.c): the watched ifindex (one byte), then
records of a 2-byte big-endian length and one datagram as recv() returned
it; length 0xffff marks lost notifications (ENOBUFS). Dump replies get
port id 0 and the sequence numbers a detached watcher uses (1 neighbours,
2 routes, 3, 4 after a resync).
"""
import os
import select
import socket
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "fuzz_netlink")

RTMGRP_LINK, RTMGRP_NEIGH, RTMGRP_IPV4_IFADDR, RTMGRP_IPV4_ROUTE = 0x1, 0x4, 0x10, 0x40
RTM_GETNEIGH, RTM_GETROUTE, RTM_GETLINK, RTM_GETADDR = 30, 26, 18, 22
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP, NLM_F_DUMP_INTR = 0x1, 0x300, 0x10
LOST = 0xFFFF


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def messages(dgram):
    """(offset, nlmsghdr fields) of each message in a datagram."""
    off = 0
    while off + 16 <= len(dgram):
        ln, typ, flags, seq, pid = struct.unpack_from("=IHHII", dgram, off)
        if ln < 16 or off + ln > len(dgram):
            break
        yield off, (ln, typ, flags, seq, pid)
        off += (ln + 3) & ~3


def restamp(dgram, seq=None, pid=None, set_flags=0, typ=None):
    """Copy of @dgram with every message's seq/pid/flags/type rewritten."""
    b = bytearray(dgram)
    for off, (ln, t, flags, s, p) in messages(dgram):
        struct.pack_into("=IHHII", b, off, ln, t if typ is None else typ, flags | set_flags,
                         s if seq is None else seq, p if pid is None else pid)
    return bytes(b)


def attrs(dgram, off, ln, fixed):
    """(type, payload) of the attributes after a @fixed-byte header."""
    a = off + 16 + ((fixed + 3) & ~3)
    while a + 4 <= off + ln:
        alen, atype = struct.unpack_from("=HH", dgram, a)
        if alen < 4 or a + alen > off + ln:
            break
        yield atype & 0x3FFF, dgram[a + 4:a + alen]
        a += (alen + 3) & ~3


def multipath_only(dgram):
    """The route messages of @dgram that carry RTA_MULTIPATH, as notifications."""
    RTA_MULTIPATH, RTM_NEWROUTE, RTM_DELROUTE = 9, 24, 25
    out = b""
    for off, (ln, typ, _, _, _) in messages(dgram):
        if typ in (RTM_NEWROUTE, RTM_DELROUTE) and any(
                t == RTA_MULTIPATH for t, _ in attrs(dgram, off, ln, 12)):
            out += dgram[off:off + ((ln + 3) & ~3)]
    return restamp(out, seq=0, pid=0)


class Nl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.s.bind((0, RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE))

    def dump(self, typ, fixed, seq):
        """Datagrams of one dump, restamped to port id 0 and @seq."""
        req = struct.pack("=IHHII", 16 + len(fixed), typ, NLM_F_REQUEST | NLM_F_DUMP, 9000 + seq,
                          0) + fixed
        self.s.send(req)
        out = []
        while True:
            d = self.s.recv(65536)
            ours = [m for _, m in messages(d) if m[3] == 9000 + seq]
            if not ours:
                continue  # a notification that raced the dump: not part of it
            out.append(restamp(d, seq=seq, pid=0))
            if any(m[1] in (NLMSG_DONE, NLMSG_ERROR) for m in ours):
                return out

    def events(self, cmds):
        """Datagrams the kernel sends after running @cmds."""
        for c in cmds:
            sh(c)
        out = []
        while select.select([self.s], [], [], 0.3)[0]:
            out.append(self.s.recv(65536))
        return out


def seed(ifindex, *groups):
    b = bytes([ifindex])
    for g in groups:
        for d in g:
            b += struct.pack(">H", LOST) if d is None else struct.pack(">H", len(d)) + d
    return b


def inside():
    sh("ip link set lo up")
    sh("ip link add va type veth peer name vb")
    sh("ip link add vc type veth peer name vd")
    for dev in ("va", "vb", "vc", "vd"):
        sh(f"ip link set {dev} up")
    sh("ip addr add 10.99.0.1/24 dev va")
    sh("ip addr add 10.98.0.1/24 dev vc")
    ifindex = int(open("/sys/class/net/va/ifindex").read())
    assert 0 < ifindex < 256
    for ip, mac, nud in [("10.99.0.2", "02:00:00:00:00:02", "reachable"),
                         ("10.99.0.3", "02:00:00:00:00:03", "permanent"),
                         ("10.99.0.4", "02:00:00:00:00:04", "stale"),
                         ("10.99.0.5", "02:00:00:00:00:05", "delay"),
                         ("10.98.0.2", "02:00:00:00:01:02", "permanent")]:
        dev = "vc" if ip.startswith("10.98") else "va"
        sh(f"ip neigh replace {ip} lladdr {mac} dev {dev} nud {nud}")
    sh("ip neigh replace 10.99.0.6 dev va nud failed || true")
    sh("ip route add default via 10.99.0.254 metric 100")
    sh("ip route add default via 10.98.0.254 metric 200")
    sh("ip route add 10.50.0.0/16 via 10.99.0.2")
    sh("ip route add 10.60.0.0/24 dev va")
    sh("ip route add 10.70.0.0/16 via 10.99.0.3 metric 5")
    sh("ip route add 10.70.0.0/16 via 10.99.0.2 metric 10")
    sh("ip route add 10.9.0.0/16 nexthop via 10.99.0.2 dev va nexthop via 10.99.0.3 dev va")
    sh("ip route add 10.8.0.0/16 nexthop via 10.98.0.2 dev vc weight 2 "
       "nexthop via 10.99.0.4 dev va")
    sh("ip route add 10.7.0.0/16 via 10.99.0.2 table 100")
    sh("ip route add blackhole 10.6.0.0/16")
    sh("ip route add 10.99.0.128/25 via 10.99.0.5 src 10.99.0.1 mtu 1400")

    nl = Nl()
    neigh = nl.dump(RTM_GETNEIGH, struct.pack("=BBHiHBB", socket.AF_INET, 0, 0, 0, 0, 0, 0), 1)
    route = nl.dump(RTM_GETROUTE, struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 0, 0, 0, 0,
                                              0), 2)
    # Notifications: routes and neighbours only (no link/address events, so
    # that the watcher does not start a resync and the numbering stays put).
    ev_route = nl.events([
        "ip route add 10.80.0.0/16 via 10.99.0.2",
        "ip route replace 10.80.0.0/16 via 10.99.0.3",
        "ip route add 10.81.0.0/16 nexthop via 10.99.0.2 dev va nexthop via 10.98.0.2 dev vc",
        "ip route add 10.70.0.0/16 via 10.99.0.4 metric 1",
        "ip route del 10.70.0.0/16 via 10.99.0.3 metric 5",
        "ip route del 10.80.0.0/16",
        "ip route add default via 10.99.0.253 metric 50",
    ])
    ev_neigh = nl.events([
        "ip neigh replace 10.99.0.7 lladdr 02:00:00:00:00:07 dev va nud reachable",
        "ip neigh replace 10.99.0.7 lladdr 02:00:00:00:00:77 dev va nud reachable",
        "ip neigh replace 10.99.0.2 lladdr 02:00:00:00:00:02 dev va nud stale",
        "ip neigh del 10.99.0.4 dev va",
        "ip neigh replace 10.99.0.8 dev va nud incomplete || true",
        "ip neigh del 10.99.0.7 dev va",
    ])
    # Changes whose notifications the seed leaves out ("lost"): the re-dump
    # after the overrun must find them by sweeping.
    nl.events([
        "ip neigh del 10.99.0.3 dev va",
        "ip route del 10.50.0.0/16",
        "ip route del 10.9.0.0/16",
    ])
    redump = (nl.dump(RTM_GETNEIGH, struct.pack("=BBHiHBB", socket.AF_INET, 0, 0, 0, 0, 0, 0),
                      3)
              + nl.dump(RTM_GETROUTE, struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 0, 0, 0,
                                                  0, 0), 4))
    # Link and address events: each makes the watcher re-dump.
    ev_link = nl.events([
        "ip addr add 10.99.1.1/24 dev va",
        "ip addr del 10.99.1.1/24 dev va",
        "ip link set va mtu 1400",
        "ip link set va down",
        "ip link set va up",
    ])
    # A link and an address dump (what nl_query_if reads), as plain events.
    linkd = nl.dump(RTM_GETLINK, struct.pack("=BBHiII", 0, 0, 0, 0, 0, 0), 100)
    addrd = nl.dump(RTM_GETADDR, struct.pack("=BBBBi", socket.AF_INET, 0, 0, 0, 0), 101)

    # A dump the kernel interrupted, and one it refused (NLMSG_ERROR EBUSY).
    intr = [restamp(d, set_flags=NLM_F_DUMP_INTR) for d in neigh]
    err = struct.pack("=IHHIIi", 36, NLMSG_ERROR, 0, 1, 0, -16) + \
        struct.pack("=IHHII", 28, RTM_GETNEIGH, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)

    seeds = {
        "dump": seed(ifindex, neigh, route),
        "dump_events": seed(ifindex, neigh, route, ev_route, ev_neigh),
        "events_during_dump": seed(ifindex, ev_route, ev_neigh, neigh, route),
        "dump_lost_redump": seed(ifindex, neigh, route, ev_route, [None], redump),
        "dump_link_events": seed(ifindex, neigh, route, ev_link, redump),
        "query_dumps": seed(ifindex, linkd, addrd),
        # An interrupted dump is repeated first: neighbours again as 2, routes 3.
        "dump_intr": seed(ifindex, intr, [restamp(d, seq=2) for d in neigh],
                          [restamp(d, seq=3) for d in route]),
        "dump_error": seed(ifindex, [err], route),
        "multipath": seed(ifindex, [multipath_only(d) for d in route + ev_route
                                    if multipath_only(d)]),
        "other_ifindex": seed(ifindex + 1, neigh, route, ev_route),
    }
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        if not old.startswith("regress_"):  # crash reproducers stay
            os.remove(os.path.join(OUT, old))
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--inside":
        inside()
        return
    if os.geteuid() != 0:
        sys.exit("capture_netlink.py needs root (network namespaces)")
    ns = f"lunar-fzcap-{os.getpid()}"
    sh(f"ip netns add {ns}")
    try:
        subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__),
                        "--inside"], check=True)
    finally:
        sh(f"ip netns del {ns}")


if __name__ == "__main__":
    main()
