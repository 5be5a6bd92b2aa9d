#!/usr/bin/env bash
# ctest labels: structure
# The core's files call only files below them (src/README.md, "The core's order"): in the
# engine's objects of this build, default and secure, every symbol a file takes from another
# file of the engine is defined lower in the order src/README.md lists, or the call is one of
# the exceptions listed there; secure mode's files (engine/secure/) stand above the core. Fails
# naming each call that runs up, and each name in the list that is no file of the engine.
set -euo pipefail
src=${FITALLOC_SOURCE_DIR:?run through ctest}
build=${FITALLOC_BUILD_DIR:?run through ctest}
readme=$src/src/README.md
fail() { echo "FAIL: $*" >&2; exit 1; }

# The order: the indented lines after "from the bottom"; the exceptions: "- `a.c` calls `b.c`".
order=$(awk '/from the bottom/ {on = 1} on && /^    / {print; got = 1; next} got && NF {exit}' "$readme")
[[ -n "$order" ]] || fail "src/README.md lists no order of the core's files"
exceptions=$(sed -n 's/^- `\([a-z_]*\)\.c` calls `\([a-z_]*\)\.c`.*/\1 \2/p' "$readme")
rank=" "
i=0
for f in $order; do
    [[ -f "$src/src/engine/$f.c" ]] || fail "src/README.md orders $f, which is no src/engine/$f.c"
    rank+="$f=$i "
    i=$((i + 1))
done
for f in "$src"/src/engine/*.c; do
    f=$(basename "$f" .c)
    [[ "$rank" == *" $f="* ]] || fail "src/engine/$f.c is not in src/README.md's order"
done
rank+="secure=$i "

checked=0
for dir in "$build"/CMakeFiles/fitalloc_engine.dir/src/engine \
    "$build"/CMakeFiles/fitalloc_engine_secure.dir/src/engine; do
    [[ -d "$dir" ]] || continue
    checked=$((checked + 1))
    # "file kind symbol" for each object: T/D/B/R defined, U taken from elsewhere.
    table=$(for o in "$dir"/*.o "$dir"/secure/*.o; do
        [[ -f "$o" ]] || continue
        # An object whose source is gone (a build directory older than the tree) is not checked.
        rel=${o#"$dir"/}
        [[ -f "$src/src/engine/${rel%.o}" ]] || continue
        name=$(basename "$o" .c.o)
        [[ "$o" == */secure/* ]] && name=secure
        nm "$o" | awk -v f="$name" 'NF == 3 && $2 ~ /^[TDBRV]$/ {print f, "D", $3}
                                    NF == 2 && $1 == "U" {print f, "U", $2}'
    done)
    up=$(awk -v rank="$rank" -v exceptions="$exceptions" '
        BEGIN {
            n = split(rank, r, " ")
            for (i = 1; i <= n; i++) { split(r[i], kv, "="); at[kv[1]] = kv[2] + 0 }
            m = split(exceptions, e, "\n")
            for (i = 1; i <= m; i++) allowed[e[i]] = 1
        }
        $2 == "D" {def[$3] = $1; next}
        {use[NR] = $0}
        END {
            for (k in use) {
                split(use[k], u, " ")
                to = def[u[3]]
                if (to == "" || to == u[1] || at[to] < at[u[1]] || allowed[u[1] " " to]) continue
                print u[1] ".c calls " to ".c: " u[3]
            }
        }' <<<"$table" | sort)
    [[ -z "$up" ]] || fail "calls that run up the core's order (src/README.md), in $dir:
$up"
done
((checked > 0)) || fail "no engine objects under $build/CMakeFiles"
echo "ok: the engine's files call only files below them, but for $(wc -l <<<"$exceptions") exceptions"
