//! Checkers on the streamed path without a GPU: the CPU twin of kernel
//! `checkers_stream_expand` (`game::checkers::stream::expand_twin`, written
//! over the kernels' tables) against the CPU expansion through the game's
//! rules (`expand_chunk_on_cpu`, the reference every device expander must
//! reproduce), chunk for chunk: values, flags and requests of a first scan,
//! of a pass over its output, and of that pass sent without values. The
//! kernel against the twin is `tbforge bench gpu checkers` on a GPU
//! (scripts/gpu_check.sh); that it compiles is tests/kernels_compile.rs.
#![cfg(feature = "build")]

use std::collections::BTreeMap;
use std::sync::Arc;

use tbforge::game::checkers::stream::{expand_twin, StreamBuckets, NO_BUCKET};
use tbforge::game::checkers::twin::CheckersTables;
use tbforge::game::checkers::Checkers;
use tbforge::game::{
    expand_chunk_on_cpu, ChunkDone, ChunkJob, Game, Layout, StreamTargets, STREAM_INTERNAL,
    STREAM_LOST, STREAM_PENDING,
};
use tbforge::hash::SplitMix64;
use tbforge::Error;

fn pieces(n: u32) -> Checkers {
    let raw = BTreeMap::from([("pieces".to_string(), n.to_string())]);
    Checkers::from_params(&raw).unwrap()
}

/// Targets of the partition at `slot` as a build lays them out: every
/// partition up to it, in the build's order, its buckets in turn.
fn targets(layout: &Layout, slot: usize, lookup_chunk: u64) -> StreamTargets {
    let order = (0..=slot).map(|q| (layout.order()[q], layout.size(q)));
    StreamTargets::laid_out(order, layout.order()[slot], lookup_chunk, 1 << 12)
}

/// First-scan jobs over `lo..hi` of `chunk` indices, random input bytes.
fn jobs(lo: u64, hi: u64, chunk: u64, rng: &mut SplitMix64) -> Vec<ChunkJob> {
    let mut out = Vec::new();
    let mut at = lo;
    while at < hi {
        let n = chunk.min(hi - at) as usize;
        out.push(ChunkJob {
            chunk: out.len() as u64,
            lo: at,
            first_scan: true,
            values: (0..n).map(|_| rng.next_u64() as u8).collect(),
            flags: (0..n.div_ceil(4)).map(|_| rng.next_u64() as u8).collect(),
        });
        at += n as u64;
    }
    out
}

fn copy(j: &ChunkJob) -> ChunkJob {
    ChunkJob {
        chunk: j.chunk,
        lo: j.lo,
        first_scan: j.first_scan,
        values: j.values.clone(),
        flags: j.flags.clone(),
    }
}

fn flag(flags: &[u8], j: usize) -> u8 {
    (flags[j / 4] >> (2 * (j % 4))) & 3
}

/// The twin's chunk equals the reference's: values, each index's flags,
/// the multiset of requests; and the twin's are grouped by bucket.
fn assert_same(want: &ChunkDone, got: &ChunkDone, low_bits: u32, what: &str) {
    assert_eq!((got.chunk, got.lo), (want.chunk, want.lo), "{what}");
    assert_eq!(got.values, want.values, "{what}: values");
    // A job sent without values has four indices a flag byte.
    let indices = if want.values.is_empty() {
        4 * want.flags.len()
    } else {
        want.values.len()
    };
    for j in 0..indices {
        assert_eq!(
            flag(&got.flags, j),
            flag(&want.flags, j),
            "{what}: flags of index {}",
            want.lo + j as u64
        );
    }
    assert_eq!(
        got.sorted_requests(),
        want.sorted_requests(),
        "{what}: requests"
    );
    assert!(got.grouped(low_bits), "{what}: grouped by bucket");
}

/// A pass's input from a first scan: a random third of the pending
/// positions decided.
fn pass_job(d: &ChunkDone, rng: &mut SplitMix64) -> ChunkJob {
    ChunkJob {
        chunk: d.chunk,
        lo: d.lo,
        first_scan: false,
        values: d
            .values
            .iter()
            .map(|&v| {
                if v == STREAM_PENDING && rng.below(3) == 0 {
                    3 + 2 * rng.below(40) as u8
                } else {
                    v
                }
            })
            .collect(),
        flags: d.flags.clone(),
    }
}

/// What the comparison covered, so that it cannot pass on nothing.
#[derive(Default, Debug)]
struct Seen {
    lost: u64,
    internal: u64,
    first_scan_requests: u64,
    pass_requests: u64,
    mirrored: u64,
}

/// The twin against the rules on ranges of the largest partitions of 4
/// pieces and of some drawn at random, with random lookup chunks (several
/// buckets a partition) and random reached bits on half of them.
#[test]
fn twin_matches_the_cpu_expansion() {
    let game = pieces(4);
    let layout = Layout::new(&game).unwrap();
    let mut rng = SplitMix64::new(0xc4ec_5eed);
    let mut slots: Vec<usize> = (0..layout.len()).collect();
    slots.sort_by_key(|&s| std::cmp::Reverse(layout.size(s)));
    let mut picked: Vec<usize> = slots[..4].to_vec();
    picked.extend((0..12).map(|_| slots[rng.below(slots.len() as u64) as usize]));
    let mut seen = Seen::default();
    for (i, slot) in picked.into_iter().enumerate() {
        let p = layout.order()[slot];
        let size = layout.size(slot);
        let mut t = targets(&layout, slot, 64 + rng.below(5_000));
        if i % 2 == 1 {
            let words: Vec<u64> = (0..size.div_ceil(64))
                .map(|_| rng.next_u64() | rng.next_u64())
                .collect();
            t.reached = Some(Arc::from(words));
        }
        let tables = CheckersTables::new(&game, p).unwrap();
        if tables.own[1] != u32::MAX {
            seen.mirrored += 1;
        }
        let buckets = StreamBuckets::of(&tables, &t);
        let len = size.min(20_000);
        let lo = rng.below(size - len + 1) / 64 * 64;
        let hi = (lo + len).min(size);
        let chunk = 64 * (1 + rng.below(64));
        for job in jobs(lo, hi, chunk, &mut rng) {
            let name = game.partition_name(p);
            let want = expand_chunk_on_cpu(&game, &t, copy(&job)).unwrap();
            let got = expand_twin(&game, &tables, &buckets, &t, job).unwrap();
            assert_same(&want, &got, t.low_bits, &format!("{name} first scan"));
            seen.lost += want.values.iter().filter(|&&v| v == STREAM_LOST).count() as u64;
            seen.internal += (0..want.values.len())
                .filter(|&j| flag(&want.flags, j) & STREAM_INTERNAL != 0)
                .count() as u64;
            seen.first_scan_requests += want.requests.len() as u64;
            let pass = pass_job(&want, &mut rng);
            let mut bare = copy(&pass);
            bare.drop_values();
            for (job, what) in [(pass, "pass"), (bare, "pass without values")] {
                let want = expand_chunk_on_cpu(&game, &t, copy(&job)).unwrap();
                let got = expand_twin(&game, &tables, &buckets, &t, job).unwrap();
                assert_same(&want, &got, t.low_bits, &format!("{name} {what}"));
                seen.pass_requests += want.requests.len() as u64;
            }
        }
    }
    assert!(
        seen.lost > 0
            && seen.internal > 0
            && seen.first_scan_requests > 0
            && seen.pass_requests > 0
            && seen.mirrored > 0,
        "the comparison covered too little: {seen:?}"
    );
}

/// A first scan that meets a move into a partition without a bucket (not
/// solved before it) fails on the twin as on the rules: the game's
/// contract, not a panic or a silent skip.
#[test]
fn a_dependency_without_a_bucket_breaks_the_contract_on_both() {
    let game = pieces(3);
    let layout = Layout::new(&game).unwrap();
    let slot = (0..layout.len()).max_by_key(|&s| layout.size(s)).unwrap();
    let p = layout.order()[slot];
    let mut t = targets(&layout, slot, 1 << 20);
    let tables = CheckersTables::new(&game, p).unwrap();
    // Take away the bucket of the dependency asked for most.
    let full = StreamBuckets::of(&tables, &t);
    let size = layout.size(slot);
    let done = expand_twin(
        &game,
        &tables,
        &full,
        &t,
        jobs(0, size, size, &mut SplitMix64::new(1)).remove(0),
    )
    .unwrap();
    let bucket = done.requests[0][0] >> t.low_bits;
    let dep = t
        .bucket_base
        .iter()
        .filter(|(_, b)| *b <= bucket)
        .max_by_key(|(_, b)| *b)
        .unwrap()
        .0;
    assert_ne!(dep, p, "a first scan asks only of earlier partitions");
    t.bucket_base.retain(|(q, _)| *q != dep);
    let buckets = StreamBuckets::of(&tables, &t);
    assert!(buckets.deps.contains(&NO_BUCKET));
    let job = jobs(0, size, size, &mut SplitMix64::new(2)).remove(0);
    let want = expand_chunk_on_cpu(&game, &t, copy(&job));
    let got = expand_twin(&game, &tables, &buckets, &t, job);
    for (who, r) in [("rules", want), ("twin", got)] {
        match r {
            Err(Error::GameContract { game, message }) => {
                assert_eq!(game, "checkers");
                assert!(message.contains("not solved before it"), "{who}: {message}");
            }
            other => panic!("{who}: expected a contract error, got {other:?}"),
        }
    }
}
