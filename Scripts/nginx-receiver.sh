#!/usr/bin/env bash
# A webhook receiver for benchmarks: Debian's nginx on loopback answering 204 to every request (the body read and
# dropped), so the measured cost is the sender's, not the receiver's.
# Usage: Scripts/nginx-receiver.sh PORT FOLDER   -> starts nginx in the background and prints its process id
set -euo pipefail
port="${1:?PORT}"
prefix="$(mkdir -p "${2:?FOLDER}" && cd "$2" && pwd)"
[ -x /usr/sbin/nginx ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null 2>&1
mkdir -p "$prefix/temp"
cat >"$prefix/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $prefix/nginx.pid;
error_log $prefix/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $prefix/temp;
  proxy_temp_path $prefix/temp;
  fastcgi_temp_path $prefix/temp;
  uwsgi_temp_path $prefix/temp;
  scgi_temp_path $prefix/temp;
  server {
    listen 127.0.0.1:$port;
    location / { client_max_body_size 1m; client_body_buffer_size 64k; return 204; }
  }
}
CONF
/usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/error.log" >/dev/null 2>&1 &
echo $!
for _ in $(seq 1 100); do
  curl -fs -o /dev/null -X POST --data x "http://127.0.0.1:$port/hooks" && exit 0
  sleep 0.05
done
echo "nginx did not start on $port" >&2
exit 1
