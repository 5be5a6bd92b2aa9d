/* The OS contract: everything fitalloc asks of the kernel and of the C library's process-level
 * facilities. os_linux.c (system calls) and os_process.c (threads, thread keys, fork handlers,
 * environment) are the only files that use them; none of these functions allocates (except
 * where said) or touches errno on success. */
#ifndef FA_OS_H
#define FA_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FA_OS_PAGE 4096

/* Map size bytes (read/write, private, anonymous) aligned to align (a power of two); NULL on
 * failure. */
void *_fa_os_map_aligned(size_t size, size_t align);
/* Reserve address space only (no access, no memory), aligned to align; NULL on failure. */
void *_fa_os_reserve(size_t size, size_t align);
/* Make [p, p+size) of a reservation readable and writable; false on failure (out of memory). */
bool _fa_os_commit(void *p, size_t size);
/* Unmap a range mapped by _fa_os_map_aligned or _fa_os_reserve. */
void _fa_os_unmap(void *p, size_t size);
/* Make [p, p+size) inaccessible (a guard page); errors are ignored. */
void _fa_os_protect(void *p, size_t size);
/* Make [p, p+size) readable and writable again. */
void _fa_os_unprotect(void *p, size_t size);
/* Give the memory of a range back to the OS; it reads as zero afterwards. */
void _fa_os_purge(void *p, size_t size);
/* Ask for transparent huge pages behind a range (2 MiB-aligned parts of it); errors ignored. */
void _fa_os_huge(void *p, size_t size);
/* Fault a range of a private anonymous mapping in, writable, in one call (MADV_POPULATE_WRITE,
 * Linux 5.14); errors (an older kernel, no memory: the pages then fault in at first touch, as
 * usual) are ignored. */
void _fa_os_populate(void *p, size_t size);
/* How many pages of [p, p+size) are resident (p page-aligned); 0 if the kernel cannot say. */
size_t _fa_os_resident_pages(const void *p, size_t size);
/* Grow a mapping in place; false if the address space after it is taken. */
bool _fa_os_grow_in_place(void *p, size_t old_size, size_t new_size);
/* Move a mapping to a new address aligned to align, growing it; NULL on failure (old stays). */
void *_fa_os_move_aligned(void *p, size_t old_size, size_t new_size, size_t align);
/* Milliseconds of a monotonic clock (coarse: vDSO, no system call). */
uint64_t _fa_os_now_ms(void);
/* Nanoseconds of the monotonic clock (CLOCK_MONOTONIC: vDSO, no system call). */
uint64_t _fa_os_now_ns(void);
/* Nanoseconds of CPU the calling thread, and the whole process, have used (0 if unknown). */
uint64_t _fa_os_thread_cpu_ns(void);
uint64_t _fa_os_process_cpu_ns(void);
/* Write all of buf to fd, retrying on EINTR: 0, or the errno value of the write that failed
 * (errno itself is kept). */
int _fa_os_write(int fd, const void *buf, size_t len);
/* Create or truncate path for appending (close-on-exec, mode 0644): the descriptor, or -errno. */
int _fa_os_create_append(const char *path);
/* The first len bytes of the file at path; false if it has fewer or cannot be read. */
bool _fa_os_read_head(const char *path, void *buf, size_t len);
void _fa_os_close(int fd);
/* The English text of an errno value (strerror may allocate to translate it). */
const char *_fa_os_error_text(int err);
/* Whether process pid exists (it may belong to another user). */
bool _fa_os_process_alive(int pid);
/* Block while *word == expected, at most timeout_ms (< 0: no limit). */
void _fa_os_futex_wait(uint32_t *word, uint32_t expected, long timeout_ms);
/* Wake up to n waiters on word. */
void _fa_os_futex_wake(uint32_t *word, int n);
/* Threads in the process (an exited main thread still counts until the process ends), or a
 * negative errno if unknown (-ENOENT: no /proc; -EMFILE: no descriptor left). Reads /proc
 * without allocating. */
int _fa_os_thread_count(void);
/* True on the process's initial thread. */
bool _fa_os_is_main_thread(void);
/* 64 random bits from the kernel (getrandom), or, if it has none to give, from the clock,
 * the address space layout and the process id. */
uint64_t _fa_os_random(void);
/* The process id, for messages; the parent's. */
int _fa_os_pid(void);
int _fa_os_parent_pid(void);
/* End the process with SIGABRT after a fatal message. */
__attribute__((noreturn)) void _fa_os_abort(void);
/* A close-on-exec copy of fd numbered 3 or above (a program may close stderr before exit);
 * -1 on failure. */
int _fa_os_dup(int fd);

/* ---- os_shared.c: memory several virtual addresses map at once (meshing) ---- */

/* A memory file of `size` bytes (sparse: pages exist once written), close-on-exec; -1 on
 * failure (no memfd_create: Linux before 3.17, or a seccomp filter). */
int _fa_os_shared_create(size_t size);
/* Map the whole file once more, shared, for the mesher's own copies; NULL on failure. */
void *_fa_os_shared_window(int fd, size_t size);
/* Map the file's [offset, offset+size) at p, replacing what is there (read/write, shared). */
bool _fa_os_map_shared_at(void *p, size_t size, int fd, size_t offset);
/* A fork child will not inherit the mappings of [p, p+size): the range is a hole there; a
 * mapping made there later is inherited again. false on failure. */
bool _fa_os_dont_fork(void *p, size_t size);
/* Map fresh private zero pages at p, replacing what is there. */
bool _fa_os_map_fresh_at(void *p, size_t size);
/* Give the file's pages in [offset, offset+size) back to the OS (they read as zero). */
void _fa_os_shared_punch(int fd, size_t offset, size_t size);
/* The kernel's page size (4 KiB on x86-64; 4, 16 or 64 KiB on aarch64 kernels). */
size_t _fa_os_page_size(void);
/* The most kernel mappings (VMAs) the process may have: vm.max_map_count. */
long _fa_os_max_mappings(void);

/* ---- freeze.c: memory held still against every writer, the kernel's too (meshing) ---- */

/* Whether ranges can be frozen: a writer there, a thread of the program or the kernel in a
 * system call (read into a block), waits until the range is thawed or mapped anew, instead of
 * faulting or failing with EFAULT (userfaultfd's write protection). false with *why saying
 * what refused it. Asked once; again after a fork, in the child. Under the caller's lock. */
bool _fa_os_freeze_ready(const char **why);
/* Freeze [p, p+size) (anonymous or shared memory); false on failure. */
bool _fa_os_freeze(void *p, size_t size);
/* The same in two steps: _fa_os_freeze_prepare registers a range (its kernel mappings split
 * there) until it is mapped anew; _fa_os_freeze_prepared then freezes any part of it with one
 * call. false on failure. */
bool _fa_os_freeze_prepare(void *p, size_t size);
bool _fa_os_freeze_prepared(void *p, size_t size);
/* Writable again, and the writers waiting there woken; false on failure. */
bool _fa_os_thaw(void *p, size_t size);
/* Wake the writers still waiting on frozen ranges since mapped anew. */
void _fa_os_freeze_wake_replaced(void);
/* In a fork child: the parent's freezing acts on the parent's memory; the child asks anew. */
void _fa_os_freeze_after_fork_child(void);

/* ---- fault.c: faults in memory fitalloc protects on purpose ---- */

/* Install, or install again if the program has since put its own handler in its place, the
 * SIGSEGV handler that asks `retry` (secure mode's guard check) about every fault at an
 * address, of a protected page (SEGV_ACCERR) or of an unmapped one (SEGV_MAPERR): true means
 * the fault was fitalloc's and the access is done again (a hook may also report and not
 * return); false hands the fault to the handler that was installed before (the program's, or
 * the default action). false if no handler could be installed. Hooks are installed while one
 * thread runs, or under a lock. */
bool _fa_os_fault_hook(bool (*retry)(uintptr_t address));

/* ---- os_process.c: the C library's process-level facilities ---- */

/* The environment (environ); NULL while the C library has not set it up (early start). */
char *const *_fa_os_environ(void);
/* The width of the user addresses the kernel hands out without a hint: the bit length of the
 * top of the initial thread's stack, which sits above every mapping (47 on x86-64 Linux, also
 * with 5-level paging; 48, or 39 on some kernels, on aarch64). */
unsigned _fa_os_address_bits(void);
/* The file name the program was started from (the argument of execve: for a script, the
 * script), from the auxiliary vector; NULL if the kernel gave none. */
const char *_fa_os_exec_name(void);
/* Processors online (1 if unknown); reads /sys without allocating. */
unsigned _fa_os_cpu_count(void);
/* Start a detached thread running fn(NULL), with a stack of stack_size bytes and every signal
 * blocked (signals are for the program's threads); 0, or the error number. */
int _fa_os_thread_start(void *(*fn)(void *), size_t stack_size);
/* The thread-exit hook: once, fn to run at the exit of each thread that armed it. */
void _fa_os_thread_exit_hook(void (*fn)(void));
/* Arm the hook for the calling thread (may allocate, beyond the C library's first 32 keys). */
void _fa_os_thread_exit_arm(void);
/* Fork handlers, run around every fork() of the process (pthread_atfork). */
void _fa_os_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* The address of `symbol` in `library` if the process has already loaded it (it is not loaded
 * here); NULL otherwise. */
void *_fa_os_loaded_symbol(const char *library, const char *symbol);
/* The address of `symbol` in the first loaded object that exports it (dlsym(RTLD_DEFAULT));
 * NULL if none does. */
void *_fa_os_global_symbol(const char *symbol);
/* The next definition of `symbol` after this library's, in the order the dynamic linker looks
 * them up (dlsym(RTLD_NEXT): the C library's, for a function we define too); NULL if none. */
void *_fa_os_next_symbol(const char *symbol);
/* What the C library's __memcpy_chk and its kin do when a copy is longer than the room the
 * compiler knew of (_FORTIFY_SOURCE): report the overflow and end the process. */
__attribute__((noreturn)) void _fa_os_copy_overflow(void);
/* The executable segment of the loaded object that holds the code at `code`: [*start, *end);
 * false if none does. */
bool _fa_os_code_range(const void *code, uintptr_t *start, uintptr_t *end);

/* Whether the code at `code` is the program's own (fitalloc linked into it statically). */
bool _fa_os_code_in_program(const void *code);

/* backtrace.c, in libfitalloc-secure.so only: up to `max` code addresses of the calling
 * thread's stack, innermost first (each return address one byte back, inside its call); the
 * number found. Allocates nothing. */
size_t _fa_os_backtrace(uintptr_t *frames, size_t max);
/* eh_frame.c, for the heap profiler's stacks: how the frame whose return address is `ip`
 * steps to its caller's, from the object's DWARF call-frame tables: the caller's stack pointer
 * (the CFA) is rbp or rsp plus cfa_offset, its return address sits just below it, and its rbp
 * is unchanged or saved at rbp_offset from the CFA. Allocates nothing. */
enum fa_os_frame_kind {
    FA_FRAME_UNKNOWN, /* no tables for ip, or a rule other than the above */
    FA_FRAME_STEP,
    FA_FRAME_LAST, /* the outermost frame (its return address undefined) */
};
struct fa_os_frame_step { /* 8 bytes: the walk keeps one per return address */
    int32_t cfa_offset;
    int16_t rbp_offset;
    uint8_t kind;
    bool cfa_on_rbp : 1, rbp_saved : 1;
};
struct fa_os_frame_step _fa_os_frame_step(uintptr_t ip);
/* stack_walk.c: what the walk needs, made ready (x86-64: nothing; elsewhere libgcc's unwinder,
 * loaded with dlopen, which allocates): a name for it, NULL if it cannot be had. Then up to
 * `max` return addresses of the calling thread's stack, innermost first (the caller's of
 * this function first); *truncated when the stack had more. Allocates nothing. */
const char *_fa_os_unwinder_load(void);
size_t _fa_os_stack(uintptr_t *frames, size_t max, bool *truncated);
/* signal_count.c: a signal's number from its name ("SIGUSR2", "USR2" or "12"), or -1; and a
 * handler for it that only adds 1 to *counter (false: the signal cannot be caught so). */
int _fa_os_signal_number(const char *name);
bool _fa_os_signal_count(int sig, uint32_t *counter);
/* Copy the file at `path` (a /proc file: read until its end) to fd; false on an error. */
bool _fa_os_copy_file(const char *path, int fd);
/* What the dynamic linker knows of a code address: its object (the program's path may be "")
 * and the symbol before it, if that is exported (a program's own functions are with
 * -rdynamic). Allocates nothing. */
struct fa_os_symbol {
    const char *name; /* NULL: none known */
    uintptr_t offset; /* from the symbol */
    const char *object;
    uintptr_t object_offset; /* from the object's load address */
};
bool _fa_os_symbol(uintptr_t address, struct fa_os_symbol *symbol);

#endif
