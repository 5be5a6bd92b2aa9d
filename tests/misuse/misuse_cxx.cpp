/* The C++ cases of the misuse battery (tools/misuse.sh): new/delete misused on purpose.
 *
 *   misuse_cxx <case> <size>    misuse_cxx list   (prints the case names)
 *
 * <size> is 8, 4096 or 262144 (the object types are templates). Built with -O0
 * -fsized-deallocation. The objects have a destructor, so new T[k] puts a cookie (the count)
 * before the array and delete[] reads it: what mixing the two forms really does. The frame
 * (setup, phases, "after", exit codes) is in misuse.h.
 */
#include <cstddef>
#include <cstring>
#include <new>

#include "misuse.h"

static volatile unsigned mu_sink;

template <size_t N> struct Blob {
    unsigned char b[N];
    Blob() { b[0] = 1; }
    ~Blob() { mu_sink = mu_sink + b[0]; }
};

/* No destructor: new[] puts no cookie before the array, delete[] reaches the allocator with
 * the block's own address. */
template <size_t N> struct Plain {
    unsigned char b[N];
};

template <class T> static T *launder_as(T *p)
{
    return static_cast<T *>(mu_launder(p));
}

/* delete p twice (sized operator delete, after the destructor). */
template <size_t N> static int double_delete()
{
    Blob<N> *p = new Blob<N>;
    delete p;
    mu_phase("bug");
    delete launder_as(p);
    return MU_OK;
}

/* delete[] p twice, p = new char[n] (no cookie: this reaches the allocator). */
template <size_t N> static int double_delete_array()
{
    char *p = new char[N];
    memset(p, 0x11, N);
    delete[] p;
    mu_phase("bug");
    delete[] launder_as(p);
    return MU_OK;
}

/* A block made in one form and released in another: the forms do not match (AddressSanitizer's
 * alloc-dealloc-mismatch). The release gets the block through mu_launder, so that the compiler
 * cannot pair the two. */
template <class T, T *(*Make)(), void (*Release)(T *)> static int mismatch()
{
    T *p = Make();
    if (!p)
        return MU_NOMEM;
    mu_phase("bug");
    Release(launder_as(p));
    return MU_OK;
}

/* The forms. new T[1] of a Blob puts the count before the array; delete of it frees 8 bytes
 * past the block's start, delete[] of a new Blob reads a "count" from the 8 bytes before it. */
template <class T> static T *made_by_new()
{
    return new T;
}
template <class T> static T *made_by_new_array()
{
    return new T[1];
}
template <class T> static T *made_by_malloc()
{
    return static_cast<T *>(malloc(sizeof(T)));
}
template <class T> static void release_by_delete(T *p)
{
    delete p;
}
template <class T> static void release_by_delete_array(T *p)
{
    delete[] p;
}
template <class T> static void release_by_free(T *p)
{
    free(p);
}
/* delete through the wrong type: a type 64 bytes larger (sized delete with the other type's
 * size), as delete (S *)new char with sizeof(S) = 72 does. */
template <class T> static void release_as_larger(T *p)
{
    delete reinterpret_cast<Plain<sizeof(T) + 64> *>(p);
}

/* operator delete(p, n + 64) of operator new(n). */
template <size_t N> static int sized_delete_wrong()
{
    void *p = ::operator new(N);
    memset(p, 0x11, N);
    mu_phase("bug");
    ::operator delete(mu_launder(p), N + 64);
    return MU_OK;
}

/* operator delete(p + 16) of a live block of at least 64 bytes (stays tracked). */
template <size_t N> static int delete_interior()
{
    const size_t m = N < 64 ? 64 : N;
    char *p = static_cast<char *>(::operator new(m));
    memset(p, 0x11, m);
    mu_track(p, m);
    mu_phase("bug");
    ::operator delete(mu_launder(p + 16));
    return MU_OK;
}

/* A case by name, instantiated for each block size the battery uses: 8, 4096 and 262144 bytes. */
struct cxx_case {
    const char *name;
    int (*run[3])();
};

/* A case's three instances (the braces are the table's), made of a template of its own or of
 * a mismatch's two forms. */
#define AT_SIZES(fn) fn<8>, fn<4096>, fn<262144>
#define MISMATCH_AT(T, make, release, n) mismatch<T<n>, make<T<n>>, release<T<n>>>
#define MISMATCH(T, make, release)                                                                 \
    MISMATCH_AT(T, make, release, 8), MISMATCH_AT(T, make, release, 4096),                         \
        MISMATCH_AT(T, make, release, 262144)

static const cxx_case cases[] = {
    {"cxx-double-delete", {AT_SIZES(double_delete)}},
    {"cxx-double-delete-array", {AT_SIZES(double_delete_array)}},
    {"cxx-delete-new-array", {MISMATCH(Blob, made_by_new_array, release_by_delete)}},
    {"cxx-delete-array-new", {MISMATCH(Blob, made_by_new, release_by_delete_array)}},
    {"cxx-sized-delete-wrong", {AT_SIZES(sized_delete_wrong)}},
    {"cxx-delete-interior", {AT_SIZES(delete_interior)}},
    {"cxx-delete-array-new-plain", {MISMATCH(Plain, made_by_new, release_by_delete_array)}},
    {"cxx-free-new", {MISMATCH(Plain, made_by_new, release_by_free)}},
    {"cxx-delete-malloc", {MISMATCH(Plain, made_by_malloc, release_by_delete)}},
    {"cxx-delete-wrong-type", {MISMATCH(Plain, made_by_new, release_as_larger)}},
};

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "list")) {
        for (const cxx_case &c : cases)
            printf("%s\n", c.name);
        return MU_OK;
    }
    size_t n;
    if (argc != 3 || !mu_size_arg(argv[2], &n) || (n != 8 && n != 4096 && n != 262144)) {
        fprintf(stderr, "usage: %s <case> 8|4096|262144 | list\n", argv[0]);
        return MU_USAGE;
    }
    const cxx_case *found = nullptr;
    for (const cxx_case &c : cases)
        if (!strcmp(argv[1], c.name))
            found = &c;
    if (!found) {
        fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[1]);
        return MU_USAGE;
    }
    size_t block = !strcmp(argv[1], "cxx-delete-interior") && n < 64 ? 64 : n;
    mu_setup(block);
    int rc = found->run[n == 8 ? 0 : n == 4096 ? 1 : 2]();
    return mu_after(block, rc);
}
