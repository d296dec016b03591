// kernelMountTransport: the transport of the kernel NFS mount that holds a
// path, read from /proc/self/mounts text (the benchmarks' path engine asks
// it of a directory on an NFS mount).
#include <gtest/gtest.h>

#include "client/KernelMounts.h"

namespace nfsrdma {
namespace {

constexpr const char* kMounts =
    "/dev/sda1 / ext4 rw,relatime 0 0\n"
    "srv:/export /mnt/nfs nfs4 rw,vers=4.2,proto=tcp,port=2049 0 0\n"
    "srv:/export /mnt/nfs/fast nfs4 rw,vers=4.2,proto=rdma,port=20049 0 0\n"
    "[fd00::1]:/export /mnt/v6 nfs4 rw,vers=4.2,proto=rdma6 0 0\n"
    "srv:/old /mnt/old\\040dir nfs rw,vers=3,proto=rdma 0 0\n"
    "tmpfs /mnt/nfs/fast/tmp tmpfs rw 0 0\n";

TEST(KernelMounts, TheLongestNfsMountPointOnThePathDecides) {
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/nfs/a/b"), TransportKind::kTcp);
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/nfs/fast"), TransportKind::kRdma);
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/nfs/fast/x"), TransportKind::kRdma);
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/nfs/fastest"), TransportKind::kTcp)
      << "a mount point is a whole component of the path";
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/nfs/fast/tmp/f"), TransportKind::kRdma)
      << "only NFS mounts count";
}

TEST(KernelMounts, Rdma6EscapedMountPointsAndNoMount) {
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/v6/f"), TransportKind::kRdma);
  EXPECT_EQ(kernelMountTransport(kMounts, "/mnt/old dir/f"), TransportKind::kRdma);
  EXPECT_EQ(kernelMountTransport(kMounts, "/home/u"), TransportKind::kTcp);
  EXPECT_EQ(kernelMountTransport("", "/mnt/nfs"), TransportKind::kTcp);
}

}  // namespace
}  // namespace nfsrdma
