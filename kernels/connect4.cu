// One Connect Four partition (n pieces) solved from partition n + 1's values,
// one thread per index, grid-stride. CPU twin and documentation of every rule
// and of the hash: src/backend/connect4.rs (Connect4Twin::value_of, whose
// bytes equal those of solve::solve_partition on the game connect4).
//
// Tables (backend::connect4::Connect4Tables::flat) arrive in global memory and
// are copied into dynamic shared memory (tables_len * 8 bytes): binomials
// C(i, j) (65 rows of C4_BIN_COLS), then ways[i][s] (width + 1 rows of
// cells + 1), then their prefix sums (width + 1 rows of cells + 2).
#include "common.cuh"

#define C4_BIN_COLS 33u
#define C4_FAIL_ILLEGAL 1u
#define C4_FAIL_DISTANCE 2u

extern __shared__ __align__(16) u64 c4_tables[];

// Four in a row on one player's bitboard (s = height + 1 bits per column, the
// top one an always-empty guard).
__device__ __forceinline__ bool c4_has_four(u64 b, u32 s) {
    u64 any = 0, m;
    m = b & (b >> 1);
    any |= m & (m >> 2);
    m = b & (b >> s);
    any |= m & (m >> (2 * s));
    m = b & (b >> (s - 1));
    any |= m & (m >> (2 * (s - 1)));
    m = b & (b >> (s + 1));
    any |= m & (m >> (2 * (s + 1)));
    return any != 0;
}

struct C4Ctx {
    const u64* bin;
    const u64* ways;
    const u64* prefix;
    u32 width, height, n, cells, stride, k;
    u64 per, per1;
    u32 ins, k1;
    const unsigned char* next;
};

// The byte of index r; ORs failure bits into *failed.
__device__ __forceinline__ unsigned char c4_value(const C4Ctx& c, u64 r, u32* failed) {
    const u32 n = c.n;
    // Column heights (5 bits each): bounded-composition unrank of r / C(n, k).
    u64 hr = r / c.per;
    u64 b = r - hr * c.per;
    u64 hts = 0;
    u32 rest = n;
    for (u32 i = 0; i < c.width; ++i) {
        const u64* row = c.ways + (i + 1) * (c.cells + 1);
        u32 x = 0, lim = min(c.height, rest);
        while (x < lim) {
            u64 w = row[rest - x];
            if (hr < w) break;
            hr -= w;
            ++x;
        }
        hts |= (u64)x << (5 * i);
        rest -= x;
    }
    // First player's cells: branch-free colex unrank of r mod C(n, k).
    u64 which = 0;
    u32 kk = c.k;
    for (int i = (int)n - 1; i >= 0; --i) {
        u64 v = c.bin[i * C4_BIN_COLS + kk];
        u64 take = b >= v ? 1ull : 0ull;
        which |= take << i;
        b -= v & (0ull - take);
        kk -= (u32)take;
    }
    u64 first = 0, second = 0, bits = which;
    for (u32 col = 0; col < c.width; ++col) {
        u32 h = (u32)(hts >> (5 * col)) & 31u;
        u64 filled = (1ull << h) - 1;
        u32 shift = col * c.stride;
        first |= (bits & filled) << shift;
        second |= (~bits & filled) << shift;
        bits >>= h;
    }
    bool f4 = c4_has_four(first, c.stride);
    bool s4 = c4_has_four(second, c.stride);
    bool first_moved_last = (n & 1u) != 0;
    // Illegal: a four for the player who did not move last (covers both having one).
    if (first_moved_last ? s4 : f4) return 0;
    if (f4 || s4) return 2;          // lost at distance 0
    if (n == c.cells) return 1;      // full board: draw
    u32 best_win = 256, longest = 0; // smallest even byte, largest odd byte
    bool all_won = true;
    u32 offset = 0;
    for (u32 col = 0; col < c.width; ++col) {
        u32 hc = (u32)(hts >> (5 * col)) & 31u;
        u32 p = offset + hc;
        offset += hc;
        if (hc == c.height) continue;
        // Heights rank with this column one higher, at sum n + 1.
        u64 hrank = 0;
        u32 rs = n + 1;
        for (u32 i = 0; i < c.width; ++i) {
            u32 x = ((u32)(hts >> (5 * i)) & 31u) + (i == col ? 1u : 0u);
            const u64* row = c.prefix + (i + 1) * (c.cells + 2) + rs + 1;
            hrank += row[0] - row[-(int)x];
            rs -= x;
        }
        // Colour word with the new piece's bit inserted at p, colex-ranked.
        u64 word = (which & ((1ull << p) - 1)) | ((u64)c.ins << p) | ((which >> p) << (p + 1));
        u64 brank = 0;
        u32 j = 0;
        while (word) {
            u32 i = (u32)__ffsll((long long)word) - 1;
            word &= word - 1;
            ++j;
            brank += c.bin[i * C4_BIN_COLS + j];
        }
        u32 v = c.next[hrank * c.per1 + brank];
        if (v == 0) {
            *failed |= C4_FAIL_ILLEGAL;
        } else if (v == 1) {
            all_won = false;
        } else if ((v & 1u) == 0) {
            best_win = min(best_win, v);
        } else {
            longest = max(longest, v);
        }
    }
    u32 byte = best_win < 256 ? best_win + 1 : (all_won ? longest + 1 : 1u);
    if (byte > 255) *failed |= C4_FAIL_DISTANCE;
    return (unsigned char)byte;
}

// Values of ranks first .. first + count (ranks == 0) or of ranks[0 .. count]
// into out[0 .. count]; next: partition n + 1's values (unread for the full
// board); *fail: OR of the failure bits (backend::connect4::fail).
extern "C" __global__ void connect4_solve(u32 width, u32 height, u32 n, const u64* tables,
                                          u32 tables_len, u32 ways_off, u32 prefix_off,
                                          u64 first, u64 count, const u64* ranks,
                                          const unsigned char* next, unsigned char* out,
                                          u32* fail) {
    for (u32 i = threadIdx.x; i < tables_len; i += blockDim.x) c4_tables[i] = tables[i];
    __syncthreads();
    C4Ctx c;
    c.bin = c4_tables;
    c.ways = c4_tables + ways_off;
    c.prefix = c4_tables + prefix_off;
    c.width = width;
    c.height = height;
    c.n = n;
    c.cells = width * height;
    c.stride = height + 1;
    c.k = (n + 1) / 2;
    c.per = c.bin[n * C4_BIN_COLS + c.k];
    c.ins = (n & 1u) == 0 ? 1u : 0u;
    c.k1 = c.k + c.ins;
    c.per1 = n < c.cells ? c.bin[(n + 1) * C4_BIN_COLS + c.k1] : 0;
    c.next = next;
    u32 failed = 0;
    u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < count; t += step) {
        u64 r = ranks ? ranks[t] : first + t;
        out[t] = c4_value(c, r, &failed);
    }
    if (failed) atomicOr(fail, failed);
}
