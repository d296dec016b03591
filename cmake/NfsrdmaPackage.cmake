# The Debian packages, from the installed tree of this build by CPack's DEB
# generator (`cpack --config build/CPackConfig.cmake`): no second build, as
# dpkg-buildpackage would need, so CI checks the packages of the binaries it
# tested. One package per install component, split as Debian splits a
# library: nfsrdma (the tools, man pages, example configs),
# libnfsrdma-client0 (the shared library; its name follows the SONAME) and
# libnfsrdma-client-dev (headers, the .so link, the archive, pkg-config and
# CMake files). Runtime dependencies come from the binaries
# (dpkg-shlibdeps), the library's shlibs file from CPack, the ldconfig
# trigger from packaging/deb/triggers (CMake 3.25's CPack also writes an
# ldconfig postinst and postrm, which lintian warns of); each package
# carries Debian's copyright and changelog.Debian.gz (packaging/deb/), outside a plain `cmake --install`.
set(nfsrdma_deb_release 1)
set(nfsrdma_deb_packages tools nfsrdma library libnfsrdma-client0 dev libnfsrdma-client-dev)

set(nfsrdma_changelog_gz ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz)
nfsrdma_gzip(${PROJECT_SOURCE_DIR}/packaging/deb/changelog ${nfsrdma_changelog_gz})
add_custom_target(nfsrdma_deb_changelog ALL DEPENDS ${nfsrdma_changelog_gz})
while(nfsrdma_deb_packages)
  list(POP_FRONT nfsrdma_deb_packages component package)
  install(FILES packaging/deb/copyright ${nfsrdma_changelog_gz}
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package}
    COMPONENT ${component} EXCLUDE_FROM_ALL)
  string(TOUPPER ${component} c)
  set(CPACK_DEBIAN_${c}_PACKAGE_NAME ${package})
endwhile()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nfsrdma)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "nfsrdma developers <nfsrdma@example.org>")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL tools library dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${nfsrdma_deb_release})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

# Descriptions: a synopsis line, then the long text (CPack indents it).
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "NFS over RDMA: set up, measure and tune
nfsrdma-server sets up the kernel NFS server for NFS over RDMA (RoCE,
InfiniBand) from one YAML file, reversibly, or serves with nfs-ganesha.
nfsrdma-client is an NFSv4.1 client over TCP and RPC-over-RDMA and plans
the kernel client's mounts. nfsrdma-bench measures links, files, many
clients (MPI, Kubernetes) and block targets side by side, says what bounds
each figure, and tunes the settings of a workload.")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "nfs-ganesha, nfs-ganesha-vfs")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "nfs-kernel-server, nfs-common, openmpi-bin, perftest, fio")

set(CPACK_DEBIAN_LIBRARY_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_LIBRARY_DESCRIPTION "NFSv4.1 client library over TCP and RPC-over-RDMA
A userspace NFSv4.1 client: sessions, trunking with nconnect, RPC-over-RDMA
v1 through rdma-core, and ride-through of lost connections and server
restarts. This package holds the shared library.")
# Its shlibs file (CPack's switch is global; only this package has a shared
# object) names the exact version: a 0.x library's ABI may change without a
# new SONAME. The loader's cache is updated by libc's ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_LIBRARY_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/deb/triggers)

set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION "NFSv4.1 client library over TCP and RDMA - development files
The headers of the nfsrdma client's API (client/Client.h), the static
library, the pkg-config file nfsrdma-client.pc and the CMake package
nfsrdma (find_package(nfsrdma), target nfsrdma::client).")
set(CPACK_COMPONENT_DEV_DEPENDS library)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libibverbs-dev, librdmacm-dev")
include(CPack)
