// Whose identity a client's requests carry on the server: the one squash
// kind of the project, for the YAML config (ServerConfig, exports(5)'s
// root_squash / no_root_squash / all_squash) and nfs-ganesha's CLIENT blocks
// (Squash = Root_Squash / No_Root_Squash / All_Squash) alike. Here, beside
// the ganesha runner, because that target must not depend on the config
// parser; the config's target links this one.
#pragma once

namespace nfsrdma::server {

enum class Squash {
  Root,    // root becomes the anonymous user; the default of both servers
  NoRoot,  // every identity as the client sends it
  All,     // every identity becomes the anonymous user
};

}  // namespace nfsrdma::server
