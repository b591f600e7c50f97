#!/usr/bin/python3
"""sweep.py - rerun the LUNA paper's figures 9-12 on this machine with knb,
for lunar over memif, lunar over af_xdp on veth and the Linux kernel over
veth, in the same run, with the raw memif ping-pong (knb --stack raw: no
stack, the same frames) as the floor; keep the median of several runs of
each point; write DIR/results.json and DIR/raw/*.json, then DIR/report.md
and PNG plots (bench/report.py).

  sudo bench/sweep.py                   every figure, 3 runs per point (the full report)
  sudo bench/sweep.py --demo            4 KiB RPC, iodepth 1 and 16, about 2-5 minutes (slow rounds are run again)
  sudo bench/sweep.py --demo --mtu 9000 the same with jumbo frames on every link
  bench/sweep.py --dry-run              print every command, run nothing

Figures (pattern rpc; client on core 0, server on core 1):
  9   throughput (Gbit/s, RPC/s) vs message size 64 B .. 64 KiB, iodepth 1
  10  throughput vs iodepth 1 .. 32, 4 KiB
  11  latency CDF, 4 KiB, iodepth 1 (the run with the median p50)
  12  throughput vs threads 1 .. cpus/2 (client and server), 4 KiB, iodepth 16

The raw memif ping-pong is measured where message sizes are swept (Fig 9)
and in --demo; it is what lunar memif's round trip is compared with.

A point needed by several figures (4 KiB at iodepth 1 is in 9, 10 and 11)
is measured once. Runs of the stacks are interleaved (point, run, stack) so
slow drift on a shared machine hits every stack alike.

Slow host phases: on a shared VM, memif (and the kernel, less) can run 2-5
times slower for minutes at a time. Where the raw memif floor is measured
at a point, each round there (one run of every stack) is judged by it
twice: a 1 s raw memif probe opens the round and the round's raw memif run
closes it, and the round counts as the slower of the two. A round below
the point's best round divided by --slow-phase (1.5) is discarded, every
stack's run in it, and another round is run instead, up to --runs more;
the best round is always kept. The medians come from the other rounds;
the discarded ones stay in results.json ("discarded") and are named in the
notes and on stdout, and the table says how many runs its medians have
left. The judge is relative: if every round at a point ran slow, none
looks slower than the best, and none is discarded. --slow-phase 0 keeps
every round.

Run as root: lunar needs hugepages (scripts/hugepages.sh) and the
topologies (scripts/topo.sh memif|veth up, which this script runs; it takes
down at the end only the topologies it found down, unless --keep-topology).
"""
import argparse
import datetime
import json
import os
import queue
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOPO = os.path.join(ROOT, "scripts", "topo.sh")

FIG9_SIZES = [64, 256, 1024, 4096, 16384, 65536]
FIG10_IODEPTHS = [1, 2, 4, 8, 16, 32]
FIG_MSG = 4096
FIG12_IODEPTH = 16
ALL_FIGURES = ["9", "10", "11", "12"]
ALL_STACKS = ["lunar-memif", "lunar-memif-trust", "lunar-afxdp", "kernel", "raw-memif"]
# The full sweep's default; --demo shows every stack (the trusted-link variant too).
FULL_STACKS = ["lunar-memif", "lunar-afxdp", "kernel", "raw-memif"]
RAW_FIGURES = ["9"]  # the raw floor: the figure that sweeps message sizes
READY_PREFIX = "knb server: ready"
READY_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0
MAX_CONSECUTIVE_FAILURES = 3  # a stack failing this many runs in a row is skipped from then on
DEFAULT_MTU = 1500
# The af_xdp series runs at the default MTU only: it is not passed --mtu.
# (lunar's af_xdp port takes up to 3000, copy mode without XDP multi-buffer,
# which still splits a 4 KiB RPC; docs/FEATURES.md "jumbo frames".)
AFXDP_MAX_MTU = DEFAULT_MTU

# Per stack: what topology it needs, which namespaces, and its knb options.
MEMIF_SOCK = "/run/lunar/knb.sock"


def memif_stack(kind, label, extra=()):
    """A stack whose two knb processes share the memif socket MEMIF_SOCK."""
    extra = list(extra)
    return {
        "kind": kind,
        "topology": "memif",
        "server_ns": None,
        "client_ns": None,
        "server_opts": ["--stack", kind, "--port", f"memif:{MEMIF_SOCK}:server", "--ip", "192.168.77.2/24"] + extra,
        "client_opts": ["--stack", kind, "--port", f"memif:{MEMIF_SOCK}:client", "--ip", "192.168.77.1/24"] + extra,
        "addr": "192.168.77.2:7000",
        "label": label,
    }


STACKS = {
    "lunar-memif": memif_stack("lunar", "lunar memif"),
    # Both ends lunar on this host: no checksums, as the kernel over veth
    # (--trust-link, port/port_spec.h).
    "lunar-memif-trust": memif_stack("lunar", "lunar memif, trusted", ["--trust-link"]),
    "lunar-afxdp": {
        "kind": "lunar",
        "topology": "veth",
        "server_ns": "lunar-b",
        "client_ns": "lunar-a",
        "server_opts": ["--stack", "lunar", "--port", "af_xdp:veth-b"],
        "client_opts": ["--stack", "lunar", "--port", "af_xdp:veth-a"],
        "addr": "10.77.0.2:7000",
        "label": "lunar af_xdp",
    },
    "kernel": {
        "kind": "kernel",
        "topology": "veth",
        "server_ns": "lunar-b",
        "client_ns": "lunar-a",
        "server_opts": ["--stack", "kernel"],
        "client_opts": ["--stack", "kernel"],
        "addr": "10.77.0.2:7000",
        "label": "kernel veth",  # + " (mode)", set in plan()
    },
    # No stack: the frames of each RPC ping-ponged over memif (the floor).
    "raw-memif": memif_stack("raw", "raw memif"),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def fmt_duration(s):
    s = int(round(max(0, s)))
    return f"{s // 60}m{s % 60:02d}s"


class Interrupted(Exception):
    pass


def on_sigterm(signum, frame):
    raise Interrupted(f"signal {signum}")


# ---------------------------------------------------------------- planning


def parse_list(text, allowed, what):
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise SystemExit(f"sweep.py: bad {what} {','.join(bad) or repr(text)}; choose from {','.join(allowed)}")
    return [x for x in allowed if x in items]  # canonical order, no duplicates


def stack_series(args):
    """The series to measure: stack name -> its description (a copy of
    STACKS plus the kernel mode), in display order."""
    out = {}
    for name in args.stacks:
        d = dict(STACKS[name])
        if args.mtu != DEFAULT_MTU and d["topology"] == "memif":
            d["server_opts"] = d["server_opts"] + ["--mtu", str(args.mtu)]
            d["client_opts"] = d["client_opts"] + ["--mtu", str(args.mtu)]
        d["kernel_mode"] = None
        if name == "kernel":
            d["kernel_mode"] = args.kernel_mode
            d["label"] = f"kernel veth ({args.kernel_mode})"
        out[name] = d
    if args.with_blocking and "kernel" in args.stacks and args.kernel_mode != "blocking":
        d = dict(STACKS["kernel"])
        d["kernel_mode"] = "blocking"
        d["label"] = "kernel veth (blocking)"
        out["kernel-blocking"] = d
    return out


def figures_of(msg, iodepth, threads):
    """Which figures a measured point belongs to."""
    figs = []
    if threads == 1 and iodepth == 1 and msg in FIG9_SIZES:
        figs.append("9")
    if threads == 1 and msg == FIG_MSG and iodepth in FIG10_IODEPTHS:
        figs.append("10")
    if threads == 1 and msg == FIG_MSG and iodepth == 1:
        figs.append("11")
    if msg == FIG_MSG and iodepth == FIG12_IODEPTH:
        figs.append("12")
    return figs


def plan(args, series, cpus):
    """Return (points, configs, notes). A point is (msg, iodepth, threads);
    a config is one point on one stack (all its runs)."""
    notes = {f: [] for f in ALL_FIGURES}
    notes["general"] = []
    points = []

    def add(p):
        if p not in points:
            points.append(p)

    if args.demo:
        add((FIG_MSG, 1, 1))
        add((FIG_MSG, FIG12_IODEPTH, 1))
    else:
        if "9" in args.figures:
            for m in FIG9_SIZES:
                add((m, 1, 1))
        if "10" in args.figures:
            for d in FIG10_IODEPTHS:
                add((FIG_MSG, d, 1))
        if "11" in args.figures:
            add((FIG_MSG, 1, 1))
        if "12" in args.figures:
            max_threads = max(1, cpus // 2)
            for t in range(1, max_threads + 1):
                add((FIG_MSG, FIG12_IODEPTH, t))
            if max_threads == 1:
                notes["12"].append(
                    f"This machine has {cpus} CPU(s): client and server get cpus/2 = 1 thread each at most, "
                    "so Fig 12 has only the 1-thread point."
                )
            lunar = [s for s in series if series[s]["kind"] == "lunar"]
            if max_threads > 1 and lunar:
                notes["12"].append(
                    f"lunar runs one thread per process for now: {', '.join(lunar)} measured at 1 thread only "
                    f"(2..{max_threads} threads skipped)."
                )
    if "raw-memif" in series and not args.demo:
        if "9" in args.figures:
            notes["general"].append(
                "raw memif (knb --stack raw: no stack, the same frames over memif) is the floor lunar memif is "
                "compared with; it is measured in Fig 9 (message sizes, iodepth 1) only."
            )
        else:
            notes["general"].append("raw memif is measured in Fig 9 only, which is not among --figures: not measured.")
    configs = []
    for (m, d, t) in points:
        for s in series:
            if t > 1 and series[s]["kind"] == "lunar":
                continue
            figs = figures_of(m, d, t)
            if not args.demo:
                figs = [f for f in figs if f in args.figures]
                if series[s]["kind"] == "raw":
                    figs = [f for f in figs if f in RAW_FIGURES]
                    if not figs:
                        continue
            configs.append(
                {
                    "id": f"{s}_m{m}_d{d}_t{t}",
                    "stack": s,
                    "pattern": "rpc",
                    "msg_size": m,
                    "iodepth": d,
                    "threads": t,
                    "figures": figs,
                    "runs": [],
                    "median": None,
                }
            )
    return points, configs, notes


def knb_prefix(knb):
    """How to start knb: directly, or through this Python for a .py file
    that is not executable."""
    if knb.endswith(".py") and not os.access(knb, os.X_OK):
        return [sys.executable, knb]
    return [knb]


def commands(args, st, cfg, raw_dir, run):
    """(server argv, client argv, client json path, server json path) of one run."""
    t = cfg["threads"]
    tag = f"{cfg['id']}_r{run}"
    cjson = os.path.join(raw_dir, tag + ".json")
    sjson = os.path.join(raw_dir, tag + ".server.json")
    kmode = ["--kernel-mode", st["kernel_mode"]] if st["kernel_mode"] else []
    # Client threads on cores 0..t-1, server threads on cores t..2t-1
    # (core 0 and core 1 for one thread each).
    server = (
        knb_prefix(args.knb)
        + ["server"]
        + st["server_opts"]
        + ["--listen", st["addr"], "--threads", str(t)]
        + kmode
        + ["--core", str(t), "--json", sjson]
    )
    client = (
        knb_prefix(args.knb)
        + ["client"]
        + st["client_opts"]
        + ["--connect", st["addr"], "--threads", str(t), "--server-threads", str(t), "--pattern", cfg["pattern"]]
        + ["--msg-size", str(cfg["msg_size"]), "--iodepth", str(cfg["iodepth"])]
        + ["--duration", f"{args.duration:g}", "--warmup", f"{args.warmup:g}"]
        + kmode
        + ["--core", "0", "--json", cjson]
    )
    if not args.no_topology:
        if st["server_ns"]:
            server = ["ip", "netns", "exec", st["server_ns"]] + server
        if st["client_ns"]:
            client = ["ip", "netns", "exec", st["client_ns"]] + client
    return server, client, cjson, sjson


# ---------------------------------------------------------------- running


def stop_process(p, name):
    """SIGINT, wait up to STOP_TIMEOUT_S, then SIGKILL. Returns the exit code."""
    if p.poll() is None:
        try:
            p.send_signal(signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log(f"sweep.py: {name} (pid {p.pid}) still running {STOP_TIMEOUT_S:g} s after SIGINT: SIGKILL")
            p.kill()
            p.wait()
    return p.returncode


def tail(path, n=3):
    try:
        with open(path, errors="replace") as f:
            lines = [x.rstrip() for x in f if x.strip() and not x.startswith("$ ")]
        return " | ".join(lines[-n:])
    except OSError:
        return ""


def read_client_json(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != 1 or doc.get("role") != "client":
        raise ValueError(f"{path}: not a schema-1 client result")
    lat = doc.get("latency_us") or {}
    m = {
        "gbps": float(doc["gbps"]),
        "rpc_per_s": float(doc["rpc_per_s"]),
        "responses": int(doc.get("responses", 0)),
        "p50_us": lat.get("p50"),
        "p90_us": lat.get("p90"),
        "p99_us": lat.get("p99"),
        "p999_us": lat.get("p999"),
        "mean_us": lat.get("mean"),
        "min_us": lat.get("min"),
        "max_us": lat.get("max"),
        "client_cpu_pct": None,
    }
    th = doc.get("threads") or []
    if th:
        m["client_cpu_pct"] = sum(float(x.get("cpu_pct", 0)) for x in th) / len(th)
    if m["responses"] <= 0:
        raise ValueError(f"{path}: no responses")
    return doc, m


def run_once(args, st, cfg, raw_dir, run):
    """One server + client run. Returns a run record (ok or not). The
    server and the client are always stopped before it returns."""
    server_cmd, client_cmd, cjson, sjson = commands(args, st, cfg, raw_dir, run)
    tag = os.path.basename(cjson)[: -len(".json")]
    slog = os.path.join(raw_dir, tag + ".server.log")
    clog = os.path.join(raw_dir, tag + ".client.log")
    rec = {"run": run, "ok": False, "json": os.path.relpath(cjson, args.out), "error": None}
    server = client = reader = None
    ready = threading.Event()
    slog_f = open(slog, "w")
    clog_f = None
    try:
        slog_f.write("$ " + shlex.join(server_cmd) + "\n")
        slog_f.flush()
        server = subprocess.Popen(
            server_cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slog_f,
            text=True,
            errors="replace",
            start_new_session=True,  # the terminal's Ctrl-C reaches only us; we stop it
        )

        def pump():
            for line in server.stdout:
                slog_f.write(line)
                slog_f.flush()
                if line.startswith(READY_PREFIX):
                    ready.set()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.is_set() and time.monotonic() < deadline and server.poll() is None:
            ready.wait(0.05)
        if not ready.is_set():
            reader.join(0.5)  # a server that printed ready and exited at once
        if not ready.is_set():
            if server.poll() is not None:
                rec["error"] = f"server exited {server.returncode} before ready: {tail(slog)}"
            else:
                rec["error"] = f"server not ready after {READY_TIMEOUT_S:g} s: {tail(slog)}"
            return rec
        clog_f = open(clog, "w")
        clog_f.write("$ " + shlex.join(client_cmd) + "\n")
        clog_f.flush()
        client = subprocess.Popen(client_cmd, stdin=subprocess.DEVNULL, stdout=clog_f, stderr=clog_f, start_new_session=True)
        limit = args.duration + args.warmup + 30
        try:
            rc = client.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            rec["error"] = f"client still running after {limit:g} s: stopped"
            return rec
        if rc != 0:
            clog_f.flush()
            rec["error"] = f"client exited {rc}: {tail(clog)}"
            return rec
        if server.poll() is not None:
            rec["error"] = f"server exited {server.returncode} during the run: {tail(slog)}"
            return rec
        try:
            doc, m = read_client_json(cjson)
        except (OSError, ValueError, KeyError, TypeError) as e:
            rec["error"] = f"bad client JSON: {e}"
            return rec
        rec.update(m)
        rec["ok"] = True
        rec["knb_version"] = doc.get("knb_version")
        return rec
    finally:
        if client is not None:
            stop_process(client, "client")
        if server is not None:
            src = stop_process(server, "server")
            if src not in (0, None):
                rec["server_exit"] = src  # noted; a finished client's numbers still stand
            if reader is not None:
                reader.join(2)
            try:
                server.stdout.close()
            except OSError:
                pass
        if clog_f is not None:
            clog_f.close()
        slog_f.close()


METRICS = ["gbps", "rpc_per_s", "p50_us", "p90_us", "p99_us", "p999_us", "mean_us", "min_us", "max_us", "client_cpu_pct"]


PROBE_DURATION_S, PROBE_WARMUP_S = 1.0, 0.3  # the raw memif probe that opens a judged round


def slow_rounds(witness, factor):
    """The rounds of @witness (the raw memif configuration at a point) run
    in a slow host phase: run number -> (its slowest raw memif RPC/s, the
    best at the point). A round is judged by raw memif twice, by the short
    probe that opens it and by its own raw memif run, which closes it, and
    counts as the slower of the two; it is slow when that is below the
    best round's divided by @factor, so the best round is always kept.
    Raw memif runs that failed judge nothing."""
    rates = {}
    for rec in witness.get("probes", []) + witness["runs"]:
        if rec.get("ok") and rec.get("rpc_per_s"):
            rates.setdefault(rec["round"], []).append(rec["rpc_per_s"])
    if not factor or not rates:
        return {}
    best = max(min(v) for v in rates.values())
    return {r: (min(v), best) for r, v in rates.items() if min(v) * factor < best}


def finish_config(args, cfg):
    """Medians over the successful runs of rounds not discarded; CDF of the run with the median p50."""
    ok = [r for r in cfg["runs"] if r["ok"] and not r.get("discarded")]
    if not ok:
        cfg["median"] = None
        return
    med = {"runs_ok": len(ok), "runs": len(cfg["runs"])}
    for k in METRICS:
        vals = [r[k] for r in ok if r.get(k) is not None]
        med[k] = statistics.median(vals) if vals else None
    cfg["median"] = med
    with_p50 = [r for r in ok if r.get("p50_us") is not None]
    if with_p50:
        ranked = sorted(with_p50, key=lambda r: r["p50_us"])
        pick = ranked[(len(ranked) - 1) // 2]
        try:
            with open(os.path.join(args.out, pick["json"])) as f:
                doc = json.load(f)
            cfg["cdf"] = doc.get("cdf") or []
            cfg["cdf_run"] = pick["run"]
            cfg["cdf_latency_us"] = doc.get("latency_us")
        except (OSError, ValueError):
            pass


def topology_is_up(name):
    if name == "memif":
        return os.path.isdir("/run/lunar")
    if name == "veth":
        for ns, dev in (("lunar-a", "veth-a"), ("lunar-b", "veth-b")):
            if not os.path.exists(f"/run/netns/{ns}"):
                return False
            r = subprocess.run(["ip", "-n", ns, "link", "show", "dev", dev], capture_output=True)
            if r.returncode != 0:
                return False
        return True
    return False


def veth_mtu():
    """The MTU of the veth pair's server end (None when it cannot be read)."""
    r = subprocess.run(["ip", "-n", "lunar-b", "-o", "link", "show", "dev", "veth-b"], capture_output=True, text=True)
    words = r.stdout.split()
    return int(words[words.index("mtu") + 1]) if r.returncode == 0 and "mtu" in words else None


def run_cmd_logged(cmd, env=None):
    """Run @cmd (with @env added to the environment), its output in the log."""
    log("$ " + "".join(f"{k}={v} " for k, v in (env or {}).items()) + shlex.join(cmd))
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       env=dict(os.environ, **env) if env else None)
    for line in (r.stdout + r.stderr).splitlines():
        log("  " + line)
    return r.returncode


def machine_info(knb_versions):
    info = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C")).stdout
        fields = {}
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
        info["cpu_model"] = fields.get("Model name")
        info["lscpu_cpus"] = fields.get("CPU(s)")
        info["threads_per_core"] = fields.get("Thread(s) per core")
    except OSError:
        info["cpu_model"] = None
    info["cpus"] = os.cpu_count()
    info["kernel"] = os.uname().release
    info["hostname"] = os.uname().nodename
    git = ["git", "-c", f"safe.directory={ROOT}", "-C", ROOT]
    try:
        r = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        info["commit"] = r.stdout.strip() or None
        r = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
        info["commit_dirty"] = bool(r.stdout.strip()) if r.returncode == 0 else None
    except OSError:
        info["commit"] = None
    info["knb_version"] = sorted(set(knb_versions))[0] if knb_versions else None
    info["python"] = sys.version.split()[0]
    return info


def figure_summaries(configs, series, fig_notes):
    """The figures section of results.json: per figure, per stack, the
    medians along the figure's x axis."""
    xs = {"9": "msg_size", "10": "iodepth", "12": "threads"}
    figs = {}
    for f in ALL_FIGURES:
        mine = [c for c in configs if f in c["figures"]]
        if not mine and not fig_notes.get(f):
            continue
        entry = {"notes": fig_notes.get(f, [])}
        if f == "11":
            entry["series"] = {}
            for c in mine:
                med = c["median"] or {}
                entry["series"][c["stack"]] = {
                    "config": c["id"],
                    "cdf_run": c.get("cdf_run"),
                    "cdf": c.get("cdf", []),
                    **{k: med.get(k) for k in ("p50_us", "p90_us", "p99_us", "p999_us", "mean_us", "min_us", "max_us")},
                    "runs_ok": med.get("runs_ok", 0),
                    "runs": len(c["runs"]),
                    "runs_skipped": sum(1 for r in c["runs"] if r.get("skipped")),
                }
        else:
            entry["x"] = xs[f]
            entry["series"] = {}
            for c in mine:
                med = c["median"] or {}
                entry["series"].setdefault(c["stack"], []).append(
                    {
                        "x": c[xs[f]],
                        "config": c["id"],
                        "gbps": med.get("gbps"),
                        "rpc_per_s": med.get("rpc_per_s"),
                        "p50_us": med.get("p50_us"),
                        "p99_us": med.get("p99_us"),
                        "runs_ok": med.get("runs_ok", 0),
                        "runs": len(c["runs"]),
                        "runs_skipped": sum(1 for r in c["runs"] if r.get("skipped")),
                    }
                )
        for s in series:
            if series[s]["kind"] == "raw" and f not in RAW_FIGURES:
                continue  # the raw floor is not measured there
            entry["series"].setdefault(s, {} if f == "11" else [])
        figs[f] = entry
    return figs


def write_results(args, series, configs, notes, cpus, started, status, knb_versions):
    doc = {
        "schema": 1,
        "kind": "demo" if args.demo else "sweep",
        "status": status,
        "command": shlex.join([sys.argv[0]] + sys.argv[1:]),
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "machine": machine_info(knb_versions),
        "settings": {
            "runs": args.runs,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "figures": [] if args.demo else args.figures,
            "demo": args.demo,
            "kernel_mode": args.kernel_mode,
            "mtu": args.mtu,
            "with_blocking": args.with_blocking,
            "no_topology": args.no_topology,
            "knb": args.knb,
            "cpus_for_fig12": cpus,
            "fig9_sizes": FIG9_SIZES,
            "fig10_iodepths": FIG10_IODEPTHS,
            "started_utc": started,
            "finished_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "stacks": {
            s: {"label": d["label"], "kind": d["kind"], "kernel_mode": d["kernel_mode"], "topology": d["topology"]}
            for s, d in series.items()
        },
        "reference": "kernel" if "kernel" in series else None,
        "notes": notes,
        "figures": {} if args.demo else figure_summaries(configs, series, notes),
        "configs": configs,
    }
    path = os.path.join(args.out, "results.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)
    return doc


def main(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", help="results directory (default bench/results/<UTC timestamp>)")
    ap.add_argument("--runs", type=int, default=3, help="runs per point; the median is kept (default 3)")
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (default 3)")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per run (default 1)")
    ap.add_argument("--stacks", help="subset of " + ",".join(ALL_STACKS) + " (default: --demo all of them, "
                    "else " + ",".join(FULL_STACKS) + ")")
    ap.add_argument("--figures", default=",".join(ALL_FIGURES), help="subset of 9,10,11,12")
    ap.add_argument("--demo", action="store_true", help="short comparison: 4 KiB RPC at iodepth 1 and 16, printed as a table")
    ap.add_argument("--knb", default=os.path.join(ROOT, "build", "tools", "knb", "knb"), help="knb binary (default build/tools/knb/knb)")
    ap.add_argument("--kernel-mode", choices=["busy-poll", "blocking"], default="busy-poll", help="the kernel series' mode (default busy-poll)")
    ap.add_argument("--with-blocking", action="store_true", help="also measure the kernel in blocking mode, as a fourth series")
    ap.add_argument("--mtu", type=int, default=DEFAULT_MTU,
                    help=f"MTU of every link: the memif ports and the veth pair (default {DEFAULT_MTU}). From 4200 a 4 KiB RPC "
                    "is one frame each way, as on a storage network with jumbo frames (SOLAR: one block per packet). "
                    f"At any other MTU lunar-afxdp is left out (it runs at {AFXDP_MAX_MTU} only).")
    ap.add_argument("--slow-phase", type=float, default=1.5, metavar="X",
                    help="where raw memif is measured, discard a round (one run of every stack) whose raw memif RPC/s "
                    "is below the point's best / X, a slow phase of the host, and run another, at most --runs more "
                    "(default 1.5; 0 keeps every round)")
    ap.add_argument("--keep-topology", action="store_true", help="leave the topologies up at the end")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--no-topology", action="store_true", help="(tests) no scripts/topo.sh, no `ip netns exec`, no root check")
    ap.add_argument("--cpus", type=int, help="CPUs assumed for Fig 12's thread counts (default: this machine's)")
    ap.add_argument("--no-report", action="store_true", help="write results.json only, do not run report.py")
    args = ap.parse_args(argv)

    if not 576 <= args.mtu <= 9000:
        ap.error(f"--mtu {args.mtu}: expected 576 to 9000 (9000 is what lunar's memif port and the veth pair take)")
    explicit_stacks = args.stacks is not None
    if args.stacks is None:
        args.stacks = ",".join(ALL_STACKS if args.demo else FULL_STACKS)
    args.stacks = parse_list(args.stacks, ALL_STACKS, "--stacks")
    if args.mtu != AFXDP_MAX_MTU and "lunar-afxdp" in args.stacks:
        if explicit_stacks:
            ap.error(f"--stacks lunar-afxdp with --mtu {args.mtu}: sweep.py runs af_xdp at MTU {AFXDP_MAX_MTU} only; "
                     "drop one of them")
        args.stacks.remove("lunar-afxdp")
    args.figures = parse_list(args.figures, ALL_FIGURES, "--figures")
    if args.runs < 1 or args.duration <= 0 or args.warmup < 0:
        ap.error("--runs must be >= 1, --duration > 0, --warmup >= 0")
    if args.slow_phase and args.slow_phase <= 1:
        ap.error(f"--slow-phase {args.slow_phase:g}: expected a factor above 1 (1.5: discard a round whose raw memif "
                 "RPC/s is below 2/3 of the best), or 0 to keep every round")
    args.knb = os.path.abspath(args.knb)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if not args.out:
        args.out = os.path.join(ROOT, "bench", "results", stamp + ("-demo" if args.demo else ""))
    args.out = os.path.abspath(args.out)
    cpus = args.cpus or os.cpu_count() or 1

    series = stack_series(args)
    points, configs, notes = plan(args, series, cpus)
    if args.with_blocking and args.kernel_mode == "blocking":
        notes["general"].append("--with-blocking ignored: the kernel series already runs in blocking mode.")
    if args.with_blocking and "kernel" not in args.stacks:
        notes["general"].append("--with-blocking ignored: the kernel is not among --stacks.")
    if "kernel" not in series:
        notes["general"].append("No kernel series: no ratios.")
    if args.mtu != DEFAULT_MTU:
        notes["general"].append(f"MTU {args.mtu} on every link (memif ports and the veth pair)"
                                + (f"; lunar af_xdp left out (sweep.py runs it at MTU {AFXDP_MAX_MTU} only)."
                                   if args.mtu != AFXDP_MAX_MTU and not explicit_stacks else "."))
    runs_total = len(configs) * args.runs
    per_run_guess = args.duration + args.warmup + 1.5
    topologies = sorted({series[s]["topology"] for s in series})

    if args.dry_run:
        print(f"# {len(configs)} configurations x {args.runs} runs = {runs_total} runs, about {fmt_duration(runs_total * per_run_guess)}")
        print(f"# results would go to {args.out}")
        for n in notes["general"] + [x for f in ALL_FIGURES for x in notes[f]]:
            print(f"# note: {n}")
        if not args.no_topology:
            for t in topologies:
                print(("" if args.mtu == DEFAULT_MTU else f"LUNAR_MTU={args.mtu} ") + shlex.join([TOPO, t, "up"]))
        raw = os.path.join(args.out, "raw")
        by_id = {c["id"]: c for c in configs}
        for (m, d, t) in points:
            for r in range(1, args.runs + 1):
                for s in series:
                    c = by_id.get(f"{s}_m{m}_d{d}_t{t}")
                    if not c:
                        continue
                    sv, cl, _, _ = commands(args, series[s], c, raw, r)
                    print(f"# {'demo' if args.demo else 'fig ' + ','.join(c['figures'])} {s} msg={m} iodepth={d} threads={t} run {r}/{args.runs}")
                    print(shlex.join(sv) + " &   # wait for '" + READY_PREFIX + "'")
                    print(shlex.join(cl))
                    print("kill -INT %1; wait")
        if not args.no_topology and not args.keep_topology:
            print("# afterwards, only topologies that were down before:")
            for t in topologies:
                print(shlex.join([TOPO, t, "down"]))
        return 0

    if not args.no_topology and os.geteuid() != 0:
        log("sweep.py: run as root (namespaces, XDP, hugepages), e.g. sudo bench/sweep.py; --dry-run shows the commands")
        return 2
    if not os.path.isfile(args.knb):
        log(f"sweep.py: no knb at {args.knb}: build it (ninja -C build) or pass --knb PATH")
        return 2
    if any(series[s]["kind"] in ("lunar", "raw") for s in series) and not args.no_topology:
        try:
            with open("/proc/meminfo") as f:
                hp = [int(l.split()[1]) for l in f if l.startswith("HugePages_Total:")]
            if hp and hp[0] == 0:
                log("sweep.py: warning: no hugepages reserved; lunar needs them: sudo scripts/hugepages.sh")
        except OSError:
            pass

    raw_dir = os.path.join(args.out, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    signal.signal(signal.SIGTERM, on_sigterm)
    brought_up = []
    status = "complete"
    knb_versions = []
    t0 = time.monotonic()
    done = 0
    fails = {s: 0 for s in series}
    broken = {}
    try:
        if not args.no_topology:
            for t in topologies:
                was_up = topology_is_up(t)
                have = veth_mtu() if t == "veth" and was_up else args.mtu
                if have != args.mtu:
                    log(f"sweep.py: the veth pair is up with MTU {have}, not {args.mtu}: take it down first "
                        "(scripts/topo.sh veth down)")
                    status = "failed"
                    return 2
                if run_cmd_logged([TOPO, t, "up"], {"LUNAR_MTU": str(args.mtu)}) != 0:
                    log(f"sweep.py: scripts/topo.sh {t} up failed")
                    status = "failed"
                    return 2
                if not was_up:
                    brought_up.append(t)
        log(f"sweep.py: {len(configs)} configurations x {args.runs} runs = {runs_total} runs, "
            f"about {fmt_duration(runs_total * per_run_guess)}; results in {args.out}")
        by_id = {c["id"]: c for c in configs}
        for (m, d, t) in points:
            witness = by_id.get(f"raw-memif_m{m}_d{d}_t{t}") if args.slow_phase else None
            at_point = [c for c in (by_id.get(f"{s}_m{m}_d{d}_t{t}") for s in series) if c]
            r, slow = 0, {}
            while True:
                r += 1
                if r > args.runs:
                    # Fewer than --runs rounds outside slow phases: one more, within the budget.
                    if not witness or r - len(slow) > args.runs or r > 2 * args.runs:
                        break
                    runs_total += len(at_point)
                    log(f"sweep.py: msg={m} iodepth={d}: round(s) {', '.join(map(str, sorted(slow)))} ran in a slow "
                        f"host phase (raw memif below 1/{args.slow_phase:g} of its best here); round {r} replaces one")
                if witness and "raw-memif" not in broken:
                    # The round's first judge: a short raw memif run before any stack's.
                    probe_args = argparse.Namespace(**{**vars(args), "duration": PROBE_DURATION_S,
                                                       "warmup": PROBE_WARMUP_S})
                    rec = run_once(probe_args, series["raw-memif"], witness, raw_dir, f"{r}probe")
                    rec["round"] = r
                    witness.setdefault("probes", []).append(rec)
                for s in series:
                    c = by_id.get(f"{s}_m{m}_d{d}_t{t}")
                    if not c:
                        continue
                    done += 1
                    figs = "demo" if args.demo else "fig" + ",".join(c["figures"])
                    what = f"[{done}/{runs_total}] {figs} {s} msg={m} iodepth={d}" + (f" threads={t}" if t > 1 else "")
                    what += f" run {r}/{args.runs}" if r <= args.runs else f" run {r} (for a slow round)"
                    if s in broken:
                        c["runs"].append({"run": r, "ok": False, "skipped": True, "error": broken[s]})
                        log(f"{what}: skipped ({broken[s]})")
                        continue
                    rec = run_once(args, series[s], c, raw_dir, r)
                    rec["round"] = r
                    c["runs"].append(rec)
                    elapsed = time.monotonic() - t0
                    eta = elapsed / done * (runs_total - done)
                    if rec["ok"]:
                        fails[s] = 0
                        if rec.get("knb_version") is not None:
                            knb_versions.append(rec["knb_version"])
                        p50 = f", p50 {rec['p50_us']:.1f} us" if rec.get("p50_us") is not None else ""
                        log(f"{what}: {rec['gbps']:.2f} Gbit/s, {rec['rpc_per_s']:,.0f} RPC/s{p50}  (ETA {fmt_duration(eta)})")
                    else:
                        fails[s] += 1
                        log(f"{what}: FAILED: {rec['error']}  (ETA {fmt_duration(eta)})")
                        if fails[s] >= MAX_CONSECUTIVE_FAILURES:
                            broken[s] = f"{s} skipped after {fails[s]} failed runs in a row; last: {rec['error']}"
                            notes["general"].append(broken[s])
                            log(f"sweep.py: {broken[s]}")
                if witness:
                    slow = slow_rounds(witness, args.slow_phase)
            # Every stack's run in a slow round is left out of the medians, and said so.
            for c in at_point:
                for rec in c["runs"]:
                    if rec["run"] in slow:
                        v, best = slow[rec["run"]]
                        rec["discarded"] = (f"slow host phase: raw memif {v:,.0f} RPC/s in this round "
                                            f"(its probe or its run), its best at this point {best:,.0f}")
            if slow:
                kept = sorted({x["run"] for x in witness["runs"]} - set(slow))
                notes["general"].append(
                    f"Slow host phase at msg={m} iodepth={d}: round(s) {', '.join(map(str, sorted(slow)))} discarded "
                    f"(raw memif {', '.join(f'{slow[x][0]:,.0f}' for x in sorted(slow))} RPC/s against its best here, "
                    f"{max(b for _, b in slow.values()):,.0f}: below 1/{args.slow_phase:g} of it); "
                    f"the medians are of round(s) {', '.join(map(str, kept))}.")
    except (KeyboardInterrupt, Interrupted) as e:
        status = "interrupted"
        log(f"sweep.py: interrupted ({e or 'Ctrl-C'}); writing what was measured")
    finally:
        if not args.keep_topology:
            for t in reversed(brought_up):
                run_cmd_logged([TOPO, t, "down"])
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if os.path.isdir(raw_dir):
            for c in configs:
                finish_config(args, c)
            failed_runs = sum(1 for c in configs for r in c["runs"] if not r["ok"])
            if status == "complete" and failed_runs:
                status = f"{failed_runs} of {runs_total} runs failed"
            write_results(args, series, configs, notes, cpus, started, status, knb_versions)

    done = sum(1 for c in configs for r in c["runs"] if not r.get("skipped"))
    log(f"sweep.py: {done} runs in {fmt_duration(time.monotonic() - t0)}; {os.path.join(args.out, 'results.json')}")
    if status == "interrupted":
        return 130
    rc = 0
    if not args.no_report:
        r = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), args.out])
        if r.returncode != 0:
            log("sweep.py: report.py failed")
            rc = 1
    if args.demo:
        sys.path.insert(0, HERE)
        sys.dont_write_bytecode = True  # no __pycache__ in bench/
        import report

        with open(os.path.join(args.out, "results.json")) as f:
            doc = json.load(f)
        print(report.summary_text(doc))
        for n in doc.get("notes", {}).get("general", []):
            if n.startswith("Slow host phase"):
                print(n)
        print()
        print(f"Demo results: {args.out}" + ("" if args.no_report else f" (report: {os.path.join(args.out, 'report.md')})"))
        full = argparse.Namespace(**vars(args))
        full.demo, full.figures, full.stacks, full.with_blocking = False, ALL_FIGURES, FULL_STACKS, False
        fs = stack_series(full)
        n = len(plan(full, fs, os.cpu_count() or 1)[1]) * 3
        print(f"Full report: sudo bench/sweep.py (no options: figures 9-12, every stack and the raw floor, median of 3 runs,"
              f" {n} runs, about {fmt_duration(n * (3 + 1 + 1.5))}), then read bench/results/<UTC timestamp>/report.md"
              " (the path is printed at the end).")
    elif not args.no_report:
        print(f"report: {os.path.join(args.out, 'report.md')}")
    if status != "complete":
        rc = 1
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (KeyboardInterrupt, Interrupted):
        sys.exit(130)
    except BrokenPipeError:  # e.g. --dry-run | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
