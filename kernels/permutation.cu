// The permutation puzzles (sliding tiles, Top-Spin, pancakes): Myrvold–Ruskey
// rank and unrank with the parity counted on the fly (seed 002, Algorithm 1,
// Theorems 3 and 4), each puzzle's moves in registers, and two BFS steps over
// the puzzle's index: the two-bit BFS (seeds 001/002, Korf 2008: 2 bits per
// index) and the byte BFS from the goal that gives every index its distance.
// CPU twins: src/game/permpuzzle/twin.rs (same arithmetic, step for step).
//
// A permutation of up to 16 items lives in one u64 of 4-bit fields, item i in
// bits 4i..4i+3 (as hash::permutation's mr_rank_16 / mr_unrank_16). The
// puzzle is given by (kind, n, a, b, half):
//   kind 0, sliding tiles: n = rows*cols - 1 tiles, a = rows, b = cols,
//     half = n!/2; index = blank * half + (parity-halved rank of the tiles in
//     reading order, blank skipped), the parity odd iff cols is even and the
//     blank's row odd.
//   kind 1, Top-Spin: n tokens on the ring, a = k, b = 1 if the index is
//     parity-halved (k = 4, n odd, n > 5), half = (n-1)!/2; index = rank of
//     the n-1 tokens behind token 0 (mod half where halved).
//   kind 2, pancakes: n pancakes, a = 1 for burnt ones; index = rank (plain),
//     rank << n | burnt-side-up bits (burnt).
#include "common.cuh"

typedef unsigned char u8;

#define PERM_SLIDING 0u
#define PERM_TOPSPIN 1u
#define PERM_PANCAKE 2u
#define PERM_MAX_SUCC 16

__device__ __forceinline__ u64 pz_mask(u32 k) {  // the low k nibbles
    return k >= 16 ? ~0ull : (1ull << (4 * k)) - 1;
}

// Myrvold–Ruskey unrank1 of r (< n!) from the identity; *odd gets the parity.
__device__ __forceinline__ u64 pz_unrank(u64 r, u32 n, u32* odd) {
    u64 p = 0xFEDCBA9876543210ull;
    u32 swaps = 0;
    for (u32 k = n - 1; k >= 1; k--) {
        u32 j;
        if (r >> 32) {
            u64 q = r / (k + 1);
            j = (u32)(r - q * (k + 1));
            r = q;
        } else {
            u32 r32 = (u32)r;
            u32 q = r32 / (k + 1);
            j = r32 - q * (k + 1);
            r = q;
        }
        u64 x = ((p >> (4 * k)) ^ (p >> (4 * j))) & 15;
        p ^= (x << (4 * k)) | (x << (4 * j));
        swaps += j != k;
    }
    *odd = swaps & 1;
    return p & pz_mask(n);
}

// Myrvold–Ruskey rank1 of the permutation p of n items; *odd gets the parity.
__device__ __forceinline__ u64 pz_rank(u64 p, u32 n, u32* odd) {
    u64 inv = 0;
    for (u32 i = 0; i < n; i++) inv |= (u64)i << (4 * ((p >> (4 * i)) & 15));
    u64 r = 0, weight = 1;
    u32 swaps = 0;
    for (u32 k = n - 1; k >= 1; k--) {
        u64 s = (p >> (4 * k)) & 15;
        u64 j = (inv >> (4 * k)) & 15;
        p ^= ((u64)k ^ s) << (4 * j);
        inv ^= ((u64)k ^ j) << (4 * s);
        swaps += s != k;
        r += s * weight;
        weight *= k + 1;
    }
    *odd = swaps & 1;
    return r;
}

// The nibbles of x in reverse order (nibble i to 15 - i).
__device__ __forceinline__ u64 pz_nibble_reverse(u64 x) {
    u32 lo = (u32)x, hi = (u32)(x >> 32);
    u64 y = ((u64)__byte_perm(lo, 0, 0x0123) << 32) | __byte_perm(hi, 0, 0x0123);
    return ((y >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((y & 0x0F0F0F0F0F0F0F0Full) << 4);
}

// Calls emit(s) with each successor index s of index idx (at most
// PERM_MAX_SUCC of them), in a fixed order (the twin's).
template <class Emit>
__device__ __forceinline__ void pz_expand(u32 kind, u32 n, u32 a, u32 b, u64 half, u64 idx,
                                          Emit emit) {
    u32 odd;
    if (kind == PERM_SLIDING) {
        u32 rows = a, cols = b;
        u32 blank = (u32)(idx / half);
        u64 r = idx - (u64)blank * half;
        u32 want = (cols % 2 == 0) && ((blank / cols) % 2 == 1);
        u64 q = pz_unrank(r, n, &odd);
        if (odd != want) q = (q & ~0xFFull) | ((q & 15) << 4) | ((q >> 4) & 15);
        u32 row = blank / cols, col = blank % cols;
        // Sideways: the tiles' order is unchanged, only the blank moves.
        if (col > 0) emit((u64)(blank - 1) * half + r);
        if (col + 1 < cols) emit((u64)(blank + 1) * half + r);
        for (u32 dir = 0; dir < 2; dir++) {
            if (dir == 0 ? row == 0 : row + 1 == rows) continue;
            u32 to = dir == 0 ? blank - cols : blank + cols;
            // The tile on `to` moves to the blank's cell: in the order it goes
            // from place `from` to place `at`, the tiles between shift by one.
            u32 from = dir == 0 ? to : to - 1;
            u32 at = dir == 0 ? blank - 1 : blank;
            u64 t = (q >> (4 * from)) & 15, moved;
            if (from > at) {  // to the left: places at..from-1 move up one
                u64 seg = q & pz_mask(from) & ~pz_mask(at);
                moved = (q & ~(pz_mask(from + 1) & ~pz_mask(at))) | (seg << 4) | (t << (4 * at));
            } else {  // to the right: places from+1..at move down one
                u64 seg = q & pz_mask(at + 1) & ~pz_mask(from + 1);
                moved = (q & ~(pz_mask(at + 1) & ~pz_mask(from))) | (seg >> 4) | (t << (4 * at));
            }
            u64 s = pz_rank(moved, n, &odd);
            emit((u64)to * half + (s >= half ? s - half : s));
        }
    } else if (kind == PERM_TOPSPIN) {
        u32 k = a, halved = b, items = n - 1;
        u64 q = pz_unrank(idx, items, &odd);
        if (halved && odd) q = (q & ~0xFFull) | ((q & 15) << 4) | ((q >> 4) & 15);
        // The ring: token 0 at place 0, then the order's tokens plus one.
        u64 ring = (q + (0x1111111111111111ull & pz_mask(items))) << 4;
        for (u32 i = 0; i < n; i++) {
            u64 t = ring;
            for (u32 x = 0; x < k / 2; x++) {
                u32 p1 = (i + x) % n, p2 = (i + k - 1 - x) % n;
                u64 d = ((t >> (4 * p1)) ^ (t >> (4 * p2))) & 15;
                t ^= (d << (4 * p1)) | (d << (4 * p2));
            }
            // Where token 0 went: place 0 moved if the twist covered it.
            u32 off = (n - i) % n;
            u32 at = off < k ? (i + k - 1 - off) % n : 0;
            u64 rot = at == 0 ? t : ((t >> (4 * at)) | (t << (4 * (n - at)))) & pz_mask(n);
            u64 order = (rot >> 4) - (0x1111111111111111ull & pz_mask(items));
            u64 s = pz_rank(order, items, &odd);
            emit(halved ? (s >= half ? s - half : s) : s);
        }
    } else {
        u32 burnt = a;
        u64 r = burnt ? idx >> n : idx;
        u32 sides = burnt ? (u32)(idx & ((1ull << n) - 1)) : 0;
        u64 p = pz_unrank(r, n, &odd);
        u64 rev = pz_nibble_reverse(p);
        for (u32 k = burnt ? 1 : 2; k <= n; k++) {
            u64 flipped = (p & ~pz_mask(k)) | (rev >> (4 * (16 - k)));
            u64 s = pz_rank(flipped, n, &odd);
            if (burnt) {
                u32 low = sides & ((1u << k) - 1);
                u32 fl = (__brev(low) >> (32 - k)) ^ ((1u << k) - 1);
                s = (s << n) | (sides & ~((1u << k) - 1)) | fl;
            }
            emit(s);
        }
    }
}

// Successors of the listed indices (the twin check): PERM_MAX_SUCC slots per
// index, unused ones u64 max.
extern "C" __global__ void perm_expand(u32 kind, u32 n, u32 a, u32 b, u64 half, const u64* idx,
                                       u64 count, u64* out) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < count;
         i += (u64)gridDim.x * blockDim.x) {
        u64* o = out + i * PERM_MAX_SUCC;
        u32 m = 0;
        pz_expand(kind, n, a, b, half, idx[i], [&](u64 s) { o[m++] = s; });
        for (; m < PERM_MAX_SUCC; m++) o[m] = ~0ull;
    }
}

// Sets entry s (unseen) of the two-bit array to `code`; true if this call did.
__device__ __forceinline__ bool pz_claim(u64* words, u64 s, u64 code) {
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

// One layer of the two-bit BFS, with Korf's codes (0 unseen, 3 expanded, and
// the frontier and the next layer as 1 and 2, their roles swapped each layer):
// every index whose code is `current` is marked expanded and sets its unseen
// successors to `next`; *found counts them. Each index is expanded once (the
// depth-mod-3 codes of the generic src/solve/bfs.rs expand an index again
// every third layer). One thread per word of 32 entries.
extern "C" __global__ void perm_two_bit_step(u32 kind, u32 n, u32 a, u32 b, u64 half, u64* words,
                                             u64 nwords, u32 current, u32 next, u64* found) {
    u64 mine = 0;
    const u64 pattern = 0x5555555555555555ull * current;
    for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < nwords;
         w += (u64)gridDim.x * blockDim.x) {
        u64 y = words[w] ^ pattern;
        u64 match = ~(y | (y >> 1)) & 0x5555555555555555ull;
        if (match) atomicOr(&words[w], match * 3);
        while (match) {
            u32 bit = __ffsll((long long)match) - 1;
            match &= match - 1;
            pz_expand(kind, n, a, b, half, w * 32 + bit / 2,
                      [&](u64 s) { mine += pz_claim(words, s, next); });
        }
    }
    mine = tb_warp_sum(mine);
    if ((threadIdx.x & 31) == 0 && mine) atomicAdd(found, mine);
}

// One layer of the byte BFS from the goal: every index holding `here` sets its
// unseen (0) successors to `next`; *grew becomes 1 if any was. Writers of one
// byte all write `next`, so plain stores suffice. One thread per 8 indices.
extern "C" __global__ void perm_byte_step(u32 kind, u32 n, u32 a, u32 b, u64 half, u8* values,
                                          u64 size, u32 here, u32 next, u32* grew) {
    u32 any = 0;
    const u64 pattern = 0x0101010101010101ull * here;
    u64 groups = (size + 7) / 8;
    for (u64 g = blockIdx.x * (u64)blockDim.x + threadIdx.x; g < groups;
         g += (u64)gridDim.x * blockDim.x) {
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
        if (len < 8) zero &= pz_mask(2 * len);
        while (zero) {
            u32 bit = __ffsll((long long)zero) - 1;
            zero &= zero - 1;
            pz_expand(kind, n, a, b, half, base + bit / 8, [&](u64 s) {
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
extern "C" __global__ void perm_byte_finish(u8* values, u64 size, u32 draw) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < size;
         i += (u64)gridDim.x * blockDim.x) {
        if (values[i] == 0) values[i] = (u8)draw;
    }
}
