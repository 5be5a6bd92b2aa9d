/* The rows of a statistics report (report.h). */
#include "common/report.h"

#include "common/message.h"

void _fa_report_rows(int fd, bool json, const struct fa_report_row *rows, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        unsigned long long v = (unsigned long long)rows[i].value;
        if (json)
            _fa_message(fd, ", \"%s\": %llu", rows[i].key, v);
        else
            _fa_message(fd, "  %s: %llu%s\n", rows[i].text, v, rows[i].bytes ? " bytes" : "");
    }
}
