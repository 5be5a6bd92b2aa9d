/* Free lists (fit_list.h): the address-ordered textbook list and the LIFO exact-size lists. */
#include "lab/index/fit_list.h"

#include <stdbool.h>

#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"

/* Take n out of the doubly linked list that starts at *head. */
static void unlink_node(struct fa_list_node **head, struct fa_list_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        *head = n->next;
    if (n->next)
        n->next->prev = n->prev;
}

/* The next-fit rover node must stay "the first node at or after the rover address". */
static void rover_consider(struct fa_addr_list *l, struct fa_list_node *n, uintptr_t rover_addr)
{
    uintptr_t block = fa_list_block(n);
    if (block >= rover_addr && (!l->rover || n < l->rover))
        l->rover = n;
}

void _fa_addr_list_insert(struct fa_addr_list *l, uintptr_t block, uintptr_t rover_addr)
{
    struct fa_list_node *n = fa_list_node_of(block), *prev = NULL, *next = l->head;
    while (next && next < n) {
        prev = next;
        next = next->next;
    }
    n->prev = prev;
    n->next = next;
    if (prev)
        prev->next = n;
    else
        l->head = n;
    if (next)
        next->prev = n;
    l->count++;
    rover_consider(l, n, rover_addr);
}

void _fa_addr_list_remove(struct fa_addr_list *l, uintptr_t block)
{
    struct fa_list_node *n = fa_list_node_of(block);
    unlink_node(&l->head, n);
    if (l->rover == n)
        l->rover = n->next; /* the next node is the first one after the rover address now */
    l->count--;
}

void _fa_addr_list_replace(struct fa_addr_list *l, uintptr_t old_block, uintptr_t new_block,
                           uintptr_t rover_addr)
{
    struct fa_list_node *o = fa_list_node_of(old_block), *n = fa_list_node_of(new_block);
    n->prev = o->prev;
    n->next = o->next;
    if (n->prev)
        n->prev->next = n;
    else
        l->head = n;
    if (n->next)
        n->next->prev = n;
    if (l->rover == o)
        l->rover = n->next;
    rover_consider(l, n, rover_addr);
}

void _fa_addr_list_set_rover(struct fa_addr_list *l, uintptr_t block)
{
    l->rover = fa_list_node_of(block);
}

__attribute__((noreturn)) static void broken(const void *heap, const char *list, const char *what,
                                             uintptr_t block)
{
    _fa_fatal("fitalloc: lab heap %p: %s: %s at block %p\n", heap, list, what, (void *)block);
}

/* What every list keeps: as many nodes as counted, back links that mirror the forward ones, and
 * only free blocks. The callers then check their own order. */
static void check_links(const struct fa_list_node *head, size_t count, const void *heap,
                        const char *name)
{
    size_t seen = 0;
    const struct fa_list_node *prev = NULL;
    for (const struct fa_list_node *n = head; n; prev = n, n = n->next) {
        uintptr_t block = fa_list_block(n);
        if (++seen > count)
            broken(heap, name, "more nodes than counted (a cycle?)", block);
        if (n->prev != prev)
            broken(heap, name, "wrong back link", block);
        if (!fa_block_is_free(block))
            broken(heap, name, "node is not a free block", block);
    }
    if (seen != count)
        broken(heap, name, "fewer nodes than counted", 0);
}

void _fa_addr_list_check(const struct fa_addr_list *l, const void *heap, uintptr_t rover_addr)
{
    const char *name = "address-ordered free list";
    check_links(l->head, l->count, heap, name);
    struct fa_list_node *rover = NULL;
    for (struct fa_list_node *n = l->head; n; n = n->next) {
        if (n->next && !(n < n->next))
            broken(heap, name, "addresses not increasing", fa_list_block(n->next));
        if (!rover && fa_list_block(n) >= rover_addr)
            rover = n;
    }
    if (l->rover != rover)
        broken(heap, name, "next-fit rover is not the first block after the rover address",
               fa_list_block(l->rover));
}

void _fa_lifo_push(struct fa_lifo_list *l, uintptr_t block)
{
    struct fa_list_node *n = fa_list_node_of(block);
    n->prev = NULL;
    n->next = l->head;
    if (l->head)
        l->head->prev = n;
    l->head = n;
    l->count++;
}

void _fa_lifo_remove(struct fa_lifo_list *l, uintptr_t block)
{
    struct fa_list_node *n = fa_list_node_of(block);
    unlink_node(&l->head, n);
    l->count--;
}

void _fa_lifo_check(const struct fa_lifo_list *l, const void *heap, size_t size)
{
    const char *name = "exact-size free list";
    check_links(l->head, l->count, heap, name);
    for (struct fa_list_node *n = l->head; n; n = n->next)
        if (size && fa_block_size(fa_list_block(n)) != size)
            broken(heap, name, "block of another size", fa_list_block(n));
}
