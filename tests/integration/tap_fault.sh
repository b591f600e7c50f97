#!/usr/bin/env bash
# tap_fault.sh - tap ping through the fault wrapper at 20% loss each way.
FAULT="drop=20%" COUNT=200 exec "$(dirname "$0")/tap_ping.sh" "$@"
