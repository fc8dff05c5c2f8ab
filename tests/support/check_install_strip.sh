#!/bin/sh
# cmake --install strips what it installs (GPROF_INSTALL_STRIP, the default): no debug sections or symbol table in
# the installed binaries, the collector keeps its exported entry points, and the stripped programs still run.
# Usage: check_install_strip.sh BUILD_DIR CMAKE
set -eu
build=$1
cmake=$2
prefix=$(mktemp -d "${TMPDIR:-/tmp}/gprof-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
for f in bin/gprof-run bin/gprof-report lib/gprof-run/libgprof-collector.so; do
  [ -f "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
  if readelf -S "$prefix/$f" | grep -q -e '\.debug_info' -e '\.symtab'; then
    echo "not stripped: $f"; exit 1
  fi
done
nm -D "$prefix/lib/gprof-run/libgprof-collector.so" | grep -q ' T InitializeInjection$' ||
  { echo "the collector lost its entry point InitializeInjection"; exit 1; }
"$prefix/bin/gprof-run" --version >/dev/null
"$prefix/bin/gprof-report" --version >/dev/null
echo "installed tree: $(du -sk "$prefix" | cut -f1) KiB, stripped"
