// Replaced by the verbs layer (device discovery, RAII owners).
namespace nfsrdma::verbs {}
