#!/usr/bin/env bash
# test_bench.sh - bench/sweep.py and bench/report.py end to end, driven by
# tests/bench/fake_knb.py instead of the real knb: no root, no DPDK, no
# topology (sweep.py --no-topology). Checks the full sweep (results.json,
# report.md, the PNGs; the raw memif floor in Fig 9 only), the --demo table
# (with the lunar memif vs raw memif row), a slow host phase (a round
# discarded and replaced), failure handling, --dry-run and
# report.py --copy-to. Prints ok:/FAIL: lines; exits 1 on any failure.
#
#   bash tests/bench/test_bench.sh [BUILDDIR]   (BUILDDIR is accepted and unused)
#   KEEP=1 bash tests/bench/test_bench.sh       keep the output directory
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PY=/usr/bin/python3
SWEEP="$ROOT/bench/sweep.py"
REPORT="$ROOT/bench/report.py"
FAKE="$ROOT/tests/bench/fake_knb.py"
OUT=$(mktemp -d /tmp/lunar-bench-test.XXXXXX)
FAILS=0

ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
# check DESC CMD...: ok when CMD succeeds
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}
finish() {
	# Nothing the sweeps started may still run: every fake was given a path under $OUT.
	local left
	left=$(pgrep -f -- "$OUT" || true)
	if [ -n "$left" ]; then
		fail "processes left behind: $(echo $left)"
	else
		ok "no knb processes left behind"
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "# output kept in $OUT"; else rm -rf "$OUT"; fi
	if [ "$FAILS" -eq 0 ]; then echo "test_bench: all passed"; else echo "test_bench: $FAILS failed"; fi
	[ "$FAILS" -eq 0 ]
}
trap 'finish; exit $?' EXIT
trap 'exit 130' INT TERM
echo "# test_bench: output in $OUT"

[ -x "$PY" ] || { fail "$PY missing"; exit 1; }
"$PY" -c 'import matplotlib' 2>/dev/null || { fail "$PY has no matplotlib (apt-get install python3-matplotlib)"; exit 1; }

# ---- 1. the full sweep, every figure and stack
"$SWEEP" --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/full" --no-topology >"$OUT/full.stdout" 2>"$OUT/full.stderr"
rc=$?
check "full sweep exits 0 (rc $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || tail -5 "$OUT/full.stderr" | sed 's/^/# /'
check "full sweep prints one progress line per run, with an ETA" \
	grep -qE '^\[[0-9]+/[0-9]+\] fig[0-9,]+ lunar-memif msg=4096 iodepth=1 run 2/2: [0-9.]+ Gbit/s, .*p50 [0-9.]+ us .*ETA [0-9]+m[0-9]+s' "$OUT/full.stderr"
n_progress=$(grep -cE '^\[[0-9]+/[0-9]+\]' "$OUT/full.stderr")
n_total=$(grep -oE '^\[[0-9]+/[0-9]+\]' "$OUT/full.stderr" | tail -1 | sed -E 's/^\[([0-9]+)\/([0-9]+)\]/\2/')
check "progress lines: $n_progress of ${n_total:-?}" test "${n_total:-none}" = "$n_progress"
check "full sweep prints the report path" grep -q "^report: $OUT/full/report.md" "$OUT/full.stdout"

"$PY" - "$OUT/full" >"$OUT/check_results.txt" 2>&1 <<'EOF'
import json, os, sys
d = sys.argv[1]
doc = json.load(open(os.path.join(d, "results.json")))
bad = []
stacks = ["lunar-memif", "lunar-afxdp", "kernel"]
for k in ("machine", "command", "settings", "figures", "configs"):
    if k not in doc:
        bad.append(f"results.json has no {k}")
m = doc.get("machine", {})
for k in ("cpu_model", "cpus", "kernel", "commit", "date_utc"):
    if m.get(k) in (None, ""):
        bad.append(f"machine.{k} missing")
if "--no-topology" not in doc.get("command", ""):
    bad.append("command line not recorded")
if doc.get("status") != "complete":
    bad.append(f"status {doc.get('status')!r}")
figs = doc.get("figures", {})
want_x = {"9": [64, 256, 1024, 4096, 16384, 65536], "10": [1, 2, 4, 8, 16, 32]}
if doc.get("stacks", {}).get("raw-memif", {}).get("kind") != "raw":
    bad.append("no raw-memif stack of kind raw")
for f in ("9", "10", "11", "12"):
    if f not in figs:
        bad.append(f"figure {f} missing")
        continue
    if f != "9" and "raw-memif" in figs[f]["series"]:
        bad.append(f"figure {f}: the raw floor is measured in Fig 9 only")
    for s in stacks + (["raw-memif"] if f == "9" else []):
        ser = figs[f]["series"].get(s)
        if not ser:
            bad.append(f"figure {f}: no {s} series")
            continue
        if f == "11":
            cdf = ser.get("cdf") or []
            if not cdf or cdf[-1][1] != 1.0 or any(b[0] < a[0] or b[1] < a[1] for a, b in zip(cdf, cdf[1:])):
                bad.append(f"figure 11 {s}: CDF empty or not monotonic to 1.0")
            if not ser.get("p50_us") or ser.get("cdf_run") not in (1, 2):
                bad.append(f"figure 11 {s}: no p50 or no cdf_run")
        else:
            xs = sorted(p["x"] for p in ser)
            if f == "12":
                wrong = xs[:1] != [1]  # more thread counts on a bigger machine
            else:
                wrong = xs != want_x[f]
            if wrong:
                bad.append(f"figure {f} {s}: x values {xs}")
            for p in ser:
                if not (p.get("gbps") and p.get("rpc_per_s") and p.get("runs_ok") == 2):
                    bad.append(f"figure {f} {s} x={p['x']}: medians missing ({p})")
# medians are medians: the fake is deterministic, so each equals its runs
for c in doc["configs"]:
    if len(c["runs"]) != 2 or not all(r["ok"] for r in c["runs"]):
        bad.append(f"{c['id']}: runs {c['runs']}")
    elif c["median"]["gbps"] != c["runs"][0]["gbps"]:
        bad.append(f"{c['id']}: median {c['median']['gbps']} != run {c['runs'][0]['gbps']}")
    for r in c["runs"]:
        if not os.path.isfile(os.path.join(d, r["json"])) or not r["json"].startswith("raw/"):
            bad.append(f"{c['id']} run {r['run']}: no raw JSON {r['json']}")
# 4 KiB at iodepth 1 is shared by figures 9, 10 and 11: measured once
ids = [c["id"] for c in doc["configs"]]
if len(ids) != len(set(ids)) or len(ids) != 3 * 11 + 6:
    bad.append(f"{len(ids)} configurations, expected 39 distinct (33 + raw memif at 6 sizes)")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
check "results.json: every figure and stack (raw memif in Fig 9), medians, machine, command, raw JSONs" [ $? = 0 ]
sed 's/^/#   /' "$OUT/check_results.txt" | head -20

for h in "## Figure 9: throughput vs message size" "## Figure 10: throughput vs iodepth" "## Figure 11: latency CDF" "## Figure 12: throughput vs cores"; do
	check "report.md has '$h'" grep -qxF "$h" "$OUT/full/report.md"
done
check "report.md has throughput ratio columns (lunar / kernel)" grep -qF "| ratio lunar memif / kernel | ratio lunar af_xdp / kernel |" "$OUT/full/report.md"
check "report.md has latency ratio columns (kernel / lunar)" grep -qF "| ratio kernel / lunar memif | ratio kernel / lunar af_xdp |" "$OUT/full/report.md"
check "report.md says >1 means lunar is better" grep -q "above 1 always means lunar is better" "$OUT/full/report.md"
check "report.md: Fig 9 has a raw memif column and a lunar memif vs raw memif column" \
	grep -qE "^\| message size \| lunar memif Gbit/s \| .* \| raw memif Gbit/s \| .* \| lunar memif vs raw memif \(x the raw time\) \|$" "$OUT/full/report.md"
check "report.md: Fig 9's 4 KiB RPC/s is lunar memif x the raw time (above 1 with the fake)" \
	grep -qE "^\| 4 KiB \| .* \| [1-9][0-9]*\.[0-9]+x \|$" "$OUT/full/report.md"
check "report.md explains the raw floor" grep -q "lunar memif vs raw memif (x the raw time):.*1.00x would mean the stack costs nothing" "$OUT/full/report.md"
check "report.md notes the 2-CPU limit of Fig 12 (or more CPUs here)" \
	bash -c '[ "$(nproc)" -gt 3 ] || grep -q "cpus/2 = 1 thread" "$1"' _ "$OUT/full/report.md"
check "report.md has the machine and the command" grep -q -- "--knb $FAKE --runs 2" "$OUT/full/report.md"
for png in fig9_throughput fig9_rpc fig10_throughput fig11_cdf fig12_cores; do
	f="$OUT/full/$png.png"
	check "$png.png exists, is a PNG and is linked" \
		bash -c '[ "$(head -c 8 "$1" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ] && grep -qF "]($2.png)" "$3"' _ "$f" "$png" "$OUT/full/report.md"
done

# ---- 2. report.py --copy-to (a scratch docs/ here; the real one is docs/)
"$REPORT" "$OUT/full" --copy-to "$OUT/docs" 2>"$OUT/copy.stderr"
check "report.py --copy-to exits 0" [ $? = 0 ]
check "--copy-to: benchmarks.md links benchmarks/*.png, images copied" \
	bash -c 'grep -qF "](benchmarks/fig11_cdf.png)" "$1/benchmarks.md" && ! grep -qE "\]\(fig[0-9]" "$1/benchmarks.md" && [ "$(ls "$1"/benchmarks/*.png | wc -l)" = 5 ]' _ "$OUT/docs"

# ---- 3. --demo: the 4 KiB table on stdout
"$SWEEP" --demo --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/demo" --no-topology >"$OUT/demo.stdout" 2>"$OUT/demo.stderr"
rc=$?
check "--demo exits 0 (rc $rc)" [ "$rc" = 0 ]
check "--demo prints the table header" grep -qE '^4 KiB RPC +p50 us +p99 us +RPC/s \(iodepth 1\) +Gbit/s \(iodepth 16\)$' "$OUT/demo.stdout"
for row in "lunar memif" "lunar af_xdp" "kernel veth \(busy-poll\)" "raw memif"; do
	check "--demo has a '$row' row with four numbers" grep -qE "^$row +[0-9.,]+ +[0-9.,]+ +[0-9.,]+ +[0-9.,]+$" "$OUT/demo.stdout"
done
check "--demo has ratio rows (lunar better: every ratio > 1 with the fake)" \
	grep -qE '^ratio lunar memif vs kernel veth \(busy-poll\) +([1-9][0-9]*\.[0-9]+x +){3}[1-9][0-9]*\.[0-9]+x$' "$OUT/demo.stdout"
check "--demo explains the ratio direction" grep -q "kernel/lunar latency.*lunar/kernel.*above 1.00x means lunar is better" "$OUT/demo.stdout"
check "--demo has the row lunar memif vs raw memif (lunar slower than the floor: every ratio > 1 with the fake)" \
	grep -qE '^lunar memif vs raw memif \(x the raw time\) +([1-9][0-9]*\.[0-9]+x +){3}[1-9][0-9]*\.[0-9]+x$' "$OUT/demo.stdout"
check "--demo: raw p50 ratio = lunar p50 / raw p50" "$PY" -c '
import json, sys
sys.path.insert(0, sys.argv[2])
import report
doc = json.load(open(sys.argv[1]))
d = report.summary_data(doc)
want = "%.2fx" % (d["lunar-memif"]["p50_us"] / d["raw-memif"]["p50_us"])
row = [l for l in report.summary_text(doc).splitlines() if l.startswith("lunar memif vs raw memif")][0]
sys.exit(0 if row.split()[-4] == want else 1)' "$OUT/demo/results.json" "$ROOT/bench"
check "--demo explains the raw row" grep -q "^x the raw time: lunar's round trip" "$OUT/demo.stdout"
check "--demo ends saying how to run the full report" bash -c 'tail -1 "$1" | grep -q "^Full report: sudo bench/sweep.py"' _ "$OUT/demo.stdout"
check "--demo measured 2 points x 5 stacks (raw memif too) x 2 runs" [ "$(grep -cE '^\[[0-9]+/20\] demo ' "$OUT/demo.stderr")" = 20 ]
check "--demo report skips the figures with a note" grep -q "Skipped: not part of the demo" "$OUT/demo/report.md"
sed -n '1,8p' "$OUT/demo.stdout" | sed 's/^/#   /'

# ---- 3b. --demo in a slow host phase: round 1 at iodepth 1 runs 4x slower for every stack
FAKE_KNB_SLOW=_d1_t1_r1 "$SWEEP" --demo --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/slow" --no-topology \
	--no-report >"$OUT/slow.stdout" 2>"$OUT/slow.stderr"
rc=$?
check "slow phase: --demo exits 0 (rc $rc)" [ "$rc" = 0 ]
check "slow phase: one more round at iodepth 1 (5 runs more), none at 16" \
	bash -c '[ "$(grep -cE "^\[[0-9]+/(20|25)\] demo " "$1")" = 25 ] &&
		[ "$(grep -cE "iodepth=1 run 3 \(for a slow round\)" "$1")" = 5 ]' _ "$OUT/slow.stderr"
check "slow phase: stdout names the discarded round" \
	grep -q "^Slow host phase at msg=4096 iodepth=1: round(s) 1 discarded" "$OUT/slow.stdout"
"$PY" - "$OUT/slow/results.json" "$OUT/demo/results.json" >"$OUT/check_slow.txt" 2>&1 <<'EOF2'
import json, sys
slow, clean = (json.load(open(p)) for p in sys.argv[1:3])
by = {c["id"]: c for c in slow["configs"]}
cl = {c["id"]: c for c in clean["configs"]}
for s in ("lunar-memif", "lunar-memif-trust", "lunar-afxdp", "kernel", "raw-memif"):
    c = by[f"{s}_m4096_d1_t1"]
    assert [r["run"] for r in c["runs"]] == [1, 2, 3], (s, c["runs"])
    assert c["runs"][0].get("discarded", "").startswith("slow host phase: raw memif"), c["runs"][0]
    assert not any(r.get("discarded") for r in c["runs"][1:]), c["runs"]
    assert c["median"]["runs_ok"] == 2, c["median"]
    # The medians are those of the clean demo: the slow round left no trace in them.
    assert c["median"]["p50_us"] == cl[f"{s}_m4096_d1_t1"]["median"]["p50_us"], (s, c["median"])
    d16 = by[f"{s}_m4096_d16_t1"]
    assert len(d16["runs"]) == 2 and not any(r.get("discarded") for r in d16["runs"]), d16["runs"]
assert any(n.startswith("Slow host phase at msg=4096 iodepth=1") for n in slow["notes"]["general"])
print("ok")
EOF2
check "slow phase: results.json keeps round 1 marked discarded, medians of rounds 2 and 3 equal the clean demo's" [ $? = 0 ]
sed 's/^/#   /' "$OUT/check_slow.txt" | head -5
# Slow rounds past the budget (--runs 2: rounds 2-4 of at most 4 at iodepth 1): one round is left.
FAKE_KNB_SLOW=_d1_t1_r2,_d1_t1_r3,_d1_t1_r4 "$SWEEP" --demo --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/slowx" \
	--no-topology --no-report >"$OUT/slowx.stdout" 2>"$OUT/slowx.stderr"
check "slow phase past the budget: 4 rounds at iodepth 1, the table says its medians are of 1-2 runs" \
	bash -c '[ "$(grep -cE "iodepth=1 run [34] \(for a slow round\)" "$1")" = 10 ] &&
		grep -q "^(median of 1-2 runs of 1 s each" "$2" &&
		grep -q "iodepth=1: round(s) 2, 3, 4 discarded" "$2"' _ "$OUT/slowx.stderr" "$OUT/slowx.stdout"
# Every run slow but one probe (iodepth 1, round 1's): the round judged best is kept, the others go.
FAKE_KNB_SLOW=raw-memif_m4096_d1_t1_r1.,raw-memif_m4096_d1_t1_r2,raw-memif_m4096_d1_t1_r3,raw-memif_m4096_d1_t1_r4 \
	"$SWEEP" --demo --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/slowall" --no-topology --no-report \
	>"$OUT/slowall.stdout" 2>"$OUT/slowall.stderr"
check "slow phase everywhere but a probe: one round kept, its numbers in the table" \
	"$PY" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
by = {c["id"]: c for c in doc["configs"]}
k = by["kernel_m4096_d1_t1"]
assert sum(1 for r in k["runs"] if not r.get("discarded")) >= 1, k["runs"]
assert k["median"] and k["median"]["p50_us"], k["median"]' "$OUT/slowall/results.json"
# A phase that ends inside a round: only round 2's opening probe at iodepth 1 is slow.
FAKE_KNB_SLOW=_d1_t1_r2probe "$SWEEP" --demo --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/slowp" --no-topology \
	--no-report >"$OUT/slowp.stdout" 2>"$OUT/slowp.stderr"
check "slow phase: a slow opening probe discards its round (round 2 at iodepth 1; its raw memif run was fast)" \
	"$PY" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
by = {c["id"]: c for c in doc["configs"]}
raw = by["raw-memif_m4096_d1_t1"]
assert [p["round"] for p in raw["probes"]] == [1, 2, 3], raw["probes"]
assert [bool(r.get("discarded")) for r in by["kernel_m4096_d1_t1"]["runs"]] == [False, True, False]
assert not any(r.get("discarded") for r in by["kernel_m4096_d16_t1"]["runs"])' "$OUT/slowp/results.json"
FAKE_KNB_SLOW=_d1_t1_r1 "$SWEEP" --demo --knb "$FAKE" --runs 2 --duration 1 --out "$OUT/slow0" --no-topology \
	--no-report --slow-phase 0 >"$OUT/slow0.stdout" 2>"$OUT/slow0.stderr"
check "--slow-phase 0: every round kept (20 runs), the slow one in the medians" \
	bash -c '[ "$(grep -cE "^\[[0-9]+/20\] demo " "$1")" = 20 ] && ! grep -q "Slow host phase" "$2"' _ \
	"$OUT/slow0.stderr" "$OUT/slow0.stdout"
"$SWEEP" --demo --knb "$FAKE" --slow-phase 0.5 --no-topology >"$OUT/slowbad.out" 2>&1
rc=$?
check "--slow-phase 0.5 is refused (rc $rc) with what to give instead" \
	bash -c '[ "$2" = 2 ] && grep -q "expected a factor above 1" "$1"' _ "$OUT/slowbad.out" "$rc"

# ---- 4. failures: a client that fails (af_xdp) and a server that never gets ready (memif)
FAKE_KNB_FAIL=af_xdp:veth-a FAKE_KNB_SERVER_FAIL=knb.sock:server \
	"$SWEEP" --knb "$FAKE" --runs 1 --duration 1 --figures 9,11 --out "$OUT/fail" --no-topology >"$OUT/fail.stdout" 2>"$OUT/fail.stderr"
rc=$?
check "failed runs: sweep exits 1 (rc $rc)" [ "$rc" = 1 ]
check "failed runs: progress says why" \
	bash -c 'grep -q "lunar-afxdp .*FAILED: client exited 1: .*injected failure" "$1" && grep -q "lunar-memif .*FAILED: server exited 1 before ready" "$1"' _ "$OUT/fail.stderr"
check "failed runs: a stack failing 3 runs in a row is skipped" grep -q "lunar-memif .*skipped (lunar-memif skipped after 3 failed runs in a row" "$OUT/fail.stderr"
check "failed runs: report lists failures, failed/skipped cells, kernel numbers still there" \
	bash -c 'grep -q "^## Failures" "$1" && grep -qE "^\| 4 KiB \| skipped \| skipped \| [0-9.]+ \|" "$1" && grep -qE "^\| 64 B \| failed \| failed \| [0-9.]+ \|" "$1"' _ "$OUT/fail/report.md"

# ---- 5. --dry-run: the real commands, nothing run or written
"$SWEEP" --dry-run --cpus 8 --figures 12 --with-blocking --out "$OUT/dry" >"$OUT/dry.stdout" 2>&1
rc=$?
check "--dry-run exits 0" [ "$rc" = 0 ]
check "--dry-run writes nothing" [ ! -e "$OUT/dry" ]
check "--dry-run shows topo.sh and ip netns exec" \
	bash -c 'grep -q "scripts/topo.sh veth up" "$1" && grep -q "scripts/topo.sh memif up" "$1" && grep -q "^ip netns exec lunar-a .*knb client --stack lunar --port af_xdp:veth-a --connect 10.77.0.2:7000" "$1"' _ "$OUT/dry.stdout"
check "--dry-run: kernel busy-poll and blocking series, 4 threads, lunar skipped above 1" \
	bash -c 'grep -q "knb server --stack kernel --listen 10.77.0.2:7000 --threads 4 --kernel-mode blocking --core 4" "$1" && grep -q "lunar runs one thread per process" "$1" && ! grep -q "stack lunar .*--threads 2" "$1"' _ "$OUT/dry.stdout"
check "--dry-run: no raw memif outside Fig 9, and a note says so" \
	bash -c '! grep -q "stack raw" "$1" && grep -q "raw memif is measured in Fig 9 only" "$1"' _ "$OUT/dry.stdout"
"$SWEEP" --dry-run --demo --mtu 9000 --out "$OUT/dryj" >"$OUT/dryj.stdout" 2>&1
check "--dry-run --demo --mtu 9000: memif knb and the topologies at MTU 9000, af_xdp left out with a note" \
	bash -c 'grep -q "^LUNAR_MTU=9000 .*scripts/topo.sh veth up" "$1" && grep -q "knb server --stack raw --port memif:/run/lunar/knb.sock:server --ip 192.168.77.2/24 --mtu 9000 " "$1" && grep -q "knb client --stack lunar .*--trust-link --mtu 9000 " "$1" && ! grep -q -- "--port af_xdp" "$1" && grep -q "note: MTU 9000 on every link.*lunar af_xdp left out" "$1"' _ "$OUT/dryj.stdout"
"$SWEEP" --dry-run --demo --mtu 9000 --stacks lunar-afxdp,kernel >"$OUT/dryj2.stdout" 2>&1
rc=$?
check "--mtu 9000 with --stacks lunar-afxdp: refused, saying why (rc $rc)" \
	bash -c '[ "$2" = 2 ] && grep -q "sweep.py runs af_xdp at MTU 1500 only; drop one of them" "$1"' _ "$OUT/dryj2.stdout" "$rc"
"$SWEEP" --dry-run --demo --mtu 100 >"$OUT/dryj3.stdout" 2>&1
rc=$?
check "--mtu 100: refused with the range (rc $rc)" \
	bash -c '[ "$2" = 2 ] && grep -q "mtu 100: expected 576 to 9000" "$1"' _ "$OUT/dryj3.stdout" "$rc"
"$SWEEP" --dry-run --figures 9 --out "$OUT/dry9" >"$OUT/dry9.stdout" 2>&1
check "--dry-run --figures 9: raw memif at each size, only in Fig 9, interleaved per run with the other stacks" \
	bash -c '[ "$(grep -c "^# fig 9 raw-memif msg=[0-9]* iodepth=1 threads=1 run" "$1")" = 18 ] && grep -A1 "^# fig 9 raw-memif msg=4096 iodepth=1 threads=1 run 1/3" "$1" | grep -q "knb server --stack raw --port memif:/run/lunar/knb.sock:server --ip 192.168.77.2/24 --listen 192.168.77.2:7000" && grep -B3 "^# fig 9 raw-memif msg=64 iodepth=1 threads=1 run 1/3" "$1" | grep -q "kill -INT"' _ "$OUT/dry9.stdout"
