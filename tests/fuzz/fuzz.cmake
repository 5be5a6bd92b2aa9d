# The libFuzzer targets and their CTest tests (included by the top-level CMakeLists.txt when
# FITALLOC_FUZZ is ON). Each test runs a target for a fixed number of inputs from seed 1,
# starting from the committed corpus, which stays read-only (run_fuzz.sh). The inputs tried still
# vary a little from run to run: coverage feeds back, and the allocator's branches depend on
# addresses (ASLR) and on its purge thread's timing. Any failed check, sanitizer report or crash
# fails the test, and the input is kept in <build>/tests/fuzz/work-<test>/.
# Tests: fuzz/fast, fuzz/lab-<policy>-<index>[-variant], and the multi-threaded target under the
# fast engine and each lab lock mode: fuzz/threads-fast, fuzz/threads-lab-<lock>; the trace
# reader of fitalloc-replay: fuzz/trace; label "fuzz".

find_program(FITALLOC_BASH bash REQUIRED)
set(_fz_src "${PROJECT_SOURCE_DIR}/tests/fuzz")
set(_fz_bin "${PROJECT_BINARY_DIR}/tests/fuzz")

foreach(_fz fast lab threads)
    add_executable(fuzz_${_fz} "${_fz_src}/fuzz_${_fz}.c")
    set_target_properties(fuzz_${_fz} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${_fz_bin}")
    target_compile_options(fuzz_${_fz} PRIVATE -Wall -Wextra -fsanitize=fuzzer)
    target_link_options(fuzz_${_fz} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${_fz} PRIVATE fitalloc_static)
endforeach()

# Inputs per test: smoke is a regression check sized for CI (the stage takes minutes on 2 cores;
# the lab's whole-heap check after every 8th op is most of it); real is 5 times that, and
# tools/fuzz.sh runs the targets for as long as asked.
set(_fz_runs_fast 20000)
set(_fz_runs_lab 8000)
set(_fz_runs_threads 4000)
if(FITALLOC_TEST_SIZE STREQUAL "real")
    math(EXPR _fz_runs_fast "${_fz_runs_fast} * 5")
    math(EXPR _fz_runs_lab "${_fz_runs_lab} * 5")
    math(EXPR _fz_runs_threads "${_fz_runs_threads} * 5")
endif()

# _fa_fuzz_test(<name> <target> <runs> [ENV=value...])
function(_fa_fuzz_test name target runs)
    add_test(NAME "fuzz/${name}"
        COMMAND "${FITALLOC_BASH}" "${_fz_src}/run_fuzz.sh" "$<TARGET_FILE:${target}>"
            "${_fz_bin}/work-${name}" "${_fz_src}/corpus"
            -runs=${runs} -seed=1 -max_len=512 -len_control=0 -timeout=30 -rss_limit_mb=2048
            -print_final_stats=1
        WORKING_DIRECTORY "${_fz_bin}")
    set_tests_properties("fuzz/${name}" PROPERTIES
        LABELS fuzz
        TIMEOUT 600
        ENVIRONMENT "${ARGN}")
endfunction()

_fa_fuzz_test(fast fuzz_fast ${_fz_runs_fast})
set(_fz_lab FITALLOC_MODE=lab FITALLOC_LOCK=global)
foreach(_fz first-tree next-tree best-tree worst-tree segregated-tree tlsf-tree buddy-tree slab-tree best-list)
    string(REGEX MATCH "^[a-z]+" _fz_policy "${_fz}")
    string(REGEX MATCH "[a-z]+$" _fz_index "${_fz}")
    _fa_fuzz_test(lab-${_fz} fuzz_lab ${_fz_runs_lab} ${_fz_lab}
        FITALLOC_POLICY=${_fz_policy} FITALLOC_LAB_INDEX=${_fz_index})
endforeach()
# Without coalescing the heap only fragments, input after input: a fixed arena bounds it.
_fa_fuzz_test(lab-first-list-nocoalesce fuzz_lab ${_fz_runs_lab} ${_fz_lab}
    FITALLOC_POLICY=first FITALLOC_LAB_INDEX=list FITALLOC_LAB_COALESCE=0 FITALLOC_LAB_ARENA=256K)
_fa_fuzz_test(lab-best-tree-arena64k fuzz_lab ${_fz_runs_lab} ${_fz_lab}
    FITALLOC_POLICY=best FITALLOC_LAB_INDEX=tree FITALLOC_LAB_ARENA=65536)
_fa_fuzz_test(lab-tlsf-arena64k fuzz_lab ${_fz_runs_lab} ${_fz_lab}
    FITALLOC_POLICY=tlsf FITALLOC_LAB_ARENA=65536)

# 2-4 threads per input, handing blocks to each other (fuzz_threads.c).
_fa_fuzz_test(threads-fast fuzz_threads ${_fz_runs_threads})
foreach(_fz global thread arenas)
    _fa_fuzz_test(threads-lab-${_fz} fuzz_threads ${_fz_runs_threads} FITALLOC_MODE=lab
        FITALLOC_LOCK=${_fz})
endforeach()

# The trace reader of fitalloc-replay on arbitrary bytes (fuzz_trace.c), from real traces.
add_executable(fuzz_trace "${_fz_src}/fuzz_trace.c"
    "${PROJECT_SOURCE_DIR}/tools/replay/trace_reader.c"
    "${PROJECT_SOURCE_DIR}/tools/replay/program_order.c"
    "${PROJECT_SOURCE_DIR}/tools/replay/replay_mem.c")
set_target_properties(fuzz_trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${_fz_bin}")
target_include_directories(fuzz_trace PRIVATE
    "${PROJECT_SOURCE_DIR}/include" "${PROJECT_SOURCE_DIR}/tools/replay")
target_compile_options(fuzz_trace PRIVATE -Wall -Wextra -fsanitize=fuzzer)
target_link_options(fuzz_trace PRIVATE -fsanitize=fuzzer)
set(_fz_runs_trace 60000)
if(FITALLOC_TEST_SIZE STREQUAL "real")
    math(EXPR _fz_runs_trace "${_fz_runs_trace} * 5")
endif()
# -close_fd_mask=2: the reader explains every input it refuses on stderr; libFuzzer still
# prints a crash's report.
add_test(NAME "fuzz/trace"
    COMMAND "${FITALLOC_BASH}" "${_fz_src}/run_fuzz.sh" "$<TARGET_FILE:fuzz_trace>"
        "${_fz_bin}/work-trace" "${_fz_src}/corpus-trace"
        -runs=${_fz_runs_trace} -seed=1 -max_len=4096 -timeout=30 -rss_limit_mb=2048
        -close_fd_mask=2 -print_final_stats=1
    WORKING_DIRECTORY "${_fz_bin}")
set_tests_properties("fuzz/trace" PROPERTIES LABELS fuzz TIMEOUT 600)
