/* C++ operator new and delete in all their forms, written in C under their mangled names so
 * that libfitalloc does not depend on libstdc++ (which would cost every C program ~1.5 MB of
 * RSS and start-up time). std::align_val_t is a size_t and const std::nothrow_t& a pointer in
 * the Itanium C++ ABI, so the signatures below are exactly the C++ ones.
 *
 * A program that calls operator new has the C++ runtime loaded, so on failure we reach it:
 * std::get_new_handler() for the new-handler loop through a weak reference (its absence also
 * tells a C program at start), __cxa_allocate_exception, __cxa_throw and std::bad_alloc by
 * name when the first exception is thrown (as weak references they cost every process a
 * symbol search each at load, a C program's an unresolved one through every object). Were
 * they missing (a C++ runtime linked statically and not exported), failure prints a message
 * and aborts. This file is built with unwind tables so that a new-handler's exception can pass
 * through it; no frame here has a cleanup to run (so no -fexceptions, which would need
 * libgcc_s at every start).
 */
#include <stddef.h>

#include "fitalloc-trace.h"
#include "fitalloc.h"
#include "engine/fastpath.h"
#include "engine/secure/secure.h"

typedef void (*fa_new_handler)(void);

extern fa_new_handler fa_cxx_get_new_handler(void) __asm__("_ZSt15get_new_handlerv")
    __attribute__((weak));
typedef void (*fa_cxx_throw)(void *exception, void *type, void (*destructor)(void *));

/* While tracing, every form records its call (trace.c), also when it fails by throwing: the
 * call is recorded as failed before the exception is made, and before a new-handler runs (it
 * may throw), so that the allocations and frees of the C++ runtime and of the handler are
 * recorded as calls of their own, after the failed one; a retry after the handler returns is a
 * call of its own too. */
struct traced_new {
    uint8_t op;
    bool recorded;
    size_t n, alignment;
    void *p;
    struct traced_new *outer;
};
/* The thread's operator new being recorded, if any. */
static __thread struct traced_new *current_new __attribute__((tls_model("initial-exec")));

/* The call becomes the thread's current one (after _fa_trace_enter said to record it). */
static void traced_new_begin(struct traced_new *call)
{
    call->recorded = false;
    call->outer = current_new;
    current_new = call;
}

static void traced_new_done(struct traced_new *call)
{
    if (call->recorded)
        return;
    call->recorded = true;
    current_new = call->outer;
    _fa_trace_record(call->op, call->n, call->alignment, NULL, call->p);
    _fa_trace_leave();
}

__attribute__((noreturn, cold)) static void throw_bad_alloc(size_t n)
{
    if (current_new)
        traced_new_done(current_new); /* fails with NULL */
    void *(*allocate)(size_t) = (void *(*)(size_t))_fa_os_global_symbol("__cxa_allocate_exception");
    fa_cxx_throw throw_it = (fa_cxx_throw)_fa_os_global_symbol("__cxa_throw");
    void *typeinfo = _fa_os_global_symbol("_ZTISt9bad_alloc");
    void **vtable = (void **)_fa_os_global_symbol("_ZTVSt9bad_alloc");
    void (*destructor)(void *) = (void (*)(void *))_fa_os_global_symbol("_ZNSt9bad_allocD1Ev");
    if (allocate && throw_it && typeinfo && vtable && destructor) {
        /* A std::bad_alloc is one vtable pointer; the vtable's address point is 2 slots in
         * (offset-to-top, typeinfo). */
        void **exception = allocate(sizeof(void *));
        *exception = vtable + 2;
        throw_it(exception, typeinfo, destructor);
    }
    _fa_fatal("fitalloc: operator new(%zu): out of memory\n", n);
}

typedef void *(*fa_cxx_nothrow_new)(size_t n, const void *tag);
typedef void *(*fa_cxx_nothrow_new_aligned)(size_t n, size_t alignment, const void *tag);

/* A nothrow form must return NULL when a new-handler throws, and C cannot catch. The C++
 * runtime's own nothrow forms can: they call the throwing form (ours, by interposition) inside
 * a try block. Found at start in libstdc++ itself (mapped before any constructor runs if the
 * program uses it), not through the symbol search, which would find ours; NULL without it. */
static fa_cxx_nothrow_new cxx_nothrow_new;
static fa_cxx_nothrow_new_aligned cxx_nothrow_new_aligned;

__attribute__((constructor)) static void find_cxx_nothrow_forms(void)
{
    if (!fa_cxx_get_new_handler)
        return; /* no C++ runtime: and a C program's allocations stay exactly its own */
    static const char lib[] FA_STARTUP_CONST = "libstdc++.so.6";
    static const char new_name[] FA_STARTUP_CONST = "_ZnwmRKSt9nothrow_t";
    static const char new_aligned_name[] FA_STARTUP_CONST = "_ZnwmSt11align_val_tRKSt9nothrow_t";
    cxx_nothrow_new = (fa_cxx_nothrow_new)_fa_os_loaded_symbol(lib, new_name);
    cxx_nothrow_new_aligned =
        (fa_cxx_nothrow_new_aligned)_fa_os_loaded_symbol(lib, new_aligned_name);
}

/* In libfitalloc-secure.so, the call that makes a block for operator new or new[] (op) says
 * so to secure mode, which records it in the block: delete[] of a new block, free of a new[]
 * one and the like are reported (engine/secure/secure.c). Only around that call: a
 * new-handler's own mallocs are malloc's. */
#if FA_SECURE_BUILD
#define FA_NEW_CALL(op, call)                                                                      \
    ({                                                                                             \
        _fa_secure_origin = (op) == FA_TRACE_NEW_ARRAY ? FA_ORIGIN_NEW_ARRAY : FA_ORIGIN_NEW;      \
        void *made = (call);                                                                       \
        _fa_secure_origin = FA_ORIGIN_MALLOC;                                                      \
        made;                                                                                      \
    })
#else
#define FA_NEW_CALL(op, call) (call)
#endif

/* The slow path of every form: call the new-handler until it gives up, then fail. */
__attribute__((noinline)) static void *new_slow(size_t n, size_t alignment, int nothrow, uint8_t op)
{
    (void)op;
    for (;;) {
        void *p = FA_NEW_CALL(op, alignment ? fa_aligned_alloc(alignment, n) : fa_malloc(n));
        if (p)
            return p;
        fa_new_handler handler = fa_cxx_get_new_handler ? fa_cxx_get_new_handler() : NULL;
        if (!handler) {
            if (nothrow)
                return NULL;
            throw_bad_alloc(n);
        }
        static const char nothrow_tag = 0; /* std::nothrow: an empty object */
        if (nothrow && alignment && cxx_nothrow_new_aligned)
            return cxx_nothrow_new_aligned(n, alignment, &nothrow_tag);
        if (nothrow && !alignment && cxx_nothrow_new)
            return cxx_nothrow_new(n, &nothrow_tag);
        /* A traced call is recorded as failed before the handler runs, which may throw: the
         * handler's own calls follow it in the trace, and if the handler returns, the next
         * attempt is recorded as a call of its own. */
        struct traced_new *call = current_new;
        if (call)
            traced_new_done(call);
        handler();
        if (call && _fa_trace_enter())
            traced_new_begin(call);
    }
}

static void *new_untraced(size_t n, size_t alignment, int nothrow, uint8_t op)
{
    void *p = alignment ? NULL : FA_NEW_CALL(op, fa_malloc(n));
    return p ? p : new_slow(n, alignment, nothrow, op);
}

__attribute__((noinline)) static void *new_traced(uint8_t op, size_t n, size_t alignment,
                                                  int nothrow)
{
    if (!_fa_trace_enter())
        return new_untraced(n, alignment, nothrow, op);
    struct traced_new call = {.op = op, .n = n, .alignment = alignment};
    traced_new_begin(&call);
    call.p = new_untraced(n, alignment, nothrow, op);
    traced_new_done(&call);
    return call.p;
}

static inline void *new_fast(size_t n, uint8_t op)
{
    if (fa_unlikely(_fa_trace_on))
        return new_traced(op, n, 0, 0);
    void *p = FA_NEW_CALL(op, fa_malloc(n));
    return p ? p : new_slow(n, 0, 0, op);
}

/* The forms that start in new_slow. */
static inline void *new_other(size_t n, size_t alignment, int nothrow, uint8_t op)
{
    if (fa_unlikely(_fa_trace_on))
        return new_traced(op, n, alignment, nothrow);
    return new_untraced(n, alignment, nothrow, op);
}

#define FA_CXX(name) __asm__(name) FA_API

void *fa_new(size_t n) FA_CXX("_Znwm");
void *fa_new(size_t n)
{
    return new_fast(n, FA_TRACE_NEW);
}
void *fa_new_array(size_t n) FA_CXX("_Znam");
void *fa_new_array(size_t n)
{
    return new_fast(n, FA_TRACE_NEW_ARRAY);
}
void *fa_new_nothrow(size_t n, const void *tag) FA_CXX("_ZnwmRKSt9nothrow_t");
void *fa_new_nothrow(size_t n, const void *tag)
{
    (void)tag;
    return new_other(n, 0, 1, FA_TRACE_NEW);
}
void *fa_new_array_nothrow(size_t n, const void *tag) FA_CXX("_ZnamRKSt9nothrow_t");
void *fa_new_array_nothrow(size_t n, const void *tag)
{
    (void)tag;
    return new_other(n, 0, 1, FA_TRACE_NEW_ARRAY);
}
void *fa_new_aligned(size_t n, size_t alignment) FA_CXX("_ZnwmSt11align_val_t");
void *fa_new_aligned(size_t n, size_t alignment)
{
    return new_other(n, alignment, 0, FA_TRACE_NEW);
}
void *fa_new_array_aligned(size_t n, size_t alignment) FA_CXX("_ZnamSt11align_val_t");
void *fa_new_array_aligned(size_t n, size_t alignment)
{
    return new_other(n, alignment, 0, FA_TRACE_NEW_ARRAY);
}
void *fa_new_aligned_nothrow(size_t n, size_t alignment, const void *tag)
    FA_CXX("_ZnwmSt11align_val_tRKSt9nothrow_t");
void *fa_new_aligned_nothrow(size_t n, size_t alignment, const void *tag)
{
    (void)tag;
    return new_other(n, alignment, 1, FA_TRACE_NEW);
}
void *fa_new_array_aligned_nothrow(size_t n, size_t alignment, const void *tag)
    FA_CXX("_ZnamSt11align_val_tRKSt9nothrow_t");
void *fa_new_array_aligned_nothrow(size_t n, size_t alignment, const void *tag)
{
    (void)tag;
    return new_other(n, alignment, 1, FA_TRACE_NEW_ARRAY);
}

/* Every delete is free: alignments are not needed to find a block (the ABI still passes
 * them, hence the unused parameters); the sized forms hand their size on for secure mode. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define FA_DELETE(fn, name, caller, size, ...)                                                     \
    void fn(void *p, ##__VA_ARGS__) FA_CXX(name);                                                  \
    void fn(void *p, ##__VA_ARGS__)                                                                \
    {                                                                                              \
        fa_entry_free(p, caller, size);                                                            \
    }
#define FA_D "operator delete"
#define FA_DA "operator delete[]"
FA_DELETE(fa_delete, "_ZdlPv", FA_D, 0)
FA_DELETE(fa_delete_array, "_ZdaPv", FA_DA, 0)
FA_DELETE(fa_delete_nothrow, "_ZdlPvRKSt9nothrow_t", FA_D, 0, const void *tag)
FA_DELETE(fa_delete_array_nothrow, "_ZdaPvRKSt9nothrow_t", FA_DA, 0, const void *tag)
FA_DELETE(fa_delete_sized, "_ZdlPvm", FA_D, n, size_t n)
FA_DELETE(fa_delete_array_sized, "_ZdaPvm", FA_DA, n, size_t n)
FA_DELETE(fa_delete_aligned, "_ZdlPvSt11align_val_t", FA_D, 0, size_t alignment)
FA_DELETE(fa_delete_array_aligned, "_ZdaPvSt11align_val_t", FA_DA, 0, size_t alignment)
FA_DELETE(fa_delete_sized_aligned, "_ZdlPvmSt11align_val_t", FA_D, n, size_t n, size_t alignment)
FA_DELETE(fa_delete_array_sized_aligned, "_ZdaPvmSt11align_val_t", FA_DA, n, size_t n,
          size_t alignment)
FA_DELETE(fa_delete_aligned_nothrow, "_ZdlPvSt11align_val_tRKSt9nothrow_t", FA_D, 0,
          size_t alignment, const void *tag)
FA_DELETE(fa_delete_array_aligned_nothrow, "_ZdaPvSt11align_val_tRKSt9nothrow_t", FA_DA, 0,
          size_t alignment, const void *tag)
