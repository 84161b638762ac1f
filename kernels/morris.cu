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

// One multiply and one xor-shift (backend::morris::successor_hash): a
// bijection of the tagged rank, cheap enough to run on every board edge.
__device__ __forceinline__ u64 morris_hash_tagged(u64 x) {
    u64 h = x * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

// backend::morris::position_digest: linear in (sum, n) for a given rank.
#define MORRIS_COUNT_WEIGHT 0xD6E8FEB86659FD93ull
__device__ __forceinline__ u64 morris_rank_weight(u64 rank) { return tb_mix64(rank) | 1ull; }
__device__ __forceinline__ u64 morris_position_digest(u64 rank, u32 n, u64 sum) {
    return (sum + (u64)n * MORRIS_COUNT_WEIGHT) * morris_rank_weight(rank);
}

__device__ __forceinline__ u64 morris_successor_hash(u32 k1, u32 k2, u64 rank) {
    return morris_hash_tagged(rank | ((u64)(k1 * 32 + k2) << 40));
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
        digest += morris_position_digest(r, n, sum);
    }
    succ = tb_warp_sum(succ);
    digest = tb_warp_sum(digest);
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&out[0], succ);
        atomicAdd(&out[1], digest);
    }
}

// ===========================================================================
// v3: slide re-ranking by differences of per-cell prefix terms, one unrolled
// walk over the board with the move generation folded in (CPU twin:
// backend::morris::Prefix). The walk, the edges and the mill tests are
// compile-time per cell, so every lane of a warp runs the same instructions;
// mill-closing moves are queued and their capture walks run afterwards, either
// by the lane that found them (MODE 0) or spread over the warp (MODE 1).
//
// Dynamic shared memory: mc_smem_bytes(L1, warps) (the host computes the same
// in backend::cuda::morris3_smem).
// ===========================================================================

// The 16 mill lines, three cells each (backend::morris::MILL_LINES; a test in
// that module compares this copy with the Rust table).
#define MORRIS_LINE_LIST                                                                                          \
    2, 14, 23, 5, 13, 20, 8, 12, 17, 1, 4, 7, 16, 19, 22, 6, 11, 15, 3, 10, 18, 0, 9, 21, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \
        10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23

__host__ __device__ constexpr int mc_pt(int k, int j) {
    constexpr int L[48] = {MORRIS_LINE_LIST};
    return L[3 * k + j];
}
__host__ __device__ constexpr u32 mc_line(int k) {
    return (1u << mc_pt(k, 0)) | (1u << mc_pt(k, 1)) | (1u << mc_pt(k, 2));
}
// Neighbours of cell c: consecutive points of the lines through it.
__host__ __device__ constexpr u32 mc_adj(int c) {
    u32 a = 0;
    for (int k = 0; k < 16; ++k) {
        if (mc_pt(k, 0) == c) a |= 1u << mc_pt(k, 1);
        if (mc_pt(k, 1) == c) a |= (1u << mc_pt(k, 0)) | (1u << mc_pt(k, 2));
        if (mc_pt(k, 2) == c) a |= 1u << mc_pt(k, 1);
    }
    return a;
}
// The w-th (0 or 1) mill through cell c.
__host__ __device__ constexpr u32 mc_mill_at(int c, int w) {
    int seen = 0;
    for (int k = 0; k < 16; ++k) {
        if ((mc_line(k) >> c) & 1u) {
            if (seen == w) return mc_line(k);
            ++seen;
        }
    }
    return 0;
}

#define MC_QCAP 128u  // queue slots per warp
#define MC_FULL 0xffffffffu

// Table of Algorithm 1's terms, {colour-1 term, empty term} per entry
// ((m * L1 + l1) * W + l2 + 1), W = L1 + 2, l2 in -1..=L1; 0 where l2 < 0
// or the counts are no board's (backend::morris::pterm).
__device__ __forceinline__ void mc_table_build(ulonglong2* T, u32 L1) {
    u32 W = L1 + 2;
    for (u32 e = threadIdx.x; e < TB_CELLS * L1 * W; e += blockDim.x) {
        u32 j = e % W, l1 = (e / W) % L1, m = e / (W * L1);
        u64 one = 0, empty = 0;
        if (j > 0) {
            u32 s = l1 + j - 1;
            if (s > 0 && s <= TB_CELLS) {
                u64 f = TB_BIN[m * TB_BIN_COLS + s];
                one = f * (u64)TB_BIN[(s - 1) * TB_BIN_COLS + l1 + 1];
                empty = f * (u64)TB_BIN[s * TB_BIN_COLS + l1 + 1];
            }
        }
        T[e] = make_ulonglong2(one, empty);
    }
}

__device__ __forceinline__ u32 mc_smem_table_bytes(u32 L1) { return TB_CELLS * L1 * (L1 + 2) * 16u; }

// Shared-memory accesses by 32-bit shared address (the generic 64-bit
// pointer arithmetic costs two instructions an address).
__device__ __forceinline__ ulonglong2 mc_lds128(u32 a) {
    ulonglong2 v;
    asm volatile("ld.shared.v2.u64 {%0, %1}, [%2];" : "=l"(v.x), "=l"(v.y) : "r"(a));
    return v;
}
__device__ __forceinline__ u64 mc_lds64(u32 a) {
    u64 v;
    asm volatile("ld.shared.u64 %0, [%1];" : "=l"(v) : "r"(a) : "memory");
    return v;
}
__device__ __forceinline__ u32 mc_lds32(u32 a) {
    u32 v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
    return v;
}
__device__ __forceinline__ void mc_sts64(u32 a, u64 v) {
    asm volatile("st.shared.u64 [%0], %1;" ::"r"(a), "l"(v) : "memory");
}
__device__ __forceinline__ void mc_sts32(u32 a, u32 v) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}
__device__ __forceinline__ void mc_red64(u32 a, u64 v) {
    asm volatile("red.shared.add.u64 [%0], %1;" ::"r"(a), "l"(v) : "memory");
}
__device__ __forceinline__ void mc_red32(u32 a, u32 v) {
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(a), "r"(v) : "memory");
}

struct McTab {
    const ulonglong2* T;
    u32 L1, W;
    // Shared address of entry (m, l1, l2) = sb + m * LW16 + (l1 * W + l2) * 16.
    u32 sb, LW16, W16;
    const u32* adj;
    const u32* mills;
    const u32* mills_at;
};

__device__ __forceinline__ ulonglong2 mc_at(const McTab& t, u32 m, u32 l1, u32 l2) {
    return t.T[(m * t.L1 + l1) * t.W + l2 + 1];
}

__device__ __forceinline__ u64 mc_term(const McTab& t, u32 m, u32 l1, u32 l2, u32 is1, u32 is2) {
    ulonglong2 p = mc_at(t, m, l1, l2);
    u64 v = is1 ? p.x : p.y;
    return is2 ? 0ull : v;
}

// tb_unrank2 on this table.
__device__ __forceinline__ u64 mc_unrank(const McTab& t, u64 r, u32 k1, u32 k2, u32* c1, u32* c2) {
    u32 l1 = k1, l2 = k2, b1 = 0, b2 = 0;
    u64 swapped = 0;
    u32 a = t.sb + (TB_CELLS - 1) * t.LW16 + (k1 * t.W + k2) * 16u;
    for (u32 i = 0; i < TB_CELLS && (l1 | l2); ++i, a -= t.LW16) {
        ulonglong2 p = mc_lds128(a);
        u64 v2 = p.x, v12 = p.y;
        u32 bit = 1u << i;
        if (r < v2) {
            b2 |= bit;
            swapped += v12 - v2;
            l2 -= 1;
            a -= 16u;
        } else if (r < v12) {
            b1 |= bit;
            r -= v2;
            l1 -= 1;
            a -= t.W16;
        } else {
            r -= v12;
            swapped += v12;
        }
    }
    *c1 = b1;
    *c2 = b2;
    return swapped;
}

// morris_slide_delta on this table (flying moves).
__device__ __forceinline__ u64 mc_slide_delta(const McTab& t, u32 o, u32 x, u32 k1, u32 k2, u32 a, u32 b) {
    u32 lo = min(a, b), hi = max(a, b);
    u32 xn = x ^ (1u << a) ^ (1u << b);
    u32 below = (1u << lo) - 1u;
    u32 l1 = k1 - __popc(o & below);
    u32 lo2 = k2 - __popc(x & below), ln2 = lo2;
    u64 delta = 0;
    for (u32 i = lo; i <= hi; ++i) {
        u32 m = TB_CELLS - 1 - i;
        u32 is1 = (o >> i) & 1u, old2 = (x >> i) & 1u, new2 = (xn >> i) & 1u;
        delta += mc_term(t, m, l1, ln2, is1, new2) - mc_term(t, m, l1, lo2, is1, old2);
        l1 -= is1;
        lo2 -= old2;
        ln2 -= new2;
    }
    return delta;
}

// morris_add_captures on this table.
__device__ __forceinline__ void mc_captures(const McTab& t, u32 o, u32 x, u32 k1, u32 k2, u64 r_slid, u32 removable,
                                            u32& n, u64& sum) {
    u32 last = 31 - __clz(removable);
    u64 d = 0;
    u64 tag = (u64)((k1 - 1) * 32 + k2) << 40;
    // Entry (m, l1, l2) and, W16 bytes before it, (m, l1 - 1, l2).
    u32 a = t.sb + (TB_CELLS - 1) * t.LW16 + (k1 * t.W + k2) * 16u;
    for (u32 i = 0; i <= last; ++i) {
        u32 is1 = (o >> i) & 1u, is2 = (x >> i) & 1u;
        ulonglong2 p = mc_lds128(a);
        ulonglong2 q = mc_lds128(a - t.W16);
        u64 tt = is2 ? 0ull : (is1 ? p.x : p.y);
        if ((removable >> i) & 1u) {
            n += 1;
            sum += morris_hash_tagged((r_slid + d + q.y - tt) | tag);
        }
        if (!is2) d += (is1 ? q.x : q.y) - tt;
        a -= t.LW16 + (is1 ? t.W16 : 0u) + (is2 ? 16u : 0u);
    }
}


// The v2 expansion on this table; v3 uses it for flying (k1 == 3), where a
// piece may move between any two cells.
__device__ __forceinline__ void mc_expand_generic(const McTab& t, u32 mover, u32 opp, u64 swapped, u32 k1, u32 k2,
                                                  u32& n, u64& sum) {
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool flying = k1 == 3;
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
        u32 m0 = t.mills_at[2 * b], m1 = t.mills_at[2 * b + 1];
        if (opp && (((moved & m0) == m0) || ((moved & m1) == m1))) {
            mills = true;
            continue;
        }
        u64 r = swapped + mc_slide_delta(t, opp, mover, k2, k1, a, b);
        n += 1;
        sum += morris_successor_hash(k2, k1, r);
    }
    if (!mills) return;
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
            u32 m0 = t.mills_at[2 * c], m1 = t.mills_at[2 * c + 1];
            if (((mv & m0) == m0) || ((mv & m1) == m1)) {
                b = c;
                moved = mv;
                break;
            }
        }
        if (b == 32) break;
        u64 r_slid = swapped + mc_slide_delta(t, opp, mover, k2, k1, a, b);
        mc_captures(t, opp, moved, k2, k1, r_slid, removable, n, sum);
    }
}

// One warp's queue of mill-closing moves: slot i holds the rank of the slid
// board and (moved mover bitboard | owner lane << 24); acc_* collect each
// lane's capture successors when the warp shares the walks (MODE 1). MODE 0
// uses slot k * 32 + lane for the lane's k-th move (k < 4).
struct McQueue {
    u32 base;  // shared address: r[128] u64, acc_sum[32] u64, m[128] u32, acc_n[32] u32
    u32 count;
};
#define MC_Q_R(q, i) ((q).base + (i) * 8u)
#define MC_Q_SUM(q, l) ((q).base + MC_QCAP * 8u + (l) * 8u)
#define MC_Q_M(q, i) ((q).base + MC_QCAP * 8u + 256u + (i) * 4u)
#define MC_Q_N(q, l) ((q).base + MC_QCAP * 12u + 256u + (l) * 4u)
// MODE 2 (summary only; batches across positions): slot i holds the slid
// rank, the owner position's rank weight, the moved mover bitboard and the
// opponent bitboard.
#define MC_B_R(q, i) ((q).base + (i) * 8u)
#define MC_B_W(q, i) ((q).base + MC_QCAP * 8u + (i) * 8u)
#define MC_B_M(q, i) ((q).base + MC_QCAP * 16u + (i) * 4u)
#define MC_B_O(q, i) ((q).base + MC_QCAP * 20u + (i) * 4u)

__device__ __forceinline__ u32 mc_smem_queue_bytes(int mode) {
    return mode == 2 ? MC_QCAP * 24u : MC_QCAP * 12u + 32u * 12u;
}

// Per-position state of the v3 walk, successor's view: colour 1 = opponent
// (k2 pieces, l1 still to place), colour 2 = mover (k1, l2 to place).
struct McWalk {
    u32 mover, opp, empty, k1, k2, off, n, nm, lane;
    u32 ovf;  // edges (mc_edge_index) whose mill-closing move found the queue full
    bool act;    // MODE 2: a real position (not a stand-in past the end)
    u64 weight;  // MODE 2: morris_rank_weight of the position
    u64 swapped, tag, pp, pm, sum;
    // This cell's up and down (backend::morris::Prefix); key: an earlier
    // cell's up if it holds a mover piece (a slide's source), else its down
    // (a slide's destination), so that one value a cell stays live.
    u64 up, down;
    u64 key[TB_CELLS];
};

// Does the slide S -> D close a mill? mover is the board before the move.
template <int S, int D>
__device__ __forceinline__ bool mc_closes(u32 mover) {
    constexpr u32 m0 = mc_mill_at(D, 0), m1 = mc_mill_at(D, 1);
    constexpr u32 need0 = m0 & ~(1u << D), need1 = m1 & ~(1u << D);
    bool c = false;
    if constexpr (((m0 >> S) & 1u) == 0) c = c || ((mover & need0) == need0);
    if constexpr (((m1 >> S) & 1u) == 0) c = c || ((mover & need1) == need1);
    return c;
}

// Index of the board edge J < I in the walk's order (edges by larger cell,
// then smaller): bit of McWalk::ovf.
__host__ __device__ constexpr int mc_edge_index(int J, int I) {
    int e = 0;
    for (int i = 0; i < 24; ++i)
        for (int j = 0; j < i; ++j) {
            if (i == I && j == J) return e;
            if ((mc_adj(i) >> j) & 1u) ++e;
        }
    return -1;
}

template <int MODE, int E>
__device__ __forceinline__ void mc_push(McWalk& w, McQueue& q, const McTab& t, bool mill, u64 r, u32 moved) {
    if constexpr (MODE == 0) {
        if (mill) {
            if (w.nm < 4) {
                mc_sts64(MC_Q_R(q, w.nm * 32 + w.lane), r);
                mc_sts32(MC_Q_M(q, w.nm * 32 + w.lane), moved);
            } else {
                w.ovf |= 1u << E;
            }
            w.nm += 1;
        }
    } else {
        if constexpr (MODE == 2) mill = mill && w.act;
        u32 bal = __ballot_sync(MC_FULL, mill);
        if (bal) {
            u32 slot = q.count + __popc(bal & ((1u << w.lane) - 1u));
            if (mill) {
                if (slot < MC_QCAP) {
                    if constexpr (MODE == 2) {
                        mc_sts64(MC_B_R(q, slot), r);
                        mc_sts64(MC_B_W(q, slot), w.weight);
                        mc_sts32(MC_B_M(q, slot), moved);
                        mc_sts32(MC_B_O(q, slot), w.opp);
                    } else {
                        mc_sts64(MC_Q_R(q, slot), r);
                        mc_sts32(MC_Q_M(q, slot), moved | (w.lane << 24));
                    }
                } else {
                    w.ovf |= 1u << E;
                }
            }
            // Past MC_QCAP the moves went to ovf; the count stops at the end.
            q.count = min(q.count + __popc(bal), MC_QCAP);
        }
    }
}

// The edge between cells J < I: at most one direction is a move (one end
// holds a mover piece, the other is empty).
template <int J, int I, int MODE>
__device__ __forceinline__ void mc_edge(McWalk& w, McQueue& q, const McTab& t) {
    bool fwd = ((w.mover >> J) & (w.empty >> I) & 1u) != 0;
    bool bwd = ((w.mover >> I) & (w.empty >> J) & 1u) != 0;
    bool valid = fwd || bwd;
    u64 r = w.swapped + (fwd ? w.key[J] - w.up : w.down - w.key[J]);
    bool closes = w.opp != 0 && (fwd ? mc_closes<J, I>(w.mover) : mc_closes<I, J>(w.mover));
    if (valid && !closes) {
        w.n += 1;
        w.sum += morris_hash_tagged(r | w.tag);
    }
    mc_push<MODE, mc_edge_index(J, I)>(w, q, t, valid && closes, r, w.mover ^ (1u << J) ^ (1u << I));
}

template <int I, int J, int MODE>
__device__ __forceinline__ void mc_edges(McWalk& w, McQueue& q, const McTab& t) {
    if constexpr (J < I) {
        if constexpr (((mc_adj(I) >> J) & 1u) != 0) mc_edge<J, I, MODE>(w, q, t);
        mc_edges<I, J + 1, MODE>(w, q, t);
    }
}

template <int I, int MODE>
__device__ __forceinline__ void mc_cells(McWalk& w, McQueue& q, const McTab& t) {
    if constexpr (I < TB_CELLS) {
        constexpr u32 m = TB_CELLS - 1 - I;
        u32 is1 = (w.opp >> I) & 1u, is2 = (w.mover >> I) & 1u;
        u32 a = t.sb + m * t.LW16 + w.off;
        ulonglong2 A = mc_lds128(a - 16u), B = mc_lds128(a), C = mc_lds128(a + 16u);  // l2 - 1, l2, l2 + 1
        w.up = B.y - w.pp;
        w.down = A.y + w.pm;
        w.key[I] = is2 ? w.up : w.down;
        u64 dp = is1 ? C.x - B.x : C.y - B.y;
        u64 dm = is1 ? A.x - B.x : A.y - B.y;
        w.pp += is2 ? 0ull : dp;
        w.pm += is2 ? 0ull : dm;
        w.off -= (is1 ? t.W16 : 0u) + (is2 ? 16u : 0u);
        mc_edges<I, 0, MODE>(w, q, t);
        mc_cells<I + 1, MODE>(w, q, t);
    }
}

// Expansion of one position (every lane of the warp calls it together in
// MODE 1): successor count n and checksum sum, as morris_expand_one.
template <int MODE>
__device__ __forceinline__ void mc_expand_one(const McTab& t, McQueue& q, u32 k1, u32 k2, u64 rank, u32& n,
                                              u64& sum, bool act = true, u64 weight = 0) {
    u32 mover, opp;
    u64 swapped = mc_unrank(t, rank, k1, k2, &mover, &opp);
    n = 0;
    sum = 0;
    if (k1 < 3) return;
    if (k1 == 3) {
        mc_expand_generic(t, mover, opp, swapped, k1, k2, n, sum);
        return;
    }
    McWalk w;
    w.mover = mover;
    w.opp = opp;
    w.empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    w.k1 = k1;
    w.k2 = k2;
    w.off = (k2 * t.W + k1) * 16u;
    w.n = 0;
    w.nm = 0;
    w.ovf = 0;
    w.act = act;
    w.weight = weight;
    w.lane = threadIdx.x & 31u;
    w.swapped = swapped;
    w.tag = (u64)(k2 * 32 + k1) << 40;
    w.pp = 0;
    w.pm = 0;
    w.sum = 0;
    if constexpr (MODE != 2) q.count = 0;
    if constexpr (MODE == 1) {
        mc_sts64(MC_Q_SUM(q, w.lane), 0);
        mc_sts32(MC_Q_N(q, w.lane), 0);
    }
    mc_cells<0, MODE>(w, q, t);
    if constexpr (MODE == 0) {
        if (w.nm) {
            u32 removable = morris_removable(t.mills, opp);
            for (u32 k = 0; k < min(w.nm, 4u); ++k)
                mc_captures(t, opp, mc_lds32(MC_Q_M(q, k * 32 + w.lane)), k2, k1, mc_lds64(MC_Q_R(q, k * 32 + w.lane)),
                            removable, w.n, w.sum);
        }
    } else if constexpr (MODE == 1) {
        u32 cnt = min(q.count, MC_QCAP);
        if (cnt) {
            __syncwarp();
            u32 removable = morris_removable(t.mills, opp);
            for (u32 b = 0; b < cnt; b += 32) {
                u32 i = b + w.lane;
                bool act = i < cnt;
                u32 tm = act ? mc_lds32(MC_Q_M(q, i)) : 0u;
                u32 owner = tm >> 24;
                u32 o = __shfl_sync(MC_FULL, opp, owner);
                u32 rem = __shfl_sync(MC_FULL, removable, owner);
                if (act) {
                    u32 nn = 0;
                    u64 ss = 0;
                    mc_captures(t, o, tm & 0xffffffu, k2, k1, mc_lds64(MC_Q_R(q, i)), rem, nn, ss);
                    mc_red64(MC_Q_SUM(q, owner), ss);
                    mc_red32(MC_Q_N(q, owner), nn);
                }
            }
            __syncwarp();
            w.n += mc_lds32(MC_Q_N(q, w.lane));
            w.sum += mc_lds64(MC_Q_SUM(q, w.lane));
        }
        __syncwarp();
    }
    if (w.ovf) {
        // Rare: mill-closing moves that found no queue slot, re-ranked the
        // v2 way. Edge e's cells, in mc_edge_index order, from the adjacency.
        u32 removable = morris_removable(t.mills, opp);
        u32 e = 0;
        for (u32 i = 1; i < TB_CELLS; ++i) {
            for (u32 j = 0; j < i; ++j) {
                if (!((t.adj[i] >> j) & 1u)) continue;
                if ((w.ovf >> e) & 1u) {
                    bool fwd = (mover >> j) & 1u;
                    u32 a = fwd ? j : i, b = fwd ? i : j;
                    u64 r_slid = swapped + mc_slide_delta(t, opp, mover, k2, k1, a, b);
                    mc_captures(t, opp, mover ^ (1u << a) ^ (1u << b), k2, k1, r_slid, removable, w.n, w.sum);
                }
                ++e;
            }
        }
    }
    n = w.n;
    sum = w.sum;
}

// Loads the board tables and builds this partition's term table; every
// thread of the block. The queue of this thread's warp follows the table.
template <int MODE>
__device__ __forceinline__ McTab mc_load(u32 k1, u32 k2, McQueue& q) {
    __shared__ u32 adj[TB_CELLS], mills[16], mills_at[2 * TB_CELLS];
    for (u32 i = threadIdx.x; i < TB_CELLS; i += blockDim.x) {
        adj[i] = MORRIS_ADJ[i];
        mills_at[2 * i] = MORRIS_MILLS_AT[2 * i];
        mills_at[2 * i + 1] = MORRIS_MILLS_AT[2 * i + 1];
    }
    for (u32 i = threadIdx.x; i < 16; i += blockDim.x) mills[i] = MORRIS_MILLS[i];
    u32 L1 = max(k1, k2) + 1;
    ulonglong2* T = (ulonglong2*)morris_dyn;
    mc_table_build(T, L1);
    u32 sbase = (u32)__cvta_generic_to_shared(morris_dyn);
    q.base = sbase + mc_smem_table_bytes(L1) + (threadIdx.x >> 5) * mc_smem_queue_bytes(MODE);
    q.count = 0;
    __syncthreads();
    u32 W = L1 + 2;
    McTab t = {T, L1, W, sbase + 16u, L1 * W * 16u, W * 16u, adj, mills, mills_at};
    return t;
}

// Per-position results, as morris_expand. Every lane of a warp runs the same
// number of iterations (lanes past the end expand a stand-in rank and drop
// it), as MODE 1's warp-wide queue needs.
template <int MODE>
__device__ __forceinline__ void mc_expand_kernel(u32 k1, u32 k2, u64 start, u64 count, const u64* ranks, u16* counts,
                                                 u64* sums) {
    McQueue q;
    McTab t = mc_load<MODE>(k1, k2, q);
    u32 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 wb = (u64)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); wb < count; wb += stride) {
        u64 i = wb + lane;
        bool act = i < count;
        u64 r = ranks ? ranks[act ? i : wb] : start + (act ? i : wb);
        u32 n;
        u64 sum;
        mc_expand_one<MODE>(t, q, k1, k2, r, n, sum);
        if (act) {
            counts[i] = (u16)n;
            sums[i] = sum;
        }
    }
}

// MODE 2: capture walks of queued mill-closing moves, 32 at a time while the
// warp's queue holds 32 (all of it when last). The digest is linear in each
// position's checksum and count (morris_position_digest), so each lane adds
// what it computed, weighed by the owner position's rank weight.
__device__ __forceinline__ void mc_rounds(const McTab& t, McQueue& q, u32 k1, u32 k2, bool last, u64& succ,
                                          u64& digest) {
    u32 lane = threadIdx.x & 31u;
    while (q.count >= 32 || (last && q.count > 0)) {
        u32 base = q.count >= 32 ? q.count - 32 : 0;
        u32 i = base + lane;
        __syncwarp();
        if (i < q.count) {
            u32 opp = mc_lds32(MC_B_O(q, i));
            u32 nn = 0;
            u64 ss = 0;
            mc_captures(t, opp, mc_lds32(MC_B_M(q, i)), k2, k1, mc_lds64(MC_B_R(q, i)),
                        morris_removable(t.mills, opp), nn, ss);
            succ += nn;
            digest += (ss + (u64)nn * MORRIS_COUNT_WEIGHT) * mc_lds64(MC_B_W(q, i));
        }
        __syncwarp();
        q.count = base;
    }
}

// Summary, as morris_summary.
template <int MODE>
__device__ __forceinline__ void mc_summary_kernel(u32 k1, u32 k2, u64 start, u64 count, u64* out) {
    McQueue q;
    McTab t = mc_load<MODE>(k1, k2, q);
    u32 lane = threadIdx.x & 31u;
    u64 succ = 0, digest = 0;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 wb = (u64)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); wb < count; wb += stride) {
        u64 i = wb + lane;
        bool act = i < count;
        u64 r = start + (act ? i : wb);
        u32 n;
        u64 sum;
        if constexpr (MODE == 2) {
            u64 weight = morris_rank_weight(r);
            mc_expand_one<MODE>(t, q, k1, k2, r, n, sum, act, weight);
            if (act) {
                succ += n;
                digest += (sum + (u64)n * MORRIS_COUNT_WEIGHT) * weight;
            }
            mc_rounds(t, q, k1, k2, false, succ, digest);
        } else {
            mc_expand_one<MODE>(t, q, k1, k2, r, n, sum);
            if (act) {
                succ += n;
                digest += morris_position_digest(r, n, sum);
            }
        }
    }
    if constexpr (MODE == 2) mc_rounds(t, q, k1, k2, true, succ, digest);
    succ = tb_warp_sum(succ);
    digest = tb_warp_sum(digest);
    if (lane == 0) {
        atomicAdd(&out[0], succ);
        atomicAdd(&out[1], digest);
    }
}

extern "C" __global__ void morris_expand3l(u32 k1, u32 k2, u64 start, u64 count, const u64* ranks, u16* counts,
                                           u64* sums) {
    mc_expand_kernel<0>(k1, k2, start, count, ranks, counts, sums);
}
extern "C" __global__ void __launch_bounds__(256, 4) morris_expand3w(u32 k1, u32 k2, u64 start, u64 count, const u64* ranks, u16* counts,
                                           u64* sums) {
    mc_expand_kernel<1>(k1, k2, start, count, ranks, counts, sums);
}
extern "C" __global__ void morris_summary3l(u32 k1, u32 k2, u64 start, u64 count, u64* out) {
    mc_summary_kernel<0>(k1, k2, start, count, out);
}
extern "C" __global__ void morris_summary3w(u32 k1, u32 k2, u64 start, u64 count, u64* out) {
    mc_summary_kernel<1>(k1, k2, start, count, out);
}
// The same, at most 64 registers a thread (2 blocks of 512 threads per SM).
extern "C" __global__ void __launch_bounds__(512, 2) morris_summary3w_lb(u32 k1, u32 k2, u64 start, u64 count,
                                                                         u64* out) {
    mc_summary_kernel<1>(k1, k2, start, count, out);
}
extern "C" __global__ void __launch_bounds__(512, 2) morris_summary3l_lb(u32 k1, u32 k2, u64 start, u64 count,
                                                                         u64* out) {
    mc_summary_kernel<0>(k1, k2, start, count, out);
}
// At most 80 registers a thread (3 blocks of 256 threads per SM).
extern "C" __global__ void __launch_bounds__(256, 3) morris_summary3w_r80(u32 k1, u32 k2, u64 start, u64 count,
                                                                          u64* out) {
    mc_summary_kernel<1>(k1, k2, start, count, out);
}
// At most 48 registers a thread (5 blocks of 256 threads per SM).
extern "C" __global__ void __launch_bounds__(256, 5) morris_summary3w_r48(u32 k1, u32 k2, u64 start, u64 count,
                                                                          u64* out) {
    mc_summary_kernel<1>(k1, k2, start, count, out);
}
// Capture walks batched across positions (MODE 2), at most 64 registers.
extern "C" __global__ void __launch_bounds__(512, 2) morris_summary3b_lb(u32 k1, u32 k2, u64 start, u64 count,
                                                                         u64* out) {
    mc_summary_kernel<2>(k1, k2, start, count, out);
}
// The same, at most 80 registers (3 blocks of 256 threads per SM).
extern "C" __global__ void __launch_bounds__(256, 3) morris_summary3b_r80(u32 k1, u32 k2, u64 start, u64 count,
                                                                          u64* out) {
    mc_summary_kernel<2>(k1, k2, start, count, out);
}
