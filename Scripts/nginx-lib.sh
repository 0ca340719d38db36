# Sourced by the nginx scripts for benchmarks: runs Debian's nginx (installed when missing) in the foreground of a
# background job, with everything it writes under one folder and no access log.
# nginx_start FOLDER HTTP_BLOCK_BODY CHECK_URL [CURL_ARGS...]
#   -> prints nginx's process id once CHECK_URL answers (curl -f), or stops it and fails after 5 s
nginx_start() {
  local prefix="$1" body="$2" check="$3"; shift 3
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
$body
}
CONF
  /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/error.log" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do
    if curl -fs -o /dev/null "$@" "$check"; then echo "$pid"; return 0; fi
    sleep 0.05
  done
  kill "$pid" 2>/dev/null || true
  echo "nginx did not start: $check does not answer" >&2
  return 1
}
