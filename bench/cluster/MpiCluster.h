// The Cluster of an MPI launch (Debian's OpenMPI). The only code that
// includes mpi.h: the rest of the benchmark sees the Cluster interface.
// Nothing starts MPI unless the launcher's environment says this process
// is a rank, so a command run without mpirun pays no MPI start-up and
// prints nothing of it.
#pragma once

#include <memory>

#include "bench/cluster/Cluster.h"

namespace nfsrdma::bench {

// True when this process was started by an MPI launcher as one of its ranks
// (OpenMPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK, or PMI_SIZE).
bool launchedByMpi();

// MPI_Init_thread (FUNNELED: every call from the thread that called it),
// or null when not launchedByMpi(). Throws std::runtime_error when MPI
// cannot start. MPI_Finalize when the returned object goes.
std::unique_ptr<Cluster> startMpiCluster();

}  // namespace nfsrdma::bench
