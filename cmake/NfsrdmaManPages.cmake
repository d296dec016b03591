# The tools' man pages, made at build time by help2man from the tools' own
# --help (so a page cannot drift from the options it documents), gzipped
# (-n: no timestamp, so a rebuild gives the same file) and installed with the
# tools: nfsrdma-bench(1) and a page per command (nfsrdma-bench-tune(1), as
# git does), nfsrdma-client(1) with its mount and doctor commands, and
# nfsrdma-server(8) (in sbin/: an administrator's command).
find_program(NFSRDMA_HELP2MAN help2man)
if(NOT NFSRDMA_HELP2MAN)
  message(FATAL_ERROR "help2man not found: scripts/install-deps.sh installs it, or configure with "
    "-DNFSRDMA_MAN_PAGES=OFF to build without the man pages")
endif()
set(nfsrdma_man_dir ${CMAKE_BINARY_DIR}/man)
set(nfsrdma_man_pages)

# nfsrdma_man_page(PAGE SECTION TARGET "COMMAND WORDS" "NAME LINE" SEE_ALSO...)
function(nfsrdma_man_page page section target words name)
  set(out ${nfsrdma_man_dir}/${page}.${section})
  set(include ${nfsrdma_man_dir}/${page}.h2m)
  list(TRANSFORM ARGN PREPEND ".BR ")
  list(JOIN ARGN ",\n" see)
  file(WRITE ${include} "[SEE ALSO]\n${see}\n")
  # help2man names the page after the program it runs: a command's page runs
  # a one-line wrapper named for the page (nfsrdma-bench-tune), so that its
  # NAME line is one word, as whatis and lintian read it.
  set(program ${nfsrdma_man_dir}/run/${page})
  file(GENERATE OUTPUT ${program}
    CONTENT "#!/bin/sh\nexec '$<TARGET_FILE:${target}>'${words} \"$@\"\n"
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
  add_custom_command(OUTPUT ${out}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${nfsrdma_man_dir}
    COMMAND ${NFSRDMA_HELP2MAN} --no-info --section=${section} --name=${name}
      --version-string=${PROJECT_VERSION} --include=${include} --output=${out} ${program}
    COMMAND gzip -n -9 -f ${out}
    DEPENDS ${target} ${include}
    COMMENT "man page ${page}(${section}) from ${target}${words} --help"
    VERBATIM)
  set(nfsrdma_man_pages ${nfsrdma_man_pages} ${out}.gz PARENT_SCOPE)
  install(FILES ${out}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT tools)
endfunction()

set(nfsrdma_bench_commands
  "devices|list RDMA devices, ports, GIDs with their IPs and netdevs, link speed"
  "link|RDMA and TCP bandwidth and latency between two hosts, perftest-style"
  "anchor|our NFSv4.1 client against libnfs on the same server"
  "file|one fio-style file profile on an NFS server, libnfs or a local path"
  "compare|the side-by-side table of profiles and targets (disk, NFS/TCP, libnfs, NFS/RDMA)"
  "aggregate|add up many clients' result lines into aggregate and per-client rows"
  "kube|an N-client compare run as Kubernetes YAML"
  "tune|find the settings that make a workload fast, explain them and hand them over")
set(nfsrdma_bench_pages)
foreach(entry IN LISTS nfsrdma_bench_commands)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 command)
  list(APPEND nfsrdma_bench_pages "nfsrdma-bench-${command} (1)")
endforeach()
nfsrdma_man_page(nfsrdma-bench 1 nfsrdma-bench ""
  "benchmark NFS over RDMA, TCP, the local disk and block targets, and tune it"
  ${nfsrdma_bench_pages} "nfsrdma-client (1)" "nfsrdma-server (8)")
foreach(entry IN LISTS nfsrdma_bench_commands)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 command)
  list(GET parts 1 name)
  nfsrdma_man_page(nfsrdma-bench-${command} 1 nfsrdma-bench " ${command}" "${name}"
    "nfsrdma-bench (1)")
endforeach()
nfsrdma_man_page(nfsrdma-client 1 nfsrdma-client ""
  "an NFSv4.1 client over TCP and RPC-over-RDMA, and the kernel client's mount"
  "nfsrdma-client-mount (1)" "nfsrdma-client-doctor (1)" "nfsrdma-bench (1)"
  "nfsrdma-server (8)" "mount.nfs (8)")
nfsrdma_man_page(nfsrdma-client-mount 1 nfsrdma-client " mount"
  "plan and run the kernel client's NFS mount over RDMA or TCP" "nfsrdma-client (1)"
  "nfs (5)")
nfsrdma_man_page(nfsrdma-client-doctor 1 nfsrdma-client " doctor"
  "check this host's NFS-over-RDMA path, each finding with its fix" "nfsrdma-client (1)")
nfsrdma_man_page(nfsrdma-server 8 nfsrdma-server ""
  "set up the kernel NFS server for NFS over RDMA from one YAML file, or serve with nfs-ganesha"
  "nfsrdma-client (1)" "nfsrdma-bench (1)" "exports (5)" "nfsd (8)")
# Section 5 and 3: the server's YAML, from the annotated example config; the
# URL grammar and the library's entry points, written in docs/man/ and held
# to the client's --help and to Client.h by tests/integration/install.
set(nfsrdma_yaml_page ${nfsrdma_man_dir}/nfsrdma-server.yaml.5)
add_custom_command(OUTPUT ${nfsrdma_yaml_page}.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${nfsrdma_man_dir}
  COMMAND ${CMAKE_COMMAND} -DEXAMPLE=${PROJECT_SOURCE_DIR}/configs/server.example.yaml
    -DOUTPUT=${nfsrdma_yaml_page} -DVERSION=${PROJECT_VERSION}
    -P ${PROJECT_SOURCE_DIR}/cmake/ConfigManPage.cmake
  COMMAND gzip -n -9 -f ${nfsrdma_yaml_page}
  DEPENDS ${PROJECT_SOURCE_DIR}/configs/server.example.yaml
    ${PROJECT_SOURCE_DIR}/cmake/ConfigManPage.cmake
  COMMENT "man page nfsrdma-server.yaml(5) from configs/server.example.yaml"
  VERBATIM)
install(FILES ${nfsrdma_yaml_page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT tools)
list(APPEND nfsrdma_man_pages ${nfsrdma_yaml_page}.gz)
foreach(written nfsrdma-url.5:man5:tools libnfsrdma-client.3:man3:dev)
  string(REPLACE ":" ";" parts ${written})
  list(GET parts 0 page)
  list(GET parts 1 dir)
  list(GET parts 2 component)
  nfsrdma_gzip(${PROJECT_SOURCE_DIR}/docs/man/${page} ${nfsrdma_man_dir}/${page}.gz)
  install(FILES ${nfsrdma_man_dir}/${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/${dir}
    COMPONENT ${component})
  list(APPEND nfsrdma_man_pages ${nfsrdma_man_dir}/${page}.gz)
endforeach()
add_custom_target(nfsrdma_man_pages ALL DEPENDS ${nfsrdma_man_pages})
