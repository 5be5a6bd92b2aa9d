# A C program linked with libfitalloc.a gets fitalloc's malloc: plain malloc
# calls show up in fa_stats_get and in the FITALLOC_STATS=1 report at exit,
# both for a program that calls fa_* functions and for one that only calls
# malloc/free (so nothing else pulls the library in).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CC FITALLOC_STATIC_LIB FITALLOC_INCLUDE
[ -f "$FITALLOC_STATIC_LIB" ] || fail "FITALLOC_STATIC_LIB=$FITALLOC_STATIC_LIB does not exist"
make_workdir

N=20000

cat >"$WORK/with_api.c" <<'CEOF'
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fitalloc.h"

#define N 20000
static void *v[N];

int main(void)
{
    struct fa_stats s0, s1;
    s0.size = s1.size = sizeof s0;
    if (fa_stats_get(&s0) != 0) { fprintf(stderr, "fa_stats_get failed\n"); return 1; }
    for (int i = 0; i < N; i++) {
        v[i] = malloc((size_t)(i % 1000) + 1);
        if (!v[i]) return 1;
        memset(v[i], i & 0xff, (size_t)(i % 1000) + 1);
    }
    if (fa_stats_get(&s1) != 0) return 1;
    if (s1.allocs - s0.allocs < N) {
        fprintf(stderr, "malloc is not fitalloc's: %d mallocs, stats allocs +%llu\n", N,
                (unsigned long long)(s1.allocs - s0.allocs));
        return 1;
    }
    /* fitalloc knows these blocks */
    for (int i = 0; i < N; i += 97)
        if (malloc_usable_size(v[i]) != fa_malloc_usable_size(v[i]) ||
            fa_malloc_usable_size(v[i]) < (size_t)(i % 1000) + 1) {
            fprintf(stderr, "usable size mismatch for block %d\n", i);
            return 1;
        }
    for (int i = 0; i < N; i++) {
        if (((unsigned char *)v[i])[i % 1000] != (unsigned char)(i & 0xff)) return 1;
        free(v[i]);
    }
    if (fa_stats_get(&s1) != 0 || s1.frees - s0.frees < N) {
        fprintf(stderr, "free is not fitalloc's\n");
        return 1;
    }
    printf("with_api ok\n");
    return 0;
}
CEOF

cat >"$WORK/malloc_only.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000
static char *v[N];

int main(void)
{
    unsigned long sum = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N / 2; i++) {
            v[i] = malloc((size_t)(i % 500) + 1);
            if (!v[i]) return 1;
            memset(v[i], 'a' + i % 26, (size_t)(i % 500) + 1);
        }
        for (int i = 0; i < N / 2; i++) {
            sum += (unsigned char)v[i][i % 500];
            free(v[i]);
        }
    }
    printf("malloc_only ok %lu\n", sum);
    return 0;
}
CEOF

cflags=(-O1 -fno-builtin-malloc -fno-builtin-free -I"$FITALLOC_INCLUDE")
for prog in with_api malloc_only; do
    "$CC" "${cflags[@]}" -o "$WORK/$prog" "$WORK/$prog.c" "$FITALLOC_STATIC_LIB" -lpthread \
        2>"$WORK/cc.err" || { cat "$WORK/cc.err" >&2; fail "linking $prog with $FITALLOC_STATIC_LIB -lpthread"; }
    # (outputs to files first: with pipefail, grep -q quitting early fails the pipe)
    ldd "$WORK/$prog" >"$WORK/ldd.txt" 2>&1 || true
    if grep -q libfitalloc "$WORK/ldd.txt"; then
        fail "$prog loads libfitalloc.so: not a static link"
    fi
    nm "$WORK/$prog" >"$WORK/nm.txt" || fail "nm $prog failed"
    grep -Eq ' T malloc$' "$WORK/nm.txt" || fail "$prog has no malloc of its own (nm)"
    FITALLOC_STATS=1 "$WORK/$prog" >"$WORK/$prog.out" 2>"$WORK/$prog.err" ||
        { cat "$WORK/$prog.err" >&2; fail "$prog failed"; }
    grep -q "^$prog ok" "$WORK/$prog.out" || fail "$prog printed: $(cat "$WORK/$prog.out")"
    assert_allocs_gt "$WORK/$prog.err" $((N - 1)) "$prog (static)"
done
echo "override/link_static: ok"
