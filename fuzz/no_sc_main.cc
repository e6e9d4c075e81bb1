// libsystemc.so refers to sc_main, which its main() would call; a fuzzer's main comes from
// libFuzzer instead, so this one is never called.
extern "C" int sc_main(int, char**) {
  return 1;
}
