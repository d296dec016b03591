# Warning and sanitizer flags shared by every nfsrdma target through the
# nfsrdma_options interface library (PRIVATE use only: consumers of our
# libraries do not inherit our warning policy).
add_library(nfsrdma_options INTERFACE)
target_compile_options(nfsrdma_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wconversion -Wsign-conversion
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
# GCC 12 reports false -Wrestrict hits inside libstdc++'s std::string at -O2
# (GCC bug 105329); they are not ours to fix.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(nfsrdma_options INTERFACE -Wno-restrict)
endif()
if(NFSRDMA_WERROR)
  target_compile_options(nfsrdma_options INTERFACE -Werror)
endif()
if(NFSRDMA_SANITIZE)
  target_compile_options(nfsrdma_options INTERFACE
    -fsanitize=${NFSRDMA_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(nfsrdma_options INTERFACE -fsanitize=${NFSRDMA_SANITIZE})
endif()

# nfsrdma_add_library(name folder sources...): one static library per layer,
# with the repository root as its include root ("client/xdr/XdrEncoder.h").
function(nfsrdma_add_library name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE nfsrdma_options)
endfunction()

# nfsrdma_add_executable(name sources...)
function(nfsrdma_add_executable name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE nfsrdma_options)
endfunction()
