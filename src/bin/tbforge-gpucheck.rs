//! tbforge-gpucheck: on a GPU machine, checks every CUDA kernel against its
//! CPU twin on fresh random inputs, then measures expansion throughput of the
//! CPU (all cores) and the GPU on Nine Men's Morris partition 7-7. Prints a
//! table last; `--out DIR` also writes the full log there. Exit status 0 only
//! if every comparison matched.
//!
//! Usage: tbforge-gpucheck [--ranks-log2 N] [--samples N] [--seed S] [--out DIR] [--cpu-only]
//!
//! `tbforge-gpucheck solve [--max N] [--partitions 6-6,7-7] [--symmetry on|off]
//! [--cpu-max-size S] [--reference] [--out DIR]` solves the partitions of
//! `morris` (max N; with `--partitions`, only those, after their dependencies,
//! which are solved on the GPU only, and max defaults to the largest named)
//! with the CPU backend (the candidate-driven CpuTwin, all cores) and with the
//! GPU (CudaBackend::morris_solve), compares the bytes and prints a table of
//! positions/s and the ratio; partitions with more than S indices (default:
//! all) are solved on the GPU only. `--reference` also solves each compared
//! partition with solve::solve_partition and checks its bytes.
//!
//! `tbforge-gpucheck connect4 [--boards 4x4,5x4,...] [--cpu-max-positions P]
//! [--samples N] [--seed S] [--twin] [--out DIR]` first checks the kernel
//! `connect4_solve` against its CPU twin on fresh random indices of large boards
//! (7x6, 8x7, 9x6, 4x15; synthetic successor values), then solves every
//! partition of each board with the CPU solver (solve::solve_partition, all
//! cores) and with the GPU (each partition from the GPU's previous one, kept on
//! the device, as a build does), compares the bytes and prints positions/s per
//! board; boards of more than P positions are solved on the GPU only. `--twin`
//! puts the CPU twin in the GPU's place (a dry run without a GPU).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use tbforge::backend::cpu;
use tbforge::backend::cuda::{CudaBackend, MORRIS_EXPAND_KERNELS, MORRIS_SUMMARY_KERNELS};
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
    if std::env::args().nth(1).as_deref() == Some("connect4") {
        match connect4_main() {
            Ok(true) => return,
            Ok(false) => std::process::exit(1),
            Err(e) => {
                eprintln!("tbforge-gpucheck connect4: {e}");
                std::process::exit(2);
            }
        }
    }
    if std::env::args().nth(1).as_deref() == Some("solve") {
        match solve_main() {
            Ok(true) => return,
            Ok(false) => std::process::exit(1),
            Err(e) => {
                eprintln!("tbforge-gpucheck solve: {e}");
                std::process::exit(2);
            }
        }
    }
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
            let succ: u64 = want.iter().map(|e| u64::from(e.successors)).sum();
            for (name, _) in MORRIS_EXPAND_KERNELS {
                let got = g.morris_expand_ranks_with(part, &ranks, name)?;
                let bad = want.iter().zip(&got).filter(|(w, g)| w != g).count();
                ok &= bad == 0;
                log.line(format!(
                    "{name} {k1}-{k2}: {} random ranks, {succ} successors, {bad} mismatches",
                    ranks.len()
                ));
            }
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
        // Warm-up (module load, clocks), then each kernel at each block size.
        g.morris_summary(part, Rank(0), count.min(1 << 22), 256, "morris_summary")?;
        let mut best = (0.0f64, 0u32, "");
        for (name, _) in MORRIS_SUMMARY_KERNELS {
            let mut mine = (0.0f64, 0u32);
            for block in [256, 512] {
                let occ = g.morris_summary_occupancy(part, block, name)?;
                if occ == 0 {
                    log.line(format!("{name} block {block}: does not fit on an SM"));
                    continue;
                }
                let r = g.morris_summary(part, Rank(0), count, block, name)?;
                let same = r.value == cpu_sum;
                ok &= same;
                let rate = count as f64 / r.seconds;
                log.line(format!(
                    "{name} block {block} ({occ} blocks/SM): {:.4} s  {:.1} M pos/s  {:.1} G succ/s  matches cpu: {same}",
                    r.seconds,
                    rate / 1e6,
                    r.value.successors as f64 / r.seconds / 1e9
                ));
                if same && rate > mine.0 {
                    mine = (rate, block);
                }
            }
            let _ = writeln!(
                table,
                "{:<44} {:>12.1} {:>9.1}x",
                format!("GPU {name} (block {})", mine.1),
                mine.0 / 1e6,
                mine.0 / cpu_rate
            );
            if mine.0 > best.0 {
                best = (mine.0, mine.1, name);
            }
        }
        if best.0 == 0.0 {
            return Ok(false);
        }
        // Ranges that end inside a warp (stand-in lanes) for every kernel; after
        // the timings, so that a kernel that fails here leaves them in the log.
        for (k1, k2) in [(7, 7), (9, 9), (3, 9)] {
            let p = MorrisPartition::new(k1, k2)?;
            let (start, n) = (Rank(12_345), 1_000_003u64);
            let want = cpu::morris_summary(p, start, n)?;
            for (name, _) in MORRIS_SUMMARY_KERNELS {
                let got = g.morris_summary(p, start, n, 256, name)?;
                let same = got.value == want;
                ok &= same;
                log.line(format!(
                    "{name} {k1}-{k2} ranks 12345 + 1000003: matches cpu: {same}"
                ));
            }
            let ranks = random_ranks(&mut seed, p.size(), 1001);
            let want = cpu::morris_expand_ranks(p, &ranks)?;
            for (name, _) in MORRIS_EXPAND_KERNELS {
                let same = g.morris_expand_ranks_with(p, &ranks, name)? == want;
                ok &= same;
                log.line(format!("{name} {k1}-{k2} 1001 ranks: matches cpu: {same}"));
            }
        }
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
            let r = g.morris_summary(p, Rank(0), n, best.1, best.2)?;
            let m = n / 16;
            let t = Instant::now();
            let c = cpu::morris_summary(p, Rank(0), m)?;
            let cs = t.elapsed().as_secs_f64();
            let g2 = g.morris_summary(p, Rank(0), m, best.1, best.2)?;
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
                format!("GPU {} {k1}-{k2} (CPU {:.1} M/s)", best.2, cr / 1e6),
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

struct SolveRow {
    name: String,
    size: u64,
    cpu_s: Option<f64>,
    gpu_s: Option<f64>,
    passes: u32,
    pending: u64,
    same: Option<bool>,
    /// Solved only as a dependency of a named partition.
    dependency: bool,
}

struct SolveCheck<'a> {
    gpu: &'a CudaBackend,
    cpu_max_size: u64,
    /// The partitions to compare (None: all).
    only: Option<Vec<String>>,
    reference: bool,
    log: &'a mut Log,
}

/// `names` and every partition their captures lead to, transitively.
fn with_dependencies(names: &[String], symmetry: bool) -> tbforge::Result<Vec<String>> {
    use tbforge::backend::morris_retro::MorrisSolveSpec;
    let mut out: Vec<String> = Vec::new();
    let mut todo: Vec<String> = names.to_vec();
    while let Some(n) = todo.pop() {
        if out.contains(&n) {
            continue;
        }
        let bad = || tbforge::Error::Cuda(format!("--partitions: {n} is no partition k1-k2"));
        let (a, b) = n.split_once('-').ok_or_else(bad)?;
        let (k1, k2): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if k1 != 2 {
            todo.extend(MorrisSolveSpec::new(k1, k2, symmetry)?.dependencies());
        }
        out.push(n);
    }
    Ok(out)
}

fn first_difference(c: &[u8], g: &[u8]) -> String {
    let i = (0..c.len().min(g.len()))
        .find(|&i| c[i] != g[i])
        .unwrap_or(0);
    format!(
        "  first difference at index {i}: cpu {} gpu {}",
        c.get(i).copied().unwrap_or(0),
        g.get(i).copied().unwrap_or(0)
    )
}

impl tbforge::game::registry::GameVisitor for SolveCheck<'_> {
    type Output = tbforge::Result<Vec<SolveRow>>;
    fn visit<G: tbforge::Game>(self, game: &G) -> tbforge::Result<Vec<SolveRow>> {
        use tbforge::backend::accel::{morris_deps, morris_spec};
        use tbforge::backend::morris_retro::CpuTwin;
        use tbforge::solve::{solve_partition, Layout, Progress};
        let layout = Layout::new(game)?;
        let symmetry = game
            .info()
            .params
            .get("symmetry")
            .is_some_and(|v| v == "on");
        let needed = match &self.only {
            Some(names) => Some(with_dependencies(names, symmetry)?),
            None => None,
        };
        let mut solved: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
        let mut rows = Vec::new();
        for slot in 0..layout.len() {
            let name = game.partition_name(layout.order()[slot]);
            if needed.as_ref().is_some_and(|n| !n.contains(&name)) {
                continue;
            }
            let named = self.only.as_ref().is_none_or(|o| o.contains(&name));
            let size = layout.size(slot);
            let deps: Vec<Option<&[u8]>> = solved.iter().map(|v| v.as_deref()).collect();
            let Some(spec) = morris_spec(game, &layout, slot) else {
                // 2-k: lost everywhere, no kernel; the CPU solver.
                let v = solve_partition(game, &layout, &deps, slot, &Progress::hidden())?;
                solved[slot] = Some(v);
                continue;
            };
            let d = morris_deps(game, &layout, &deps, &spec, slot)?;
            let t = Instant::now();
            let gpu = self.gpu.morris_solve(spec, &d)?;
            let gpu_s = t.elapsed().as_secs_f64();
            let cpu = if named && size <= self.cpu_max_size {
                let t = Instant::now();
                let v = CpuTwin::new(spec, d.clone())?.solve()?;
                Some((v.value, t.elapsed().as_secs_f64()))
            } else {
                None
            };
            let same = cpu.as_ref().map(|(c, _)| *c == gpu.value);
            let row = SolveRow {
                name: name.clone(),
                size,
                cpu_s: cpu.as_ref().map(|c| c.1),
                gpu_s: Some(gpu_s),
                passes: gpu.passes,
                pending: gpu.first_pending,
                same,
                dependency: !named,
            };
            self.log.line(format!(
                "{name:>5} {size:>12} cpu {:>9} gpu {:>9} passes {:>3} pending {:>11} {}{}",
                row.cpu_s.map_or("-".into(), |s| format!("{s:.3}s")),
                format!("{gpu_s:.3}s"),
                row.passes,
                row.pending,
                match same {
                    Some(true) => "identical",
                    Some(false) => "DIFFERENT",
                    None => "",
                },
                if named { "" } else { " (dependency)" }
            ));
            if let (Some((c, _)), false) = (&cpu, same.unwrap_or(true)) {
                self.log.line(first_difference(c, &gpu.value));
            }
            if named && self.reference {
                let t = Instant::now();
                let r = solve_partition(game, &layout, &deps, slot, &Progress::hidden())?;
                let ok = r == gpu.value;
                self.log.line(format!(
                    "{name:>5} solve::solve_partition {:.3}s: {}",
                    t.elapsed().as_secs_f64(),
                    if ok { "identical" } else { "DIFFERENT" }
                ));
                if !ok {
                    self.log.line(first_difference(&r, &gpu.value));
                }
                rows.push(SolveRow {
                    name: format!("{name} (solve_partition)"),
                    size,
                    cpu_s: None,
                    gpu_s: None,
                    passes: 0,
                    pending: 0,
                    same: Some(ok),
                    dependency: true,
                });
            }
            rows.push(row);
            solved[slot] = Some(gpu.value);
        }
        Ok(rows)
    }
}

fn solve_main() -> tbforge::Result<bool> {
    let mut max: Option<u32> = None;
    let mut only: Option<Vec<String>> = None;
    let mut reference = false;
    let mut symmetry = "on".to_string();
    let mut cpu_max_size = u64::MAX;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(2);
    while let Some(a) = args.next() {
        if a == "--reference" {
            reference = true;
            continue;
        }
        let v = args
            .next()
            .ok_or_else(|| tbforge::Error::Cuda(format!("{a} needs a value")))?;
        let bad = |e: std::num::ParseIntError| tbforge::Error::Cuda(format!("{a}: {e}"));
        match a.as_str() {
            "--max" => max = Some(v.parse().map_err(bad)?),
            "--partitions" => only = Some(v.split(',').map(|p| p.trim().to_string()).collect()),
            "--symmetry" => symmetry = v,
            "--cpu-max-size" => cpu_max_size = v.parse().map_err(bad)?,
            "--out" => out = Some(PathBuf::from(v)),
            other => {
                return Err(tbforge::Error::Cuda(format!(
                    "unknown argument {other}; usage: solve [--max N] [--partitions 6-6,7-7] \
                     [--symmetry on|off] [--cpu-max-size S] [--reference] [--out DIR]"
                )))
            }
        }
    }
    let largest = only.as_ref().and_then(|o| {
        o.iter()
            .filter_map(|p| p.split_once('-').and_then(|(a, _)| a.parse::<u32>().ok()))
            .max()
    });
    let max = max.or(largest).unwrap_or(4);
    let mut log = Log(String::new());
    let threads = rayon::current_num_threads();
    let t = Instant::now();
    let gpu = CudaBackend::open(0)?;
    log.line(format!(
        "device: {}  ({} SMs, open + NVRTC {:.2} s)  cpu threads {threads}",
        gpu.device_name(),
        gpu.multiprocessors(),
        t.elapsed().as_secs_f64()
    ));
    let mut params = std::collections::BTreeMap::new();
    params.insert("max".to_string(), max.to_string());
    params.insert("symmetry".to_string(), symmetry.clone());
    let game = tbforge::game::registry::open_game("morris", &params)?;
    log.line(format!(
        "morris max={max} symmetry={symmetry}; CPU = CpuTwin::solve (candidate-driven), {threads} threads"
    ));
    let rows = game.visit(SolveCheck {
        gpu: &gpu,
        cpu_max_size,
        only,
        reference,
        log: &mut log,
    })?;
    let mut table = String::new();
    let _ = writeln!(
        table,
        "\n| partition | indices | CPU {threads} thr s | CPU M idx/s | GPU s | GPU M idx/s | ratio | passes | bytes |"
    );
    let _ = writeln!(
        table,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    );
    let mut ok = true;
    let (mut tc, mut tg, mut tcg) = (0.0, 0.0, 0.0);
    for r in &rows {
        ok &= r.same != Some(false);
        if r.dependency {
            continue;
        }
        let rate =
            |s: Option<f64>| s.map_or("-".into(), |s| format!("{:.1}", r.size as f64 / s / 1e6));
        let ratio = match (r.cpu_s, r.gpu_s) {
            (Some(c), Some(g)) => {
                tc += c;
                tcg += g;
                format!("{:.1}x", c / g)
            }
            _ => "-".into(),
        };
        tg += r.gpu_s.unwrap_or(0.0);
        let _ = writeln!(
            table,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            r.size,
            r.cpu_s.map_or("-".into(), |s| format!("{s:.3}")),
            rate(r.cpu_s),
            r.gpu_s.map_or("-".into(), |s| format!("{s:.3}")),
            rate(r.gpu_s),
            ratio,
            r.passes,
            match r.same {
                Some(true) => "identical",
                Some(false) => "DIFFERENT",
                None => "-",
            }
        );
    }
    let _ = writeln!(
        table,
        "\ncompared partitions: CPU {tc:.2} s, GPU {tcg:.2} s ({:.1}x); GPU total {tg:.2} s; all identical: {ok}",
        if tcg > 0.0 { tc / tcg } else { 0.0 }
    );
    log.line(&table);
    if let Some(dir) = out {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(format!("solve-max{max}.log")), &log.0);
    }
    Ok(ok)
}

/// The device solver of the `connect4` subcommand, or the CPU twin in its place.
enum C4Solver {
    Gpu(tbforge::backend::cuda::Connect4Cuda),
    Twin,
}

/// One partition solved: values, host seconds, kernel seconds, whether
/// partition n + 1 was still on the device.
type C4Solve = (Vec<u8>, f64, f64, bool);

impl C4Solver {
    fn solve(
        &self,
        spec: tbforge::backend::connect4::Connect4SolveSpec,
        next: Option<&[u8]>,
    ) -> tbforge::Result<C4Solve> {
        match self {
            C4Solver::Gpu(g) => {
                let r = g.solve(spec, next)?;
                Ok((r.values, r.seconds, r.kernel_seconds, r.reused_next))
            }
            C4Solver::Twin => {
                let t = Instant::now();
                let v = tbforge::backend::connect4::Connect4Twin::new(spec, next)?.solve()?;
                let s = t.elapsed().as_secs_f64();
                Ok((v, s, s, false))
            }
        }
    }

    fn values_of(
        &self,
        spec: tbforge::backend::connect4::Connect4SolveSpec,
        next: Option<&[u8]>,
        ranks: &[Rank],
    ) -> tbforge::Result<(Vec<u8>, u32)> {
        match self {
            C4Solver::Gpu(g) => g.values_of(spec, next, ranks),
            C4Solver::Twin => {
                let twin = tbforge::backend::connect4::Connect4Twin::new(spec, next)?;
                let mut bits = 0;
                let v = ranks
                    .iter()
                    .map(|r| {
                        let (v, b) = twin.value_of(r.0);
                        bits |= b;
                        v
                    })
                    .collect();
                Ok((v, bits))
            }
        }
    }
}

struct C4Row {
    board: String,
    positions: u64,
    partitions: usize,
    cpu_s: Option<f64>,
    gpu_s: f64,
    kernel_s: f64,
    same: Option<bool>,
    /// Partitions solved from partition n + 1 still on the device.
    reused: usize,
    /// GPU-only boards: indices checked against the twin, and mismatches.
    sampled: u64,
    sample_mismatches: u64,
}

fn connect4_board(
    solver: &C4Solver,
    width: u32,
    height: u32,
    cpu: bool,
    seed: &mut u64,
    samples: usize,
    log: &mut Log,
) -> tbforge::Result<C4Row> {
    use tbforge::backend::accel_connect4::connect4_spec;
    use tbforge::game::connect4::Connect4;
    use tbforge::solve::{solve_partition, Layout, Progress};
    let mut params = std::collections::BTreeMap::new();
    params.insert("width".to_string(), width.to_string());
    params.insert("height".to_string(), height.to_string());
    let game = Connect4::from_params(&params)?;
    let layout = Layout::new(&game)?;
    let mut cpu_values: Vec<Option<Vec<u8>>> = vec![None; layout.len()];
    let mut gpu_prev: Option<Vec<u8>> = None;
    let mut row = C4Row {
        board: format!("{width}x{height}"),
        positions: layout.total_size(),
        partitions: layout.len(),
        cpu_s: cpu.then_some(0.0),
        gpu_s: 0.0,
        kernel_s: 0.0,
        same: cpu.then_some(true),
        reused: 0,
        sampled: 0,
        sample_mismatches: 0,
    };
    for slot in 0..layout.len() {
        let spec = connect4_spec(&game, &layout, slot).ok_or_else(|| {
            tbforge::Error::Cuda(format!("{width}x{height}: slot {slot} has no spec"))
        })?;
        let (values, secs, kernel, reused) = solver.solve(spec, gpu_prev.as_deref())?;
        row.reused += usize::from(reused);
        row.gpu_s += secs;
        row.kernel_s += kernel;
        let mut note = String::new();
        if !cpu {
            // GPU only: random indices against the twin, from the same partition n + 1.
            let twin = tbforge::backend::connect4::Connect4Twin::new(spec, gpu_prev.as_deref())?;
            let ranks = random_ranks(seed, values.len() as u64, samples.min(values.len() * 2));
            let bad = ranks
                .iter()
                .filter(|r| twin.value_of(r.0) != (values[r.0 as usize], 0))
                .count();
            row.sampled += ranks.len() as u64;
            row.sample_mismatches += bad as u64;
            note = format!("{} sampled vs twin, {bad} mismatches", ranks.len());
        }
        if cpu {
            let deps: Vec<Option<&[u8]>> = cpu_values.iter().map(|v| v.as_deref()).collect();
            let t = Instant::now();
            let c = solve_partition(&game, &layout, &deps, slot, &Progress::hidden())?;
            let cs = t.elapsed().as_secs_f64();
            *row.cpu_s.as_mut().expect("cpu") += cs;
            let same = c == values;
            if !same {
                row.same = Some(false);
                let i = (0..c.len().min(values.len()))
                    .find(|&i| c[i] != values[i])
                    .unwrap_or(0);
                note = format!(
                    "DIFFERENT (first at index {i}: cpu {} gpu {})",
                    c.get(i).copied().unwrap_or(0),
                    values.get(i).copied().unwrap_or(0)
                );
            } else {
                note = format!("identical, cpu {cs:.3}s");
            }
            cpu_values[slot] = Some(c);
            // The CPU solver only reads the partition just before.
            if slot > 0 {
                cpu_values[slot - 1] = None;
            }
        }
        log.line(format!(
            "  {width}x{height} {} {:>11} gpu {secs:.3}s (kernel {kernel:.3}s) {note}",
            spec.name(),
            layout.size(slot)
        ));
        gpu_prev = Some(values);
    }
    if let C4Solver::Gpu(g) = solver {
        g.forget();
    }
    Ok(row)
}

/// Kernel vs twin on random indices of large boards: the full board (no
/// successors) and the largest partition whose successor partition has at
/// most 2^26 indices, with synthetic successor values 1..=60.
fn connect4_random(
    solver: &C4Solver,
    seed: &mut u64,
    samples: usize,
    log: &mut Log,
) -> tbforge::Result<bool> {
    use tbforge::backend::connect4::{Connect4SolveSpec, Connect4Tables, Connect4Twin};
    let mut ok = true;
    for (w, h) in [(7u32, 6u32), (8, 7), (9, 6), (4, 15), (6, 7)] {
        let top = Connect4SolveSpec::new(w, h, w * h)?;
        let tables = Connect4Tables::new(top)?;
        let n = (0..w * h)
            .rev()
            .find(|&n| tables.size(n + 1) <= 1 << 26)
            .unwrap_or(0);
        for n in [w * h, n] {
            let spec = Connect4SolveSpec::new(w, h, n)?;
            let next: Option<Vec<u8>> = spec.next().map(|s| {
                (0..tables.size(s.n))
                    .map(|i| 1 + (morris::mix64(i ^ *seed) % 60) as u8)
                    .collect()
            });
            let size = tables.size(n);
            let ranks = random_ranks(seed, size, samples);
            let twin = Connect4Twin::new(spec, next.as_deref())?;
            let mut want_bits = 0;
            let want: Vec<u8> = ranks
                .iter()
                .map(|r| {
                    let (v, b) = twin.value_of(r.0);
                    want_bits |= b;
                    v
                })
                .collect();
            let (got, bits) = solver.values_of(spec, next.as_deref(), &ranks)?;
            let bad = want.iter().zip(&got).filter(|(a, b)| a != b).count()
                + usize::from(bits != want_bits)
                + want.len().abs_diff(got.len());
            let mut hist = [0u64; 4];
            for &v in &want {
                hist[match v {
                    0 => 0,
                    1 => 1,
                    v if v % 2 == 0 => 2,
                    _ => 3,
                }] += 1;
            }
            ok &= bad == 0;
            log.line(format!(
                "connect4 {w}x{h} ply{n:02} ({size} indices): {} random ranks (illegal {} draw {} loss {} win {}), {bad} mismatches",
                ranks.len(), hist[0], hist[1], hist[2], hist[3]
            ));
        }
    }
    Ok(ok)
}

fn connect4_main() -> tbforge::Result<bool> {
    let usage = "usage: connect4 [--boards 4x4,5x4,...] [--cpu-max-positions P] [--samples N] \
                 [--seed S] [--twin] [--out DIR]";
    let mut boards = "4x4,5x4,4x5,5x5,6x4,5x6".to_string();
    let mut cpu_max = u64::MAX;
    let mut samples = 1usize << 20;
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut twin = false;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(2);
    while let Some(a) = args.next() {
        if a == "--twin" {
            twin = true;
            continue;
        }
        let v = args
            .next()
            .ok_or_else(|| tbforge::Error::Cuda(format!("{a} needs a value; {usage}")))?;
        let bad = |e: std::num::ParseIntError| tbforge::Error::Cuda(format!("{a}: {e}"));
        match a.as_str() {
            "--boards" => boards = v,
            "--cpu-max-positions" => cpu_max = v.parse().map_err(bad)?,
            "--samples" => samples = v.parse().map_err(bad)?,
            "--seed" => seed = v.parse().map_err(bad)?,
            "--out" => out = Some(PathBuf::from(v)),
            other => {
                return Err(tbforge::Error::Cuda(format!(
                    "unknown argument {other}; {usage}"
                )))
            }
        }
    }
    let mut sizes = Vec::new();
    for b in boards.split(',').filter(|b| !b.is_empty()) {
        let parsed = b
            .split_once('x')
            .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
        let (w, h) = parsed.ok_or_else(|| {
            tbforge::Error::Cuda(format!("--boards: `{b}` is not WIDTHxHEIGHT; {usage}"))
        })?;
        tbforge::backend::connect4::Connect4SolveSpec::new(w, h, 0)?;
        sizes.push((w, h));
    }
    let mut log = Log(String::new());
    let threads = rayon::current_num_threads();
    let t = Instant::now();
    let (solver, device) = if twin {
        (C4Solver::Twin, "cpu twin (no GPU)".to_string())
    } else {
        let gpu = std::sync::Arc::new(CudaBackend::open(0)?);
        let name = format!(
            "{} ({} SMs, open + NVRTC {:.2} s)",
            gpu.device_name(),
            gpu.multiprocessors(),
            t.elapsed().as_secs_f64()
        );
        (
            C4Solver::Gpu(tbforge::backend::cuda::Connect4Cuda::new(gpu)?),
            name,
        )
    };
    log.line(format!(
        "device: {device}  cpu threads {threads}  seed {seed}"
    ));
    let mut ok = connect4_random(&solver, &mut seed, samples, &mut log)?;
    let mut rows = Vec::new();
    for (w, h) in sizes {
        let tables = tbforge::backend::connect4::Connect4Tables::new(
            tbforge::backend::connect4::Connect4SolveSpec::new(w, h, 0)?,
        )?;
        let positions: u64 = (0..=w * h).map(|n| tables.size(n)).sum();
        let row = connect4_board(
            &solver,
            w,
            h,
            positions <= cpu_max,
            &mut seed,
            samples / 16,
            &mut log,
        )?;
        ok &= row.same != Some(false) && row.sample_mismatches == 0;
        rows.push(row);
    }
    let mut table = String::new();
    let _ = writeln!(
        table,
        "\n| board | partitions (n+1 on device) | positions | CPU {threads} thr s | CPU M pos/s | GPU s | GPU M pos/s | kernel s | ratio | bytes |"
    );
    let _ = writeln!(
        table,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    );
    for r in &rows {
        let rate = |s: f64| format!("{:.1}", r.positions as f64 / s.max(1e-9) / 1e6);
        let _ = writeln!(
            table,
            "| {} | {} ({}) | {} | {} | {} | {:.3} | {} | {:.3} | {} | {} |",
            r.board,
            r.partitions,
            r.reused,
            r.positions,
            r.cpu_s.map_or("-".into(), |s| format!("{s:.3}")),
            r.cpu_s.map_or("-".into(), rate),
            r.gpu_s,
            rate(r.gpu_s),
            r.kernel_s,
            r.cpu_s
                .map_or("-".into(), |c| format!("{:.1}x", c / r.gpu_s.max(1e-9))),
            match r.same {
                Some(true) => "identical".to_string(),
                Some(false) => "DIFFERENT".to_string(),
                None => format!(
                    "GPU only; {} sampled vs twin, {} mismatches",
                    r.sampled, r.sample_mismatches
                ),
            }
        );
    }
    let _ = writeln!(table, "\ndevice: {device}; all compared identical: {ok}");
    log.line(&table);
    if let Some(dir) = out {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("connect4.log"), &log.0);
    }
    Ok(ok)
}
