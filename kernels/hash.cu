// Rank/unrank check: unranks each rank, records the board and its
// colour-swapped rank, and ranks the board again. CPU twin:
// backend::cpu::rank_check.
#include "common.cuh"

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
