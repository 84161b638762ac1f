// Nine Men's Morris expansion, sliding and flying phase. CPU twin and the
// documentation of cell order, rules, checksum and incremental ranking:
// src/backend/morris.rs. One thread per position, grid-stride loops.
//
// Launch with dynamic shared memory tb_terms_len(L1) * 8 bytes, where
// L1 = max(k1, k2) + 1: the term table of common.cuh for this partition, its
// successors' (k2, k1) and its captures' (k2 - 1, k1), all counts <= L.
#include "common.cuh"

// Board tables, filled from backend::morris (ADJACENT, MILLS, MILLS_AT) at load.
__constant__ u32 MORRIS_ADJ[TB_CELLS];
__constant__ u32 MORRIS_MILLS[16];
__constant__ u32 MORRIS_MILLS_AT[2 * TB_CELLS];

struct MorrisTables {
    const u64* terms;
    u32 L1;
    const u32* adj;
    const u32* mills;
    const u32* mills_at;
};

extern __shared__ __align__(16) u64 morris_dyn[];

// Loads the board tables and builds the term table; every thread of the block.
__device__ __forceinline__ MorrisTables morris_load(u32 k1, u32 k2) {
    __shared__ u32 adj[TB_CELLS], mills[16], mills_at[2 * TB_CELLS];
    for (u32 i = threadIdx.x; i < TB_CELLS; i += blockDim.x) {
        adj[i] = MORRIS_ADJ[i];
        mills_at[2 * i] = MORRIS_MILLS_AT[2 * i];
        mills_at[2 * i + 1] = MORRIS_MILLS_AT[2 * i + 1];
    }
    for (u32 i = threadIdx.x; i < 16; i += blockDim.x) mills[i] = MORRIS_MILLS[i];
    u32 L1 = max(k1, k2) + 1;
    tb_terms_build(morris_dyn, L1);
    __syncthreads();
    MorrisTables t = {morris_dyn, L1, adj, mills, mills_at};
    return t;
}

__device__ __forceinline__ u64 morris_successor_hash(u32 k1, u32 k2, u64 rank) {
    return tb_mix64(rank | ((u64)(k1 * 32 + k2) << 40));
}

// Rank change when the colour-2 piece at a moves to the empty cell b (board:
// colour 1 = o with k1 pieces, colour 2 = x with k2); only cells between a and
// b see other counts of pieces still to place.
__device__ __forceinline__ u64 morris_slide_delta(const MorrisTables& t, u32 o, u32 x, u32 k1, u32 k2, u32 a, u32 b) {
    u32 lo = min(a, b), hi = max(a, b);
    u32 xn = x ^ (1u << a) ^ (1u << b);
    u32 below = (1u << lo) - 1u;
    u32 l1 = k1 - __popc(o & below);
    u32 lo2 = k2 - __popc(x & below), ln2 = lo2;
    u64 delta = 0;
    for (u32 i = lo; i <= hi; ++i) {
        u32 m = TB_CELLS - 1 - i;
        u32 is1 = (o >> i) & 1u, old2 = (x >> i) & 1u, new2 = (xn >> i) & 1u;
        delta += tb_tterm(t.terms, t.L1, m, l1, ln2, is1, new2) - tb_tterm(t.terms, t.L1, m, l1, lo2, is1, old2);
        l1 -= is1;
        lo2 -= old2;
        ln2 -= new2;
    }
    return delta;
}

// Successors of a mill-closing move: o (colour 1, k1 pieces) loses one
// removable piece; x (colour 2, k2) is the mover after the move; r_slid the
// rank of the board before removal in (k1, k2).
__device__ __forceinline__ void morris_add_captures(const MorrisTables& t, u32 o, u32 x, u32 k1, u32 k2, u64 r_slid,
                                                    u32 removable, u32& n, u64& sum) {
    u32 last = 31 - __clz(removable);
    u32 l1 = k1, l2 = k2;
    u64 d = 0;
    for (u32 i = 0; i <= last; ++i) {
        u32 m = TB_CELLS - 1 - i;
        u32 is1 = (o >> i) & 1u, is2 = (x >> i) & 1u;
        u64 tt = tb_tterm(t.terms, t.L1, m, l1, l2, is1, is2);
        if ((removable >> i) & 1u) {
            u64 r = r_slid + d + tb_tterm(t.terms, t.L1, m, l1 - 1, l2, 0, 0) - tt;
            n += 1;
            sum += morris_successor_hash(k1 - 1, k2, r);
        }
        if (i == last) break;
        if (!is2) d += tb_tterm(t.terms, t.L1, m, l1 - 1, l2, is1, 0) - tt;
        l1 -= is1;
        l2 -= is2;
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

__device__ __forceinline__ bool morris_closes(const MorrisTables& t, u32 moved, u32 b) {
    u32 m0 = t.mills_at[2 * b], m1 = t.mills_at[2 * b + 1];
    return ((moved & m0) == m0) || ((moved & m1) == m1);
}

// Expansion of one position: successor count n and checksum sum.
__device__ __forceinline__ void morris_expand_one(const MorrisTables& t, u32 k1, u32 k2, u64 rank, u32& n, u64& sum) {
    u32 mover, opp;
    u64 swapped = tb_unrank2_t(t.terms, t.L1, rank, k1, k2, &mover, &opp);
    n = 0;
    sum = 0;
    if (k1 < 3) return;
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool flying = k1 == 3;
    // Pass 1: moves that close no mill. Successor's view: colour 1 = opponent
    // (k2 pieces), colour 2 = mover (k1).
    u32 pieces = mover, dests = 0, a = 0;
    bool mills = false;
    for (;;) {
        while (!dests && pieces) {
            a = __ffs(pieces) - 1;
            pieces &= pieces - 1;
            dests = flying ? empty : (t.adj[a] & empty);
        }
        if (!dests) break;
        u32 b = __ffs(dests) - 1;
        dests &= dests - 1;
        u32 moved = mover ^ (1u << a) ^ (1u << b);
        if (opp && morris_closes(t, moved, b)) {
            mills = true;
            continue;
        }
        u64 r = swapped + morris_slide_delta(t, opp, mover, k2, k1, a, b);
        n += 1;
        sum += morris_successor_hash(k2, k1, r);
    }
    if (!mills) return;
    // Pass 2: mill-closing moves. A cheap scan finds each lane's next one, so
    // the lanes of a warp do their long capture walks together instead of one
    // after another at different iterations of pass 1.
    u32 removable = morris_removable(t.mills, opp);
    pieces = mover;
    dests = 0;
    for (;;) {
        u32 b = 32, moved = 0;
        for (;;) {
            while (!dests && pieces) {
                a = __ffs(pieces) - 1;
                pieces &= pieces - 1;
                dests = flying ? empty : (t.adj[a] & empty);
            }
            if (!dests) break;
            u32 c = __ffs(dests) - 1;
            dests &= dests - 1;
            u32 mv = mover ^ (1u << a) ^ (1u << c);
            if (morris_closes(t, mv, c)) {
                b = c;
                moved = mv;
                break;
            }
        }
        if (b == 32) break;
        u64 r_slid = swapped + morris_slide_delta(t, opp, mover, k2, k1, a, b);
        morris_add_captures(t, opp, moved, k2, k1, r_slid, removable, n, sum);
    }
}

// Per-position results for ranks start + i (ranks == 0) or ranks[i], i < count.
extern "C" __global__ void morris_expand(u32 k1, u32 k2, u64 start, u64 count, const u64* ranks, u16* counts,
                                         u64* sums) {
    MorrisTables t = morris_load(k1, k2);
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
    MorrisTables t = morris_load(k1, k2);
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
