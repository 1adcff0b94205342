#!/usr/bin/env bash
# Measures verification speed (MB/s) per format and level over a directory of images.
#
# Usage: Scripts/verify-bench.sh DIR [ROUNDS] [LEVEL ...]
#   e.g. python3 Scripts/bench.d/corpus.py /tmp/corpus 2000 && Scripts/verify-bench.sh /tmp/corpus/img
#
# Builds Bench/VerifyBench with swiftc -O (whole module) together with the sources of
# SDFetchCore's Formats/ and Verification/ folders and the C shim jpeg.c: no SwiftPM
# product, so CI builds nothing extra. The binary lands in .build/verify-bench/.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/.build/verify-bench"
clang="$(dirname "$(command -v swiftc)")/clang"
mkdir -p "$build/shims"

cat > "$build/shims/module.modulemap" <<MAP
module CSDFetchShims {
    header "$root/Sources/CSDFetchShims/include/CSDFetchShims.h"
    export *
}
MAP

"$clang" -c -O2 -I "$root/Sources/CSDFetchShims/include" "$root/Sources/CSDFetchShims/jpeg.c" -o "$build/jpeg.o"

swiftc -O -wmo -parse-as-library -swift-version 6 -module-name VerifyBench \
    -I "$root/Sources/CPNG" -I "$root/Sources/CJPEG" -I "$root/Sources/CGIF" -I "$root/Sources/CZlib" \
    -I "$build/shims" -Xcc -I/usr/include/libpng16 \
    "$root"/Sources/SDFetchCore/Formats/*.swift \
    "$root"/Sources/SDFetchCore/Verification/*.swift \
    "$root/Sources/SDFetchCore/Fetching/FetchFailure.swift" \
    "$root/Sources/SDFetchCore/System/Interruption.swift" \
    "$root/Bench/VerifyBench/main.swift" \
    "$build/jpeg.o" -ljpeg -lpng16 -lgif -lz \
    -o "$build/verify-bench"

"$build/verify-bench" "$@"
