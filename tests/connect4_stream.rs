//! Connect Four on the streamed path. Without a GPU: the CPU expansion of
//! chunks of Connect Four plies (`expand_chunk_on_cpu`, the reference every
//! device expander must reproduce) against the game's rules as the kernel
//! `connect4_stream_expand` relies on them: every move of ply `n` lands in
//! ply `n + 1`, which is solved before it, so a first scan requests exactly
//! the successors' indices there and never flags a move inside the ply, and
//! a pass asks nothing. With the `cuda` feature: the kernel compiles through
//! NVRTC (where NVRTC loads) and, where a GPU opens, the device's expander
//! returns the CPU expansion's values, flags and requests; each is skipped
//! with a notice otherwise.
#![cfg(feature = "build")]

use std::collections::BTreeMap;
use std::sync::Arc;

use tbforge::game::connect4::Connect4;
use tbforge::game::{
    expand_chunk_on_cpu, ChunkDone, ChunkJob, Game, StreamTargets, STREAM_DRAWN, STREAM_ILLEGAL,
    STREAM_LOST, STREAM_ONGOING, STREAM_PENDING,
};
use tbforge::hash::SplitMix64;
use tbforge::{PartitionId, Rank, Status};

fn board(width: u32, height: u32) -> Connect4 {
    let raw: BTreeMap<String, String> = [
        ("width".to_string(), width.to_string()),
        ("height".to_string(), height.to_string()),
    ]
    .into();
    Connect4::from_params(&raw).expect("a valid board")
}

/// Targets of ply `p` as a build lays them out: every partition solved
/// before it and itself, each its buckets in turn, in solving order.
fn targets(game: &Connect4, p: PartitionId, lookup_chunk: u64) -> StreamTargets {
    let order = game
        .partitions()
        .into_iter()
        .map(|q| (q, game.partition_size(q)));
    StreamTargets::laid_out(order, p, lookup_chunk, 1 << 12)
}

/// Ply `p` whole, in jobs of `chunk` indices, with random values and flags
/// (a first scan overwrites both).
fn jobs(game: &Connect4, p: PartitionId, chunk: u64, rng: &mut SplitMix64) -> Vec<ChunkJob> {
    let size = game.partition_size(p);
    let mut out = Vec::new();
    let mut lo = 0;
    while lo < size {
        let n = chunk.min(size - lo) as usize;
        out.push(ChunkJob {
            chunk: out.len() as u64,
            lo,
            first_scan: true,
            values: (0..n).map(|_| rng.next_u64() as u8).collect(),
            flags: (0..n.div_ceil(4)).map(|_| rng.next_u64() as u8).collect(),
        });
        lo += n as u64;
    }
    out
}

fn flag(flags: &[u8], j: usize) -> u8 {
    (flags[j / 4] >> (2 * (j % 4))) & 3
}

/// Checks one first-scan chunk of ply `p` against the game's rules: the
/// values and flags of every index, and the requests, which must be
/// exactly the moves' successors, all in ply `p + 1`.
fn check_against_rules(game: &Connect4, t: &StreamTargets, done: &ChunkDone) {
    let p = t.partition;
    let next = PartitionId(p.0 + 1);
    let mut want = Vec::new();
    let mut succ = Vec::new();
    for (j, &v) in done.values.iter().enumerate() {
        let r = done.lo + j as u64;
        let reached = t
            .reached
            .as_ref()
            .is_none_or(|w| w[(r / 64) as usize] >> (r % 64) & 1 == 1);
        let pos = if reached {
            game.unrank(p, Rank(r))
        } else {
            None
        };
        let Some(pos) = pos else {
            assert_eq!(
                (v, flag(&done.flags, j)),
                (STREAM_ILLEGAL, 0),
                "index {r} of {p:?}"
            );
            continue;
        };
        let (value, f) = match game.status(&pos) {
            Status::Lost => (STREAM_LOST, 0),
            Status::Drawn => (STREAM_DRAWN, 0),
            Status::Ongoing => (STREAM_PENDING, STREAM_ONGOING),
            Status::Goal => panic!("a two-player game has no goal"),
        };
        assert_eq!((v, flag(&done.flags, j)), (value, f), "index {r} of {p:?}");
        if game.status(&pos) != Status::Ongoing {
            continue;
        }
        succ.clear();
        game.successors(&pos, &mut succ);
        assert!(!succ.is_empty(), "an ongoing position has a move");
        for (_, s) in &succ {
            let (sp, sr) = game.rank(s);
            assert_eq!(sp, next, "every move of ply {} adds a piece", p.0);
            want.push([t.key(t.base_of(sp).unwrap(), sr.0), r]);
        }
    }
    want.sort_unstable();
    assert_eq!(
        done.sorted_requests(),
        want,
        "requests of chunk {}",
        done.chunk
    );
    assert!(done.grouped(t.low_bits));
}

/// The rules behind `connect4_stream_expand`, on every ply of the 4x4
/// board and on an early, a middle and a late one of the 5x4, with and
/// without random reached bits, several buckets per ply.
#[test]
fn cpu_expansion_follows_the_rules_the_kernel_relies_on() {
    let mut rng = SplitMix64::new(0x00c4_57ea);
    for (w, h, plies) in [
        (4, 4, (0..=16).collect::<Vec<u32>>()),
        (5, 4, vec![3, 10, 18, 19, 20]),
    ] {
        let game = board(w, h);
        let order = game.partitions();
        for n in plies {
            let p = PartitionId(n);
            // Ply n + 1 is solved before ply n.
            if n < w * h {
                let at = |q| order.iter().position(|&x| x == q).unwrap();
                assert!(at(PartitionId(n + 1)) < at(p));
            }
            let size = game.partition_size(p);
            for with_reached in [false, true] {
                let mut t = targets(&game, p, 64 + rng.below(1000));
                if with_reached {
                    let words: Vec<u64> = (0..size.div_ceil(64)).map(|_| rng.next_u64()).collect();
                    t.reached = Some(Arc::from(words));
                }
                for job in jobs(&game, p, 1000 + 64 * rng.below(64), &mut rng) {
                    let done = expand_chunk_on_cpu(&game, &t, job).unwrap();
                    check_against_rules(&game, &t, &done);
                    // A pass over the first scan's output asks nothing and
                    // changes nothing: no move stays in the ply.
                    let (values, flags) = (done.values.clone(), done.flags.clone());
                    let pass = expand_chunk_on_cpu(
                        &game,
                        &t,
                        ChunkJob {
                            chunk: done.chunk,
                            lo: done.lo,
                            first_scan: false,
                            values: done.values,
                            flags: done.flags,
                        },
                    )
                    .unwrap();
                    assert!(pass.requests.is_empty());
                    assert_eq!((pass.values, pass.flags), (values, flags));
                }
            }
        }
    }
}

/// The kernel file holds the streamed kernel and it compiles without local
/// memory (skipped where NVRTC does not load: set LD_LIBRARY_PATH as
/// tests/kernels_compile.rs says).
#[cfg(feature = "cuda")]
#[test]
fn stream_kernel_compiles() {
    use tbforge::backend::cuda::{compile_kernel, nvrtc_available};
    if let Err(e) = nvrtc_available() {
        eprintln!("SKIPPED stream_kernel_compiles: {e}");
        return;
    }
    let (file, source) = tbforge::registry::kernel_sources()
        .into_iter()
        .find(|(f, _)| *f == "connect4.cu")
        .expect("connect4.cu is a kernel file");
    let ptx = compile_kernel(file, source, "sm_90").unwrap().to_src();
    assert!(ptx.contains(".entry connect4_stream_expand("));
    assert!(ptx.contains(".entry tb_bucket_scatter("));
    assert!(!ptx.contains("__local_depot"));
}

/// The device's expander against the CPU expansion, chunk for chunk
/// (skipped without a GPU).
#[cfg(feature = "cuda")]
#[test]
fn device_expander_matches_the_cpu() {
    use tbforge::backend::cuda::CudaDevice;
    use tbforge::game::Device;
    let device = match CudaDevice::open(0) {
        Ok(d) => Device::Cuda(Arc::new(d)),
        Err(e) => {
            eprintln!("SKIPPED device_expander_matches_the_cpu: {e}");
            return;
        }
    };
    let mut rng = SplitMix64::new(0x0057_47c4);
    let game = board(5, 4);
    let kernels = game
        .kernels(&device)
        .unwrap()
        .expect("connect4 has kernels");
    for n in [2, 9, 14, 19, 20] {
        let p = PartitionId(n);
        let size = game.partition_size(p);
        let mut t = targets(&game, p, 64 + rng.below(4000));
        let words: Vec<u64> = (0..size.div_ceil(64)).map(|_| rng.next_u64()).collect();
        t.reached = Some(Arc::from(words));
        let mut expander = kernels
            .expander(&t, 64 << 20)
            .expect("the kernels cover the board")
            .unwrap();
        let chunk = expander.max_chunk().min(1 << 12);
        for first_scan in [true, false] {
            let mut all = jobs(&game, p, chunk, &mut rng);
            if !first_scan {
                // A pass over a first scan's output.
                all = all
                    .into_iter()
                    .map(|j| {
                        let d = expand_chunk_on_cpu(&game, &t, j).unwrap();
                        ChunkJob {
                            chunk: d.chunk,
                            lo: d.lo,
                            first_scan: false,
                            values: d.values,
                            flags: d.flags,
                        }
                    })
                    .collect();
            }
            for job in all {
                let copy = ChunkJob {
                    chunk: job.chunk,
                    lo: job.lo,
                    first_scan: job.first_scan,
                    values: job.values.clone(),
                    flags: job.flags.clone(),
                };
                let want = expand_chunk_on_cpu(&game, &t, copy).unwrap();
                expander.submit(job).unwrap();
                let got = expander.collect().unwrap();
                assert_eq!((got.chunk, got.lo), (want.chunk, want.lo));
                assert_eq!(got.values, want.values, "ply {n} chunk {}", want.chunk);
                for j in 0..want.values.len() {
                    assert_eq!(
                        flag(&got.flags, j),
                        flag(&want.flags, j),
                        "ply {n} index {}",
                        want.lo + j as u64
                    );
                }
                assert!(got.grouped(t.low_bits));
                assert_eq!(
                    got.sorted_requests(),
                    want.sorted_requests(),
                    "ply {n} chunk {}",
                    want.chunk
                );
            }
        }
    }
}
