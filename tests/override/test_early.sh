# Allocations before main under LD_PRELOAD=libfitalloc.so: in a shared
# library's constructor (also starting a thread), in .preinit_array, in the
# program's constructor (which starts threads), and after main in atexit
# handlers and destructors. Blocks made early are checked and freed later.
# Output must equal the run without fitalloc.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_env CC
make_workdir

cat >"$WORK/early.c" <<'CEOF'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

char *early_string;
static char *early_blocks[64];
static int early_ok = 1;

static void *lib_thread(void *arg)
{
    char **out = arg;
    for (int i = 0; i < 1000; i++) {
        char *p = malloc((size_t)(i % 300) + 1);
        if (!p) { early_ok = 0; return NULL; }
        memset(p, 'x', (size_t)(i % 300) + 1);
        free(p);
    }
    *out = strdup("from the library constructor thread");
    return NULL;
}

__attribute__((constructor)) static void early_ctor(void)
{
    void *p = malloc(100);
    free(p);
    p = calloc(10, 10);
    for (int i = 0; i < 100; i++)
        if (((char *)p)[i]) early_ok = 0;
    p = realloc(p, 5000);
    free(p);
    for (int i = 0; i < 64; i++) {
        early_blocks[i] = malloc((size_t)i * 37 + 1);
        memset(early_blocks[i], 'A' + i % 26, (size_t)i * 37 + 1);
    }
    early_string = strdup("made in a library constructor");
    pthread_t t;
    char *from_thread = NULL;
    if (pthread_create(&t, NULL, lib_thread, &from_thread) != 0 || pthread_join(t, NULL) != 0)
        early_ok = 0;
    if (!from_thread || strcmp(from_thread, "from the library constructor thread") != 0)
        early_ok = 0;
    free(from_thread);
}

int early_check(void)
{
    for (int i = 0; i < 64; i++) {
        for (int k = 0; k < i * 37 + 1; k++)
            if (early_blocks[i][k] != 'A' + i % 26) return 0;
        free(early_blocks[i]);
    }
    return early_ok;
}
CEOF

cat >"$WORK/prog.c" <<'CEOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char *early_string;
int early_check(void);

static char *preinit_block, *ctor_block;
static char *thread_blocks[4];
static unsigned long exit_sum;

static void preinit(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    preinit_block = malloc(64);
    if (preinit_block) strcpy(preinit_block, "preinit");
}
__attribute__((section(".preinit_array"), used)) static void (*preinit_fn)(int, char **, char **) = preinit;

static void *ctor_thread(void *arg)
{
    long k = (long)arg;
    char *keep = NULL;
    for (int i = 0; i < 2000; i++) {
        char *p = malloc((size_t)(i % 1000) + 16);
        if (!p) return NULL;
        snprintf(p, 16, "t%ld-%d", k, i);
        free(keep);
        keep = p;
    }
    thread_blocks[k] = keep; /* made by a thread that exits before main */
    return NULL;
}

__attribute__((constructor)) static void prog_ctor(void)
{
    ctor_block = malloc(1 << 20);
    memset(ctor_block, 7, 1 << 20);
    pthread_t t[4];
    for (long k = 0; k < 4; k++) pthread_create(&t[k], NULL, ctor_thread, (void *)k);
    for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
}

static void at_exit_handler(void)
{
    char *p = malloc(4096);
    memset(p, 1, 4096);
    for (int i = 0; i < 4096; i++) exit_sum += (unsigned char)p[i];
    free(p);
    if (exit_sum != 4096) abort();
}

__attribute__((destructor)) static void prog_dtor(void)
{
    char *p = strdup("destructor");
    if (!p || strcmp(p, "destructor") != 0) abort();
    free(p);
}

int main(void)
{
    int ok = 1;
    if (!preinit_block || strcmp(preinit_block, "preinit") != 0) { puts("preinit block bad"); ok = 0; }
    for (int i = 0; i < (1 << 20); i++)
        if (ctor_block[i] != 7) { puts("constructor block bad"); ok = 0; break; }
    for (int k = 0; k < 4; k++) {
        char want[16];
        snprintf(want, sizeof want, "t%d-1999", k);
        if (!thread_blocks[k] || strcmp(thread_blocks[k], want) != 0) { printf("thread block %d bad\n", k); ok = 0; }
        free(thread_blocks[k]);
    }
    if (!early_string || strcmp(early_string, "made in a library constructor") != 0) { puts("library string bad"); ok = 0; }
    if (!early_check()) { puts("library blocks bad"); ok = 0; }
    free(early_string);
    free(preinit_block);
    free(ctor_block);
    atexit(at_exit_handler);
    printf("early %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
CEOF

cflags=(-O1 -fno-builtin-malloc -fno-builtin-free -pthread)
"$CC" "${cflags[@]}" -shared -fPIC -o "$WORK/libearly.so" "$WORK/early.c" 2>"$WORK/cc.err" ||
    { cat "$WORK/cc.err" >&2; fail "building libearly.so"; }
"$CC" "${cflags[@]}" -o "$WORK/prog" "$WORK/prog.c" -L"$WORK" -learly -Wl,-rpath,"$WORK" \
    2>"$WORK/cc.err" || { cat "$WORK/cc.err" >&2; fail "building the program"; }

run_ok "prog (libc)" "$WORK/prog" >"$WORK/ref.txt"
grep -qx 'early ok' "$WORK/ref.txt" || fail "without fitalloc: $(cat "$WORK/ref.txt")"
for i in 1 2 3; do
    LD_PRELOAD="$FITALLOC_LIB" FITALLOC_STATS=1 "$WORK/prog" >"$WORK/pre.txt" 2>"$WORK/pre.err" ||
        { cat "$WORK/pre.txt"; tail -n 40 "$WORK/pre.err" >&2; fail "prog under LD_PRELOAD failed (run $i)"; }
    cmp "$WORK/ref.txt" "$WORK/pre.txt" || fail "output differs under fitalloc: $(cat "$WORK/pre.txt")"
    # library ctor thread 1000 + program ctor threads 4 * 2000 + the rest
    assert_allocs_gt "$WORK/pre.err" 9000 "early allocations (run $i)"
done
echo "override/early: ok"
