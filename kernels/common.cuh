// tbforge kernels: shared definitions. Compiled at run time by NVRTC (no system
// headers); the Rust side pastes this file in place of `#include "common.cuh"`.
// Every function here has a CPU twin in src/backend/rank24.rs; read that file's
// documentation for the order and the formulation.

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define TB_CELLS 24
#define TB_BIN_COLS 26
#define TB_BIN_LEN (25 * TB_BIN_COLS)

// TB_BIN[x * 26 + y + 1] = C(x, y) for x in 0..=24, y in -1..=24 (0 outside
// 0 <= y <= x), filled from backend::rank24::BIN when the module is loaded.
__constant__ u32 TB_BIN[TB_BIN_LEN];

// Copies the binomial table into shared memory: lookups below are indexed per
// thread, which constant memory would serialise across a warp. Callers
// __syncthreads() before use.
__device__ __forceinline__ void tb_load_bin(u32* sbin) {
    for (u32 t = threadIdx.x; t < TB_BIN_LEN; t += blockDim.x) sbin[t] = TB_BIN[t];
}

// Algorithm 1's contribution of one cell: m cells after it, s pieces still to
// place of which l1 of colour 1; is1 / is2: the cell's colour (0 or 1 each).
// Colour 1: C(m, s-1) C(s-1, l1); empty: C(m, s-1) C(s, l1); colour 2: 0.
__device__ __forceinline__ u64 tb_term(const u32* bin, u32 m, u32 s, u32 l1, u32 is1, u32 is2) {
    u64 t = (u64)bin[m * TB_BIN_COLS + s] * (u64)bin[(s - is1) * TB_BIN_COLS + l1 + 1];
    return is2 ? 0ull : t;
}

// Rank (seed 000, Algorithm 1) of the board with colour-1 cells c1, colour-2
// cells c2, in partition (k1, k2).
__device__ __forceinline__ u64 tb_rank2(const u32* bin, u32 c1, u32 c2, u32 k1, u32 k2) {
    u32 l1 = k1, s = k1 + k2;
    u64 r = 0;
    for (u32 i = 0; i < TB_CELLS && s; ++i) {
        u32 is1 = (c1 >> i) & 1u, is2 = (c2 >> i) & 1u;
        r += tb_term(bin, TB_CELLS - 1 - i, s, l1, is1, is2);
        l1 -= is1;
        s -= is1 | is2;
    }
    return r;
}

// Board of rank r in partition (k1, k2) (Algorithm 2) into *c1, *c2; returns
// the rank of the colour-swapped board in partition (k2, k1).
__device__ __forceinline__ u64 tb_unrank2(const u32* bin, u64 r, u32 k1, u32 k2, u32* c1, u32* c2) {
    u32 l1 = k1, s = k1 + k2, b1 = 0, b2 = 0;
    u64 swapped = 0;
    for (u32 i = 0; i < TB_CELLS && s; ++i) {
        u32 m = TB_CELLS - 1 - i;
        u64 f = bin[m * TB_BIN_COLS + s];
        u64 v2 = f * (u64)bin[(s - 1) * TB_BIN_COLS + l1 + 1];
        u64 v12 = f * (u64)bin[s * TB_BIN_COLS + l1 + 1];
        u32 bit = 1u << i;
        if (r < v2) {
            b2 |= bit;
            swapped += v12 - v2;
            s -= 1;
        } else if (r < v12) {
            b1 |= bit;
            r -= v2;
            l1 -= 1;
            s -= 1;
        } else {
            r -= v12;
            swapped += v12;
        }
    }
    *c1 = b1;
    *c2 = b2;
    return swapped;
}

// ---- Term tables: Algorithm 1's terms for one launch, in shared memory ----
// For boards whose colour counts never exceed L (L1 = L + 1), the pair
// TERMS[((m * L1 + l1) * L1 + l2) * 2 + {0, 1}] holds the term of a colour-1
// cell, C(m, s-1) C(s-1, l1), and of an empty cell, C(m, s-1) C(s, l1), with
// s = l1 + l2 (both 0 when s = 0). One 64-bit shared load then replaces two
// binomial loads and a multiplication; the unrank walk loads both at once.
__device__ __forceinline__ u32 tb_terms_len(u32 L1) { return 2u * TB_CELLS * L1 * L1; }

// Fills the table (all threads of the block; callers __syncthreads()).
__device__ __forceinline__ void tb_terms_build(u64* terms, u32 L1) {
    for (u32 e = threadIdx.x; e < TB_CELLS * L1 * L1; e += blockDim.x) {
        u32 l2 = e % L1, l1 = (e / L1) % L1, m = e / (L1 * L1);
        u32 s = l1 + l2;
        u64 one = 0, empty = 0;
        if (s > 0 && s <= TB_CELLS) {
            u64 f = TB_BIN[m * TB_BIN_COLS + s];
            one = f * (u64)TB_BIN[(s - 1) * TB_BIN_COLS + l1 + 1];
            empty = f * (u64)TB_BIN[s * TB_BIN_COLS + l1 + 1];
        }
        terms[2 * e] = one;
        terms[2 * e + 1] = empty;
    }
}

// The term of a cell (is1 / is2: its colour), l1 / l2 pieces still to place.
__device__ __forceinline__ u64 tb_tterm(const u64* terms, u32 L1, u32 m, u32 l1, u32 l2, u32 is1, u32 is2) {
    u64 t = terms[((m * L1 + l1) * L1 + l2) * 2 + (is1 ^ 1u)];
    return is2 ? 0ull : t;
}

// tb_unrank2 with the term table.
__device__ __forceinline__ u64 tb_unrank2_t(const u64* terms, u32 L1, u64 r, u32 k1, u32 k2, u32* c1, u32* c2) {
    u32 l1 = k1, l2 = k2, b1 = 0, b2 = 0;
    u64 swapped = 0;
    for (u32 i = 0; i < TB_CELLS && (l1 | l2); ++i) {
        u32 m = TB_CELLS - 1 - i;
        ulonglong2 p = *(const ulonglong2*)&terms[((m * L1 + l1) * L1 + l2) * 2];
        u64 v2 = p.x, v12 = p.y;
        u32 bit = 1u << i;
        if (r < v2) {
            b2 |= bit;
            swapped += v12 - v2;
            l2 -= 1;
        } else if (r < v12) {
            b1 |= bit;
            r -= v2;
            l1 -= 1;
        } else {
            r -= v12;
            swapped += v12;
        }
    }
    *c1 = b1;
    *c2 = b2;
    return swapped;
}

// SplitMix64's finaliser (backend::morris::mix64).
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
