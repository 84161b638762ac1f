// Fox-and-Geese (game::foxandgeese): one level (a number of geese) solved by
// retrograde analysis driven by predecessors, the device twin of
// foxandgeese::twin::LevelSolver, decision for decision:
//   fg_init        every index's first look: illegal (not its class's smallest
//                  image), lost (the side to move is stuck), decided through
//                  captures alone, or open with a counter of 8 per move that
//                  stays in the level, its best capture win (`cand`) and what
//                  its captures allow (`ext`);
//   fg_candidates  at odd distance d, the open positions whose best capture
//                  wins at d are won at d;
//   fg_expand      every position decided at d steps back once: a loss wins
//                  its open predecessors at d + 1, a win takes its share off
//                  their counters, and the last share loses them after the
//                  longer of d and their captures' longest win.
// The twin lists each distance's decisions in a bucket; here the bucket of
// distance d is the set of bytes equal to d + 2, found by a scan (every byte is
// written once, always with a distance beyond the pass that writes it), so no
// list of billions of indices is kept. The bytes do not depend on thread order:
// an even pass only turns open bytes into the one win byte it writes, an odd
// pass only counts down, and exactly one decrement ends each counter.
// The index (foxandgeese::index): side to move x fox representative (block) x
// binomial rank of the geese over the 32 points other than the fox's; the
// geese are first mapped by the symmetry taking the fox to its representative,
// and among the representative's stabiliser the smallest image is the class's.
#include "common.cuh"

typedef unsigned char u8;

#define FG_CELLS 33
#define FG_NONE 255u
#define FG_OPEN 1u
#define FG_CANNOT_LOSE 255u
#define FG_MAX_DISTANCE 253u
// Failure codes (top byte of *fail, the index below it; tb_fail keeps the lowest).
#define FG_FAIL_NO_LOWER 1ull  // a capture leads to an index without a value one level down
#define FG_FAIL_DISTANCE 2ull  // a distance beyond what a value byte holds

// The board tables (FoxAndGeese's Index::device_board): byte offsets.
#define FG_STEP_AT 0      // step[p * 8 + dir]: neighbour or FG_NONE
#define FG_REP_AT 264     // rep[p]: the representative of p's class
#define FG_BLOCK_AT 297   // block[r]: the index block of representative r
#define FG_REPS_AT 330    // reps[b]: the representative of block b (8 slots)
#define FG_TOREP_AT 338   // to_rep[p * 8 + i]: the symmetries taking p to rep[p]
#define FG_TOREPN_AT 602  // to_rep_n[p]: how many
#define FG_BOARD_BYTES 640
#define FG_BINOM (FG_CELLS * FG_CELLS)  // C(n, k) at n * 33 + k, 0 where k > n

struct FgCtx {
    const u8* b;      // the board tables (shared memory)
    const u64* c;     // the binomials (shared memory)
    const u64* maps;  // maps[(g * 5 + i) * 256 + byte]: symmetry g's image of byte i
    u32 blocks;
};

// Loads the tables into shared memory; every thread of the block must call it.
#define FG_PROLOGUE                                                              \
    __shared__ u8 fg_board[FG_BOARD_BYTES];                                      \
    __shared__ u64 fg_binom[FG_BINOM];                                           \
    for (u32 i = threadIdx.x; i < FG_BOARD_BYTES; i += blockDim.x) fg_board[i] = board[i]; \
    for (u32 i = threadIdx.x; i < FG_BINOM; i += blockDim.x) fg_binom[i] = binom[i];       \
    __syncthreads();                                                             \
    FgCtx t;                                                                     \
    t.b = fg_board;                                                              \
    t.c = fg_binom;                                                              \
    t.maps = maps;                                                               \
    t.blocks = blocks;

#define FG_TABLE_ARGS const u8 *board, const u64 *binom, const u64 *maps, u32 blocks

__device__ __forceinline__ u64 fg_c(const FgCtx& t, u32 n, u32 k) { return t.c[n * FG_CELLS + k]; }

// The image of a set of points under symmetry g: five look-ups.
__device__ __forceinline__ u64 fg_map(const FgCtx& t, u32 g, u64 mask) {
    const u64* m = t.maps + (u64)g * 5 * 256;
    return __ldg(m + (mask & 0xff)) | __ldg(m + 256 + ((mask >> 8) & 0xff)) |
           __ldg(m + 512 + ((mask >> 16) & 0xff)) | __ldg(m + 768 + ((mask >> 24) & 0xff)) |
           __ldg(m + 1024 + ((mask >> 32) & 0xff));
}

// hash::Binomial::rank over the 32 goose points with k geese.
__device__ __forceinline__ u64 fg_sub_rank(const FgCtx& t, u32 k, u64 m) {
    u64 below = 0;
    u32 ones = k;
    while (m) {
        u32 i = __ffsll((long long)m) - 1;
        below += fg_c(t, 31 - i, ones);
        ones--;
        m &= m - 1;
    }
    return fg_c(t, 32, k) - 1 - below;
}

// hash::Binomial::unrank (r below C(32, k)): cell by cell, a goose where the
// rank falls among the subsets that have one there.
__device__ __forceinline__ u64 fg_sub_unrank(const FgCtx& t, u32 k, u64 r) {
    u64 mask = 0;
    u32 left = k;
    for (u32 i = 0; i < 32 && left; i++) {
        u64 with = fg_c(t, 31 - i, left - 1);
        if (r < with) {
            mask |= 1ull << i;
            left--;
        } else {
            r -= with;
        }
    }
    return mask;
}

// Index::rank; *canon gets the class's geese with the fox on its representative.
__device__ __forceinline__ u64 fg_rank(const FgCtx& t, u32 k, u32 fox, u64 geese, bool fox_to_move,
                                       u64* canon) {
    u32 r = t.b[FG_REP_AT + fox];
    u32 n = t.b[FG_TOREPN_AT + fox];
    u64 best = ~0ull;
    for (u32 i = 0; i < n; i++) best = min(best, fg_map(t, t.b[FG_TOREP_AT + fox * 8 + i], geese));
    *canon = best;
    u64 low = best & ((1ull << r) - 1);
    u64 high = (best >> (r + 1)) << r;
    u64 turn = fox_to_move ? 0 : 1;
    return (turn * t.blocks + t.b[FG_BLOCK_AT + r]) * fg_c(t, 32, k) + fg_sub_rank(t, k, low | high);
}

// Index::unrank: false for an index that is not its class's smallest image.
__device__ __forceinline__ bool fg_unrank(const FgCtx& t, u32 k, u64 r, u32* fox, u64* geese,
                                          bool* fox_to_move) {
    u64 sub = fg_c(t, 32, k);
    if (r >= 2ull * t.blocks * sub) return false;
    u64 outer = r / sub, inner = r - outer * sub;
    *fox_to_move = outer < t.blocks;
    u32 f = t.b[FG_REPS_AT + (u32)(outer % t.blocks)];
    u64 m = fg_sub_unrank(t, k, inner);
    u64 g = (m & ((1ull << f) - 1)) | ((m >> f) << (f + 1));
    u32 n = t.b[FG_TOREPN_AT + f];
    for (u32 i = 0; i < n; i++)
        if (fg_map(t, t.b[FG_TOREP_AT + f * 8 + i], g) < g) return false;
    *fox = f;
    *geese = g;
    return true;
}

// Index::fixing of the fox on representative `rep` with geese `geese`.
__device__ __forceinline__ u32 fg_fixing(const FgCtx& t, u32 rep, u64 geese) {
    u32 n = t.b[FG_TOREPN_AT + rep], fixed = 0;
    for (u32 i = 0; i < n; i++) fixed += fg_map(t, t.b[FG_TOREP_AT + rep * 8 + i], geese) == geese;
    return fixed;
}

__device__ __forceinline__ u32 fg_step(const FgCtx& t, u32 p, u32 d) { return t.b[FG_STEP_AT + p * 8 + d]; }

// Geometry::fox_can_move.
__device__ __forceinline__ bool fg_fox_can_move(const FgCtx& t, u32 fox, u64 geese) {
    u64 occupied = geese | (1ull << fox);
    for (u32 d = 0; d < 8; d++) {
        u32 n = fg_step(t, fox, d);
        if (n == FG_NONE) continue;
        if (!((occupied >> n) & 1)) return true;
        u32 beyond = fg_step(t, n, d);
        if (beyond != FG_NONE && !((occupied >> beyond) & 1)) return true;
    }
    return false;
}

// Geometry::geese_can_move.
__device__ __forceinline__ bool fg_geese_can_move(const FgCtx& t, u32 fox, u64 geese) {
    u64 occupied = geese | (1ull << fox);
    for (u64 m = geese; m; m &= m - 1) {
        u32 g = __ffsll((long long)m) - 1;
        for (u32 d = 0; d < 8; d++) {
            u32 n = fg_step(t, g, d);
            if (n != FG_NONE && !((occupied >> n) & 1)) return true;
        }
    }
    return false;
}

// What a position's moves give at its first look (the twin's init loop).
struct FgFirst {
    u32 internal;  // moves that stay in the level
    bool has_win;  // a capture reaches a loss for the side moving there
    u32 best_win;  // the shortest such loss
    u32 longest;   // the longest win for the other side through a capture
    bool all_lost; // no capture reaches a draw
    bool bad;      // a capture reaches an index without a value
    u64 captures;  // digest of the capture targets' indices, in move order
};

__device__ __forceinline__ FgFirst fg_first(const FgCtx& t, u32 k, u32 fox, u64 geese, bool fox_to_move,
                                            const u8* lower, u64 lower_size) {
    FgFirst f = {0, false, 0, 0, true, false, 0};
    u64 occupied = geese | (1ull << fox);
    if (fox_to_move) {
        for (u32 d = 0; d < 8; d++) {
            u32 n = fg_step(t, fox, d);
            if (n == FG_NONE) continue;
            if (!((occupied >> n) & 1)) {
                f.internal++;
                continue;
            }
            u32 beyond = fg_step(t, n, d);
            if (beyond == FG_NONE || ((occupied >> beyond) & 1)) continue;
            u64 canon;
            u64 sr = fg_rank(t, k - 1, beyond, geese & ~(1ull << n), false, &canon);
            f.captures = tb_mix64(f.captures ^ sr);
            u32 b = sr < lower_size ? lower[sr] : 0;
            if (b == 0) {
                f.bad = true;
                continue;
            }
            if (b == 1) {
                f.all_lost = false;
                continue;
            }
            u32 e = b - 2;
            if (e % 2 == 0) {
                f.best_win = f.has_win ? min(f.best_win, e) : e;
                f.has_win = true;
            } else {
                f.longest = max(f.longest, e);
            }
        }
    } else {
        for (u64 m = geese; m; m &= m - 1) {
            u32 g = __ffsll((long long)m) - 1;
            for (u32 d = 0; d < 8; d++) {
                u32 n = fg_step(t, g, d);
                if (n != FG_NONE && !((occupied >> n) & 1)) f.internal++;
            }
        }
    }
    return f;
}

// The first look at every index of the level. `values`, `counters` (a u16 per
// index), `ext` and `cand` hold `size` entries, zeroed by the host; `lower`
// the level below's `lower_size` values; *top ends as 1 + the largest distance
// any bucket or candidate got (0: none).
extern "C" __global__ void fg_init(FG_TABLE_ARGS, u32 k, u64 size, const u8* lower, u64 lower_size,
                                   u8* values, u16* counters, u8* ext, u8* cand, u32* top, u64* fail) {
    FG_PROLOGUE
    u32 mine = 0;
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < size; r += (u64)gridDim.x * blockDim.x) {
        u32 fox;
        u64 geese;
        bool fox_to_move;
        if (!fg_unrank(t, k, r, &fox, &geese, &fox_to_move)) continue;
        bool stuck = fox_to_move ? !fg_fox_can_move(t, fox, geese) : !fg_geese_can_move(t, fox, geese);
        if (stuck) {
            values[r] = 2;
            mine = max(mine, 1u);
            continue;
        }
        FgFirst f = fg_first(t, k, fox, geese, fox_to_move, lower, lower_size);
        if (f.bad) {
            tb_fail(fail, FG_FAIL_NO_LOWER, r);
            continue;
        }
        counters[r] = (u16)(8 * f.internal);
        values[r] = FG_OPEN;
        if (f.internal == 0) {
            bool decided = f.has_win || f.all_lost;
            u32 d = f.has_win ? f.best_win + 1 : f.longest + 1;
            if (decided) {
                if (d > FG_MAX_DISTANCE) {
                    tb_fail(fail, FG_FAIL_DISTANCE, r);
                    continue;
                }
                values[r] = (u8)(d + 2);
                mine = max(mine, d + 1);
            }
            continue;
        }
        if (f.has_win) {
            cand[r] = (u8)(f.best_win + 1);
            mine = max(mine, f.best_win + 2);
        }
        ext[r] = (f.has_win || !f.all_lost) ? FG_CANNOT_LOSE : (u8)min(f.longest, FG_CANNOT_LOSE - 1u);
    }
    if (mine) atomicMax(top, mine);
}

// Odd distance d: the open positions whose best capture wins at d are won.
extern "C" __global__ void fg_candidates(u64 size, u32 d, u8* values, const u8* cand) {
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < size; r += (u64)gridDim.x * blockDim.x)
        if (cand[r] == d && values[r] == FG_OPEN) values[r] = (u8)(d + 2);
}

// Turns byte i of `values` from `from` into `to` if it is still `from`.
__device__ __forceinline__ bool fg_claim(u8* values, u64 i, u32 from, u32 to) {
    u32* word = (u32*)(values + (i & ~3ull));
    u32 shift = (u32)(i & 3) * 8;
    u32 old = *(volatile u32*)word;
    for (;;) {
        if (((old >> shift) & 0xff) != from) return false;
        u32 seen = atomicCAS(word, old, (old & ~(0xffu << shift)) | (to << shift));
        if (seen == old) return true;
        old = seen;
    }
}

// One predecessor q of a position decided at d (the twin's `visit`).
__device__ __forceinline__ void fg_visit(const FgCtx& t, u32 k, u32 d, bool lost_here, u32 fixing_here,
                                         u32 fox, u64 geese, bool fox_to_move, u8* values, u32* counters,
                                         const u8* ext, u32* mine, u64* fail) {
    u64 canon;
    u64 q = fg_rank(t, k, fox, geese, fox_to_move, &canon);
    if (*(volatile u8*)(values + q) != FG_OPEN) return;
    if (lost_here) {
        if (fg_claim(values, q, FG_OPEN, d + 3)) *mine = max(*mine, d + 2);
        return;
    }
    u32 step = 8 * fg_fixing(t, t.b[FG_REP_AT + fox], canon) / fixing_here;
    u32 shift = (u32)(q & 1) * 16;
    u32 old = (atomicSub(counters + (q >> 1), step << shift) >> shift) & 0xffff;
    u32 x = ext[q];
    if (old == step && x != FG_CANNOT_LOSE) {
        u32 e = max(d, x) + 1;
        if (e > FG_MAX_DISTANCE) {
            tb_fail(fail, FG_FAIL_DISTANCE, q);
            return;
        }
        values[q] = (u8)(e + 2);
        *mine = max(*mine, e + 1);
    }
}

// Every position decided at distance d steps back once. `counters` holds two
// u16 counters a word (index i in the half i & 1), `values` is padded to a
// multiple of 4 bytes (fg_claim's words).
extern "C" __global__ void fg_expand(FG_TABLE_ARGS, u32 k, u64 size, u32 d, u8* values, u32* counters,
                                     const u8* ext, u32* top, u64* fail) {
    FG_PROLOGUE
    u32 mine = 0;
    bool lost_here = d % 2 == 0;
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < size; r += (u64)gridDim.x * blockDim.x) {
        if (values[r] != d + 2) continue;
        u32 fox;
        u64 geese;
        bool fox_to_move;
        if (!fg_unrank(t, k, r, &fox, &geese, &fox_to_move)) continue;
        if (d + 1 > FG_MAX_DISTANCE) {
            tb_fail(fail, FG_FAIL_DISTANCE, r);
            continue;
        }
        u32 fixing_here = fg_fixing(t, fox, geese);
        u64 occupied = geese | (1ull << fox);
        if (fox_to_move) {
            // The geese moved last: one of them steps back.
            for (u64 m = geese; m; m &= m - 1) {
                u32 y = __ffsll((long long)m) - 1;
                for (u32 dir = 0; dir < 8; dir++) {
                    u32 x = fg_step(t, y, dir);
                    if (x != FG_NONE && !((occupied >> x) & 1))
                        fg_visit(t, k, d, lost_here, fixing_here, fox, (geese & ~(1ull << y)) | (1ull << x),
                                 false, values, counters, ext, &mine, fail);
                }
            }
        } else {
            // The fox stepped last (its captures come from the level above).
            for (u32 dir = 0; dir < 8; dir++) {
                u32 x = fg_step(t, fox, dir);
                if (x != FG_NONE && !((occupied >> x) & 1))
                    fg_visit(t, k, d, lost_here, fixing_here, x, geese, true, values, counters, ext, &mine,
                             fail);
            }
        }
    }
    if (mine) atomicMax(top, mine);
}

// The device check (FgCuda::check): for each listed (level, index) pair
// ((k << 56) | index), out[5 * i ..] gets the unranked position (fox | side << 8
// | 1 << 9 where legal, 0 where not), its geese, its index ranked back, its
// moves' digest (moves staying in the level << 48 | Index::fixing << 40, and
// the capture targets' digest) and its steps back's digest (each predecessor's
// index and counter share, in the order fg_expand visits them), as
// foxandgeese::twin::check_digest computes them.
extern "C" __global__ void fg_check(FG_TABLE_ARGS, const u64* pairs, u64 n, u64* out) {
    FG_PROLOGUE
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        u32 k = (u32)(pairs[i] >> 56);
        u64 r = pairs[i] & 0x00ffffffffffffffull;
        u64* o = out + 5 * i;
        u32 fox;
        u64 geese;
        bool fox_to_move;
        if (!fg_unrank(t, k, r, &fox, &geese, &fox_to_move)) {
            o[0] = o[1] = o[2] = o[3] = o[4] = 0;
            continue;
        }
        u64 canon;
        o[0] = fox | ((u64)fox_to_move << 8) | (1ull << 9);
        o[1] = geese;
        o[2] = fg_rank(t, k, fox, geese, fox_to_move, &canon);
        u32 fixing_here = fg_fixing(t, fox, geese);
        FgFirst f = fg_first(t, k, fox, geese, fox_to_move, 0, 0);
        o[3] = (((u64)f.internal << 48) | ((u64)fixing_here << 40)) ^ f.captures;
        u64 back = 0;
        u64 occupied = geese | (1ull << fox);
        if (fox_to_move) {
            for (u64 m = geese; m; m &= m - 1) {
                u32 y = __ffsll((long long)m) - 1;
                for (u32 dir = 0; dir < 8; dir++) {
                    u32 x = fg_step(t, y, dir);
                    if (x == FG_NONE || ((occupied >> x) & 1)) continue;
                    u64 q = fg_rank(t, k, fox, (geese & ~(1ull << y)) | (1ull << x), false, &canon);
                    u32 share = 8 * fg_fixing(t, t.b[FG_REP_AT + fox], canon) / fixing_here;
                    back = tb_mix64(back ^ q ^ ((u64)share << 56));
                }
            }
        } else {
            for (u32 dir = 0; dir < 8; dir++) {
                u32 x = fg_step(t, fox, dir);
                if (x == FG_NONE || ((occupied >> x) & 1)) continue;
                u64 q = fg_rank(t, k, x, geese, true, &canon);
                u32 share = 8 * fg_fixing(t, t.b[FG_REP_AT + x], canon) / fixing_here;
                back = tb_mix64(back ^ q ^ ((u64)share << 56));
            }
        }
        o[4] = back;
    }
}
