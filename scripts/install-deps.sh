#!/usr/bin/env bash
# install-deps.sh - install every Debian 12 package lunar needs to build
# (meson, clang for the XDP program, DPDK, libbpf/libxdp, libmnl), test
# (cmocka, libFuzzer, scapy, tshark, iproute2, nftables) and benchmark (wrk,
# socat, ncat, matplotlib).
#
# Idempotent: when every package is already installed it only runs
# dpkg-query (about a second) and never touches apt. Otherwise it runs
# `apt-get update` and installs the missing packages without recommends
# (recommends pull in unrelated daemons). Needs root only when installing.
#
#   scripts/install-deps.sh           install what is missing
#   scripts/install-deps.sh --check   list what is missing; exit 1 if any
#   scripts/install-deps.sh --help
set -euo pipefail

PKGS=(
	build-essential meson ninja-build pkg-config
	clang clang-format llvm libclang-rt-14-dev libfuzzer-14-dev
	dpdk dpdk-dev libdpdk-dev
	libxdp-dev libbpf-dev xdp-tools bpftool
	libmnl-dev libcmocka-dev libpcap-dev libsodium-dev libjansson-dev
	iproute2 ethtool nftables socat ncat curl wrk tshark
	python3 python3-scapy python3-matplotlib
	iputils-ping procps
)

# The header comment is the help text.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

check=0
for a in "$@"; do
	case "$a" in
	--check) check=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "install-deps.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
	esac
done

# One dpkg-query for all packages; packages dpkg never heard of print
# nothing (and make it exit 1), so they end up missing too.
missing() {
	local -A ok=()
	local name status
	while read -r name status; do
		[ "$status" = installed ] && ok[$name]=1
	done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PKGS[@]}" 2>/dev/null || true)
	for name in "${PKGS[@]}"; do
		[ -n "${ok[$name]:-}" ] || echo "$name"
	done
}

mapfile -t todo < <(missing)
if [ ${#todo[@]} -eq 0 ]; then
	echo "install-deps.sh: all ${#PKGS[@]} packages already installed"
	exit 0
fi
if [ "$check" = 1 ]; then
	echo "install-deps.sh: missing: ${todo[*]}"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: missing ${todo[*]}; run as root to install them" >&2
	exit 1
fi

echo "install-deps.sh: installing ${todo[*]}"
# tshark would ask whether non-root users may capture; answer "no" up front.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
# Wait for a concurrent apt/dpkg (another engineer, unattended-upgrades)
# instead of failing on its lock.
apt_opts=(-o DPkg::Lock::Timeout=300)
apt-get "${apt_opts[@]}" update
DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "${todo[@]}"

mapfile -t todo < <(missing)
if [ ${#todo[@]} -ne 0 ]; then
	echo "install-deps.sh: still missing after apt-get: ${todo[*]}; check the apt sources (Debian 12 main)" >&2
	exit 1
fi
echo "install-deps.sh: all ${#PKGS[@]} packages installed"
