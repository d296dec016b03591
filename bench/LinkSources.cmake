# Sources of the link benchmark and device listing: target_sources(nfsrdma_bench PRIVATE ...)
