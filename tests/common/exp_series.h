/* e^x for 0 <= x < 4 by its series: the tests link no libm, and a test of the sampler checks its
 * draws against a formula computed apart from the library's own. */
#ifndef FA_TEST_EXP_SERIES_H
#define FA_TEST_EXP_SERIES_H

static inline double exp_series(double x)
{
    double sum = 1, term = 1;
    for (int k = 1; k < 60; k++) {
        term *= x / k;
        sum += term;
    }
    return sum;
}

#endif
