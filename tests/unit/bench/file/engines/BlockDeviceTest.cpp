// dev: targets: the rule that refuses destructive writes (each refusal on its
// facts), the facts as sysfs, mountinfo, /proc/swaps and libblkid give them
// (a fake sysfs tree, images made by mkfs and mkswap), and end to end on real
// loop devices: `nfsrdma-bench file` refuses and the device's bytes are
// unchanged, or it is allowed and its written data verifies.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/file/DeviceTargets.h"
#include "bench/file/engines/BlockDevice.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using testing::CommandResult;
using testing::runCommand;
using testing::ScratchDir;

BlockDeviceInfo device(const std::string& path = "/dev/sdz") {
  BlockDeviceInfo d;
  d.path = path;
  d.rdev = makedev(8, 240);
  d.kernelName = "sdz";
  d.sizeBytes = 1ULL << 30;
  return d;
}

WritePermission named(dev_t rdev, bool force = false) {
  WritePermission p;
  p.devices.push_back({"/dev/sdz", rdev});
  p.force = force;
  return p;
}

TEST(WriteRefusal, AnUnnamedDeviceIsNeverWritten) {
  const std::string why = writeRefusal("local", device(), {}, {});
  EXPECT_EQ(why,
            "target local (dev:/dev/sdz): writes destroy the data on it; to allow them name this "
            "device with --allow-destructive-write /dev/sdz");
}

TEST(WriteRefusal, APermissionForAnotherDeviceSaysWhichItNamed) {
  WritePermission p;
  p.devices.push_back({"/dev/sdy", makedev(8, 224)});
  const std::string why = writeRefusal("local", device(), {}, p);
  EXPECT_NE(why.find("--allow-destructive-write /dev/sdz (--allow-destructive-write names "
                     "/dev/sdy, not this device)"),
            std::string::npos)
      << why;
}

TEST(WriteRefusal, AMountedDeviceIsRefusedEvenWithForce) {
  DeviceUse use;
  use.mounts.push_back("/mnt/data (ext4, /dev/sdz1)");
  for (bool force : {false, true}) {
    const std::string why = writeRefusal("local", device(), use, named(device().rdev, force));
    EXPECT_EQ(why,
              "target local (dev:/dev/sdz): mounted at /mnt/data (ext4, /dev/sdz1): a mounted "
              "device is never written (unmount it first; --force does not override this)");
  }
}

TEST(WriteRefusal, SwapIsRefusedEvenWithForce) {
  DeviceUse use;
  use.swaps.push_back("/dev/sdz2");
  const std::string why = writeRefusal("local", device(), use, named(device().rdev, true));
  EXPECT_NE(why.find("in use as swap (/dev/sdz2)"), std::string::npos) << why;
}

TEST(WriteRefusal, AReadOnlyDeviceIsRefused) {
  BlockDeviceInfo d = device();
  d.readOnly = true;
  EXPECT_EQ(writeRefusal("local", d, {}, named(d.rdev, true)),
            "target local (dev:/dev/sdz): the device is read-only (BLKROGET)");
}

TEST(WriteRefusal, HoldersAreRefusedUnlessForced) {
  DeviceUse use;
  use.holders.push_back("dm-0 (holds sdz)");
  EXPECT_EQ(writeRefusal("local", device(), use, named(device().rdev)),
            "target local (dev:/dev/sdz): held by dm-0 (holds sdz) (device-mapper, RAID or LVM on "
            "top of it): writes would corrupt what it serves; release it, or give --force");
  EXPECT_EQ(writeRefusal("local", device(), use, named(device().rdev, true)), "");
}

TEST(WriteRefusal, ASignatureIsRefusedUnlessForced) {
  DeviceUse use;
  use.signatures.push_back("xfs (filesystem)");
  EXPECT_EQ(writeRefusal("local", device(), use, named(device().rdev)),
            "target local (dev:/dev/sdz): carries the signature xfs (filesystem): writes would "
            "destroy what it holds; wipe it first (wipefs -a /dev/sdz) or give --force");
  EXPECT_EQ(writeRefusal("local", device(), use, named(device().rdev, true)), "");
}

TEST(WriteRefusal, ANamedUnusedDeviceMayBeWritten) {
  EXPECT_EQ(writeRefusal("local", device(), {}, named(device().rdev)), "");
}

TEST(WriteRefusal, AMountedVolumeStackedOnTheDeviceIsRefusedEvenWithForce) {
  DeviceUse use;
  use.holders.push_back("dm-3 (holds sdz1)");
  use.stackedMounts.push_back("/srv/data (xfs, /dev/mapper/vg-data) on dm-3, which holds sdz1");
  for (bool force : {false, true}) {
    EXPECT_EQ(writeRefusal("local", device(), use, named(device().rdev, force)),
              "target local (dev:/dev/sdz): a volume stacked on it is mounted at /srv/data (xfs, "
              "/dev/mapper/vg-data) on dm-3, which holds sdz1; a device under a mounted volume is "
              "never written (unmount it first; --force does not override this)");
  }
}

TEST(WriteRefusal, SwapOnAVolumeStackedOnTheDeviceIsRefusedEvenWithForce) {
  DeviceUse use;
  use.holders.push_back("dm-5 (holds sdz)");
  use.stackedSwaps.push_back("/dev/dm-5 on dm-5, which holds sdz");
  EXPECT_EQ(writeRefusal("local", device(), use, named(device().rdev, true)),
            "target local (dev:/dev/sdz): a volume stacked on it is in use as swap (/dev/dm-5 on "
            "dm-5, which holds sdz); a device under swap is never written (swapoff first; --force "
            "does not override this)");
}

void writeText(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

void run(const std::string& command) {
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

// The probe's paths: sysDevBlock, and a mountinfo and /proc/swaps in dir
// holding these mounts (after /proc) and swap areas.
DeviceProbePaths withUsers(const ScratchDir& dir, const std::filesystem::path& sysDevBlock,
                           const std::string& mounts, const std::string& swaps) {
  writeText(dir.path() / "mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n" + mounts);
  writeText(dir.path() / "swaps", "Filename\tType\tSize\tUsed\tPriority\n" + swaps);
  return {sysDevBlock.string(), (dir.path() / "mountinfo").string(),
          (dir.path() / "swaps").string()};
}

// sdz with partition sdz1 (259:7), held by dm-3, mounted; sdz2 as swap.
DeviceProbePaths fakeTree(const ScratchDir& dir) {
  const auto sys = dir.path() / "sys";
  writeText(sys / "8:240/sdz1/partition", "1\n");
  writeText(sys / "8:240/sdz1/dev", "259:7\n");
  std::filesystem::create_directories(sys / "8:240/sdz1/holders/dm-3");
  writeText(sys / "8:240/sdz2/partition", "2\n");
  writeText(sys / "8:240/sdz2/dev", "259:8\n");
  writeText(sys / "8:240/queue/rotational", "0\n");  // not a partition: no "partition" file
  return withUsers(dir, sys,
                   "36 22 259:7 / /mnt/data rw,relatime shared:1 - ext4 /dev/sdz1 rw\n"
                   "37 22 8:1 / / rw - ext4 /dev/sda1 rw\n",
                   "/dev/sdz2 partition 1024 0 -2\n");
}

TEST(DeviceUse, SysfsMountinfoAndSwapsNameThePartitionsUsers) {
  ScratchDir dir("blockdev-use");
  const DeviceProbePaths paths = fakeTree(dir);
  BlockDeviceInfo d = device((dir.path() / "image").string());
  run("truncate -s 1M " + d.path);
  const DeviceUse use = probeDeviceUse(d, paths);
  EXPECT_EQ(use.holders, std::vector<std::string>{"dm-3 (holds sdz1)"});
  EXPECT_EQ(use.mounts, std::vector<std::string>{"/mnt/data (ext4, /dev/sdz1)"});
  EXPECT_EQ(use.swaps, std::vector<std::string>{"/dev/sdz2"});
  EXPECT_TRUE(use.signatures.empty());
}

TEST(DeviceUse, AnUnusedDeviceHasNoUsers) {
  ScratchDir dir("blockdev-unused");
  const DeviceProbePaths paths = fakeTree(dir);
  BlockDeviceInfo d = device((dir.path() / "image").string());
  d.rdev = makedev(8, 16);
  d.kernelName = "sdb";
  run("truncate -s 1M " + d.path);
  const DeviceUse use = probeDeviceUse(d, paths);
  EXPECT_TRUE(use.holders.empty() && use.mounts.empty() && use.swaps.empty());
}

// As sysfs lays a stack out: /sys/dev/block/MAJ:MIN links to the device's
// directory, and each holders/NAME links to the holder's own. The device at
// majMin (named name) has partition <name>1; dm-3 holds that partition and
// has a partition dm-3p1; dm-4 holds dm-3 and is mounted; dm-5 holds the
// whole device and is swap; dm-3p1 is mounted too.
DeviceProbePaths stackedTree(const ScratchDir& dir, const std::string& majMin,
                             const std::string& name) {
  namespace fs = std::filesystem;
  const auto sys = dir.path() / "sys";
  const auto disk = sys / "devices" / name;
  const auto virt = sys / "devices/virtual/block";
  writeText(disk / (name + "1") / "partition", "1\n");
  writeText(disk / (name + "1") / "dev", "259:7\n");
  writeText(virt / "dm-3/dev", "253:3\n");
  writeText(virt / "dm-3/dm-3p1/partition", "1\n");
  writeText(virt / "dm-3/dm-3p1/dev", "253:6\n");
  writeText(virt / "dm-4/dev", "253:4\n");
  writeText(virt / "dm-5/dev", "253:5\n");
  const auto link = [](const fs::path& to, const fs::path& at) {
    fs::create_directories(at.parent_path());
    fs::create_directory_symlink(fs::relative(to, at.parent_path()), at);
  };
  link(disk, sys / "dev/block" / majMin);
  link(virt / "dm-3", disk / (name + "1") / "holders/dm-3");
  link(virt / "dm-4", virt / "dm-3/holders/dm-4");
  link(virt / "dm-5", disk / "holders/dm-5");
  return withUsers(dir, sys / "dev/block",
                   "40 22 253:4 / /srv/data rw,relatime shared:1 - xfs /dev/mapper/vg-data rw\n"
                   "41 22 253:6 / /srv/boot rw,relatime shared:1 - ext4 /dev/mapper/vg-boot1 rw\n",
                   "/dev/dm-5 partition 1024 0 -2\n");
}

TEST(DeviceUse, MountsAndSwapOfVolumesStackedOnTheDeviceAreFoundThroughItsHolders) {
  ScratchDir dir("blockdev-stacked");
  const DeviceProbePaths paths = stackedTree(dir, "8:240", "sdz");
  BlockDeviceInfo d = device((dir.path() / "image").string());
  run("truncate -s 1M " + d.path);
  const DeviceUse use = probeDeviceUse(d, paths);
  EXPECT_TRUE(use.mounts.empty() && use.swaps.empty());
  EXPECT_EQ(use.holders, (std::vector<std::string>{"dm-5 (holds sdz)", "dm-3 (holds sdz1)",
                                                   "dm-4 (holds dm-3)"}));
  EXPECT_EQ(use.stackedMounts,
            (std::vector<std::string>{
                "/srv/data (xfs, /dev/mapper/vg-data) on dm-4, which holds dm-3, which holds sdz1",
                "/srv/boot (ext4, /dev/mapper/vg-boot1) on dm-3p1, a partition of dm-3, which "
                "holds sdz1"}));
  EXPECT_EQ(use.stackedSwaps, std::vector<std::string>{"/dev/dm-5 on dm-5, which holds sdz"});
}

TEST(DeviceUse, AHoldersLoopInSysfsEnds) {
  ScratchDir dir("blockdev-cycle");
  const DeviceProbePaths paths = stackedTree(dir, "8:240", "sdz");
  const auto virt = dir.path() / "sys/devices/virtual/block";
  std::filesystem::create_directories(virt / "dm-4/holders");
  std::filesystem::create_directory_symlink("../../dm-3", virt / "dm-4/holders/dm-3");
  BlockDeviceInfo d = device((dir.path() / "image").string());
  run("truncate -s 1M " + d.path);
  const DeviceUse use = probeDeviceUse(d, paths);
  EXPECT_EQ(use.stackedMounts.size(), 2U);
  EXPECT_EQ(use.holders.back(), "dm-3 (holds dm-4)");
}

TEST(DeviceSignatures, LibblkidFindsAFileSystemSwapAndAPartitionTable) {
  ScratchDir dir("blockdev-sig");
  const std::string img = (dir.path() / "img").string();
  run("truncate -s 16M " + img + " && mkfs.ext4 -q -F " + img);
  EXPECT_EQ(probeSignatures(img), std::vector<std::string>{"ext4 (filesystem)"});
  run("truncate -s 0 " + img + " && truncate -s 16M " + img + " && mkswap -q " + img);
  EXPECT_EQ(probeSignatures(img), std::vector<std::string>{"swap (other)"});
  // An MBR with one Linux partition from sector 2048 on.
  run("truncate -s 0 " + img + " && truncate -s 16M " + img);
  {
    std::fstream f(img, std::ios::in | std::ios::out | std::ios::binary);
    const unsigned char entry[16] = {0x00, 0,    0, 0, 0x83, 0,    0, 0,
                                     0x00, 0x08, 0, 0, 0x00, 0x78, 0, 0};
    f.seekp(446);
    f.write(reinterpret_cast<const char*>(entry), sizeof entry);
    f.seekp(510);
    f.write("\x55\xaa", 2);
  }
  EXPECT_EQ(probeSignatures(img), std::vector<std::string>{"dos (partition table)"});
  run("truncate -s 0 " + img + " && truncate -s 16M " + img);
  EXPECT_TRUE(probeSignatures(img).empty());
}

// A loop device over an image file, detached at the end.
class LoopDevice {
 public:
  explicit LoopDevice(const std::string& image) {
    const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (control < 0) {
      why_ = std::string("/dev/loop-control: ") + std::strerror(errno) + " (needs root)";
      return;
    }
    const int backing = ::open(image.c_str(), O_RDWR | O_CLOEXEC);
    // Bounded: another test may take the free device between the two calls.
    for (int attempt = 0; attempt < 20 && fd_ < 0; ++attempt) {
      const int n = ::ioctl(control, LOOP_CTL_GET_FREE);
      if (n < 0) break;
      path_ = "/dev/loop" + std::to_string(n);
      const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
      if (fd >= 0 && ::ioctl(fd, LOOP_SET_FD, backing) == 0) {
        fd_ = fd;
      } else if (fd >= 0) {
        ::close(fd);
      }
    }
    if (fd_ < 0) why_ = "no free loop device: " + std::string(std::strerror(errno));
    ::close(backing);
    ::close(control);
  }
  ~LoopDevice() {
    if (fd_ < 0) return;
    (void)::ioctl(fd_, LOOP_CLR_FD, 0);
    ::close(fd_);
  }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  const std::string& why() const { return why_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::string why_;
};

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

CommandResult writeRun(const std::string& dev, std::vector<std::string> extra) {
  std::vector<std::string> args{"file",      "--target", "dev:" + dev, "--profile", "4k-randwrite",
                                "--runtime", "0.2",      "--ramp",     "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return runCommand(runFileCommand, args);
}

class DeviceWrites : public ::testing::Test {
 protected:
  void SetUp() override {
    image_ = (dir_.path() / "disk.img").string();
    // No lazy initialisation: nothing but the test writes the image afterwards.
    run("truncate -s 32M " + image_ +
        " && mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 " + image_);
    loop_ = std::make_unique<LoopDevice>(image_);
    if (loop_->path().empty() || !loop_->why().empty()) GTEST_SKIP() << loop_->why();
    before_ = bytesOf(image_);
  }
  // The refusal's message on stderr, exit 1, and not a byte of the device changed.
  void expectRefused(const CommandResult& r, const std::string& message) {
    EXPECT_EQ(r.rc, 1) << r.out << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_TRUE(bytesOf(image_) == before_) << "the device was written";
  }
  ScratchDir dir_{"blockdev-loop"};
  std::string image_;
  std::unique_ptr<LoopDevice> loop_;
  std::string before_;
};

TEST_F(DeviceWrites, WithoutPermissionNothingIsWritten) {
  expectRefused(writeRun(loop_->path(), {}),
                "writes destroy the data on it; to allow them name this device with "
                "--allow-destructive-write " +
                    loop_->path());
}

TEST_F(DeviceWrites, PermissionForAnotherDeviceWritesNothing) {
  run("truncate -s 1M " + image_ + ".other");
  LoopDevice second(image_ + ".other");
  if (!second.why().empty()) GTEST_SKIP() << second.why();
  expectRefused(writeRun(loop_->path(), {"--allow-destructive-write", second.path()}),
                "(--allow-destructive-write names " + second.path() + ", not this device)");
}

TEST_F(DeviceWrites, AFileSystemSignatureWritesNothing) {
  expectRefused(writeRun(loop_->path(), {"--allow-destructive-write", loop_->path()}),
                "carries the signature ext4 (filesystem): writes would destroy what it holds; "
                "wipe it first (wipefs -a " +
                    loop_->path() + ") or give --force");
}

TEST_F(DeviceWrites, AMountedDeviceWritesNothingEvenWithForce) {
  const std::string mnt = (dir_.path() / "mnt").string();
  std::filesystem::create_directories(mnt);
  if (::mount(loop_->path().c_str(), mnt.c_str(), "ext4", MS_RDONLY, nullptr) != 0)
    GTEST_SKIP() << "mount ext4: " << std::strerror(errno);
  const CommandResult r =
      writeRun(loop_->path(), {"--allow-destructive-write", loop_->path(), "--force"});
  ::umount(mnt.c_str());
  expectRefused(r, "mounted at " + mnt + " (ext4, " + loop_->path() +
                       "): a mounted device is "
                       "never written");
}

// The real device, the sysfs of a stack on it staged (this kernel may have
// no device-mapper): the check before the run refuses, --force or not.
TEST_F(DeviceWrites, AMountedVolumeStackedOnTheDeviceIsRefusedEvenWithForce) {
  struct stat st {};
  ASSERT_EQ(::stat(loop_->path().c_str(), &st), 0);
  const std::string majMin =
      std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  const std::string name = std::filesystem::path(loop_->path()).filename().string();
  const DeviceProbePaths paths = stackedTree(dir_, majMin, name);
  std::vector<TargetSpec> targets{TargetSpec::parse("local", "dev:" + loop_->path())};
  FileOptions o;
  o.destructiveWrites = {loop_->path()};
  o.force = true;
  try {
    prepareDeviceTargets(targets, {profileByName("4k-randwrite")}, o, paths);
    FAIL() << "a device under a mounted volume was allowed to be written";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "a volume stacked on it is mounted at /srv/data (xfs, /dev/mapper/vg-data) on "
                  "dm-4, which holds dm-3, which holds " +
                  name + "1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(targets.front().deviceWritable);
  // The same device and permission without the stack: allowed.
  prepareDeviceTargets(targets, {profileByName("4k-randwrite")}, o);
  EXPECT_TRUE(targets.front().deviceWritable);
}

TEST_F(DeviceWrites, VerifyOfReadsNeedsPermissionToLayTheDataOut) {
  const CommandResult r =
      runCommand(runFileCommand, {"file", "--target", "dev:" + loop_->path(), "--profile",
                                  "4k-randread", "--runtime", "0.2", "--ramp", "0", "--verify"});
  expectRefused(r, "the profiles only read, but --verify checks the bench's data pattern");
}

TEST_F(DeviceWrites, ReadsWithoutPermissionRunAndWriteNothing) {
  const CommandResult r = runCommand(
      runFileCommand, {"file", "--target", "dev:" + loop_->path(), "--profile", "4k-randread",
                       "--runtime", "0.2", "--ramp", "0", "--numjobs", "2"});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("read-only, O_DIRECT, io_uring"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("the 2 job(s) work on disjoint ranges of " + loop_->path() + ", 16 MiB each"),
      std::string::npos)
      << r.out;
  EXPECT_TRUE(bytesOf(image_) == before_);
}

TEST_F(DeviceWrites, ForcedWritesOverASignatureVerifyClean) {
  const CommandResult r =
      writeRun(loop_->path(), {"--allow-destructive-write", loop_->path(), "--force", "--verify",
                               "--numjobs", "2", "--size", "8m"});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 mismatches"), std::string::npos) << r.out;
  EXPECT_FALSE(bytesOf(image_) == before_);
}

TEST_F(DeviceWrites, SizeBeyondTheDeviceIsRefused) {
  const CommandResult r =
      runCommand(runFileCommand, {"file", "--target", "dev:" + loop_->path(), "--profile",
                                  "4k-randread", "--size", "20m", "--numjobs", "2"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("--size 20 MiB x 2 jobs = 40 MiB exceeds the device's 32 MiB"),
            std::string::npos)
      << r.err;
}

TEST(DeviceTarget, ARegularFileIsNotADevice) {
  ScratchDir dir("blockdev-file");
  const std::string f = (dir.path() / "plain").string();
  std::ofstream(f) << "x";
  try {
    (void)TargetSpec::parse("", "dev:" + f);
    FAIL() << "parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "dev:" + f + ": not a block device (for a directory or file system use path:)");
  }
}

}  // namespace
}  // namespace nfsrdma::bench
