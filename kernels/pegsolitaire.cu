// Peg solitaire on the English board (game::pegsolitaire): the values of one
// partition (a number of pegs) from those of the partition with one peg fewer,
// where every jump leads (seed 001's selection games, binomial ranks). CPU
// twin: pegsolitaire::kernels::solve_partition_twin (same loop, same bytes as
// the generic solver's first scan: the goal at distance 0, else one more than
// the nearest successor that reaches the goal, else "unreachable").
// Index: hash::Binomial's rank of the 33-bit peg mask among those with k pegs.
#include "common.cuh"

typedef unsigned char u8;

#define PG_CELLS 33
#define PG_JUMPS 76
#define PG_BINOM_SIDE 34  // C(n, k) at n * 34 + k, n, k <= 33
#define PG_DRAW 1u
#define PG_FAIL_LOWER 1ull  // a jump reaches an index without a value

// jumps[3 * j ..]: from, over, to of jump j, in the game's order.
#define PG_TABLE_ARGS const u8 *jumps, const u64 *binom

struct PgCtx {
    const u8* j;
    const u64* c;
};

#define PG_PROLOGUE                                                                    \
    __shared__ u8 pg_j[3 * PG_JUMPS];                                                  \
    __shared__ u64 pg_c[PG_BINOM_SIDE * PG_BINOM_SIDE];                                \
    for (u32 i = threadIdx.x; i < 3 * PG_JUMPS; i += blockDim.x) pg_j[i] = jumps[i];   \
    for (u32 i = threadIdx.x; i < PG_BINOM_SIDE * PG_BINOM_SIDE; i += blockDim.x) pg_c[i] = binom[i]; \
    __syncthreads();                                                                   \
    PgCtx t;                                                                           \
    t.j = pg_j;                                                                        \
    t.c = pg_c;

__device__ __forceinline__ u64 pg_binom(const PgCtx& t, u32 n, u32 k) { return t.c[n * PG_BINOM_SIDE + k]; }

// hash::Binomial::rank of a mask with k pegs.
__device__ __forceinline__ u64 pg_rank(const PgCtx& t, u32 k, u64 m) {
    u64 below = 0;
    u32 ones = k;
    while (m) {
        u32 i = __ffsll((long long)m) - 1;
        below += pg_binom(t, PG_CELLS - 1 - i, ones);
        ones--;
        m &= m - 1;
    }
    return pg_binom(t, PG_CELLS, k) - 1 - below;
}

// hash::Binomial::unrank (r below C(33, k)).
__device__ __forceinline__ u64 pg_unrank(const PgCtx& t, u32 k, u64 r) {
    u64 mask = 0;
    u32 left = k;
    for (u32 i = 0; i < PG_CELLS && left; i++) {
        u64 with = pg_binom(t, PG_CELLS - 1 - i, left - 1);
        if (r < with) {
            mask |= 1ull << i;
            left--;
        } else {
            r -= with;
        }
    }
    return mask;
}

// The values of the partition with k pegs (`size` indices) from `lower`, the
// partition with k - 1 pegs (`lower_size` values; none for k = 0); `goal` is
// the goal's mask.
extern "C" __global__ void pg_solve(PG_TABLE_ARGS, u32 k, u64 size, const u8* lower, u64 lower_size, u64 goal,
                                    u8* values, u64* fail) {
    PG_PROLOGUE
    for (u64 r = blockIdx.x * (u64)blockDim.x + threadIdx.x; r < size; r += (u64)gridDim.x * blockDim.x) {
        u64 board = pg_unrank(t, k, r);
        if (board == goal) {
            values[r] = 2;
            continue;
        }
        u32 best = 0xffffffffu;
        for (u32 j = 0; j < PG_JUMPS; j++) {
            u64 from = 1ull << t.j[3 * j], over = 1ull << t.j[3 * j + 1], to = 1ull << t.j[3 * j + 2];
            if (!(board & from) || !(board & over) || (board & to)) continue;
            u64 s = pg_rank(t, k - 1, board ^ (from | over | to));
            u32 v = s < lower_size ? lower[s] : 0;
            if (v == 0) {
                tb_fail(fail, PG_FAIL_LOWER, r);
                continue;
            }
            if (v >= 2) best = min(best, v - 2);
        }
        values[r] = best == 0xffffffffu ? PG_DRAW : (u8)(best + 3);
    }
}

// The forward search, one layer: every index of the partition with k pegs
// whose bit is set in `reached` sets the bits of its successors in `next`
// (the partition with k - 1 pegs); *found counts the bits this call set.
extern "C" __global__ void pg_expand(PG_TABLE_ARGS, u32 k, u64 nwords, const u64* reached, u64* next,
                                     u64* found) {
    PG_PROLOGUE
    u64 mine = 0;
    for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < nwords; w += (u64)gridDim.x * blockDim.x) {
        for (u64 bits = reached[w]; bits; bits &= bits - 1) {
            u64 board = pg_unrank(t, k, w * 64 + (__ffsll((long long)bits) - 1));
            for (u32 j = 0; j < PG_JUMPS; j++) {
                u64 from = 1ull << t.j[3 * j], over = 1ull << t.j[3 * j + 1], to = 1ull << t.j[3 * j + 2];
                if (!(board & from) || !(board & over) || (board & to)) continue;
                u64 s = pg_rank(t, k - 1, board ^ (from | over | to));
                u64 bit = 1ull << (s & 63);
                if (!(atomicOr(&next[s >> 6], bit) & bit)) mine++;
            }
        }
    }
    mine = tb_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(found, mine);
}
