# ctest labels: reliability
# C23 free_sized and free_aligned_sized through interposition (LD_PRELOAD, no link with
# libfitalloc; the C library's headers may not declare them, so the program finds them with
# dlsym(RTLD_DEFAULT, ...)):
#   - both resolve to libfitalloc's definitions (the same addresses as dlsym on libfitalloc's own
#     handle, and dladdr names libfitalloc);
#   - each really frees: for small, medium, large and aligned blocks, fitalloc's statistics (fast
#     engine: fa_stats_get; lab: fa_lab_stats_get) count one more free and what is in use (fast:
#     bytes, lab: blocks) goes back to what it was; 100000 rounds of malloc + free_sized or
#     free_aligned_sized count 100000 frees and leave it flat (the memory is reused);
#   - free_sized(NULL, 0) and free_aligned_sized(NULL, 64, 0) do nothing.
# Run in the fast engine and in the lab (FITALLOC_MODE=lab).
source "$(dirname "${BASH_SOURCE[0]}")/../override/common.sh"
need_env CC FITALLOC_INCLUDE
make_workdir

symbols=$(nm -D --defined-only "$FITALLOC_LIB") || fail "nm -D $FITALLOC_LIB"
grep -Eq ' T malloc$' <<<"$symbols" || { echo "no interposition layer in $FITALLOC_LIB: skipped"; exit 77; }

cat >"$WORK/prog.c" <<'CEOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitalloc-lab.h"
#include "fitalloc-stats.h"

static int failures;
#define EXPECT(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "FAIL line %d: %s [%s]\n", __LINE__, #c, what);                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

typedef void (*free_sized_fn)(void *, size_t);
typedef void (*free_aligned_sized_fn)(void *, size_t, size_t);
static int (*stats_get)(struct fa_stats *);
static int (*lab_stats_get)(struct fa_lab_stats *);
static int lab;

struct counts {
    unsigned long long frees, in_use;
};
static struct counts snap(void)
{
    struct counts c = {0, 0};
    if (lab) {
        static struct fa_lab_stats s;
        s.size = sizeof s;
        if (lab_stats_get(&s) == 0)
            c = (struct counts){s.frees + s.direct_frees, s.mallocs + s.direct_allocs - s.frees - s.direct_frees};
    } else {
        static struct fa_stats s;
        s.size = sizeof s;
        if (stats_get(&s) == 0)
            c = (struct counts){s.frees, s.bytes_in_use};
    }
    return c;
}

int main(int argc, char **argv)
{
    const char *what = "lookup";
    const char *lib = argv[1];
    lab = argc > 2 && strcmp(argv[2], "lab") == 0;
    free_sized_fn fs = (free_sized_fn)dlsym(RTLD_DEFAULT, "free_sized");
    free_aligned_sized_fn fas = (free_aligned_sized_fn)dlsym(RTLD_DEFAULT, "free_aligned_sized");
    stats_get = (int (*)(struct fa_stats *))dlsym(RTLD_DEFAULT, "fa_stats_get");
    lab_stats_get = (int (*)(struct fa_lab_stats *))dlsym(RTLD_DEFAULT, "fa_lab_stats_get");
    EXPECT(fs != NULL && fas != NULL && stats_get != NULL && lab_stats_get != NULL);
    if (failures)
        return 1;
    void *own = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    EXPECT(own != NULL);
    if (own) {
        EXPECT((void *)fs == dlsym(own, "free_sized"));
        EXPECT((void *)fas == dlsym(own, "free_aligned_sized"));
    }
    Dl_info info;
    EXPECT(dladdr((void *)fs, &info) && info.dli_fname && strstr(info.dli_fname, "libfitalloc"));
    EXPECT(dladdr((void *)fas, &info) && info.dli_fname && strstr(info.dli_fname, "libfitalloc"));
    if (lab) {
        static struct fa_lab_stats s;
        s.size = sizeof s;
        what = "lab mode";
        EXPECT(lab_stats_get(&s) == 0);
    }

    /* A large block's free starts the purge thread, whose creation allocates: not in a count. */
    void *volatile warm = malloc(4 << 20);
    free(warm);
    static const size_t sizes[] = {1, 48, 1000, 9000, 100000, 200000, 5 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        what = "free_sized";
        struct counts c0 = snap();
        char *p = malloc(n);
        EXPECT(p != NULL);
        if (!p)
            continue;
        memset(p, 0x5a, n);
        fs(p, n);
        struct counts c1 = snap();
        EXPECT(c1.frees == c0.frees + 1);
        EXPECT(c1.in_use == c0.in_use);

        what = "free_aligned_sized";
        static const size_t aligns[] = {16, 64, 4096, 1 << 16, 1 << 21};
        for (size_t k = 0; k < sizeof aligns / sizeof aligns[0]; k++) {
            size_t al = aligns[k], m = (n + al - 1) / al * al; /* C11: a multiple */
            c0 = snap();
            char *q = aligned_alloc(al, m);
            EXPECT(q != NULL && (uintptr_t)q % al == 0);
            if (!q)
                continue;
            memset(q, 0xa5, m);
            fas(q, al, m);
            c1 = snap();
            EXPECT(c1.frees == c0.frees + 1);
            EXPECT(c1.in_use == c0.in_use);
        }
    }

    /* Freed memory is reused: many rounds do not accumulate. */
    what = "reuse";
    struct counts c0 = snap();
    for (int i = 0; i < 100000; i++) {
        size_t n = 16 + (size_t)(i % 64) * 100;
        char *p = malloc(n);
        EXPECT(p != NULL);
        if (!p)
            break;
        p[n - 1] = 1;
        if (i % 2)
            fs(p, n);
        else
            fas(p, 16, n);
    }
    struct counts c1 = snap();
    EXPECT(c1.in_use == c0.in_use);
    EXPECT(c1.frees == c0.frees + 100000);

    what = "NULL";
    c0 = snap();
    fs(NULL, 0);
    fas(NULL, 64, 0);
    c1 = snap();
    EXPECT(c1.frees == c0.frees && c1.in_use == c0.in_use);
    printf("%s: %d failures\n", lab ? "lab" : "fast", failures);
    return failures ? 1 : 0;
}
CEOF
"$CC" -std=gnu11 -O2 -fno-builtin-malloc -fno-builtin-free -I"$FITALLOC_INCLUDE" \
    -o "$WORK/prog" "$WORK/prog.c" -ldl 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "compiling the test program"; }
ldd "$WORK/prog" >"$WORK/ldd.txt" || fail "ldd"
! grep -q libfitalloc "$WORK/ldd.txt" || fail "the program must not be linked with libfitalloc"

for mode in fast lab; do
    env -u FITALLOC_MODE $([[ $mode == lab ]] && echo FITALLOC_MODE=lab) \
        LD_PRELOAD="$FITALLOC_LIB" "$WORK/prog" "$FITALLOC_LIB" "$mode" >"$WORK/$mode.out" 2>"$WORK/$mode.err" ||
        { cat "$WORK/$mode.out" "$WORK/$mode.err" >&2; fail "$mode: the program failed"; }
    cat "$WORK/$mode.out"
done
echo "override/free_sized: ok"
