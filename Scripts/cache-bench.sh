#!/bin/sh
# Measures the cache's performance targets (Scripts/bench.d/RESULTS.md):
#   warm run over 10,000 fresh entries: no request, >= 100,000 URLs/s (release build);
#   clean over 100,000 entries: < 1 s.
# Prints, for the warm run, the same binary over 10,000 invalid lines as a baseline: it
# shares the per-result costs outside the cache (event channel, one stdout write per line).
# usage: Scripts/cache-bench.sh [WORKDIR] [EXPIRED_FRACTION]   (from the package root)
set -eu
work=${1:-$(mktemp -d)}
expired=${2:-0.05}
mkdir -p "$work"
swift build -c release --product sdfetch
bin="$(swift build -c release --product sdfetch --show-bin-path)/sdfetch"

rate() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f s, %.0f URLs/s", e - s, 10000 / (e - s) }'; }
rm -rf "$work/warm" && python3 Scripts/fill-cache.py "$work/warm" 10000 --list "$work/warm.txt"
sed 's/^http/ftp/' "$work/warm.txt" > "$work/invalid.txt"
"$bin" --cache-dir "$work/warm" "$work/warm.txt" > /dev/null   # page cache warm
for i in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" --cache-dir "$work/warm" "$work/warm.txt" > "$work/warm.out"
    end=$(date +%s.%N)
    echo "warm run $i: $(grep -c '^cached' "$work/warm.out") of 10000 cached, $(rate "$start" "$end")"
    start=$(date +%s.%N)
    "$bin" --cache-dir "$work/warm" "$work/invalid.txt" > /dev/null 2>&1 || true
    end=$(date +%s.%N)
    echo "  baseline, 10000 invalid lines: $(rate "$start" "$end")"
done

rm -rf "$work/big" && python3 Scripts/fill-cache.py "$work/big" 100000 --expired "$expired"
SDFETCH_BENCH_WARM="$work/warm" SDFETCH_BENCH_CACHE="$work/big" \
    swift test -c release --filter CacheBenchmark 2>&1 | grep 'bench:'
