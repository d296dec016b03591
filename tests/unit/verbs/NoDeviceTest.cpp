// Why: a host without RDMA (this CI machine) is a normal case. Every entry
// point must throw the one clear NoDeviceError, never abort or leak a raw
// errno from deep inside librdmacm. Skips on hosts that do have a device.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <string>

#include "verbs/CmEventChannel.h"
#include "verbs/Context.h"
#include "verbs/DeviceDiscovery.h"
#include "verbs/DeviceList.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {
namespace {

bool hostHasDevice() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list != nullptr) ibv_free_device_list(list);
  return list != nullptr && n > 0;
}

template <class F>
void expectNoDevice(F&& f) {
  try {
    f();
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("no RDMA device found (libibverbs: ", 0), 0u) << what;
    EXPECT_NE(what.find("); see nfsrdma-server doctor"), std::string::npos) << what;
  }
}

TEST(NoDevice, EveryEntryPointSaysSo) {
  if (hostHasDevice()) GTEST_SKIP() << "this host has an RDMA device";
  expectNoDevice([] { (void)DeviceList::open(); });
  expectNoDevice([] { (void)Context::open("rxe0"); });
  expectNoDevice([] { (void)discoverDevices(); });
  expectNoDevice([] { (void)CmEventChannel::create(); });
}

TEST(NoDevice, MessageFormat) {
  EXPECT_EQ(
      noDeviceMessage("libibverbs: Function not implemented"),
      "no RDMA device found (libibverbs: Function not implemented); see nfsrdma-server doctor");
}

TEST(VerbsError, NamesTheVerbAndErrno) {
  try {
    throwVerbError("ibv_alloc_pd", ENOMEM);
    FAIL();
  } catch (const std::system_error& e) {
    EXPECT_EQ(std::string(e.what()), "ibv_alloc_pd: Cannot allocate memory");
    EXPECT_EQ(e.code().value(), ENOMEM);
  }
  EXPECT_EQ(makeCompletionError(IBV_WC_WR_FLUSH_ERR).message(), "Work Request Flushed Error");
  EXPECT_FALSE(makeCompletionError(IBV_WC_SUCCESS));
}

}  // namespace
}  // namespace nfsrdma::verbs
