//! `tbforge bench zstd`: how well one partition's values compress as one
//! zstd stream, against the tablebase's own file.
//!
//! The file compresses 64 KiB blocks one by one (a probe then decompresses
//! one block), at the format's level. A single stream at a high level sees
//! the whole array: the gap between the two is what random access and the
//! build's compression speed cost in bytes. The figure is for the closing
//! performance table; tablebase files are not changed by it.

use crate::format::{count, read_manifest, FileEntry, FormatError, TableFile};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Settings for [`bench_zstd`].
#[derive(Clone, Debug)]
pub struct ZstdBenchOptions {
    /// The partition (its name, or its file's name); `None`: the largest
    /// file in the manifest.
    pub partition: Option<String>,
    /// The zstd level of the stream.
    pub level: i32,
    /// Only the first this many bytes of the stored values; `None`: all.
    pub sample_bytes: Option<u64>,
    /// zstd worker threads (0: compress on the calling thread).
    pub threads: u32,
}

impl Default for ZstdBenchOptions {
    fn default() -> Self {
        ZstdBenchOptions {
            partition: None,
            level: 19,
            sample_bytes: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        }
    }
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum ZstdBenchError {
    /// The directory, its manifest or the file could not be read.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The partition asked for is not in the manifest.
    #[error("{dir}: no partition or file `{name}` in its manifest (it lists {known}); give one of those to --partition")]
    NoSuchPartition {
        /// The directory.
        dir: String,
        /// The name asked for.
        name: String,
        /// Some of the names it has.
        known: String,
    },
    /// The manifest lists no file.
    #[error("{0}: its manifest lists no file: nothing to compress")]
    Empty(String),
    /// An option is out of range.
    #[error("{0}")]
    BadOption(String),
    /// zstd failed, or its output did not decompress to the input.
    #[error("zstd stream at level {level}: {message}")]
    Zstd {
        /// The level.
        level: i32,
        /// What failed.
        message: String,
    },
}

/// What `tbforge bench zstd` measured; `--json` prints it as is.
#[derive(Clone, Debug, Serialize)]
pub struct ZstdBenchRow {
    /// The directory.
    pub dir: String,
    /// The partition's name.
    pub partition: String,
    /// Its file.
    pub file: String,
    /// How the file stores values (`byte` or `wdl2`).
    pub encoding: String,
    /// Positions in the sample (the whole partition unless sampled).
    pub values: u64,
    /// Bytes of stored values in the sample, as the file's blocks hold them
    /// uncompressed (one per position, or four positions per byte).
    pub value_bytes: u64,
    /// Whether the sample is the whole partition.
    pub whole: bool,
    /// The tablebase file's bytes for the sample: the whole file, or the
    /// sample's blocks and their index entries.
    pub file_bytes: u64,
    /// `file_bytes` in bits per position.
    pub file_bits_per_value: f64,
    /// The one zstd stream's bytes.
    pub stream_bytes: u64,
    /// `stream_bytes` in bits per position.
    pub stream_bits_per_value: f64,
    /// `file_bytes / stream_bytes`: how many times smaller the stream is.
    pub ratio: f64,
    /// The stream's zstd level.
    pub level: i32,
    /// zstd worker threads.
    pub threads: u32,
    /// Seconds to compress the stream.
    pub seconds: f64,
    /// Value bytes compressed per second, in MB (10^6 bytes).
    pub mb_per_s: f64,
    /// Seconds to read and decompress the sample from the file (all cores).
    pub read_seconds: f64,
}

/// Compresses one partition's stored values of the tablebase in `dir` as a
/// single zstd stream, checks that it decompresses to them, and compares its
/// size with the file's.
pub fn bench_zstd(dir: &Path, options: &ZstdBenchOptions) -> Result<ZstdBenchRow, ZstdBenchError> {
    if !(zstd::compression_level_range()).contains(&options.level) {
        return Err(ZstdBenchError::BadOption(format!(
            "--level {}: zstd levels are {}..={}",
            options.level,
            zstd::compression_level_range().start(),
            zstd::compression_level_range().end()
        )));
    }
    if options.sample_bytes == Some(0) {
        return Err(ZstdBenchError::BadOption(
            "--sample-mb 0: give at least 1 (MiB)".into(),
        ));
    }
    let manifest = read_manifest(dir)?;
    let entry = pick(dir, &manifest.files, options.partition.as_deref())?;
    let file = TableFile::open_read(&dir.join(&entry.name))?;
    let h = file.header().clone();
    if file.whole_file_crc32() != entry.crc32 {
        return Err(FormatError::Corrupt {
            file: entry.name.clone(),
            block: None,
            message: format!(
                "its block index gives a whole-file crc32 of {:08x}, the manifest says {:08x}",
                file.whole_file_crc32(),
                entry.crc32
            ),
        }
        .into());
    }
    let raw_total: u64 = (0..h.block_count).map(|b| h.raw_len(b) as u64).sum();
    let sample = options.sample_bytes.unwrap_or(raw_total).min(raw_total);
    let raw_block = h.raw_len(0).max(1) as u64;
    let blocks = sample.div_ceil(raw_block).min(h.block_count);

    let t = Instant::now();
    let parts: Vec<Vec<u8>> = (0..blocks)
        .into_par_iter()
        .map(|b| file.read_block(b))
        .collect::<Result<_, _>>()?;
    let mut raw = parts.concat();
    drop(parts);
    raw.truncate(sample as usize);
    let read_seconds = t.elapsed().as_secs_f64();
    let whole = sample == raw_total;
    let values = if whole {
        h.index_size
    } else {
        (sample * h.encoding.positions_per_byte()).min(h.index_size)
    };
    let file_bytes = if whole {
        h.file_len
    } else {
        file.index()[..blocks as usize]
            .iter()
            .map(|r| u64::from(r.len) + crate::format::INDEX_ENTRY_LEN as u64)
            .sum()
    };

    let zerr = |e: std::io::Error| ZstdBenchError::Zstd {
        level: options.level,
        message: e.to_string(),
    };
    let t = Instant::now();
    let mut enc = zstd::stream::Encoder::new(Vec::new(), options.level).map_err(zerr)?;
    enc.multithread(options.threads).map_err(zerr)?;
    enc.set_pledged_src_size(Some(raw.len() as u64))
        .map_err(zerr)?;
    // Pieces of a few MiB: what a streaming writer would hand it.
    for piece in raw.chunks(4 << 20) {
        enc.write_all(piece).map_err(zerr)?;
    }
    let stream = enc.finish().map_err(zerr)?;
    let seconds = t.elapsed().as_secs_f64();

    let back = zstd::stream::decode_all(&stream[..]).map_err(zerr)?;
    if back != raw {
        return Err(ZstdBenchError::Zstd {
            level: options.level,
            message: format!(
                "the stream decompresses to {}, not to the {} compressed",
                count(back.len() as u64, "byte", "bytes"),
                raw.len()
            ),
        });
    }
    let bits = |bytes: u64| bytes as f64 * 8.0 / values.max(1) as f64;
    let stream_bytes = stream.len() as u64;
    Ok(ZstdBenchRow {
        dir: dir.display().to_string(),
        partition: entry.partition_name.clone(),
        file: entry.name.clone(),
        encoding: h.encoding.to_string(),
        values,
        value_bytes: sample,
        whole,
        file_bytes,
        file_bits_per_value: bits(file_bytes),
        stream_bytes,
        stream_bits_per_value: bits(stream_bytes),
        ratio: file_bytes as f64 / stream_bytes.max(1) as f64,
        level: options.level,
        threads: options.threads,
        seconds,
        mb_per_s: sample as f64 / 1e6 / seconds.max(1e-9),
        read_seconds,
    })
}

/// The file named (by partition or file name), or the largest.
fn pick<'a>(
    dir: &Path,
    files: &'a [FileEntry],
    name: Option<&str>,
) -> Result<&'a FileEntry, ZstdBenchError> {
    match name {
        None => files
            // The first of equal sizes: the same answer on every run.
            .iter()
            .rev()
            .max_by_key(|f| f.bytes)
            .ok_or_else(|| ZstdBenchError::Empty(dir.display().to_string())),
        Some(name) => files
            .iter()
            .find(|f| f.partition_name == name || f.name == name)
            .ok_or_else(|| {
                let mut known: Vec<&str> = files
                    .iter()
                    .take(8)
                    .map(|f| f.partition_name.as_str())
                    .collect();
                if files.len() > known.len() {
                    known.push("...");
                }
                ZstdBenchError::NoSuchPartition {
                    dir: dir.display().to_string(),
                    name: name.to_string(),
                    known: known.join(", "),
                }
            }),
    }
}

/// The human rendering `tbforge bench zstd` prints.
pub fn render_zstd_text(r: &ZstdBenchRow) -> String {
    format!(
        "{dir} partition {p} ({file}, {enc}): {values} values, {vb} bytes{sample}\n\
         {:<28} {:>14} {:>10}\n\
         {:<28} {:>14} {:>10.4}\n\
         {:<28} {:>14} {:>10.4}\n\
         stream is {:.3}x smaller than the file; {:.2} s, {:.1} MB/s, {} ({:.2} s to read)\n",
        "",
        "bytes",
        "bits/value",
        "tablebase file (blocks)",
        r.file_bytes,
        r.file_bits_per_value,
        format!("one zstd stream, level {}", r.level),
        r.stream_bytes,
        r.stream_bits_per_value,
        r.ratio,
        r.seconds,
        r.mb_per_s,
        if r.threads == 0 {
            "single-threaded".to_string()
        } else {
            count(u64::from(r.threads), "zstd worker", "zstd workers")
        },
        r.read_seconds,
        dir = r.dir,
        p = r.partition,
        file = r.file,
        enc = r.encoding,
        values = r.values,
        vb = r.value_bytes,
        sample = if r.whole {
            ""
        } else {
            " (a sample: the first blocks)"
        },
    )
}
