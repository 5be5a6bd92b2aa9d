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

/* delete of a new[] block: frees 8 bytes past the start (after the cookie). */
template <size_t N> static int delete_new_array()
{
    Blob<N> *p = new Blob<N>[1];
    mu_phase("bug");
    delete launder_as(p);
    return MU_OK;
}

/* delete[] of a new block: reads a "count" from the 8 bytes before it. */
template <size_t N> static int delete_array_new()
{
    Blob<N> *p = new Blob<N>;
    mu_phase("bug");
    delete[] launder_as(p);
    return MU_OK;
}

/* delete[] of a new block, free of a new block, delete of a malloc block: the forms that made
 * and release the block do not match (AddressSanitizer's alloc-dealloc-mismatch). */
template <size_t N> static int delete_array_new_plain()
{
    Plain<N> *p = new Plain<N>;
    mu_phase("bug");
    delete[] launder_as(p);
    return MU_OK;
}

template <size_t N> static int free_new()
{
    Plain<N> *p = new Plain<N>;
    mu_phase("bug");
    free(mu_launder(p));
    return MU_OK;
}

template <size_t N> static int delete_malloc()
{
    Plain<N> *p = static_cast<Plain<N> *>(malloc(N));
    if (!p)
        return MU_NOMEM;
    mu_phase("bug");
    delete launder_as(p);
    return MU_OK;
}

/* delete through the wrong type: a Plain<N> deleted as a 64 bytes larger type (sized delete
 * with the other type's size), as delete (S *)new char with sizeof(S) = 72 does. */
template <size_t N> static int delete_wrong_type()
{
    Plain<N> *p = new Plain<N>;
    mu_phase("bug");
    delete reinterpret_cast<Plain<N + 64> *>(mu_launder(p));
    return MU_OK;
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

static const cxx_case cases[] = {
    {"cxx-double-delete", {double_delete<8>, double_delete<4096>, double_delete<262144>}},
    {"cxx-double-delete-array",
     {double_delete_array<8>, double_delete_array<4096>, double_delete_array<262144>}},
    {"cxx-delete-new-array",
     {delete_new_array<8>, delete_new_array<4096>, delete_new_array<262144>}},
    {"cxx-delete-array-new",
     {delete_array_new<8>, delete_array_new<4096>, delete_array_new<262144>}},
    {"cxx-sized-delete-wrong",
     {sized_delete_wrong<8>, sized_delete_wrong<4096>, sized_delete_wrong<262144>}},
    {"cxx-delete-interior", {delete_interior<8>, delete_interior<4096>, delete_interior<262144>}},
    {"cxx-delete-array-new-plain",
     {delete_array_new_plain<8>, delete_array_new_plain<4096>, delete_array_new_plain<262144>}},
    {"cxx-free-new", {free_new<8>, free_new<4096>, free_new<262144>}},
    {"cxx-delete-malloc", {delete_malloc<8>, delete_malloc<4096>, delete_malloc<262144>}},
    {"cxx-delete-wrong-type",
     {delete_wrong_type<8>, delete_wrong_type<4096>, delete_wrong_type<262144>}},
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
