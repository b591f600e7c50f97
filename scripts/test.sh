#!/usr/bin/env bash
# test.sh - lunar's test command: from a fresh Debian 12 machine, install
# what is needed, reserve hugepages, build the release, ASan+UBSan and fuzz
# builds (and a ThreadSanitizer build of the threaded tests), run every
# suite, and end with one line "N passed, N failed".
# Exits non-zero if anything failed. Run as root (namespaces, XDP, hugepages).
#
#   scripts/test.sh            everything CI runs
#   scripts/test.sh --quick    release build, unit + integration only
#   scripts/test.sh --long     also the long runs (see docs/TESTING.md)
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
quick=0 long=0
for a in "$@"; do
	case "$a" in
	--quick) quick=1 ;;
	--long) long=1 ;;
	-h | --help) sed -n '2,10p' "$0"; exit 0 ;;
	*) echo "test.sh: unknown option $a (try --help)" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "test.sh: run as root: the tests create network namespaces, attach XDP programs and reserve hugepages" >&2
	exit 2
fi

log_dir="$here/build-logs"
mkdir -p "$log_dir"
passed=0 failed=0 skipped=0
failures=()

step() { printf '\n== %s\n' "$*"; }

# Run a meson test invocation and add its counts to the totals.
run_suite() {
	local label=$1 builddir=$2
	shift 2
	local out="$log_dir/$label.txt"
	meson test -C "$builddir" --print-errorlogs --num-processes 1 "$@" 2>&1 | tee "$out" | grep -E '^ *[0-9]+/[0-9]+ ' || true
	local ok fail
	ok=$(awk '/^Ok:/ {print $2}' "$out" | tail -1)
	fail=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $2} END {print s + 0}' "$out")
	ok=${ok:-0}
	local skip
	skip=$(awk '/^Skipped:/ {print $2}' "$out" | tail -1)
	skipped=$((skipped + ${skip:-0}))
	if [ "$ok" = 0 ] && [ "$fail" = 0 ] && ! grep -q '^Ok:' "$out" &&
		! grep -q 'No suitable tests defined' "$out"; then
		fail=1 # meson itself failed (no summary): count it
	fi
	passed=$((passed + ok))
	failed=$((failed + fail))
	[ "$fail" = 0 ] || {
		failures+=("$label (see $out)")
		# Why, in the run's own output: failed assertions, sanitizer and
		# fuzzer reports (the whole logs stay in $out).
		grep -E '^(FAIL: |==[0-9]+== ?ERROR|SUMMARY: |.*runtime error: )' "$out" | head -40 | sed 's/^/  | /'
	}
}

# The programs the tests of meson suite @2 in build dir @1 run, as ninja targets.
suite_targets() {
	meson introspect "$1" --tests | /usr/bin/python3 -c '
import json, os, sys
root, suite = os.path.realpath(sys.argv[1]), sys.argv[2]
for t in json.load(sys.stdin):
    if any(s == suite or s.endswith(":" + suite) for s in t["suite"]):
        print(os.path.relpath(os.path.realpath(t["cmd"][0]), root))' "$1" "$2"
}

# build DIR MESON_OPTIONS...: set up once, then build everything, or with
# BUILD_SUITE set only what that suite's tests run.
build() {
	local dir=$1 targets=()
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$log_dir/setup-$(basename "$dir").txt" 2>&1 || {
			cat "$log_dir/setup-$(basename "$dir").txt"
			return 1
		}
	fi
	if [ -n "${BUILD_SUITE:-}" ]; then
		mapfile -t targets < <(suite_targets "$dir" "$BUILD_SUITE")
		[ ${#targets[@]} -gt 0 ] || { echo "no tests in suite $BUILD_SUITE"; return 1; }
	fi
	ninja -C "$dir" "${targets[@]}" >"$log_dir/ninja-$(basename "$dir").txt" 2>&1 || {
		tail -40 "$log_dir/ninja-$(basename "$dir").txt"
		return 1
	}
}

build_or_fail() {
	local label=$1
	shift
	if ! build "$@"; then
		failed=$((failed + 1))
		failures+=("build $label")
		return 1
	fi
}

step "dependencies"
scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
step "hugepages"
scripts/hugepages.sh || { echo "0 passed, 1 failed"; exit 1; }
scripts/topo.sh down-all >/dev/null 2>&1 || true

step "release build"
if build_or_fail release build -Dbuildtype=release; then
	step "unit tests (release)"
	run_suite unit-release build --suite unit --suite unit-root
	step "integration tests (release)"
	run_suite integration-release build --suite integration
	if [ "$long" = 1 ]; then
		step "long tests (release)"
		run_suite long-release build --suite long
	fi
fi

if [ "$quick" = 0 ]; then
	step "ASan+UBSan build"
	# UBSan only prints by default: make every finding fail the test that hit it.
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
	if build_or_fail asan build-asan -Dbuildtype=debug -Db_lto=false -Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=undefined; then
		step "unit and integration tests (ASan+UBSan)"
		run_suite unit-asan build-asan --suite unit --suite unit-root
		run_suite integration-asan build-asan --suite integration
	fi
	step "ThreadSanitizer build (the threads suite)"
	# Only what the threads suite runs (the tests whose threads share memory:
	# dispatch channels, Zbuf from several threads, the kernel poller,
	# lunar-loopdemo's self-test), to keep CI short.
	if BUILD_SUITE=threads build_or_fail tsan build-tsan -Dbuildtype=debug -Db_lto=false \
		-Db_sanitize=thread -Db_lundef=false; then
		step "tests whose threads share memory (ThreadSanitizer)"
		TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tests/tsan.supp" \
			run_suite threads-tsan build-tsan --suite threads
	fi
	step "fuzz build (clang, libFuzzer)"
	if CC=clang build_or_fail fuzz build-fuzz -Dbuildtype=debug -Db_lto=false -Dfuzz=true; then
		step "fuzz targets (short fixed runs)"
		run_suite fuzz build-fuzz --suite fuzz
	fi
fi

scripts/topo.sh down-all >/dev/null 2>&1 || true
if [ ${#failures[@]} -gt 0 ]; then
	printf '\nfailed:\n'
	printf '  %s\n' "${failures[@]}"
fi
echo
[ "$skipped" = 0 ] || echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
