#!/usr/bin/env bash
# Why each skipped test skipped:  bash tools/skip-reasons.sh CTEST_OUTPUT LAST_TEST_LOG
#
# CTEST_OUTPUT is what ctest printed (its "The following tests did not run:" list names the
# skipped tests), LAST_TEST_LOG the build's Testing/Temporary/LastTest.log (every test's
# output: ctest's --output-on-failure shows none for a skipped test). Prints one line per
# skipped test, "skipped: NAME: REASON": the test's output lines that speak of skipping (the
# tests' convention: "matplotlib is not installed (apt-get install python3-matplotlib):
# skipped"), or else its last line. Prints nothing when no test was skipped.
set -euo pipefail

if (($# != 2)); then
    echo "usage: bash tools/skip-reasons.sh CTEST_OUTPUT LAST_TEST_LOG" >&2
    exit 2
fi
for file in "$@"; do
    [[ -r "$file" ]] || { echo "tools/skip-reasons.sh: cannot read $file" >&2; exit 1; }
done

# "	  3 - area/name (Skipped)" -> area/name
skipped=$(awk '/^The following tests did not run:/ { on = 1; next }
               on && !/[^[:space:]]/ { on = 0 }
               on && /\(Skipped\)[[:space:]]*$/ { sub(/^[[:space:]]*[0-9]+ - /, "");
                                                  sub(/ \(Skipped\)[[:space:]]*$/, ""); print }' "$1")
[[ -n "$skipped" ]] || exit 0

# A test's output in LastTest.log: after its '"NAME" start time:' line, between "Output:" plus
# a line of dashes and "<end of output>".
awk -v names="$skipped" '
    BEGIN { n = split(names, list, "\n"); for (i = 1; i <= n; i++) wanted["\"" list[i] "\""] = 1 }
    / start time: / { name = substr($0, 1, index($0, " start time: ") - 1)
                      test = (name in wanted) ? name : ""; next }
    test != "" && /^Output:$/ { state = 1; next }
    state == 1 { state = 2; reason = ""; last = ""; next }  # the line of dashes
    state == 2 && /^<end of output>$/ {
        if (reason == "") reason = (last == "" ? "(it printed no reason)" : last)
        print "skipped: " substr(test, 2, length(test) - 2) ": " reason
        state = 0; test = ""; next }
    state == 2 && /[^[:space:]]/ { last = $0
                                   if (tolower($0) ~ /skip/) reason = (reason == "" ? $0 : reason "; " $0) }
' "$2"
