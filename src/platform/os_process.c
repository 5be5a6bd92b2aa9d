/* The C library's process-level facilities of os.h: environ, sysconf, pthreads (detached
 * threads, a thread key for the exit hook, fork handlers), the dynamic linker. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "platform/os.h"

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

static pthread_key_t exit_key;
static void (*exit_fn)(void);

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
