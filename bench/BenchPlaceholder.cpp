namespace nfsrdma::bench {}
