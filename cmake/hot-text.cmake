# libfitalloc.so's code in three parts: first, right after the PLT, the functions a default-mode
# program runs (cmake/hot-text.txt, made by tools/hot-text.sh), then the heap profiler's, then,
# in a segment of its own, everything else (the lab, the recorder, secure mode, meshing,
# reports, the cold parts of functions). The kernel maps a library's code 64 KiB around each
# page a call faults in, or a large folio of the page cache whole: spread over the whole code,
# or in one segment with it, the default mode's functions kept all of it resident
# (docs/design.md, "Start-up").
#
# With -ffunction-sections each function is a section of its own; the linker script is the
# linker's own default one for a shared library (ld --verbose), with those sections named at
# the head of .text. One output section .text, as usual: tools that read symbols by section
# (valgrind) make nothing of a second one. Left out when the linker prints no script (lld)
# or its .text is not the expected one.
#
# The same script links the zero-initialised variables (.bss) that every process writes
# together, the large arrays after them (FA_BSS_APART, src/platform/compiler.h).
#
# No DT_FINI either (-fini names no function): the C runtime's _fini does nothing, but it sits
# after the last function, and calling it at exit faulted in the code's last window.

set(_fa_hot_list "${PROJECT_SOURCE_DIR}/cmake/hot-text.txt")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_fa_hot_list}")
set(_fa_probe "${PROJECT_BINARY_DIR}/CMakeFiles/hot-text-probe")
file(WRITE "${_fa_probe}.c" "int fa_probe;\n")
# The flags of the real link too: another linker chosen there (-fuse-ld=lld) prints no script.
separate_arguments(_fa_probe_flags UNIX_COMMAND "${CMAKE_C_FLAGS} ${CMAKE_SHARED_LINKER_FLAGS}")
list(APPEND _fa_probe_flags -shared -fPIC "-Wl,--verbose")
if(FITALLOC_HAVE_PACK_RELOCS)
    list(APPEND _fa_probe_flags "-Wl,-z,pack-relative-relocs")
endif()
execute_process(
    COMMAND ${CMAKE_C_COMPILER} ${_fa_probe_flags} -o "${_fa_probe}.so" "${_fa_probe}.c"
    OUTPUT_VARIABLE _fa_ld_out
    ERROR_QUIET
    RESULT_VARIABLE _fa_ld_rc)

set(_fa_rule "    *(.text.unlikely .text.*_unlikely .text.unlikely.*)\n")
set(_fa_bss_rule "   *(.bss .bss.* .gnu.linkonce.b.*)\n")
set(_fa_rule_at -1)
set(_fa_bss_at -1)
if(_fa_ld_rc EQUAL 0)
    # The script sits between two lines of 50 '='.
    string(REPEAT "=" 50 _fa_bar)
    string(FIND "${_fa_ld_out}" "${_fa_bar}\n" _fa_from)
    string(FIND "${_fa_ld_out}" "\n${_fa_bar}" _fa_to REVERSE)
    if(_fa_from GREATER_EQUAL 0 AND _fa_to GREATER _fa_from)
        math(EXPR _fa_from "${_fa_from} + 51")
        math(EXPR _fa_len "${_fa_to} - ${_fa_from} + 1")
        string(SUBSTRING "${_fa_ld_out}" ${_fa_from} ${_fa_len} _fa_script)
        string(FIND "${_fa_script}" "${_fa_rule}" _fa_rule_at)
        string(FIND "${_fa_script}" "${_fa_bss_rule}" _fa_bss_at)
    endif()
endif()

if(_fa_rule_at LESS 0 OR _fa_bss_at LESS 0)
    message(STATUS "fitalloc: the linker's default script is not the expected one: "
                   "code in link order (cmake/hot-text.cmake)")
else()
    # Constructors, destructors and the C runtime's code (crtbeginS.o, libc_nonshared.a's
    # pthread_atfork) run in every process.
    set(_fa_hot "    /* fitalloc: the default mode's code (cmake/hot-text.cmake) */\n"
                "    *(.text.startup .text.startup.*)\n"
                "    *(.text.exit .text.exit.*)\n"
                "    *crtbeginS.o(.text .text.*)\n"
                "    *libc_nonshared.a:*(.text .text.*)\n")
    file(STRINGS "${_fa_hot_list}" _fa_names REGEX "^[A-Za-z_]")
    foreach(name IN LISTS _fa_names)
        list(APPEND _fa_hot "    *(.text.${name})\n")
    endforeach()
    string(JOIN "" _fa_hot ${_fa_hot})
    string(REPLACE "${_fa_rule}" "${_fa_hot}${_fa_rule}" _fa_script "${_fa_script}")
    # The zero-initialised variables of every object first (those every process writes at
    # start before them all: FA_BSS_FIRST, .bss.fa_first), the large arrays after them
    # (FA_BSS_APART, src/platform/compiler.h: .bss.fa_apart), not in the order of the objects.
    string(REPLACE "${_fa_bss_rule}"
        "   *(.bss.fa_first)\n   *(.bss)\n   /* fitalloc: FA_BSS_APART's arrays last */\n${_fa_bss_rule}"
        _fa_script "${_fa_script}")
    # The call-frame tables apart from the read-only data, which starts on a 64 KiB boundary: the
    # heap profiler reads the tables from the file (src/platform/eh_frame.c), and the kernel's
    # fault-around of a page of .rodata (the options' names, constants) brought all of them in
    # with it (docs/decisions/096-profile-cost-cut.md). Kept as it is if the lines differ.
    set(_fa_ro "  .rodata         : { *(.rodata .rodata.* .gnu.linkonce.r.*) }\n"
               "  .rodata1        : { *(.rodata1) }\n")
    set(_fa_eh "  .eh_frame_hdr   : { *(.eh_frame_hdr) *(.eh_frame_entry .eh_frame_entry.*) }\n"
               "  .eh_frame       : ONLY_IF_RO { KEEP (*(.eh_frame)) *(.eh_frame.*) }\n")
    string(JOIN "" _fa_ro ${_fa_ro})
    string(JOIN "" _fa_eh ${_fa_eh})
    string(REPLACE "  .rodata         : {" "  .rodata ALIGN(0x10000) : {" _fa_ro_apart "${_fa_ro}")
    string(REPLACE "${_fa_ro}${_fa_eh}" "${_fa_ro_apart}" _fa_script_split "${_fa_script}")
    # The heap profiler's code and read-only data in two segments of their own, between the
    # call-frame tables and the rest of the code: a profiled program runs about 18 KiB of code
    # outside the default mode's, which, spread over .text.cold, kept 64 KiB of it resident, and
    # read .rodata (docs/decisions/122-profile-fixed-memory.md). Its files whole, and the
    # functions of other files that only a profiled program runs.
    set(_fa_prof_files "*src/profile/*.o" "*src/platform/stack_walk.c.o"
        "*src/platform/eh_frame.c.o" "*src/platform/signal_count.c.o"
        "*src/engine/profile_pages.c.o")
    # The options' names too (.rodata only), which a process with FITALLOC_PROFILE set reads.
    set(_fa_prof_ro_files "*src/common/options.c.o")
    set(_fa_prof_text "")
    set(_fa_prof_ro "")
    foreach(f IN LISTS _fa_prof_files)
        string(APPEND _fa_prof_text "    ${f}(.text .text.*)\n")
    endforeach()
    foreach(f IN LISTS _fa_prof_files _fa_prof_ro_files)
        string(APPEND _fa_prof_ro "    ${f}(.rodata .rodata.*)\n")
    endforeach()
    # _fa_malloc_generic's cold part: its jumps to malloc_profiled and malloc_profiled_local.
    set(_fa_prof_names .text.unlikely.malloc_profiled .text.unlikely.malloc_profiled_local
        .text.unlikely._fa_malloc_generic
        .text._fa_os_write .text._fa_os_create_append .text._fa_os_copy_file .text._fa_os_close
        .text._fa_os_pid .text._fa_os_random .text.find_code .text.program_holds
        .text._fa_os_code_range .text._fa_os_code_in_program)
    string(JOIN " " _fa_prof_names ${_fa_prof_names})
    string(CONCAT _fa_profile "  . = ALIGN(CONSTANT (MAXPAGESIZE));\n  .text.profile   :\n  {\n"
                  "${_fa_prof_text}    *(${_fa_prof_names})\n  }\n"
                  "  . = ALIGN(CONSTANT (MAXPAGESIZE));\n  .rodata.profile :\n  {\n"
                  "${_fa_prof_ro}  }\n")
    # The rest of the code in a segment of its own (.text.cold), after the call-frame tables: a
    # kernel that maps a large folio of the page cache whole maps only its part inside the
    # mapping that faulted, so a small process no longer has all the code resident (record 114).
    # Valgrind makes nothing of a second section named .text; it names the functions of this one.
    string(CONCAT _fa_split "  }\n  . = ALIGN(CONSTANT (MAXPAGESIZE));\n" "${_fa_eh}"
                  "${_fa_profile}"
                  "  . = ALIGN(CONSTANT (MAXPAGESIZE));\n  .text.cold      :\n  {\n")
    if(NOT _fa_script_split STREQUAL _fa_script)
        string(REPLACE "${_fa_hot}${_fa_rule}" "${_fa_hot}${_fa_split}${_fa_rule}" _fa_script
            "${_fa_script_split}")
    endif()
    set(_fa_script_file "${PROJECT_BINARY_DIR}/hot-text.ld")
    file(WRITE "${_fa_script_file}.new" "${_fa_script}")
    configure_file("${_fa_script_file}.new" "${_fa_script_file}" COPYONLY)
    # -z separate-code: code apart from read-only data (x86-64's default, not aarch64's), so
    # that the two parts of the code are two segments.
    target_link_options(fitalloc PRIVATE "LINKER:-T,${_fa_script_file}" "LINKER:-fini=fa_no_fini"
        "LINKER:-z,separate-code")
    set_property(TARGET fitalloc APPEND PROPERTY LINK_DEPENDS "${_fa_script_file}")
endif()
