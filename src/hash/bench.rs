//! Micro-benchmark of the hashes' hot paths (`tbforge bench hash`).
//!
//! Inputs are deterministic: ranks spread over each space by a fixed
//! SplitMix64 stream, unranked once before timing, so every run ranks the
//! same configurations. Only the timings vary from run to run.

use std::hint::black_box;
use std::time::Instant;

use super::{Binomial, Multinomial, Permutation, SplitMix64};

/// One benchmarked hash: nanoseconds per rank and per unrank (the mean
/// over the fastest trial, so that other load on the machine inflates it less).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BenchRow {
    /// The hash and its space, e.g. `multinomial 24; 9+9 (board)`.
    pub name: String,
    /// Nanoseconds per rank.
    pub ns_per_rank: f64,
    /// Nanoseconds per unrank.
    pub ns_per_unrank: f64,
    /// Ranks (and unranks) timed.
    pub iterations: usize,
    /// XOR of all ranks computed: equal across runs and machines, so it
    /// shows that the timed work was the same (and keeps it from being optimised away).
    pub checksum: u64,
}

/// Distinct inputs per benchmark, cycled over: enough to defeat branch
/// prediction on whole inputs, few enough to stay in the L1 cache.
const INPUTS: usize = 1024;

/// Calls per timed trial: a few hundred microseconds, short enough that
/// some trials run without the scheduler interrupting them on a busy machine.
const TRIAL: usize = 4096;

/// Times `rank` over `inputs` and `unrank` over `ranks`, `iterations` calls
/// each, in trials of [`TRIAL`] calls; reports the fastest trial's mean.
fn time<I>(
    name: &str,
    iterations: usize,
    inputs: &[I],
    ranks: &[u64],
    mut rank: impl FnMut(&I) -> u64,
    mut unrank: impl FnMut(u64) -> u64,
) -> BenchRow {
    let mut checksum = 0u64;
    let mut sink = 0u64;
    let (mut best_rank, mut best_unrank) = (f64::INFINITY, f64::INFINITY);
    let mut done = 0;
    while done < iterations {
        let calls = TRIAL.min(iterations - done);
        let start = Instant::now();
        for i in done..done + calls {
            checksum ^= rank(black_box(&inputs[i % inputs.len()]));
        }
        best_rank = best_rank.min(start.elapsed().as_nanos() as f64 / calls as f64);
        let start = Instant::now();
        for i in done..done + calls {
            sink ^= unrank(black_box(ranks[i % ranks.len()]));
        }
        best_unrank = best_unrank.min(start.elapsed().as_nanos() as f64 / calls as f64);
        done += calls;
    }
    black_box(sink);
    BenchRow {
        name: name.to_string(),
        ns_per_rank: if iterations == 0 { 0.0 } else { best_rank },
        ns_per_unrank: if iterations == 0 { 0.0 } else { best_unrank },
        iterations,
        checksum,
    }
}

/// Measures ns per rank and per unrank, `iterations` calls each, for the
/// 24-cell 9+9 multinomial space (board arrays, masks, and the general
/// any-colour path on the same space), binomial 33/16 and permutations of
/// 16 (lexicographic, Myrvold–Ruskey, halved Myrvold–Ruskey).
pub fn run(iterations: usize) -> Vec<BenchRow> {
    let mut rows = Vec::new();
    let mut rng = SplitMix64::new(0x7B0A_C001_F939_6E38);

    let multi = Multinomial::new(24, &[9, 9]).expect("24 cells hold 9+9 pieces");
    let ranks: Vec<u64> = (0..INPUTS).map(|_| rng.below(multi.size())).collect();
    let boards: Vec<[u8; 24]> = ranks
        .iter()
        .map(|&r| {
            let mut b = [0u8; 24];
            multi.unrank(r, &mut b);
            b
        })
        .collect();
    rows.push(time(
        "multinomial 24; 9+9 (board)",
        iterations,
        &boards,
        &ranks,
        |b| multi.rank(b),
        |r| {
            let mut b = [0u8; 24];
            multi.unrank(r, &mut b);
            u64::from(b[0]) ^ u64::from(b[23])
        },
    ));
    let masks: Vec<(u64, u64)> = ranks.iter().map(|&r| multi.unrank2(r)).collect();
    rows.push(time(
        "multinomial 24; 9+9 (masks)",
        iterations,
        &masks,
        &ranks,
        |&(ones, twos)| multi.rank2(ones, twos),
        |r| {
            let (ones, twos) = multi.unrank2(r);
            ones ^ twos
        },
    ));
    // The general path (any number of colours) on the same space, for comparison.
    rows.push(time(
        "multinomial 24; 9+9 (general path)",
        iterations,
        &boards,
        &ranks,
        |b| multi.rank_general(b),
        |r| {
            let mut b = [0u8; 24];
            multi.unrank_general(r, &mut b);
            u64::from(b[0]) ^ u64::from(b[23])
        },
    ));

    let bin = Binomial::new(33, 16).expect("16 of 33 cells");
    let ranks: Vec<u64> = (0..INPUTS).map(|_| rng.below(bin.size())).collect();
    let subsets: Vec<u64> = ranks.iter().map(|&r| bin.unrank(r)).collect();
    rows.push(time(
        "binomial 33/16",
        iterations,
        &subsets,
        &ranks,
        |&m| bin.rank(m),
        |r| bin.unrank(r),
    ));

    let perm = Permutation::new(16).expect("16 items");
    let ranks: Vec<u64> = (0..INPUTS).map(|_| rng.below(perm.size())).collect();
    let lex_perms: Vec<[u8; 16]> = ranks
        .iter()
        .map(|&r| {
            let mut p = [0u8; 16];
            perm.lex_unrank(r, &mut p);
            p
        })
        .collect();
    rows.push(time(
        "permutation 16 lexicographic",
        iterations,
        &lex_perms,
        &ranks,
        |p| perm.lex_rank(p),
        |r| {
            let mut p = [0u8; 16];
            perm.lex_unrank(r, &mut p);
            u64::from(p[0]) ^ u64::from(p[15])
        },
    ));
    let mr_perms: Vec<[u8; 16]> = ranks
        .iter()
        .map(|&r| {
            let mut p = [0u8; 16];
            perm.mr_unrank(r, &mut p);
            p
        })
        .collect();
    rows.push(time(
        "permutation 16 Myrvold-Ruskey",
        iterations,
        &mr_perms,
        &ranks,
        |p| perm.mr_rank(p).0,
        |r| {
            let mut p = [0u8; 16];
            let parity = perm.mr_unrank(r, &mut p);
            u64::from(p[0]) ^ u64::from(p[15]) ^ parity as u64
        },
    ));
    let half_ranks: Vec<u64> = ranks.iter().map(|&r| r % perm.half_size()).collect();
    rows.push(time(
        "permutation 16 Myrvold-Ruskey even half",
        iterations,
        &mr_perms,
        &half_ranks,
        |p| perm.mr_half_rank(p),
        |h| {
            let mut p = [0u8; 16];
            perm.mr_half_unrank(h, super::Parity::Even, &mut p);
            u64::from(p[0]) ^ u64::from(p[15])
        },
    ));
    rows
}

#[cfg(test)]
mod tests {
    #[test]
    fn rows_are_deterministic_in_content() {
        let a = super::run(2000);
        let b = super::run(2000);
        assert_eq!(a.len(), 7);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((&x.name, x.checksum), (&y.name, y.checksum));
            assert!(x.ns_per_rank > 0.0 && x.ns_per_unrank > 0.0, "{x:?}");
        }
    }
}

#[cfg(test)]
mod print {
    /// `cargo test --lib hash::bench::print -- --ignored --nocapture` prints the table.
    #[test]
    #[ignore = "timing run, not a check"]
    fn print_bench() {
        for row in super::run(2_000_000) {
            println!(
                "{:<42} {:>8.1} ns/rank {:>8.1} ns/unrank  (checksum {:#018x})",
                row.name, row.ns_per_rank, row.ns_per_unrank, row.checksum
            );
        }
    }
}
