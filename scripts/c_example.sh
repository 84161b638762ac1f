#!/usr/bin/env bash
# The C library from C and C++: builds libtbforge (cargo build -p tbforge-capi),
# compiles examples/c/probe.c with gcc against the shared and the static
# library, runs it on a tic-tac-toe tablebase built with the tbforge binary and
# compares its lines with `tbforge probe` for the same positions (values,
# index, best moves; failures with the same message); checks that
# include/tbforge.h compiles as C++ (g++); and prints the latency of a probe
# through the C ABI on a cached block (examples/c/bench.c).
#
#   bash scripts/c_example.sh            # dev profile (what CI has built already)
#   PROFILE=release bash scripts/c_example.sh
#   BENCH_PROBES=N                       # probes timed (default 10000000)
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PROFILE:-debug}
case "$profile" in
  debug) flag=() ;;
  release) flag=(--release) ;;
  *) echo "c_example.sh: PROFILE must be debug or release, not '$profile'" >&2; exit 2 ;;
esac
for tool in gcc g++; do
  command -v "$tool" >/dev/null || { echo "c_example.sh: $tool not found; install gcc and g++ (apt-get install gcc g++)" >&2; exit 2; }
done

cargo build -q "${flag[@]}" -p tbforge-capi
cargo build -q "${flag[@]}" --bin tbforge
lib=target/$profile
tbforge=target/$profile/tbforge

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cflags=(-std=c99 -Wall -Wextra -Wpedantic -Werror -Iinclude)
# Shared, found at run time through the rpath; and static, with the system
# libraries rustc names for it (`--print native-static-libs`).
gcc "${cflags[@]}" examples/c/probe.c -L"$lib" -ltbforge -Wl,-rpath,"$PWD/$lib" -o "$work/probe"
gcc "${cflags[@]}" examples/c/probe.c "$lib/libtbforge.a" -lutil -lrt -lpthread -lm -ldl -o "$work/probe-static"
gcc "${cflags[@]}" -O2 examples/c/bench.c -L"$lib" -ltbforge -Wl,-rpath,"$PWD/$lib" -o "$work/bench"

# The header as C++: extern "C", no C-only constructs; a call through each
# declaration so that a wrong signature fails to compile.
cat > "$work/use.cpp" <<'CPP'
#include "tbforge.h"
#include <cstdio>
int main(int argc, char **argv) {
    tbf_tablebase *tb = nullptr;
    tbf_result r{};
    uint32_t p = 0;
    uint64_t k = 0;
    size_t needed = 0;
    char buf[64];
    if (argc < 3 || tbf_open(argv[1], &tb) != TBF_OK) return 1;
    int s = tbf_probe(tb, argv[2], &r) | tbf_index(tb, argv[2], &p, &k)
          | tbf_probe_rank(tb, p, k, &r) | tbf_best_moves(tb, argv[2], buf, sizeof buf, &needed);
    tbf_last_error(buf, sizeof buf);
    std::printf("%s %s %d %d\n", tbf_version(), tbf_game(tb), s, static_cast<int>(r.outcome));
    tbf_close(tb);
    return 0;
}
CPP
g++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -Iinclude -fsyntax-only "$work/use.cpp"
g++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -Iinclude "$work/use.cpp" -L"$lib" -ltbforge -Wl,-rpath,"$PWD/$lib" -o "$work/use"

"$tbforge" build tictactoe --backend cpu --out "$work/ttt" >/dev/null 2>&1
"$work/use" "$work/ttt" x........ >/dev/null

# What `tbforge probe` prints first, with the partition's name left out (the C
# API gives its id): "partition marks2 (2), rank 11" -> "partition 2, rank 11".
expected() {
  "$tbforge" probe "$work/ttt" "$1" | sed -n 1,4p \
    | sed -E 's/^partition [^ ]+ \(([0-9]+)\), rank/partition \1, rank/'
}

failures=0
for pos in ......... x........ x...o.... xo....... xx.oo.... xxx.oo... xoxxoooxx .x..o..x.; do
  want=$(expected "$pos")
  for exe in probe probe-static; do
    got=$("$work/$exe" "$work/ttt" "$pos")
    if [ "$got" != "$want" ]; then
      echo "c_example.sh: $exe $pos printed:" >&2; echo "$got" >&2
      echo "tbforge probe says:" >&2; echo "$want" >&2
      failures=$((failures + 1))
    fi
  done
done

# Failures: the same message as the command line's, and a non-zero status.
for pos in xxxooo... xyz ""; do
  want=$("$tbforge" probe "$work/ttt" "$pos" 2>&1 >/dev/null | sed 's/^tbforge: error: //') || true
  if got=$("$work/probe" "$work/ttt" "$pos" 2>&1 >/dev/null); then
    echo "c_example.sh: probe '$pos' succeeded; tbforge probe fails with: $want" >&2
    failures=$((failures + 1))
  elif [ "${got#probe: error: }" != "$want" ]; then
    echo "c_example.sh: probe '$pos' says: $got" >&2
    echo "tbforge probe says: $want" >&2
    failures=$((failures + 1))
  fi
done
if got=$("$work/probe" "$work/no-such-dir" x........ 2>&1); then
  echo "c_example.sh: probe on a missing directory succeeded" >&2
  failures=$((failures + 1))
else
  echo "missing directory: $got"
fi
[ "$failures" = 0 ] || { echo "c_example.sh: $failures mismatches" >&2; exit 1; }
echo "probe.c (shared and static) agrees with tbforge probe; tbforge.h compiles as C++"

# Latency through the C ABI ($profile build of the library).
"$work/bench" "$work/ttt" x...o.... "${BENCH_PROBES:-10000000}"
