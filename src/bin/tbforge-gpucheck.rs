//! tbforge-gpucheck: on a GPU machine, checks every CUDA kernel against its
//! CPU twin on fresh random inputs, then measures expansion throughput of the
//! CPU (all cores) and the GPU on Nine Men's Morris partition 7-7. Prints a
//! table last; `--out DIR` also writes the full log there. Exit status 0 only
//! if every comparison matched.
//!
//! Usage: tbforge-gpucheck [--ranks-log2 N] [--samples N] [--seed S] [--out DIR] [--cpu-only]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use tbforge::backend::cpu;
use tbforge::backend::cuda::CudaBackend;
use tbforge::backend::morris::{self, Expansion, MorrisPartition, Summary};
use tbforge::backend::rank24;
use tbforge::Rank;

struct Opts {
    ranks_log2: u32,
    samples: usize,
    seed: u64,
    out: Option<PathBuf>,
    cpu_only: bool,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        ranks_log2: 28,
        samples: 1 << 20,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
        out: None,
        cpu_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--ranks-log2" => {
                o.ranks_log2 = value(&a)?
                    .parse()
                    .map_err(|e| format!("--ranks-log2: {e}"))?;
                if !(10..=32).contains(&o.ranks_log2) {
                    return Err("--ranks-log2 must be in 10..=32".into());
                }
            }
            "--samples" => o.samples = value(&a)?.parse().map_err(|e| format!("--samples: {e}"))?,
            "--seed" => o.seed = value(&a)?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--out" => o.out = Some(PathBuf::from(value(&a)?)),
            "--cpu-only" => o.cpu_only = true,
            "-h" | "--help" => {
                return Err(
                    "usage: tbforge-gpucheck [--ranks-log2 N] [--samples N] [--seed S] \
                            [--out DIR] [--cpu-only]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(o)
}

/// Log lines go to stdout and to the log kept for --out.
struct Log(String);

impl Log {
    fn line(&mut self, s: impl AsRef<str>) {
        println!("{}", s.as_ref());
        let _ = std::io::stdout().flush();
        self.0.push_str(s.as_ref());
        self.0.push('\n');
    }
}

fn random_ranks(seed: &mut u64, size: u64, n: usize) -> Vec<Rank> {
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_add(1);
            Rank(morris::mix64(*seed) % size)
        })
        .collect()
}

fn main() {
    let opts = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tbforge-gpucheck: {e}");
            std::process::exit(2);
        }
    };
    match run(&opts) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("tbforge-gpucheck: {e}");
            std::process::exit(2);
        }
    }
}

fn run(o: &Opts) -> tbforge::Result<bool> {
    let mut log = Log(String::new());
    let mut ok = true;
    let mut seed = o.seed;
    let threads = rayon::current_num_threads();
    log.line(format!("seed {}  cpu threads {threads}", o.seed));
    let gpu = if o.cpu_only {
        None
    } else {
        let t = Instant::now();
        let g = CudaBackend::open(0)?;
        log.line(format!(
            "device: {}  sm_{}{}  {} SMs  (open + NVRTC {:.2} s)",
            g.device_name(),
            g.compute_capability().0,
            g.compute_capability().1,
            g.multiprocessors(),
            t.elapsed().as_secs_f64()
        ));
        Some(g)
    };
    let mut table = String::new();

    // (a) Kernel against twin on fresh random inputs.
    if let Some(g) = &gpu {
        for (k1, k2) in [
            (7, 7),
            (9, 9),
            (3, 3),
            (12, 12),
            (3, 9),
            (9, 3),
            (8, 5),
            (0, 24),
            (24, 0),
            (1, 0),
        ] {
            let size = rank24::size(k1, k2).expect("fits");
            let ranks = random_ranks(&mut seed, size, o.samples.min(size as usize * 4));
            let want = cpu::rank_check(k1, k2, &ranks)?;
            let got = g.rank_check(k1, k2, &ranks)?;
            let bad = want.iter().zip(&got).filter(|(w, g)| w != g).count()
                + want
                    .iter()
                    .zip(&ranks)
                    .filter(|(w, r)| w.rank != r.0)
                    .count();
            ok &= bad == 0;
            log.line(format!(
                "rank/unrank {k1}-{k2}: {} random ranks, {bad} mismatches",
                ranks.len()
            ));
        }
        for (k1, k2) in [
            (7, 7),
            (9, 9),
            (3, 3),
            (3, 9),
            (9, 3),
            (8, 5),
            (5, 8),
            (4, 3),
            (3, 4),
            (6, 6),
            (9, 6),
        ] {
            let part = MorrisPartition::new(k1, k2)?;
            let ranks = random_ranks(&mut seed, part.size(), o.samples);
            let want = cpu::morris_expand_ranks(part, &ranks)?;
            let got = g.morris_expand_ranks(part, &ranks)?;
            let bad = want.iter().zip(&got).filter(|(w, g)| w != g).count();
            let succ: u64 = want.iter().map(|e| u64::from(e.successors)).sum();
            ok &= bad == 0;
            log.line(format!(
                "morris expand {k1}-{k2}: {} random ranks, {succ} successors, {bad} mismatches",
                ranks.len()
            ));
        }
    }

    // (b) Throughput on 7-7, the first 2^n ranks (as in GPU.md's probe).
    let part = MorrisPartition::new(7, 7)?;
    let count = 1u64 << o.ranks_log2;
    let t = Instant::now();
    let cpu_sum = cpu::morris_summary(part, Rank(0), count)?;
    let cpu_s = t.elapsed().as_secs_f64();
    let cpu_rate = count as f64 / cpu_s;
    log.line(format!(
        "cpu  7-7 2^{}: {:.3} s  {:.1} M pos/s  {:.1} M succ/s  successors {} digest {:016x}",
        o.ranks_log2,
        cpu_s,
        cpu_rate / 1e6,
        cpu_sum.successors as f64 / cpu_s / 1e6,
        cpu_sum.successors,
        cpu_sum.digest
    ));
    let _ = writeln!(
        table,
        "{:<44} {:>12} {:>10}",
        "run (Morris 7-7, first 2^n ranks)", "M pos/s", "vs CPU"
    );
    let _ = writeln!(
        table,
        "{:<44} {:>12.1} {:>10}",
        format!("CPU rayon, {threads} threads"),
        cpu_rate / 1e6,
        "1.0x"
    );
    if let Some(g) = &gpu {
        // Warm-up (module load, clocks), then each block size.
        g.morris_summary(part, Rank(0), count.min(1 << 22), 256)?;
        let mut best = (0.0f64, 0u32);
        for block in [128, 256, 512, 256] {
            let r = g.morris_summary(part, Rank(0), count, block)?;
            let same = r.value == cpu_sum;
            ok &= same;
            let rate = count as f64 / r.seconds;
            let occ = g.morris_summary_occupancy(part, block)?;
            log.line(format!(
                "gpu summary block {block} ({occ} blocks/SM): {:.4} s  {:.1} M pos/s  {:.1} G succ/s  matches cpu: {same}",
                r.seconds,
                rate / 1e6,
                r.value.successors as f64 / r.seconds / 1e9
            ));
            if rate > best.0 {
                best = (rate, block);
            }
        }
        let _ = writeln!(
            table,
            "{:<44} {:>12.1} {:>9.1}x",
            format!("GPU summary kernel (block {})", best.1),
            best.0 / 1e6,
            best.0 / cpu_rate
        );
        // Per-position results back to the host, digested there.
        let mut host = Summary::default();
        let streamed =
            g.morris_expand_streamed(part, Rank(0), count, 1 << 24, |first, counts, sums| {
                let s = counts
                    .par_iter()
                    .zip(sums.par_iter())
                    .enumerate()
                    .fold(Summary::default, |mut s, (i, (&c, &x))| {
                        s.add(
                            first.0 + i as u64,
                            Expansion {
                                successors: u32::from(c),
                                checksum: x,
                            },
                        );
                        s
                    })
                    .reduce(Summary::default, Summary::merge);
                host = host.merge(s);
                Ok(())
            })?;
        let same = host == cpu_sum;
        ok &= same;
        let rate = count as f64 / streamed.seconds;
        log.line(format!(
            "gpu streamed (per-position results to pinned host memory, 2 streams, 2^24 chunks; setup {:.3} s not counted): {:.3} s  {:.1} M pos/s  {:.2} GB/s back  matches cpu: {same}",
            streamed.value,
            streamed.seconds,
            rate / 1e6,
            count as f64 * 10.0 / streamed.seconds / 1e9
        ));
        let _ = writeln!(
            table,
            "{:<44} {:>12.1} {:>9.1}x",
            "GPU + results to host (streamed)",
            rate / 1e6,
            rate / cpu_rate
        );
        // Other partitions: flying (3-9) and the largest (9-9, 8-8), GPU only
        // plus a CPU sample for the ratio.
        for (k1, k2) in [(9, 9), (3, 9), (8, 8)] {
            let p = MorrisPartition::new(k1, k2)?;
            let n = (count / 4).min(p.size());
            let r = g.morris_summary(p, Rank(0), n, best.1)?;
            let m = n / 16;
            let t = Instant::now();
            let c = cpu::morris_summary(p, Rank(0), m)?;
            let cs = t.elapsed().as_secs_f64();
            let g2 = g.morris_summary(p, Rank(0), m, best.1)?;
            let same = g2.value == c;
            ok &= same;
            let (gr, cr) = (n as f64 / r.seconds, m as f64 / cs);
            log.line(format!(
                "{k1}-{k2}: gpu {:.1} M pos/s over {n}, cpu {:.1} M pos/s over {m}, sample matches: {same}",
                gr / 1e6,
                cr / 1e6
            ));
            let _ = writeln!(
                table,
                "{:<44} {:>12.1} {:>9.1}x",
                format!("GPU summary {k1}-{k2} (CPU {:.1} M/s)", cr / 1e6),
                gr / 1e6,
                gr / cr
            );
        }
    }
    log.line("");
    log.line(format!("all comparisons matched: {ok}"));
    for l in table.lines() {
        log.line(l);
    }
    if let Some(dir) = &o.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| tbforge::Error::io("creating directory", dir, e))?;
        let path = dir.join("gpucheck.log");
        std::fs::write(&path, &log.0).map_err(|e| tbforge::Error::io("writing", &path, e))?;
    }
    Ok(ok)
}
