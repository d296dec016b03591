# The client library as others link it: libnfsrdma-client.so.<major> (SONAME,
# version) and libnfsrdma-client.a, each the whole of the client's layers.
# Inside the tree every layer stays a static library of its own (the build
# enforces the layering through them); these two are assembled from those
# archives, so no source is compiled twice:
#   shared: the layers' archives linked whole (--whole-archive) into one .so,
#           util and verbs pulled in as far as the layers use them, and
#           --no-undefined so a missing piece fails here, not in a user's link;
#   static: the layers', util's and verbs' archives merged into one by ar's
#           MRI script (a user's link takes only the members it needs).
# The layers are built position-independent for the shared library.
set(nfsrdma_client_layers
  nfsrdma_client nfsrdma_client_mount nfsrdma_client_nfs4 nfsrdma_client_rpc
  nfsrdma_client_rdma nfsrdma_client_transport nfsrdma_client_xdr nfsrdma_client_base)
set(nfsrdma_client_support nfsrdma_verbs nfsrdma_util)
foreach(layer IN LISTS nfsrdma_client_layers nfsrdma_client_support)
  set_target_properties(${layer} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endforeach()

# add_library wants a source; every object of the .so comes from the layers.
set(nfsrdma_empty_cpp ${CMAKE_BINARY_DIR}/nfsrdma_client_shared.cpp)
file(WRITE ${nfsrdma_empty_cpp} "// The objects of libnfsrdma-client.so come whole from the client's layers.\n")
add_library(nfsrdma_client_shared SHARED ${nfsrdma_empty_cpp})
set_target_properties(nfsrdma_client_shared PROPERTIES
  OUTPUT_NAME nfsrdma-client
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
# The archives by path between --whole-archive and --no-whole-archive (CMake's
# WHOLE_ARCHIVE feature refuses a library that also comes in through another
# layer's link interface), then what they need from outside the client.
set(nfsrdma_layer_archives ${nfsrdma_client_layers})
list(TRANSFORM nfsrdma_layer_archives REPLACE "(.+)" "$<TARGET_FILE:\\1>")
add_dependencies(nfsrdma_client_shared ${nfsrdma_client_layers})
set_target_properties(nfsrdma_client_shared PROPERTIES LINK_DEPENDS "${nfsrdma_layer_archives}")
target_link_libraries(nfsrdma_client_shared PRIVATE nfsrdma_options
  -Wl,--whole-archive ${nfsrdma_layer_archives} -Wl,--no-whole-archive
  nfsrdma_verbs nfsrdma_util Threads::Threads)
if(NOT NFSRDMA_SANITIZE)
  target_link_options(nfsrdma_client_shared PRIVATE -Wl,--no-undefined)
endif()

set(nfsrdma_client_archive ${CMAKE_BINARY_DIR}/lib/libnfsrdma-client.a)
set(nfsrdma_archives ${nfsrdma_client_layers} ${nfsrdma_client_support})
list(TRANSFORM nfsrdma_archives REPLACE "(.+)" "$<TARGET_FILE:\\1>")
list(JOIN nfsrdma_archives "\naddlib " nfsrdma_addlibs)
file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/nfsrdma-client.mri
  CONTENT "create ${nfsrdma_client_archive}\naddlib ${nfsrdma_addlibs}\nsave\nend\n")
add_custom_command(OUTPUT ${nfsrdma_client_archive}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/lib
  COMMAND ${CMAKE_COMMAND} -E rm -f ${nfsrdma_client_archive}
  COMMAND sh -c "'${CMAKE_AR}' -M < '${CMAKE_BINARY_DIR}/nfsrdma-client.mri'"
  DEPENDS ${nfsrdma_client_layers} ${nfsrdma_client_support} ${nfsrdma_archives}
  COMMENT "libnfsrdma-client.a: the client's layers in one archive"
  VERBATIM)
add_custom_target(nfsrdma_client_static ALL DEPENDS ${nfsrdma_client_archive})
