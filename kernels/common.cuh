// tbforge kernels: shared definitions. Compiled at run time by NVRTC (no system
// headers); the Rust side pastes this file in place of `#include "common.cuh"`.
// Only what every game's kernels may share lives here: the integer types and
// small warp-level helpers. Each game's kernels and tables are in its own file
// (kernels/<game>.cu).

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// SplitMix64's finaliser (game::morris::expand::mix64).
__device__ __forceinline__ u64 tb_mix64(u64 z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Sum of v over the warp, in lane 0.
__device__ __forceinline__ u64 tb_warp_sum(u64 v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}
