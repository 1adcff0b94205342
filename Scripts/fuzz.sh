#!/usr/bin/env bash
# Builds the libFuzzer target over sniffing, the structural walkers and every verification
# level, and runs it for a bounded time.
#
# Usage: Scripts/fuzz.sh [SECONDS]   (default 60)
#
# The target (Fuzz/VerifyFuzzer/main.swift) is compiled with swiftc together with the
# sources of SDFetchCore's Formats/ and Verification/ folders, FetchFailure.swift, and the
# C shim jpeg.c, all with -sanitize=fuzzer,address. libpng, libjpeg-turbo and giflib are
# the system's uninstrumented builds: ASan still catches our misuse of them and their
# crashes, but coverage guidance sees only our code.
#
# The corpus lives in ./fuzz-corpus (git-ignored) and is seeded from the test fixtures
# every run, so it grows across runs. Crash, leak and timeout inputs land in
# .build/fuzz/artifacts/; the script exits non-zero when the fuzzer found one.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/.build/fuzz"
corpus="$root/fuzz-corpus"
clang="$(dirname "$(command -v swiftc)")/clang"
mkdir -p "$build/shims" "$build/artifacts" "$corpus"

# SwiftPM makes a module for a C target's include/ folder; swiftc needs one written out.
cat > "$build/shims/module.modulemap" <<MAP
module CSDFetchShims {
    header "$root/Sources/CSDFetchShims/include/CSDFetchShims.h"
    export *
}
MAP

"$clang" -c -g -O1 -fsanitize=address,fuzzer-no-link \
    -I "$root/Sources/CSDFetchShims/include" \
    "$root/Sources/CSDFetchShims/jpeg.c" -o "$build/jpeg.o"

swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    -swift-version 6 -module-name VerifyFuzzer \
    -I "$root/Sources/CPNG" -I "$root/Sources/CJPEG" -I "$root/Sources/CGIF" -I "$root/Sources/CZlib" \
    -I "$build/shims" \
    -Xcc -I/usr/include/libpng16 \
    "$root"/Sources/SDFetchCore/Formats/*.swift \
    "$root"/Sources/SDFetchCore/Verification/*.swift \
    "$root/Sources/SDFetchCore/Fetching/FetchFailure.swift" \
    "$root/Sources/SDFetchCore/System/Interruption.swift" \
    "$root/Fuzz/VerifyFuzzer/main.swift" \
    "$build/jpeg.o" -ljpeg -lpng16 -lgif -lz -use-ld=lld \
    -o "$build/verify-fuzzer"

cp "$root"/Tests/SDFetchCoreTests/Fixtures/* "$corpus"/
# The bombs and quirks of issues 12 and 16 join the seeds.
python3 "$root/Scripts/fuzz-seeds.py" "$corpus"

# -timeout: one input taking over 10 s is a hang. -rss_limit_mb: memory exhaustion is a bug.
# -max_len: headers and small images are where the parsers live; 64 KiB keeps runs fast.
"$build/verify-fuzzer" "$corpus" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$build/artifacts/" -print_final_stats=1
