#!/usr/bin/env bash
# check_format.sh - every C source and header is formatted to .clang-format
# (clang-format 14, Debian 12's). Fails naming each file that is not, with
# the command that fixes it.
#
# usage: tests/style/check_format.sh SOURCE_ROOT
set -u
root=${1:?usage: check_format.sh SOURCE_ROOT}
cd "$root" || exit 1
if ! command -v clang-format >/dev/null; then
	echo "check_format: clang-format is not installed; scripts/install-deps.sh installs it" >&2
	exit 1
fi
# The tracked files in a git checkout; every .c/.h under the source folders otherwise.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h')
else
	mapfile -t files < <(find src tools tests bench bpf -name '*.[ch]' | sort)
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "check_format: no C files found under $root" >&2
	exit 1
fi
bad=()
for f in "${files[@]}"; do
	clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
echo "check_format: ${#files[@]} files, ${#bad[@]} not formatted ($(clang-format --version))"
if [ ${#bad[@]} -gt 0 ]; then
	printf '  %s\n' "${bad[@]}"
	echo "fix with: clang-format -i ${bad[*]}"
	exit 1
fi
