// Validation of every value nfsrdma-server writes, by the rules of its
// consumer (exports(5)/exportfs, nfs.conf, the kernel's sysctls), and bounded
// config input.
#include <gtest/gtest.h>
