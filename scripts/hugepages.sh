#!/usr/bin/env bash
# hugepages.sh - reserve 2 MiB hugepages for DPDK and mount hugetlbfs.
#
# A fresh machine has none reserved and hugetlbfs unmounted. This raises the
# 2 MiB pool to N pages (default 512 = 1 GiB) but never lowers it (other
# DPDK processes may be using what is there), mounts hugetlbfs at
# /dev/hugepages if nothing is mounted there, and checks /proc/meminfo that
# the kernel really reserved them. Safe to run any number of times.
#
#   scripts/hugepages.sh [N]      reserve at least N pages (root)
#   scripts/hugepages.sh --status print total/free pages and the mount
#   scripts/hugepages.sh --help
set -euo pipefail

SYS=/sys/kernel/mm/hugepages/hugepages-2048kB
MNT=/dev/hugepages

# The header comment is the help text.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "hugepages.sh: $*" >&2; exit 1; }

status() {
	[ -d "$SYS" ] || die "this kernel has no 2 MiB hugepages ($SYS missing)"
	local total free mounted=no
	total=$(cat "$SYS/nr_hugepages")
	free=$(cat "$SYS/free_hugepages")
	mountpoint -q "$MNT" && mounted=yes
	echo "2 MiB hugepages: total $total, free $free ($((free * 2)) MiB free); hugetlbfs at $MNT: $mounted"
}

want=512
case "${1:-}" in
-h | --help) usage; exit 0 ;;
--status) status; exit 0 ;;
"") ;;
*)
	[[ "$1" =~ ^[0-9]+$ ]] || die "N must be a number of 2 MiB pages, got '$1' (try --help)"
	want=$1
	;;
esac
[ $# -le 1 ] || die "too many arguments (try --help)"
[ "$(id -u)" = 0 ] || die "run as root (writes $SYS/nr_hugepages and mounts hugetlbfs)"
[ -d "$SYS" ] || die "this kernel has no 2 MiB hugepages ($SYS missing)"

have=$(cat "$SYS/nr_hugepages")
if [ "$want" -gt "$have" ]; then
	# Refuse up front what cannot fit: the kernel would grab every free
	# page it can find and starve the machine before giving up.
	avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
	if [ $(((want - have) * 2048)) -gt "$avail_kb" ]; then
		die "$want 2 MiB hugepages need $(((want - have) * 2)) MiB more, only $((avail_kb / 1024)) MiB available; ask for fewer"
	fi
	echo "$want" >"$SYS/nr_hugepages"
	got=$(cat "$SYS/nr_hugepages")
	if [ "$got" -lt "$want" ]; then
		# A partial pool is useless to DPDK and pins memory: give it back.
		echo "$have" >"$SYS/nr_hugepages"
		die "the kernel reserved only $got of $want 2 MiB hugepages (memory short or fragmented) and they were released again; free memory, try 'sync; echo 3 > /proc/sys/vm/drop_caches' and rerun, or reserve them at boot (hugepages=$want)"
	fi
	echo "hugepages.sh: raised 2 MiB hugepages from $have to $got"
else
	echo "hugepages.sh: $have 2 MiB hugepages already reserved (wanted $want; never lowered)"
fi

if ! mountpoint -q "$MNT"; then
	mkdir -p "$MNT"
	mount -t hugetlbfs -o pagesize=2M nodev "$MNT"
	echo "hugepages.sh: mounted hugetlbfs at $MNT"
fi

# /proc/meminfo counts the default hugepage size; check it agrees when the
# default is 2 MiB (it is on x86 unless the kernel command line changed it).
if grep -q '^Hugepagesize: *2048 kB' /proc/meminfo; then
	total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
	[ "$total" -ge "$want" ] || die "/proc/meminfo reports HugePages_Total $total < $want"
fi
status
