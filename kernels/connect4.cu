// Connect Four plies (n pieces played), layered: forward search from ply n to
// ply n + 1 (connect4_expand) and the values of ply n's reached indices from
// ply n + 1 held compact (connect4_solve). CPU twins and documentation of
// every rule and of the hash: src/game/connect4/twin.rs (expand and
// Connect4Twin::value_of, whose bytes equal those of the generic solver on the
// game connect4).
//
// Tables (game::connect4::twin::Connect4Tables::flat) arrive in global memory
// and are copied into dynamic shared memory (tables_len * 8 bytes): binomials
// C(i, j) (65 rows of C4_BIN_COLS), then ways[i][s] (width + 1 rows of
// cells + 1), then their prefix sums (width + 1 rows of cells + 2).
//
// A ply held compact (game::ReachedValues): reached bits, 64 indices to a
// word, lowest bit first; dir[b] = reached indices below 512 b (one entry per
// 8 words, one past the last: the total); one value byte per reached index,
// in index order. Every size and index is 64-bit: a 6x6 ply holds 7.6e10.
#include "common.cuh"

#define C4_BIN_COLS 33u
#define C4_FAIL_ILLEGAL 1u
#define C4_FAIL_DISTANCE 2u
#define C4_FAIL_UNREACHED 4u

#define C4_ILLEGAL 0u
#define C4_LOST 1u
#define C4_DRAWN 2u
#define C4_ONGOING 3u

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
    u32 ins;
};

// Copies the tables into shared memory (the whole block must call it) and
// fills the context of ply n.
__device__ __forceinline__ void c4_load(C4Ctx& c, u32 width, u32 height, u32 n, const u64* tables,
                                        u32 tables_len, u32 ways_off, u32 prefix_off) {
    for (u32 i = threadIdx.x; i < tables_len; i += blockDim.x) c4_tables[i] = tables[i];
    __syncthreads();
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
    c.per1 = n < c.cells ? c.bin[(n + 1) * C4_BIN_COLS + c.k + c.ins] : 0;
}

// A position decoded from its index: column heights (5 bits each), which
// filled cells (column by column, bottom up) are the first player's, and
// what the index holds (C4_ILLEGAL .. C4_ONGOING; twin: Connect4Tables::decode).
struct C4Board {
    u64 hts, which;
    u32 kind;
};

__device__ __forceinline__ C4Board c4_decode(const C4Ctx& c, u64 r) {
    const u32 n = c.n;
    C4Board out;
    // Column heights: bounded-composition unrank of r / C(n, k).
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
    out.hts = hts;
    out.which = which;
    // Illegal: a four for the player who did not move last (covers both having one).
    if (first_moved_last ? s4 : f4) out.kind = C4_ILLEGAL;
    else if (f4 || s4) out.kind = C4_LOST;
    else if (n == c.cells) out.kind = C4_DRAWN;
    else out.kind = C4_ONGOING;
    return out;
}

// The index in ply n + 1 of the move into column col (not full) of board b,
// whose new piece's bit in the colour word is p (the cells of the columns up
// to col; twin: Connect4Tables::for_each_successor).
__device__ __forceinline__ u64 c4_successor(const C4Ctx& c, const C4Board& b, u32 col, u32 p) {
    // Heights rank with this column one higher, at sum n + 1.
    u64 hrank = 0;
    u32 rs = c.n + 1;
    for (u32 i = 0; i < c.width; ++i) {
        u32 x = ((u32)(b.hts >> (5 * i)) & 31u) + (i == col ? 1u : 0u);
        const u64* row = c.prefix + (i + 1) * (c.cells + 2) + rs + 1;
        hrank += row[0] - row[-(int)x];
        rs -= x;
    }
    // Colour word with the new piece's bit inserted at p, colex-ranked.
    u64 word = (b.which & ((1ull << p) - 1)) | ((u64)c.ins << p) | ((b.which >> p) << (p + 1));
    u64 brank = 0;
    u32 j = 0;
    while (word) {
        u32 i = (u32)__ffsll((long long)word) - 1;
        word &= word - 1;
        ++j;
        brank += c.bin[i * C4_BIN_COLS + j];
    }
    return hrank * c.per1 + brank;
}

// Reached indices of a compact ply below word w's index w * 64 (the
// directory entry of w's block and the words before w in it: one cache line).
__device__ __forceinline__ u64 c4_rank_before(const u64* bits, const u64* dir, u64 w) {
    u64 rank = dir[w >> 3];
    for (u64 i = w & ~7ull; i < w; ++i) rank += (u64)__popcll(bits[i]);
    return rank;
}

// The byte of index r of ply n, from ply n + 1 held compact (next_bits:
// next_words words, next_dir, next_vals; unread for the full board); ORs
// failure bits into *failed (twin: Connect4Twin::value_of).
__device__ __forceinline__ unsigned char c4_value(const C4Ctx& c, u64 r, const u64* next_bits,
                                                  const u64* next_dir, u64 next_words,
                                                  const unsigned char* next_vals, u32* failed) {
    C4Board b = c4_decode(c, r);
    if (b.kind == C4_ILLEGAL) return 0;
    if (b.kind == C4_LOST) return 2;  // lost at distance 0
    if (b.kind == C4_DRAWN) return 1;
    u32 best_win = 256, longest = 0;  // smallest even byte, largest odd byte
    bool all_won = true;
    u32 fl = 0;
    u32 offset = 0;
    for (u32 col = 0; col < c.width; ++col) {
        u32 hc = (u32)(b.hts >> (5 * col)) & 31u;
        u32 p = offset + hc;
        offset += hc;
        if (hc == c.height) continue;
        u64 s = c4_successor(c, b, col, p);
        u64 sw = s >> 6;
        u64 bit = 1ull << (s & 63);
        u64 word = sw < next_words ? next_bits[sw] : 0ull;
        if ((word & bit) == 0) {
            fl |= C4_FAIL_UNREACHED;
            continue;
        }
        u64 slot = c4_rank_before(next_bits, next_dir, sw) + (u64)__popcll(word & (bit - 1));
        u32 v = next_vals[slot];
        if (v == 0) {
            fl |= C4_FAIL_ILLEGAL;
        } else if (v == 1) {
            all_won = false;
        } else if ((v & 1u) == 0) {
            best_win = min(best_win, v);
        } else {
            longest = max(longest, v);
        }
    }
    u32 byte = best_win < 256 ? best_win + 1 : (all_won ? longest + 1 : 1u);
    if (byte > 255) fl |= C4_FAIL_DISTANCE;
    *failed |= fl;
    return fl ? 0 : (unsigned char)byte;
}

// Values of ply n's reached indices, compact: with ranks null, every set bit
// of bits[first .. first + count] (count words of ply n's bits; dir the
// directory of all of them) writes its index's byte to out[its rank among all
// the set bits - out_base]; with ranks given (a check's sample), the bytes of
// ranks[0 .. count] go to out[0 .. count]. A team member passes its slice of
// the words as first .. first + count and, for out_base, the reached indices
// before first (or 0 with out the whole ply's buffer). Ply n + 1 compact:
// next_bits (next_words words), next_dir, next_vals (unread for the full
// board). *fail: OR of the failure bits (game::connect4::twin::fail).
extern "C" __global__ void connect4_solve(u32 width, u32 height, u32 n, const u64* tables,
                                          u32 tables_len, u32 ways_off, u32 prefix_off,
                                          const u64* ranks, u64 first, u64 count,
                                          const u64* bits, const u64* dir, u64 out_base,
                                          const u64* next_bits, const u64* next_dir,
                                          u64 next_words, const unsigned char* next_vals,
                                          unsigned char* out, u32* fail) {
    C4Ctx c;
    c4_load(c, width, height, n, tables, tables_len, ways_off, prefix_off);
    u32 failed = 0;
    u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
        if (ranks) {
            out[i] = c4_value(c, ranks[i], next_bits, next_dir, next_words, next_vals, &failed);
            continue;
        }
        u64 t = first + i;
        u64 word = bits[t];
        if (word == 0) continue;
        u64 slot = c4_rank_before(bits, dir, t) - out_base;
        while (word) {
            u64 r = (t << 6) + (u64)(__ffsll((long long)word) - 1);
            word &= word - 1;
            out[slot++] = c4_value(c, r, next_bits, next_dir, next_words, next_vals, &failed);
        }
    }
    if (failed) atomicOr(fail, failed);
}

// Forward search of ply n (twin: game::connect4::twin::expand): for every set
// bit of bits[0 .. words], the moves of an ongoing position set their indices'
// bits in next (ply n + 1's bits, zero or partly set on entry); lost and drawn
// positions are not expanded. A reached illegal index lowers *first to it
// (*first starts at ~0: none).
extern "C" __global__ void connect4_expand(u32 width, u32 height, u32 n, const u64* tables,
                                           u32 tables_len, u32 ways_off, u32 prefix_off,
                                           const u64* bits, u64 words, unsigned long long* next,
                                           unsigned long long* first) {
    C4Ctx c;
    c4_load(c, width, height, n, tables, tables_len, ways_off, prefix_off);
    u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < words; t += step) {
        u64 word = bits[t];
        while (word) {
            u64 r = (t << 6) + (u64)(__ffsll((long long)word) - 1);
            word &= word - 1;
            C4Board b = c4_decode(c, r);
            if (b.kind == C4_ILLEGAL) {
                atomicMin(first, (unsigned long long)r);
                continue;
            }
            if (b.kind != C4_ONGOING) continue;
            u32 offset = 0;
            for (u32 col = 0; col < c.width; ++col) {
                u32 hc = (u32)(b.hts >> (5 * col)) & 31u;
                u32 p = offset + hc;
                offset += hc;
                if (hc == c.height) continue;
                u64 s = c4_successor(c, b, col, p);
                atomicOr(next + (s >> 6), 1ull << (s & 63));
            }
        }
    }
}

// The streamed path's chunk expansion of ply n (game::kernels::StreamTargets
// states the contract; twin: game::stream::expand_chunk_on_cpu on the game
// connect4, and game::connect4::stream::expand_twin). Every move adds a
// piece, so every successor lies in ply n + 1: a first scan requests all of
// them and never sets TB_INTERNAL, and a pass asks nothing. A pass still
// re-checks, as the twin does, an index whose flags say ONGOING | INTERNAL
// (which no first scan of this game writes) for the contract failures its
// moves would raise.
//
// Own arguments: the board and ply, the tables (as for connect4_solve), the
// ply's size (indices at or past it are illegal), and ply n + 1's first
// bucket (next_base, meaningful when has_next_base: a single entry is the
// whole table of successor partitions here). Then common.cuh's tail.
//
// Requests are reserved per warp (one atomicAdd per warp instead of one per
// request, up to width per index): the loop runs in whole warps (blockDim a
// multiple of 32, every lane through every iteration) so that the shuffles
// see all lanes; an idle lane reserves 0.
extern "C" __global__ void connect4_stream_expand(
    u32 width, u32 height, u32 ply, const u64* tables, u32 tables_len, u32 ways_off,
    u32 prefix_off, u64 size, u64 next_base, u32 has_next_base,
    // common.cuh's tail:
    u64 lo, u32 n, u32 first_scan, unsigned char* values, u32* flags, const u64* reached,
    u32 has_reached, u64 lookup_chunk, u32 low_bits, u64* out, u32 cap, u32* count, u64* fail) {
    C4Ctx c;
    c4_load(c, width, height, ply, tables, tables_len, ways_off, prefix_off);
    const u32 lane = threadIdx.x & 31u;
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 at = (u64)blockIdx.x * blockDim.x; at < n; at += step) {
        const u64 j64 = at + threadIdx.x;
        const u32 j = (u32)j64;
        const u64 r = lo + j64;
        C4Board b;
        u32 moves = 0;
        if (j64 < n) {
            if (first_scan) {
                unsigned char v = TB_ILLEGAL;
                if (tb_is_reached(reached, has_reached, j) && r < size) {
                    b = c4_decode(c, r);
                    if (b.kind == C4_LOST) {
                        v = TB_LOST;
                    } else if (b.kind == C4_DRAWN) {
                        v = TB_DRAWN;
                    } else if (b.kind == C4_ONGOING) {
                        v = TB_PENDING;
                        tb_set_flag(flags, j, TB_ONGOING);
                        // Ongoing: the board is not full, some column has room.
                        if (has_next_base) {
                            moves = c.width;
                            for (u32 col = 0; col < c.width; ++col)
                                moves -= ((u32)(b.hts >> (5 * col)) & 31u) == c.height ? 1u : 0u;
                        } else {
                            tb_fail(fail, TB_FAIL_LATER, r);
                        }
                    }
                }
                values[j] = v;
            } else if (tb_flag(flags, j) == (TB_ONGOING | TB_INTERNAL) && values[j] == TB_PENDING &&
                       r < size) {
                b = c4_decode(c, r);
                if (b.kind != C4_ILLEGAL) {
                    if (ply == c.cells) tb_fail(fail, TB_FAIL_NO_MOVES, r);
                    else if (!has_next_base) tb_fail(fail, TB_FAIL_LATER, r);
                }
            }
        }
        // Inclusive prefix sum of the lanes' moves; the last lane reserves all.
        u32 incl = moves;
        for (u32 d = 1; d < 32; d <<= 1) {
            u32 o = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d) incl += o;
        }
        const u32 total = __shfl_sync(0xffffffffu, incl, 31);
        u32 first = 0;
        if (lane == 31 && total > 0) first = atomicAdd(count, total);
        first = __shfl_sync(0xffffffffu, first, 31);
        if (moves == 0) continue;
        u32 slot = first + incl - moves;
        u32 offset = 0;
        for (u32 col = 0; col < c.width; ++col) {
            u32 hc = (u32)(b.hts >> (5 * col)) & 31u;
            u32 p = offset + hc;
            offset += hc;
            if (hc == c.height) continue;
            u64 s = c4_successor(c, b, col, p);
            // Past `cap` only counted: the host grows the buffer and runs again.
            if (slot < cap) {
                out[2 * (u64)slot] = tb_key(next_base, s, lookup_chunk, low_bits);
                out[2 * (u64)slot + 1] = r;
            }
            ++slot;
        }
    }
}
