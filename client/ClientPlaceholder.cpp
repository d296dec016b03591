namespace nfsrdma {}
