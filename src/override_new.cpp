// C++ operator new and delete in all their forms, served by fitalloc.
// new never returns NULL: on failure it calls the new-handler and retries, or throws
// std::bad_alloc; the nothrow forms return NULL instead.
#include <cstddef>
#include <new>

#include "fitalloc.h"

#define FA_API __attribute__((visibility("default")))

namespace
{

void *allocate_or_handle(std::size_t n, std::size_t alignment, bool nothrow)
{
    for (;;) {
        void *p = alignment ? fa_aligned_alloc(alignment, n) : fa_malloc(n);
        if (p)
            return p;
        std::new_handler handler = std::get_new_handler();
        if (!handler) {
            if (nothrow)
                return nullptr;
            throw std::bad_alloc();
        }
        if (nothrow) {
            try {
                handler();
            } catch (...) {
                return nullptr;
            }
        } else {
            handler();
        }
    }
}

inline void *allocate(std::size_t n)
{
    void *p = fa_malloc(n);
    return p ? p : allocate_or_handle(n, 0, false);
}

} // namespace

FA_API void *operator new(std::size_t n)
{
    return allocate(n);
}
FA_API void *operator new[](std::size_t n)
{
    return allocate(n);
}
FA_API void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
    void *p = fa_malloc(n);
    return p ? p : allocate_or_handle(n, 0, true);
}
FA_API void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
    void *p = fa_malloc(n);
    return p ? p : allocate_or_handle(n, 0, true);
}
FA_API void *operator new(std::size_t n, std::align_val_t a)
{
    return allocate_or_handle(n, static_cast<std::size_t>(a), false);
}
FA_API void *operator new[](std::size_t n, std::align_val_t a)
{
    return allocate_or_handle(n, static_cast<std::size_t>(a), false);
}
FA_API void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    return allocate_or_handle(n, static_cast<std::size_t>(a), true);
}
FA_API void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    return allocate_or_handle(n, static_cast<std::size_t>(a), true);
}

FA_API void operator delete(void *p) noexcept
{
    fa_free(p);
}
FA_API void operator delete[](void *p) noexcept
{
    fa_free(p);
}
FA_API void operator delete(void *p, const std::nothrow_t &) noexcept
{
    fa_free(p);
}
FA_API void operator delete[](void *p, const std::nothrow_t &) noexcept
{
    fa_free(p);
}
FA_API void operator delete(void *p, std::size_t) noexcept
{
    fa_free(p);
}
FA_API void operator delete[](void *p, std::size_t) noexcept
{
    fa_free(p);
}
FA_API void operator delete(void *p, std::align_val_t) noexcept
{
    fa_free(p);
}
FA_API void operator delete[](void *p, std::align_val_t) noexcept
{
    fa_free(p);
}
FA_API void operator delete(void *p, std::size_t, std::align_val_t) noexcept
{
    fa_free(p);
}
FA_API void operator delete[](void *p, std::size_t, std::align_val_t) noexcept
{
    fa_free(p);
}
FA_API void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept
{
    fa_free(p);
}
FA_API void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept
{
    fa_free(p);
}
