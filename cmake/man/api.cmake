# cmake -DHEADER=include/fitalloc.h -DTEMPLATE=cmake/man/fitalloc.3.md.in -DOUTPUT=<file> [-D...] -P
# Fills the fitalloc(3) page's template with the API of include/fitalloc.h, so that the page
# says what the header says: @FA_MAN_API_INTRO@ is the header's opening comment, @FA_MAN_API@
# its declarations with their comments (inside extern "C"). Other @VAR@ come from -D.
file(READ "${HEADER}" _text)
if(NOT _text MATCHES "^/\\*(.*)\\*/\n#ifndef")
    message(FATAL_ERROR "${HEADER}: no opening comment")
endif()
string(REGEX MATCH "^/\\*([^*]|\\*[^/])*\\*/" _intro "${_text}")
string(REGEX REPLACE "^/\\* *[^\n]*\n" "" _intro "${_intro}")  # its first line: the title
string(REGEX REPLACE "\n *\\*/$" "" _intro "${_intro}")
string(REGEX REPLACE "(^|\n) \\* ?" "\\1" _intro "${_intro}")
string(REPLACE "fa_" "fa\\_" _intro "${_intro}")
string(STRIP "${_intro}" FA_MAN_API_INTRO)

string(FIND "${_text}" "extern \"C\" {\n#endif\n" _begin)
string(FIND "${_text}" "\n#ifdef __cplusplus\n}" _end REVERSE)
if(_begin LESS 0 OR _end LESS _begin)
    message(FATAL_ERROR "${HEADER}: no extern \"C\" block")
endif()
math(EXPR _begin "${_begin} + 20")
math(EXPR _length "${_end} - ${_begin}")
string(SUBSTRING "${_text}" ${_begin} ${_length} FA_MAN_API)
string(STRIP "${FA_MAN_API}" FA_MAN_API)

configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
