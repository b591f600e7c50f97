#!/usr/bin/env bash
# memif_fault.sh - memif ping through the fault wrapper at 20% loss each way.
FAULT="drop=20%" COUNT=200 INTERVAL=20 exec "$(dirname "$0")/memif_ping.sh" "$@"
