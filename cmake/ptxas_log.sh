#!/bin/sh
# CUDA compiler launcher of the kernels' GPU sources (kernels/CMakeLists.txt): runs the nvcc
# command given as arguments, which carries -Xptxas=-v, and keeps ptxas's resource report in
# OBJECT.ptxas.log beside the object it writes (-o OBJECT), so that tests/kernels/sass judges the
# machine code the build shipped instead of compiling the kernels again. Everything nvcc prints
# other than that report still reaches the build's output; its exit status is nvcc's.
object=
previous=
for arg in "$@"; do
  [ "$previous" = -o ] && object=$arg
  previous=$arg
done
[ -n "$object" ] || exec "$@"
log="$object.ptxas.log"
"$@" 2>"$log.tmp"
status=$?
# ptxas -v's lines: "ptxas info    : ..." and the indented "N bytes stack frame, ..." under them.
grep -v -e '^ptxas info    :' -e '^    [0-9]* bytes stack frame' "$log.tmp" >&2
if [ "$status" -eq 0 ]; then mv "$log.tmp" "$log"; else rm -f "$log.tmp" "$log"; fi
exit "$status"
