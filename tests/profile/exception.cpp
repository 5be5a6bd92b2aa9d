/* Allocations made while a C++ exception unwinds the stack: a destructor run by the unwinder
 * leaks 1 MiB, the catch block 2 MiB. Their stacks go through the unwinder's own frames. */
#include <cstdlib>
#include <stdexcept>

static void *volatile kept[2];

struct Leaker {
    ~Leaker() { kept[0] = std::malloc(1 << 20); }
};

__attribute__((noinline)) static void thrower()
{
    Leaker l;
    throw std::runtime_error("unwinding");
}

__attribute__((noinline)) static void catcher()
{
    try {
        thrower();
    } catch (const std::exception &) {
        kept[1] = std::malloc(2 << 20);
    }
}

int main()
{
    catcher();
    return !kept[0] || !kept[1];
}
