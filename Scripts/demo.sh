#!/usr/bin/env bash
# `make demo`: runs sdfetch's main job against the bundled local image server.
# Starts the server on a free loopback port, fetches a sample list (duplicates, a broken
# URL, an HTML page served as 200, a redirect, an invalid line) twice into a fresh cache,
# shows what happened, and stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${SDFETCH:-.build/debug/sdfetch}
work=$(mktemp -d "${TMPDIR:-/tmp}/sdfetch-demo.XXXXXX")
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

python3 Scripts/demo/image-server.py --port-file "$work/port" &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || { echo "demo: image server did not start" >&2; exit 1; }
base="http://127.0.0.1:$(cat "$work/port")"

{
    echo "# sdfetch demo list: 12 images, each listed twice in different spellings"
    for i in $(seq -w 0 11); do echo "$base/images/photo-$i.png"; done
    for i in $(seq -w 0 11); do echo "${base/http:/HTTP:}/images/photo-$i.png#again"; done
    echo "$base/moved.png"
    echo "$base/missing.png"
    echo "$base/error-page.png"
    echo "not a url"
} > "$work/urls.txt"

run() {
    echo
    echo "\$ sdfetch --cache-dir CACHE -o OUT urls.txt    # $1"
    set +e
    "$binary" --cache-dir "$work/cache" -o "$work/out" "$work/urls.txt" 2>"$work/stderr" | sed "s#$work#WORK#g"
    status=${PIPESTATUS[0]}
    set -e
    echo "standard error:"
    sed "s#$work#WORK#g; s/^/  /" "$work/stderr"
    echo "exit status: $status (1 = some URL failed, as expected for this list)"
}

# The server's request counts (count, path), without the asks for them.
requests() {
    python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())" "$base/stats" | grep -v '/stats$' || true
}

echo "demo: image server at $base (BASE below); the list, urls.txt, numbered as sdfetch reports lines:"
sed "s#$base#BASE#g; s#${base/http:/HTTP:}#HTTP-BASE#g" "$work/urls.txt" | cat -n
run "first run: downloads each image once"
requests > "$work/after-first"
run "second run: served from the cache, no request for fresh entries"
echo
echo "requests the server received (count, path):"
requests | tee "$work/after-second"
# /moved.png redirects to /images/photo-00.png, which the list also names; an entry's key is
# the listed URL, not where a redirect ends, so the target is fetched for each of the two.
echo "(/images/photo-00.png twice: once for its own line, once as where /moved.png redirects;"
echo " each listed URL is its own cache entry and was fetched once)"
if cmp -s "$work/after-first" "$work/after-second"; then
    echo "requests during the second run: none"
else
    echo "requests during the second run:"
    diff "$work/after-first" "$work/after-second" | sed -n 's/^> /  /p'
fi
echo
echo "files in the output directory:"
ls "$work/out" | head -20
echo
# The advice names the binary this demo ran: `sdfetch` and its man page exist only after
# `make install`.
echo "next: put your own URLs in a file, one per line, and run"
echo "  $binary urls.txt -o images     # or a single URL: $binary https://example.com/a.png"
echo "then '$binary stats' for the cache and '$binary --help' for the rest."
if [ "$binary" = .build/debug/sdfetch ]; then
    echo "This is a debug build, about ten times slower at --resize: 'make release' builds"
    echo ".build/release/sdfetch; 'make install PREFIX=\$HOME/.local' puts sdfetch and 'man sdfetch' on your PATH."
fi
