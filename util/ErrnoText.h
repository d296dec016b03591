// The one way an errno becomes text in messages: the operation, what it
// acted on, then the C library's text ("open /x: No such file or
// directory"). std::generic_category() gives the same words as strerror
// without its shared buffer, so a thread may call it while another does.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>

namespace nfsrdma::util {

// The text of err ("Connection refused"); an unknown value reads
// "Unknown error N".
std::string errnoText(int err);

// "what: <errno text>". err defaults to errno as it is at the call, so
// fail(errnoMessage("open " + path)) says why the last call failed.
std::string errnoMessage(std::string_view what, int err = errno);

}  // namespace nfsrdma::util
