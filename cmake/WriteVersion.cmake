# cmake -P script, run at every build (util/CMakeLists.txt): writes the
# build's version into OUTPUT from util/Version.cpp.in. configure_file keeps
# the file, and its timestamp, when the text is unchanged, so a build after
# a new commit recompiles that one file and relinks, and any other build
# compiles nothing. Inputs: SOURCE_DIR (the source tree), TEMPLATE, OUTPUT,
# VERSION (the project's, e.g. 0.1.0).
# The commit: 12 hex digits of HEAD, "-dirty" when tracked files differ
# from it (--exclude='*': a tag never replaces the hash). No git, or a tree
# that is no repository (a tarball): "unknown", said as such.
set(NFSRDMA_COMMIT unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12 --exclude=*
    OUTPUT_VARIABLE described
    RESULT_VARIABLE failed
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
  if(NOT failed AND described MATCHES "^[0-9a-f]+(-dirty)?$")
    set(NFSRDMA_COMMIT "${described}")
  endif()
endif()
set(NFSRDMA_VERSION "${VERSION}")
configure_file("${TEMPLATE}" "${OUTPUT}" @ONLY)
