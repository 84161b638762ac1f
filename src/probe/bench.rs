//! `tbforge bench probe`: probe latency and compression of a built tablebase.

use super::{OpenOptions, Tablebase};
use crate::format::{FormatError, TableFile, ValueEncoding};
use crate::hash::SplitMix64;
use crate::value::{PartitionId, Rank};
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Settings for [`bench()`].
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Timed probes in the hot-cache loop.
    pub hot_probes: u64,
    /// Timed probes with the cache off (each reads, checks and decompresses a block).
    pub miss_probes: u64,
    /// Timed cold opens (open the directory, probe one position).
    pub cold_opens: u64,
    /// Also compress the raw array with zstd -19 (slow for large tablebases).
    pub zstd19: bool,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            hot_probes: 1_000_000,
            miss_probes: 2_000,
            cold_opens: 20,
            zstd19: true,
        }
    }
}

/// One tablebase's figures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRow {
    /// `game:params`.
    pub game: String,
    /// Value encoding of the files.
    pub encoding: ValueEncoding,
    /// Indices over all files, legal or not.
    pub index_size: u64,
    /// Bytes of the raw value array (one byte, or 2 bits, per index).
    pub raw_bytes: u64,
    /// Bytes of the tablebase files.
    pub file_bytes: u64,
    /// File bits per index.
    pub bits_per_position: f64,
    /// Bits per index of `zstd -19` over the whole raw array (one stream).
    pub zstd19_bits_per_position: Option<f64>,
    /// Mean ns per probe with its block in the cache.
    pub probe_ns_hot: f64,
    /// Mean ns per probe with the cache off (read, crc32, decompress one block).
    pub probe_ns_miss: f64,
    /// Median ns to open the directory and probe one position (the OS page
    /// cache is warm: this is tbforge's own cost, not the disk's).
    pub open_first_probe_ns: f64,
}

/// Picks `n` indices uniformly over the whole tablebase.
fn sample(
    parts: &[(PartitionId, u64)],
    total: u64,
    n: usize,
    mix: &mut SplitMix64,
) -> Vec<(PartitionId, Rank)> {
    (0..n)
        .map(|_| {
            let mut g = mix.next_u64() % total;
            for &(p, size) in parts {
                if g < size {
                    return (p, Rank(g));
                }
                g -= size;
            }
            unreachable!("g < total")
        })
        .collect()
}

/// Counts bytes written.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Benchmarks the tablebase in `dir`.
pub fn bench(dir: &Path, options: &BenchOptions) -> Result<BenchRow, FormatError> {
    let tb = Tablebase::open(dir)?;
    let m = tb.manifest().clone();
    let parts: Vec<(PartitionId, u64)> = m
        .files
        .iter()
        .filter(|f| f.index_size > 0)
        .map(|f| (f.partition, f.index_size))
        .collect();
    // Checked: a damaged manifest's sizes may add up beyond u64.
    let total = parts
        .iter()
        .try_fold(0u64, |a, p| a.checked_add(p.1))
        .ok_or_else(|| FormatError::Manifest {
            path: dir.join(crate::format::MANIFEST_NAME),
            message: "the files' index sizes add up to more than 2^64".into(),
        })?;
    if total == 0 {
        return Err(FormatError::Unsupported(format!(
            "{} holds no positions to probe",
            dir.display()
        )));
    }
    let file_bytes = m.files.iter().fold(0u64, |a, f| a.saturating_add(f.bytes));
    let raw_bytes = m.files.iter().fold(0u64, |a, f| {
        a.saturating_add(f.index_size.div_ceil(m.encoding.positions_per_byte()))
    });
    let mut mix = SplitMix64::new(0x0074_6266_6f72_6765);

    // Hot: a small set of positions whose blocks all fit the cache.
    let hot = sample(&parts, total, 64, &mut mix);
    for &(p, r) in &hot {
        tb.probe_stored(p, r)?;
    }
    let start = Instant::now();
    for i in 0..options.hot_probes {
        let (p, r) = hot[(i % hot.len() as u64) as usize];
        black_box(tb.probe_stored(black_box(p), black_box(r))?);
    }
    let probe_ns_hot = start.elapsed().as_nanos() as f64 / options.hot_probes.max(1) as f64;

    // Misses: no cache, positions anywhere.
    let cold_tb = Tablebase::open_with(dir, OpenOptions { cache_blocks: 0 })?;
    let spread = sample(&parts, total, options.miss_probes.max(1) as usize, &mut mix);
    cold_tb.probe_stored(spread[0].0, spread[0].1)?; // opens the first file outside the timing
    let start = Instant::now();
    for &(p, r) in &spread {
        black_box(cold_tb.probe_stored(p, r)?);
    }
    let probe_ns_miss = start.elapsed().as_nanos() as f64 / spread.len() as f64;

    // Cold: open the directory and probe once, fresh each time.
    let mut opens = Vec::new();
    for &(p, r) in sample(&parts, total, options.cold_opens.max(1) as usize, &mut mix).iter() {
        let start = Instant::now();
        let t = Tablebase::open(dir)?;
        black_box(t.probe_stored(p, r)?);
        opens.push(start.elapsed().as_nanos() as f64);
    }
    opens.sort_by(f64::total_cmp);
    let open_first_probe_ns = opens[opens.len() / 2];

    let zstd19_bits_per_position = if options.zstd19 {
        let mut enc = zstd::stream::Encoder::new(Count(0), 19)
            .map_err(|e| FormatError::io("compressing", dir, e))?;
        for f in &m.files {
            let file = TableFile::open_read(&dir.join(&f.name))?;
            for b in 0..file.header().block_count {
                enc.write_all(&file.read_block(b)?)
                    .map_err(|e| FormatError::io("compressing", dir, e))?;
            }
        }
        let out = enc
            .finish()
            .map_err(|e| FormatError::io("compressing", dir, e))?;
        Some(out.0 as f64 * 8.0 / total as f64)
    } else {
        None
    };

    Ok(BenchRow {
        game: m.canonical_game(),
        encoding: m.encoding,
        index_size: total,
        raw_bytes,
        file_bytes,
        bits_per_position: file_bytes as f64 * 8.0 / total as f64,
        zstd19_bits_per_position,
        probe_ns_hot,
        probe_ns_miss,
        open_first_probe_ns,
    })
}

/// The human rendering of bench rows.
pub fn render_bench_text(rows: &[BenchRow]) -> String {
    let mut s = format!(
        "{:<28} {:>6} {:>14} {:>12} {:>12} {:>9} {:>9} {:>9} {:>10} {:>12}\n",
        "game",
        "enc",
        "indices",
        "raw bytes",
        "file bytes",
        "bits/idx",
        "zstd-19",
        "hot ns",
        "miss ns",
        "open+1 ns"
    );
    for r in rows {
        s += &format!(
            "{:<28} {:>6} {:>14} {:>12} {:>12} {:>9.4} {:>9} {:>9.1} {:>10.0} {:>12.0}\n",
            r.game,
            r.encoding.to_string(),
            r.index_size,
            r.raw_bytes,
            r.file_bytes,
            r.bits_per_position,
            r.zstd19_bits_per_position
                .map_or("-".to_string(), |b| format!("{b:.4}")),
            r.probe_ns_hot,
            r.probe_ns_miss,
            r.open_first_probe_ns
        );
    }
    s
}
