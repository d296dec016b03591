// GaneshaClients: how one client of an export (a form of exports(5) "Machine
// Name Formats", as the config accepts it) is written in a ganesha CLIENT
// block's Clients list so that nfs-ganesha reads it as that client and admits
// the hosts it names, no more and no fewer.
//
// ganesha's config lexer (src/config_parsing/conf_lex.l) decides from the
// shape of a bare token what kind of client it is, and add_client
// (src/support/exports.c) takes no quoted string. What it reads (4.3 and
// later):
//  - `*` and `0.0.0.0` as every host;
//  - an IPv4 or IPv6 address alone or with a prefix of /1 to /99 only: no /0,
//    no /100 and longer, no dotted netmask (127.0.0.0/255.0.0.0 is read as a
//    file path);
//  - @name when the name starts with a letter or '_', 64 bytes in all;
//  - a host name when it starts with a letter or '_' and is not a boolean word
//    (yes, no, on, off, true, false); ganesha resolves it when it starts;
//  - a wildcard of letters, digits, '.', '_', '-', '*', '?' and [classes] of
//    those (a leading '!' negates), 64 bytes in all; one whose only wildcard is
//    a leading '?' is read as a host name instead.
// ganesha logs anything else as a configuration error and drops the block.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nfsrdma::server {

// The Clients terms (joined by ", " in the block) that admit exactly the
// hosts `client` names: networks with their host bits cleared and a prefix
// ganesha reads (/0 as two halves, a dotted netmask as its length, /128 as the
// address), 0.0.0.0 as 0.0.0.0/32 (bare, ganesha reads it as every host), an
// IPv4-mapped IPv6 address or network as IPv4 (ganesha compares an IPv4
// client as IPv4 even on an IPv6 listener), a '^' class as '!', a leading
// lone '?' as the class of host name characters. nullopt for a host name
// ganesha's lexer cannot read (a first label starting with a digit, or a
// boolean word): lookUpGaneshaClient gives its addresses. Pure. Throws
// std::runtime_error with a phrase that follows the client's name ("is an
// IPv6 network of prefix /112; ...") for a client no term expresses.
std::optional<std::vector<std::string>> ganeshaClientTerms(const std::string& client);

// Whether a CLIENT block written for `client` admits a client at the numeric
// IPv4/IPv6 `address` (an IPv4-mapped one counts as IPv4, as ganesha counts
// it), as its terms decide: nullopt when no term matches but one is a name,
// wildcard or netgroup (ganesha's lookups decide), when `client` is a name
// looked up only as the config is written, or when it has no terms at all.
std::optional<bool> ganeshaClientAdmits(const std::string& client, const std::string& address);

// Whether `address` is a numeric IPv4 or IPv6 address.
bool isNumericAddress(const std::string& address);

// The addresses `name` resolves to (getaddrinfo with no hints, as ganesha
// resolves the names it reads), each once, in the resolver's order. Throws
// std::runtime_error naming the name and the resolver's error.
std::vector<std::string> lookUpGaneshaClient(const std::string& name);

}  // namespace nfsrdma::server
