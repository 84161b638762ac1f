//! One tablebase file: the writer and the checked reader. FORMAT.md is the
//! specification; this code follows it field by field.

use super::atomic::write_atomic_with;
use super::{count, FormatError, Stored, ValueEncoding};
use crate::game::{GameInfo, GameKind};
use crate::value::{LongDistances, PartitionId, Rank, Value};
use std::borrow::Cow;
use std::fs::File;
use std::path::Path;
#[cfg(not(unix))]
use std::sync::Mutex;

/// The first eight bytes of every tablebase file. The high byte and the
/// CR LF / ^Z / LF sequence catch text-mode transfers that mangle binaries.
pub const MAGIC: [u8; 8] = *b"\x89TBF\r\n\x1a\n";
/// The last eight bytes of every tablebase file.
pub const TRAILER_MAGIC: [u8; 8] = *b"TBFEND\r\n";
/// The format version this build writes for full files and reads.
pub const FORMAT_VERSION: u32 = 3;
/// The format version of engine files (FORMAT.md, "Engine files"): version 3
/// plus the header's engine flag. Full files keep version 3, so their bytes
/// and their readers are unchanged; a version-3 reader refuses an engine
/// file as newer instead of misreading its don't-care values as values.
pub const ENGINE_FORMAT_VERSION: u32 = 5;
/// The format version of a full file with a long-distance table (FORMAT.md,
/// "Long distances"): version 3 plus the table. A file without one is still
/// written as version 3, byte for byte; a version-3 reader refuses a file
/// with one as newer instead of reading its saturated bytes as distances.
pub const LONG_FORMAT_VERSION: u32 = 6;
/// The zstd level of engine files: written once and shipped, so their size
/// matters more than the seconds an export takes.
pub const ENGINE_ZSTD_LEVEL: i32 = 19;
/// Indices per block of an engine file (one-byte files; two-bit files hold
/// four times as many): larger blocks than a build's give zstd longer
/// matches across the runs that don't-care values make, for a probe that
/// decompresses 1 MiB instead of 64 KiB on a cache miss (and a block cache
/// of as many MiB as it holds blocks). Against 2^18: Connect Four 5x5 9 %
/// smaller, Morris max=5 6 %, Connect Four 5x4 3 %, checkers pieces=4 0.1 %.
pub const ENGINE_BLOCK_POSITIONS: u32 = 1 << 20;
/// Bytes in the fixed header.
pub const HEADER_LEN: usize = 128;
/// Bytes per block index entry.
pub const INDEX_ENTRY_LEN: usize = 16;
/// Bytes in the trailer.
pub const TRAILER_LEN: usize = 16;
/// Uncompressed bytes per block by default: 64 KiB, i.e. 65,536 positions in
/// one-byte files and 262,144 in 2-bit files. A probe decompresses one block.
pub const BLOCK_BYTES: u32 = 1 << 16;
/// The zstd level every block is compressed at. Part of the format's
/// determinism: the same level and zstd release give the same bytes.
///
/// Why 9: a build writes its files while the next partition is solved, and
/// on a GPU the solve runs at about 500 M values/s, so compression must keep
/// pace on the CPU's cores. On 64 KiB blocks of a solved Morris partition
/// (6-5, 144 M values; `zstd -b -B65536 -T1`, one core): level 3 compressed
/// 343 MB/s to ratio 5.26, 7 83 MB/s to 5.61, 9 53 MB/s to 5.70, 12
/// 15 MB/s to 5.80, 15 8 MB/s to 6.23, 19 2.5 MB/s to 6.31. Level 9 keeps
/// 16 cores ahead of the GPU for 9 % more bytes than 15 (which format 1 used,
/// and which made compression 90 % of a Morris max=7 build). Readers do not
/// depend on the level; compact files for shipping can recompress.
///
/// Why 3 since format 3: a GPU solves Connect Four 6x5 in 2 s and 6x6's
/// 600 G indices in minutes, and level 9 (27 MB/s a core on a 5 %-dense
/// block on the build box, against 125 MB/s at 3, for 12 % more bytes) made
/// compression the whole build. Format 3's sparse byte blocks (below) give
/// the compressor less to do as well.
pub const ZSTD_LEVEL: i32 = 3;

const GAME_ID_LEN: usize = 32;
const MAX_BLOCK_POSITIONS: u32 = 1 << 24;

/// The fixed header of a tablebase file (FORMAT.md, "Header").
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// The file format version.
    pub format_version: u32,
    /// An engine file (FORMAT.md, "Engine files"): don't-care values that
    /// the prober resolves by a one-ply search.
    pub engine: bool,
    /// The game's registry name.
    pub game: String,
    /// [`GameInfo::param_hash`] of the game and its parameters.
    pub param_hash: u64,
    /// Two-player or puzzle: how the stored codes read.
    pub kind: GameKind,
    /// The partition this file holds.
    pub partition: PartitionId,
    /// How values are stored.
    pub encoding: ValueEncoding,
    /// Indices in the partition, legal or not.
    pub index_size: u64,
    /// Positions per block (the last block may hold fewer).
    pub block_positions: u32,
    /// Number of blocks.
    pub block_count: u64,
    /// Where the first block starts.
    pub data_offset: u64,
    /// The whole file's length in bytes.
    pub file_len: u64,
    /// Entries of the long-distance table (FORMAT.md, "Long distances"):
    /// 0 in a version-3 file, at least 1 in a version-6 one.
    pub long_count: u64,
}

impl Header {
    /// The header this version writes for `game`'s partition `partition`:
    /// `index_size` values in blocks of `block_positions`, the first block at
    /// `data_offset`, `file_len` bytes in all.
    #[allow(clippy::too_many_arguments)]
    fn new(
        game: &GameInfo,
        partition: PartitionId,
        encoding: ValueEncoding,
        engine: bool,
        index_size: u64,
        block_positions: u32,
        data_offset: u64,
        file_len: u64,
        long_count: u64,
    ) -> Header {
        Header {
            format_version: if engine {
                ENGINE_FORMAT_VERSION
            } else if long_count > 0 {
                LONG_FORMAT_VERSION
            } else {
                FORMAT_VERSION
            },
            engine,
            game: game.id.to_string(),
            param_hash: game.param_hash(),
            kind: game.kind,
            partition,
            encoding,
            index_size,
            block_positions,
            block_count: index_size.div_ceil(u64::from(block_positions)),
            data_offset,
            file_len,
            long_count,
        }
    }

    /// The encoded header and the trailer's checksum: crc32 over the header
    /// and what follows it up to the first block (`index`: the block index,
    /// then the long-distance table).
    fn sealed(&self, index: &[u8]) -> ([u8; HEADER_LEN], u32) {
        let header = self.encode();
        let mut seal = crc32fast::Hasher::new();
        seal.update(&header);
        seal.update(index);
        (header, seal.finalize())
    }

    /// Positions in block `block`.
    pub fn positions_in(&self, block: u64) -> u64 {
        let start = block * u64::from(self.block_positions);
        (self.index_size - start).min(u64::from(self.block_positions))
    }

    /// Uncompressed bytes of block `block`.
    pub fn raw_len(&self, block: u64) -> usize {
        self.positions_in(block)
            .div_ceil(self.encoding.positions_per_byte()) as usize
    }

    /// The most bytes block `block`'s frame may decompress to: a sparse byte
    /// block holds its bitmap and at most one byte per position.
    fn stored_capacity(&self, block: u64) -> usize {
        match self.encoding {
            ValueEncoding::Byte => {
                let n = self.positions_in(block) as usize;
                n.div_ceil(8) + n
            }
            ValueEncoding::Wdl2 => self.raw_len(block),
        }
    }

    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&self.format_version.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..16 + self.game.len()].copy_from_slice(self.game.as_bytes());
        h[48..56].copy_from_slice(&self.param_hash.to_le_bytes());
        h[56..60].copy_from_slice(&self.partition.0.to_le_bytes());
        h[60] = self.encoding.code();
        h[61] = kind_code(self.kind);
        h[62] = u8::from(self.engine);
        h[64..72].copy_from_slice(&self.index_size.to_le_bytes());
        h[72..76].copy_from_slice(&self.block_positions.to_le_bytes());
        h[80..88].copy_from_slice(&self.block_count.to_le_bytes());
        h[88..96].copy_from_slice(&(HEADER_LEN as u64).to_le_bytes());
        h[96..104].copy_from_slice(&self.data_offset.to_le_bytes());
        h[104..112].copy_from_slice(&self.file_len.to_le_bytes());
        h[112..120].copy_from_slice(&self.long_count.to_le_bytes());
        h
    }
}

fn kind_code(kind: GameKind) -> u8 {
    match kind {
        GameKind::TwoPlayer => 0,
        GameKind::Puzzle => 1,
    }
}

/// One block index entry: where a block's compressed bytes lie and their crc32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BlockRef {
    /// Offset from the start of the file.
    pub offset: u64,
    /// Compressed length in bytes.
    pub len: u32,
    /// crc32 (IEEE) of the compressed bytes.
    pub crc32: u32,
}

/// What the writer reports about a file it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSummary {
    /// The file's length in bytes.
    pub bytes: u64,
    /// crc32 (IEEE) of the whole file.
    pub crc32: u32,
}

/// Writer settings. The defaults are what builds use; other block sizes exist
/// for tests (multi-block files from small partitions) and are recorded in the
/// header, so readers follow whatever a file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WriteOptions<'a> {
    /// Positions per block: a multiple of 4 in 4..=2^24.
    pub block_positions: Option<u32>,
    /// The partition's long distances, stored beside its saturated value
    /// bytes (one-byte files only; none: a version-3 file).
    pub long: Option<&'a LongDistances>,
}

impl WriteOptions<'_> {
    fn block_positions(&self, encoding: ValueEncoding) -> u32 {
        self.block_positions
            .unwrap_or(BLOCK_BYTES * encoding.positions_per_byte() as u32)
    }
}

/// Writes one partition's values (one [`Value`] byte per index) to `path`
/// atomically, with the default block size.
///
/// The bytes depend only on the arguments (fixed zstd level, single-threaded
/// zstd per block), never on the thread count.
pub fn write_partition_file(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    values: &[u8],
) -> Result<FileSummary, FormatError> {
    write_partition_file_with(
        path,
        game,
        partition,
        encoding,
        values,
        &WriteOptions::default(),
    )
}

/// [`write_partition_file`] with explicit [`WriteOptions`].
pub fn write_partition_file_with(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    values: &[u8],
    options: &WriteOptions,
) -> Result<FileSummary, FormatError> {
    let bp = block_positions(path, game, encoding, options)?;
    // Every block at once, on all cores: no pause between groups of blocks
    // while one thread writes (the values are in memory anyway; the
    // compressed copy is a fraction of them).
    let raw: Vec<&[u8]> = values.chunks(bp as usize).collect();
    let mut blocks = Some(
        compress_blocks(&raw, encoding, game.kind)
            .map_err(|e| FormatError::io("compressing", path, e))?,
    );
    write_blocks(
        path,
        game,
        partition,
        encoding,
        values.len() as u64,
        bp,
        false,
        options.long,
        || Ok::<_, FormatError>(blocks.take()),
    )
}

/// The block size `options` give for `encoding`, checked, after checking the
/// game's id fits the header.
fn block_positions(
    path: &Path,
    game: &GameInfo,
    encoding: ValueEncoding,
    options: &WriteOptions,
) -> Result<u32, FormatError> {
    let bad = |message: String| FormatError::BadInput {
        file: path.display().to_string(),
        message,
    };
    if game.id.is_empty()
        || game.id.len() > GAME_ID_LEN
        || !game.id.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(bad(format!(
            "game id `{}` must be 1..={GAME_ID_LEN} printable ASCII characters",
            game.id
        )));
    }
    let bp = options.block_positions(encoding);
    if bp % 4 != 0 || !(4..=MAX_BLOCK_POSITIONS).contains(&bp) {
        return Err(bad(format!(
            "block size {bp} must be a multiple of 4 in 4..={MAX_BLOCK_POSITIONS}"
        )));
    }
    Ok(bp)
}

/// Writes one partition's values to `path` atomically without holding them
/// all: `fill(offset, buf)` must put the value bytes of indices
/// `offset..offset + buf.len()` into `buf`. It is called in index order, a few
/// blocks at a time (bounded memory whatever the partition's size), and may
/// fail with the caller's own error type.
///
/// The file's bytes are those [`write_partition_file_with`] writes for the
/// same values: blocks are compressed one by one either way, and the header
/// and block index, known only at the end, go into room reserved before the
/// first block.
pub fn write_partition_file_from<E: From<FormatError>>(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    positions: u64,
    options: &WriteOptions,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<(), E>,
) -> Result<FileSummary, E> {
    let bp = block_positions(path, game, encoding, options)?;
    let group = (group_blocks() as u64 * u64::from(bp)).min(positions) as usize;
    let mut raw = vec![0u8; group];
    let mut done = 0u64;
    write_blocks(
        path,
        game,
        partition,
        encoding,
        positions,
        bp,
        false,
        options.long,
        || {
            if done >= positions {
                return Ok(None);
            }
            let n = (positions - done).min(group as u64) as usize;
            fill(done, &mut raw[..n])?;
            let raw_blocks: Vec<&[u8]> = raw[..n].chunks(bp as usize).collect();
            let blocks = compress_blocks(&raw_blocks, encoding, game.kind)
                .map_err(|e| FormatError::io("compressing", path, e))?;
            done += n as u64;
            Ok(Some(blocks))
        },
    )
}

/// [`write_partition_file_from`] for values that any thread can produce at
/// any offset: `fill(offset, buf)` is called for every block (`offset` a
/// multiple of the block size), on all cores, each block filled and
/// compressed by the thread that takes it, groups of blocks in index order.
/// Same bytes; the values are never held whole, and producing them (expanding
/// a compact partition, say) runs as parallel as the compression.
#[cfg(feature = "build")]
pub fn write_partition_file_par<E: From<FormatError> + Send>(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    positions: u64,
    options: &WriteOptions,
    fill: impl Fn(u64, &mut [u8]) -> Result<(), E> + Sync,
) -> Result<FileSummary, E> {
    let kind = game.kind;
    write_blocks_par(
        path,
        game,
        partition,
        encoding,
        positions,
        options,
        false,
        |offset, n, raw: &mut Vec<u8>, stored: &mut Vec<u8>| {
            raw.resize(n, 0);
            fill(offset, raw)?;
            stored.extend_from_slice(&pack(raw, encoding, kind));
            Ok(())
        },
    )
}

/// Writes one partition's engine file (FORMAT.md, "Engine files") to `path`
/// atomically: `fill(offset, buf)` puts the value bytes to store (don't-care
/// values already chosen) of indices `offset..offset + buf.len()` into `buf`,
/// one block at a time on all cores, as [`write_partition_file_par`] does.
/// Blocks of [`ENGINE_BLOCK_POSITIONS`] (times four in two-bit files),
/// compressed at [`ENGINE_ZSTD_LEVEL`]; the header says version
/// [`ENGINE_FORMAT_VERSION`] and carries the engine flag.
#[cfg(feature = "build")]
pub fn write_engine_file<E: From<FormatError> + Send>(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    positions: u64,
    fill: impl Fn(u64, &mut [u8]) -> Result<(), E> + Sync,
) -> Result<FileSummary, E> {
    let kind = game.kind;
    let options = WriteOptions {
        block_positions: Some(ENGINE_BLOCK_POSITIONS * encoding.positions_per_byte() as u32),
        long: None,
    };
    write_blocks_par(
        path,
        game,
        partition,
        encoding,
        positions,
        &options,
        true,
        |offset, n, raw: &mut Vec<u8>, stored: &mut Vec<u8>| {
            raw.resize(n, 0);
            fill(offset, raw)?;
            stored.extend_from_slice(&pack(raw, encoding, kind));
            Ok(())
        },
    )
}

/// [`write_partition_file_par`] of a one-byte file whose blocks the caller
/// gives in their stored form, never expanded: `block(offset, n, out)`
/// appends the block of the `n` indices from `offset`: a bitmap of
/// `ceil(n / 8)` bytes marking the nonzero values (lowest bit first), then
/// those values in index order (FORMAT.md, "Values"). A block that does not
/// add up (bitmap against values) is refused as the caller's bug.
#[cfg(feature = "build")]
pub fn write_partition_file_sparse<E: From<FormatError> + Send>(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    positions: u64,
    options: &WriteOptions,
    block: impl Fn(u64, usize, &mut Vec<u8>) -> Result<(), E> + Sync,
) -> Result<FileSummary, E> {
    write_blocks_par(
        path,
        game,
        partition,
        ValueEncoding::Byte,
        positions,
        options,
        false,
        |offset, n, _raw: &mut Vec<u8>, stored: &mut Vec<u8>| {
            block(offset, n, stored)?;
            let bitmap = stored.get(..n.div_ceil(8)).unwrap_or_default();
            let ones: usize = bitmap.iter().map(|m| m.count_ones() as usize).sum();
            if stored.len() != n.div_ceil(8) + ones || stored.len() < n.div_ceil(8) {
                return Err(E::from(FormatError::BadInput {
                    file: path.display().to_string(),
                    message: format!(
                        "a sparse block at index {offset} holds {} bytes, its bitmap says {}",
                        stored.len(),
                        n.div_ceil(8) + ones
                    ),
                }));
            }
            Ok(())
        },
    )
}

/// Both of the above: `make(offset, n, raw, stored)` appends the stored form
/// of the block of `n` indices from `offset` to `stored` (`raw`: a scratch
/// buffer of the thread's own).
#[cfg(feature = "build")]
#[allow(clippy::too_many_arguments)]
fn write_blocks_par<E: From<FormatError> + Send>(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    positions: u64,
    options: &WriteOptions,
    engine: bool,
    make: impl Fn(u64, usize, &mut Vec<u8>, &mut Vec<u8>) -> Result<(), E> + Sync,
) -> Result<FileSummary, E> {
    use rayon::prelude::*;
    let bp = block_positions(path, game, encoding, options)?;
    let level = if engine {
        ENGINE_ZSTD_LEVEL
    } else {
        ZSTD_LEVEL
    };
    let block_count = positions.div_ceil(u64::from(bp));
    // Large groups: between them one thread writes while the others wait.
    let group = (16 * group_blocks()) as u64;
    let mut next_block = 0u64;
    write_blocks(
        path,
        game,
        partition,
        encoding,
        positions,
        bp,
        engine,
        options.long,
        || {
            if next_block >= block_count {
                return Ok(None);
            }
            let end = (next_block + group).min(block_count);
            let share = ((end - next_block) as usize)
                .div_ceil(4 * rayon::current_num_threads())
                .max(4) as u64;
            let shares: Vec<Vec<Vec<u8>>> = (next_block..end)
                .step_by(share as usize)
                .collect::<Vec<u64>>()
                .into_par_iter()
                .map(|first| {
                    let (mut raw, mut stored) = (Vec::new(), Vec::new());
                    (first..(first + share).min(end))
                        .map(|b| {
                            let offset = b * u64::from(bp);
                            let n = (positions - offset).min(u64::from(bp)) as usize;
                            stored.clear();
                            make(offset, n, &mut raw, &mut stored)?;
                            compress_on_this_thread(&stored, level)
                                .map_err(|e| E::from(FormatError::io("compressing", path, e)))
                        })
                        .collect::<Result<Vec<_>, E>>()
                })
                .collect::<Result<_, E>>()?;
            next_block = end;
            Ok(Some(shares.into_iter().flatten().collect()))
        },
    )
}

/// Writes a file of `positions` values in blocks of `bp`, atomically:
/// `next()` gives the compressed blocks in order, some at a time, then
/// `None`.
#[allow(clippy::too_many_arguments)]
fn write_blocks<E: From<FormatError>>(
    path: &Path,
    game: &GameInfo,
    partition: PartitionId,
    encoding: ValueEncoding,
    positions: u64,
    bp: u32,
    engine: bool,
    long: Option<&LongDistances>,
    mut next: impl FnMut() -> Result<Option<Vec<Vec<u8>>>, E>,
) -> Result<FileSummary, E> {
    use std::io::{Seek, SeekFrom, Write};
    let bad = |message: String| FormatError::BadInput {
        file: path.display().to_string(),
        message,
    };
    let block_count = positions.div_ceil(u64::from(bp));
    let index_len = usize::try_from(block_count)
        .ok()
        .and_then(|n| n.checked_mul(INDEX_ENTRY_LEN))
        .ok_or_else(|| {
            bad(format!(
                "{} need too many blocks",
                count(positions, "position", "positions")
            ))
        })?;
    let long = long.filter(|l| !l.is_empty());
    if let Some(l) = long {
        if engine || encoding != ValueEncoding::Byte {
            return Err(E::from(bad(
                "long distances are stored only in one-byte tablebase files, not in engine or two-bit files"
                    .into(),
            )));
        }
        if let Some(&(rank, _)) = l.entries().last().filter(|e| e.0 >= positions) {
            return Err(E::from(bad(format!(
                "a long distance is listed at rank {rank}, past the partition's {positions} indices"
            ))));
        }
    }
    let long_bytes = encode_long(long);
    let data_offset = (HEADER_LEN + index_len + long_bytes.len()) as u64;

    write_atomic_with(path, |f, tmp| {
        let write_err = |e| FormatError::io("writing", tmp, e);
        f.seek(SeekFrom::Start(data_offset)).map_err(write_err)?;
        let mut index = Vec::with_capacity(index_len);
        let mut blocks_crc = crc32fast::Hasher::new();
        let mut offset = data_offset;
        let mut written = 0u64;
        while let Some(blocks) = next()? {
            for block in &blocks {
                index.extend_from_slice(&offset.to_le_bytes());
                index.extend_from_slice(&(block.len() as u32).to_le_bytes());
                index.extend_from_slice(&crc32fast::hash(block).to_le_bytes());
                blocks_crc.update(block);
                f.write_all(block).map_err(write_err)?;
                offset += block.len() as u64;
            }
            written += blocks.len() as u64;
        }
        debug_assert_eq!(written, block_count);
        let file_len = offset + TRAILER_LEN as u64;
        let (header, seal) = Header::new(
            game,
            partition,
            encoding,
            engine,
            positions,
            bp,
            data_offset,
            file_len,
            long.map_or(0, |l| l.len() as u64),
        )
        .sealed(&[&index[..], &long_bytes].concat());
        let mut trailer = [0u8; TRAILER_LEN];
        trailer[0..4].copy_from_slice(&seal.to_le_bytes());
        trailer[8..16].copy_from_slice(&TRAILER_MAGIC);
        f.write_all(&trailer).map_err(write_err)?;
        f.seek(SeekFrom::Start(0)).map_err(write_err)?;
        f.write_all(&header).map_err(write_err)?;
        f.write_all(&index).map_err(write_err)?;
        f.write_all(&long_bytes).map_err(write_err)?;

        let mut whole = crc32fast::Hasher::new();
        whole.update(&header);
        whole.update(&index);
        whole.update(&long_bytes);
        whole.combine(&blocks_crc);
        whole.update(&trailer);
        Ok(FileSummary {
            bytes: file_len,
            crc32: whole.finalize(),
        })
    })
}

/// The long-distance table as stored (FORMAT.md, "Long distances"): per
/// entry the rank (8 bytes) and the distance (4), in rank order.
fn encode_long(long: Option<&LongDistances>) -> Vec<u8> {
    let entries = long.map_or(&[][..], |l| l.entries());
    let mut out = Vec::with_capacity(entries.len() * LONG_ENTRY_LEN);
    for &(rank, d) in entries {
        out.extend_from_slice(&rank.to_le_bytes());
        out.extend_from_slice(&d.to_le_bytes());
    }
    out
}

/// Bytes of one long-distance table entry.
const LONG_ENTRY_LEN: usize = 12;

/// About how much memory [`write_partition_file_from`] holds while it writes
/// a file of `encoding` with the default block size (index not counted: 16
/// bytes per block): a group of raw blocks, their compressed copies, and one
/// zstd context per thread (a level-15 context for 64 KiB blocks is about
/// 1.8 MB, measured with heaptrack; level 9's is smaller).
pub fn write_memory_bytes(encoding: ValueEncoding) -> u64 {
    const CONTEXT_BYTES: u64 = 2 << 20;
    let group = group_blocks() as u64;
    let block = u64::from(BLOCK_BYTES) * encoding.positions_per_byte();
    let contexts = group.min(threads() as u64);
    group * (block + u64::from(BLOCK_BYTES)) + contexts * CONTEXT_BYTES
}

fn threads() -> usize {
    #[cfg(feature = "build")]
    return rayon::current_num_threads();
    #[cfg(not(feature = "build"))]
    return 1;
}

/// Blocks compressed at once by [`write_partition_file_from`]: enough to keep
/// every thread busy between the group's sequential copy and write (two
/// blocks a thread left 16 cores 60 % idle), few enough that a group stays
/// small (64 KiB blocks: 512 KiB of values on 2 threads, 8 MiB on 32).
fn group_blocks() -> usize {
    (4 * threads()).clamp(8, 128)
}

/// The stored bytes of one block of values.
fn pack(raw: &[u8], encoding: ValueEncoding, kind: GameKind) -> Cow<'_, [u8]> {
    match encoding {
        ValueEncoding::Byte => {
            let mut out = Vec::with_capacity(raw.len().div_ceil(8) + raw.len());
            pack_sparse(raw, &mut out);
            Cow::Owned(out)
        }
        ValueEncoding::Wdl2 => Cow::Owned(
            raw.chunks(4)
                .map(|four| {
                    four.iter().enumerate().fold(0u8, |acc, (i, &b)| {
                        acc | encoding.encode(kind, Value::from_byte(b)) << (2 * i)
                    })
                })
                .collect(),
        ),
    }
}

/// A byte block's stored form (FORMAT.md, "Values"): a bitmap of the
/// nonzero positions, then their bytes in order.
fn pack_sparse(raw: &[u8], out: &mut Vec<u8>) {
    out.extend(raw.chunks(8).map(|eight| {
        eight
            .iter()
            .enumerate()
            .fold(0u8, |m, (j, &b)| m | u8::from(b != 0) << j)
    }));
    out.extend(raw.iter().copied().filter(|&b| b != 0));
}

/// The `n` bytes of a sparse byte block, or why its stored form is not one:
/// each block has exactly one stored form, so anything else is corruption.
fn unpack_sparse(stored: &[u8], n: usize) -> Result<Vec<u8>, String> {
    let bitmap_len = n.div_ceil(8);
    let Some((bitmap, values)) = stored.split_at_checked(bitmap_len) else {
        return Err(format!(
            "holds {} bytes, fewer than the {bitmap_len}-byte bitmap of {n} positions",
            stored.len()
        ));
    };
    if n % 8 != 0 && bitmap[bitmap_len - 1] >> (n % 8) != 0 {
        return Err("bitmap bits past the last position are set".into());
    }
    let ones: usize = bitmap.iter().map(|m| m.count_ones() as usize).sum();
    if ones != values.len() {
        return Err(format!(
            "bitmap marks {ones} positions but {} bytes follow it",
            values.len()
        ));
    }
    if values.contains(&0) {
        return Err("a position marked nonzero holds 0".into());
    }
    let mut out = vec![0u8; n];
    let mut next = values.iter();
    for (i, &m) in bitmap.iter().enumerate() {
        let mut m = m;
        while m != 0 {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            out[8 * i + j] = *next.next().expect("counted above");
        }
    }
    Ok(out)
}

thread_local! {
    static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
}

/// One block compressed with this thread's own context, made once: a context
/// made per few blocks cost more than the blocks (2 MB allocated and freed
/// each time, on 15 threads at once) and held the writer of a GPU build to
/// 300 MB/s.
#[cfg(feature = "build")]
fn compress_on_this_thread(block: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|(l, _)| *l != level) {
            *c = Some((level, compressor_at(level)?));
        }
        c.as_mut().expect("set above").1.compress(block)
    })
}

fn compressor() -> std::io::Result<zstd::bulk::Compressor<'static>> {
    compressor_at(ZSTD_LEVEL)
}

fn compressor_at(level: i32) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    use zstd::zstd_safe::CParameter;
    let mut c = zstd::bulk::Compressor::new(level)?;
    // Pinned explicitly: these change the frame bytes.
    c.set_parameter(CParameter::ChecksumFlag(false))?;
    c.set_parameter(CParameter::ContentSizeFlag(true))?;
    c.set_parameter(CParameter::DictIdFlag(false))?;
    Ok(c)
}

#[cfg(feature = "build")]
fn compress_blocks(
    raw: &[&[u8]],
    encoding: ValueEncoding,
    kind: GameKind,
) -> std::io::Result<Vec<Vec<u8>>> {
    use rayon::prelude::*;
    // Each block is compressed on its own, so the thread that does it cannot
    // change its bytes. One compressor per thread's share of the blocks: a
    // zstd context holds about a megabyte, and `map_init` may make one per
    // work split, several per thread.
    // Four shares a thread (blocks differ in cost), of at least four blocks.
    let share = raw.len().div_ceil(4 * rayon::current_num_threads()).max(4);
    let shares: Vec<Vec<Vec<u8>>> = raw
        .par_chunks(share)
        .map(|blocks| {
            let mut c = compressor()?;
            blocks
                .iter()
                .map(|block| c.compress(&pack(block, encoding, kind)))
                .collect()
        })
        .collect::<std::io::Result<_>>()?;
    Ok(shares.into_iter().flatten().collect())
}

#[cfg(not(feature = "build"))]
fn compress_blocks(
    raw: &[&[u8]],
    encoding: ValueEncoding,
    kind: GameKind,
) -> std::io::Result<Vec<Vec<u8>>> {
    let mut c = compressor()?;
    raw.iter()
        .map(|block| c.compress(&pack(block, encoding, kind)))
        .collect()
}

/// Where a file's bytes come from.
enum Source {
    Mapped(memmap2::Mmap),
    Bytes(Vec<u8>),
    /// Positional reads need no lock.
    #[cfg(unix)]
    Reader(File),
    /// Seek + read: one reader at a time.
    #[cfg(not(unix))]
    Reader(Mutex<File>),
}

/// A checked, open tablebase file: header and block index verified against
/// the trailer checksum; blocks are checked as they are read.
pub struct TableFile {
    name: String,
    source: Source,
    header: Header,
    index: Vec<BlockRef>,
    /// The trailer's crc32 of the header, the index and the long-distance table.
    sealed_crc32: u32,
    /// The long-distance table (empty but in version-6 files).
    long: LongDistances,
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile")
            .field("name", &self.name)
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

impl TableFile {
    /// Opens `path` by memory-mapping it.
    ///
    /// # Safety
    ///
    /// The file must not be truncated or written to while the returned value
    /// (or anything holding it) lives: a mapped page that vanishes ends the
    /// process with SIGBUS, and bytes changed under the map are undefined
    /// behaviour for the reads here. tbforge itself never modifies a file in
    /// place: writers create a new file under a temporary name and rename it
    /// over the old one, which leaves an existing map untouched. Callers must
    /// ensure no other program modifies the file in place either. A changed
    /// file is otherwise caught by the checksums, but only if the bytes stay
    /// put while they are checked. Use [`TableFile::open_read`] where this
    /// cannot be promised.
    pub unsafe fn open_mapped(path: &Path) -> Result<TableFile, FormatError> {
        let file = File::open(path).map_err(|e| FormatError::io("opening", path, e))?;
        // SAFETY: the caller upholds this function's contract (no truncation
        // or in-place writes while mapped); see the Safety section above.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| FormatError::io("memory-mapping", path, e))?;
        TableFile::parse(display_name(path), Source::Mapped(map))
    }

    /// Opens `path` for reads through the file handle: no memory map, so no
    /// contract beyond ordinary I/O; a changed file shows up as a checksum error.
    pub fn open_read(path: &Path) -> Result<TableFile, FormatError> {
        let file = File::open(path).map_err(|e| FormatError::io("opening", path, e))?;
        #[cfg(not(unix))]
        let file = Mutex::new(file);
        TableFile::parse(display_name(path), Source::Reader(file))
    }

    /// Reads a file held in memory; `name` is used in error messages.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<TableFile, FormatError> {
        TableFile::parse(name.to_string(), Source::Bytes(bytes))
    }

    /// The file's name, as used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The checked header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The checked block index.
    pub fn index(&self) -> &[BlockRef] {
        &self.index
    }

    /// The partition's long distances (FORMAT.md, "Long distances"): empty
    /// in nearly every file.
    pub fn long(&self) -> &LongDistances {
        &self.long
    }

    /// The stored position at `rank` whose code is `code`, its distance
    /// exact where the code is saturated and the rank listed among the long
    /// distances.
    pub fn decode_at(&self, rank: Rank, code: u8) -> Stored {
        let mut stored = self.header.encoding.decode(self.header.kind, code);
        if code >= crate::value::SATURATED_LOSS && self.header.encoding == ValueEncoding::Byte {
            if let Some(d) = self.long.get(rank) {
                stored.distance = Some(d);
            }
        }
        stored
    }

    fn len(&self) -> Result<u64, FormatError> {
        match &self.source {
            Source::Mapped(m) => Ok(m.len() as u64),
            Source::Bytes(b) => Ok(b.len() as u64),
            Source::Reader(f) => {
                #[cfg(not(unix))]
                let f = f.lock().unwrap_or_else(|e| e.into_inner());
                f.metadata()
                    .map(|m| m.len())
                    .map_err(|e| FormatError::io("reading the size of", &self.name, e))
            }
        }
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>, FormatError> {
        let slice = |b: &'_ [u8]| -> Option<std::ops::Range<usize>> {
            let start = usize::try_from(offset).ok()?;
            let end = start.checked_add(len)?;
            (end <= b.len()).then_some(start..end)
        };
        let short = || {
            self.corrupt(
                None,
                format!(
                    "reading {} at offset {offset}: past the end of the file (truncated)",
                    count(len as u64, "byte", "bytes")
                ),
            )
        };
        match &self.source {
            Source::Mapped(m) => slice(m).map(|r| Cow::Borrowed(&m[r])).ok_or_else(short),
            Source::Bytes(b) => slice(b).map(|r| Cow::Borrowed(&b[r])).ok_or_else(short),
            Source::Reader(f) => {
                let mut buf = vec![0u8; len];
                #[cfg(unix)]
                let read = std::os::unix::fs::FileExt::read_exact_at(f, &mut buf, offset);
                #[cfg(not(unix))]
                let read = {
                    use std::io::{Read, Seek, SeekFrom};
                    let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
                    f.seek(SeekFrom::Start(offset))
                        .and_then(|_| f.read_exact(&mut buf))
                };
                read.map_err(|e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => short(),
                    _ => FormatError::io("reading", &self.name, e),
                })?;
                Ok(Cow::Owned(buf))
            }
        }
    }

    fn corrupt(&self, block: Option<u64>, message: String) -> FormatError {
        FormatError::Corrupt {
            file: self.name.clone(),
            block,
            message,
        }
    }

    fn parse(name: String, source: Source) -> Result<TableFile, FormatError> {
        let mut tf = TableFile {
            name,
            source,
            header: Header {
                format_version: 0,
                engine: false,
                game: String::new(),
                param_hash: 0,
                kind: GameKind::TwoPlayer,
                partition: PartitionId(0),
                encoding: ValueEncoding::Byte,
                index_size: 0,
                block_positions: 0,
                block_count: 0,
                data_offset: 0,
                file_len: 0,
                long_count: 0,
            },
            index: Vec::new(),
            sealed_crc32: 0,
            long: LongDistances::new(),
        };
        let (header, index, sealed_crc32, long) = tf.check_structure()?;
        tf.header = header;
        tf.index = index;
        tf.sealed_crc32 = sealed_crc32;
        tf.long = long;
        Ok(tf)
    }

    /// Checks everything but the blocks' contents, in an order that gives the
    /// most telling message first (not a tablebase, wrong version, truncated,
    /// damaged header or index).
    fn check_structure(&self) -> Result<(Header, Vec<BlockRef>, u32, LongDistances), FormatError> {
        let bad = |m: String| self.corrupt(None, m);
        let actual_len = self.len()?;
        if actual_len < 8 {
            return Err(bad(format!(
                "{}: too short to be a tablebase file (truncated)",
                count(actual_len, "byte", "bytes")
            )));
        }
        if self.read_at(0, 8)?[..] != MAGIC {
            return Err(bad("not a tbforge tablebase file (bad magic number)".into()));
        }
        if actual_len < (HEADER_LEN + TRAILER_LEN) as u64 {
            return Err(bad(format!(
                "{}: shorter than header and trailer (truncated)",
                count(actual_len, "byte", "bytes")
            )));
        }
        let h = self.read_at(0, HEADER_LEN)?.into_owned();
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        if version != FORMAT_VERSION
            && version != ENGINE_FORMAT_VERSION
            && version != LONG_FORMAT_VERSION
        {
            return Err(FormatError::Version {
                file: self.name.clone(),
                found: version,
                supported: if version > FORMAT_VERSION {
                    LONG_FORMAT_VERSION
                } else {
                    FORMAT_VERSION
                },
            });
        }
        let file_len = u64_at(104);
        if file_len != actual_len {
            return Err(bad(format!(
                "the header gives a length of {}, the file has {actual_len} (truncated, extended or damaged)",
                count(file_len, "byte", "bytes")
            )));
        }
        let block_count = u64_at(80);
        let long_count = u64_at(112);
        let index_len = block_count
            .checked_mul(INDEX_ENTRY_LEN as u64)
            .filter(|&n| n <= file_len - (HEADER_LEN + TRAILER_LEN) as u64)
            .ok_or_else(|| {
                bad(format!(
                    "the header's block count {block_count} needs an index larger than the file (damaged header)"
                ))
            })?;
        let long_len = long_count
            .checked_mul(LONG_ENTRY_LEN as u64)
            .filter(|&n| n <= file_len - (HEADER_LEN + TRAILER_LEN) as u64 - index_len)
            .ok_or_else(|| {
                bad(format!(
                    "the header's long-distance count {long_count} needs a table larger than the file (damaged header)"
                ))
            })?;
        let index_bytes = self.read_at(HEADER_LEN as u64, index_len as usize)?;
        let long_bytes = self.read_at(HEADER_LEN as u64 + index_len, long_len as usize)?;
        let trailer = self.read_at(file_len - TRAILER_LEN as u64, TRAILER_LEN)?;
        if trailer[8..16] != TRAILER_MAGIC || trailer[4..8] != [0; 4] {
            return Err(bad("the trailer is damaged or missing (truncated?)".into()));
        }
        let stored = u32::from_le_bytes(trailer[0..4].try_into().expect("4 bytes"));
        let mut crc = crc32fast::Hasher::new();
        crc.update(&h);
        crc.update(&index_bytes);
        crc.update(&long_bytes);
        let computed = crc.finalize();
        if stored != computed {
            return Err(bad(format!(
                "header or block index damaged: checksum {computed:08x}, trailer says {stored:08x}"
            )));
        }

        // The checksum matched: what follows only fails for a file written by a
        // broken or hostile writer, but must still never panic.
        let header_len = u32_at(12);
        if header_len != HEADER_LEN as u32 {
            return Err(bad(format!(
                "header length {header_len}, expected {HEADER_LEN}"
            )));
        }
        let game_raw = &h[16..16 + GAME_ID_LEN];
        let game_len = game_raw.iter().position(|&b| b == 0).unwrap_or(GAME_ID_LEN);
        let game = &game_raw[..game_len];
        if game.is_empty()
            || !game.iter().all(u8::is_ascii_graphic)
            || game_raw[game_len..].iter().any(|&b| b != 0)
        {
            return Err(bad(
                "the header's game id is not NUL-padded printable ASCII".into(),
            ));
        }
        let encoding = ValueEncoding::from_code(h[60])
            .ok_or_else(|| bad(format!("unknown value encoding code {}", h[60])))?;
        let kind = match h[61] {
            0 => GameKind::TwoPlayer,
            1 => GameKind::Puzzle,
            k => return Err(bad(format!("unknown game kind code {k}"))),
        };
        // ENGINE_FORMAT_VERSION is the engine files' version: the flag and the version
        // agree, so neither can be flipped alone.
        let engine = version == ENGINE_FORMAT_VERSION;
        if h[62] != u8::from(engine) {
            return Err(bad(format!(
                "engine flag {} in a version-{version} file (engine files are version {ENGINE_FORMAT_VERSION}, with flag 1)",
                h[62]
            )));
        }
        if (version == LONG_FORMAT_VERSION) != (long_count > 0) {
            return Err(bad(format!(
                "{long_count} long distances in a version-{version} file (only version-{LONG_FORMAT_VERSION} files have them, at least one)"
            )));
        }
        if long_count > 0 && encoding != ValueEncoding::Byte {
            return Err(bad(format!(
                "long distances in a {encoding} file (only one-byte files have them)"
            )));
        }
        let mut long = Vec::with_capacity(long_count as usize);
        for e in long_bytes.chunks_exact(LONG_ENTRY_LEN) {
            long.push((
                u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
                u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
            ));
        }
        let in_order = long.windows(2).all(|w| w[0].0 < w[1].0);
        let long = LongDistances::from_entries(long)
            .filter(|_| in_order)
            .ok_or_else(|| {
                bad("the long-distance table is not in rank order or lists a distance that fits a byte".into())
            })?;
        let reserved_zero = h[63..64].iter().chain(&h[76..80]).chain(&h[120..128]);
        if reserved_zero.into_iter().any(|&b| b != 0) {
            return Err(bad("reserved header bytes are not zero".into()));
        }
        let positions = u64_at(64);
        let block_positions = u32_at(72);
        if block_positions % 4 != 0 || !(4..=MAX_BLOCK_POSITIONS).contains(&block_positions) {
            return Err(bad(format!(
                "block size {block_positions} is not a multiple of 4 in 4..={MAX_BLOCK_POSITIONS}"
            )));
        }
        if positions.div_ceil(u64::from(block_positions)) != block_count {
            return Err(bad(format!(
                "{} in blocks of {block_positions} need {}, the header says {block_count}",
                count(positions, "index", "indices"),
                count(
                    positions.div_ceil(u64::from(block_positions)),
                    "block",
                    "blocks"
                )
            )));
        }
        let index_offset = u64_at(88);
        let data_offset = u64_at(96);
        if index_offset != HEADER_LEN as u64
            || data_offset != HEADER_LEN as u64 + index_len + long_len
        {
            return Err(bad(format!(
                "index at {index_offset} and data at {data_offset}, expected {HEADER_LEN} and {}",
                HEADER_LEN as u64 + index_len + long_len
            )));
        }
        if let Some(&(rank, _)) = long.entries().last().filter(|e| e.0 >= positions) {
            return Err(bad(format!(
                "a long distance is listed at rank {rank}, past the file's {positions} indices"
            )));
        }
        let header = Header {
            format_version: version,
            engine,
            game: String::from_utf8_lossy(game).into_owned(),
            param_hash: u64_at(48),
            kind,
            partition: PartitionId(u32_at(56)),
            encoding,
            index_size: positions,
            block_positions,
            block_count,
            data_offset,
            file_len,
            long_count,
        };

        let mut index = Vec::with_capacity(block_count as usize);
        let mut expect = data_offset;
        for (i, e) in index_bytes.chunks_exact(INDEX_ENTRY_LEN).enumerate() {
            let r = BlockRef {
                offset: u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
                len: u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
                crc32: u32::from_le_bytes(e[12..16].try_into().expect("4 bytes")),
            };
            let raw = header.raw_len(i as u64) as u64;
            if r.offset != expect || r.len == 0 || u64::from(r.len) > raw + raw / 64 + 1024 {
                return Err(self.corrupt(
                    Some(i as u64),
                    format!(
                        "index entry (offset {}, length {}) is inconsistent",
                        r.offset, r.len
                    ),
                ));
            }
            expect += u64::from(r.len);
            index.push(r);
        }
        if expect != file_len - TRAILER_LEN as u64 {
            return Err(bad(format!(
                "blocks end at {expect}, the trailer starts at {}",
                file_len - TRAILER_LEN as u64
            )));
        }
        Ok((header, index, stored, long))
    }

    /// The crc32 of the whole file as it must be if every block matches its
    /// index entry, computed without reading a block: from the trailer's
    /// checksum of the header and index, each index entry's crc32 and length,
    /// and the trailer. Equal to the manifest's crc32 of an unchanged file;
    /// the probe compares the two when it opens a file, which binds the index
    /// (and through it every block, checked as read) to the manifest: a file
    /// whose blocks were reordered, copied or rewritten and whose index and
    /// trailer were made to match is refused, not read.
    pub fn whole_file_crc32(&self) -> u32 {
        let sealed_len = self.header.data_offset;
        let mut crc = crc32fast::Hasher::new_with_initial_len(self.sealed_crc32, sealed_len);
        for r in &self.index {
            crc.combine(&crc32fast::Hasher::new_with_initial_len(
                r.crc32,
                u64::from(r.len),
            ));
        }
        crc.update(&self.sealed_crc32.to_le_bytes());
        crc.update(&[0; 4]);
        crc.update(&TRAILER_MAGIC);
        crc.finalize()
    }

    /// The block holding `rank` and the position's place inside it.
    pub fn locate(&self, rank: Rank) -> Result<(u64, u64), FormatError> {
        if rank.0 >= self.header.index_size {
            return Err(FormatError::RankOutOfRange {
                partition: self.header.partition,
                rank,
                size: self.header.index_size,
            });
        }
        let bp = u64::from(self.header.block_positions);
        Ok((rank.0 / bp, rank.0 % bp))
    }

    /// Block `block`, checked against its crc32 and decompressed: the stored
    /// bytes (one per position, or four positions per byte).
    pub fn read_block(&self, block: u64) -> Result<Vec<u8>, FormatError> {
        let r = *usize::try_from(block)
            .ok()
            .and_then(|b| self.index.get(b))
            .ok_or_else(|| {
                self.corrupt(
                    None,
                    format!(
                        "block {block} asked for; the file has {}",
                        count(self.index.len() as u64, "block", "blocks")
                    ),
                )
            })?;
        let bytes = self.read_at(r.offset, r.len as usize)?;
        let crc = crc32fast::hash(&bytes);
        if crc != r.crc32 {
            return Err(self.corrupt(
                Some(block),
                format!("checksum {crc:08x}, index says {:08x}", r.crc32),
            ));
        }
        let raw_len = self.header.raw_len(block);
        let stored = decompress(&bytes, self.header.stored_capacity(block))
            .map_err(|e| self.corrupt(Some(block), format!("does not decompress: {e}")))?;
        let raw = match self.header.encoding {
            ValueEncoding::Byte => unpack_sparse(&stored, raw_len)
                .map_err(|e| self.corrupt(Some(block), format!("sparse block: {e}")))?,
            ValueEncoding::Wdl2 => stored,
        };
        if raw.len() != raw_len {
            return Err(self.corrupt(
                Some(block),
                format!(
                    "decompresses to {}, expected {raw_len}",
                    count(raw.len() as u64, "byte", "bytes")
                ),
            ));
        }
        if self.header.encoding == ValueEncoding::Wdl2 {
            let used = (self.header.positions_in(block) % 4) as u32;
            if used != 0 && raw[raw_len - 1] >> (2 * used) != 0 {
                return Err(self.corrupt(Some(block), "padding bits are not zero".into()));
            }
        }
        Ok(raw)
    }

    /// The stored code of position `offset` in a decompressed block.
    pub fn code_in(&self, raw: &[u8], offset: u64) -> u8 {
        match self.header.encoding {
            ValueEncoding::Byte => raw[offset as usize],
            ValueEncoding::Wdl2 => (raw[(offset / 4) as usize] >> (2 * (offset % 4))) & 3,
        }
    }

    /// The stored position at `rank` (decompresses its block; no cache).
    pub fn read(&self, rank: Rank) -> Result<Stored, FormatError> {
        let (block, offset) = self.locate(rank)?;
        let raw = self.read_block(block)?;
        let code = self.code_in(&raw, offset);
        Ok(self.decode_at(rank, code))
    }

    /// Every stored code in rank order (one byte per position, whatever the encoding).
    pub fn read_all_codes(&self) -> Result<Vec<u8>, FormatError> {
        let mut out = Vec::with_capacity(usize::try_from(self.header.index_size).unwrap_or(0));
        for block in 0..self.header.block_count {
            out.extend(self.block_codes(block)?);
        }
        Ok(out)
    }

    /// The codes of block `block`'s positions, in index order (checked and
    /// decompressed as [`Self::read_block`]): a file read back a block at a
    /// time.
    pub fn block_codes(&self, block: u64) -> Result<Vec<u8>, FormatError> {
        let raw = self.read_block(block)?;
        Ok((0..self.header.positions_in(block))
            .map(|i| self.code_in(&raw, i))
            .collect())
    }
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

thread_local! {
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompresses one block, refusing output beyond `capacity` bytes.
fn decompress(bytes: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new()?);
        }
        let d = d.as_mut().expect("set above");
        d.decompress(bytes, capacity)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Params;

    #[test]
    fn sparse_blocks_round_trip_and_refuse_every_other_form() {
        for n in [1usize, 7, 8, 9, 64, 1000] {
            let raw: Vec<u8> = (0..n)
                .map(|i| if i % 3 == 1 { (i % 200) as u8 + 1 } else { 0 })
                .collect();
            let mut stored = Vec::new();
            pack_sparse(&raw, &mut stored);
            assert_eq!(
                stored.len(),
                n.div_ceil(8) + raw.iter().filter(|&&b| b != 0).count()
            );
            assert_eq!(unpack_sparse(&stored, n).unwrap(), raw, "n = {n}");
        }
        let raw = [0u8, 5, 0, 7, 9];
        let mut stored = Vec::new();
        pack_sparse(&raw, &mut stored);
        // A bit past the last position.
        let mut bad = stored.clone();
        bad[0] |= 1 << 6;
        assert!(unpack_sparse(&bad, 5)
            .unwrap_err()
            .contains("past the last"));
        // One value too many, one too few.
        let mut bad = stored.clone();
        bad.push(3);
        assert!(unpack_sparse(&bad, 5).unwrap_err().contains("bytes follow"));
        assert!(unpack_sparse(&stored[..stored.len() - 1], 5)
            .unwrap_err()
            .contains("bytes follow"));
        // A zero stored as nonzero: a second form of the same block.
        let mut bad = stored.clone();
        *bad.last_mut().unwrap() = 0;
        assert!(unpack_sparse(&bad, 5).unwrap_err().contains("holds 0"));
        // Shorter than the bitmap.
        assert!(unpack_sparse(&[], 5).unwrap_err().contains("bitmap"));
    }

    /// The writer as it was before streaming: every block compressed in
    /// memory, then header, index, blocks and trailer assembled at once.
    /// The streamed writer must give exactly these bytes.
    fn whole_in_memory(
        game: &GameInfo,
        partition: PartitionId,
        encoding: ValueEncoding,
        values: &[u8],
        bp: u32,
    ) -> Vec<u8> {
        let block_count = (values.len() as u64).div_ceil(u64::from(bp));
        let data_offset = (HEADER_LEN + INDEX_ENTRY_LEN * block_count as usize) as u64;
        let raw: Vec<&[u8]> = values.chunks(bp as usize).collect();
        let blocks = compress_blocks(&raw, encoding, game.kind).unwrap();
        let mut index = Vec::new();
        let mut offset = data_offset;
        for b in &blocks {
            index.extend_from_slice(&offset.to_le_bytes());
            index.extend_from_slice(&(b.len() as u32).to_le_bytes());
            index.extend_from_slice(&crc32fast::hash(b).to_le_bytes());
            offset += b.len() as u64;
        }
        let (header, seal) = Header::new(
            game,
            partition,
            encoding,
            false,
            values.len() as u64,
            bp,
            data_offset,
            offset + TRAILER_LEN as u64,
            0,
        )
        .sealed(&index);
        let mut out = header.to_vec();
        out.extend_from_slice(&index);
        for b in &blocks {
            out.extend_from_slice(b);
        }
        out.extend_from_slice(&seal.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&TRAILER_MAGIC);
        out
    }

    /// Value bytes with long runs (compressible) and noise, all below 40.
    fn values(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if (i / 1000) % 3 == 0 {
                    ((i / 1000) % 40) as u8
                } else {
                    (x % 40) as u8
                }
            })
            .collect()
    }

    fn info(kind: GameKind) -> GameInfo {
        GameInfo {
            id: "streamtest",
            params: Params::new(),
            kind,
        }
    }

    #[test]
    fn streamed_bytes_equal_the_whole_in_memory_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.tbf");
        let small = group_blocks();
        // Block sizes: tiny (many groups, partial last block and group), and
        // the defaults, with partitions over a few groups of default blocks.
        let cases: Vec<(Option<u32>, usize)> = vec![
            (Some(4), 0),
            (Some(4), 1),
            (Some(4), 3),
            (Some(4), 4),
            (Some(4), 4 * small),
            (Some(4), 4 * small + 1),
            (Some(8), 8 * small * 3 - 5),
            (Some(64), 10_007),
            (None, 70_000),
            (None, (BLOCK_BYTES as usize) * small * 2 + 12_345),
            (None, (BLOCK_BYTES as usize) * 4 * small + 77),
        ];
        for kind in [GameKind::TwoPlayer, GameKind::Puzzle] {
            for encoding in [ValueEncoding::Byte, ValueEncoding::Wdl2] {
                for &(block_positions, n) in &cases {
                    let v = values(n, n as u64 + 7);
                    let opts = WriteOptions {
                        block_positions,
                        ..WriteOptions::default()
                    };
                    let bp = opts.block_positions(encoding);
                    let expected = whole_in_memory(&info(kind), PartitionId(3), encoding, &v, bp);
                    let mut calls = 0;
                    let sum = write_partition_file_from(
                        &path,
                        &info(kind),
                        PartitionId(3),
                        encoding,
                        n as u64,
                        &opts,
                        |offset, buf: &mut [u8]| {
                            calls += 1;
                            assert!(buf.len() <= small * bp as usize, "a group is bounded");
                            let o = offset as usize;
                            buf.copy_from_slice(&v[o..o + buf.len()]);
                            Ok::<(), FormatError>(())
                        },
                    )
                    .unwrap();
                    let got = std::fs::read(&path).unwrap();
                    let what = format!("{kind:?} {encoding} block {bp}, {n} positions");
                    assert!(got == expected, "{what}: bytes differ");
                    assert_eq!(calls, n.div_ceil(small * bp as usize), "{what}");
                    assert_eq!(sum.bytes, got.len() as u64, "{what}");
                    assert_eq!(sum.crc32, crc32fast::hash(&got), "{what}");
                    let read = TableFile::from_bytes("p.tbf", got.clone()).unwrap();
                    assert_eq!(read.whole_file_crc32(), sum.crc32, "{what}");
                    let sum2 = write_partition_file_with(
                        &path,
                        &info(kind),
                        PartitionId(3),
                        encoding,
                        &v,
                        &opts,
                    )
                    .unwrap();
                    assert_eq!(sum2, sum, "{what}");
                    assert!(
                        std::fs::read(&path).unwrap() == expected,
                        "{what}: slice API"
                    );
                }
            }
        }
    }

    #[test]
    fn a_failing_source_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.tbf");
        let err = write_partition_file_from(
            &path,
            &info(GameKind::TwoPlayer),
            PartitionId(0),
            ValueEncoding::Byte,
            1 << 20,
            &WriteOptions::default(),
            |offset, buf: &mut [u8]| {
                if offset > 0 {
                    return Err(FormatError::io(
                        "reading",
                        "scratch",
                        std::io::Error::other("gone"),
                    ));
                }
                buf.fill(1);
                Ok(())
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("gone"), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}
