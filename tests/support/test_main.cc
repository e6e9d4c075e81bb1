// libsystemc defines main() and calls sc_main, so the test binaries start here rather than
// in gtest_main. Each simulation makes its own SystemC context.

#include <gtest/gtest.h>

extern "C" int sc_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
