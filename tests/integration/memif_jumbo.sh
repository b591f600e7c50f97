#!/usr/bin/env bash
# memif_jumbo.sh - memif ping with a 9000-byte MTU and echoes that fill it.
MTU=9000 COUNT=10 exec "$(dirname "$0")/memif_ping.sh" "$@"
