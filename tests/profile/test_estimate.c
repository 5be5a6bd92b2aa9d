/* ctest labels: unit */
/* The heap profiler's sampling against exact counts, with fixed seeds: a stream of 40,000
 * blocks of 48 bytes, 4,000 of 4 KiB and 400 of 64 KiB, interleaved, charged to the sampler at
 * a 64 KiB rate in 1,000 runs. Scaled back as pprof does (count * size / (1 - exp(-size/rate))),
 * each size's estimate must average its exact bytes within 2 % over the runs (the sampling is
 * unbiased), and spread as Poisson sampling does: its standard deviation within 20 % of
 * exact * sqrt((1 - p) / (n p)), p = 1 - exp(-size/rate). */
#include <stdio.h>

#include "check.h"
#include "profile/profile.h"
#include "exp_series.h"

#define RUNS 1000
#define RATE 65536

static const size_t sizes[3] = {48, 4096, 65536};
static const unsigned counts[3] = {40000, 4000, 400};

static double sqrt_newton(double x)
{
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 60; i++)
        r = (r + x / r) / 2;
    return r;
}

int main(void)
{
    _fa_profile_rate = RATE;
    double sum[3] = {0}, sum_sq[3] = {0};
    for (uint64_t run = 0; run < RUNS; run++) {
        _fa_profile_seed(0x9e3779b97f4a7c15ull * (run + 1));
        unsigned sampled[3] = {0}, left[3] = {counts[0], counts[1], counts[2]};
        /* Interleaved: 100 small, 10 of 4 KiB, 1 of 64 KiB, again and again. */
        while (left[0] + left[1] + left[2]) {
            for (int k = 0; k < 3; k++)
                for (unsigned i = 0; i < (k == 0 ? 100u : k == 1 ? 10u : 1u) && left[k]; i++) {
                    left[k]--;
                    sampled[k] += fa_profile_charge(sizes[k]);
                }
        }
        for (int k = 0; k < 3; k++) {
            double p = 1 - 1 / exp_series((double)sizes[k] / RATE);
            double estimate = sampled[k] * (double)sizes[k] / p;
            sum[k] += estimate;
            sum_sq[k] += estimate * estimate;
        }
    }
    for (int k = 0; k < 3; k++) {
        double exact = (double)sizes[k] * counts[k];
        double p = 1 - 1 / exp_series((double)sizes[k] / RATE);
        double mean = sum[k] / RUNS;
        double sd = sqrt_newton(sum_sq[k] / RUNS - mean * mean);
        double sd_theory = exact * sqrt_newton((1 - p) / (counts[k] * p));
        fprintf(stderr,
                "%6zu-byte blocks: exact %.0f, mean estimate %.0f (%+.2f %%), sd %.0f, Poisson's "
                "%.0f\n",
                sizes[k], exact, mean, 100 * (mean - exact) / exact, sd, sd_theory);
        CHECK_MSG(mean > exact * 0.98 && mean < exact * 1.02, "%zu-byte blocks: biased", sizes[k]);
        CHECK_MSG(sd > sd_theory * 0.8 && sd < sd_theory * 1.2,
                  "%zu-byte blocks: not spread as Poisson sampling", sizes[k]);
    }
    return 0;
}
