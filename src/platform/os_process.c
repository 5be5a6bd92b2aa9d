/* The C library's process-level facilities of os.h: environ, sysconf, pthreads (detached
 * threads, a thread key for the exit hook, fork handlers), the dynamic linker. */
#define _GNU_SOURCE /* RTLD_NEXT, dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "platform/os.h"
#include "platform/compiler.h"

extern char **environ;

char *const *_fa_os_environ(void)
{
    return environ;
}

unsigned _fa_os_address_bits(void)
{
    /* AT_EXECFN: the program's name, a string near the top of the initial stack. */
    uintptr_t top = (uintptr_t)getauxval(AT_EXECFN);
    if (!top)
        top = (uintptr_t)&top; /* some thread's stack: also above the heap's mappings */
    return 64 - (unsigned)__builtin_clzll(top);
}

const char *_fa_os_exec_name(void)
{
    return (const char *)getauxval(AT_EXECFN);
}

unsigned _fa_os_cpu_count(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (unsigned)cores : 1;
}

int _fa_os_thread_start(void *(*fn)(void *), size_t stack_size)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, stack_size);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc;
}

static pthread_key_t exit_key FA_BSS_FIRST;
static void (*exit_fn)(void) FA_BSS_FIRST;

/* A key's destructor runs only for a non-NULL value, and the value is cleared before it runs:
 * a thread that arms the hook again during its exit gets another round (up to
 * PTHREAD_DESTRUCTOR_ITERATIONS). */
static void run_exit_hook(void *value)
{
    (void)value;
    exit_fn();
}

void _fa_os_thread_exit_hook(void (*fn)(void))
{
    exit_fn = fn;
    pthread_key_create(&exit_key, run_exit_hook);
}

void _fa_os_thread_exit_arm(void)
{
    if (!pthread_getspecific(exit_key))
        pthread_setspecific(exit_key, &exit_key);
}

void _fa_os_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    pthread_atfork(prepare, parent, child);
}

void *_fa_os_loaded_symbol(const char *library, const char *symbol)
{
    void *handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
    return handle ? dlsym(handle, symbol) : NULL;
}

void *_fa_os_global_symbol(const char *symbol)
{
    return dlsym(RTLD_DEFAULT, symbol);
}

void *_fa_os_next_symbol(const char *symbol)
{
    return dlsym(RTLD_NEXT, symbol);
}

/* The C library's own: "*** buffer overflow detected ***: terminated", then abort. */
extern void __chk_fail(void) __attribute__((noreturn));

void _fa_os_copy_overflow(void)
{
    __chk_fail();
}

struct code_search {
    uintptr_t code, start, end;
};

static int find_code(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct code_search *s = arg;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && s->code - start < ph->p_memsz) {
            s->start = start;
            s->end = start + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

bool _fa_os_code_range(const void *code, uintptr_t *start, uintptr_t *end)
{
    struct code_search s = {(uintptr_t)code, 0, 0};
    if (!dl_iterate_phdr(find_code, &s))
        return false;
    *start = s.start;
    *end = s.end;
    return true;
}

/* The program is the first object dl_iterate_phdr reports. */
static int program_holds(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct code_search s = {*(uintptr_t *)arg, 0, 0};
    return find_code(info, size, &s) ? 1 : -1;
}

bool _fa_os_code_in_program(const void *code)
{
    uintptr_t address = (uintptr_t)code;
    return dl_iterate_phdr(program_holds, &address) == 1;
}
