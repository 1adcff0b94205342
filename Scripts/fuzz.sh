#!/usr/bin/env bash
# Builds the libFuzzer targets over every parser of untrusted bytes and runs each for a
# bounded time.
#
# Usage: Scripts/fuzz.sh [--smoke] [SECONDS] [TARGET...]
#   SECONDS   per target (default 60); --smoke: 10 s each, what CI runs (make fuzz-smoke)
#   TARGET    a folder of Fuzz/ (default: all of them)
#   FUZZ_FLAGS more libFuzzer flags (FUZZ_FLAGS='-fork=1 -ignore_crashes=1' goes on past a crash)
#
# Targets (Fuzz/NAME/main.swift, each with Fuzz/Common/):
#   VerifyFuzzer         image sniffing, the structural walkers, every verification level
#   IndexFuzzer          index bucket files: the table's header, fence and blocks, log lines
#   FailureRecordFuzzer  failed-URL and host-down record files
#   CacheFormatFuzzer    a cache directory's FORMAT file
#   TableInputFuzzer     CSV, TSV, JSON Lines and plain lists, plain and gzipped
#   ConfigFuzzer         the config file and the command line
#   URLFuzzer            URL identity and password masking
#   ResizeFuzzer         the resize path: every decoder, canvases, orientation, resample, encode
#   ResponseHeadFuzzer   HTTP response heads: status, Retry-After, digests, X-Robots-Tag, codings
#   CacheCountersFuzzer  usage/ counter files and the trim's arithmetic over them
#   KeyQueryFilterFuzzer --key-ignore-query globs and the key text they keep
#   ExifFuzzer           the EXIF Orientation in a JPEG, WebP or PNG, and the turn it asks for
#   AVIFFuzzer           AVIF through libavif: the verify decode, the resize decode and its turns
#
# SDFetchCore (and for ConfigFuzzer the sdfetch module, without its entry point) is
# compiled once with swiftc -sanitize=fuzzer,address into a static library, with
# -enable-testing so a target reaches internal parsers. libcurl, libpng, libjpeg-turbo,
# giflib, libwebp, libavif, zlib, libcrypto (SHA-256) and hiredis are the system's
# uninstrumented builds: ASan still catches our misuse of them, but coverage guidance sees
# only our code.
#
# Each target's corpus lives in ./fuzz-corpus/TARGET (git-ignored) and is seeded every run
# by Scripts/fuzz-seeds.py (and the image fixtures for VerifyFuzzer), so it grows across
# runs. Crash, leak and timeout inputs land in .build/fuzz/artifacts/TARGET/, each run's log
# in .build/fuzz/logs/TARGET.log. Every target runs even after one fails; the script exits
# non-zero when any found something, after a line per target: inputs run, coverage, result.
set -euo pipefail

seconds=60
if [[ "${1:-}" == "--smoke" ]]; then
    seconds=10
    shift
fi
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    seconds="$1"
    shift
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/.build/fuzz"
modules="$build/modules"
clang="$(dirname "$(command -v swiftc)")/clang"
all_targets=(VerifyFuzzer IndexFuzzer FailureRecordFuzzer CacheFormatFuzzer TableInputFuzzer ConfigFuzzer URLFuzzer
    ResizeFuzzer ResponseHeadFuzzer CacheCountersFuzzer KeyQueryFilterFuzzer ExifFuzzer AVIFFuzzer)
targets=("${@:-${all_targets[@]}}")
mkdir -p "$build/shims" "$modules" "$build/logs"

# SwiftPM makes a module for a C target's include/ folder; swiftc needs one written out.
cat > "$build/shims/module.modulemap" <<MAP
module CSDFetchShims {
    header "$root/Sources/CSDFetchShims/include/CSDFetchShims.h"
    export *
}
MAP
c_modules=(-I "$root/Sources/CCurl" -I "$root/Sources/CPNG" -I "$root/Sources/CJPEG" -I "$root/Sources/CGIF"
    -I "$root/Sources/CZlib" -I "$root/Sources/CWebP" -I "$root/Sources/CAvif" -I "$root/Sources/CCrypto"
    -I "$root/Sources/CHiredis" -I "$build/shims" -Xcc -I/usr/include/libpng16)
swift_flags=(-parse-as-library -O -wmo -g -swift-version 6 -package-name sdfetch -I "$modules" "${c_modules[@]}")
system_libraries=(-lcurl -ljpeg -lpng16 -lgif -lz -lwebp -lwebpdemux -lavif -lcrypto -lhiredis)

"$clang" -c -g -O1 -fsanitize=address,fuzzer-no-link \
    -I "$root/Sources/CSDFetchShims/include" \
    "$root/Sources/CSDFetchShims/jpeg.c" -o "$build/jpeg.o"

# A static library and its module: NAME, then its sources; kept when none is newer.
library() {
    local name="$1"
    shift
    local archive="$build/lib$name.a"
    if [[ -f "$archive" && -z "$(find "$@" -newer "$archive" | head -1)" ]]; then
        return
    fi
    swiftc "${swift_flags[@]}" -sanitize=fuzzer,address -enable-testing -module-name "$name" \
        -emit-library -static -emit-module -emit-module-path "$modules/$name.swiftmodule" \
        "$@" -o "$build/lib$name.a"
}
library SDFetchCore $(find "$root/Sources/SDFetchCore" -name '*.swift' | sort)
if [[ " ${targets[*]} " == *" ConfigFuzzer "* ]]; then
    library sdfetch $(find "$root/Sources/sdfetch" -name '*.swift' ! -name SDFetchMain.swift | sort)
fi

corpus_root="$root/fuzz-corpus"
python3 "$root/Scripts/fuzz-seeds.py" "$corpus_root"
cp "$root"/Tests/SDFetchUnitTests/Fixtures/* "$corpus_root/VerifyFuzzer/"
mkdir -p "$corpus_root/AVIFFuzzer"
cp "$root"/Tests/sdfetchTests/Fixtures/*.avif "$root"/Tests/SDFetchUnitTests/Fixtures/*.avif "$corpus_root/AVIFFuzzer/"

# -timeout: one input taking over 10 s is a hang. -rss_limit_mb: memory exhaustion is a
# bug (-malloc_limit_mb: so is one allocation past it). -max_len: the parsers' interesting
# inputs are small; 64 KiB keeps runs fast (a gzipped list still inflates to megabytes).
failed=()
summary=()
for target in "${targets[@]}"; do
    extra=()
    [[ "$target" == ConfigFuzzer ]] && extra=("$build/libsdfetch.a")
    swiftc "${swift_flags[@]}" -sanitize=fuzzer,address -module-name "$target" \
        "$root"/Fuzz/Common/*.swift "$root/Fuzz/$target/main.swift" \
        "${extra[@]}" "$build/libSDFetchCore.a" "$build/jpeg.o" \
        "${system_libraries[@]}" -use-ld=lld -o "$build/$target"
    mkdir -p "$corpus_root/$target" "$build/artifacts/$target"
    log="$build/logs/$target.log"
    status=0
    "$build/$target" "$corpus_root/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
        -artifact_prefix="$build/artifacts/$target/" -print_final_stats=1 ${FUZZ_FLAGS:-} > "$log" 2>&1 || status=$?
    runs="$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    coverage="$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]*' | tail -1 || true)"
    if [[ $status -ne 0 ]]; then
        failed+=("$target")
        summary+=("$target: FAILED (exit $status) after $runs inputs, ${coverage:-no coverage line}; see $log")
    else
        summary+=("$target: $runs inputs in ${seconds}s, ${coverage:-no coverage line}")
    fi
done
printf '%s\n' "${summary[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: ${failed[*]} found something: inputs in $build/artifacts/" >&2
    exit 1
fi
