#!/usr/bin/env bash
# Runs a build command, shows its output, and fails when the output holds a warning, so
# the build stays quiet and CI (`make test`) stops on a new one instead of scrolling past.
# Usage: Scripts/quiet-build.sh swift build --build-tests
#
# Only the project's own warnings count. SwiftPM compiles dependencies' Swift code with
# -suppress-warnings and their C code with -w, so they print none; a line that names a
# file under .build/checkouts is skipped all the same, and so is SwiftPM's own warning about
# a dependency's package ("warning: 'PACKAGE': found 1 file(s) which are
# unhandled"), which only its maintainers can fix.
# Linker warnings count: they are the project's (its choice of what to link). A build that
# compiles nothing prints nothing: the check sees what was compiled in this build, and a
# clean clone (CI) compiles everything.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || exit "$status"
warnings=$(grep -E ": warning: |^warning: " "$log" | grep -v '/\.build[^/]*/checkouts/' | while IFS= read -r line; do
    case $line in
        "warning: '"*)
            package=${line#"warning: '"}
            [ -d ".build/checkouts/${package%%\'*}" ] && continue ;;
    esac
    printf '%s\n' "$line"
done | sort -u)
if [ -n "$warnings" ]; then
    echo >&2
    echo "quiet-build: the build printed $(printf '%s\n' "$warnings" | wc -l) distinct warning(s); fix them:" >&2
    printf '%s\n' "$warnings" >&2
    exit 1
fi
