/* A preload library of the user's own: gprof-run must keep it in LD_PRELOAD next to the collector. */
int launcher_test_preload_marker(void) { return 42; }
