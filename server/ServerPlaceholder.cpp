namespace nfsrdma::server {}
