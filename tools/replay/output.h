/* The rows, printed as an aligned text table, CSV or JSON (docs/replay.md: the fields). */
#ifndef FA_REPLAY_OUTPUT_H
#define FA_REPLAY_OUTPUT_H

#include <stdio.h>

#include "cli.h"
#include "replay.h"

void output_rows(FILE *out, enum replay_format format, const struct trace *t,
                 const struct replay_row *rows, size_t count);

#endif
