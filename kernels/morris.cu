// Nine Men's Morris on the GPU: every Morris kernel, in one module. CPU twins
// and the documentation of cell order, rules, checksums and ranking live in
// src/game/morris/ (rank24.rs: the 24-cell hash; expand.rs: expansion and
// summary; retro.rs: the partition solve; twin.rs: the drivers). Host side:
// src/game/morris/cuda.rs. Grid-stride loops throughout.
//
// Entry points:
//   tb_rank_check          unrank + rank again (the hash's twin check)
//   morris_expand3w        per-position expansion (successor count, checksum)
//   morris_summary3b_lb    expansion summary of a rank range (throughput)
//   class_rank_check       class unrank, a symmetry, rank again (the class
//                          index's twin check)
//   retro_first_scan, retro_candidates, retro_compact, retro_merge_marks,
//   retro_pass_candidates  the candidate-driven partition solve
//   place_solve, place_expand
//                          phase I: a placement layer's values and forward
//                          search where its reached bits are set
//   morris_stream_expand   the streamed path: a chunk of any partition
//                          expanded into successor requests
// kernels/PERF.md records how the expansion and summary kernels were chosen
// (and the variants measured and removed).
#include "common.cuh"

// ===========================================================================
// The 24-cell multinomial hash (Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions", Algorithms 1 and 2). CPU twin:
// src/game/morris/rank24.rs; read its documentation for the order and the
// formulation.
// ===========================================================================
#define TB_CELLS 24
#define TB_BIN_COLS 26
#define TB_BIN_LEN (25 * TB_BIN_COLS)

// TB_BIN[x * 26 + y + 1] = C(x, y) for x in 0..=24, y in -1..=24 (0 outside
// 0 <= y <= x), filled from game::morris::rank24::BIN when the module is loaded.
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

// Rank (Edelkamp, Sulewski and Yücel, "GPU Exploration of Two-Player Games with Perfect Hash Functions", Algorithm 1) of the board with colour-1 cells c1, colour-2
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

// Board tables, filled at load from game::morris::expand (ADJACENT, MILLS,
// MILLS_AT) and game::morris::retro (SYM_NIBBLES).
__constant__ u32 MORRIS_ADJ[TB_CELLS];
__constant__ u32 MORRIS_MILLS[16];
__constant__ u32 MORRIS_MILLS_AT[2 * TB_CELLS];
// 15 non-identity symmetries x 6 nibbles x 16 values.
__constant__ u32 MORRIS_SYM[15 * 6 * 16];

// Rank/unrank check: unranks each rank, records the board and its
// colour-swapped rank, and ranks the board again. CPU twin:
// game::morris::twin::rank_check.
extern "C" __global__ void tb_rank_check(u32 k1, u32 k2, const u64* ranks, u64 n, u32* c1s, u32* c2s,
                                         u64* swapped, u64* reranked) {
    __shared__ u32 sbin[TB_BIN_LEN];
    tb_load_bin(sbin);
    __syncthreads();
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        u32 c1, c2;
        swapped[i] = tb_unrank2(sbin, ranks[i], k1, k2, &c1, &c2);
        c1s[i] = c1;
        c2s[i] = c2;
        reranked[i] = tb_rank2(sbin, c1, c2, k1, k2);
    }
}

// ===========================================================================
// Expansion: every successor of a position in the moving and flying phases,
// as a count and a checksum of the successors' ranks (game::morris::expand).
// ===========================================================================

extern __shared__ __align__(16) u64 morris_dyn[];

// One multiply and one xor-shift (game::morris::expand::successor_hash): a
// bijection of the tagged rank, cheap enough to run on every board edge.
__device__ __forceinline__ u64 morris_hash_tagged(u64 x) {
    u64 h = x * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

// game::morris::expand::position_digest, (sum + n * MORRIS_COUNT_WEIGHT) *
// morris_rank_weight(rank): linear in (sum, n) for a given rank, so capture
// walks batched across positions add their share by the owner's weight.
#define MORRIS_COUNT_WEIGHT 0xD6E8FEB86659FD93ull
__device__ __forceinline__ u64 morris_rank_weight(u64 rank) { return tb_mix64(rank) | 1ull; }

__device__ __forceinline__ u64 morris_successor_hash(u32 k1, u32 k2, u64 rank) {
    return morris_hash_tagged(rank | ((u64)(k1 * 32 + k2) << 40));
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

// ===========================================================================
// v3: slide re-ranking by differences of per-cell prefix terms, one unrolled
// walk over the board with the move generation folded in (CPU twin:
// game::morris::expand::Prefix). The walk, the edges and the mill tests are
// compile-time per cell, so every lane of a warp runs the same instructions;
// mill-closing moves are queued and their capture walks run afterwards: spread
// over the warp for the position's own moves (MODE 1, morris_expand3w), or
// batched 32 at a time across positions (MODE 2, morris_summary3b_lb).
//
// Dynamic shared memory: the term table (mc_smem_table_bytes) and one queue
// per warp (mc_smem_queue_bytes); the host computes the same in
// game::morris::cuda::morris3_smem.
// ===========================================================================

// The 16 mill lines, three cells each (game::morris::expand::MILL_LINES; a test in
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
// or the counts are no board's (game::morris::expand::pterm).
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


// The walk over moves by piece and destination: the next move a -> b (false
// when none is left). A sliding piece reaches its empty neighbours, a flying
// one every empty cell.
__device__ __forceinline__ bool mc_next_move(const McTab& t, u32 empty, bool flying, u32& pieces, u32& dests,
                                             u32& a, u32& b) {
    while (!dests && pieces) {
        a = __ffs(pieces) - 1;
        pieces &= pieces - 1;
        dests = flying ? empty : (t.adj[a] & empty);
    }
    if (!dests) return false;
    b = __ffs(dests) - 1;
    dests &= dests - 1;
    return true;
}

// Whether the pieces moved (one now on b) fill a mill through b.
__device__ __forceinline__ bool mc_closes_at(const McTab& t, u32 moved, u32 b) {
    u32 m0 = t.mills_at[2 * b], m1 = t.mills_at[2 * b + 1];
    return ((moved & m0) == m0) || ((moved & m1) == m1);
}

// Expansion by loops over pieces and destinations (the v2 algorithm) on this
// table; v3 uses it for flying (k1 == 3), where a piece may move between any
// two cells. Moves without a mill first, then the mill-closing ones with
// their captures.
__device__ __forceinline__ void mc_expand_generic(const McTab& t, u32 mover, u32 opp, u64 swapped, u32 k1, u32 k2,
                                                  u32& n, u64& sum) {
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool flying = k1 == 3;
    u32 pieces = mover, dests = 0, a = 0, b = 0;
    bool mills = false;
    while (mc_next_move(t, empty, flying, pieces, dests, a, b)) {
        if (opp && mc_closes_at(t, mover ^ (1u << a) ^ (1u << b), b)) {
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
    while (mc_next_move(t, empty, flying, pieces, dests, a, b)) {
        u32 moved = mover ^ (1u << a) ^ (1u << b);
        if (!mc_closes_at(t, moved, b)) continue;
        u64 r_slid = swapped + mc_slide_delta(t, opp, mover, k2, k1, a, b);
        mc_captures(t, opp, moved, k2, k1, r_slid, removable, n, sum);
    }
}

// One warp's queue of mill-closing moves: slot i holds the rank of the slid
// board and (moved mover bitboard | owner lane << 24); acc_* collect each
// lane's capture successors when the warp shares the walks (MODE 1).
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
    u32 mover, opp, empty, k1, k2, off, n, lane;
    u32 ovf;  // edges (mc_edge_index) whose mill-closing move found the queue full
    bool act;    // MODE 2: a real position (not a stand-in past the end)
    u64 weight;  // MODE 2: morris_rank_weight of the position
    u64 swapped, tag, pp, pm, sum;
    // This cell's up and down (game::morris::expand::Prefix); key: an earlier
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
// MODE 1): successor count n and checksum sum (game::morris::expand::expand).
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
    if constexpr (MODE == 1) {
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
        // Rare: mill-closing moves that found no queue slot, re-ranked by
        // the loop algorithm. Edge e's cells, in mc_edge_index order, from the adjacency.
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

// Per-position results (morris_expand3w). Every lane of a warp runs the same
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

// Summary of a rank range (morris_summary3b_lb), MODE 2.
__device__ __forceinline__ void mc_summary_kernel(u32 k1, u32 k2, u64 start, u64 count, u64* out) {
    McQueue q;
    McTab t = mc_load<2>(k1, k2, q);
    u32 lane = threadIdx.x & 31u;
    u64 succ = 0, digest = 0;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 wb = (u64)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); wb < count; wb += stride) {
        u64 i = wb + lane;
        bool act = i < count;
        u64 r = start + (act ? i : wb);
        u32 n;
        u64 sum;
        u64 weight = morris_rank_weight(r);
        mc_expand_one<2>(t, q, k1, k2, r, n, sum, act, weight);
        if (act) {
            succ += n;
            digest += (sum + (u64)n * MORRIS_COUNT_WEIGHT) * weight;
        }
        mc_rounds(t, q, k1, k2, false, succ, digest);
    }
    mc_rounds(t, q, k1, k2, true, succ, digest);
    succ = tb_warp_sum(succ);
    digest = tb_warp_sum(digest);
    if (lane == 0) {
        atomicAdd(&out[0], succ);
        atomicAdd(&out[1], digest);
    }
}

// Per-position expansion: counts[i], sums[i] of rank start + i (ranks ==
// 0) or ranks[i], for i < count. At most 64 registers (4 blocks of 256).
extern "C" __global__ void __launch_bounds__(256, 4) morris_expand3w(u32 k1, u32 k2, u64 start, u64 count,
                                                                     const u64* ranks, u16* counts, u64* sums) {
    mc_expand_kernel<1>(k1, k2, start, count, ranks, counts, sums);
}
// Summary of ranks start..start+count: out[0] += successors, out[1] += the
// digest (game::morris::expand::Summary; sums commute, so the result does not
// depend on the schedule). Capture walks batched across positions (MODE 2),
// at most 64 registers (2 blocks of 512): the measured winner (PERF.md).
extern "C" __global__ void __launch_bounds__(512, 2) morris_summary3b_lb(u32 k1, u32 k2, u64 start, u64 count,
                                                                         u64* out) {
    mc_summary_kernel(k1, k2, start, count, out);
}

// ===========================================================================
// Whole-partition retrograde analysis (kernels retro_*). CPU twin and
// documentation of every rule: game::morris::retro::CpuTwin, whose bytes equal
// those of solve::solve_partition (src/solve/retro.rs).
//
// Passes are candidate-driven (the twin's module documentation): pass d
// checks only the pending quiet predecessors of what was decided at distance
// d - 1 and the pending positions whose capture event is d - 1. Per pass:
// retro_candidates marks them in a bitmap, retro_compact turns the bitmap
// into a list (and clears it), retro_pass_candidates checks the list and
// appends what it decides (the next pass's frontier).
//
// Launch with dynamic shared memory tb_terms_len(L1) * 8 bytes, L1 =
// max(k1, k2) + 1 (retro_compact needs none). Grid-stride loops walk whole warps together (warp-uniform
// trip counts) so that ballots can build bitmaps and append to lists.
// ===========================================================================

#define FAIL_ILLEGAL_DEP 1u
#define FAIL_OVERFLOW 2u
#define MAX_DISTANCE 253u

// Boards with k1 pieces of one colour and k2 of the other: C(24, s) C(s, k1).
__device__ __forceinline__ u64 tb_size(u32 k1, u32 k2) {
    u32 s = k1 + k2;
    return (u64)TB_BIN[TB_CELLS * TB_BIN_COLS + s + 1] * (u64)TB_BIN[s * TB_BIN_COLS + k1 + 1];
}

// ===========================================================================
// The symmetry-class index of S(a, b) (CPU twin and documentation:
// src/game/morris/classes.rs). Its tables come as one blob of u64 words per
// half, HalfIndex::device_blob.
// ===========================================================================
#define CLASS_NO_BITMAP 0xffffffffu

struct ClassTab {
    const u32* lookup;     // by colex rank of a mover board: representative << 4 | symmetry
    const u32* reps;       // representatives' boards
    const u32* stab;       // their stabilisers (bit g: symmetry g fixes it)
    const u64* offsets;    // first index of each representative; then the size
    const u32* bitmap_at;  // first bitmap word, or CLASS_NO_BITMAP
    const u64* words;      // class bitmaps over colex ranks of opponent boards
    const u32* prefix;     // set bits before each word in its bitmap
    u32 a, b, nreps;
};

__device__ __forceinline__ ClassTab class_tab(const u64* blob) {
    ClassTab t;
    t.a = (u32)blob[0];
    t.b = (u32)blob[1];
    t.nreps = (u32)blob[2];
    t.lookup = (const u32*)(blob + blob[3]);
    t.reps = (const u32*)(blob + blob[4]);
    t.stab = (const u32*)(blob + blob[5]);
    t.offsets = blob + blob[6];
    t.bitmap_at = (const u32*)(blob + blob[7]);
    t.words = blob + blob[8];
    t.prefix = (const u32*)(blob + blob[9]);
    return t;
}

// C(x, y), from a shared copy of TB_BIN.
__device__ __forceinline__ u32 class_bin(const u32* bin, u32 x, u32 y) { return bin[x * TB_BIN_COLS + y + 1]; }

// Image of board x under symmetry g (0 = identity).
__device__ __forceinline__ u32 class_sym(const u32* sym, u32 g, u32 x) {
    if (g == 0) return x;
    const u32* t = sym + (g - 1) * 96;
    return t[x & 15] | t[16 + ((x >> 4) & 15)] | t[32 + ((x >> 8) & 15)] | t[48 + ((x >> 12) & 15)] |
           t[64 + ((x >> 16) & 15)] | t[80 + ((x >> 20) & 15)];
}

// Colex rank of a set of points: sum of C(p_k, k) over p_1 < p_2 < ...
__device__ __forceinline__ u32 class_colex(const u32* bin, u32 set) {
    u32 r = 0;
    for (u32 k = 1; set; set &= set - 1, ++k) r += class_bin(bin, __ffs(set) - 1, k);
    return r;
}

// Index of the class of (m, o) in S(t.a, t.b) (HalfIndex::rank).
__device__ __forceinline__ u64 class_rank(const ClassTab& t, const u32* bin, const u32* sym, u32 m, u32 o) {
    u32 e = t.lookup[class_colex(bin, m)];
    u32 j = e >> 4;
    o = class_sym(sym, e & 15u, o);
    u32 best = o;
    for (u32 st = t.stab[j] & ~1u; st; st &= st - 1) best = min(best, class_sym(sym, __ffs(st) - 1, o));
    u32 free = ~t.reps[j] & ((1u << TB_CELLS) - 1u);
    u32 local = 0, k = 1;
    for (u32 x = best; x; x &= x - 1, ++k) local += class_bin(bin, __popc(free & ((1u << (__ffs(x) - 1)) - 1u)), k);
    u32 at = t.bitmap_at[j];
    if (at != CLASS_NO_BITMAP) {
        u32 w = at + (local >> 6);
        local = t.prefix[w] + __popcll(t.words[w] & ((1ull << (local & 63u)) - 1ull));
    }
    return t.offsets[j] + local;
}

// The representative (m, o) of index r < size (HalfIndex::unrank).
__device__ __forceinline__ void class_unrank(const ClassTab& t, const u32* bin, u64 r, u32& m, u32& o) {
    u32 lo = 0, hi = t.nreps;  // offsets[lo] <= r < offsets[hi]
    while (hi - lo > 1) {
        u32 mid = (lo + hi) >> 1;
        if (t.offsets[mid] <= r) lo = mid;
        else hi = mid;
    }
    u32 local = (u32)(r - t.offsets[lo]);
    u32 n = TB_CELLS - t.a;
    u32 at = t.bitmap_at[lo];
    if (at != CLASS_NO_BITMAP) {
        u32 w0 = at, w1 = at + ((class_bin(bin, n, t.b) + 63u) >> 6);  // prefix[w0] <= local
        while (w1 - w0 > 1) {
            u32 mid = (w0 + w1) >> 1;
            if (t.prefix[mid] <= local) w0 = mid;
            else w1 = mid;
        }
        u64 w = t.words[w0];
        for (u32 k = local - t.prefix[w0]; k; --k) w &= w - 1;
        local = (w0 - at) * 64u + (u32)(__ffsll((long long)w) - 1);
    }
    u32 c = 0, p = n;
    for (u32 i = t.b; i >= 1; --i) {
        --p;
        while (class_bin(bin, p, i) > local) --p;
        local -= class_bin(bin, p, i);
        c |= 1u << p;
    }
    m = t.reps[lo];
    o = 0;
    u32 q = 0;
    for (u32 free = ~m & ((1u << TB_CELLS) - 1u); free; free &= free - 1, ++q)
        if ((c >> q) & 1u) o |= 1u << (__ffs(free) - 1);
}

// Class index check: unranks ranks[i] of the half in blob, maps the board by
// symmetry syms[i] and ranks it again. CPU twin: game::morris::check.
extern "C" __global__ void class_rank_check(const u64* blob, const u64* ranks, const u32* syms, u64 n, u32* movers,
                                            u32* opps, u64* reranked) {
    __shared__ u32 sbin[TB_BIN_LEN];
    __shared__ u32 sym[15 * 6 * 16];
    tb_load_bin(sbin);
    for (u32 i = threadIdx.x; i < 15 * 6 * 16; i += blockDim.x) sym[i] = MORRIS_SYM[i];
    __syncthreads();
    ClassTab t = class_tab(blob);
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        u32 m, o;
        class_unrank(t, sbin, ranks[i], m, o);
        movers[i] = m;
        opps[i] = o;
        reranked[i] = class_rank(t, sbin, sym, class_sym(sym, syms[i], m), class_sym(sym, syms[i], o));
    }
}

// One half of the partition (game::morris::retro::Half).
// With symmetry, tab, qtab and ctab name the class tables (RCtx::tabs) of
// the half, its quiet and its capture targets: 0 (k1, k2), 1 (k2, k1),
// 2 (k2 - 1, k1), 3 (k1 - 1, k2).
struct RHalf {
    u64 base;
    u32 a, b;
    u32 qa, qb;
    u64 qoff;
    u32 ca, cb;
    u64 coff;
    u32 tab, qtab, ctab;
    const unsigned char* dep;
};

struct RCtx {
    const u64* terms;
    u32 L1;
    const u32* adj;
    const u32* mills;
    const u32* mills_at;
    const u32* sym;
    const u32* bin;
    const ClassTab* tabs;
    u32 symmetry;
    RHalf h[2];
    u32 halves;
};

extern __shared__ __align__(16) u64 retro_dyn[];

// tab0..tab3: the class tables (RHalf) when symmetry is on, else unused.
__device__ __forceinline__ void retro_load(RCtx& c, u32 k1, u32 k2, u32 symmetry, const u64* tab0, const u64* tab1,
                                           const u64* tab2, const u64* tab3) {
    __shared__ u32 adj[TB_CELLS], mills[16], mills_at[2 * TB_CELLS], sym[15 * 6 * 16], sbin[TB_BIN_LEN];
    __shared__ ClassTab tabs[4];
    if (symmetry && threadIdx.x == 0) {
        tabs[0] = class_tab(tab0);
        tabs[1] = class_tab(tab1);
        tabs[2] = class_tab(tab2);
        tabs[3] = class_tab(tab3);
    }
    tb_load_bin(sbin);
    for (u32 i = threadIdx.x; i < TB_CELLS; i += blockDim.x) {
        adj[i] = MORRIS_ADJ[i];
        mills_at[2 * i] = MORRIS_MILLS_AT[2 * i];
        mills_at[2 * i + 1] = MORRIS_MILLS_AT[2 * i + 1];
    }
    for (u32 i = threadIdx.x; i < 16; i += blockDim.x) mills[i] = MORRIS_MILLS[i];
    for (u32 i = threadIdx.x; i < 15 * 6 * 16; i += blockDim.x) sym[i] = MORRIS_SYM[i];
    c.L1 = max(k1, k2) + 1;
    tb_terms_build(retro_dyn, c.L1);
    __syncthreads();
    c.terms = retro_dyn;
    c.adj = adj;
    c.mills = mills;
    c.mills_at = mills_at;
    c.sym = sym;
    c.bin = sbin;
    c.tabs = tabs;
    c.symmetry = symmetry;
}

// The halves and targets, as game::morris::retro::MorrisSolveSpec::halves.
__device__ __forceinline__ void retro_halves(RCtx& c, u32 k1, u32 k2, const unsigned char* dep0,
                                             const unsigned char* dep1) {
    u64 m = c.symmetry ? c.tabs[0].offsets[c.tabs[0].nreps] : tb_size(k1, k2);
    RHalf& A = c.h[0];
    A.base = 0;
    A.a = k1;
    A.b = k2;
    A.qa = k2;
    A.qb = k1;
    A.qoff = (k1 == k2) ? 0 : m;
    A.ca = k2 - 1;
    A.cb = k1;
    A.coff = (k2 == 3) ? 0 : (c.symmetry ? c.tabs[2].offsets[c.tabs[2].nreps] : tb_size(k1, k2 - 1));
    A.tab = 0;
    A.qtab = (k1 == k2) ? 0 : 1;
    A.ctab = 2;
    A.dep = dep0;
    RHalf& B = c.h[1];
    B.base = m;
    B.a = k2;
    B.b = k1;
    B.qa = k1;
    B.qb = k2;
    B.qoff = 0;
    B.ca = k1 - 1;
    B.cb = k2;
    B.coff = 0;
    B.tab = 1;
    B.qtab = 0;
    B.ctab = 3;
    B.dep = dep1;
    c.halves = (k1 == k2) ? 1 : 2;
}

// Rank of the board (mover m with a pieces, opponent o with b) in S(a, b).
__device__ __forceinline__ u64 retro_rank(const RCtx& c, u32 m, u32 o, u32 a, u32 b) {
    u32 l1 = a, l2 = b;
    u64 r = 0;
    for (u32 i = 0; i < TB_CELLS && (l1 | l2); ++i) {
        u32 is1 = (m >> i) & 1u, is2 = (o >> i) & 1u;
        r += tb_tterm(c.terms, c.L1, TB_CELLS - 1 - i, l1, l2, is1, is2);
        l1 -= is1;
        l2 -= is2;
    }
    return r;
}

// Index of board (m, o) in S(a, b) (class table tab with symmetry), plus off.
__device__ __forceinline__ u64 retro_succ_rank(const RCtx& c, u32 tab, u32 m, u32 o, u32 a, u32 b, u64 off) {
    return off + (c.symmetry ? class_rank(c.tabs[tab], c.bin, c.sym, m, o) : retro_rank(c, m, o, a, b));
}

// The board at index r, and its half. The half is copied by value (constant
// indices keep RCtx in registers).
__device__ __forceinline__ void retro_unrank(const RCtx& c, u64 r, RHalf& h, u32& mover, u32& opp) {
    if (c.halves > 1 && r >= c.h[1].base) h = c.h[1];
    else h = c.h[0];
    if (c.symmetry) class_unrank(c.tabs[h.tab], c.bin, r - h.base, mover, opp);
    else tb_unrank2_t(c.terms, c.L1, r - h.base, h.a, h.b, &mover, &opp);
}

__device__ __forceinline__ u32 retro_removable(const u32* mills, u32 opp) {
    u32 in_mill = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        u32 m = mills[i];
        in_mill |= ((opp & m) == m) ? m : 0u;
    }
    return (in_mill == opp) ? opp : (opp & ~in_mill);
}

// Walks every successor of (mover, opp); f(capture, mover', opponent').
template <typename F>
__device__ __forceinline__ void retro_successors(const RCtx& c, u32 mover, u32 opp, F f) {
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool flying = __popc(mover) == 3;
    u32 removable = retro_removable(c.mills, opp);
    u32 pieces = mover;
    while (pieces) {
        u32 from = __ffs(pieces) - 1;
        pieces &= pieces - 1;
        u32 targets = flying ? empty : (c.adj[from] & empty);
        while (targets) {
            u32 to = __ffs(targets) - 1;
            targets &= targets - 1;
            u32 moved = mover ^ (1u << from) ^ (1u << to);
            u32 m1 = c.mills_at[2 * to], m2 = c.mills_at[2 * to + 1];
            if (((moved & m1) == m1) || ((moved & m2) == m2)) {
                u32 rem = removable;
                while (rem) {
                    u32 x = __ffs(rem) - 1;
                    rem &= rem - 1;
                    f(true, opp & ~(1u << x), moved);
                }
            } else {
                f(false, opp, moved);
            }
        }
    }
}

#define NO_EVENT 0xffffffffu

// First scan of r: value byte; *internal, *seen, *fail, *event as the twin's
// FirstScan (NO_EVENT for none).
__device__ __forceinline__ unsigned char retro_first(const RCtx& c, u64 r, bool* internal, u32* seen, u32* fail,
                                                     u32* event) {
    *internal = false;
    *seen = 0;
    *fail = 0;
    *event = NO_EVENT;
    RHalf h;
    u32 mover, opp;
    retro_unrank(c, r, h, mover, opp);
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool mobile = h.a == 3;
    for (u32 p = mover; p && !mobile; p &= p - 1) mobile = (c.adj[__ffs(p) - 1] & empty) != 0;
    if (!mobile) {
        *event = 0;
        return 2;
    }
    u32 best_win = 0xffffffffu, longest = 0, s = 0, fl = 0;
    bool all_lost = true, in = false, captures = false;
    retro_successors(c, mover, opp, [&](bool capture, u32 m, u32 o) {
        if (!capture) {
            in = true;
            return;
        }
        captures = true;
        unsigned char v = h.dep[retro_succ_rank(c, h.ctab, m, o, h.ca, h.cb, h.coff)];
        if (v == 0) {
            fl |= FAIL_ILLEGAL_DEP;
            return;
        }
        if (v >= 2) {
            u32 e = v - 2;
            s = max(s, e);
            if ((e & 1u) == 0) best_win = min(best_win, e);
            else longest = max(longest, e);
        } else {
            all_lost = false;
        }
    });
    *seen = s;
    if (fl) {
        *fail = fl;
        return 0;
    }
    if (in) {
        *internal = true;
        if (best_win != 0xffffffffu) *event = best_win;
        else if (all_lost && captures) *event = longest;
        return 1;
    }
    u32 d;
    if (best_win != 0xffffffffu) d = best_win + 1;
    else if (all_lost) d = longest + 1;
    else return 1;
    if (d > MAX_DISTANCE) {
        *fail = FAIL_OVERFLOW;
        return 0;
    }
    *seen = max(s, d);
    *event = d;
    return (unsigned char)(d + 2);
}

// Pass d for pending r: the value byte, or 0 if still undecided.
__device__ __forceinline__ unsigned char retro_pass(const RCtx& c, const unsigned char* values, u64 r, u32 d) {
    RHalf h;
    u32 mover, opp;
    retro_unrank(c, r, h, mover, opp);
    bool hit = false, blocked = false;
    u32 longest = 0;
    bool odd = (d & 1u) != 0;
    retro_successors(c, mover, opp, [&](bool capture, u32 m, u32 o) {
        // Settled early: later successors cannot change the decision.
        if (odd ? hit : blocked) return;
        unsigned char v = capture ? h.dep[retro_succ_rank(c, h.ctab, m, o, h.ca, h.cb, h.coff)]
                                  : values[retro_succ_rank(c, h.qtab, m, o, h.qa, h.qb, h.qoff)];
        u32 e = (u32)v - 2u;
        if (v >= 2 && e < d) {
            if (e == d - 1 && odd) hit = true;
            if (e & 1u) longest = max(longest, e);
            else blocked = true;
        } else {
            blocked = true;
        }
    });
    if (odd) return hit ? (unsigned char)(d + 2) : 0;
    return blocked ? 0 : (unsigned char)(longest + 3);
}

// Appends r (where want) to list at *count, one atomic per warp. All 32 lanes call it.
// Entries at or past cap are counted but not written (the host then retries
// with a larger list).
__device__ __forceinline__ void retro_append(bool want, u64 r, u64* list, u64 cap, unsigned long long* count) {
    u64 at = tb_warp_slot(want, count);
    if (want && at < cap) list[at] = r;
}

// Event keys (the twin's EVENT_*): distance << 41 | capture << 40 | rank.
#define EVENT_SHIFT 41
#define EVENT_CAPTURE (1ull << 40)

// Scans the indices lo..hi (the whole partition, or one team member's slice:
// values outside are left alone, events name only these indices).
// stats[0]: pending count, stats[1]: max seen, stats[2]: fail bits, stats[3]:
// events (those at or past ev_cap counted, not written), stats[4 + e]:
// events at distance e.
extern "C" __global__ void retro_first_scan(u32 k1, u32 k2, u32 symmetry, const u64* tab0, const u64* tab1,
                                            const u64* tab2, const u64* tab3, u64 lo, u64 hi,
                                            const unsigned char* dep0, const unsigned char* dep1,
                                            unsigned char* values, u64* events, u64 ev_cap,
                                            unsigned long long* stats) {
    __shared__ u32 hist[256];
    for (u32 i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    RCtx c;
    retro_load(c, k1, k2, symmetry, tab0, tab1, tab2, tab3);
    retro_halves(c, k1, k2, dep0, dep1);
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    u32 seen_max = 0, fails = 0;
    unsigned long long pending = 0;
    u64 n = hi - lo;
    for (u64 base = tid - lane; base < n; base += stride) {
        u64 r = lo + base + lane;
        bool internal = false;
        u32 event = NO_EVENT;
        if (r < hi) {
            u32 seen, fail;
            values[r] = retro_first(c, r, &internal, &seen, &fail, &event);
            seen_max = max(seen_max, seen);
            fails |= fail;
        }
        pending += internal;
        bool want = event != NO_EVENT;
        if (want) atomicAdd(&hist[event & 255u], 1u);
        u64 key = ((u64)event << EVENT_SHIFT) | (internal ? EVENT_CAPTURE : 0ull) | r;
        retro_append(want, key, events, ev_cap, &stats[3]);
    }
    seen_max = __reduce_max_sync(0xffffffffu, seen_max);
    fails = __reduce_or_sync(0xffffffffu, fails);
    for (int o = 16; o > 0; o >>= 1) pending += __shfl_down_sync(0xffffffffu, pending, o);
    if (lane == 0) {
        if (pending) atomicAdd(&stats[0], pending);
        if (seen_max) atomicMax(&stats[1], (unsigned long long)seen_max);
        if (fails) atomicOr(&stats[2], (unsigned long long)fails);
    }
    __syncthreads();
    for (u32 i = threadIdx.x; i < 256; i += blockDim.x)
        if (hist[i]) atomicAdd(&stats[4 + i], (unsigned long long)hist[i]);
}

// Marks p as a candidate if it is pending.
__device__ __forceinline__ void retro_claim(const unsigned char* values, u32* marks, u64 p) {
    if (values[p] != 1) return;
    u32 bit = 1u << (p & 31u);
    if ((marks[p >> 5] & bit) == 0) atomicOr(&marks[p >> 5], bit);
}

// Marks the pending canonical quiet predecessors of s (twin:
// CpuTwin::predecessor_ranks, for_predecessors).
__device__ __forceinline__ void retro_predecessors(const RCtx& c, const unsigned char* values, u32* marks, u64 s) {
    RHalf h, y;
    u32 mover, opp;
    retro_unrank(c, s, h, mover, opp);
    if (c.halves > 1 && c.h[0].a != h.b) y = c.h[1];
    else y = c.h[0];
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    bool flying = __popc(opp) == 3;
    for (u32 pieces = opp; pieces; pieces &= pieces - 1) {
        u32 to = __ffs(pieces) - 1;
        u32 m1 = c.mills_at[2 * to], m2 = c.mills_at[2 * to + 1];
        if (((opp & m1) == m1) || ((opp & m2) == m2)) continue;
        u32 sources = flying ? empty : (c.adj[to] & empty);
        while (sources) {
            u32 from = __ffs(sources) - 1;
            sources &= sources - 1;
            retro_claim(values, marks,
                        retro_succ_rank(c, y.tab, opp ^ (1u << to) ^ (1u << from), mover, y.a, y.b, y.base));
        }
    }
}

// Pass d's candidates into marks: predecessors of frontier[0..*nf] (decided
// in pass d - 1) and of the scan's decided events at distance d - 1, and the
// capture events at d - 1, of events[0..ne] (ne = 0 when there are none).
// A team's member (game::morris::kernels, module documentation) also writes
// what the others decided in pass d - 1, values[set[i]] = set_byte for i <
// n_set (0 alone). Claims may still read such a position as pending: the
// mark then travels to its owner, whose own copy is exact and whose claim
// of the ranks it receives (capture events at d - 1, through this kernel
// again) drops it.
extern "C" __global__ void retro_candidates(u32 k1, u32 k2, u32 symmetry, const u64* tab0, const u64* tab1,
                                            const u64* tab2, const u64* tab3, u32 d, unsigned char* values,
                                            const u64* frontier, const unsigned long long* nf_ptr,
                                            const u64* events, u64 ne, u32* marks, const u64* set, u64 n_set,
                                            unsigned char set_byte) {
    RCtx c;
    retro_load(c, k1, k2, symmetry, tab0, tab1, tab2, tab3);
    retro_halves(c, k1, k2, nullptr, nullptr);
    u64 nf = *nf_ptr;
    u64 n = nf + ne;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n_set; i += stride) values[set[i]] = set_byte;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (i < nf) {
            retro_predecessors(c, values, marks, frontier[i]);
            continue;
        }
        u64 k = events[i - nf];
        if ((u32)(k >> EVENT_SHIFT) != d - 1) continue;
        u64 r = k & (EVENT_CAPTURE - 1);
        if (k & EVENT_CAPTURE) retro_claim(values, marks, r);
        else retro_predecessors(c, values, marks, r);
    }
}

// Members of a team of GPUs in one process own the passes' candidates by
// blocks of block_words bitmap words dealt round-robin (a pass's work
// clusters along the index: contiguous slices left one GPU idle half the
// time). Whether member `rank` of `members` owns word w; a team of one, or
// a member owning a contiguous range (members = 1), owns every word.
__device__ __forceinline__ bool retro_owns(u64 w, u64 block_words, u32 members, u32 rank) {
    return members <= 1 || (u32)((w / block_words) % members) == rank;
}

// Lists the set bits of marks[w_lo..w_hi] (ranks, at *count; entries at or
// past cap counted, not written) and clears them: the whole bitmap, or a
// part of it (a team member's own slice, or the marks it set in another
// member's slice, sent to that member), of the words retro_owns gives this
// member. Whole warps walk together.
extern "C" __global__ void retro_compact(u32* marks, u64 w_lo, u64 w_hi, u64* list, u64 cap,
                                         unsigned long long* count, u64 block_words, u32 members, u32 rank) {
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    u64 words = w_hi - w_lo;
    for (u64 base = tid - lane; base < words; base += stride) {
        u64 i = w_lo + base + lane;
        u32 w = 0;
        if (base + lane < words && retro_owns(i, block_words, members, rank)) {
            w = marks[i];
            if (w) marks[i] = 0;
        }
        u32 n = __popc(w), incl = n;
        for (u32 o = 1; o < 32; o <<= 1) {
            u32 t = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= o) incl += t;
        }
        u32 total = __shfl_sync(0xffffffffu, incl, 31);
        if (total == 0) continue;
        unsigned long long at = 0;
        if (lane == 31) at = atomicAdd(count, (unsigned long long)total);
        at = __shfl_sync(0xffffffffu, at, 31) + (incl - n);
        for (; w; w &= w - 1, ++at)
            if (at < cap) list[at] = i * 32 + (__ffs(w) - 1);
    }
}

// After every member copied its whole bitmap into the others' theirs
// (n_theirs bitmaps of `words` words each, one per other member): words
// this member owns get the others' marks where the position is still
// pending here (another's copy may lag a pass behind, retro_candidates);
// words it does not own are cleared (their marks went to their owners).
// The peer-copy twin of claiming received ranks as capture events. CPU
// twin: retro::merge_marks.
extern "C" __global__ void retro_merge_marks(const unsigned char* values, u32* marks, const u32* theirs,
                                             u32 n_theirs, u64 words, u64 block_words, u32 members, u32 rank) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 w = (u64)blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride) {
        if (!retro_owns(w, block_words, members, rank)) {
            if (marks[w]) marks[w] = 0;
            continue;
        }
        u32 t = 0;
        for (u32 k = 0; k < n_theirs; ++k) t |= theirs[(u64)k * words + w];
        t &= ~marks[w];
        u32 keep = 0;
        for (u32 b = t; b; b &= b - 1) {
            u32 bit = __ffs(b) - 1;
            if (values[w * 32 + bit] == 1) keep |= 1u << bit;
        }
        if (keep) marks[w] |= keep;
    }
}

// Pass d over list[0..min(*n, cap)]: decided positions get their value and
// are appended to decided (count at *decided_count, at most cap).
extern "C" __global__ void retro_pass_candidates(u32 k1, u32 k2, u32 symmetry, const u64* tab0, const u64* tab1,
                                                 const u64* tab2, const u64* tab3, u32 d, const unsigned char* dep0,
                                                 const unsigned char* dep1, unsigned char* values, const u64* list,
                                                 const unsigned long long* n_ptr, u64* decided, u64 cap,
                                                 unsigned long long* decided_count) {
    RCtx c;
    retro_load(c, k1, k2, symmetry, tab0, tab1, tab2, tab3);
    retro_halves(c, k1, k2, dep0, dep1);
    u64 n = min((u64)*n_ptr, cap);
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = tid - lane; base < n; base += stride) {
        u64 i = base + lane;
        bool done = false;
        u64 r = 0;
        // Only pending positions (all of them are, unless a team's
        // exchange went wrong: retro_candidates).
        if (i < n) {
            r = list[i];
            if (values[r] == 1) {
                unsigned char v = retro_pass(c, values, r, d);
                if (v) {
                    values[r] = v;
                    done = true;
                }
            }
        }
        retro_append(done, r, decided, cap, decided_count);
    }
}

// ===========================================================================
// Phase I (placing) of the whole game: one layer partition tTT-a-b solved or
// searched where its reached bits are set (CPU twin and documentation:
// src/game/morris/place.rs). Every successor lies in an earlier-solved
// partition, so one visit decides a position. The side to move places a
// piece on an empty point; closing a mill removes one opponent piece that is
// not in a mill (any if all are; nothing if there is none). A quiet placement
// leads to target 0 (the successor at qoff + its rank in S(b, a + 1)), a
// capture to target 1 (coff + its rank in S(b - 1, a + 1)). Lost partitions
// (too few pieces on the board and in hand) never reach a kernel.
//
// The reached bits are walked by whole warps: a warp loads 32 words, counts
// their bits and deals the set bits out to its lanes, 32 at a time, so empty
// words cost a load and partly filled ones keep every lane busy.
// ===========================================================================

#define PLACE_QUIET_ZERO 1u
#define PLACE_CAPTURE_ZERO 2u
#define PLACE_OVERFLOW 4u
#define PLACE_QUIET_MISSING 8u
#define PLACE_CAPTURE_MISSING 16u

struct PCtx {
    const u32* bin;
    const u32* sym;
    const u32* mills;
    const u32* mills_at;
    const ClassTab* tabs;  // symmetry: 0 the partition, 1 the quiet, 2 the capture target
    u32 symmetry;
    u32 a, b;
    u64 toff[2];  // targets' offsets in their partitions
};

// M(n; a, b) = n! / (a! b! (n-a-b)!) boards of a and b pieces on n cells (0
// when they do not fit), from the shared binomials.
__device__ __forceinline__ u64 place_multi(const u32* bin, u32 n, u32 a, u32 b) {
    return (u64)class_bin(bin, n, a + b) * (u64)class_bin(bin, a + b, a);
}

// Seed 000's Algorithm 1 over the occupied cells only (game::morris::rank_boards:
// a run of empty cells telescopes), the rank of (mover, opp) among all boards
// of their counts.
__device__ __forceinline__ u64 place_rank_boards(const u32* bin, u32 mover, u32 opp) {
    u32 a = __popc(mover), b = __popc(opp), occ = mover | opp, p = 0;
    u64 r = 0;
    while (occ) {
        u32 q = __ffs(occ) - 1;
        occ &= occ - 1;
        r += place_multi(bin, TB_CELLS - p, a, b) - place_multi(bin, TB_CELLS - q, a, b);
        u32 is_m = (mover >> q) & 1u;
        if (is_m && b) r += place_multi(bin, TB_CELLS - 1 - q, a, b - 1);
        a -= is_m;
        b -= 1u - is_m;
        p = q + 1;
    }
    return r;
}

// Shared tables and the partition's shape; all threads of the block call it.
__device__ __forceinline__ void place_load(PCtx& c, u32 a, u32 b, u32 symmetry, const u64* tab, u64 qoff,
                                           const u64* qtab, u64 coff, const u64* ctab) {
    __shared__ u32 mills[16], mills_at[2 * TB_CELLS], sym[15 * 6 * 16], sbin[TB_BIN_LEN];
    __shared__ ClassTab tabs[3];
    if (symmetry && threadIdx.x == 0) {
        tabs[0] = class_tab(tab);
        // A target that is not given is never ranked into.
        if (qtab) tabs[1] = class_tab(qtab);
        if (ctab) tabs[2] = class_tab(ctab);
    }
    tb_load_bin(sbin);
    for (u32 i = threadIdx.x; i < 2 * TB_CELLS; i += blockDim.x) mills_at[i] = MORRIS_MILLS_AT[i];
    for (u32 i = threadIdx.x; i < 16; i += blockDim.x) mills[i] = MORRIS_MILLS[i];
    for (u32 i = threadIdx.x; i < 15 * 6 * 16; i += blockDim.x) sym[i] = MORRIS_SYM[i];
    __syncthreads();
    c.bin = sbin;
    c.sym = sym;
    c.mills = mills;
    c.mills_at = mills_at;
    c.tabs = tabs;
    c.symmetry = symmetry;
    c.a = a;
    c.b = b;
    c.toff[0] = qoff;
    c.toff[1] = coff;
}

// The board at index r of the partition.
__device__ __forceinline__ void place_unrank(const PCtx& c, u64 r, u32& m, u32& o) {
    if (c.symmetry) class_unrank(c.tabs[0], c.bin, r, m, o);
    else tb_unrank2(c.bin, r, c.a, c.b, &m, &o);
}

// Index of successor (m, o) of kind k (0 quiet, 1 capture) in its partition.
__device__ __forceinline__ u64 place_succ_rank(const PCtx& c, u32 k, u32 m, u32 o) {
    return c.toff[k] + (c.symmetry ? class_rank(c.tabs[1 + k], c.bin, c.sym, m, o) : place_rank_boards(c.bin, m, o));
}

// Walks every placement of the side to move; f(kind, mover', opponent') with
// kind 1 for a capture (place::for_placements).
template <typename F>
__device__ __forceinline__ void place_successors(const PCtx& c, u32 mover, u32 opp, F f) {
    u32 empty = ~(mover | opp) & ((1u << TB_CELLS) - 1u);
    u32 removable = retro_removable(c.mills, opp);
    while (empty) {
        u32 p = __ffs(empty) - 1;
        empty &= empty - 1;
        u32 moved = mover | (1u << p);
        u32 m1 = c.mills_at[2 * p], m2 = c.mills_at[2 * p + 1];
        if ((((moved & m1) == m1) || ((moved & m2) == m2)) && removable) {
            for (u32 rem = removable; rem; rem &= rem - 1) f(1u, opp & ~(1u << (__ffs(rem) - 1)), moved);
        } else {
            f(0u, opp, moved);
        }
    }
}

// Position of the n-th (from 0) set bit of w, which has more than n: a
// binary search by population counts of halves (six steps).
__device__ __forceinline__ u32 place_nth_bit(u64 w, u32 n) {
    u32 pos = 0;
    for (u32 width = 32; width; width >>= 1) {
        u32 c = __popcll(w & ((1ull << width) - 1ull));
        if (n >= c) {
            n -= c;
            w >>= width;
            pos += width;
        }
    }
    return pos;
}

// Calls f(r) for every set bit r of reached[0..words]; the set bits of 32
// words (a chunk, at most 2,048 bits: 64 rounds of 32) are dealt out to the
// lanes of a warp. A chunk is split into `split` items (a power of two up to
// 64) of 64 / split rounds each, so that a dense partition of few words
// still spreads over many warps; each item's warp scans the whole chunk and
// takes its own rounds. Whole warps walk together (warp-uniform trip counts:
// the shuffles need every lane).
template <typename F>
__device__ __forceinline__ void place_for_reached(const u64* reached, u64 words, u32 split, F f) {
    u32 lane = threadIdx.x & 31u;
    u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
    u64 items = ((words + 31) >> 5) * split;
    u32 per = 64u / split;  // rounds of an item
    for (u64 it = warp; it < items; it += warps) {
        u64 w0 = (it / split) * 32;
        u32 first = (u32)(it % split) * per * 32u;  // the item's first bit of the chunk
        u64 word = (w0 + lane < words) ? reached[w0 + lane] : 0ull;
        u32 n = __popcll(word), incl = n;
        for (u32 o = 1; o < 32; o <<= 1) {
            u32 t = __shfl_up_sync(MC_FULL, incl, o);
            if (lane >= o) incl += t;
        }
        u32 total = __shfl_sync(MC_FULL, incl, 31);
        u32 excl = incl - n;
        u32 end = min(total, first + per * 32u);
        for (u32 k0 = first; k0 < end; k0 += 32) {
            u32 k = k0 + lane;
            // The lane whose word holds set bit k: the last one with excl <= k
            // (excl never decreases along the lanes).
            u32 j = 0;
            for (u32 step = 16; step; step >>= 1) {
                u32 e = __shfl_sync(MC_FULL, excl, j + step);
                if (e <= k) j += step;
            }
            u64 wj = __shfl_sync(MC_FULL, word, j);
            u32 ej = __shfl_sync(MC_FULL, excl, j);
            if (k < end) f(((w0 + j) << 6) + place_nth_bit(wj, k - ej));
        }
    }
}

// Reports fail bits raised at index r (rare: a broken input).
__device__ __forceinline__ void place_fail(u32 fl, u64 r, u32* fail, unsigned long long* first) {
    atomicOr(fail, fl);
    atomicMin(first, (unsigned long long)r);
}

// Values of the reached indices of partition (a, b) (twin: place::solve).
// values holds the partition's bytes, zero on entry; qvals / cvals the
// quiet and capture targets' values (null: not given). With symmetry, tab,
// qtab and ctab are the class tables of S(a, b), S(b, a + 1) and
// S(b - 1, a + 1) (null for a target not given; none is read without).
// fail / first: PLACE_* bits and the smallest index that raised one (first
// starts at ~0); split: items per chunk of reached words (place_for_reached).
extern "C" __global__ void place_solve(u32 a, u32 b, u32 symmetry, const u64* tab, const u64* reached, u64 words,
                                       u32 split, u64 qoff, const u64* qtab, const unsigned char* qvals, u64 coff,
                                       const u64* ctab, const unsigned char* cvals,
                                       unsigned char* values, u32* fail, unsigned long long* first) {
    PCtx c;
    place_load(c, a, b, symmetry, tab, qoff, qtab, coff, ctab);
    const unsigned char* deps[2] = {qvals, cvals};
    place_for_reached(reached, words, split, [&](u64 r) {
        u32 m, o;
        place_unrank(c, r, m, o);
        u32 best_win = 0xffffffffu, longest = 0, fl = 0;
        bool all_lost = true;
        place_successors(c, m, o, [&](u32 k, u32 nm, u32 no) {
            const unsigned char* vals = deps[k];
            if (!vals) {
                fl |= k ? PLACE_CAPTURE_MISSING : PLACE_QUIET_MISSING;
                return;
            }
            u32 v = vals[place_succ_rank(c, k, nm, no)];
            if (v == 0) fl |= k ? PLACE_CAPTURE_ZERO : PLACE_QUIET_ZERO;
            else if (v == 1) all_lost = false;
            else if (((v - 2) & 1u) == 0) best_win = min(best_win, v - 2);
            else longest = max(longest, v - 2);
        });
        unsigned char out = 1;
        if (best_win != 0xffffffffu || all_lost) {
            u32 d = (best_win != 0xffffffffu ? best_win : longest) + 1;
            if (d > MAX_DISTANCE) {
                fl |= PLACE_OVERFLOW;
                out = 0;
            } else {
                out = (unsigned char)(d + 2);
            }
        }
        values[r] = out;
        if (fl) place_fail(fl, r, fail, first);
    });
}

// Forward search of the reached indices of partition (a, b) (twin:
// place::expand): sets the successors' bits in qbits / cbits (one bit per
// index of the quiet and the capture target partition; null: not given).
// Arguments otherwise as place_solve's.
extern "C" __global__ void place_expand(u32 a, u32 b, u32 symmetry, const u64* tab, const u64* reached, u64 words,
                                        u32 split, u64 qoff, const u64* qtab, unsigned long long* qbits, u64 coff,
                                        const u64* ctab, unsigned long long* cbits,
                                        u32* fail, unsigned long long* first) {
    PCtx c;
    place_load(c, a, b, symmetry, tab, qoff, qtab, coff, ctab);
    unsigned long long* out[2] = {qbits, cbits};
    place_for_reached(reached, words, split, [&](u64 r) {
        u32 m, o, fl = 0;
        place_unrank(c, r, m, o);
        place_successors(c, m, o, [&](u32 k, u32 nm, u32 no) {
            unsigned long long* bits = out[k];
            if (!bits) {
                fl |= k ? PLACE_CAPTURE_MISSING : PLACE_QUIET_MISSING;
                return;
            }
            u64 s = place_succ_rank(c, k, nm, no);
            unsigned long long bit = 1ull << (s & 63u);
            // Most successors are marked already: a load is cheaper than an atomic.
            if ((bits[s >> 6] & bit) == 0) atomicOr(&bits[s >> 6], bit);
        });
        if (fl) place_fail(fl, r, fail, first);
    });
}

// ===========================================================================
// The streamed path: one chunk of a partition expanded into successor
// requests (contract: game::kernels::StreamTargets; CPU reference, which the
// bytes and the request multiset must equal: game::stream::expand_chunk_on_cpu;
// host side: game::morris::stream). Every partition kind is covered: k1-k2
// (moves, two halves), the lost 2-k and lost placement layers (every index
// lost), and placement layers tTT-a-b (placements; reached bits). The host
// describes the partition in `desc` (MS_* below): each half's first index,
// and for each of its two targets (quiet, capture) the target's offset, its
// first bucket and whether it is the partition itself. A target the host
// gave no bucket is a partition not solved before this one: a move there
// breaks the game's contract (TB_FAIL_LATER), as on the CPU.
// ===========================================================================

#define MS_KIND_LOST 0u
#define MS_KIND_MOVE 1u
#define MS_KIND_PLACE 2u
#define MS_NO_BASE 0xffffffffffffffffull
// desc[0] kind, [1] halves, [2] partition size; half h from MS_HEAD +
// MS_HALF * h: first index, a | b << 8 (mover's and opponent's pieces),
// then per target k (0 quiet, 1 capture) at 2 + 3k: offset in the target,
// first bucket (MS_NO_BASE: none), whether it is the partition itself.
#define MS_HEAD 3u
#define MS_HALF 8u
#define MS_WORDS (MS_HEAD + 2u * MS_HALF)

// Arguments: desc (MS_WORDS u64), symmetry, and with symmetry the class
// tables tab[3h + s] of half h (s = 0: the half, 1: its quiet target, 2: its
// capture target; a stand-in where a target cannot be moved to), then the
// generic tail of common.cuh.
extern "C" __global__ void __launch_bounds__(256) morris_stream_expand(
    const u64* desc, u32 symmetry, const u64* tab0, const u64* tab1, const u64* tab2, const u64* tab3,
    const u64* tab4, const u64* tab5, u64 lo, u32 n, u32 first_scan, unsigned char* values, u32* flags,
    const u64* reached, u32 has_reached, u64 lookup_chunk, u32 low_bits, u64* out, u32 cap, u32* count,
    u64* fail) {
    __shared__ u32 adj[TB_CELLS], mills[16], mills_at[2 * TB_CELLS], sym[15 * 6 * 16], sbin[TB_BIN_LEN];
    __shared__ ClassTab tabs[6];
    __shared__ u64 d[MS_WORDS];
    if (symmetry && threadIdx.x == 0) {
        tabs[0] = class_tab(tab0);
        tabs[1] = class_tab(tab1);
        tabs[2] = class_tab(tab2);
        tabs[3] = class_tab(tab3);
        tabs[4] = class_tab(tab4);
        tabs[5] = class_tab(tab5);
    }
    tb_load_bin(sbin);
    for (u32 i = threadIdx.x; i < TB_CELLS; i += blockDim.x) adj[i] = MORRIS_ADJ[i];
    for (u32 i = threadIdx.x; i < 2 * TB_CELLS; i += blockDim.x) mills_at[i] = MORRIS_MILLS_AT[i];
    for (u32 i = threadIdx.x; i < 16; i += blockDim.x) mills[i] = MORRIS_MILLS[i];
    for (u32 i = threadIdx.x; i < 15 * 6 * 16; i += blockDim.x) sym[i] = MORRIS_SYM[i];
    for (u32 i = threadIdx.x; i < MS_WORDS; i += blockDim.x) d[i] = desc[i];
    __syncthreads();
    // The walkers of the solve kernels read only their board tables.
    RCtx rc;
    rc.adj = adj;
    rc.mills = mills;
    rc.mills_at = mills_at;
    PCtx pc;
    pc.mills = mills;
    pc.mills_at = mills_at;
    u32 kind = (u32)d[0];
    u32 halves = (u32)d[1];
    u64 size = d[2];
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        u64 r = lo + j;
        if (first_scan) {
            if (!tb_is_reached(reached, has_reached, j) || r >= size) {
                values[j] = TB_ILLEGAL;
                continue;
            }
        } else if (tb_flag(flags, j) != (TB_ONGOING | TB_INTERNAL) || values[j] != TB_PENDING || r >= size) {
            continue;
        }
        if (kind == MS_KIND_LOST) {
            if (first_scan) values[j] = TB_LOST;
            continue;
        }
        u32 h = (halves > 1 && r >= d[MS_HEAD + MS_HALF]) ? 1u : 0u;
        const u64* H = d + MS_HEAD + MS_HALF * h;
        u64 local = r - H[0];
        u32 m, o;
        if (symmetry) class_unrank(tabs[3 * h], sbin, local, m, o);
        else tb_unrank2(sbin, local, (u32)H[1] & 0xffu, (u32)(H[1] >> 8) & 0xffu, &m, &o);
        if (first_scan) {
            bool lost = false;
            if (kind == MS_KIND_MOVE && __popc(m) != 3) {
                u32 empty = ~(m | o) & ((1u << TB_CELLS) - 1u);
                lost = true;
                for (u32 p = m; p && lost; p &= p - 1) lost = (adj[__ffs(p) - 1] & empty) == 0;
            }
            if (lost) {
                values[j] = TB_LOST;
                continue;
            }
            values[j] = TB_PENDING;
            tb_set_flag(flags, j, TB_ONGOING);
        }
        u32 moves = 0;
        bool internal = false;
        auto visit = [&](u32 k, u32 nm, u32 no) {
            ++moves;
            const u64* T = H + 2 + 3 * k;
            u64 base = T[1];
            if (base == MS_NO_BASE) {
                tb_fail(fail, TB_FAIL_LATER, r);
                return;
            }
            bool in = T[2] != 0;
            if (first_scan && in) {
                internal = true;
                return;
            }
            // A pass asks for the partition's own successors only.
            if (!first_scan && !in) return;
            u64 s = T[0] + (symmetry ? class_rank(tabs[3 * h + 1 + k], sbin, sym, nm, no) : place_rank_boards(sbin, nm, no));
            tb_emit(out, cap, count, tb_key(base, s, lookup_chunk, low_bits), r);
        };
        if (kind == MS_KIND_PLACE) {
            place_successors(pc, m, o, visit);
        } else {
            retro_successors(rc, m, o, [&](bool capture, u32 nm, u32 no) { visit(capture ? 1u : 0u, nm, no); });
        }
        if (moves == 0) tb_fail(fail, TB_FAIL_NO_MOVES, r);
        if (internal) tb_set_flag(flags, j, TB_INTERNAL);
    }
}
