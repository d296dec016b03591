# Sources of the link benchmark and device listing: target_sources(nfsrdma_bench PRIVATE ...)
target_sources(nfsrdma_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/LinkStats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ReportTable.cpp
  ${CMAKE_CURRENT_LIST_DIR}/LinkOptions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/LinkProtocol.cpp
  ${CMAKE_CURRENT_LIST_DIR}/LinkPlacement.cpp
  ${CMAKE_CURRENT_LIST_DIR}/LinkRdmaBench.cpp
  ${CMAKE_CURRENT_LIST_DIR}/LinkTcpBench.cpp)
