#!/usr/bin/env bash
# ctest labels: structure
# The layering of src/ (src/README.md): tools/check-layers.sh passes on the tree, and fails,
# naming the file and line, on a copy with an include that goes up or sideways, a system header
# outside the platform layer, a header not named by its path, an engine file that tests the
# mode instead of calling its table, a core file that tests secure mode's or tracing's flag, or
# a call recorded outside the entry points.
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?run through ctest}
check=(bash "$src/tools/check-layers.sh")
fail() { echo "FAIL: $*" >&2; exit 1; }

"${check[@]}" "$src/src" >/dev/null || fail "the tree breaks its own layering: ${check[*]} $src/src"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# expect_violation <file under src/> <line to add> <text the report must hold>
expect_violation() {
    rm -rf "$work/src"
    cp -r "$src/src" "$work/src"
    printf '%s\n' "$2" >>"$work/src/$1"
    local out rc=0
    out=$("${check[@]}" "$work/src" 2>&1) || rc=$?
    ((rc == 1)) || fail "'$2' in $1: exit $rc, want 1"
    [[ "$out" == *"src/$1:"*"$3"* ]] || fail "'$2' in $1: the report does not say '$3': $out"
}

expect_violation engine/heap.c '#include "lab/lab.h"' 'not below it'             # sideways
expect_violation lab/heap/classic_heap.c '#include "engine/engine.h"' 'not below it' # sideways
expect_violation platform/os_linux.c '#include "common/options.h"' 'not below it'   # up
expect_violation lab/index/fit_list.c '#include "lab/heap/classic_heap.h"' 'not below it'
expect_violation engine/heap.c 'static bool lab_on(void) { return _fa_mode != &_fa_core_mode; }' \
    'tests the mode'
expect_violation engine/segment.c 'static bool guarded(void) { return _fa_secure; }' "a mode's flag"
expect_violation engine/heap.c 'static bool slow(void) { return _fa_tracing; }' "a mode's flag"
expect_violation engine/free.c 'static void untraced(void) { _fa_trace_leave(); }' 'FA_TRACED'
expect_violation lab/lab_api.c 'static bool traced(void) { return _fa_trace_enter(); }' 'FA_TRACED'
expect_violation trace/trace.c '#include "process/process_internal.h"' 'not below it'
expect_violation engine/page.c '#include <pthread.h>' 'only src/platform/'
expect_violation common/options.c '#include "options.h"' 'not named by its path'
echo "ok: the layer check passes on src/ and catches 7 kinds of bad include and 5 broken seams"
