# Debian packages, by CPack (cpack -G DEB): one package per install component.
#
#   runtime -> libfitalloc<ABI>  the shared libraries by their sonames (libfitalloc.so.<ABI>,
#                                secure mode's libfitalloc-secure.so.<ABI>; section libs)
#   devel   -> libfitalloc-dev   headers, libfitalloc.so, libfitalloc-secure.so,
#                                libfitalloc.a, pkg-config and CMake
#                                package files, fitalloc(3)
#   tools   -> fitalloc-tools    the fitalloc command, fitalloc-replay, the Python package,
#                                fitalloc(1)
#
# Configure with -DFITALLOC_DEB=ON -DCMAKE_INSTALL_PREFIX=/usr (GNUInstallDirs then picks the
# multiarch library directory), build, and run cpack -G DEB in the build directory:
# tools/package.sh does that. FITALLOC_DEB also installs each package's copyright file and
# Debian changelog and gives the installed command /usr/bin/python3 as its interpreter; other
# builds have no CPack configuration (their /usr/local layout is not a Debian package's).
# Versions: PROJECT_VERSION and FITALLOC_ABI_VERSION (CMakeLists.txt); the Debian revision is
# FITALLOC_DEB_RELEASE. Dates (changelog, copyright year): SOURCE_DATE_EPOCH when set.
#
# lintian (tools/package.sh --test fails on an error or another warning) leaves this warning,
# knowingly:
#   initial-upload-closes-no-bugs  the changelog closes no "intent to package" bug: these
#                                  packages are not uploaded to Debian's archive
if(NOT FITALLOC_DEB)
    return()
endif()
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    message(WARNING "fitalloc: FITALLOC_DEB=ON with CMAKE_INSTALL_PREFIX=${CMAKE_INSTALL_PREFIX}: "
                    "Debian packages install in /usr")
endif()

set(FITALLOC_DEB_RELEASE 1 CACHE STRING "Debian revision of the packages (the -N of 0.1.0-N)")
set(FITALLOC_DEB_MAINTAINER "fitalloc maintainers <maintainers@users.noreply.a-seed-bdcb7ca8.example>"
    CACHE STRING "Maintainer field of the Debian packages")

set(CPACK_PACKAGE_NAME fitalloc)
set(CPACK_PACKAGE_VENDOR "the fitalloc developers")
set(CPACK_PACKAGE_CONTACT "${FITALLOC_DEB_MAINTAINER}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime devel tools)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_PACKAGE_RELEASE "${FITALLOC_DEB_RELEASE}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # <package>_<version>-<revision>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # libc6 (>= ...) from dpkg-shlibdeps
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # DEBIAN/shlibs
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON) # the component DEPENDS below, at this version
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

# Descriptions: the first line is the package's synopsis, the rest its extended description.
# CPack's Deb generator puts CPACK_PACKAGE_DESCRIPTION_SUMMARY before each of them unless it
# is CPack's default, which it is set to here (CPack would take PROJECT_DESCRIPTION).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(_fa_lib_package "libfitalloc${FITALLOC_ABI_VERSION}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "${_fa_lib_package}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "fast drop-in memory allocator for Linux
fitalloc replaces malloc, free, calloc, realloc, the aligned allocation
functions and C++ operator new and delete, preloaded (LD_PRELOAD) or linked.
It has thread-local heaps, size classes and lock-free cross-thread frees,
and gives free memory back to the OS after a delay, from a background thread.
FITALLOC_MODE=lab serves allocations from a classic free-list heap under a
placement policy chosen at run time.
FITALLOC_SECURE=1 with libfitalloc-secure.so adds canaries, a quarantine,
guard pages and checked copies (memcpy, memmove, memset).
.
This package holds the shared libraries.")
# ldconfig runs on install and removal through dpkg's trigger, Debian's way (lintian:
# maintscript-calls-ldconfig). CPack writes a postinst and a postrm that call ldconfig for a
# package with a library in /usr/lib unless the control files given here include its own;
# naming them without making them leaves both out, since CPack adds only the files that exist.
# tools/package.sh --test checks that the package has no maintainer script.
set(_fa_runtime_control "${PROJECT_BINARY_DIR}/debian/runtime")
file(WRITE "${_fa_runtime_control}/triggers" "activate-noawait ldconfig\n")
file(REMOVE "${_fa_runtime_control}/postinst" "${_fa_runtime_control}/postrm")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA "${_fa_runtime_control}/triggers"
    "${_fa_runtime_control}/postinst" "${_fa_runtime_control}/postrm")

set(CPACK_DEBIAN_DEVEL_PACKAGE_NAME libfitalloc-dev)
set(CPACK_DEBIAN_DEVEL_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEVEL_DEPENDS runtime)
set(CPACK_COMPONENT_DEVEL_DESCRIPTION "fast drop-in memory allocator for Linux - development files
fitalloc replaces malloc, free and C++ operator new and delete, preloaded or
linked, and offers the same functions under the fa_ prefix, with statistics.
.
This package holds the headers, the libfitalloc.so link, the static library,
the pkg-config file, the CMake package (find_package(fitalloc)) and the
fitalloc(3) manual page.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME fitalloc-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "python3, python3-matplotlib, binutils")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "fast drop-in memory allocator for Linux - tools
The fitalloc command runs a program under fitalloc, records its allocations,
replays them under every placement policy of fitalloc's policy lab, draws
the heaps and prints statistics; fitalloc-replay is the replay engine it
runs.")

# The packages' Debian changelog and copyright file, in /usr/share/doc/<package>.
set(CPACK_DEBIAN_PACKAGE_VERSION "${PROJECT_VERSION}-${FITALLOC_DEB_RELEASE}")
string(TIMESTAMP FA_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC) # SOURCE_DATE_EPOCH
string(TIMESTAMP FA_DEB_YEAR "%Y" UTC)
set(_fa_deb_dir "${PROJECT_BINARY_DIR}/debian")
configure_file("${PROJECT_SOURCE_DIR}/cmake/debian/copyright.in" "${_fa_deb_dir}/copyright" @ONLY)
configure_file("${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in" "${_fa_deb_dir}/changelog.Debian" @ONLY)
unset(CPACK_DEBIAN_PACKAGE_VERSION) # CPack adds the revision itself
find_program(FITALLOC_GZIP gzip REQUIRED)
add_custom_command(OUTPUT "${_fa_deb_dir}/changelog.Debian.gz"
    COMMAND "${FITALLOC_GZIP}" -9nkf "${_fa_deb_dir}/changelog.Debian"
    DEPENDS "${_fa_deb_dir}/changelog.Debian" VERBATIM)
add_custom_target(fitalloc_deb_changelog ALL DEPENDS "${_fa_deb_dir}/changelog.Debian.gz")
foreach(_fa_component runtime devel tools)
    string(TOUPPER "${_fa_component}" _fa_upper)
    install(FILES "${_fa_deb_dir}/copyright" "${_fa_deb_dir}/changelog.Debian.gz"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${_fa_upper}_PACKAGE_NAME}"
        COMPONENT ${_fa_component})
endforeach()

include(CPack)
