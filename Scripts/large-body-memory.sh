#!/usr/bin/env bash
# Peak memory of one cold run over large images at high concurrency (SDFetchCore.docc, OnDiskFormat:
# 256 images of about 20 MB at -j 256 must stay under 300 MB).
#
# Usage: Scripts/large-body-memory.sh [COUNT] [J] [MB]     (defaults 256 256 20)
#
# Makes one noise JPEG of about MB megabytes (cjpeg -quality 100 over random pixels), serves
# it under COUNT names with the bench's private nginx on 127.0.0.1, runs the release binary
# once with an empty cache under GNU time, prints its peak RSS and checks every entry is
# byte-identical to the served file. Scratch space: ${TMPDIR:-/tmp}/sdfetch-bigmem-$UID
# (removed at the end). Needs nginx-light, time, libjpeg-turbo-progs, python3.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
count="${1:-256}" j="${2:-256}" megabytes="${3:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${SDFETCH_BIN:-$root/.build/release/sdfetch}"
work="${TMPDIR:-/tmp}/sdfetch-bigmem-$(id -u)"
port="${PORT:-18590}"
[ -x "$bin" ] || { echo "large-body-memory: build first (make release)" >&2; exit 2; }
for tool in nginx cjpeg /usr/bin/time python3; do
    command -v "$tool" >/dev/null || { echo "large-body-memory: needs $tool" >&2; exit 2; }
done
rm -rf "$work"
mkdir -p "$work/www/img"
trap '"$root/Scripts/bench.d/serve.sh" stop "$work/nginx" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# Random RGB compresses to about 1.9 bytes per pixel at quality 100.
side="$(python3 -c "import math; print(int(math.sqrt($megabytes * 1e6 / 1.9)))")"
python3 -c "import os, sys; sys.stdout.buffer.write(b'P6\n$side $side\n255\n' + os.urandom($side * $side * 3))" |
    cjpeg -quality 100 >"$work/www/img/base.jpg"
for ((i = 0; i < count; i++)); do ln -s base.jpg "$work/www/img/$i.jpg"; echo "http://127.0.0.1:$port/img/$i.jpg"; done >"$work/urls.txt"
"$root/Scripts/bench.d/serve.sh" start "$work/www" "$port" "$work/nginx" >/dev/null

size="$(stat -c %s "$work/www/img/base.jpg")"
/usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" \
    "$bin" --no-config --cache-dir "$work/cache" -j "$j" --max-cache-size 64G "$work/urls.txt" >"$work/out.txt" 2>"$work/err.txt" || true
read -r wall user system peak <"$work/time.txt"
identical=0
while IFS=$'\t' read -r status path _; do
    [ "$status" = downloaded ] && cmp -s "$path" "$work/www/img/base.jpg" && identical=$((identical + 1))
done <"$work/out.txt"
echo "$count images of $size bytes at -j $j: $wall s wall, $user s user, $system s system"
echo "peak RSS $((peak / 1024)) MiB; $identical of $count entries byte-identical; $(ls "$work/cache/tmp" | wc -l) files left in tmp/"
