#!/usr/bin/env bash
# hopper-sass.sh CUOBJDUMP [ARCH KERNELS NAME]: the machine code of chapter 07's Hopper kernels (tc_*_bwd_kernel built
# for sm_90a: steps 6 to 10, both builds) in build/ch07_hopper.sass, or of the kernels whose mangled names match the
# sed pattern KERNELS built for ARCH in build/ch07_NAME.sass (steps 11-12: sm_90 'tc_tile[a-z_]*_bwd_kernel' tiles;
# steps 12-13 at d = 128: sm_90 'tc_\(tile_lean\|kvreg\)_bwd_kernelILi128E' kvreg; steps 13 and 14: pairs, 13 and 15:
# quads, 15 and 16: stats, 16 and 17: squares, 17 and 18: stores),
# disassembled from ./ch07/run once, and again when the program is newer; prints the file's path. test_sass.c's tests
# each read one: a pass of cuobjdump over the program takes seconds, and `make test` runs two tests at once (the second
# waits on the lock for the first's file). Run from the repository root.
set -u -o pipefail
tool=${1:?usage: hopper-sass.sh CUOBJDUMP [ARCH KERNELS NAME]}
arch=${2:-sm_90a} kernels=${3:-'tc_[a-z]*_bwd_kernel'}
out=build/ch07_${4:-hopper}.sass
mkdir -p build || exit 1
dump() {
    [ "$out" -nt ch07/run ] && return 0
    # the kernels' names from the program's list of code sections (instant), then their code alone
    names=$("$tool" -ltext ch07/run | sed -n "s/.*-\(_Z[0-9]*${kernels}[^.]*\)\.${arch}\..*/\1/p" |
        sort -u | paste -sd, -) || return 1
    [ -n "$names" ] || { echo "hopper-sass: no $arch kernel in ch07/run" >&2; return 1; }
    "$tool" -sass -arch "$arch" -fun "$names" ch07/run 2>/dev/null >"$out.$$" && mv "$out.$$" "$out"
}
if command -v flock >/dev/null 2>&1; then
    exec 9>"$out.lock" && flock 9 || exit 1
fi
dump || { rm -f "$out.$$"; exit 1; }
echo "$out"
