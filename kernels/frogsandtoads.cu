// Frogs-and-Toads (game::frogsandtoads): the two breadth-first searches over
// the puzzle's whole index (seed 001, Table 0.6), as the permutation puzzles'
// kernels run them: the two-bit BFS forward from the start (Korf's codes, each
// index expanded once) and the byte BFS from the goal that gives every index
// its distance (every move can be taken back). CPU twins: game::index_bfs on
// FrogsAndToads's own moves (same steps, same bytes).
// Index: empty cell * C(cells - 1, pieces) + the binomial rank of the black
// pieces among the other cells (hash::Binomial's order); a move takes the
// piece on one of the empty cell's (at most 8) sources into it.
#include "common.cuh"

typedef unsigned char u8;

#define FT_MAX_CELLS 31
#define FT_SOURCES 8
#define FT_NONE 255u
#define FT_BINOM_SIDE 32  // C(n, k) at n * 32 + k for n, k < 32 (n <= 30 fits a u32)

// sources[e * 8 + j]: where a piece comes from into empty cell e (FT_NONE: no
// move); binom: the binomials; the board's cells, pieces a colour, and
// sub = C(cells - 1, pieces), the indices per empty cell.
#define FT_TABLE_ARGS const u8 *sources, const u32 *binom, u32 cells, u32 pieces, u64 sub

struct FtCtx {
    const u8* src;
    const u32* c;
    u32 cells, pieces;
    u64 sub;
};

// Loads the tables into shared memory; every thread of the block must call it.
#define FT_PROLOGUE                                                                           \
    __shared__ u8 ft_src[FT_MAX_CELLS * FT_SOURCES];                                          \
    __shared__ u32 ft_c[FT_BINOM_SIDE * FT_BINOM_SIDE];                                       \
    for (u32 i = threadIdx.x; i < FT_MAX_CELLS * FT_SOURCES; i += blockDim.x) ft_src[i] = sources[i]; \
    for (u32 i = threadIdx.x; i < FT_BINOM_SIDE * FT_BINOM_SIDE; i += blockDim.x) ft_c[i] = binom[i]; \
    __syncthreads();                                                                          \
    FtCtx t;                                                                                  \
    t.src = ft_src;                                                                           \
    t.c = ft_c;                                                                               \
    t.cells = cells;                                                                          \
    t.pieces = pieces;                                                                        \
    t.sub = sub;

__device__ __forceinline__ u64 ft_binom(const FtCtx& t, u32 n, u32 k) { return t.c[n * FT_BINOM_SIDE + k]; }

// hash::Binomial::rank of the black pieces over the cells - 1 cells left.
__device__ __forceinline__ u64 ft_sub_rank(const FtCtx& t, u64 m) {
    u32 top = t.cells - 2, ones = t.pieces;
    u64 below = 0;
    while (m) {
        u32 i = __ffsll((long long)m) - 1;
        below += ft_binom(t, top - i, ones);
        ones--;
        m &= m - 1;
    }
    return t.sub - 1 - below;
}

// hash::Binomial::unrank (r below sub).
__device__ __forceinline__ u64 ft_sub_unrank(const FtCtx& t, u64 r) {
    u32 n = t.cells - 1, left = t.pieces;
    u64 mask = 0;
    for (u32 i = 0; i < n && left; i++) {
        u64 with = ft_binom(t, n - 1 - i, left - 1);
        if (r < with) {
            mask |= 1ull << i;
            left--;
        } else {
            r -= with;
        }
    }
    return mask;
}

// FrogsAndToads::index.
__device__ __forceinline__ u64 ft_index(const FtCtx& t, u64 black, u32 empty) {
    u64 low = black & ((1ull << empty) - 1);
    u64 high = (black >> (empty + 1)) << empty;
    return empty * t.sub + ft_sub_rank(t, low | high);
}

// The successors of index r, in FrogsAndToads::for_each_move's order.
template <class F>
__device__ __forceinline__ void ft_expand(const FtCtx& t, u64 r, F emit) {
    u32 e = (u32)(r / t.sub);
    u64 m = ft_sub_unrank(t, r - e * t.sub);
    u64 black = (m & ((1ull << e) - 1)) | ((m >> e) << (e + 1));
    for (u32 j = 0; j < FT_SOURCES; j++) {
        u32 from = t.src[e * FT_SOURCES + j];
        if (from == FT_NONE) continue;
        u64 bit = (black >> from) & 1;
        emit(ft_index(t, (black & ~(1ull << from)) | (bit << e), from));
    }
}

// Successors of the listed indices (the twin check): FT_SOURCES slots per
// index, unused ones u64 max.
extern "C" __global__ void ft_expand_check(FT_TABLE_ARGS, const u64* idx, u64 count, u64* out) {
    FT_PROLOGUE
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count; i += (u64)gridDim.x * blockDim.x) {
        u64* o = out + i * FT_SOURCES;
        u32 m = 0;
        ft_expand(t, idx[i], [&](u64 s) { o[m++] = s; });
        for (; m < FT_SOURCES; m++) o[m] = ~0ull;
    }
}

// Sets entry s (unseen) of the two-bit array to `code`; true if this call did.
__device__ __forceinline__ bool ft_claim(u64* words, u64 s, u64 code) {
    u64* w = &words[s >> 5];
    u32 shift = 2 * (u32)(s & 31);
    u64 old = *(volatile u64*)w;
    while (((old >> shift) & 3) == 0) {
        u64 prev = atomicCAS(w, old, old | (code << shift));
        if (prev == old) return true;
        old = prev;
    }
    return false;
}

// One layer of the two-bit BFS (Korf's codes: 0 unseen, 3 expanded, the
// frontier and the next layer 1 and 2 by turns): every index whose code is
// `current` is marked expanded and sets its unseen successors to `next`;
// *found counts them. One thread per word of 32 entries.
extern "C" __global__ void ft_two_bit_step(FT_TABLE_ARGS, u64* words, u64 nwords, u32 current, u32 next,
                                           u64* found) {
    FT_PROLOGUE
    u64 mine = 0;
    const u64 pattern = 0x5555555555555555ull * current;
    for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < nwords; w += (u64)gridDim.x * blockDim.x) {
        u64 y = words[w] ^ pattern;
        u64 match = ~(y | (y >> 1)) & 0x5555555555555555ull;
        if (match) atomicOr(&words[w], match * 3);
        while (match) {
            u32 bit = __ffsll((long long)match) - 1;
            match &= match - 1;
            ft_expand(t, w * 32 + bit / 2, [&](u64 s) { mine += ft_claim(words, s, next); });
        }
    }
    mine = tb_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(found, mine);
}

// One layer of the byte BFS from the goal: every index holding `here` sets its
// unseen (0) successors to `next`; *grew becomes 1 if any was. Writers of one
// byte all write `next`, so plain stores suffice. One thread per 8 indices.
extern "C" __global__ void ft_byte_step(FT_TABLE_ARGS, u8* values, u64 size, u32 here, u32 next, u32* grew) {
    FT_PROLOGUE
    u32 any = 0;
    const u64 pattern = 0x0101010101010101ull * here;
    u64 groups = (size + 7) / 8;
    for (u64 g = blockIdx.x * (u64)blockDim.x + threadIdx.x; g < groups; g += (u64)gridDim.x * blockDim.x) {
        u64 x = 0;
        u64 base = g * 8;
        u32 len = size - base < 8 ? (u32)(size - base) : 8;
        if (len == 8) {
            x = *(const volatile u64*)&values[base];
        } else {
            // The bytes past the end read as 0, never `here` (a distance byte, >= 2).
            for (u32 j = 0; j < len; j++) x |= (u64)((const volatile u8*)values)[base + j] << (8 * j);
        }
        u64 y = x ^ pattern;
        // Bit 7 of each byte of y that is zero.
        u64 zero = ~(((y & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | y | 0x7F7F7F7F7F7F7F7Full);
        if (len < 8) zero &= (1ull << (8 * len)) - 1;
        while (zero) {
            u32 bit = __ffsll((long long)zero) - 1;
            zero &= zero - 1;
            ft_expand(t, base + bit / 8, [&](u64 s) {
                volatile u8* v = (volatile u8*)&values[s];
                if (*v == 0) {
                    *v = (u8)next;
                    any = 1;
                }
            });
        }
    }
    if (__any_sync(0xffffffffu, any) && (threadIdx.x & 31) == 0) *grew = 1;
}

// Unreached indices (0) become `draw`.
extern "C" __global__ void ft_byte_finish(u8* values, u64 size, u32 draw) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < size; i += (u64)gridDim.x * blockDim.x)
        if (values[i] == 0) values[i] = (u8)draw;
}
