// tbforge kernels: shared definitions. Compiled at run time by NVRTC (no system
// headers); the Rust side pastes this file in place of `#include "common.cuh"`.
// Only what every game's kernels may share lives here: the integer types and
// small warp-level helpers. Each game's kernels and tables are in its own file
// (kernels/<game>.cu).

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// SplitMix64's finaliser (game::morris::expand::mix64).
__device__ __forceinline__ u64 tb_mix64(u64 z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Sum of v over the warp, in lane 0.
__device__ __forceinline__ u64 tb_warp_sum(u64 v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

// A slot for each lane that wants one, in a list whose length is *count:
// one atomic per warp. All 32 lanes of the warp call it together; a lane
// that does not want a slot gets one it must not use.
__device__ __forceinline__ u64 tb_warp_slot(bool want, u64* count) {
    u32 ballot = __ballot_sync(0xffffffffu, want);
    u32 lane = threadIdx.x & 31u;
    u64 base = 0;
    if (lane == 0 && ballot) base = atomicAdd(count, (u64)__popc(ballot));
    base = __shfl_sync(0xffffffffu, base, 0);
    return base + __popc(ballot & ((1u << lane) - 1u));
}

// ---- The streamed path (game::kernels::StreamTargets states the contract) ----
// Every game's chunk-expansion kernel takes its own arguments first, then
// these, in this order (backend::cuda::stream::StreamArgs pushes them):
//   u64 lo, u32 n, u32 first_scan, u8* values, u32* flags,
//   const u64* reached, u32 has_reached, u64 lookup_chunk, u32 low_bits,
//   u64* out, u32 cap, u32* count, u64* fail
// `values` and `flags` hold the chunk's n indices (lo .. lo + n); `flags`
// has two bits per index (cleared by the host before a first scan, so a
// kernel only sets bits); `reached` holds the chunk's reached bits when
// `has_reached`; `out` takes (key, payload) pairs through tb_emit.

#define TB_ILLEGAL 0
#define TB_DRAWN 1
#define TB_PENDING 1
#define TB_LOST 2
#define TB_ONGOING 1u
#define TB_INTERNAL 2u
// Failure codes, in the top byte of *fail (the rank below it).
#define TB_FAIL_LATER 1ull
#define TB_FAIL_NO_MOVES 2ull

__device__ __forceinline__ u32 tb_flag(const u32* flags, u32 j) {
    return (flags[j >> 4] >> (2 * (j & 15))) & 3u;
}

__device__ __forceinline__ void tb_set_flag(u32* flags, u32 j, u32 f) {
    atomicOr(&flags[j >> 4], f << (2 * (j & 15)));
}

__device__ __forceinline__ bool tb_is_reached(const u64* reached, u32 has_reached, u32 j) {
    return !has_reached || ((reached[j >> 6] >> (j & 63)) & 1ull);
}

// The request key of index `rank` of the partition whose first bucket is `base`.
__device__ __forceinline__ u64 tb_key(u64 base, u64 rank, u64 lookup_chunk, u32 low_bits) {
    return ((base + rank / lookup_chunk) << low_bits) | (rank % lookup_chunk);
}

// Appends a request; past `cap` only counts it (the host grows the buffer
// and runs the chunk again).
__device__ __forceinline__ void tb_emit(u64* out, u32 cap, u32* count, u64 key, u64 payload) {
    u32 i = atomicAdd(count, 1u);
    if (i < cap) {
        out[2 * (u64)i] = key;
        out[2 * (u64)i + 1] = payload;
    }
}

// Records a broken contract; the lowest (code, rank) wins, so the report
// does not depend on thread timing.
__device__ __forceinline__ void tb_fail(u64* fail, u64 code, u64 rank) {
    atomicMin(fail, (code << 56) | (rank & 0x00ffffffffffffffull));
}

// Grouping of a chunk's requests by bucket (histogram, scan, scatter):
// buckets are numbered from `first_bucket`; `hist` holds one counter per
// bucket plus one, zeroed by the host.
// `count` is the emitting kernel's counter (requests past `cap` were not stored).
extern "C" __global__ void tb_bucket_count(const u64* in, const u32* count, u32 cap, u32 low_bits,
                                           u64 first_bucket, u32* hist) {
    u32 n = min(*count, cap);
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&hist[(in[2 * (u64)i] >> low_bits) - first_bucket], 1u);
    }
}

// Exclusive prefix sum of hist[0 .. buckets] in place, by one block of 1024 threads.
extern "C" __global__ void tb_bucket_scan(u32* hist, u32 buckets) {
    __shared__ u32 sums[1024];
    u32 t = threadIdx.x;
    u32 per = (buckets + 1023) / 1024;
    u32 lo = min(t * per, buckets), hi = min(lo + per, buckets);
    u32 s = 0;
    for (u32 b = lo; b < hi; b++) s += hist[b];
    sums[t] = s;
    __syncthreads();
    for (u32 d = 1; d < 1024; d <<= 1) {
        u32 v = t >= d ? sums[t - d] : 0;
        __syncthreads();
        sums[t] += v;
        __syncthreads();
    }
    u32 run = sums[t] - s;
    for (u32 b = lo; b < hi; b++) {
        u32 c = hist[b];
        hist[b] = run;
        run += c;
    }
}

// Writes each pair narrow (backend::stream::Requests): (the index
// below the bucket bits, payload - lo), 8 bytes, its bucket told by where it
// lies; after it each bucket's offset is where its pairs end.
extern "C" __global__ void tb_bucket_scatter(const u64* in, const u32* count, u32 cap, u32 low_bits,
                                             u64 first_bucket, u64 lo, u32* offsets, u32* out) {
    u32 n = min(*count, cap);
    u64 low_mask = (1ull << low_bits) - 1ull;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u64 key = in[2 * (u64)i];
        u32 at = atomicAdd(&offsets[(key >> low_bits) - first_bucket], 1u);
        out[2 * (u64)at] = (u32)(key & low_mask);
        out[2 * (u64)at + 1] = (u32)(in[2 * (u64)i + 1] - lo);
    }
}

#define TB_FAIL_OUTSIDE 3ull

// A pass that decides losses, answered on the device
// (backend::stream::block_lookup_twin is its CPU twin): each pair's
// successor lies in the partition whose first bucket is `own_base`, and its
// bit in `can_block` (a bit a position of the partition, `bit_words` words)
// says whether it blocks its requester's loss; `blocked` (a bit per index
// of the job, from `lo`, zeroed by the host) gets the requester's bit where
// it does. A successor outside the partition is a broken contract.
extern "C" __global__ void tb_block_lookup(const u64* in, const u32* count, u32 cap, u32 low_bits,
                                           u64 own_base, u64 lookup_chunk, u64 lo, const u64* can_block,
                                           u64 bit_words, unsigned long long* blocked, u64* fail) {
    u32 n = min(*count, cap);
    u64 low_mask = (1ull << low_bits) - 1ull;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u64 key = in[2 * (u64)i];
        u64 r = in[2 * (u64)i + 1] - lo;
        u64 bucket = key >> low_bits;
        u64 s = (bucket - own_base) * lookup_chunk + (key & low_mask);
        if (bucket < own_base || s / 64 >= bit_words) {
            tb_fail(fail, TB_FAIL_OUTSIDE, lo + r);
            continue;
        }
        if ((can_block[s >> 6] >> (s & 63)) & 1ull) atomicOr(&blocked[r >> 6], 1ull << (r & 63));
    }
}
