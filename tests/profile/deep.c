/* A block allocated 200 calls deep and leaked: its stack is deeper than the profile keeps. */
#include <stdlib.h>

__attribute__((noinline)) static void *deep(int n)
{
    if (n == 0)
        return malloc(1 << 20);
    void *p = deep(n - 1);
    __asm__ volatile("" : : "r"(p) : "memory"); /* no tail call: every frame stays */
    return p;
}

int main(void)
{
    void *volatile p = deep(200);
    return p == NULL;
}
