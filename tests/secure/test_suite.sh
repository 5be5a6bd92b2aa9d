#!/usr/bin/env bash
# Secure mode must keep the allocator's contract: the compiled API, thread and fork tests that
# check behaviour (not statistics, which count a block as freed only when it leaves the
# quarantine, nor usable sizes, which are then the sizes asked for) pass with
# FITALLOC_SECURE=1, and with FITALLOC_SECURE_ZERO=1 as well. They are the tests named in
# suite.txt, built a second time with the secure library (<area>/test_<name>-secure).
set -euo pipefail
tests=()
while read -r name; do
    [[ -z $name || $name == \#* ]] || tests+=("${name%%/*}/test_${name#*/}-secure")
done <"$(dirname "${BASH_SOURCE[0]}")/suite.txt"
((${#tests[@]} > 0)) || { echo "FAIL: no tests in suite.txt"; exit 1; }
failed=0
for zero in 0 1; do
    for t in "${tests[@]}"; do
        if ! FITALLOC_SECURE=1 FITALLOC_SECURE_ZERO=$zero "$FITALLOC_BUILD_DIR/tests/$t" \
            >/dev/null 2>"$FITALLOC_BUILD_DIR/tests/secure/$(basename "$t").err"; then
            echo "FAIL: $t (FITALLOC_SECURE_ZERO=$zero):"
            tail -5 "$FITALLOC_BUILD_DIR/tests/secure/$(basename "$t").err"
            failed=1
        fi
    done
done
((failed == 0)) && echo "secure/suite: ok (${#tests[@]} tests, twice)"
exit $failed
