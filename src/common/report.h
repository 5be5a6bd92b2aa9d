/* The statistics reports of FITALLOC_STATS (the engine's and the lab's) share their form: text
 * lines "  label: value[ bytes]" under a title line, or the members of one JSON object on one
 * line. */
#ifndef FA_REPORT_H
#define FA_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fa_report_row {
    const char *text; /* the label of the text form */
    const char *key;  /* the key of the JSON form */
    uint64_t value;
    bool bytes; /* the text form says "bytes" after the value */
};

/* The rows in order: text lines, or (json) ", \"key\": value" for each, to follow the members
 * the caller has written. */
void _fa_report_rows(int fd, bool json, const struct fa_report_row *rows, size_t count);

#endif
