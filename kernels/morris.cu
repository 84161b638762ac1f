// Nine Men's Morris expansion, sliding and flying phase. CPU twin and the
// documentation of cell order, rules, checksum and incremental ranking:
// src/backend/morris.rs. One thread per position, grid-stride loops.
#include "common.cuh"

// Board tables, filled from backend::morris (ADJACENT, MILLS, MILLS_AT) at load.
__constant__ u32 MORRIS_ADJ[TB_CELLS];
__constant__ u32 MORRIS_MILLS[16];
__constant__ u32 MORRIS_MILLS_AT[2 * TB_CELLS];

struct MorrisTables {
    u32 bin[TB_BIN_LEN];
    u32 adj[TB_CELLS];
    u32 mills[16];
    u32 mills_at[2 * TB_CELLS];
};

__device__ __forceinline__ void morris_load(MorrisTables& t) {
    tb_load_bin(t.bin);
    for (u32 i = threadIdx.x; i < TB_CELLS; i += blockDim.x) {
        t.adj[i] = MORRIS_ADJ[i];
        t.mills_at[2 * i] = MORRIS_MILLS_AT[2 * i];
        t.mills_at[2 * i + 1] = MORRIS_MILLS_AT[2 * i + 1];
    }
    for (u32 i = threadIdx.x; i < 16; i += blockDim.x) t.mills[i] = MORRIS_MILLS[i];
    __syncthreads();
}

__device__ __forceinline__ u64 morris_successor_hash(u32 k1, u32 k2, u64 rank) {
    return tb_mix64(rank | ((u64)(k1 * 32 + k2) << 40));
}

// Rank change when the colour-2 piece at a moves to the empty cell b (board:
// colour 1 = o with k1 pieces, colour 2 = x with k2); only cells between a and
// b see other counts of pieces still to place.
__device__ __forceinline__ u64 morris_slide_delta(const u32* bin, u32 o, u32 x, u32 k1, u32 k2, u32 a, u32 b) {
    u32 lo = min(a, b), hi = max(a, b);
    u32 xn = x ^ (1u << a) ^ (1u << b);
    u32 below = (1u << lo) - 1u;
    u32 l1 = k1 - __popc(o & below);
    u32 lo2 = k2 - __popc(x & below), ln2 = lo2;
    u64 delta = 0;
    for (u32 i = lo; i <= hi; ++i) {
        u32 m = TB_CELLS - 1 - i;
        u32 is1 = (o >> i) & 1u, old2 = (x >> i) & 1u, new2 = (xn >> i) & 1u;
        delta += tb_term(bin, m, l1 + ln2, l1, is1, new2) - tb_term(bin, m, l1 + lo2, l1, is1, old2);
        l1 -= is1;
        lo2 -= old2;
        ln2 -= new2;
    }
    return delta;
}

// Successors of a mill-closing move: o (colour 1, k1 pieces) loses one
// removable piece; x (colour 2, k2) is the mover after the move; r_slid the
// rank of the board before removal in (k1, k2).
__device__ __forceinline__ void morris_add_captures(const u32* bin, u32 o, u32 x, u32 k1, u32 k2, u64 r_slid,
                                                    u32 removable, u32& n, u64& sum) {
    u32 last = 31 - __clz(removable);
    u32 l1 = k1, s = k1 + k2;
    u64 d = 0;
    for (u32 i = 0; i <= last; ++i) {
        u32 m = TB_CELLS - 1 - i;
        u32 is1 = (o >> i) & 1u, is2 = (x >> i) & 1u;
        u64 t = tb_term(bin, m, s, l1, is1, is2);
        if ((removable >> i) & 1u) {
            u64 r = r_slid + d + tb_term(bin, m, s - 1, l1 - 1, 0, 0) - t;
            n += 1;
            sum += morris_successor_hash(k1 - 1, k2, r);
        }
        if (i == last) break;
        if (!is2) d += tb_term(bin, m, s - 1, l1 - 1, is1, 0) - t;
        l1 -= is1;
        s -= is1 | is2;
    }
}

__device__ __forceinline__ u32 morris_removable(const u32* mills, u32 opp) {
    u32 in_mill = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        u32 m = mills[i];
        in_mill |= ((opp & m) == m) ? m : 0u;
    }
    u32 free_ = opp & ~in_mill;
    return free_ ? free_ : opp;
}

// Expansion of one position: successor count *n and checksum *sum.
__device__ __forceinline__ void morris_expand_one(const MorrisTables& t, u32 k1, u32 k2, u64 rank, u32& n, u64& sum) {
    u32 mover, opp;
    u64 swapped = tb_unrank2(t.bin, rank, k1, k2, &mover, &opp);
    n = 0;
    sum = 0;
    if (k1 < 3) return;
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool flying = k1 == 3;
    u32 pieces = mover, dests = 0, a = 0, removable = 0;
    for (;;) {
        while (!dests && pieces) {
            a = __ffs(pieces) - 1;
            pieces &= pieces - 1;
            dests = flying ? empty : (t.adj[a] & empty);
        }
        if (!dests) break;
        u32 b = __ffs(dests) - 1;
        dests &= dests - 1;
        // Successor's view: colour 1 = opponent (k2 pieces), colour 2 = mover (k1).
        u64 r_slid = swapped + morris_slide_delta(t.bin, opp, mover, k2, k1, a, b);
        u32 moved = mover ^ (1u << a) ^ (1u << b);
        u32 m0 = t.mills_at[2 * b], m1 = t.mills_at[2 * b + 1];
        bool closes = ((moved & m0) == m0) || ((moved & m1) == m1);
        if (closes && opp) {
            if (!removable) removable = morris_removable(t.mills, opp);
            morris_add_captures(t.bin, opp, moved, k2, k1, r_slid, removable, n, sum);
        } else {
            n += 1;
            sum += morris_successor_hash(k2, k1, r_slid);
        }
    }
}

// Per-position results for ranks start + i (ranks == 0) or ranks[i], i < count.
extern "C" __global__ void morris_expand(u32 k1, u32 k2, u64 start, u64 count, const u64* ranks, u16* counts,
                                         u64* sums) {
    __shared__ MorrisTables t;
    morris_load(t);
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
        u64 r = ranks ? ranks[i] : start + i;
        u32 n;
        u64 sum;
        morris_expand_one(t, k1, k2, r, n, sum);
        counts[i] = (u16)n;
        sums[i] = sum;
    }
}

// Summary of ranks start..start+count: out[0] += successors, out[1] += digest
// (backend::morris::Summary; sums commute, so the result is deterministic).
extern "C" __global__ void morris_summary(u32 k1, u32 k2, u64 start, u64 count, u64* out) {
    __shared__ MorrisTables t;
    morris_load(t);
    u64 succ = 0, digest = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
        u64 r = start + i;
        u32 n;
        u64 sum;
        morris_expand_one(t, k1, k2, r, n, sum);
        succ += n;
        digest += tb_mix64(sum ^ (r << 16) ^ (u64)n);
    }
    succ = tb_warp_sum(succ);
    digest = tb_warp_sum(digest);
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&out[0], succ);
        atomicAdd(&out[1], digest);
    }
}
