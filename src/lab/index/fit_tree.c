/* The red-black tree of free blocks (fit_tree.h): textbook insertion and deletion with parent
 * pointers (Cormen et al., chapter 13), plus the augmented value of the address order. */
#include "lab/index/fit_tree.h"

#include <stdbool.h>

#include "common/message.h"
#include "platform/arch.h"
#include "platform/compiler.h"
#include "platform/os.h"
#include "lab/index/block.h"

#define RED ((uintptr_t)1)

static inline struct fa_tree_node *node_of(uintptr_t block)
{
    return (struct fa_tree_node *)(block + FA_BLOCK_HEADER);
}

static inline uintptr_t block_of(const struct fa_tree_node *n)
{
    return (uintptr_t)n - FA_BLOCK_HEADER;
}

static inline struct fa_tree_node *parent_of(const struct fa_tree_node *n)
{
    return (struct fa_tree_node *)(n->parent_color & ~RED);
}

static inline bool is_red(const struct fa_tree_node *n)
{
    return n && (n->parent_color & RED);
}

static inline void set_parent(struct fa_tree_node *n, struct fa_tree_node *p)
{
    n->parent_color = (uintptr_t)p | (n->parent_color & RED);
}

static inline void set_red(struct fa_tree_node *n, bool red)
{
    n->parent_color = (n->parent_color & ~RED) | (red ? RED : 0);
}

static inline size_t node_size(const struct fa_tree_node *n)
{
    return fa_block_size(block_of(n));
}

/* a < b in the tree's order; the address breaks ties, so keys are unique. */
static bool less(const struct fa_tree *t, const struct fa_tree_node *a,
                 const struct fa_tree_node *b)
{
    if (t->order == FA_TREE_BY_SIZE) {
        size_t sa = node_size(a), sb = node_size(b);
        if (sa != sb)
            return sa < sb;
    }
    return (uintptr_t)a < (uintptr_t)b;
}

static inline size_t augment(const struct fa_tree_node *n)
{
    return n ? fa_block_augment(block_of(n)) : 0;
}

/* Address order: a node's value is the largest block size in its subtree, computed from its
 * own size and its children's values. */
static size_t largest_in_subtree(const struct fa_tree_node *n)
{
    size_t m = node_size(n);
    for (int side = FA_LEFT; side <= FA_RIGHT; side++)
        if (augment(n->child[side]) > m)
            m = augment(n->child[side]);
    return m;
}

/* Stores n's value; returns whether it changed. */
static bool recompute(const struct fa_tree *t, struct fa_tree_node *n)
{
    if (t->order != FA_TREE_BY_ADDRESS)
        return false;
    size_t m = largest_in_subtree(n);
    if (m == augment(n))
        return false;
    fa_block_set_augment(block_of(n), m);
    return true;
}

/* After a change below n that left the tree's shape above n alone: a node's value depends only
 * on its own size and its children's values, so the walk stops at the first node whose value
 * did not change. */
static void recompute_up(const struct fa_tree *t, struct fa_tree_node *n)
{
    if (t->order != FA_TREE_BY_ADDRESS)
        return;
    while (n && recompute(t, n))
        n = parent_of(n);
}

static void replace_child(struct fa_tree *t, struct fa_tree_node *parent,
                          const struct fa_tree_node *old, struct fa_tree_node *new)
{
    if (!parent)
        t->root = new;
    else
        parent->child[parent->child[FA_RIGHT] == old] = new;
}

/* n takes old's place in the tree: its children, parent and colour. */
static void take_place(struct fa_tree *t, const struct fa_tree_node *old, struct fa_tree_node *n)
{
    n->parent_color = old->parent_color;
    for (int side = FA_LEFT; side <= FA_RIGHT; side++) {
        n->child[side] = old->child[side];
        if (n->child[side])
            set_parent(n->child[side], n);
    }
    replace_child(t, parent_of(old), old, n);
}

/* Rotation towards `side`: x's child on the other side comes up and x goes down on `side`
 * (side FA_LEFT is the textbook left rotation). Rotations keep the set of nodes under the
 * subtree root, so only the two nodes that moved need their augmented values recomputed (the
 * lower one first). */
static void rotate(struct fa_tree *t, struct fa_tree_node *x, int side)
{
    struct fa_tree_node *y = x->child[!side];
    x->child[!side] = y->child[side];
    if (y->child[side])
        set_parent(y->child[side], x);
    set_parent(y, parent_of(x));
    replace_child(t, parent_of(x), x, y);
    y->child[side] = x;
    set_parent(x, y);
    recompute(t, x);
    recompute(t, y);
}

void _fa_tree_init(struct fa_tree *t, enum fa_tree_order order)
{
    t->root = NULL;
    t->order = order;
    t->count = 0;
    t->steps = 0;
}

static void insert_fixup(struct fa_tree *t, struct fa_tree_node *n)
{
    struct fa_tree_node *p;
    while ((p = parent_of(n)) && is_red(p)) {
        t->steps++;
        struct fa_tree_node *g = parent_of(p); /* exists: a red node is never the root */
        int side = g->child[FA_RIGHT] == p;    /* p's side under g */
        struct fa_tree_node *u = g->child[!side];
        if (is_red(u)) {
            set_red(p, false);
            set_red(u, false);
            set_red(g, true);
            n = g;
            continue;
        }
        if (n == p->child[!side]) {
            rotate(t, p, side);
            n = p;
            p = parent_of(n);
        }
        set_red(p, false);
        set_red(g, true);
        rotate(t, g, !side);
    }
    set_red(t->root, false);
}

void _fa_tree_insert(struct fa_tree *t, uintptr_t block)
{
    struct fa_tree_node *n = node_of(block), *parent = NULL, **link = &t->root;
    while (*link) {
        t->steps++;
        parent = *link;
        link = &parent->child[!less(t, n, parent)];
    }
    n->child[FA_LEFT] = n->child[FA_RIGHT] = NULL;
    n->parent_color = (uintptr_t)parent | RED;
    *link = n;
    if (t->order == FA_TREE_BY_ADDRESS) {
        fa_block_set_augment(block, node_size(n));
        recompute_up(t, parent);
    }
    insert_fixup(t, n);
    t->count++;
}

/* x (maybe NULL) has one black too few on its side; xp is its parent. */
static void remove_fixup(struct fa_tree *t, struct fa_tree_node *x, struct fa_tree_node *xp)
{
    while (x != t->root && !is_red(x)) {
        t->steps++;
        int side = x != xp->child[FA_LEFT];        /* x's side under xp */
        struct fa_tree_node *w = xp->child[!side]; /* not NULL: its side has the extra black */
        if (is_red(w)) {
            set_red(w, false);
            set_red(xp, true);
            rotate(t, xp, side);
            w = xp->child[!side];
        }
        if (!is_red(w->child[FA_LEFT]) && !is_red(w->child[FA_RIGHT])) {
            set_red(w, true);
            x = xp;
            xp = parent_of(x);
            continue;
        }
        if (!is_red(w->child[!side])) {
            set_red(w->child[side], false);
            set_red(w, true);
            rotate(t, w, !side);
            w = xp->child[!side];
        }
        set_red(w, is_red(xp));
        set_red(xp, false);
        set_red(w->child[!side], false);
        rotate(t, xp, side);
        x = t->root;
        break;
    }
    if (x)
        set_red(x, false);
}

void _fa_tree_remove(struct fa_tree *t, uintptr_t block)
{
    struct fa_tree_node *z = node_of(block);
    t->steps++;
    /* y: the node that leaves its place, z itself or (two children) z's successor. */
    struct fa_tree_node *y = z;
    if (z->child[FA_LEFT] && z->child[FA_RIGHT]) {
        y = z->child[FA_RIGHT];
        while (y->child[FA_LEFT]) {
            t->steps++;
            y = y->child[FA_LEFT];
        }
    }
    struct fa_tree_node *x = y->child[FA_LEFT] ? y->child[FA_LEFT] : y->child[FA_RIGHT];
    struct fa_tree_node *xp = parent_of(y);
    bool removed_red = is_red(y);
    if (x)
        set_parent(x, xp);
    replace_child(t, xp, y, x);
    if (y != z) {
        /* The successor takes z's place and colour, and (as the old value of that place)
         * z's augmented value. */
        if (xp == z)
            xp = y;
        take_place(t, z, y);
        if (t->order == FA_TREE_BY_ADDRESS)
            fa_block_set_augment(block_of(y), augment(z));
    }
    /* Values change from xp up. Below y's new place the subtrees lost only y, so the walk may
     * stop early there; y itself lost z from its subtree and must be recomputed anyway. */
    if (t->order == FA_TREE_BY_ADDRESS) {
        struct fa_tree_node *n = xp;
        while (n && n != y && recompute(t, n))
            n = parent_of(n);
        if (y != z)
            n = y;
        recompute_up(t, n);
    }
    if (!removed_red)
        remove_fixup(t, x, xp);
    t->count--;
}

void _fa_tree_replace(struct fa_tree *t, uintptr_t old_block, uintptr_t new_block)
{
    struct fa_tree_node *o = node_of(old_block), *n = node_of(new_block);
    take_place(t, o, n);
    if (t->order == FA_TREE_BY_ADDRESS) {
        fa_block_set_augment(new_block, augment(o));
        recompute_up(t, n);
    }
}

void _fa_tree_size_changed(struct fa_tree *t, uintptr_t block)
{
    if (t->order == FA_TREE_BY_ADDRESS) {
        recompute_up(t, node_of(block));
        return;
    }
    /* Removal follows links, not keys, so it works although the key already changed. */
    _fa_tree_remove(t, block);
    _fa_tree_insert(t, block);
}

/* Leftmost node of n's subtree with address >= from and size >= size. It walks the boundary
 * path of `from` and descends at most once into a subtree that lies wholly after `from` and
 * whose augmented value says it holds a fit: O(log n). */
static struct fa_tree_node *first_fit(const struct fa_tree_node *n, uintptr_t from, size_t size)
{
    while (n && augment(n) >= size) {
        if (block_of(n) < from) {
            n = n->child[FA_RIGHT];
            continue;
        }
        struct fa_tree_node *left = first_fit(n->child[FA_LEFT], from, size);
        if (left)
            return left;
        if (node_size(n) >= size)
            return (struct fa_tree_node *)n;
        n = n->child[FA_RIGHT];
    }
    return NULL;
}

uintptr_t _fa_tree_first_fit(const struct fa_tree *t, uintptr_t from, size_t size)
{
    struct fa_tree_node *n = first_fit(t->root, from, size);
    return n ? block_of(n) : 0;
}

uintptr_t _fa_tree_lower_bound(struct fa_tree *t, size_t size)
{
    struct fa_tree_node *n = t->root, *best = NULL;
    while (n) {
        t->steps++;
        if (node_size(n) >= size) {
            best = n;
            n = n->child[FA_LEFT];
        } else {
            n = n->child[FA_RIGHT];
        }
    }
    return best ? block_of(best) : 0;
}

/* The block at the end of the order on `side`: the smallest (FA_LEFT) or the largest key. */
static uintptr_t extreme(const struct fa_tree *t, int side)
{
    struct fa_tree_node *n = t->root;
    if (!n)
        return 0;
    while (n->child[side])
        n = n->child[side];
    return block_of(n);
}

uintptr_t _fa_tree_first(const struct fa_tree *t)
{
    return extreme(t, FA_LEFT);
}

uintptr_t _fa_tree_last(const struct fa_tree *t)
{
    return extreme(t, FA_RIGHT);
}

uintptr_t _fa_tree_next(uintptr_t block)
{
    struct fa_tree_node *n = node_of(block);
    if (n->child[FA_RIGHT]) {
        n = n->child[FA_RIGHT];
        while (n->child[FA_LEFT])
            n = n->child[FA_LEFT];
        return block_of(n);
    }
    struct fa_tree_node *p = parent_of(n);
    while (p && n == p->child[FA_RIGHT]) {
        n = p;
        p = parent_of(n);
    }
    return p ? block_of(p) : 0;
}

/* ---- invariant checker ---- */

struct check {
    const struct fa_tree *t;
    const void *heap;
    size_t seen;
};

__attribute__((noreturn)) static void broken(const struct check *c, const char *what,
                                             const struct fa_tree_node *n)
{
    _fa_fatal("fitalloc: lab heap %p: free-block tree (%s order): %s at block %p\n", c->heap,
              c->t->order == FA_TREE_BY_SIZE ? "size" : "address", what,
              n ? (void *)block_of(n) : NULL);
}

/* Black height of n's subtree; checks links, colours and augmented values on the way. */
static int check_subtree(struct check *c, const struct fa_tree_node *n,
                         const struct fa_tree_node *parent, int depth)
{
    if (!n)
        return 1;
    if (depth > 128 || ++c->seen > c->t->count)
        broken(c, "more nodes than counted (a cycle?)", n);
    if (parent_of(n) != parent)
        broken(c, "wrong parent link", n);
    uintptr_t block = block_of(n);
    if (!fa_block_is_free(block) || (fa_block_word1(block) & ~FA_WORD1_LOW_MASK) != FA_FREE_TAG)
        broken(c, "node is not a free block", n);
    if (is_red(n) && (is_red(n->child[FA_LEFT]) || is_red(n->child[FA_RIGHT])))
        broken(c, "red node with a red child", n);
    if (n->child[FA_LEFT] && !less(c->t, n->child[FA_LEFT], n))
        broken(c, "left child not smaller", n);
    if (n->child[FA_RIGHT] && !less(c->t, n, n->child[FA_RIGHT]))
        broken(c, "right child not larger", n);
    int lh = check_subtree(c, n->child[FA_LEFT], n, depth + 1);
    int rh = check_subtree(c, n->child[FA_RIGHT], n, depth + 1);
    if (lh != rh)
        broken(c, "black heights differ", n);
    if (c->t->order == FA_TREE_BY_ADDRESS) {
        if (augment(n) != largest_in_subtree(n))
            broken(c, "wrong largest-block value", n);
    }
    return lh + !is_red(n);
}

void _fa_tree_check(const struct fa_tree *t, const void *heap)
{
    struct check c = {t, heap, 0};
    if (is_red(t->root))
        broken(&c, "red root", t->root);
    check_subtree(&c, t->root, NULL, 0);
    if (c.seen != t->count)
        broken(&c, "fewer nodes than counted", NULL);
    /* Child-versus-parent comparisons do not prove a global order: walk it in order. */
    uintptr_t prev = 0;
    for (uintptr_t b = _fa_tree_first(t); b; b = _fa_tree_next(b)) {
        if (prev && !less(t, node_of(prev), node_of(b)))
            broken(&c, "in-order walk not increasing", node_of(b));
        prev = b;
    }
}
