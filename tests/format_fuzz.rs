//! Fuzz-style robustness of the file reader, the block index and the manifest
//! parser: thousands of random mutations of small built tablebases (bit
//! flips, overwritten and zeroed ranges, truncation, junk appended, blocks
//! swapped or copied, header and index fields rewritten and the trailer
//! re-sealed, manifest bytes, numbers, field names and values changed). After
//! each one the tablebase is opened, probed, verified and summarised, and:
//!
//! - nothing panics (each trial runs under `catch_unwind`; a panic is reported
//!   with the seed, the trial and the mutation);
//! - every probe that succeeds returns the value stored before the mutation;
//! - every error is one of the `FormatError` kinds that fits the damage;
//! - `verify` passes a mutated directory only where the mutation cannot
//!   matter (bytes unchanged, or a manifest that reads the same but for
//!   fields nothing can check: see `unverifiable_fields_only`).
//!
//! The seed is fresh each run and printed; `TBFORGE_FUZZ_SEED=<n>` replays a
//! run, `TBFORGE_FUZZ_TRIAL=<i>` only its trial `i`, and
//! `TBFORGE_FUZZ_ITERS=<n>` sets the number of trials (default
//! `DEFAULT_ITERS`, about 10 s on a 2-core box in the dev profile).
#![cfg(feature = "build")]

use crate::common;

use common::reseal;
use std::collections::BTreeMap;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;
use tbforge::format::{
    info, read_manifest, render_info_text, write_manifest, write_partition_file_with, FormatError,
    Manifest, Stored, TableFile, ValueEncoding, WriteOptions, HEADER_LEN, INDEX_ENTRY_LEN,
    MANIFEST_NAME, TRAILER_LEN,
};
use tbforge::hash::SplitMix64;
use tbforge::probe::{probe_text_in, OpenOptions, ProbeReport, Tablebase};
use tbforge::registry::{open_game, AnyGame, GameVisitor};
use tbforge::solve::{build_game, BuildOptions, BUILD_LOG};
use tbforge::verify::{render_verify_text, verify_dir};
use tbforge::{Error, Game, GameKind, PartitionId, Rank};

/// Trials per run unless `TBFORGE_FUZZ_ITERS` says.
const DEFAULT_ITERS: u64 = 2500;

// ---------------------------------------------------------------- random numbers

/// splitmix64: small, fast, and every seed gives a full-period stream.
struct Rng(SplitMix64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next() % n == 0
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The seed of trial `i` of a run seeded `seed`.
fn trial_seed(seed: u64, i: u64) -> u64 {
    Rng::new(seed ^ i.wrapping_mul(0xd1b5_4a32_d192_ed03)).next()
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    Rng::new(nanos ^ (u64::from(std::process::id()) << 32)).next()
}

// ---------------------------------------------------------------- fixtures

/// A small built tablebase, its good bytes and every value it stores.
struct Fixture {
    label: &'static str,
    encoding: ValueEncoding,
    /// The working directory: mutated and restored trial by trial.
    dir: tempfile::TempDir,
    /// Good bytes of every file in it (`.tbf` files and the manifest).
    files: BTreeMap<String, Vec<u8>>,
    manifest: Manifest,
    /// Every file's stored codes, as `TableFile::read_all_codes` gives them.
    codes: BTreeMap<String, Vec<u8>>,
    /// Every stored position, by partition and rank.
    expected: BTreeMap<PartitionId, Vec<Stored>>,
    /// Positions as text and what the game-level probe says about them.
    reports: Vec<(String, ProbeReport)>,
    /// `.tbf` file names, for picking targets.
    tbf_names: Vec<String>,
}

impl Fixture {
    fn partition_of(&self, file: &str) -> Option<PartitionId> {
        self.manifest
            .files
            .iter()
            .find(|f| f.name == file)
            .map(|f| f.partition)
    }
}

struct Build(BuildOptions);
impl GameVisitor for Build {
    type Output = tbforge::Result<tbforge::solve::BuildReport>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        build_game(game, &self.0)
    }
}

/// A few legal positions of every partition, as text.
struct SomePositions(usize);
impl GameVisitor for SomePositions {
    type Output = Vec<String>;
    fn visit<G: Game>(self, game: &G) -> Vec<String> {
        let mut out = Vec::new();
        for p in game.partitions() {
            let size = game.partition_size(p);
            let step = (size / self.0 as u64).max(1);
            let mut found = 0;
            let mut r = 0;
            while r < size && found < self.0 {
                if let Some(pos) = game.unrank(p, Rank(r)) {
                    out.push(game.format_position(&pos));
                    found += 1;
                }
                r += step;
            }
        }
        out
    }
}

/// The value bytes that encode back to `codes` (wdl2: one value per code).
fn values_of_codes(kind: GameKind, encoding: ValueEncoding, codes: &[u8]) -> Vec<u8> {
    match encoding {
        ValueEncoding::Byte => codes.to_vec(),
        ValueEncoding::Wdl2 => codes
            .iter()
            .map(|&c| match (kind, c) {
                (_, 0) => 0,
                (_, 1) => 1,
                (GameKind::TwoPlayer, 2) => 3, // a win in 1
                (GameKind::TwoPlayer, _) => 2, // a loss in 0
                (GameKind::Puzzle, _) => 2,    // the goal
            })
            .collect(),
    }
}

/// Builds `name` with `params` through the library; with `block_positions`
/// every file is rewritten in blocks of that many positions (many blocks
/// from small partitions) and the manifest updated.
fn fixture(
    label: &'static str,
    name: &str,
    params: &[(&str, &str)],
    encoding: ValueEncoding,
    block_positions: Option<u32>,
) -> Fixture {
    let raw: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let game: AnyGame = open_game(name, &raw).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(dir.path());
    opts.encoding = encoding;
    game.visit(Build(opts)).unwrap();
    // The build log is for people; no reader looks at it.
    let _ = fs::remove_file(dir.path().join(BUILD_LOG));
    let mut manifest = read_manifest(dir.path()).unwrap();
    if let Some(bp) = block_positions {
        let info = game.info();
        for e in &mut manifest.files {
            let path = dir.path().join(&e.name);
            let codes = TableFile::open_read(&path)
                .unwrap()
                .read_all_codes()
                .unwrap();
            let values = values_of_codes(info.kind, encoding, &codes);
            let opts = WriteOptions {
                block_positions: Some(bp),
                ..WriteOptions::default()
            };
            let sum =
                write_partition_file_with(&path, &info, e.partition, encoding, &values, &opts)
                    .unwrap();
            e.bytes = sum.bytes;
            e.crc32 = sum.crc32;
        }
        write_manifest(dir.path(), &manifest).unwrap();
    }
    let report = verify_dir(dir.path(), true).unwrap();
    assert!(report.ok, "{label}: {}", render_verify_text(&report));

    let mut files = BTreeMap::new();
    let mut codes = BTreeMap::new();
    for e in fs::read_dir(dir.path()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let bytes = fs::read(e.path()).unwrap();
        if name != MANIFEST_NAME {
            let all = TableFile::from_bytes(&name, bytes.clone())
                .unwrap()
                .read_all_codes()
                .unwrap();
            codes.insert(name.clone(), all);
        }
        files.insert(name, bytes);
    }
    let tb = Tablebase::open(dir.path()).unwrap();
    let mut expected = BTreeMap::new();
    for f in &manifest.files {
        let v: Vec<Stored> = (0..f.index_size)
            .map(|r| tb.probe_stored(f.partition, Rank(r)).unwrap())
            .collect();
        expected.insert(f.partition, v);
    }
    let reports = game
        .visit(SomePositions(3))
        .into_iter()
        .filter_map(|text| probe_text_in(&tb, &text).ok().map(|r| (text, r)))
        .collect::<Vec<_>>();
    assert!(!reports.is_empty(), "{label}: no position probes");
    let tbf_names = manifest.files.iter().map(|f| f.name.clone()).collect();
    Fixture {
        label,
        encoding,
        dir,
        files,
        manifest,
        codes,
        expected,
        reports,
        tbf_names,
    }
}

/// Built once per test binary (builds fsync every file: slow on a shared disk).
/// Each fixture sits behind a lock: trials mutate its directory.
fn fixtures() -> &'static [Mutex<Fixture>] {
    static F: OnceLock<Vec<Mutex<Fixture>>> = OnceLock::new();
    F.get_or_init(|| {
        vec![
            // Ten files of 1 to 14 blocks, one byte per position.
            Mutex::new(fixture(
                "tictactoe byte/64",
                "tictactoe",
                &[],
                ValueEncoding::Byte,
                Some(64),
            )),
            // Two bits per position with a partial last byte in some blocks.
            Mutex::new(fixture(
                "nim 2,3,4 wdl2/12",
                "nim",
                &[("heaps", "2,3,4")],
                ValueEncoding::Wdl2,
                Some(12),
            )),
            // The writer's own block size: one block per file.
            Mutex::new(fixture(
                "connect4 4x3 byte",
                "connect4",
                &[("width", "4"), ("height", "3")],
                ValueEncoding::Byte,
                None,
            )),
            // A puzzle: the codes read as goal distances.
            Mutex::new(fixture(
                "pancake 5 byte/16",
                "pancake",
                &[("n", "5")],
                ValueEncoding::Byte,
                Some(16),
            )),
        ]
    })
}

// ---------------------------------------------------------------- mutations

/// One mutated file of a fixture.
#[derive(Clone, Debug)]
struct Mutation {
    /// The file's name in the directory.
    target: String,
    /// Its mutated bytes.
    bytes: Vec<u8>,
    /// What was done, to reproduce it by hand.
    what: String,
    /// A self-consistent file: the header or index rewritten and the trailer
    /// checksum re-sealed over it (a broken or hostile writer), or another
    /// good file of the tablebase. The reader alone may accept it; probes
    /// must still give the original values or errors, and verify must fail.
    resealed: bool,
}

/// The layout of a good file: where the index, the blocks and the trailer lie.
struct Layout {
    data_offset: usize,
    blocks: Vec<(usize, usize)>,
    len: usize,
}

fn layout(bytes: &[u8]) -> Layout {
    let f = TableFile::from_bytes("x", bytes.to_vec()).unwrap();
    Layout {
        data_offset: f.header().data_offset as usize,
        blocks: f
            .index()
            .iter()
            .map(|r| (r.offset as usize, r.len as usize))
            .collect(),
        len: bytes.len(),
    }
}

/// A random position in a random non-empty region (header, index, blocks, trailer).
fn pick_offset(rng: &mut Rng, l: &Layout) -> (usize, &'static str) {
    let regions = [
        (0, HEADER_LEN, "header"),
        (HEADER_LEN, l.data_offset, "index"),
        (l.data_offset, l.len - TRAILER_LEN, "blocks"),
        (l.len - TRAILER_LEN, l.len, "trailer"),
    ];
    loop {
        let &(lo, hi, name) = rng.pick(&regions);
        if hi > lo {
            return (rng.range(lo, hi - 1), name);
        }
    }
}

/// Interesting values of a field `width` bytes wide that held `orig`.
fn interesting(rng: &mut Rng, orig: u64, width: usize) -> u64 {
    let max = if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    };
    let v = match rng.below(14) {
        0 => 0,
        1 => 1,
        2 => orig.wrapping_add(1),
        3 => orig.wrapping_sub(1),
        4 => orig.wrapping_mul(2),
        5 => orig / 2,
        6 => u64::from(u32::MAX),
        7 => u64::MAX,
        8 => 1 << 24,
        9 => (1 << 24) + 4,
        10 => 1 << 32,
        11 => 1 << 63,
        12 => orig ^ (1 << rng.below(8 * width)),
        _ => rng.next(),
    };
    v & max
}

fn put(bytes: &mut [u8], at: usize, width: usize, v: u64) {
    bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

fn get(bytes: &[u8], at: usize, width: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..width].copy_from_slice(&bytes[at..at + width]);
    u64::from_le_bytes(b)
}

/// A file from `good`'s header with the blocks `order` (indices into `l.blocks`),
/// its index, file length and trailer checksum made consistent.
fn rebuild(good: &[u8], l: &Layout, order: &[usize]) -> Vec<u8> {
    let mut out = good[..l.data_offset].to_vec();
    let mut offset = l.data_offset as u64;
    let mut data = Vec::new();
    for (slot, &b) in order.iter().enumerate() {
        let (start, len) = l.blocks[b];
        let block = &good[start..start + len];
        let e = HEADER_LEN + INDEX_ENTRY_LEN * slot;
        put(&mut out, e, 8, offset);
        put(&mut out, e + 8, 4, len as u64);
        put(&mut out, e + 12, 4, u64::from(crc32fast::hash(block)));
        offset += len as u64;
        data.extend_from_slice(block);
    }
    out.extend_from_slice(&data);
    out.extend_from_slice(&good[l.len - TRAILER_LEN..]);
    let n = out.len() as u64;
    put(&mut out, 104, 8, n);
    reseal(&mut out);
    out
}

/// Header fields: (offset, width, name).
const HEADER_FIELDS: [(usize, usize, &str); 17] = [
    (8, 4, "format_version"),
    (12, 4, "header_len"),
    (16, 1, "game[0]"),
    (30, 1, "game[14]"),
    (48, 8, "param_hash"),
    (56, 4, "partition"),
    (60, 1, "encoding"),
    (61, 1, "kind"),
    (62, 2, "reserved"),
    (64, 8, "index_size"),
    (72, 4, "block_positions"),
    (76, 4, "reserved"),
    (80, 8, "block_count"),
    (88, 8, "index_offset"),
    (96, 8, "data_offset"),
    (104, 8, "file_len"),
    (112, 8, "reserved"),
];

/// One random change of a good `.tbf` file (no re-sealing). Returns a description.
fn damage_once(rng: &mut Rng, b: &mut Vec<u8>, l: &Layout) -> String {
    match rng.below(7) {
        0 => {
            let (at, region) = pick_offset(rng, l);
            let bit = rng.below(8);
            if at < b.len() {
                b[at] ^= 1 << bit;
            }
            format!("flip bit {bit} of byte {at} ({region})")
        }
        1 => {
            let (at, region) = pick_offset(rng, l);
            let n = rng.range(1, 8);
            let new: Vec<u8> = (0..n).map(|_| rng.byte()).collect();
            for (i, &x) in new.iter().enumerate() {
                if let Some(y) = b.get_mut(at + i) {
                    *y = x;
                }
            }
            format!("overwrite bytes {at}.. ({region}) with {new:02x?}")
        }
        2 => {
            let (at, region) = pick_offset(rng, l);
            let n = rng.range(1, 64);
            let end = (at + n).min(b.len());
            if at < end {
                b[at..end].fill(0);
            }
            format!("zero bytes {at}..{end} ({region})")
        }
        3 => {
            let (at, region) = pick_offset(rng, l);
            let x = rng.byte();
            if at < b.len() {
                b[at] = x;
            }
            format!("set byte {at} ({region}) to {x:#04x}")
        }
        4 => {
            // Near a boundary half the time.
            let cut = if rng.one_in(2) {
                let marks = [
                    0,
                    8,
                    HEADER_LEN,
                    l.data_offset,
                    l.len - TRAILER_LEN,
                    l.len - 8,
                    l.len,
                ];
                let m = *rng.pick(&marks) as i64 + rng.range(0, 4) as i64 - 2;
                m.clamp(0, b.len() as i64 - 1) as usize
            } else {
                rng.below(b.len())
            };
            b.truncate(cut);
            format!("truncate to {cut} bytes")
        }
        5 => {
            let n = rng.range(1, 64);
            let zeros = rng.one_in(2);
            for _ in 0..n {
                let x = if zeros { 0 } else { rng.byte() };
                b.push(x);
            }
            format!("append {n} {} bytes", if zeros { "zero" } else { "random" })
        }
        _ => {
            // Two blocks' bytes exchanged where they lie; the index unchanged.
            if l.blocks.len() < 2 || b.len() != l.len {
                let at = rng.below(b.len().max(1));
                if at < b.len() {
                    b[at] ^= 0x40;
                }
                return format!("xor byte {at} with 0x40");
            }
            let i = rng.below(l.blocks.len());
            let j = (i + 1 + rng.below(l.blocks.len() - 1)) % l.blocks.len();
            let order: Vec<usize> = (0..l.blocks.len())
                .map(|k| {
                    if k == i {
                        j
                    } else if k == j {
                        i
                    } else {
                        k
                    }
                })
                .collect();
            let mut data = Vec::new();
            for &k in &order {
                let (s, n) = l.blocks[k];
                data.extend_from_slice(&b[s..s + n]);
            }
            b[l.data_offset..l.len - TRAILER_LEN].copy_from_slice(&data);
            format!("swap the bytes of blocks {i} and {j} (index unchanged)")
        }
    }
}

/// A random mutation of `.tbf` file `name`.
fn mutate_tbf(rng: &mut Rng, fx: &Fixture, name: &str) -> Mutation {
    let good = &fx.files[name];
    let l = layout(good);
    let mut b = good.clone();
    let mut resealed = false;
    let what = match rng.below(10) {
        0..=4 => damage_once(rng, &mut b, &l),
        5 => {
            let n = rng.range(2, 4);
            let mut parts = Vec::new();
            for _ in 0..n {
                if b.is_empty() {
                    break;
                }
                parts.push(damage_once(rng, &mut b, &l));
            }
            parts.join("; then ")
        }
        6 => {
            // Another file of the same tablebase under this name.
            let other = rng.pick(&fx.tbf_names).clone();
            b = fx.files[&other].clone();
            resealed = true; // a good file, just not this one
            format!("replaced by the bytes of {other}")
        }
        7 => {
            resealed = true;
            let n = l.blocks.len();
            if n < 2 {
                let (at, width, field) = *rng.pick(&HEADER_FIELDS);
                let v = interesting(rng, get(&b, at, width), width);
                put(&mut b, at, width, v);
                reseal(&mut b);
                return Mutation {
                    target: name.to_string(),
                    bytes: b,
                    what: format!("header {field} set to {v} and re-sealed"),
                    resealed,
                };
            }
            let i = rng.below(n);
            let j = (i + 1 + rng.below(n - 1)) % n;
            let mut order: Vec<usize> = (0..n).collect();
            if rng.one_in(2) {
                order.swap(i, j);
                b = rebuild(good, &l, &order);
                format!("blocks {i} and {j} swapped, index and trailer re-sealed")
            } else {
                order[j] = i;
                b = rebuild(good, &l, &order);
                format!("block {j} replaced by a copy of block {i}, index, length and trailer re-sealed")
            }
        }
        8 => {
            resealed = true;
            let (at, width, field) = *rng.pick(&HEADER_FIELDS);
            let v = interesting(rng, get(&b, at, width), width);
            put(&mut b, at, width, v);
            reseal(&mut b);
            format!("header {field} (byte {at}) set to {v:#x} and re-sealed")
        }
        _ => {
            resealed = true;
            let e = rng.below(l.blocks.len().max(1));
            let (field_at, width, field) =
                *rng.pick(&[(0, 8, "offset"), (8, 4, "len"), (12, 4, "crc32")]);
            let at = HEADER_LEN + INDEX_ENTRY_LEN * e + field_at;
            if at + width <= l.data_offset {
                let v = interesting(rng, get(&b, at, width), width);
                put(&mut b, at, width, v);
                reseal(&mut b);
                format!("index entry {e} {field} set to {v:#x} and re-sealed")
            } else {
                b.truncate(l.data_offset);
                "cut after the index (no blocks at all)".into()
            }
        }
    };
    Mutation {
        target: name.to_string(),
        bytes: b,
        what,
        resealed,
    }
}

/// Field names of the manifest below its top level (totals, files, params),
/// for renaming one into another together with [`common::MANIFEST_FIELDS`]:
/// the counts by outcome, then the other fields of totals and file entries,
/// then a parameter.
const NESTED_MANIFEST_KEYS: [&str; 9] = [
    "reachable",
    "max_distance",
    "name",
    "partition",
    "partition_name",
    "longest_win",
    "bytes",
    "crc32",
    "heaps",
];

/// Spans `(start, end)` of maximal digit runs in `text`.
fn digit_runs(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let s = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Spans of `"key":` names (the quotes excluded).
fn key_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'"' {
            let s = i + 1;
            let mut e = s;
            while e < text.len() && text[e] != b'"' {
                e += 1;
            }
            if e + 1 < text.len() && text[e + 1] == b':' {
                out.push((s, e));
            }
            i = e + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn splice(text: &[u8], (s, e): (usize, usize), with: &[u8]) -> Vec<u8> {
    let mut out = text[..s].to_vec();
    out.extend_from_slice(with);
    out.extend_from_slice(&text[e..]);
    out
}

/// A random JSON value for a leaf.
fn random_json(rng: &mut Rng, old: &serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    match rng.below(14) {
        0 => json!(null),
        1 => json!(true),
        2 => json!(0),
        3 => json!(1),
        4 => json!(-1),
        5 => json!(u64::MAX),
        6 => json!(u64::from(u32::MAX) + 1),
        7 => json!(1.5),
        8 => json!(""),
        9 => json!("marks5.tbf"),
        10 => json!([]),
        11 => json!({}),
        12 => match old {
            serde_json::Value::Number(n) => json!(n.as_u64().unwrap_or(0).wrapping_add(1)),
            serde_json::Value::String(s) => json!(format!("{s}x")),
            other => other.clone(),
        },
        _ => json!(rng.next() % 100_000),
    }
}

/// Every path to a value in `v`, as a list of object keys and array indices.
fn json_paths(v: &serde_json::Value, here: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(here.clone());
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                here.push(k.clone());
                json_paths(x, here, out);
                here.pop();
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                here.push(i.to_string());
                json_paths(x, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn json_at<'a>(v: &'a mut serde_json::Value, path: &[String]) -> &'a mut serde_json::Value {
    path.iter().fold(v, |v, k| match v {
        serde_json::Value::Object(m) => m.get_mut(k).unwrap(),
        serde_json::Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
        _ => unreachable!("paths lead through containers"),
    })
}

fn pretty(v: &serde_json::Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).unwrap();
    s.push('\n');
    s.into_bytes()
}

/// A random mutation of manifest.json.
fn mutate_manifest(rng: &mut Rng, fx: &Fixture) -> Mutation {
    let good = &fx.files[MANIFEST_NAME];
    let n = good.len();
    let mut b = good.clone();
    let what = match rng.below(13) {
        11 => {
            // Another game: a parameter's value changed, one dropped, one added.
            let mut v: serde_json::Value = serde_json::from_slice(good).unwrap();
            let params = v["params"].as_object_mut().unwrap();
            let keys: Vec<String> = params.keys().cloned().collect();
            let what = if keys.is_empty() || rng.one_in(4) {
                params.insert("size".into(), "3".into());
                "params gained size=3".to_string()
            } else {
                let key = rng.pick(&keys).clone();
                if rng.one_in(4) {
                    params.remove(&key);
                    format!("params lost `{key}`")
                } else {
                    let old = params[&key].as_str().unwrap().to_string();
                    let mut new = old.clone().into_bytes();
                    let at = rng.below(new.len());
                    if new[at].is_ascii_digit() {
                        new[at] = b'1' + (new[at] - b'0' + rng.range(0, 3) as u8) % 6;
                    }
                    let new = String::from_utf8(new).unwrap();
                    params.insert(key.clone(), new.clone().into());
                    format!("params `{key}` changed from `{old}` to `{new}`")
                }
            };
            b = pretty(&v);
            what
        }
        12 => {
            // Two whole file entries exchanged: solving order changed.
            let mut v: serde_json::Value = serde_json::from_slice(good).unwrap();
            let files = v["files"].as_array_mut().unwrap();
            let i = rng.below(files.len());
            let j = rng.below(files.len());
            files.swap(i, j);
            b = pretty(&v);
            format!("files[{i}] and files[{j}] exchanged")
        }
        0 => {
            let k = rng.range(1, 3);
            let mut parts = Vec::new();
            for _ in 0..k {
                let at = rng.below(n);
                let x = match rng.below(3) {
                    0 => rng.byte(),
                    1 => rng.range(0x20, 0x7e) as u8,
                    _ => *rng.pick(b"{}[]\":,0123456789-.eE \n\\tnul"),
                };
                b[at] = x;
                parts.push(format!("byte {at} set to {x:#04x}"));
            }
            parts.join(", ")
        }
        1 => {
            let cut = rng.below(n);
            b.truncate(cut);
            format!("truncate to {cut} bytes")
        }
        2 => {
            let at = rng.below(n);
            let end = (at + rng.range(1, 20)).min(n);
            b.drain(at..end);
            format!("delete bytes {at}..{end}")
        }
        3 => {
            // Whole lines out.
            let lines: Vec<&[u8]> = good.split_inclusive(|&c| c == b'\n').collect();
            let at = rng.below(lines.len());
            let k = rng.range(1, 3).min(lines.len() - at);
            b = lines[..at]
                .iter()
                .chain(&lines[at + k..])
                .flat_map(|l| l.iter().copied())
                .collect();
            format!("delete lines {}..{}", at + 1, at + k + 1)
        }
        4 | 5 => {
            let runs = digit_runs(good);
            let span = *rng.pick(&runs);
            let old = std::str::from_utf8(&good[span.0..span.1]).unwrap();
            let num: u64 = old.parse().unwrap_or(0);
            let new = match rng.below(12) {
                0 => num.wrapping_add(1).to_string(),
                1 => num.saturating_sub(1).to_string(),
                2 => "0".into(),
                3 => u32::MAX.to_string(),
                4 => (u64::from(u32::MAX) + 1).to_string(),
                5 => u64::MAX.to_string(),
                6 => "18446744073709551616".into(),
                7 => format!("-{old}"),
                8 => format!("{old}.0"),
                9 => format!("{old}e0"),
                10 => format!("0{old}"),
                _ => (rng.next() % 1_000_000).to_string(),
            };
            b = splice(good, span, new.as_bytes());
            format!("number `{old}` at byte {} changed to `{new}`", span.0)
        }
        6 => {
            let keys = key_spans(good);
            let span = *rng.pick(&keys);
            let old = std::str::from_utf8(&good[span.0..span.1]).unwrap();
            let new = if rng.one_in(2) {
                let keys: Vec<&str> = common::MANIFEST_FIELDS
                    .iter()
                    .chain(&tbforge::format::Tally::NAMES)
                    .chain(&NESTED_MANIFEST_KEYS)
                    .copied()
                    .collect();
                rng.pick(&keys).to_string()
            } else {
                let mut k = old.as_bytes().to_vec();
                let at = rng.below(k.len().max(1));
                if at < k.len() {
                    k[at] = rng.range(b'a' as usize, b'z' as usize) as u8;
                }
                String::from_utf8(k).unwrap()
            };
            b = splice(good, span, new.as_bytes());
            format!("field name `{old}` at byte {} changed to `{new}`", span.0)
        }
        7 => {
            // Whitespace where JSON allows it: the manifest reads the same.
            let spots: Vec<usize> = (0..n)
                .filter(|&i| matches!(good[i], b',' | b':' | b'{' | b'[' | b'\n'))
                .collect();
            let at = *rng.pick(&spots) + 1;
            let ws = *rng.pick(&[&b" "[..], b"\t", b"\n", b"\r\n", b"   "]);
            b = splice(good, (at, at), ws);
            format!("whitespace {ws:?} inserted at byte {at}")
        }
        8 => {
            // The same key's values of two files exchanged.
            let mut v: serde_json::Value = serde_json::from_slice(good).unwrap();
            let files = v["files"].as_array_mut().unwrap();
            if files.len() < 2 {
                files.push(files[0].clone());
                b = pretty(&v);
                "files[0] listed twice".into()
            } else {
                let i = rng.below(files.len());
                let j = (i + 1 + rng.below(files.len() - 1)) % files.len();
                let keys: Vec<String> = files[i].as_object().unwrap().keys().cloned().collect();
                let key = rng.pick(&keys).clone();
                let a = files[i][&key].clone();
                files[i][&key] = files[j][&key].clone();
                files[j][&key] = a;
                b = pretty(&v);
                format!("`{key}` of files[{i}] and files[{j}] exchanged")
            }
        }
        9 => {
            // An array element or an object field removed, or an element repeated.
            let mut v: serde_json::Value = serde_json::from_slice(good).unwrap();
            let mut paths = Vec::new();
            json_paths(&v, &mut Vec::new(), &mut paths);
            paths.retain(|p| !p.is_empty());
            let path = rng.pick(&paths).clone();
            let (last, parent) = path.split_last().unwrap();
            let dup = rng.one_in(3);
            match json_at(&mut v, parent) {
                serde_json::Value::Object(m) => {
                    m.remove(last);
                }
                serde_json::Value::Array(a) => {
                    let i: usize = last.parse().unwrap();
                    if dup {
                        let x = a[i].clone();
                        a.insert(i, x);
                    } else {
                        a.remove(i);
                    }
                }
                _ => unreachable!(),
            }
            b = pretty(&v);
            format!(
                "{} `{}`",
                if dup { "repeated" } else { "removed" },
                path.join(".")
            )
        }
        _ => {
            // A value replaced by one of another type or size.
            let mut v: serde_json::Value = serde_json::from_slice(good).unwrap();
            let mut paths = Vec::new();
            json_paths(&v, &mut Vec::new(), &mut paths);
            let path = rng.pick(&paths).clone();
            let slot = json_at(&mut v, &path);
            let new = random_json(rng, slot);
            *slot = new.clone();
            b = pretty(&v);
            format!("`{}` set to {new}", path.join("."))
        }
    };
    Mutation {
        target: MANIFEST_NAME.to_string(),
        bytes: b,
        what,
        resealed: false,
    }
}

// ---------------------------------------------------------------- checks

/// Writes `bytes` as `path` (unlinked first: truncating in place makes ext4
/// flush, slowly).
fn put_file(path: &Path, bytes: &[u8]) {
    let _ = fs::remove_file(path);
    fs::write(path, bytes).unwrap();
}

/// `got` reads as the good manifest, except in fields that no check short
/// of solving the game again can confirm: the tbforge release that wrote it;
/// in WDL-only tablebases the distances (the files hold none to count them
/// from); and how the reachable positions split over the files (a forward
/// search would tell), within what verify does check: present where the
/// layers are, at most the file's legal positions, summing to the total.
fn unverifiable_fields_only(fx: &Fixture, got: &Manifest) -> bool {
    if !totals_are_the_sums(got) {
        return *got == fx.manifest;
    }
    let mut g = got.clone();
    g.tbforge_version = fx.manifest.tbforge_version.clone();
    if g.files.len() == fx.manifest.files.len() {
        for (a, b) in g.files.iter_mut().zip(&fx.manifest.files) {
            if fx.encoding == ValueEncoding::Wdl2 {
                a.longest_win = b.longest_win;
                a.max_distance = b.max_distance;
            }
            let legal = b.class_wins + b.class_draws + b.class_losses;
            if a.reachable.is_some() == b.reachable.is_some() && a.reachable.unwrap_or(0) <= legal {
                a.reachable = b.reachable;
            }
        }
    }
    g == fx.manifest
}

/// Whether the manifest's totals are the sums over its files (worked out
/// here, apart from the library's code).
fn totals_are_the_sums(m: &Manifest) -> bool {
    let sum = |field: fn(&tbforge::format::FileEntry) -> u64| {
        m.files
            .iter()
            .try_fold(0u64, |a, f| a.checked_add(field(f)))
    };
    let reachable = m
        .files
        .iter()
        .try_fold(Some(0u64), |a, f| match (a, f.reachable) {
            (Some(a), Some(r)) => a.checked_add(r).map(Some),
            _ => Some(None),
        })
        .map(|r| r.filter(|_| !m.files.is_empty()));
    let t = &m.totals;
    sum(|f| f.index_size) == Some(t.index_size)
        && sum(|f| f.positions) == Some(t.positions)
        && sum(|f| f.wins) == Some(t.wins)
        && sum(|f| f.draws) == Some(t.draws)
        && sum(|f| f.losses) == Some(t.losses)
        && sum(|f| f.classes) == Some(t.classes)
        && sum(|f| f.class_wins) == Some(t.class_wins)
        && sum(|f| f.class_draws) == Some(t.class_draws)
        && sum(|f| f.class_losses) == Some(t.class_losses)
        && sum(|f| f.illegal) == Some(t.illegal)
        && reachable == Some(t.reachable)
        && m.files.iter().filter_map(|f| f.max_distance).max() == t.max_distance
}

/// The paths where two JSON values differ (the first few).
fn json_diff(a: &serde_json::Value, b: &serde_json::Value, here: &str, out: &mut Vec<String>) {
    use serde_json::Value as V;
    if out.len() >= 4 {
        return;
    }
    match (a, b) {
        (V::Object(x), V::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => json_diff(p, q, &format!("{here}.{k}"), out),
                    (p, q) => out.push(format!("{here}.{k}: {p:?} / {q:?}")),
                }
            }
        }
        (V::Array(x), V::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                json_diff(p, q, &format!("{here}[{i}]"), out);
            }
        }
        _ if a != b => out.push(format!("{here}: {a} / {b}")),
        _ => {}
    }
}

/// Whether `e` is an error a probe may give for this mutation.
fn allowed_probe_error(m: &Mutation, e: &FormatError) -> bool {
    let manifest = m.target == MANIFEST_NAME;
    match e {
        FormatError::Corrupt { file, .. } => manifest || *file == m.target,
        FormatError::Mismatch { .. } | FormatError::Version { .. } => true,
        // A manifest can lose a partition or name a file that is not there.
        FormatError::NotInTablebase { .. } => manifest,
        FormatError::Io(e) => manifest && e.source.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// Ranks to probe in a partition of `size`: all of a small one, else a spread
/// with both ends, plus a few at random.
fn ranks(rng: &mut Rng, size: u64, all_up_to: u64, spread: u64) -> Vec<u64> {
    if size == 0 {
        return Vec::new();
    }
    if size <= all_up_to {
        return (0..size).collect();
    }
    let step = (size / spread).max(1);
    let mut r: Vec<u64> = (0..size).step_by(step as usize).collect();
    r.push(size - 1);
    r.extend((0..16).map(|_| rng.next() % size));
    r
}

/// Everything a user or engine can do with the directory, checked; returns the failures.
fn check(fx: &Fixture, m: &Mutation, rng: &mut Rng, deep: bool, mapped: bool) -> Vec<String> {
    let mut bad = Vec::new();
    let dir = fx.dir.path();
    let is_manifest = m.target == MANIFEST_NAME;
    let changed = m.bytes != fx.files[&m.target];

    // The manifest parser.
    let parsed = read_manifest(dir);
    match &parsed {
        Ok(_) => {}
        Err(FormatError::Manifest { .. } | FormatError::Version { .. }) if is_manifest => {}
        Err(e) => bad.push(format!("read_manifest: unexpected error {e:?}")),
    }

    // The file reader on its own, from memory and from disk.
    if !is_manifest {
        let alone = [
            TableFile::from_bytes(&m.target, m.bytes.clone()).and_then(|f| f.read_all_codes()),
            TableFile::open_read(&dir.join(&m.target)).and_then(|f| f.read_all_codes()),
        ];
        for r in alone {
            match r {
                Ok(codes) => {
                    if changed && !m.resealed {
                        bad.push("the reader accepted a damaged file".into());
                    } else if !changed && codes != fx.codes[&m.target] {
                        bad.push("the reader read other codes from unchanged bytes".into());
                    }
                }
                Err(FormatError::Corrupt { ref file, .. }) if *file == m.target => {}
                Err(FormatError::Version { ref file, .. }) if *file == m.target => {}
                Err(e) if !changed => bad.push(format!("the reader refused good bytes: {e}")),
                Err(e) => bad.push(format!("the reader: unexpected error {e:?}")),
            }
        }
    }

    // Probes: a value or a fitting error, never another value.
    let options = OpenOptions {
        cache_blocks: rng.below(3) * 8,
    };
    let tb = if mapped {
        // SAFETY: no file of the directory changes until `tb` is dropped.
        unsafe { Tablebase::open_mapped(dir, options) }
    } else {
        Tablebase::open_with(dir, options)
    };
    match tb {
        Err(FormatError::Manifest { .. } | FormatError::Version { .. }) if is_manifest => {}
        Err(e) => bad.push(format!("Tablebase::open: unexpected error {e:?}")),
        Ok(tb) => {
            let target_partition = fx.partition_of(&m.target);
            let mut target_errors = 0;
            'partitions: for (&p, want) in &fx.expected {
                let size = want.len() as u64;
                let rs = if Some(p) == target_partition {
                    ranks(rng, size, 4096, 2048)
                } else {
                    ranks(rng, size, 0, 24)
                };
                for r in rs {
                    match tb.probe_stored(p, Rank(r)) {
                        Ok(got) if got == want[r as usize] => {}
                        Ok(got) => {
                            bad.push(format!(
                                "WRONG VALUE: partition {p} rank {r} reads {got:?}, stored was {:?}",
                                want[r as usize]
                            ));
                            break 'partitions;
                        }
                        Err(e) => {
                            if Some(p) == target_partition {
                                target_errors += 1;
                            }
                            if !allowed_probe_error(m, &e) {
                                bad.push(format!(
                                    "probe of partition {p} rank {r}: unexpected error {e:?}"
                                ));
                                break 'partitions;
                            }
                        }
                    }
                }
            }
            if changed && !is_manifest && target_errors == 0 {
                bad.push(format!("every probe of the changed {} succeeded", m.target));
            }
            for (text, want) in &fx.reports {
                match probe_text_in(&tb, text) {
                    Ok(got) if got == *want => {}
                    Ok(got) => bad.push(format!(
                        "WRONG VALUE: probe `{text}` gives {got:?}, it gave {want:?}"
                    )),
                    Err(Error::Format(e)) if allowed_probe_error(m, &e) => {}
                    // The manifest's game or parameters can change.
                    Err(
                        Error::UnknownGame(_)
                        | Error::BadParam { .. }
                        | Error::BadPosition { .. }
                        | Error::Hash(_),
                    ) if is_manifest => {}
                    Err(e) => bad.push(format!("probe `{text}`: unexpected error {e:?}")),
                }
            }
        }
    }

    // Verify: fails on any change that matters, and names the changed file.
    match verify_dir(dir, deep) {
        Err(e) => bad.push(format!("verify: Err({e:?}) for a directory that exists")),
        Ok(report) => {
            let text = render_verify_text(&report);
            if !changed {
                if !report.ok {
                    bad.push(format!("verify failed an unchanged directory:\n{text}"));
                }
            } else if is_manifest {
                let same = matches!(&parsed, Ok(got) if unverifiable_fields_only(fx, got));
                match &parsed {
                    _ if same && !report.ok => bad.push(format!(
                        "verify failed a manifest that reads the same:\n{text}"
                    )),
                    _ if same => {}
                    Ok(got) if report.ok => {
                        let mut diff = Vec::new();
                        json_diff(
                            &serde_json::to_value(&fx.manifest).unwrap(),
                            &serde_json::to_value(got).unwrap(),
                            "",
                            &mut diff,
                        );
                        bad.push(format!(
                            "verify passed a changed manifest (good / changed): {}",
                            diff.join("; ")
                        ));
                    }
                    Err(_) if report.ok => {
                        bad.push("verify passed a manifest that does not parse".into())
                    }
                    _ => {}
                }
            } else if report.ok {
                bad.push("verify passed a changed file".into());
            } else if !report.files.iter().any(|f| f.name == m.target && !f.ok) {
                bad.push(format!("verify did not name {}:\n{text}", m.target));
            }
        }
    }

    // info, as `tbforge info` prints it.
    match info(dir) {
        Ok(r) => {
            let _ = render_info_text(&r);
        }
        Err(FormatError::Manifest { .. } | FormatError::Version { .. }) if is_manifest => {}
        Err(e) => bad.push(format!("info: unexpected error {e:?}")),
    }
    bad
}

// ---------------------------------------------------------------- the runs

/// Payloads of panics caught in trials, with their place (the hook sees it).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    let place = LAST_PANIC
        .with(|p| p.borrow_mut().take())
        .unwrap_or_default();
    format!("PANIC: {msg} {place}")
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn install_panic_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("at {l}")));
            }
            default(info);
        }));
    });
}

/// Runs one mutation against fixture `fx` (its directory restored after),
/// catching panics; returns the failures, each naming the mutation.
fn run_mutation(
    fx: &Fixture,
    m: &Mutation,
    rng: &mut Rng,
    deep: bool,
    mapped: bool,
) -> Vec<String> {
    install_panic_hook();
    let path = fx.dir.path().join(&m.target);
    put_file(&path, &m.bytes);
    let result = catch_unwind(AssertUnwindSafe(|| check(fx, m, rng, deep, mapped)));
    put_file(&path, &fx.files[&m.target]);
    let failures = match result {
        Ok(f) => f,
        Err(payload) => vec![panic_text(payload.as_ref())],
    };
    failures
        .into_iter()
        .map(|f| {
            format!(
                "{}: {} {}{}{}: {f}",
                fx.label,
                m.target,
                m.what,
                if deep { " [deep verify]" } else { "" },
                if mapped { " [mapped]" } else { "" }
            )
        })
        .collect()
}

#[derive(Default, Debug)]
struct Tally {
    trials: u64,
    tbf: u64,
    manifest: u64,
    resealed: u64,
    unchanged: u64,
    deep: u64,
}

/// Trial `i` of the run seeded `seed`: picks a fixture and a mutation,
/// applies it, checks, restores. Returns the mutation (fixture, file, what
/// was done) and the failures, each naming the seed, the trial and the mutation.
fn run_trial(seed: u64, i: u64, tally: &mut Tally) -> (String, Vec<String>) {
    let fixtures = fixtures();
    let mut rng = Rng::new(trial_seed(seed, i));
    let fx = fixtures[rng.below(fixtures.len())]
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    install_panic_hook();
    let planned = catch_unwind(AssertUnwindSafe(|| {
        if rng.below(10) < 6 {
            let name = rng.pick(&fx.tbf_names).clone();
            mutate_tbf(&mut rng, &fx, &name)
        } else {
            mutate_manifest(&mut rng, &fx)
        }
    }));
    let m = match planned {
        Ok(m) => m,
        Err(p) => {
            let f = format!(
                "seed {seed} trial {i}: the test's own mutation code panicked: {}",
                panic_text(p.as_ref())
            );
            return (String::new(), vec![f]);
        }
    };
    let deep = rng.one_in(12);
    let mapped = rng.one_in(4);
    tally.trials += 1;
    if m.target == MANIFEST_NAME {
        tally.manifest += 1;
    } else {
        tally.tbf += 1;
    }
    tally.resealed += u64::from(m.resealed);
    tally.unchanged += u64::from(m.bytes == fx.files[&m.target]);
    tally.deep += u64::from(deep);
    let what = format!("{}: {} {}", fx.label, m.target, m.what);
    let failures = run_mutation(&fx, &m, &mut rng, deep, mapped)
        .into_iter()
        .map(|f| {
            format!("seed {seed} trial {i} (TBFORGE_FUZZ_SEED={seed} TBFORGE_FUZZ_TRIAL={i}): {f}")
        })
        .collect();
    (what, failures)
}

#[test]
fn random_mutations_never_panic_nor_give_wrong_values() {
    let seed = env_u64("TBFORGE_FUZZ_SEED").unwrap_or_else(fresh_seed);
    let iters = env_u64("TBFORGE_FUZZ_ITERS").unwrap_or(DEFAULT_ITERS);
    let only = env_u64("TBFORGE_FUZZ_TRIAL");
    eprintln!("format_fuzz: seed {seed} ({iters} trials); replay with TBFORGE_FUZZ_SEED={seed}");
    let start = Instant::now();
    fixtures();
    let built = start.elapsed();
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for i in 0..iters {
        if only.is_some_and(|t| t != i) {
            continue;
        }
        failures.extend(run_trial(seed, i, &mut tally).1);
        if failures.len() >= 30 {
            break;
        }
    }
    eprintln!(
        "format_fuzz: {tally:?} in {:.1} s (fixtures built in {:.1} s)",
        start.elapsed().as_secs_f64(),
        built.as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures (seed {seed}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------- regressions

/// Trials of one seed that failed before the fixes made with this test
/// (each draws the mutation named; the explicit tests below pin each bug
/// down without depending on the mutation code).
#[test]
fn trials_that_found_bugs_pass() {
    const SEED: u64 = 2100179667547485377;
    let trials = [
        (
            31,
            "all.tbf blocks 3 and 5 swapped, index and trailer re-sealed",
        ),
        (121, "all.tbf block 4 replaced by a copy of block 6"),
        (
            152,
            "marks4.tbf blocks 2 and 0 swapped, index and trailer re-sealed",
        ),
        // Format 2's manifest fields and zstd level moved the bytes these
        // two draw (they drew `80` at byte 925 and byte 1844 in format 1):
        // the same kinds of damage, a count beyond the sums and a byte that
        // is not UTF-8; the kind is what is pinned.
        (6, "changed to `18446744073709551615`"),
        (83, "manifest.json byte 3816 set to 0x8a"),
        (12, "manifest.json files[9] and files[4] exchanged"),
    ];
    let mut tally = Tally::default();
    for (i, expect) in trials {
        let (what, failures) = run_trial(SEED, i, &mut tally);
        assert!(what.contains(expect), "trial {i} now draws `{what}`");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

fn fixture_labelled(prefix: &str) -> std::sync::MutexGuard<'static, Fixture> {
    fixtures()
        .iter()
        .find(|f| {
            f.lock()
                .unwrap_or_else(|e| e.into_inner())
                .label
                .starts_with(prefix)
        })
        .expect("a fixture of that name")
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the fixture's directory with `changes` written into it, then
/// restores the good files (also when `f` panics).
fn with_changes<R>(fx: &Fixture, changes: &[(&str, Vec<u8>)], f: impl FnOnce(&Path) -> R) -> R {
    for (name, bytes) in changes {
        put_file(&fx.dir.path().join(name), bytes);
    }
    let r = catch_unwind(AssertUnwindSafe(|| f(fx.dir.path())));
    for (name, _) in changes {
        put_file(&fx.dir.path().join(name), &fx.files[*name]);
    }
    r.unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// The generic checks of one explicit mutation, deep verify included.
/// [`assert_mutation_passes`] for a changed manifest.
fn assert_manifest_mutation_passes(fx: &Fixture, bytes: Vec<u8>, what: &str) {
    assert_mutation_passes(
        fx,
        Mutation {
            target: MANIFEST_NAME.into(),
            bytes,
            what: what.into(),
            resealed: false,
        },
    );
}

fn assert_mutation_passes(fx: &Fixture, m: Mutation) {
    for (deep, mapped) in [(false, false), (true, true)] {
        let failures = run_mutation(fx, &m, &mut Rng::new(7), deep, mapped);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

/// What a test does to a manifest, named.
type ManifestEdit = (&'static str, fn(&mut Manifest));

fn manifest_with(fx: &Fixture, edit: impl FnOnce(&mut Manifest)) -> Vec<u8> {
    let mut m = fx.manifest.clone();
    edit(&mut m);
    m.to_json().into_bytes()
}

/// Bug: blocks reordered (or one copied over another) with the index and the
/// trailer checksum rewritten to match passed every check a probe made, and
/// probes returned other positions' values. Fixed in probe::Tablebase::check_file
/// with format::TableFile::whole_file_crc32.
#[test]
fn resealed_block_swaps_are_refused_by_the_probe() {
    let fx = fixture_labelled("pancake");
    let good = &fx.files["all.tbf"];
    let l = layout(good);
    assert!(l.blocks.len() >= 6);
    let swapped = rebuild(good, &l, &[0, 1, 2, 5, 4, 3, 6, 7]);
    let mut copied_order: Vec<usize> = (0..l.blocks.len()).collect();
    copied_order[4] = 6;
    let copied = rebuild(good, &l, &copied_order);
    for (bytes, what) in [
        (swapped, "blocks 3 and 5 swapped"),
        (copied, "block 6 copied over block 4"),
    ] {
        // The file alone is self-consistent...
        assert!(TableFile::from_bytes("all.tbf", bytes.clone())
            .and_then(|f| f.read_all_codes())
            .is_ok());
        with_changes(&fx, &[("all.tbf", bytes.clone())], |dir| {
            let tb = Tablebase::open(dir).unwrap();
            match tb.probe_stored(PartitionId(0), Rank(48)) {
                Err(FormatError::Corrupt {
                    file,
                    block: None,
                    message,
                }) => {
                    assert_eq!(file, "all.tbf");
                    assert!(message.contains("whole-file crc32"), "{message}");
                }
                other => panic!("{what}: {other:?}"),
            }
            assert!(!verify_dir(dir, false).unwrap().ok, "{what}");
        });
        assert_mutation_passes(
            &fx,
            Mutation {
                target: "all.tbf".into(),
                bytes,
                what: what.into(),
                resealed: true,
            },
        );
    }
}

/// Bug: counts near 2^64 in a damaged manifest overflowed the sums in
/// verify (check_manifest, Totals::sum), info and bench: a panic. Fixed in
/// format::Totals::checked_sum, verify::check_manifest, info::info, probe::bench.
#[test]
fn huge_manifest_numbers_do_not_overflow() {
    let fx = fixture_labelled("tictactoe");
    let edits: [ManifestEdit; 7] = [
        ("a file's positions", |m| m.files[2].positions = u64::MAX),
        ("a file's index size", |m| m.files[2].index_size = u64::MAX),
        ("every file's classes", |m| {
            m.files.iter_mut().for_each(|f| f.classes = u64::MAX / 3)
        }),
        ("every file's wins", |m| {
            m.files.iter_mut().for_each(|f| f.wins = u64::MAX / 3)
        }),
        ("a file's bytes", |m| m.files[1].bytes = u64::MAX),
        ("a file's reachable", |m| {
            m.files[0].reachable = Some(u64::MAX)
        }),
        ("a layer", |m| m.layers.as_mut().unwrap()[3] = u64::MAX),
    ];
    for (what, edit) in edits {
        let bytes = manifest_with(&fx, edit);
        with_changes(&fx, &[(MANIFEST_NAME, bytes.clone())], |dir| {
            let r = verify_dir(dir, false).unwrap();
            assert!(!r.ok, "{what}");
            render_verify_text(&r);
            render_info_text(&info(dir).unwrap());
            let tiny = tbforge::probe::BenchOptions {
                hot_probes: 4,
                miss_probes: 4,
                cold_opens: 1,
                zstd19: false,
            };
            let _ = tbforge::probe::bench(dir, &tiny);
        });
        assert_manifest_mutation_passes(&fx, bytes, what);
    }
}

/// Bug: a manifest that is not UTF-8 gave `FormatError::Io` ("stream did not
/// contain valid UTF-8"), as if the disk had failed. Fixed in
/// format::read_manifest: a `FormatError::Manifest` naming the place.
#[test]
fn a_manifest_that_is_not_utf8_is_a_manifest_error() {
    let fx = fixture_labelled("nim");
    let mut bytes = fx.files[MANIFEST_NAME].clone();
    let at = bytes.iter().position(|&b| b == b'l').unwrap(); // inside "left..."
    bytes[at] = 0xcc;
    with_changes(&fx, &[(MANIFEST_NAME, bytes.clone())], |dir| {
        for e in [
            read_manifest(dir).unwrap_err(),
            Tablebase::open(dir).unwrap_err(),
            info(dir).unwrap_err(),
        ] {
            assert!(matches!(e, FormatError::Manifest { .. }), "{e:?}");
        }
        let r = verify_dir(dir, false).unwrap();
        assert!(!r.ok && r.manifest_failures[0].contains("not a valid manifest"));
    });
}

/// Manifest changes verify passed, each now caught by a check in
/// format::verify (check_manifest, GameChecks): parameters that open the
/// same game but are not its canonical ones (found: pancake n "05"); per-file
/// reachable counts exchanged beyond a file's legal positions (found:
/// connect4); the layers dropped while the files keep their reachable counts
/// (found: tictactoe); the files listed in another order.
#[test]
fn manifest_changes_that_verify_passed_are_caught() {
    let pancake = fixture_labelled("pancake");
    let text = String::from_utf8(pancake.files[MANIFEST_NAME].clone()).unwrap();
    let params_05 = text.replacen("\"n\": \"5\"", "\"n\": \"05\"", 1);
    assert_ne!(params_05, text);
    with_changes(
        &pancake,
        &[(MANIFEST_NAME, params_05.into_bytes())],
        |dir| {
            let r = verify_dir(dir, false).unwrap();
            assert!(
                r.manifest_failures.iter().any(|f| f.contains("canonical")),
                "{}",
                render_verify_text(&r)
            );
        },
    );
    drop(pancake);

    let fx = fixture_labelled("tictactoe");
    let legal = |f: &tbforge::format::FileEntry| f.classes;
    let edits: [ManifestEdit; 3] = [
        ("reachable exchanged between marks0 and marks4", |m| {
            let r0 = m.files[0].reachable;
            m.files[0].reachable = m.files[4].reachable;
            m.files[4].reachable = r0;
        }),
        ("layers dropped", |m| m.layers = None),
        ("files 3 and 4 exchanged", |m| m.files.swap(3, 4)),
    ];
    assert!(fx.manifest.files[4].reachable > Some(legal(&fx.manifest.files[0])));
    for (what, edit) in edits {
        let bytes = manifest_with(&fx, edit);
        with_changes(&fx, &[(MANIFEST_NAME, bytes.clone())], |dir| {
            let r = verify_dir(dir, false).unwrap();
            assert!(!r.ok, "{what}: verify passed");
        });
        assert_manifest_mutation_passes(&fx, bytes, what);
    }
}

/// A manifest naming another instance of its game (parameters changed, the
/// hash not): the deep check must not unrank the files' indices in that other
/// game (its partitions and sizes differ); it is skipped, verify fails.
#[test]
fn deep_verify_skips_a_manifest_that_names_another_game() {
    let fx = fixture_labelled("connect4");
    for (key, value) in [("width", "3"), ("height", "2"), ("width", "5")] {
        let bytes = manifest_with(&fx, |m| {
            m.params.insert(key.into(), value.into());
        });
        with_changes(&fx, &[(MANIFEST_NAME, bytes.clone())], |dir| {
            let r = verify_dir(dir, true).unwrap();
            assert!(!r.ok);
            assert_eq!(r.positions_sampled, 0);
            assert!(
                r.manifest_failures
                    .iter()
                    .any(|f| f.contains("deep check skipped")),
                "{}",
                render_verify_text(&r)
            );
        });
        assert_mutation_passes(
            &fx,
            Mutation {
                target: MANIFEST_NAME.into(),
                bytes,
                what: format!("params {key}={value}"),
                resealed: false,
            },
        );
    }
}

// ---------------------------------------------------------------- wording

/// `text` holds every one of `has` and none of `lacks`.
fn assert_says(text: &str, has: &[&str], lacks: &[&str]) {
    for part in has {
        assert!(text.contains(part), "no `{part}` in:\n{text}");
    }
    for part in lacks {
        assert!(!text.contains(part), "`{part}` in:\n{text}");
    }
}

/// `tbforge verify` and `tbforge info` text for a one-file tablebase (the
/// pancake puzzle) and a ten-file one (tic-tac-toe): counts agree with their nouns.
#[test]
fn rendered_counts_agree_with_their_nouns() {
    let one = fixture_labelled("pancake");
    let r = verify_dir(one.dir.path(), true).unwrap();
    assert_says(
        &render_verify_text(&r),
        &[
            ": 1 file, 8 blocks checked, ",
            " positions re-derived; all checks passed",
        ],
        &[],
    );
    assert_says(
        &render_info_text(&info(one.dir.path()).unwrap()),
        &[
            "positions   120 legal in 120 indices (0 illegal)",
            " in 1 file, ",
        ],
        &["1 files"],
    );
    drop(one);

    let many = fixture_labelled("tictactoe");
    let r = verify_dir(many.dir.path(), false).unwrap();
    assert_says(
        &render_verify_text(&r),
        &[": 10 files, ", " blocks checked; all checks passed"],
        &[],
    );
    assert_says(
        &render_info_text(&info(many.dir.path()).unwrap()),
        &[" in 10 files, ", "layers      10 layers (depths 0..9)"],
        &[],
    );

    // One damaged file of ten; then the manifest alone.
    let mut bad = many.files["marks5.tbf"].clone();
    let n = bad.len();
    bad[n - TRAILER_LEN - 1] ^= 1;
    with_changes(&many, &[("marks5.tbf", bad)], |dir| {
        let text = render_verify_text(&verify_dir(dir, false).unwrap());
        assert!(text.contains("; FAILED (1 file)\n"), "{text}");
    });
    let bytes = manifest_with(&many, |m| m.totals.wins += 1);
    with_changes(&many, &[(MANIFEST_NAME, bytes)], |dir| {
        let text = render_verify_text(&verify_dir(dir, false).unwrap());
        assert!(text.contains("; FAILED (the manifest)\n"), "{text}");
    });
}
