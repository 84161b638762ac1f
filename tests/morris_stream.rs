//! The streamed path on Morris partitions: the CPU reference
//! (`expand_chunk_on_cpu`) agrees with the game's own rules; the descriptor
//! the device kernel `morris_stream_expand` reads (offsets, first buckets,
//! which target is the partition itself) yields the reference's requests
//! when the successors are ranked the way the kernel ranks them; and, with a
//! GPU, the stager with the kernel gives the reference's bytes and requests
//! (skipped without one).

use std::sync::Arc;

use tbforge::game::morris::stream::{StreamDesc, KIND_LOST, KIND_MOVE, KIND_PLACE};
use tbforge::game::morris::Morris;
use tbforge::game::{
    expand_chunk_on_cpu, look_up_chunk_on_cpu, ChunkDone, ChunkJob, Lookup, Status, StreamTargets,
    STREAM_DRAWN, STREAM_ILLEGAL, STREAM_INTERNAL, STREAM_LOST, STREAM_ONGOING, STREAM_PENDING,
};
use tbforge::{Game, PartitionId, Rank};

/// SplitMix64's finaliser: reproducible noise.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Targets of `p`: buckets of `lookup_chunk` indices for every partition up
/// to `p` in the game's order; random reached bits (about two in three) on
/// placement layers.
fn targets(game: &Morris, p: PartitionId, lookup_chunk: u64, max_chunk: u64) -> StreamTargets {
    let order = game
        .partitions()
        .into_iter()
        .map(|q| (q, game.partition_size(q)));
    let size = game.partition_size(p);
    let layer = matches!(game.forward(p), tbforge::game::Forward::Layer(_));
    let reached: Option<Arc<[u64]>> = layer.then(|| {
        (0..size.div_ceil(64))
            .map(|w| {
                let bits = mix(w ^ u64::from(p.0) << 40) & mix(w + 7);
                let valid = size - 64 * w;
                if valid >= 64 {
                    !bits
                } else {
                    !bits & ((1u64 << valid) - 1)
                }
            })
            .collect()
    });
    StreamTargets {
        reached,
        ..StreamTargets::laid_out(order, p, lookup_chunk, max_chunk)
    }
}

/// Chunks of indices lo..hi, at most `chunk` each, filled with noise (a
/// first scan overwrites it).
fn jobs(lo: u64, hi: u64, chunk: u64) -> Vec<ChunkJob> {
    let mut out = Vec::new();
    let mut at = lo;
    while at < hi {
        let n = chunk.min(hi - at) as usize;
        out.push(ChunkJob {
            chunk: out.len() as u64,
            lo: at,
            first_scan: true,
            values: (0..n).map(|i| mix(at + i as u64) as u8).collect(),
            flags: (0..n.div_ceil(4))
                .map(|i| mix(!(at + i as u64)) as u8)
                .collect(),
        });
        at += n as u64;
    }
    out
}

fn flag(flags: &[u8], j: usize) -> u8 {
    (flags[j / 4] >> (2 * (j % 4))) & 3
}

/// The ranges checked in `p`: its start, and where there are two halves,
/// around the second's first index; at most `len` indices each.
fn ranges(game: &Morris, t: &StreamTargets, len: u64) -> Vec<(u64, u64)> {
    let size = game.partition_size(t.partition);
    let mut out = vec![(0, len.min(size))];
    if let Some(d) = StreamDesc::of(game, t) {
        if let Some(h) = d.halves.get(1) {
            let lo = h.base.saturating_sub(len / 2) / 64 * 64;
            out.push((lo, (lo + len).min(size)));
        }
    }
    out
}

/// The partitions checked: every one of `pieces=4` (all kinds: k1-k2,
/// 2-k, placement layers, lost layers).
fn partitions(game: &Morris) -> Vec<PartitionId> {
    game.partitions()
}

/// What a first scan and a pass must give index `r`, from the game's own
/// rules: value, flags, and the requests (key, payload) of each.
fn expected(game: &Morris, t: &StreamTargets, r: u64) -> (u8, u8, Vec<[u64; 2]>, Vec<[u64; 2]>) {
    let p = t.partition;
    if let Some(w) = &t.reached {
        if w[(r / 64) as usize] >> (r % 64) & 1 == 0 {
            return (STREAM_ILLEGAL, 0, vec![], vec![]);
        }
    }
    let pos = game.unrank(p, Rank(r)).expect("every index is a position");
    match game.status(&pos) {
        Status::Lost | Status::Goal => return (STREAM_LOST, 0, vec![], vec![]),
        Status::Drawn => return (STREAM_DRAWN, 0, vec![], vec![]),
        Status::Ongoing => {}
    }
    let mut succ = Vec::new();
    game.successors(&pos, &mut succ);
    assert!(!succ.is_empty(), "an ongoing position has moves");
    let (mut first, mut pass, mut flags) = (vec![], vec![], STREAM_ONGOING);
    for (_, s) in &succ {
        let (sp, sr) = game.rank(s);
        let key = t.key(t.base_of(sp).expect("solved before"), sr.0);
        if sp == p {
            flags |= STREAM_INTERNAL;
            pass.push([key, r]);
        } else {
            first.push([key, r]);
        }
    }
    (
        STREAM_PENDING,
        flags,
        first,
        if flags & STREAM_INTERNAL != 0 {
            pass
        } else {
            vec![]
        },
    )
}

fn sorted(mut v: Vec<[u64; 2]>) -> Vec<[u64; 2]> {
    v.sort_unstable();
    v
}

/// A chunk's pass input: the first scan's output with every third pending
/// position decided (so only some expand).
fn pass_job(d: &ChunkDone) -> ChunkJob {
    ChunkJob {
        chunk: d.chunk,
        lo: d.lo,
        first_scan: false,
        values: d
            .values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if v == STREAM_PENDING && mix(d.lo + i as u64) % 3 == 0 {
                    5
                } else {
                    v
                }
            })
            .collect(),
        flags: d.flags.clone(),
    }
}

#[test]
fn cpu_reference_follows_the_game_rules() {
    for symmetry in [true, false] {
        let game = Morris::whole(4, symmetry).unwrap();
        for p in partitions(&game) {
            let t = targets(&game, p, 1_000 + u64::from(p.0) * 37, 1 << 12);
            for (lo, hi) in ranges(&game, &t, 3_000) {
                for job in jobs(lo, hi, 1_024) {
                    let first = expand_chunk_on_cpu(&game, &t, job).unwrap();
                    assert!(first.grouped(t.low_bits));
                    let pass = expand_chunk_on_cpu(&game, &t, pass_job(&first)).unwrap();
                    let (mut want_first, mut want_pass) = (vec![], vec![]);
                    for (j, &v) in first.values.iter().enumerate() {
                        let r = first.lo + j as u64;
                        let (value, flags, f, ps) = expected(&game, &t, r);
                        let name = game.partition_name(p);
                        assert_eq!(
                            (v, flag(&first.flags, j)),
                            (value, flags),
                            "{name} index {r}"
                        );
                        want_first.extend(f);
                        if pass_job(&first).values[j] == STREAM_PENDING {
                            want_pass.extend(ps);
                        }
                    }
                    assert_eq!(first.sorted_requests(), sorted(want_first));
                    assert_eq!(pass.sorted_requests(), sorted(want_pass));
                    assert_eq!(pass.flags, first.flags, "a pass leaves flags alone");
                    // The same pass sent without values asks the same.
                    let mut bare = pass_job(&first);
                    bare.drop_values();
                    assert!(bare.flags_only());
                    let bare = expand_chunk_on_cpu(&game, &t, bare).unwrap();
                    assert_eq!(bare.sorted_requests(), pass.sorted_requests());
                    assert!(bare.values.is_empty(), "it comes back without values");
                }
            }
        }
    }
}

/// A pass looked up where its successors are made blocks exactly the
/// positions one of whose requests (the full expansion's) names a blocking
/// successor, with values and sent without them, where blocking successors
/// are many (most candidates stop early: fewer lookups than requests), few,
/// or none (every request looked up).
#[test]
fn looking_up_blocks_exactly_the_requesters_of_a_blocking_successor() {
    let game = Morris::whole(4, true).unwrap();
    let mut stopped_early = false;
    for p in partitions(&game) {
        let t = targets(&game, p, 1_000 + u64::from(p.0) * 37, 1 << 12);
        let Some(base) = t.base_of(p) else { continue };
        let successor = |key: u64| {
            ((key >> t.low_bits) - base) * t.lookup_chunk + (key & ((1 << t.low_bits) - 1))
        };
        for (lo, hi) in ranges(&game, &t, 3_000) {
            for job in jobs(lo, hi, 1_024) {
                let first = expand_chunk_on_cpu(&game, &t, job).unwrap();
                let requests = expand_chunk_on_cpu(&game, &t, pass_job(&first))
                    .unwrap()
                    .requests;
                // One successor in `share` blocks (none for 0).
                for share in [2, 20, 0] {
                    let blocks = |s: u64| share > 0 && mix(s ^ 0x5eed) % share == 0;
                    let mut want: Vec<u64> = requests
                        .iter()
                        .filter(|&&[key, _]| blocks(successor(key)))
                        .map(|&[_, r]| r)
                        .collect();
                    want.sort_unstable();
                    want.dedup();
                    for bare in [false, true] {
                        let mut job = pass_job(&first);
                        if bare {
                            job.drop_values();
                        }
                        let got = std::sync::Mutex::new(Vec::new());
                        let blocked = |r: u64| got.lock().unwrap().push(r);
                        let lookup = Lookup {
                            blocks: &blocks,
                            blocked: &blocked,
                        };
                        let looked = look_up_chunk_on_cpu(&game, &t, &job, &lookup).unwrap();
                        let mut got = got.into_inner().unwrap();
                        got.sort_unstable();
                        let name = game.partition_name(p);
                        assert_eq!(got, want, "{name} {lo}..{hi}, 1 in {share}, bare {bare}");
                        assert!(looked <= requests.len() as u64, "{name}");
                        if share == 0 {
                            assert_eq!(looked, requests.len() as u64, "{name}: every request");
                        }
                        stopped_early |= looked < requests.len() as u64;
                    }
                }
            }
        }
    }
    assert!(stopped_early, "no position stopped at a blocking successor");
}

/// The kernel's view, on the CPU: the index's half and counts from the
/// descriptor, each successor ranked into the target the descriptor names
/// for its counts (its offset plus its rank in S(counts)), requested at the
/// target's first bucket; the requests must be the reference's.
#[test]
fn descriptor_gives_the_reference_requests() {
    for symmetry in [true, false] {
        let game = Morris::whole(4, symmetry).unwrap();
        let mut kinds = [0usize; 3];
        for p in partitions(&game) {
            let t = targets(&game, p, 777, 1 << 12);
            let d = StreamDesc::of(&game, &t).expect("every partition is covered");
            assert_eq!(d.size, game.partition_size(p));
            kinds[d.kind as usize] += 1;
            for (lo, hi) in ranges(&game, &t, 2_000) {
                let want = expand_chunk_on_cpu(&game, &t, jobs(lo, hi, 1 << 12).remove(0)).unwrap();
                let mut got = Vec::new();
                for r in lo..hi {
                    let j = (r - lo) as usize;
                    let value = want.values[j];
                    if d.kind == KIND_LOST {
                        assert!(value == STREAM_LOST || value == STREAM_ILLEGAL);
                        continue;
                    }
                    if value != STREAM_PENDING {
                        continue;
                    }
                    let h = d.halves.iter().rev().find(|h| h.base <= r).unwrap();
                    let pos = game.unrank(p, Rank(r)).unwrap();
                    assert_eq!(
                        (pos.mover.count_ones(), pos.opponent.count_ones()),
                        h.counts
                    );
                    let mut succ = Vec::new();
                    game.successors(&pos, &mut succ);
                    for (_, s) in &succ {
                        let counts = (s.mover.count_ones(), s.opponent.count_ones());
                        let target = if counts == h.quiet.counts {
                            h.quiet
                        } else {
                            h.capture.expect("a capture has a target")
                        };
                        assert_eq!(counts, target.counts);
                        let sr =
                            target.offset + game.half(counts.0, counts.1).rank(s.mover, s.opponent);
                        assert_eq!(game.rank(s).1 .0, sr);
                        if !target.internal {
                            got.push([t.key(target.base.unwrap(), sr), r]);
                        }
                    }
                }
                assert_eq!(
                    want.sorted_requests(),
                    sorted(got),
                    "{}",
                    game.partition_name(p)
                );
            }
        }
        assert!(kinds[KIND_LOST as usize] > 0 && kinds[KIND_MOVE as usize] > 0);
        assert!(kinds[KIND_PLACE as usize] > 0);
    }
}

/// A partition solved later than the expanded one has no bucket: the
/// descriptor says so, and the reference fails with the game's contract.
#[test]
fn a_target_without_bucket_is_missing_in_the_descriptor() {
    let game = Morris::whole(4, true).unwrap();
    let p = Morris::partition_of(4, 3);
    let mut t = targets(&game, p, 500, 1 << 12);
    t.bucket_base.retain(|(q, _)| *q == p);
    let d = StreamDesc::of(&game, &t).unwrap();
    assert!(d.halves.iter().all(|h| h.capture.unwrap().base.is_none()));
    assert!(d
        .halves
        .iter()
        .all(|h| h.quiet.base.is_some() && h.quiet.internal));
    let err = expand_chunk_on_cpu(&game, &t, jobs(0, 4_096, 4_096).remove(0));
    assert!(err.is_err());
}

#[cfg(feature = "cuda")]
mod gpu {
    use super::*;
    use tbforge::backend::cuda::CudaDevice;
    use tbforge::game::{ChunkExpander, Device};

    fn run(ex: &mut dyn ChunkExpander, jobs: Vec<ChunkJob>) -> Vec<ChunkDone> {
        let mut done = Vec::new();
        let mut in_flight = 0;
        for job in jobs {
            if in_flight == ex.depth() {
                done.push(ex.collect().unwrap());
                in_flight -= 1;
            }
            ex.submit(job).unwrap();
            in_flight += 1;
        }
        for _ in 0..in_flight {
            done.push(ex.collect().unwrap());
        }
        done
    }

    fn same(want: &[ChunkDone], got: &[ChunkDone], low_bits: u32, what: &str) {
        assert_eq!(want.len(), got.len(), "{what}");
        for (w, g) in want.iter().zip(got) {
            assert_eq!((w.chunk, w.lo), (g.chunk, g.lo), "{what}");
            let at = w.values.iter().zip(&g.values).position(|(a, b)| a != b);
            assert_eq!(w.values.len(), g.values.len(), "{what}: chunk {}", w.chunk);
            assert!(
                at.is_none(),
                "{what}: values of chunk {} differ at {at:?}",
                w.chunk
            );
            // Index by index: the bits past a partial chunk's end are nobody's.
            for j in 0..w.values.len() {
                assert_eq!(
                    flag(&w.flags, j),
                    flag(&g.flags, j),
                    "{what}: flags of chunk {} index {j}",
                    w.chunk
                );
            }
            assert_eq!(
                w.sorted_requests(),
                g.sorted_requests(),
                "{what}: chunk {}",
                w.chunk
            );
            assert!(g.grouped(low_bits), "{what}: chunk {} not grouped", w.chunk);
        }
    }

    #[test]
    fn stager_matches_the_cpu_reference() {
        let device = match CudaDevice::open(0) {
            Ok(d) => Arc::new(d),
            Err(e) => {
                eprintln!("SKIPPED stager_matches_the_cpu_reference: {e}");
                return;
            }
        };
        for symmetry in [true, false] {
            let game = Morris::whole(5, symmetry).unwrap();
            let kernels = game
                .kernels(&Device::Cuda(device.clone()))
                .unwrap()
                .unwrap();
            for p in partitions(&game) {
                let t = targets(&game, p, 3_000 + u64::from(p.0), 1 << 14);
                let mut ex = kernels.expander(&t, 1 << 28).expect("covered").unwrap();
                for (lo, hi) in ranges(&game, &t, 70_000) {
                    let chunk = ex.max_chunk().min(1 << 14);
                    let first_jobs = jobs(lo, hi, chunk);
                    let want: Vec<ChunkDone> = first_jobs
                        .iter()
                        .map(|j| {
                            let copy = ChunkJob {
                                values: j.values.clone(),
                                flags: j.flags.clone(),
                                ..ChunkJob {
                                    chunk: j.chunk,
                                    lo: j.lo,
                                    first_scan: true,
                                    ..Default::default()
                                }
                            };
                            expand_chunk_on_cpu(&game, &t, copy).unwrap()
                        })
                        .collect();
                    let name = game.partition_name(p);
                    let got = run(ex.as_mut(), first_jobs);
                    same(&want, &got, t.low_bits, &format!("{name} first scan"));
                    let pass_want: Vec<ChunkDone> = want
                        .iter()
                        .map(|d| expand_chunk_on_cpu(&game, &t, pass_job(d)).unwrap())
                        .collect();
                    let pass_got = run(ex.as_mut(), want.iter().map(pass_job).collect());
                    same(&pass_want, &pass_got, t.low_bits, &format!("{name} pass"));
                    let bare = |d: &ChunkDone| {
                        let mut job = pass_job(d);
                        job.drop_values();
                        job
                    };
                    let bare_want: Vec<ChunkDone> = want
                        .iter()
                        .map(|d| expand_chunk_on_cpu(&game, &t, bare(d)).unwrap())
                        .collect();
                    let bare_got = run(ex.as_mut(), want.iter().map(bare).collect());
                    same(
                        &bare_want,
                        &bare_got,
                        t.low_bits,
                        &format!("{name} pass without values"),
                    );
                }
            }
        }
    }

    /// The kernel compiles (NVRTC, no GPU needed) and keeps everything in
    /// registers and shared memory.
    #[test]
    fn stream_kernel_compiles_without_local_memory() {
        use tbforge::backend::cuda::{compile_kernel, nvrtc_available};
        if let Err(e) = nvrtc_available() {
            eprintln!("SKIPPED stream_kernel_compiles_without_local_memory: {e}");
            return;
        }
        let (file, source) = tbforge::registry::kernel_sources()
            .iter()
            .find(|(f, _)| *f == "morris.cu")
            .copied()
            .unwrap();
        let ptx = compile_kernel(file, source, "sm_90").unwrap().to_src();
        let at = ptx
            .find(".entry morris_stream_expand(")
            .expect("the entry point");
        let body = &ptx[at..];
        let end = body[1..].find(".entry ").map_or(body.len(), |e| e + 1);
        assert!(
            !body[..end].contains("__local_depot"),
            "morris_stream_expand uses local memory"
        );
    }
}
