#!/usr/bin/env bash
# tcp_httpd.sh - lunar-httpd on af_xdp in namespace B, driven by the
# kernel's HTTP clients in A: curl downloads and uploads SHA-256 exact,
# keep-alive, 404, a malformed request answered 400, a target with leading
# slashes kept under the root, temporary upload names refused, and wrk with 1, 16
# and 64 connections with zero errors. SIZE (64M) and WRK_SECONDS (3)
# are raised by the long suite (1G, 10).
source "$(dirname "$0")/lib.sh"
setup_test tcp_httpd "$1"
HTTPD="$BUILD/tools/lunar-httpd"
size=${SIZE:-64M}
secs=${WRK_SECONDS:-3}

"$TOPO" veth up >/dev/null
on_exit "$TOPO" veth down
A="ip netns exec lunar-a" B="ip netns exec lunar-b"
root="$OUT/root"
mkdir -p "$root"
head -c "$(numfmt --from=iec "$size")" /dev/urandom >"$root/big.bin"
head -c 512 /dev/urandom >"$root/small.bin"
want=$(sha256sum "$root/big.bin" | cut -c1-64)

bg httpd $B "$HTTPD" --port af_xdp:veth-b --core 1 --listen 8080 --root "$root" --counters \
	--header-timeout 1 --idle-timeout 2
wait_for "lunar-httpd ready" 100 grep -q ready "$OUT/httpd.log"
url=http://10.77.0.2:8080

# Download and upload, SHA-256 exact.
got=$($A curl -sS --max-time 120 "$url/big.bin" | sha256sum | cut -c1-64)
expect_eq "curl GET $size: SHA-256" "$got" "$want"
answer=$($A curl -sS --max-time 120 -T "$root/big.bin" "$url/up.bin")
expect_eq "curl PUT $size: SHA-256 the server computed" "$(echo "$answer" | tr -d '[:space:]')" "$want"
expect_eq "curl PUT $size: SHA-256 of the stored file" "$(sha256sum "$root/up.bin" | cut -c1-64)" "$want"

# Keep-alive: two requests on one connection; a missing file is 404.
$A curl -sS -v --max-time 10 -o /dev/null -o /dev/null "$url/small.bin" "$url/nope" >"$OUT/ka.log" 2>&1
expect_grep "keep-alive: the second request reused the connection" "Re-using existing connection" "$OUT/ka.log"
expect_grep "missing file: 404" "< HTTP/1.1 404" "$OUT/ka.log"
reply=$(printf 'GARBAGE\r\n\r\n' | $A socat -t 5 - TCP:10.77.0.2:8080 | head -1 | tr -d '\r')
expect_eq "malformed request: 400" "$reply" "HTTP/1.1 400 Bad Request"
# A target with leading slashes stays under the root ("//etc/x" is etc/x there, never /etc/x).
mkdir -p "$root/etc" && echo inside-root >"$root/etc/hostname"
got=$($A curl -sS --max-time 10 --path-as-is "$url//etc/hostname")
expect_eq "//etc/hostname: the root's etc/hostname" "$got" "inside-root"
# No request may name an upload's temporary file.
code=$($A curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -T "$root/small.bin" "$url/.lunar-put.1.2.3")
expect_eq "PUT of a temporary file's name: refused" "$code" 400

# A request with Connection: close and a stray byte after it: the byte is
# never read, and closing with it unread used to reset the connection and
# throw away the file's tail still queued. Lingering close: all of it arrives.
cat >"$OUT/raw_http.py" <<'PY'
import hashlib, socket, sys
host, port, req, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode(), float(sys.argv[4])
s = socket.create_connection((host, port))
s.settimeout(timeout)
s.sendall(req.decode("unicode_escape").encode("latin-1"))
data = b""
try:
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        data += b
except (ConnectionResetError, socket.timeout) as e:
    print("ERROR", type(e).__name__)
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode(), len(body), hashlib.sha256(body).hexdigest())
PY
# (4 MiB: more than the 1 MiB send buffer, so the tail is still queued at the close.)
head -c 4M /dev/urandom >"$root/mid.bin"
got=$($A /usr/bin/python3 "$OUT/raw_http.py" 10.77.0.2 8080 \
	'GET /mid.bin HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nX' 60)
expect_eq "Connection: close with a stray byte after: the whole file, then EOF" "$got" \
	"HTTP/1.1 200 OK 4194304 $(sha256sum "$root/mid.bin" | cut -c1-64)"
# A header that never completes is answered 408 (--header-timeout 1); an idle connection closes (--idle-timeout 2).
got=$($A /usr/bin/python3 "$OUT/raw_http.py" 10.77.0.2 8080 'GET /small.bin HTTP/1.1\r\n' 30)
expect_eq "a header not finished in time: 408, then EOF" "$(echo "$got" | cut -d' ' -f1-3)" \
	"HTTP/1.1 408 Request"
got=$($A /usr/bin/python3 "$OUT/raw_http.py" 10.77.0.2 8080 '' 30)
expect_eq "an idle connection: closed (EOF, no reply)" "$got" " 0 $(printf '' | sha256sum | cut -c1-64)"

# wrk: no errors of any kind (non-2xx or socket errors) at 1, 16 and 64 connections.
for c in 1 16 64; do
	$A wrk -t1 -c"$c" -d"${secs}s" --timeout 5s "$url/small.bin" >"$OUT/wrk$c.log" 2>&1
	expect_eq "wrk -c$c: exit code" "$?" 0
	expect_ge "wrk -c$c: requests completed" "$(awk '/requests in/ {print $1}' "$OUT/wrk$c.log")" 100
	if grep -qE "Socket errors|Non-2xx" "$OUT/wrk$c.log"; then
		fail "wrk -c$c reported errors: $(grep -E 'Socket errors|Non-2xx' "$OUT/wrk$c.log")"
	else
		pass "wrk -c$c: zero errors ($(awk '/Requests\/sec/ {print $2}' "$OUT/wrk$c.log") req/s)"
	fi
done

stop httpd
expect_eq "lunar-httpd exit code" "$RC_httpd" 0
expect_grep "lunar-httpd leaked no Zbuf object" "^zbuf: 0 objects in use" "$OUT/httpd.log"
expect_grep "lunar-httpd counted the timeouts" "header_timeouts [1-9][0-9]* idle_timeouts [1-9]" "$OUT/httpd.log"
