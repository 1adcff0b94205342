#!/usr/bin/env bash
# The docs checks CI runs (make docs-check), each able to fail on its own:
# 1. SDFetchCore.md's map names every folder and target, and the paths the articles and the
#    README cite exist (Scripts/check-docs.py);
# 2. every DocC symbol link (``DiskCache/lookup(_:serving:now:)``) and article link
#    (<doc:Pipeline>) in SDFetchCore's comments and articles resolves: docc builds the
#    catalog over the library's symbol graph, internal symbols included, and any warning
#    but a parameter left undocumented fails;
# 3. `swift format lint --strict` with the project's .swift-format passes over every Swift file.
# Uses the debug build's products when present (make build-tests makes them).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

echo "docs-check: map and cited paths"
python3 Scripts/check-docs.py || status=1

echo "docs-check: DocC links"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/graphs"
# SwiftPM says where it wrote the symbol graphs ("Files written to DIR").
if swift package dump-symbol-graph --minimum-access-level private > "$work/dump.log" 2>&1 &&
    graphs="$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -1)" && [ -n "$graphs" ] &&
    cp "$graphs"/SDFetchCore*.symbols.json "$work/graphs/"; then
    if ! docc convert Sources/SDFetchCore/SDFetchCore.docc --additional-symbol-graph-dir "$work/graphs" \
        --output-path "$work/out" --fallback-display-name SDFetchCore \
        --fallback-bundle-identifier sdfetch.SDFetchCore > "$work/docc.log" 2>&1; then
        cat "$work/docc.log"
        status=1
    fi
    # The first line of each warning, with the place that follows it.
    if grep -A1 -E '^(warning|error):' "$work/docc.log" | grep -v -E '^--$' |
        awk '/^(warning|error):/ { keep = ($0 !~ /is missing documentation$/) } keep' | grep .; then
        echo "docs-check: DocC links that resolve to nothing (above)" >&2
        status=1
    fi
else
    cat "$work/dump.log"
    echo "docs-check: no symbol graph for SDFetchCore" >&2
    status=1
fi

echo "docs-check: swift format lint"
swift format lint --strict --recursive Package.swift Sources Tests Fuzz Bench || status=1

exit $status
