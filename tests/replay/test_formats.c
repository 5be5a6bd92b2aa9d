/* The three output formats print the documented fields: the CSV header is exactly the
 * interface's, the table has the same columns under a header line, and the JSON parses
 * (python3's json module) with the documented keys, in order, and null where a field has no
 * meaning for the engine; every JSON row then has its size classes. */
#include "random_trace.h"

#define FIELDS                                                                                     \
    "config,ops,peak_heap,end_heap,peak_live,frag_free_mean,frag_free_end,frag_largest_mean,"      \
    "frag_largest_end,free_blocks_mean,free_blocks_end,splits,coalesces,mean_ns,p99_ns,failed,"    \
    "unmatched,granted_over_requested,heap_at_peak_live,peak_live_blocks,heap_at_peak_live_blocks"

static const char *const json_check =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1]))\n"
    "fields = sys.argv[2].split(',')\n"
    "assert list(d) == ['trace', 'records', 'threads', 'rows'], list(d)\n"
    "assert d['trace'] == 'formats \"q\".fat', d['trace']\n"
    "assert d['records'] == 3000 and d['threads'] == 4, (d['records'], d['threads'])\n"
    "names = [r['config'] for r in d['rows']]\n"
    "assert names == ['first', 'best', 'engine'], names\n"
    "for r in d['rows']:\n"
    "    assert list(r) == fields + ['size_classes'], list(r)\n"
    "    assert sum(c['allocs'] for c in r['size_classes']) > 0\n"
    "    assert sum(c['granted'] for c in r['size_classes']) >= "
    "sum(c['requested'] for c in r['size_classes'])\n"
    "    assert r['ops'] == 3000\n"
    "    assert 0 <= r['frag_free_end'] <= 1\n"
    "    assert r['peak_heap'] >= r['end_heap'] > 0\n"
    "lab_only = ['frag_largest_mean', 'frag_largest_end', 'free_blocks_mean', 'free_blocks_end',\n"
    "            'splits', 'coalesces']\n"
    "for k in lab_only:\n"
    "    assert d['rows'][2][k] is None, k\n"
    "    assert isinstance(d['rows'][0][k], (int, float)), k\n"
    "assert isinstance(d['rows'][2]['frag_free_end'], float)\n";

int main(void)
{
    struct trace_builder tb = {0};
    uint64_t live;
    random_trace(&tb, 3000, 99, &live);
    /* A path JSON must escape. */
    write_trace("formats \"q\".fat", &tb);

    struct run_result r = run_replay("formats-csv", "formats \"q\".fat", "--csv", "--engine",
                                     "--policy", "first,best");
    CHECK_RUN(r, 0, "");
    CHECK_MSG(strncmp(r.out, FIELDS "\n", strlen(FIELDS) + 1) == 0, "CSV header:\n%s", r.out);
    /* Three rows; the engine's lab-only fields are empty. */
    size_t lines = 0;
    for (const char *p = r.out; (p = strchr(p, '\n')); p++)
        lines++;
    CHECK_EQ(lines, 4);
    const char *engine = strstr(r.out, "\nengine,");
    CHECK(engine != NULL);
    CHECK(strstr(engine, ",,,,,,") != NULL);
    run_result_release(&r);

    r = run_replay("formats-table", "formats \"q\".fat", "--engine", "--policy", "first,best");
    CHECK_RUN(r, 0, "");
    /* The header line: the same names, separated by spaces. */
    char header[1024];
    size_t n = strcspn(r.out, "\n");
    CHECK_LT(n, sizeof header);
    memcpy(header, r.out, n);
    header[n] = 0;
    const char *want[] = {"config",          "ops",       "peak_heap", "frag_free_mean",
                          "free_blocks_end", "coalesces", "p99_ns",    "unmatched"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        CHECK_MSG(strstr(header, want[i]) != NULL, "table header: %s", header);
    CHECK(strncmp(r.out, "config ", 7) == 0);
    CHECK(strstr(r.out, "\nfirst ") && strstr(r.out, "\nbest ") && strstr(r.out, "\nengine "));
    CHECK(strstr(strstr(r.out, "\nengine "), " - ") != NULL);
    run_result_release(&r);

    r = run_replay("formats-json", "formats \"q\".fat", "--json", "--engine", "--policy",
                   "first,best");
    CHECK_RUN(r, 0, "");
    CHECK(r.out[0] == '{');
    run_result_release(&r);

    r = run_replay("formats-both", "formats \"q\".fat", "--json", "--csv");
    CHECK_RUN(r, 2, "exclude each other");
    run_result_release(&r);

    if (system("python3 -c 'import json' >/dev/null 2>&1") != 0) {
        fprintf(stderr, "python3 not found: the JSON is not parsed (skipped)\n");
        return 77;
    }
    FILE *f = fopen("formats-check.py", "w");
    CHECK(f && fputs(json_check, f) >= 0 && fclose(f) == 0);
    int rc = system("python3 formats-check.py formats-json.stdout " FIELDS);
    CHECK_MSG(rc == 0, "the JSON output failed its check (formats-json.stdout)");
    tb_release(&tb);
    return 0;
}
