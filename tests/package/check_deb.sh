#!/bin/sh
# cpack -G DEB makes a .deb that installs to /usr and runs: unpacked with dpkg-deb -x into a fresh root (no dpkg
# database, nothing of this build tree on any path), its gprof-run profiles the bundled NVTX example and its
# gprof-report reads the run. Usage: check_deb.sh BUILD_DIR CPACK
set -eu
build=$1
cpack=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gprof-deb-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/out/gprof-run_*_amd64.deb) || fail "no gprof-run_<version>_amd64.deb in $(ls "$tmp/out")"
info=$(dpkg-deb --info "$deb")
echo "$info" | grep -q '^ Package: gprof-run$' || fail "package name: $info"
echo "$info" | grep -q '^ Architecture: amd64$' || fail "architecture: $info"
echo "$info" | grep -q '^ Depends: libc6 (>= 2\.[0-9]*), libgcc-s1$' || fail "depends: $info"

dpkg-deb -x "$deb" "$tmp/root"
root=$tmp/root
for f in usr/bin/gprof-run usr/bin/gprof-report usr/lib/gprof-run/libgprof-collector.so \
         usr/share/doc/gprof-run/LICENSE usr/share/doc/gprof-run/examples/gprof-example-nvtx; do
  [ -f "$root/$f" ] || fail "not in the package: /$f"
done
# Nothing but /usr, no Python module (the wheel's), no CUDA library, no test double.
[ "$(ls "$root")" = usr ] || fail "outside /usr: $(ls "$root")"
extra=$(find "$root" -name '_reader*' -o -name 'libcupti*' -o -name 'libcuda*' -o -name '*standin*' -o -name '*test*')
[ -z "$extra" ] || fail "should not be packaged: $extra"

"$root/usr/bin/gprof-run" --version | grep -q '^gprof-run ' || fail "gprof-run --version"
env -u LD_LIBRARY_PATH "$root/usr/bin/gprof-run" -o "$tmp/run" "$root/usr/share/doc/gprof-run/examples/gprof-example-nvtx" \
  >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "profiling the NVTX example"; }
grep -q '20 steps done' "$tmp/stdout" || fail "the example's output: $(cat "$tmp/stdout")"
"$root/usr/bin/gprof-report" nvtx_sum --format json "$tmp/run" >"$tmp/nvtx.json" || fail "gprof-report on the run"
grep -q '"range": ":step"' "$tmp/nvtx.json" || fail "no :step range in $(cat "$tmp/nvtx.json")"
echo "check_deb: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB, installs $(du -sk "$root/usr" | cut -f1) KiB under /usr"
