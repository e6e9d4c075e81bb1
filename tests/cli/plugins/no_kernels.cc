// A shared library that registers no kernel: loading it as a plugin must fail clearly.

extern "C" int tpusim_test_not_a_kernel() {
  return 42;
}
