// Checkers (English draughts) partitions: unrank, move generation with
// multi-jumps, rank of every successor, and the retrograde first scan and
// passes of one whole partition. The CPU twin of every function here is in
// src/game/checkers/twin.rs (same names without the ck_ prefix), which also
// documents the tables (descriptors of DESC words, the material table,
// prefix tables) and why the bytes equal the generic solver's.
#include "common.cuh"

typedef unsigned char u8;

#define CK_DESC 8
#define CK_NONE 0xffffffffu
#define CK_ABSENT 0ull
#define CK_INTERNAL 1ull
#define CK_EXTERNAL 2ull
#define CK_MISSING 3ull
#define CK_PREFIX_BIT (1ull << 34)
#define CK_FAIL_ABSENT 1ull
#define CK_FAIL_MISSING 2ull
#define CK_FAIL_ILLEGAL 3ull
#define CK_FAIL_OVERFLOW 4ull
#define CK_MAX_SUCC 64

// C(n, k) for n, k <= 32, filled by each block in shared memory (the
// binary searches of unrank index it by data: divergent constant-memory
// reads would serialise).
struct CkBin {
    u64 t[33][33];
};

__device__ __forceinline__ void ck_fill_bin(CkBin* b) {
    for (u32 i = threadIdx.x; i < 33 * 33; i += blockDim.x) {
        u32 n = i / 33, k = i % 33;
        u64 c = 0;
        if (k <= n) {
            // C(n, k) by the exact product: every prefix is a binomial.
            c = 1;
            for (u32 j = 0; j < k; j++) c = c * (n - j) / (j + 1);
        }
        b->t[n][k] = c;
    }
    __syncthreads();
}

__device__ __forceinline__ u64 ck_bin(const CkBin* b, u32 n, u32 k) {
    return k > n ? 0ull : b->t[n][k];
}

struct CkBoard {
    u32 men0, men1, kings0, kings1;
};

struct CkTables {
    const u64* desc;
    const u32* mat;
    const u64* prefix;
    u32 own0, own1;
    u64 size0;
    const CkBin* bin;
};

// The square `dist` steps from s in direction d (0, 1 forward), or 64.
__device__ __forceinline__ u32 ck_neighbour(u32 s, u32 d, int dist) {
    int row = (int)(s >> 2);
    int col = 2 * (int)(s & 3) + ((row & 1) == 0 ? 1 : 0);
    int r = row + (d < 2 ? dist : -dist);
    int c = col + ((d & 1) ? dist : -dist);
    return (r >= 0 && r < 8 && c >= 0 && c < 8) ? (u32)(r * 4 + c / 2) : 64u;
}

__device__ __forceinline__ u32 ck_bit(u32 s) { return s < 32 ? (1u << s) : 0u; }

__device__ __forceinline__ CkBoard ck_after(const CkBoard& b, u32 men, u32 kings, u32 left) {
    CkBoard o;
    o.men0 = __brev(b.men1 & left);
    o.men1 = __brev(men);
    o.kings0 = __brev(b.kings1 & left);
    o.kings1 = __brev(kings);
    return o;
}

// Calls f(successor) for every successor in the rules' order until it
// returns true; returns the number visited. The jump walk keeps its path as
// two bits per jump in `stack` (twin.rs: "Move generation without a stack").
template <class F>
__device__ __forceinline__ u32 ck_for_each_successor(const CkBoard& b, F& f) {
    u32 occ = b.men0 | b.men1 | b.kings0 | b.kings1;
    u32 empty0 = ~occ;
    u32 opp = b.men1 | b.kings1;
    u32 n = 0;
    for (int king = 0; king < 2; king++) {
        u32 dirs = king ? 4 : 2;
        u32 rest = king ? b.kings0 : b.men0;
        while (rest) {
            u32 s = __ffs(rest) - 1;
            rest &= rest - 1;
            u32 from = 1u << s;
            u32 at = s, depth = 0, stack = 0;
            u32 left = opp, empty = empty0 | from;
            u32 d = 0;
            bool extended = false;
            for (;;) {
                if (d < dirs) {
                    u32 over = ck_neighbour(at, d, 1);
                    u32 land = ck_neighbour(at, d, 2);
                    if (land < 32 && (left & ck_bit(over)) && (empty & ck_bit(land))) {
                        stack |= d << (2 * depth);
                        depth++;
                        left &= ~ck_bit(over);
                        empty = (empty | ck_bit(over)) & ~ck_bit(land);
                        at = land;
                        if (!king && land >= 28) {
                            n++;
                            if (f(ck_after(b, b.men0 & ~from, b.kings0 | ck_bit(land), left))) return n;
                        } else {
                            d = 0;
                            extended = false;
                            continue;
                        }
                    } else {
                        d++;
                        continue;
                    }
                } else {
                    if (!extended && depth > 0) {
                        n++;
                        u32 to = ck_bit(at);
                        CkBoard next = king ? ck_after(b, b.men0, (b.kings0 & ~from) | to, left)
                                            : ck_after(b, (b.men0 & ~from) | to, b.kings0, left);
                        if (f(next)) return n;
                    }
                    if (depth == 0) break;
                }
                depth--;
                u32 taken = (stack >> (2 * depth)) & 3u;
                stack &= ~(3u << (2 * depth));
                u32 over = ck_neighbour(at, 3 - taken, 1);
                left |= ck_bit(over);
                empty = (empty & ~ck_bit(over)) | ck_bit(at);
                at = ck_neighbour(at, 3 - taken, 2);
                d = taken + 1;
                extended = true;
            }
        }
    }
    if (n > 0) return n;
    for (int king = 0; king < 2; king++) {
        u32 dirs = king ? 4 : 2;
        u32 rest = king ? b.kings0 : b.men0;
        while (rest) {
            u32 s = __ffs(rest) - 1;
            rest &= rest - 1;
            u32 from = 1u << s;
            for (u32 d = 0; d < dirs; d++) {
                u32 t = ck_neighbour(s, d, 1);
                if (t >= 32 || !(empty0 & ck_bit(t))) continue;
                u32 to = ck_bit(t);
                CkBoard next = king      ? ck_after(b, b.men0, (b.kings0 & ~from) | to, 0xffffffffu)
                               : t >= 28 ? ck_after(b, b.men0 & ~from, b.kings0 | to, 0xffffffffu)
                                         : ck_after(b, (b.men0 & ~from) | to, b.kings0, 0xffffffffu);
                n++;
                if (f(next)) return n;
            }
        }
    }
    return n;
}

__device__ __forceinline__ u64 ck_colex_rank(const CkBin* bin, u32 mask) {
    u64 r = 0;
    u32 i = 1;
    while (mask) {
        r += ck_bin(bin, __ffs(mask) - 1, i);
        mask &= mask - 1;
        i++;
    }
    return r;
}

__device__ __forceinline__ u32 ck_colex_unrank(const CkBin* bin, u64 r, u32 k) {
    u32 mask = 0;
    for (u32 i = k; i >= 1; i--) {
        u32 p = 0;
        for (u32 step = 16; step > 0; step >>= 1) {
            u32 q = p + step;
            if (ck_bin(bin, q, i) <= r) p = q;
        }
        mask |= 1u << p;
        r -= ck_bin(bin, p, i);
    }
    return mask;
}

__device__ __forceinline__ u32 ck_compress(u32 mask, u32 free_) {
    u32 out = 0;
    while (mask) {
        u32 s = __ffs(mask) - 1;
        mask &= mask - 1;
        out |= 1u << __popc(free_ & ((1u << s) - 1));
    }
    return out;
}

__device__ __forceinline__ u32 ck_expand(u32 c, u32 free_) {
    u32 out = 0;
    while (c) {
        u32 low = free_ & (0u - free_);
        if (c & 1) out |= low;
        free_ &= free_ - 1;
        c >>= 1;
    }
    return out;
}

__device__ __forceinline__ u32 ck_rows_mask(u32 rows) {
    return rows >= 8 ? 0xffffffffu : ((1u << (4 * rows)) - 1);
}

__device__ __forceinline__ u64 ck_kind(const CkTables& t, u32 di) {
    return di == CK_NONE ? CK_ABSENT : (t.desc[(u64)di * CK_DESC + 4] >> 32) & 3ull;
}

__device__ __forceinline__ u64 ck_rank_in(const CkTables& t, u32 di, const CkBoard& b) {
    const u64* w = t.desc + (u64)di * CK_DESC;
    u64 w4 = w[4];
    u32 a = w4 & 15, bk = (w4 >> 4) & 15, c = (w4 >> 8) & 15, dk = (w4 >> 12) & 15;
    u32 rm = (w4 >> 16) & 15, ro = (w4 >> 20) & 15;
    u32 m = b.men0;
    u64 i_m = a == 0 ? 0 : ck_colex_rank(t.bin, m) - ck_bin(t.bin, 4 * rm, a);
    u64 i_o = 0;
    if (c != 0) {
        u32 zone = ck_rows_mask(ro + 1) & ~__brev(m);
        u32 fhi = __popc(zone & ck_rows_mask(ro));
        i_o = ck_colex_rank(t.bin, ck_compress(__brev(b.men1), zone)) - ck_bin(t.bin, fhi, c);
    }
    u64 i_mo = (w4 & CK_PREFIX_BIT) ? t.prefix[w[1] + i_m] + i_o : i_m * w[1] + i_o;
    u32 free_ = ~(b.men0 | b.men1);
    u32 all = b.kings0 | b.kings1;
    u64 i_k = ck_colex_rank(t.bin, ck_compress(all, free_)) * ck_bin(t.bin, bk + dk, bk) +
              ck_colex_rank(t.bin, ck_compress(b.kings0, all));
    return i_mo * w[2] + i_k;
}

// Where b lies: its descriptor (CK_NONE: in no partition) and rank in the slice.
__device__ __forceinline__ u32 ck_locate(const CkTables& t, const CkBoard& b, u64* rank) {
    u32 a = __popc(b.men0), c = __popc(b.men1), k0 = __popc(b.kings0), k1 = __popc(b.kings1);
    if (max(max(a, c), max(k0, k1)) > 8) return CK_NONE;
    u32 base = t.mat[((a * 9 + k0) * 9 + c) * 9 + k1];
    if (base == CK_NONE) return CK_NONE;
    u32 rm = a ? (31 - __clz(b.men0)) / 4 : 0;
    u32 ro = c ? (31 - (__ffs(b.men1) - 1)) / 4 : 0;
    u32 di = base + rm * 7 + ro;
    if (ck_kind(t, di) == CK_ABSENT) return CK_NONE;
    *rank = ck_rank_in(t, di, b);
    return di;
}

__device__ __forceinline__ CkBoard ck_unrank(const CkTables& t, u64 r) {
    u32 di = t.own0;
    if (r >= t.size0) {
        di = t.own1;
        r -= t.size0;
    }
    const u64* w = t.desc + (u64)di * CK_DESC;
    u64 w4 = w[4];
    u32 a = w4 & 15, bk = (w4 >> 4) & 15, c = (w4 >> 8) & 15, dk = (w4 >> 12) & 15;
    u32 rm = (w4 >> 16) & 15, ro = (w4 >> 20) & 15;
    u64 i_mo = r / w[2], i_k = r % w[2];
    u64 i_m, i_o;
    if (w4 & CK_PREFIX_BIT) {
        const u64* p = t.prefix + w[1];
        u64 lo = 0, hi = w[3];
        while (hi - lo > 1) {
            u64 mid = (lo + hi) / 2;
            if (p[mid] <= i_mo) lo = mid;
            else hi = mid;
        }
        i_m = lo;
        i_o = i_mo - p[lo];
    } else {
        i_m = i_mo / w[1];
        i_o = i_mo % w[1];
    }
    u32 m = a == 0 ? 0 : ck_colex_unrank(t.bin, i_m + ck_bin(t.bin, 4 * rm, a), a);
    u32 o = 0;
    if (c != 0) {
        u32 zone = ck_rows_mask(ro + 1) & ~__brev(m);
        u32 fhi = __popc(zone & ck_rows_mask(ro));
        o = __brev(ck_expand(ck_colex_unrank(t.bin, i_o + ck_bin(t.bin, fhi, c), c), zone));
    }
    u32 free_ = ~(m | o);
    u64 per = ck_bin(t.bin, bk + dk, bk);
    u32 all = ck_expand(ck_colex_unrank(t.bin, i_k / per, bk + dk), free_);
    u32 mine = ck_expand(ck_colex_unrank(t.bin, i_k % per, bk), all);
    CkBoard out;
    out.men0 = m;
    out.men1 = o;
    out.kings0 = mine;
    out.kings1 = all & ~mine;
    return out;
}

// Distances beyond a value byte (twin: twin::LongView): bytes hold
// distances up to `ceiling`; beyond it a position holds the saturated byte
// of its outcome and its distance in `own` (two bytes per index, null until
// the host allocates it: `has_own`). A dependency's long distances are
// `keys` (its index in `deps`, ascending) and `dist`, `n` of them.
struct CkLong {
    const u64* keys;
    const u32* dist;
    u64 n;
    unsigned short* own;
    u32 ceiling;
};

#define CK_LONG_ARGS                                                                           \
    const u64 *long_keys, const u32 *long_dist, u64 long_n, unsigned short *own_long,          \
        u32 has_own, u32 ceiling
#define CK_LONG_INIT                                                                           \
    CkLong lg;                                                                                 \
    lg.keys = long_keys;                                                                       \
    lg.dist = long_dist;                                                                       \
    lg.n = long_n;                                                                             \
    lg.own = has_own ? own_long : 0;                                                           \
    lg.ceiling = ceiling;

// A dependency's value at `at` in `deps` whose byte is v, as distance + 2.
__device__ __forceinline__ u32 ck_dep_value(const CkLong& lg, u64 at, u32 v) {
    if (v <= lg.ceiling || lg.n == 0) return v;
    u64 lo = 0, hi = lg.n;
    while (lo < hi) {
        u64 mid = (lo + hi) >> 1;
        if (lg.keys[mid] < at) lo = mid + 1;
        else hi = mid;
    }
    return (lo < lg.n && lg.keys[lo] == at) ? lg.dist[lo] + 2 : v;
}

// This partition's value at `at` whose byte (read once) is v, as distance + 2.
__device__ __forceinline__ u32 ck_own_value(const CkLong& lg, u64 at, u32 v) {
    if (v <= lg.ceiling || lg.own == 0) return v;
    u32 e = *(volatile const unsigned short*)(lg.own + at);
    return e ? e + 2 : v;
}

// Stores distance e at index r; false where it needs `own` and there is none.
__device__ __forceinline__ bool ck_store(const CkLong& lg, u8* values, u64 r, u32 e) {
    if (e <= lg.ceiling) {
        values[r] = (u8)(e + 2);
        return true;
    }
    if (lg.own == 0 || e > 0xffffu) return false;
    lg.own[r] = (unsigned short)e;
    u32 even = lg.ceiling - (lg.ceiling & 1);
    u32 odd = (lg.ceiling & 1) ? lg.ceiling : lg.ceiling - 1;
    values[r] = (u8)(((e & 1) ? odd : even) + 2);
    return true;
}

// A successor's value (distance + 2, through the long distances; 1 pending
// or drawn), or 0 and *code set where it may not be read. *internal tells
// whether it lies in this partition.
__device__ __forceinline__ u32 ck_value(const CkTables& t, const CkLong& lg, const CkBoard& s,
                                        const u8* own, const u8* deps, const u64* dep_base,
                                        bool* internal, u64* code) {
    u64 rank = 0;
    u32 di = ck_locate(t, s, &rank);
    u64 kind = ck_kind(t, di);
    *internal = false;
    if (kind == CK_INTERNAL) {
        *internal = true;
        u64 at = t.desc[(u64)di * CK_DESC] + rank;
        // Another thread may be writing it in this pass: read it once.
        return ck_own_value(lg, at, *(volatile const u8*)(own + at));
    }
    if (kind == CK_EXTERNAL) {
        const u64* w = t.desc + (u64)di * CK_DESC;
        u64 at = dep_base[w[5]] + w[0] + rank;
        u32 v = deps[at];
        if (v == 0) *code = CK_FAIL_ILLEGAL;
        return ck_dep_value(lg, at, v);
    }
    *code = kind == CK_MISSING ? CK_FAIL_MISSING : CK_FAIL_ABSENT;
    return 0;
}

struct CkFirstScan {
    CkTables t;
    CkLong lg;
    const u8* own;
    const u8* deps;
    const u64* dep_base;
    u32 best_win, longest, seen;
    bool all_lost, internal;
    u64 code;
    __device__ bool operator()(const CkBoard& s) {
        bool inside;
        u32 v = ck_value(t, lg, s, own, deps, dep_base, &inside, &code);
        if (code) return true;
        if (inside) {
            internal = true;
        } else if (v >= 2) {
            u32 e = v - 2;
            seen = max(seen, e);
            if (e % 2 == 0) best_win = min(best_win, e);
            else longest = max(longest, e);
        } else {
            all_lost = false;
        }
        return false;
    }
};

// What pass d learns from one successor's value v (distance + 2; 1 pending
// or drawn): hit (odd d: one lost at d - 1), blocked (even d: one not yet
// known to be won), the longest win. True once the decision is settled.
__device__ __forceinline__ bool ck_pass_read(u32 v, u32 d, bool* hit, bool* blocked, u32* longest) {
    // Distances d and beyond may be this pass's own writes: unknown.
    u32 e = v - 2;
    if (v >= 2 && e < d) {
        if (e == d - 1 && (d & 1)) *hit = true;
        if (e & 1) *longest = max(*longest, e);
        else *blocked = true;
    } else {
        *blocked = true;
    }
    return (d & 1) ? *hit : *blocked;
}

struct CkPass {
    CkTables t;
    CkLong lg;
    const u8* own;
    const u8* deps;
    const u64* dep_base;
    u32 d;
    bool hit, blocked;
    u32 longest;
    u64 code;
    __device__ bool operator()(const CkBoard& s) {
        bool inside;
        u32 v = ck_value(t, lg, s, own, deps, dep_base, &inside, &code);
        if (code) return true;
        return ck_pass_read(v, d, &hit, &blocked, &longest);
    }
};

#define CK_TABLE_ARGS                                                                          \
    const u64 *desc, const u32 *mat, const u64 *prefix, u32 own0, u32 own1, u64 size0, u64 size
#define CK_TABLES_INIT                                                                         \
    __shared__ CkBin bin;                                                                      \
    ck_fill_bin(&bin);                                                                         \
    CkTables t;                                                                                \
    t.desc = desc;                                                                             \
    t.mat = mat;                                                                               \
    t.prefix = prefix;                                                                         \
    t.own0 = own0;                                                                             \
    t.own1 = own1;                                                                             \
    t.size0 = size0;                                                                           \
    t.bin = &bin;

// The first scan of every index (twin: twin::first_scan): its value byte;
// positions with a successor in this partition stay pending (1) with their
// bit set in `internal`; *count counts those, *max_seen takes the longest
// distance read from earlier partitions.
extern "C" __global__ void checkers_first_scan(CK_TABLE_ARGS, CK_LONG_ARGS, const u8* deps,
                                               const u64* dep_base, u8* values, u32* internal,
                                               u64* count, u32* max_seen, u64* fail) {
    CK_TABLES_INIT
    CK_LONG_INIT
    u32 seen_here = 0;
    u64 inside_here = 0;
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < size;
         r += (u64)gridDim.x * blockDim.x) {
        CkBoard b = ck_unrank(t, r);
        CkFirstScan f;
        f.t = t;
        f.lg = lg;
        f.own = values;
        f.deps = deps;
        f.dep_base = dep_base;
        f.best_win = 0xffffffffu;
        f.longest = 0;
        f.seen = 0;
        f.all_lost = true;
        f.internal = false;
        f.code = 0;
        u32 n = ck_for_each_successor(b, f);
        if (f.code) {
            tb_fail(fail, f.code, r);
            values[r] = 0;
        } else if (n == 0) {
            values[r] = 2;
        } else if (f.internal) {
            values[r] = 1;
            atomicOr(&internal[r >> 5], 1u << (r & 31));
            inside_here++;
            seen_here = max(seen_here, f.seen);
        } else {
            u32 e = 0;
            bool decided = true;
            if (f.best_win != 0xffffffffu) e = f.best_win + 1;
            else if (f.all_lost) e = f.longest + 1;
            else decided = false;
            if (!decided) {
                values[r] = 1;
                seen_here = max(seen_here, f.seen);
            } else if (!ck_store(lg, values, r, e)) {
                // Beyond the ceiling with no room for long distances yet:
                // the host allocates it and scans again.
                tb_fail(fail, CK_FAIL_OVERFLOW, r);
                values[r] = 0;
            } else {
                seen_here = max(seen_here, max(f.seen, e));
            }
        }
    }
    inside_here = tb_warp_sum(inside_here);
    for (int o = 16; o > 0; o >>= 1) seen_here = max(seen_here, __shfl_down_sync(0xffffffffu, seen_here, o));
    if ((threadIdx.x & 31) == 0) {
        if (inside_here) atomicAdd(count, inside_here);
        if (seen_here) atomicMax(max_seen, seen_here);
    }
}

// Pass d over every pending index with its bit set (twin: twin::pass):
// decides it where its successors' values below d say so; *decided counts.
extern "C" __global__ void checkers_pass(CK_TABLE_ARGS, CK_LONG_ARGS, const u8* deps,
                                         const u64* dep_base, u8* values, const u32* internal,
                                         u32 d, u64* decided, u64* fail) {
    CK_TABLES_INIT
    CK_LONG_INIT
    u64 mine = 0;
    // A thread per index, not per word of bits: a word's pending positions
    // walked by one thread left most of the device idle (a 276,080-index
    // partition ran 8,628 threads, 1 ms a pass on an H100).
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < size;
         r += (u64)gridDim.x * blockDim.x) {
        {
            if (!((internal[r >> 5] >> (r & 31)) & 1)) continue;
            if (*(volatile u8*)(values + r) != 1) continue;
            CkBoard b = ck_unrank(t, r);
            CkPass f;
            f.t = t;
            f.lg = lg;
            f.own = values;
            f.deps = deps;
            f.dep_base = dep_base;
            f.d = d;
            f.hit = false;
            f.blocked = false;
            f.longest = 0;
            f.code = 0;
            ck_for_each_successor(b, f);
            if (f.code) {
                tb_fail(fail, f.code, r);
                continue;
            }
            u32 e = 0;
            bool decided_here = false;
            if (d & 1) {
                if (f.hit) e = d, decided_here = true;
            } else if (!f.blocked) {
                e = f.longest + 1, decided_here = true;
            }
            if (decided_here) {
                if (ck_store(lg, values, r, e)) mine++;
                else tb_fail(fail, CK_FAIL_OVERFLOW, r);
            }
        }
    }
    mine = tb_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(decided, mine);
}

// Successor lists: the pending positions' successors, found once and then
// read by every pass (a pass that walks a list reads a byte per successor
// where the movegen pass unranks, generates and ranks again). A target is
// the successor's index in `values`, or CK_DEP_BIT | its index in `deps`.
#define CK_DEP_BIT (1ull << 63)

// A pending position's list in `targets`: its start << CK_SPAN_SHIFT | its
// length.
#define CK_SPAN_SHIFT 24
#define CK_SPAN_LEN ((1ull << CK_SPAN_SHIFT) - 1)

struct CkCount {
    __device__ bool operator()(const CkBoard&) { return false; }
};

// Lists the positions the first scan left pending (their bit set in
// `internal`): each one's rank at ranks[i] and its successors' span at
// spans[i] (start << CK_SPAN_SHIFT | number), i counted by *live, the
// spans' starts taken from *cursor, which ends at the successors' total.
// A warp takes one slot range and one span range at a time, so the lists'
// order varies from run to run; nothing read from them depends on it.
extern "C" __global__ void checkers_list_pending(CK_TABLE_ARGS, const u32* internal, u64* ranks,
                                                 u64* spans, u64 room, u64* live, u64* cursor,
                                                 u64* fail) {
    CK_TABLES_INIT
    u32 lane = threadIdx.x & 31u;
    // Whole warps run each round, as tb_warp_slot needs.
    for (u64 base = blockIdx.x * (u64)blockDim.x + threadIdx.x - lane; base < size;
         base += (u64)gridDim.x * blockDim.x) {
        u64 r = base + lane;
        bool want = r < size && ((internal[r >> 5] >> (r & 31)) & 1);
        u64 c = 0;
        if (want) {
            CkBoard b = ck_unrank(t, r);
            CkCount f;
            c = ck_for_each_successor(b, f);
            if (c > CK_SPAN_LEN) {
                tb_fail(fail, CK_FAIL_ILLEGAL, r);
                c = 0;
            }
        }
        // The warp's successors: an exclusive sum, one atomic for the total.
        u64 incl = c;
        for (u32 o = 1; o < 32; o <<= 1) {
            u64 y = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= o) incl += y;
        }
        u64 total = __shfl_sync(0xffffffffu, incl, 31);
        u64 start = 0;
        if (lane == 31 && total) start = atomicAdd(cursor, total);
        start = __shfl_sync(0xffffffffu, start, 31) + incl - c;
        u64 at = tb_warp_slot(want, live);
        if (want && at < room) {
            ranks[at] = r;
            spans[at] = start << CK_SPAN_SHIFT | c;
        }
    }
}

struct CkTargets {
    CkTables t;
    const u64* dep_base;
    u64* out;
    u64 room;
    u32 n;
    u64 code;
    __device__ bool operator()(const CkBoard& s) {
        if (n == room) {
            // More successors than the count found: never write past the list.
            code = CK_FAIL_ILLEGAL;
            return true;
        }
        u64 rank = 0;
        u32 di = ck_locate(t, s, &rank);
        u64 kind = ck_kind(t, di);
        if (kind == CK_INTERNAL) {
            out[n] = t.desc[(u64)di * CK_DESC] + rank;
        } else if (kind == CK_EXTERNAL) {
            const u64* w = t.desc + (u64)di * CK_DESC;
            out[n] = CK_DEP_BIT | (dep_base[w[5]] + w[0] + rank);
        } else {
            code = kind == CK_MISSING ? CK_FAIL_MISSING : CK_FAIL_ABSENT;
            return true;
        }
        n++;
        return false;
    }
};

// The successors of pending[i] at targets[spans[i] >> CK_SPAN_SHIFT ..], as
// many as spans[i] & CK_SPAN_LEN, in the rules' order (twin: the successors
// twin::pass walks).
extern "C" __global__ void checkers_fill_targets(CK_TABLE_ARGS, const u64* dep_base,
                                                 const u64* pending, const u64* spans, u64 n,
                                                 u64* targets, u64* fail) {
    CK_TABLES_INIT
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        CkBoard b = ck_unrank(t, pending[i]);
        CkTargets f;
        f.t = t;
        f.dep_base = dep_base;
        f.out = targets + (spans[i] >> CK_SPAN_SHIFT);
        f.room = spans[i] & CK_SPAN_LEN;
        f.n = 0;
        f.code = 0;
        ck_for_each_successor(b, f);
        if (f.code) tb_fail(fail, f.code, pending[i]);
        else if (f.n != f.room) tb_fail(fail, CK_FAIL_ILLEGAL, pending[i]);
    }
}

// Pass d as checkers_pass, over the successor lists of the *live positions
// still pending (twin: twin::pass): the same reads, the same decisions. The
// positions it leaves pending go on to ranks_next / spans_next (*live_next,
// cleared by the host, counts them), so that later passes read only what is
// still undecided; their order there varies from run to run, which no
// decision depends on (a pass reads only distances below its own, all final).
extern "C" __global__ void checkers_pass_listed(CK_LONG_ARGS, const u8* deps, u8* values,
                                                const u64* ranks, const u64* spans,
                                                const u64* live, u64* ranks_next,
                                                u64* spans_next, u64* live_next,
                                                const u64* targets, u32 d, u64* decided,
                                                u64* fail) {
    CK_LONG_INIT
    u64 mine = 0;
    u64 n = *live;
    u64 lane = threadIdx.x & 31u;
    // Whole warps run each round, as tb_warp_slot needs.
    for (u64 base = blockIdx.x * (u64)blockDim.x + threadIdx.x - lane; base < n;
         base += (u64)gridDim.x * blockDim.x) {
        u64 i = base + lane;
        bool keep = false;
        u64 r = 0, span = 0;
        if (i < n) {
            r = ranks[i];
            span = spans[i];
            bool hit = false, blocked = false, bad = false;
            u32 longest = 0;
            u64 k = span >> CK_SPAN_SHIFT;
            for (u64 end = k + (span & CK_SPAN_LEN); k < end; k++) {
                u64 x = targets[k];
                u32 v;
                if (x & CK_DEP_BIT) {
                    u64 at = x & ~CK_DEP_BIT;
                    v = deps[at];
                    if (v == 0) {
                        bad = true;
                        break;
                    }
                    v = ck_dep_value(lg, at, v);
                } else {
                    // Another thread may be writing it in this pass: read it once.
                    v = ck_own_value(lg, x, *(volatile const u8*)(values + x));
                }
                if (ck_pass_read(v, d, &hit, &blocked, &longest)) break;
            }
            u32 e = 0;
            bool decided_here = false;
            if (bad) {
                tb_fail(fail, CK_FAIL_ILLEGAL, r);
            } else if (d & 1) {
                if (hit) e = d, decided_here = true;
            } else if (!blocked) {
                e = longest + 1, decided_here = true;
            }
            if (decided_here) {
                if (ck_store(lg, values, r, e)) mine++;
                else tb_fail(fail, CK_FAIL_OVERFLOW, r);
            } else {
                keep = !bad;
            }
        }
        u64 at = tb_warp_slot(keep, live_next);
        if (keep) {
            ranks_next[at] = r;
            spans_next[at] = span;
        }
    }
    mine = tb_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(decided, mine);
}

struct CkList {
    CkTables t;
    u64 r;
    u32 n;
    u32* pids;
    u64* ranks;
    u64 sum;
    __device__ bool operator()(const CkBoard& s) {
        u64 rank = 0;
        u32 di = ck_locate(t, s, &rank);
        u32 pid = CK_NONE;
        u64 at = 0xffffffffffffffffull;
        if (di != CK_NONE) {
            pid = (u32)t.desc[(u64)di * CK_DESC + 6];
            at = t.desc[(u64)di * CK_DESC] + rank;
        }
        if (pids) {
            if (n < CK_MAX_SUCC) {
                pids[n] = pid;
                ranks[n] = at;
            }
        } else {
            sum += tb_mix64((r * 0x00000100000001b3ull) ^ ((u64)pid << 40) ^ at);
        }
        n++;
        return false;
    }
};

// The successors of ranks[i] (or of lo + i where ranks is null), i < n, as
// (partition id, rank in the partition) in the rules' order: counts[i] and
// the first CK_MAX_SUCC pairs at out_pids/out_ranks[i * CK_MAX_SUCC ..]. With
// out_pids null, only *checksum and *total: the sum of
// mix64(r * 0x100000001b3 ^ pid << 40 ^ rank) over every successor, and their
// number (twin: twin::successors_lists, twin::successors_checksum).
extern "C" __global__ void checkers_successors(CK_TABLE_ARGS, const u64* ranks, u64 lo, u64 n,
                                               u32* counts, u32* out_pids, u64* out_ranks,
                                               u64* checksum, u64* total) {
    CK_TABLES_INIT
    u64 sum = 0, many = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        u64 r = ranks ? ranks[i] : lo + i;
        if (r >= size) continue;
        CkBoard b = ck_unrank(t, r);
        CkList f;
        f.t = t;
        f.r = r;
        f.n = 0;
        f.pids = out_pids ? out_pids + i * CK_MAX_SUCC : 0;
        f.ranks = out_pids ? out_ranks + i * CK_MAX_SUCC : 0;
        f.sum = 0;
        u32 k = ck_for_each_successor(b, f);
        if (counts) counts[i] = k;
        sum += f.sum;
        many += k;
    }
    sum = tb_warp_sum(sum);
    many = tb_warp_sum(many);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(checksum, sum);
        atomicAdd(total, many);
    }
}

// ---- The streamed path (game::kernels::StreamTargets states the contract) ----
// One chunk of the partition (twin: stream::expand_twin). A first scan
// classifies every index: a position without moves is lost, every other
// one ongoing, internal where a move stays in the partition, and requests
// each successor in an earlier partition; a pass requests the successors
// inside the partition of each index flagged ONGOING | INTERNAL and still
// pending. `dep_bucket[j]` is the first bucket of dependency j (descriptor
// word 5), `own_bucket` the partition's own; CK_NO_BUCKET: none, and a
// move there (or to a missing or absent slice) breaks the contract.
#define CK_NO_BUCKET 0xffffffffffffffffull

struct CkStream {
    CkTables t;
    const u64* dep_bucket;
    u64 own_bucket;
    bool first_scan;
    bool internal;
    bool later;
    u64 lookup_chunk;
    u32 low_bits;
    u64 requester;
    u64* out;
    u32 cap;
    u32* count;
    __device__ bool operator()(const CkBoard& s) {
        u64 rank = 0;
        u32 di = ck_locate(t, s, &rank);
        u64 kind = ck_kind(t, di);
        bool inside = kind == CK_INTERNAL;
        u64 base = CK_NO_BUCKET;
        if (inside) base = own_bucket;
        else if (kind == CK_EXTERNAL) base = dep_bucket[t.desc[(u64)di * CK_DESC + 5]];
        if (base == CK_NO_BUCKET) {
            later = true;
            return true;
        }
        if (first_scan && inside) {
            internal = true;
        } else if (first_scan != inside) {
            u64 at = t.desc[(u64)di * CK_DESC] + rank;
            tb_emit(out, cap, count, tb_key(base, at, lookup_chunk, low_bits), requester);
        }
        return false;
    }
};

// Arguments: the tables, the buckets, then the generic tail of common.cuh.
extern "C" __global__ void checkers_stream_expand(CK_TABLE_ARGS, const u64* dep_bucket,
                                                  u64 own_bucket, u64 lo, u32 n, u32 first_scan,
                                                  u8* values, u32* flags, const u64* reached,
                                                  u32 has_reached, u64 lookup_chunk,
                                                  u32 low_bits, u64* out, u32 cap, u32* count,
                                                  u64* fail) {
    CK_TABLES_INIT
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        u64 r = lo + j;
        if (first_scan) {
            if (!tb_is_reached(reached, has_reached, j) || r >= size) {
                values[j] = TB_ILLEGAL;
                continue;
            }
        } else if (tb_flag(flags, j) != (TB_ONGOING | TB_INTERNAL) || values[j] != TB_PENDING ||
                   r >= size) {
            continue;
        }
        CkBoard b = ck_unrank(t, r);
        CkStream f;
        f.t = t;
        f.dep_bucket = dep_bucket;
        f.own_bucket = own_bucket;
        f.first_scan = first_scan != 0;
        f.internal = false;
        f.later = false;
        f.lookup_chunk = lookup_chunk;
        f.low_bits = low_bits;
        f.requester = r;
        f.out = out;
        f.cap = cap;
        f.count = count;
        u32 moves = ck_for_each_successor(b, f);
        if (f.later) {
            tb_fail(fail, TB_FAIL_LATER, r);
            continue;
        }
        if (moves == 0) {
            if (first_scan) values[j] = TB_LOST;
            else tb_fail(fail, TB_FAIL_NO_MOVES, r);
            continue;
        }
        if (first_scan) {
            values[j] = TB_PENDING;
            tb_set_flag(flags, j, f.internal ? (TB_ONGOING | TB_INTERNAL) : TB_ONGOING);
        }
    }
}

// ---- Frontier search (`tbforge analyse checkers --gpu`) ----
// The game tree of a few roots expanded breadth-first to a fixed depth, one
// level per buffer, then negamax backed up level by level. The CPU twin of
// every kernel here is in src/game/checkers/frontier.rs (same names without
// the checkers_frontier_ prefix); it documents the scores, which are those
// of the CPU search (src/search), bit for bit.

// A node: its board from the side to move, its parent's index in the level
// above, and `info`: plies since the last man move or capture (below
// CK_REV_LIMIT; only so far back can an ancestor be the same position),
// with CK_REPEAT set where the node repeats a position of its line.
struct CkNode {
    u32 men0, men1, kings0, kings1;
    u32 parent, info;
};
#define CK_REPEAT 0x80000000u
#define CK_REV_MASK 0xffffu

__device__ __forceinline__ CkBoard ck_node_board(const CkNode& n) {
    CkBoard b;
    b.men0 = n.men0;
    b.men1 = n.men1;
    b.kings0 = n.kings0;
    b.kings1 = n.kings1;
    return b;
}

__device__ __forceinline__ const CkNode* ck_level(const u64* levels, u32 l) {
    return (const CkNode*)levels[l];
}

// Whether the side to move has a move (rules::Position::has_move).
__device__ __forceinline__ bool ck_has_move(const CkBoard& b) {
    u32 empty = ~(b.men0 | b.men1 | b.kings0 | b.kings1);
    u32 opp = b.men1 | b.kings1;
    for (int king = 0; king < 2; king++) {
        u32 dirs = king ? 4 : 2;
        u32 rest = king ? b.kings0 : b.men0;
        while (rest) {
            u32 s = __ffs(rest) - 1;
            rest &= rest - 1;
            for (u32 d = 0; d < dirs; d++) {
                u32 t = ck_neighbour(s, d, 1);
                if (t >= 32) continue;
                if (empty & (1u << t)) return true;
                u32 land = ck_neighbour(s, d, 2);
                if (land < 32 && (opp & (1u << t)) && (empty & (1u << land))) return true;
            }
        }
    }
    return false;
}

// Rows advanced by a set of men, summed (row = square / 4): bit k of the row
// number is set on the squares of these masks.
__device__ __forceinline__ int ck_rows(u32 men) {
    return 4 * __popc(men & 0xffff0000u) + 2 * __popc(men & 0xff00ff00u) +
           __popc(men & 0xf0f0f0f0u);
}

// The search's evaluation (checkers::eval::evaluate): 100 a man, 130 a
// king, 3 a row a man has advanced, the mover's minus the opponent's.
__device__ __forceinline__ int ck_evaluate(const CkBoard& b) {
    int m0 = __popc(b.men0), m1 = __popc(b.men1);
    int mine = 100 * m0 + 130 * __popc(b.kings0) + 3 * ck_rows(b.men0);
    int theirs = 100 * m1 + 130 * __popc(b.kings1) + 3 * (7 * m1 - ck_rows(b.men1));
    return mine - theirs;
}

// The child's plies since a man move or capture, from its parent's `rev`:
// 0 where the move was one (the men sets or the number of kings changed).
__device__ __forceinline__ u32 ck_child_rev(const CkBoard& p, const CkBoard& c, u32 rev) {
    bool same = c.men0 == __brev(p.men1) && __brev(c.men1) == p.men0 &&
                __popc(c.kings0 | c.kings1) == __popc(p.kings0 | p.kings1);
    return same ? min(rev + 1, CK_REV_MASK) : 0u;
}

// Whether board c, whose parent is node `idx` of level `level`, equals one
// of its last `rev` ancestors (a position of its line: the search scores it
// a draw). Only those can: a man move or a capture is never undone.
__device__ __forceinline__ bool ck_repeats(const u64* levels, u32 level, u32 idx, const CkBoard& c,
                                           u32 rev) {
    for (u32 k = 0; k < rev; k++) {
        const CkNode& a = ck_level(levels, level - k)[idx];
        if (a.men0 == c.men0 && a.men1 == c.men1 && a.kings0 == c.kings0 && a.kings1 == c.kings1)
            return true;
        if (k == level) break;
        idx = a.parent;
    }
    return false;
}

struct CkCountAll {
    __device__ bool operator()(const CkBoard&) { return false; }
};

// Children of every node of level `level` (twin: frontier::count): 0 for a
// repetition, which the search does not expand.
extern "C" __global__ void checkers_frontier_count(const u64* levels, u32 level, u64 n,
                                                   u32* counts) {
    const CkNode* nodes = ck_level(levels, level);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        CkNode nd = nodes[i];
        CkCountAll f;
        counts[i] = (nd.info & CK_REPEAT) ? 0u : ck_for_each_successor(ck_node_board(nd), f);
    }
}

// Exclusive prefix sums of tiles of CK_SCAN_TILE values (twin:
// frontier::scan): `in32` (or `in64` where `in32` is null) to `out`, and
// each tile's total to tile_sums. One block of CK_SCAN_THREADS per tile.
#define CK_SCAN_THREADS 256
#define CK_SCAN_ITEMS 8
#define CK_SCAN_TILE (CK_SCAN_THREADS * CK_SCAN_ITEMS)
extern "C" __global__ void checkers_frontier_scan_tiles(const u32* in32, const u64* in64, u64 n,
                                                        u64* out, u64* tile_sums) {
    __shared__ u64 warp_sums[CK_SCAN_THREADS / 32];
    u64 base = blockIdx.x * (u64)CK_SCAN_TILE + threadIdx.x * (u64)CK_SCAN_ITEMS;
    u64 v[CK_SCAN_ITEMS];
    u64 sum = 0;
    for (int k = 0; k < CK_SCAN_ITEMS; k++) {
        u64 i = base + k;
        v[k] = i < n ? (in32 ? (u64)in32[i] : in64[i]) : 0ull;
        sum += v[k];
    }
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    u64 incl = sum;
    for (int d = 1; d < 32; d <<= 1) {
        u64 o = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += o;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        u64 w = lane < CK_SCAN_THREADS / 32 ? warp_sums[lane] : 0ull;
        for (int d = 1; d < 32; d <<= 1) {
            u64 o = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= d) w += o;
        }
        if (lane < CK_SCAN_THREADS / 32) warp_sums[lane] = w;
    }
    __syncthreads();
    u64 run = incl - sum + (warp ? warp_sums[warp - 1] : 0ull);
    for (int k = 0; k < CK_SCAN_ITEMS; k++) {
        u64 i = base + k;
        if (i < n) out[i] = run;
        run += v[k];
    }
    if (threadIdx.x == CK_SCAN_THREADS - 1) tile_sums[blockIdx.x] = run;
}

// Adds each tile's offset (the scanned tile sums) to its values.
extern "C" __global__ void checkers_frontier_scan_add(u64* out, u64 n, const u64* tile_offsets) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x)
        out[i] += tile_offsets[i / CK_SCAN_TILE];
}

struct CkWrite {
    const u64* levels;
    u32 level, parent, rev;
    CkBoard from;
    CkNode* out;
    u64 at;
    __device__ bool operator()(const CkBoard& c) {
        u32 r = ck_child_rev(from, c, rev);
        bool rep = r && ck_repeats(levels, level, parent, c, r);
        CkNode nd;
        nd.men0 = c.men0;
        nd.men1 = c.men1;
        nd.kings0 = c.kings0;
        nd.kings1 = c.kings1;
        nd.parent = parent;
        nd.info = r | (rep ? CK_REPEAT : 0u);
        out[at++] = nd;
        return false;
    }
};

// The next level (twin: frontier::expand): node i's children, in the order
// of the rules, at out[offsets[i] ..].
extern "C" __global__ void checkers_frontier_expand(const u64* levels, u32 level, u64 n,
                                                    const u64* offsets, CkNode* out) {
    const CkNode* nodes = ck_level(levels, level);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        CkNode nd = nodes[i];
        if (nd.info & CK_REPEAT) continue;
        CkWrite f;
        f.levels = levels;
        f.level = level;
        f.parent = (u32)i;
        f.rev = nd.info & CK_REV_MASK;
        f.from = ck_node_board(nd);
        f.out = out;
        f.at = offsets[i];
        ck_for_each_successor(f.from, f);
    }
}

struct CkLeaf {
    const u64* levels;
    u32 level, parent, rev;
    CkBoard from;
    int win, least;
    __device__ bool operator()(const CkBoard& c) {
        int s;
        if (!ck_has_move(c)) {
            s = -(win - (int)(level + 1));
        } else {
            u32 r = ck_child_rev(from, c, rev);
            s = (r && ck_repeats(levels, level, parent, c, r)) ? 0 : ck_evaluate(c);
        }
        // The least score, negated by the caller: see checkers_frontier_backup.
        least = min(least, s);
        return false;
    }
};

// The last level's values (twin: frontier::leaves): the children of the
// stored level `level` scored where they stand (a loss without a move, a
// draw on a repetition, else the evaluation), never stored, and each node
// the best of them for its side; *leaves counts the children.
extern "C" __global__ void checkers_frontier_leaves(const u64* levels, u32 level, u64 n, int win,
                                                    int* values, u64* leaves) {
    const CkNode* nodes = ck_level(levels, level);
    u64 many = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        CkNode nd = nodes[i];
        if (nd.info & CK_REPEAT) {
            values[i] = 0;
            continue;
        }
        CkLeaf f;
        f.levels = levels;
        f.level = level;
        f.parent = (u32)i;
        f.rev = nd.info & CK_REV_MASK;
        f.from = ck_node_board(nd);
        f.win = win;
        f.least = 2147483647;
        u32 k = ck_for_each_successor(f.from, f);
        values[i] = k ? -f.least : -(win - (int)level);
        many += k;
    }
    many = tb_warp_sum(many);
    if ((threadIdx.x & 31) == 0) atomicAdd(leaves, many);
}

// A stored level's values from its children's (twin: frontier::backup):
// negamax, a repetition a draw, a node without children a loss.
extern "C" __global__ void checkers_frontier_backup(const u64* levels, u32 level, u64 n,
                                                    const u64* offsets, const int* child_values,
                                                    int win, int* values) {
    const CkNode* nodes = ck_level(levels, level);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n;
         i += (u64)gridDim.x * blockDim.x) {
        u64 lo = offsets[i], hi = offsets[i + 1];
        int v;
        if (nodes[i].info & CK_REPEAT) {
            v = 0;
        } else if (lo == hi) {
            v = -(win - (int)level);
        } else {
            // The best for the mover is the least of the children's values,
            // negated. Not max(v, -child): ptxas for sm_90 (CUDA 13.0, driver
            // 580) turned that loop into the maximum of the children's
            // absolute values (seen on an H100: children 94 94 97 97 97 97
            // gave 97, not -94).
            int least = 2147483647;
            for (u64 j = lo; j < hi; j++) least = min(least, child_values[j]);
            v = -least;
        }
        values[i] = v;
    }
}
