// Path confinement and pre-flight checks of nfsrdma-server against a staged
// --root: a symlink at any managed path is refused, not followed, and a
// hostile host state fails before the first change, leaving every file
// inside and outside the root as it was.
#include <gtest/gtest.h>
