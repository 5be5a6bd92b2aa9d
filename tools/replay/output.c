/* Output of the rows (output.h). Every format prints the same fields in the same order from
 * the same text: a field is formatted once, then laid out as a table cell, a CSV value or a
 * JSON value. A field with no meaning for a row (the engine's largest free block, free blocks,
 * splits and coalesces) is "-" in the table, empty in CSV and null in JSON. */
#include "output.h"

#include <stdint.h>
#include <string.h>

enum field_kind { TEXT, COUNT, FRACTION, MEAN, NANOSECONDS };

struct field {
    const char *name;
    enum field_kind kind;
    size_t offset;
    bool lab_only; /* no meaning for the engine */
};

/* The interface's order: also the CSV header and the JSON keys. */
static const struct field fields[] = {
    {"config", TEXT, offsetof(struct replay_row, config), false},
    {"ops", COUNT, offsetof(struct replay_row, ops), false},
    {"peak_heap", COUNT, offsetof(struct replay_row, peak_heap), false},
    {"end_heap", COUNT, offsetof(struct replay_row, end_heap), false},
    {"peak_live", COUNT, offsetof(struct replay_row, peak_live), false},
    {"frag_free_mean", FRACTION, offsetof(struct replay_row, frag_free_mean), false},
    {"frag_free_end", FRACTION, offsetof(struct replay_row, frag_free_end), false},
    {"frag_largest_mean", FRACTION, offsetof(struct replay_row, frag_largest_mean), true},
    {"frag_largest_end", FRACTION, offsetof(struct replay_row, frag_largest_end), true},
    {"free_blocks_mean", MEAN, offsetof(struct replay_row, free_blocks_mean), true},
    {"free_blocks_end", COUNT, offsetof(struct replay_row, free_blocks_end), true},
    {"splits", COUNT, offsetof(struct replay_row, splits), true},
    {"coalesces", COUNT, offsetof(struct replay_row, coalesces), true},
    {"mean_ns", NANOSECONDS, offsetof(struct replay_row, mean_ns), false},
    {"p99_ns", COUNT, offsetof(struct replay_row, p99_ns), false},
    {"failed", COUNT, offsetof(struct replay_row, failed), false},
    {"unmatched", COUNT, offsetof(struct replay_row, unmatched), false},
    {"granted_over_requested", FRACTION, offsetof(struct replay_row, granted_over_requested),
     false},
    {"heap_at_peak_live", COUNT, offsetof(struct replay_row, heap_at_peak_live), false},
    {"peak_live_blocks", COUNT, offsetof(struct replay_row, peak_live_blocks), false},
    {"heap_at_peak_live_blocks", COUNT, offsetof(struct replay_row, heap_at_peak_live_blocks),
     false},
};
#define FIELD_COUNT (sizeof fields / sizeof fields[0])
#define CELL 48

/* The text of one field, or false when it has no meaning for this row. */
static bool format_field(const struct replay_row *row, const struct field *f, char *cell)
{
    if (f->lab_only && row->engine)
        return false;
    const char *at = (const char *)row + f->offset;
    switch (f->kind) {
    case TEXT: snprintf(cell, CELL, "%s", at); break;
    case COUNT: snprintf(cell, CELL, "%llu", (unsigned long long)*(const uint64_t *)at); break;
    case FRACTION: snprintf(cell, CELL, "%.6f", *(const double *)at); break;
    case MEAN: snprintf(cell, CELL, "%.2f", *(const double *)at); break;
    case NANOSECONDS: snprintf(cell, CELL, "%.1f", *(const double *)at); break;
    }
    return true;
}

static void print_table(FILE *out, const struct replay_row *rows, size_t count)
{
    size_t width[FIELD_COUNT];
    char cell[CELL];
    for (size_t f = 0; f < FIELD_COUNT; f++) {
        width[f] = strlen(fields[f].name);
        for (size_t r = 0; r < count; r++) {
            size_t len = format_field(&rows[r], &fields[f], cell) ? strlen(cell) : 1;
            width[f] = len > width[f] ? len : width[f];
        }
    }
    /* The configuration's name to the left, numbers to the right. */
    for (size_t f = 0; f < FIELD_COUNT; f++)
        fprintf(out, "%s%*s", f ? "  " : "", f ? (int)width[f] : -(int)width[f], fields[f].name);
    fputc('\n', out);
    for (size_t r = 0; r < count; r++) {
        for (size_t f = 0; f < FIELD_COUNT; f++) {
            const char *text = format_field(&rows[r], &fields[f], cell) ? cell : "-";
            fprintf(out, "%s%*s", f ? "  " : "", f ? (int)width[f] : -(int)width[f], text);
        }
        fputc('\n', out);
    }
}

static void print_csv(FILE *out, const struct replay_row *rows, size_t count)
{
    char cell[CELL];
    for (size_t f = 0; f < FIELD_COUNT; f++)
        fprintf(out, "%s%s", f ? "," : "", fields[f].name);
    fputc('\n', out);
    for (size_t r = 0; r < count; r++) {
        for (size_t f = 0; f < FIELD_COUNT; f++)
            fprintf(out, "%s%s", f ? "," : "",
                    format_field(&rows[r], &fields[f], cell) ? cell : "");
        fputc('\n', out);
    }
}

static void print_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* The classes in use, as "size_classes": [{"from": 2^k, "allocs", "requested", "granted"}]. */
static void print_json_size_classes(FILE *out, const struct replay_row *row)
{
    fputs(", \"size_classes\": [", out);
    bool first = true;
    for (unsigned k = 0; k < REPLAY_SIZE_CLASSES; k++) {
        const struct replay_size_class *c = &row->size_classes[k];
        if (!c->allocs)
            continue;
        fprintf(out, "%s{\"from\": %llu, \"allocs\": %llu, \"requested\": %llu, \"granted\": %llu}",
                first ? "" : ", ", 1ull << k, (unsigned long long)c->allocs,
                (unsigned long long)c->requested, (unsigned long long)c->granted);
        first = false;
    }
    fputc(']', out);
}

static void print_json(FILE *out, const struct trace *t, const struct replay_row *rows,
                       size_t count)
{
    char cell[CELL];
    fputs("{\"trace\": ", out);
    print_json_string(out, t->path);
    fprintf(out, ", \"records\": %zu, \"threads\": %u, \"rows\": [", t->count, t->threads);
    for (size_t r = 0; r < count; r++) {
        fputs(r ? ",\n  {" : "\n  {", out);
        for (size_t f = 0; f < FIELD_COUNT; f++) {
            fprintf(out, "%s\"%s\": ", f ? ", " : "", fields[f].name);
            if (!format_field(&rows[r], &fields[f], cell))
                fputs("null", out);
            else if (fields[f].kind == TEXT)
                print_json_string(out, cell);
            else
                fputs(cell, out);
        }
        print_json_size_classes(out, &rows[r]);
        fputc('}', out);
    }
    fputs(count ? "\n]}\n" : "]}\n", out);
}

void output_rows(FILE *out, enum replay_format format, const struct trace *t,
                 const struct replay_row *rows, size_t count)
{
    switch (format) {
    case FORMAT_TABLE: print_table(out, rows, count); break;
    case FORMAT_CSV: print_csv(out, rows, count); break;
    case FORMAT_JSON: print_json(out, t, rows, count); break;
    }
}
