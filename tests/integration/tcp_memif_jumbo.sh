#!/usr/bin/env bash
# tcp_memif_jumbo.sh - TCP lunar to lunar over memif with a 9000-byte MTU.
MTU=9000 FAULT=none exec "$(dirname "$0")/tcp_memif_fault.sh" "$@"
