# Sources of the file benchmark (`nfsrdma-bench file` and `compare`).
target_sources(nfsrdma_bench PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/FileJson.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Histogram.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileProfile.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Verify.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileJob.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Engine.cpp
  ${CMAKE_CURRENT_LIST_DIR}/EngineNfs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/EngineLibnfs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/EnginePath.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileRun.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileReport.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileEmbedded.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileCli.cpp
  ${CMAKE_CURRENT_LIST_DIR}/FileCommand.cpp
  ${CMAKE_CURRENT_LIST_DIR}/CacheFlags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/CompareMatrix.cpp
  ${CMAKE_CURRENT_LIST_DIR}/CompareConditions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/CompareCommand.cpp
  ${CMAKE_CURRENT_LIST_DIR}/Baseline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/HtmlReport.cpp)
target_link_libraries(nfsrdma_bench PUBLIC PkgConfig::URING)
