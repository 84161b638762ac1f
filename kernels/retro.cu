// Whole-partition retrograde analysis of Nine Men's Morris on the GPU. CPU
// twin and documentation of every rule: src/backend/morris_retro.rs, whose
// bytes equal those of solve::solve_partition (src/solve/retro.rs).
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
#include "common.cuh"

__constant__ u32 MORRIS_ADJ[TB_CELLS];
__constant__ u32 MORRIS_MILLS[16];
__constant__ u32 MORRIS_MILLS_AT[2 * TB_CELLS];
// 15 non-identity symmetries x 6 nibbles x 16 values (backend::morris_retro::SYM_NIBBLES).
__constant__ u32 MORRIS_SYM[15 * 6 * 16];

#define FAIL_ILLEGAL_DEP 1u
#define FAIL_OVERFLOW 2u
#define MAX_DISTANCE 253u

// Boards with k1 pieces of one colour and k2 of the other: C(24, s) C(s, k1).
__device__ __forceinline__ u64 tb_size(u32 k1, u32 k2) {
    u32 s = k1 + k2;
    return (u64)TB_BIN[TB_CELLS * TB_BIN_COLS + s + 1] * (u64)TB_BIN[s * TB_BIN_COLS + k1 + 1];
}

// One half of the partition (backend::morris_retro::Half).
struct RHalf {
    u64 base;
    u32 a, b;
    u32 qa, qb;
    u64 qoff;
    u32 ca, cb;
    u64 coff;
    const unsigned char* dep;
};

struct RCtx {
    const u64* terms;
    u32 L1;
    const u32* adj;
    const u32* mills;
    const u32* mills_at;
    const u32* sym;
    u32 symmetry;
    RHalf h[2];
    u32 halves;
};

extern __shared__ __align__(16) u64 retro_dyn[];

__device__ __forceinline__ void retro_load(RCtx& c, u32 k1, u32 k2) {
    __shared__ u32 adj[TB_CELLS], mills[16], mills_at[2 * TB_CELLS], sym[15 * 6 * 16];
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
}

// The halves and targets, as backend::morris_retro::MorrisSolveSpec::halves.
__device__ __forceinline__ void retro_halves(RCtx& c, u32 k1, u32 k2, const unsigned char* dep0,
                                             const unsigned char* dep1) {
    u64 m = tb_size(k1, k2);
    RHalf& A = c.h[0];
    A.base = 0;
    A.a = k1;
    A.b = k2;
    A.qa = k2;
    A.qb = k1;
    A.qoff = (k1 == k2) ? 0 : m;
    A.ca = k2 - 1;
    A.cb = k1;
    A.coff = (k2 == 3) ? 0 : tb_size(k1, k2 - 1);
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
    B.dep = dep1;
    c.halves = (k1 == k2) ? 1 : 2;
}

__device__ __forceinline__ u32 retro_sym_map(const u32* t, u32 x) {
    return t[x & 15] | t[16 + ((x >> 4) & 15)] | t[32 + ((x >> 8) & 15)] | t[48 + ((x >> 12) & 15)] |
           t[64 + ((x >> 16) & 15)] | t[80 + ((x >> 20) & 15)];
}

// Class representative: smallest mover bitboard, then smallest opponent's.
__device__ __forceinline__ void retro_canonical(const u32* sym, u32& m, u32& o) {
    u32 bm = m, bo = o;
    for (u32 s = 0; s < 15; ++s) {
        const u32* t = sym + s * 96;
        u32 mm = retro_sym_map(t, m);
        if (mm <= bm) {
            u32 oo = retro_sym_map(t, o);
            if (mm < bm || oo < bo) {
                bm = mm;
                bo = oo;
            }
        }
    }
    m = bm;
    o = bo;
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

__device__ __forceinline__ u64 retro_succ_rank(const RCtx& c, u32 m, u32 o, u32 a, u32 b, u64 off) {
    if (c.symmetry) retro_canonical(c.sym, m, o);
    return off + retro_rank(c, m, o, a, b);
}

// Unranks r; false for an unused index (not a class representative).
// The half is copied by value (constant indices keep RCtx in registers).
__device__ __forceinline__ bool retro_board(const RCtx& c, u64 r, RHalf& h, u32& mover, u32& opp) {
    if (c.halves > 1 && r >= c.h[1].base) h = c.h[1];
    else h = c.h[0];
    tb_unrank2_t(c.terms, c.L1, r - h.base, h.a, h.b, &mover, &opp);
    if (c.symmetry) {
        u32 m = mover, o = opp;
        retro_canonical(c.sym, m, o);
        if (m != mover || o != opp) return false;
    }
    return true;
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
    if (!retro_board(c, r, h, mover, opp)) return 0;
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
        unsigned char v = h.dep[retro_succ_rank(c, m, o, h.ca, h.cb, h.coff)];
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
    if (!retro_board(c, r, h, mover, opp)) return 0;
    bool hit = false, blocked = false;
    u32 longest = 0;
    bool odd = (d & 1u) != 0;
    retro_successors(c, mover, opp, [&](bool capture, u32 m, u32 o) {
        // Settled early: later successors cannot change the decision.
        if (odd ? hit : blocked) return;
        unsigned char v = capture ? h.dep[retro_succ_rank(c, m, o, h.ca, h.cb, h.coff)]
                                  : values[retro_succ_rank(c, m, o, h.qa, h.qb, h.qoff)];
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
    u32 ballot = __ballot_sync(0xffffffffu, want);
    u32 lane = threadIdx.x & 31u;
    unsigned long long base = 0;
    if (lane == 0 && ballot) base = atomicAdd(count, (unsigned long long)__popc(ballot));
    base = __shfl_sync(0xffffffffu, base, 0);
    u64 at = base + __popc(ballot & ((1u << lane) - 1u));
    if (want && at < cap) list[at] = r;
}

// Event keys (the twin's EVENT_*): distance << 41 | capture << 40 | rank.
#define EVENT_SHIFT 41
#define EVENT_CAPTURE (1ull << 40)

// stats[0]: pending count, stats[1]: max seen, stats[2]: fail bits, stats[3]:
// events (those at or past ev_cap counted, not written), stats[4 + e]:
// events at distance e.
extern "C" __global__ void retro_first_scan(u32 k1, u32 k2, u32 symmetry, u64 size, const unsigned char* dep0,
                                            const unsigned char* dep1, unsigned char* values, u64* events,
                                            u64 ev_cap, unsigned long long* stats) {
    __shared__ u32 hist[256];
    for (u32 i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    RCtx c;
    retro_load(c, k1, k2);
    retro_halves(c, k1, k2, dep0, dep1);
    c.symmetry = symmetry;
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    u32 seen_max = 0, fails = 0;
    unsigned long long pending = 0;
    for (u64 base = tid - lane; base < size; base += stride) {
        u64 r = base + lane;
        bool internal = false;
        u32 event = NO_EVENT;
        if (r < size) {
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

// Unranks a used index (no representative check).
__device__ __forceinline__ void retro_unrank(const RCtx& c, u64 r, RHalf& h, u32& mover, u32& opp) {
    if (c.halves > 1 && r >= c.h[1].base) h = c.h[1];
    else h = c.h[0];
    tb_unrank2_t(c.terms, c.L1, r - h.base, h.a, h.b, &mover, &opp);
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
                        retro_succ_rank(c, opp ^ (1u << to) ^ (1u << from), mover, y.a, y.b, y.base));
        }
    }
}

// Pass d's candidates into marks: predecessors of frontier[0..*nf] (decided
// in pass d - 1) and of the scan's decided events at distance d - 1, and the
// capture events at d - 1, of events[0..ne] (ne = 0 when there are none).
extern "C" __global__ void retro_candidates(u32 k1, u32 k2, u32 symmetry, u32 d, const unsigned char* values,
                                            const u64* frontier, const unsigned long long* nf_ptr,
                                            const u64* events, u64 ne, u32* marks) {
    RCtx c;
    retro_load(c, k1, k2);
    retro_halves(c, k1, k2, nullptr, nullptr);
    c.symmetry = symmetry;
    u64 nf = *nf_ptr;
    u64 n = nf + ne;
    u64 stride = (u64)gridDim.x * blockDim.x;
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

// Lists the set bits of marks[0..words] (ranks, at *count; entries at or past
// cap counted, not written) and clears them. Whole warps walk together.
extern "C" __global__ void retro_compact(u32* marks, u64 words, u64* list, u64 cap, unsigned long long* count) {
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = tid - lane; base < words; base += stride) {
        u64 i = base + lane;
        u32 w = 0;
        if (i < words) {
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

// Pass d over list[0..min(*n, cap)]: decided positions get their value and
// are appended to decided (count at *decided_count, at most cap).
extern "C" __global__ void retro_pass_candidates(u32 k1, u32 k2, u32 symmetry, u32 d, const unsigned char* dep0,
                                                 const unsigned char* dep1, unsigned char* values, const u64* list,
                                                 const unsigned long long* n_ptr, u64* decided, u64 cap,
                                                 unsigned long long* decided_count) {
    RCtx c;
    retro_load(c, k1, k2);
    retro_halves(c, k1, k2, dep0, dep1);
    c.symmetry = symmetry;
    u64 n = min((u64)*n_ptr, cap);
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 lane = threadIdx.x & 31u;
    u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 base = tid - lane; base < n; base += stride) {
        u64 i = base + lane;
        bool done = false;
        u64 r = 0;
        if (i < n) {
            r = list[i];
            unsigned char v = retro_pass(c, values, r, d);
            if (v) {
                values[r] = v;
                done = true;
            }
        }
        retro_append(done, r, decided, cap, decided_count);
    }
}
