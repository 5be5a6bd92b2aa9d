# Manual pages, made from what is already written, so that nothing is written twice:
#   fitalloc(1)         the fitalloc command: docs/command.md, by pandoc
#   fitalloc(3)         preloading, the options and the fa_* API: include/fitalloc.h and
#                       docs/options.md, by pandoc
#   fitalloc-replay(1)  its --help, by help2man
# The pages are for the installed system: the filter (cmake/man/man.lua) leaves out what docs/
# says of the source tree (citations of its files, sections headed "In the source tree");
# tests/docs/test_man_pages.sh checks it.
# cmake/man/ holds each page's NAME line and pandoc's filter (man.lua). Installed gzip'ed
# (gzip -9n, as Debian wants) in share/man: fitalloc.1 with the tools component, fitalloc.3 with
# devel, fitalloc-replay.1 with tools. FITALLOC_MANPAGES: AUTO makes them when pandoc and
# help2man are found, ON requires them.
set(FITALLOC_MANPAGES AUTO CACHE STRING "Build the manual pages with pandoc: AUTO, ON or OFF")
set_property(CACHE FITALLOC_MANPAGES PROPERTY STRINGS AUTO ON OFF)

if(NOT FITALLOC_MANPAGES STREQUAL "OFF")
    find_program(FITALLOC_PANDOC pandoc)
    find_program(FITALLOC_HELP2MAN help2man)
    find_program(FITALLOC_GZIP gzip)
    # help2man runs fitalloc-replay: not in a cross build, nor under a sanitizer (TSan's may
    # need ASLR off to start, tools/test.sh).
    if(NOT FITALLOC_PANDOC OR NOT FITALLOC_HELP2MAN OR NOT FITALLOC_GZIP OR CMAKE_CROSSCOMPILING
       OR FITALLOC_SANITIZE OR FITALLOC_FUZZ)
        if(FITALLOC_MANPAGES STREQUAL "ON")
            message(FATAL_ERROR "fitalloc: FITALLOC_MANPAGES=ON needs pandoc, help2man and gzip "
                                "(apt-get install pandoc help2man) and a native build without sanitizer")
        endif()
        message(STATUS "fitalloc: no manual pages (they need pandoc, help2man and a native build "
                       "without sanitizer)")
    else()
        set(_fa_man_src "${PROJECT_SOURCE_DIR}/cmake/man")
        set(_fa_man_dir "${PROJECT_BINARY_DIR}/man")
        string(TIMESTAMP FA_MAN_DATE "%Y-%m-%d" UTC) # SOURCE_DATE_EPOCH when set
        if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
            set(FA_MAN_LIBRARY "${CMAKE_INSTALL_LIBDIR}")
        else()
            set(FA_MAN_LIBRARY "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
        endif()
        set(FA_MAN_LIBRARY "${FA_MAN_LIBRARY}/libfitalloc.so.${FITALLOC_ABI_VERSION}")
        set(_fa_pandoc "${FITALLOC_PANDOC}" --standalone --from markdown --to man
            "--lua-filter=${_fa_man_src}/man.lua")

        configure_file("${_fa_man_src}/fitalloc.1.md.in" "${_fa_man_dir}/fitalloc.1.md" @ONLY)
        add_custom_command(OUTPUT "${_fa_man_dir}/fitalloc.1.gz"
            COMMAND ${_fa_pandoc} -o "${_fa_man_dir}/fitalloc.1"
                "${_fa_man_dir}/fitalloc.1.md" "${PROJECT_SOURCE_DIR}/docs/command.md"
                "${_fa_man_src}/see-also.1.md"
            COMMAND "${FITALLOC_GZIP}" -9nf "${_fa_man_dir}/fitalloc.1"
            DEPENDS "${_fa_man_dir}/fitalloc.1.md" "${PROJECT_SOURCE_DIR}/docs/command.md"
                "${_fa_man_src}/see-also.1.md" "${_fa_man_src}/man.lua"
            COMMENT "Manual page fitalloc(1)" VERBATIM)

        add_custom_command(OUTPUT "${_fa_man_dir}/fitalloc.3.gz"
            COMMAND "${CMAKE_COMMAND}" "-DHEADER=${PROJECT_SOURCE_DIR}/include/fitalloc.h"
                "-DTEMPLATE=${_fa_man_src}/fitalloc.3.md.in" "-DOUTPUT=${_fa_man_dir}/fitalloc.3.md"
                "-DPROJECT_VERSION=${PROJECT_VERSION}" "-DFA_MAN_DATE=${FA_MAN_DATE}"
                "-DFA_MAN_LIBRARY=${FA_MAN_LIBRARY}" -P "${_fa_man_src}/api.cmake"
            COMMAND ${_fa_pandoc} -o "${_fa_man_dir}/fitalloc.3"
                "${_fa_man_dir}/fitalloc.3.md" "${PROJECT_SOURCE_DIR}/docs/options.md"
                "${_fa_man_src}/see-also.3.md"
            COMMAND "${FITALLOC_GZIP}" -9nf "${_fa_man_dir}/fitalloc.3"
            DEPENDS "${_fa_man_src}/fitalloc.3.md.in" "${_fa_man_src}/api.cmake"
                "${PROJECT_SOURCE_DIR}/include/fitalloc.h" "${PROJECT_SOURCE_DIR}/docs/options.md"
                "${_fa_man_src}/see-also.3.md" "${_fa_man_src}/man.lua"
            COMMENT "Manual page fitalloc(3)" VERBATIM)

        # help2man runs the program built here; it has no --version, so the version is given.
        add_custom_command(OUTPUT "${_fa_man_dir}/fitalloc-replay.1.gz"
            COMMAND "${FITALLOC_HELP2MAN}" --no-info --section=1
                "--name=replay a fitalloc allocation trace under every placement policy"
                "--version-string=fitalloc-replay ${PROJECT_VERSION}"
                "--output=${_fa_man_dir}/fitalloc-replay.1" "$<TARGET_FILE:fitalloc-replay>"
            COMMAND "${FITALLOC_GZIP}" -9nf "${_fa_man_dir}/fitalloc-replay.1"
            DEPENDS fitalloc-replay
            COMMENT "Manual page fitalloc-replay(1)" VERBATIM)

        add_custom_target(fitalloc_manpages ALL
            DEPENDS "${_fa_man_dir}/fitalloc.1.gz" "${_fa_man_dir}/fitalloc.3.gz"
                "${_fa_man_dir}/fitalloc-replay.1.gz")
        install(FILES "${_fa_man_dir}/fitalloc.1.gz" "${_fa_man_dir}/fitalloc-replay.1.gz"
            DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT tools)
        install(FILES "${_fa_man_dir}/fitalloc.3.gz"
            DESTINATION "${CMAKE_INSTALL_MANDIR}/man3" COMPONENT devel)
    endif()
endif()
