/* The distance to the next sample point: exponential of mean FITALLOC_PROFILE_RATE, drawn per
 * thread from its own generator, so that every byte allocated has the same chance of being
 * the one at a sample point and the estimates pprof makes from the samples are unbiased. */
#include "profile/profile_internal.h"
#include "platform/os.h"

__thread struct fa_profile_thread _fa_profile_self;
uint64_t _fa_profile_rate = 512 << 10;

/* xorshift64*: enough for sampling, and a thread's draws need no lock. */
static uint64_t next_random(struct fa_profile_thread *t)
{
    uint64_t x = t->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->state = x;
    return x * 0x2545f4914f6cdd1dull;
}

double _fa_profile_log(double x)
{
    /* x = m * 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m - 1) / (m + 1), a
     * series in s^2 <= 0.0295: eight terms leave an error below 1e-14, so a sample's draw
     * takes a fifth of the instructions the loop over [1, 2) took. */
    union {
        double d;
        uint64_t u;
    } v = {x};
    int e = (int)((v.u >> 52) & 0x7ff) - 1023;
    v.u = (v.u & ~(0x7ffull << 52)) | (1023ull << 52);
    if (v.d > 1.41421356237309504880) {
        v.d /= 2;
        e++;
    }
    double s = (v.d - 1) / (v.d + 1), s2 = s * s;
    double series =
        1 +
        s2 * (1.0 / 3 +
              s2 * (1.0 / 5 +
                    s2 * (1.0 / 7 +
                          s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13 + s2 * (1.0 / 15)))))));
    return e * 0.69314718055994530942 + 2 * s * series;
}

double _fa_profile_exp_neg(double x)
{
    if (x > 700)
        return 0;
    int halvings = 0;
    while (x > 0.125) {
        x /= 2;
        halvings++;
    }
    double sum = 1, term = 1;
    for (int k = 1; k < 12; k++) {
        term *= -x / k;
        sum += term;
    }
    while (halvings--)
        sum *= sum;
    return sum;
}

static int64_t draw(struct fa_profile_thread *t)
{
    if (!t->state)
        t->state = _fa_os_random() | 1;
    /* u in (0, 1]: never 0, whose logarithm is infinite */
    double u = (double)((next_random(t) >> 11) + 1) * (1.0 / 9007199254740992.0);
    double distance = -_fa_profile_log(u) * (double)_fa_profile_rate;
    return distance > 4e18 ? (int64_t)4e18 : (int64_t)distance + 1;
}

void _fa_profile_thread_start(void)
{
    struct fa_profile_thread *t = &_fa_profile_self;
    if (!t->state)
        t->left += draw(t);
}

bool _fa_profile_crossed(void)
{
    struct fa_profile_thread *t = &_fa_profile_self;
    /* A thread's first allocation finds no distance drawn yet: it draws one instead of being
     * a sample, which would count every thread's first block. */
    bool first = t->state == 0;
    t->left += draw(t);
    if (first && t->left > 0)
        return false;
    if (t->left <= 0)
        t->left = draw(t);
    return !t->busy;
}

void _fa_profile_seed(uint64_t seed)
{
    struct fa_profile_thread *t = &_fa_profile_self;
    t->state = seed | 1;
    t->left = draw(t);
}

double _fa_profile_weight(uint64_t bytes)
{
    double p = 1 - _fa_profile_exp_neg((double)bytes / (double)_fa_profile_rate);
    return p > 0 ? (double)bytes / p : (double)bytes;
}
