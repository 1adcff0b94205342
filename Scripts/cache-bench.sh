#!/bin/sh
# Measures the cache's performance targets (SPEC "Performance"):
#   warm run over 10,000 fresh entries: no request, >= 50,000 URLs/s (release build);
#   clean over 100,000 entries (half expired, then trimmed to half the bytes): < 2 s.
# usage: Scripts/cache-bench.sh [WORKDIR]     (run from the package root)
set -eu
work=${1:-$(mktemp -d)}
mkdir -p "$work"
swift build -c release --product sdfetch
bin="$(swift build -c release --product sdfetch --show-bin-path)/sdfetch"

rm -rf "$work/warm" && python3 Scripts/fill-cache.py "$work/warm" 10000 --list "$work/warm.txt"
"$bin" --cache-dir "$work/warm" "$work/warm.txt" > /dev/null   # first pass: page cache warm
for i in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" --cache-dir "$work/warm" "$work/warm.txt" > "$work/warm.out"
    end=$(date +%s.%N)
    cached=$(grep -c '^cached' "$work/warm.out" || true)
    echo "warm run $i: 10000 URLs, $cached cached, $(echo "$start $end" | awk '{printf "%.3f s, %.0f URLs/s", $2-$1, 10000/($2-$1)}')"
done

rm -rf "$work/big" && python3 Scripts/fill-cache.py "$work/big" 100000 --expired 0.5
SDFETCH_BENCH_CACHE="$work/big" swift test -c release --filter CacheBenchmark 2>&1 | grep 'bench:'
