#!/usr/bin/env bash
# A webhook receiver for benchmarks: Debian's nginx on loopback answering 204 to every request (the body read and
# dropped), so the measured cost is the sender's, not the receiver's.
# Usage: Scripts/nginx-receiver.sh PORT FOLDER   -> starts nginx in the background and prints its process id
set -euo pipefail
port="${1:?PORT}"
prefix="$(mkdir -p "${2:?FOLDER}" && cd "$2" && pwd)"
source "$(dirname "$0")/nginx-lib.sh"
nginx_start "$prefix" "  server {
    listen 127.0.0.1:$port;
    location / { client_max_body_size 1m; client_body_buffer_size 64k; return 204; }
  }" "http://127.0.0.1:$port/hooks" -X POST --data x
