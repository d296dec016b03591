# What `cmake --install` puts where (GNUInstallDirs, for the prefix
# configured: /usr would give Debian's multiarch libdir, the default
# /usr/local gives lib/, and so do the packages, which CPack puts under /usr
# from this tree): the client and benchmark tools in bin/, nfsrdma-server in
# sbin/ (it changes the host's NFS server: root's tool, as exportfs and
# rpc.nfsd are), the client library (NfsrdmaClientLibrary.cmake) with its
# public headers only, a pkg-config file and a CMake package config, bash
# completion, and the example configs under the documentation directory.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# nfsrdma_gzip(SOURCE OUTPUT): OUTPUT made at build time as gzip -n -9 of
# SOURCE (-n: no name or time stamp, so a rebuild gives the same bytes), as
# Debian wants man pages and changelogs.
function(nfsrdma_gzip source output)
  get_filename_component(dir ${output} DIRECTORY)
  get_filename_component(name ${output} NAME)
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND sh -c "gzip -n -9 -c '${source}' > '${output}'"
    DEPENDS ${source}
    COMMENT "${name}"
    VERBATIM)
endfunction()

install(TARGETS nfsrdma-client nfsrdma-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  COMPONENT tools)
install(TARGETS nfsrdma-server RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT tools)
# A shared library is not executable (Debian's dh_fixperms would say 644 too).
install(TARGETS nfsrdma_client_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
  COMPONENT library NAMELINK_COMPONENT dev)
install(FILES ${nfsrdma_client_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)

# The API (client/README.md): Client.h and what it includes, nothing of the
# layers' machinery. Users compile with -I<includedir>/nfsrdma and include
# <client/Client.h>, the paths the headers use among themselves.
set(nfsrdma_include_dir ${CMAKE_INSTALL_INCLUDEDIR}/nfsrdma)
install(FILES client/Client.h client/ClientOptions.h client/Error.h client/KernelMounts.h
  DESTINATION ${nfsrdma_include_dir}/client COMPONENT dev)
install(FILES client/base/Error.h client/base/RpcStats.h
  DESTINATION ${nfsrdma_include_dir}/client/base COMPONENT dev)
install(FILES client/nfs4/Attributes.h client/nfs4/Nfs4Constants.h client/nfs4/SessionStats.h
  DESTINATION ${nfsrdma_include_dir}/client/nfs4 COMPONENT dev)

# Both files find the prefix from where they are installed, so an install
# under another --prefix (a staging tree, a package's) still points at itself.
set(nfsrdma_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH nfsrdma_pc_to_prefix /${nfsrdma_pc_dir} /)
string(REGEX REPLACE "/$" "" nfsrdma_pc_to_prefix "${nfsrdma_pc_to_prefix}")
configure_file(cmake/nfsrdma-client.pc.in ${CMAKE_BINARY_DIR}/nfsrdma-client.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/nfsrdma-client.pc DESTINATION ${nfsrdma_pc_dir} COMPONENT dev)

set(nfsrdma_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/nfsrdma)
configure_package_config_file(cmake/nfsrdmaConfig.cmake.in
  ${CMAKE_BINARY_DIR}/nfsrdmaConfig.cmake
  INSTALL_DESTINATION ${nfsrdma_cmake_dir}
  PATH_VARS nfsrdma_include_dir CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/nfsrdmaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor version may change the ABI
install(FILES ${CMAKE_BINARY_DIR}/nfsrdmaConfig.cmake ${CMAKE_BINARY_DIR}/nfsrdmaConfigVersion.cmake
  DESTINATION ${nfsrdma_cmake_dir} COMPONENT dev)

# Bash completion, read by bash-completion under each tool's name.
foreach(tool nfsrdma-bench nfsrdma-client nfsrdma-server)
  install(FILES packaging/bash-completion/nfsrdma RENAME ${tool}
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions COMPONENT tools)
endforeach()

install(FILES configs/server.example.yaml configs/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT tools)
install(FILES configs/kube/Containerfile DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/kube
  COMPONENT tools)
