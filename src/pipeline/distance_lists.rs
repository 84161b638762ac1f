//! The first scan's distance lists: per chunk, the positions through which
//! a later pass's marking finds its candidates, listed by distance.
//!
//! Pass `d + 1`'s candidates (see candidates.rs) are the predecessors of
//! the positions at distance `d` and the pending positions whose summary
//! mentions `d`. Those that pass `d` decided, its combine step lists as it
//! decides them. The others are fixed once the first scan is over: the
//! positions it decided (their distances never change) and the pending
//! positions' summaries (of earlier partitions, which never change either).
//! Without these lists a pass's marking found them by reading each chunk
//! whose values or summaries named `d`: where many moves lead to earlier
//! partitions, every chunk's summaries name nearly every distance, so
//! every pass read and scanned the whole partition, 4.25 bytes a
//! position, for a few thousand candidates.
//!
//! A list entry is a position's offset in its chunk (`u32`); a chunk's
//! lists lie one after another in a scratch file, by distance, the decided
//! positions of a distance before the mentioning ones. A position gives one
//! entry (decided) or at most two (a summary names a nearest loss and a
//! longest win), so the file never needs more than 8 bytes a position. The
//! lists are the first scan's whole: one resumed mid-way lists the chunks
//! it had done again from disk. Once it is over they are kept with an
//! index of their spans, and a partition resumed in its passes uses them as
//! an uninterrupted one does.

use super::combine::Earlier;
use super::disks::{ByteFile, ScratchDisks};
use super::external::{flag, INTERNAL, ONGOING};
use crate::value::rules::PENDING;
use crate::value::Value;
use crate::Result;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Distances a value byte or a summary can hold (below 256).
const DISTANCES: usize = 256;

/// Positions a thread lists at a time.
const SLICE: usize = 1 << 14;

/// Bytes of list entries gathered before a write.
const PIECE: usize = 4 << 20;

/// Bytes of an entry.
const ENTRY: u64 = 4;

/// A chunk's lists at one distance: where they start in the file, in
/// entries, and how many positions each holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    distance: u32,
    start: u64,
    decided: u32,
    mentioning: u32,
}

/// The lists of one distance in one chunk: offsets in the chunk.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Listed {
    /// Positions the first scan decided at that distance: their
    /// predecessors are the next pass's candidates.
    pub(super) decided: Vec<u32>,
    /// Pending positions whose summary mentions it: candidates themselves.
    pub(super) mentioning: Vec<u32>,
}

/// A partition's distance lists, chunk by chunk, as the first scan's
/// combine step adds them.
pub(super) struct DistanceLists {
    file: ByteFile,
    /// Positions of the partition.
    size: u64,
    /// Per chunk added: its lists, by increasing distance, empty ones left out.
    chunks: Vec<Vec<Span>>,
    /// Entries written so far.
    end: u64,
}

/// Calls `entry` with each (distance, list) position `j` goes on: 0 the
/// decided, 1 the mentioning.
#[inline]
fn entries_of(
    values: &[u8],
    flags: &[u8],
    summaries: &[u8],
    j: usize,
    mut entry: impl FnMut(usize, usize),
) {
    match Value::from_byte(values[j]).distance() {
        Some(e) => entry(e as usize, 0),
        None if values[j] == PENDING && flag(flags, j) == ONGOING | INTERNAL => {
            if let Some(e) = Earlier::decode(summaries[j]).distance() {
                entry(e as usize, 1);
            }
        }
        None => {}
    }
}

/// One slice's entries, grouped by (distance, list) in that order.
struct SliceLists {
    /// Per (distance, list): where its entries start in `entries`, and
    /// where the next group starts (`starts[k + 1]`).
    starts: Vec<u32>,
    entries: Vec<u32>,
}

impl SliceLists {
    fn of(values: &[u8], flags: &[u8], summaries: &[u8], from: usize, to: usize) -> SliceLists {
        let mut counts = vec![0u32; 2 * DISTANCES + 1];
        for j in from..to {
            entries_of(values, flags, summaries, j, |e, l| {
                counts[2 * e + l + 1] += 1
            });
        }
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        let starts = counts.clone();
        let mut at = counts;
        let mut entries = vec![0u32; starts[2 * DISTANCES] as usize];
        for j in from..to {
            entries_of(values, flags, summaries, j, |e, l| {
                entries[at[2 * e + l] as usize] = j as u32;
                at[2 * e + l] += 1;
            });
        }
        SliceLists { starts, entries }
    }

    fn group(&self, e: usize, l: usize) -> &[u32] {
        let k = 2 * e + l;
        &self.entries[self.starts[k] as usize..self.starts[k + 1] as usize]
    }
}

impl DistanceLists {
    /// Empty lists for a partition of `size` positions, in a new file at `path`.
    pub(super) fn create(path: &Path, size: u64) -> Result<DistanceLists> {
        // A file of an interrupted build holds nothing these lists name;
        // its index goes first, so that none is left naming the new file.
        Self::remove(path)?;
        Ok(DistanceLists {
            file: ByteFile::create_or_open(path, 2 * ENTRY * size)?,
            size,
            chunks: Vec::new(),
            end: 0,
        })
    }

    /// Makes the lists last beyond this process: their file synced, then
    /// an index of its chunks' spans written beside it (under a temporary
    /// name, synced, renamed into place), which [`Self::reopen`] reads. A
    /// build resumed in the partition's passes then marks their candidates
    /// from the lists as an uninterrupted one does, instead of reading and
    /// scanning every chunk each pass. Once an index names the file, the
    /// file's bytes are durable: a crash before the rename leaves no index.
    pub(super) fn keep(&self) -> Result<()> {
        self.file.sync()?;
        let mut body = Vec::new();
        for n in [INDEX_VERSION, self.size, self.chunks.len() as u64, self.end] {
            body.extend_from_slice(&n.to_le_bytes());
        }
        for spans in &self.chunks {
            body.extend_from_slice(&(spans.len() as u32).to_le_bytes());
            for s in spans {
                body.extend_from_slice(&s.distance.to_le_bytes());
                body.extend_from_slice(&s.start.to_le_bytes());
                body.extend_from_slice(&s.decided.to_le_bytes());
                body.extend_from_slice(&s.mentioning.to_le_bytes());
            }
        }
        body.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        let index = index_path(self.file.path());
        let mut tmp = index.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut f, &body)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &index)
        })();
        written.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            crate::Error::io("writing scratch file", &index, e)
        })
    }

    /// The lists [`Self::keep`] left at `path` for a partition of `size`
    /// positions in `chunks` chunks; `None` where there are none, or their
    /// index is damaged or made for another partition (the passes then
    /// find their candidates without them, as before the lists).
    pub(super) fn reopen(path: &Path, size: u64, chunks: u64) -> Result<Option<DistanceLists>> {
        let index = index_path(path);
        let bytes = match std::fs::read(&index) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(crate::Error::io("reading scratch file", &index, e)),
        };
        let Some((spans, end)) = parse_index(&bytes, size, chunks) else {
            return Ok(None);
        };
        let len = 2 * ENTRY * size;
        if end * ENTRY > len || std::fs::metadata(path).map(|m| m.len()).ok() != Some(len) {
            return Ok(None);
        }
        Ok(Some(DistanceLists {
            file: ByteFile::open_existing(path, len)?,
            size,
            chunks: spans,
            end,
        }))
    }

    /// Adds the lists of the next chunk from its values, flags and packed
    /// summaries as the first scan leaves them; `write` writes bytes at an
    /// offset of the file. Positions are offsets in the chunk, so a chunk
    /// must hold fewer than 2^32.
    pub(super) fn add_chunk(
        &mut self,
        (values, flags, summaries): (&[u8], &[u8], &[u8]),
        write: impl Fn(&ByteFile, u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        debug_assert!(values.len() as u64 <= u64::from(u32::MAX));
        let slices: Vec<SliceLists> = (0..values.len().div_ceil(SLICE))
            .into_par_iter()
            .map(|s| {
                let to = ((s + 1) * SLICE).min(values.len());
                SliceLists::of(values, flags, summaries, s * SLICE, to)
            })
            .collect();
        let mut spans = Vec::new();
        let mut piece: Vec<u8> = Vec::new();
        let mut flushed = self.end;
        let mut next = self.end;
        for e in 0..DISTANCES {
            let count = |l| {
                slices
                    .iter()
                    .map(|s| s.group(e, l).len() as u32)
                    .sum::<u32>()
            };
            let (decided, mentioning) = (count(0), count(1));
            if decided + mentioning == 0 {
                continue;
            }
            spans.push(Span {
                distance: e as u32,
                start: next,
                decided,
                mentioning,
            });
            next += u64::from(decided + mentioning);
            for l in 0..2 {
                for s in &slices {
                    piece.extend(s.group(e, l).iter().flat_map(|j| j.to_le_bytes()));
                    if piece.len() >= PIECE {
                        write(&self.file, flushed * ENTRY, &piece)?;
                        flushed += piece.len() as u64 / ENTRY;
                        piece.clear();
                    }
                }
            }
        }
        if !piece.is_empty() {
            write(&self.file, flushed * ENTRY, &piece)?;
        }
        self.chunks.push(spans);
        self.end = next;
        Ok(())
    }

    /// Chunks added so far.
    pub(super) fn chunks(&self) -> u64 {
        self.chunks.len() as u64
    }

    /// Chunk `c`'s lists at distance `e` (empty where it has none), read
    /// with `read` (bytes at an offset of the file).
    pub(super) fn listed(
        &self,
        c: u64,
        e: u32,
        read: impl Fn(&ByteFile, u64, usize) -> Result<Vec<u8>>,
    ) -> Result<Listed> {
        let spans = &self.chunks[c as usize];
        let Ok(k) = spans.binary_search_by_key(&e, |s| s.distance) else {
            return Ok(Listed::default());
        };
        let span = spans[k];
        let bytes = read(
            &self.file,
            span.start * ENTRY,
            (span.decided + span.mentioning) as usize * ENTRY as usize,
        )?;
        let mut entries = bytes
            .chunks_exact(ENTRY as usize)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Ok(Listed {
            decided: entries.by_ref().take(span.decided as usize).collect(),
            mentioning: entries.collect(),
        })
    }

    /// Where partition slot `slot`'s lists are kept.
    pub(super) fn path_for(disks: &ScratchDisks, slot: usize) -> PathBuf {
        disks.side_path(slot, "lists")
    }

    /// Removes the lists at `path` and their index, where there are any.
    pub(super) fn remove(path: &Path) -> Result<()> {
        remove_if_there(&index_path(path))?;
        remove_if_there(path)
    }
}

/// The spans per chunk and the entries an index holds, checked: its
/// checksum and version, the partition's size and chunks, each chunk's
/// spans by increasing distance, one after another from the first entry.
fn parse_index(bytes: &[u8], size: u64, chunks: u64) -> Option<(Vec<Vec<Span>>, u64)> {
    let (body, crc) = bytes.split_last_chunk::<4>()?;
    if crc32fast::hash(body).to_le_bytes() != *crc {
        return None;
    }
    let mut at = Cursor(body);
    let (version, held_size) = (at.u64()?, at.u64()?);
    let (held_chunks, end) = (at.u64()?, at.u64()?);
    if version != INDEX_VERSION || held_size != size || held_chunks != chunks {
        return None;
    }
    let mut all = Vec::with_capacity(chunks as usize);
    let mut next = 0u64;
    for _ in 0..chunks {
        let mut spans: Vec<Span> = Vec::new();
        for _ in 0..at.u32()? {
            let (distance, start) = (at.u32()?, at.u64()?);
            let (decided, mentioning) = (at.u32()?, at.u32()?);
            let ordered = spans.last().is_none_or(|s| s.distance < distance);
            if start != next || !ordered || distance as usize >= DISTANCES {
                return None;
            }
            next += u64::from(decided) + u64::from(mentioning);
            spans.push(Span {
                distance,
                start,
                decided,
                mentioning,
            });
        }
        all.push(spans);
    }
    (at.0.is_empty() && next == end).then_some((all, end))
}

/// Little-endian numbers read off the front of bytes.
struct Cursor<'b>(&'b [u8]);

impl Cursor<'_> {
    fn u64(&mut self) -> Option<u64> {
        let (n, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*n))
    }

    fn u32(&mut self) -> Option<u32> {
        let (n, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*n))
    }
}

/// The version of the index's layout.
const INDEX_VERSION: u64 = 1;

/// Where the index of the lists at `path` is kept.
fn index_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".index");
    PathBuf::from(name)
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(crate::Error::io("removing scratch file", path, e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::rules::at;

    /// Every position's entries land in its chunk's list of each distance
    /// it gives, in order, whatever the slices: lists read back equal lists
    /// made by a plain scan.
    #[test]
    fn lists_hold_each_position_under_its_distances() {
        let dir = std::env::temp_dir().join(format!("tbforge-lists-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chunk = 3 * SLICE + 100;
        let chunks = 3usize;
        let mut rng = crate::hash::SplitMix64::new(3);
        let mut next = move || rng.next_u64();
        let mut made = Vec::new();
        let mut lists = DistanceLists::create(&dir.join("lists"), (chunk * chunks) as u64).unwrap();
        for _ in 0..chunks {
            let values: Vec<u8> = (0..chunk)
                .map(|_| match next() % 4 {
                    0 => at((next() % 40) as u32).to_byte(),
                    1 => 0,
                    _ => PENDING,
                })
                .collect();
            let flags: Vec<u8> = (0..chunk.div_ceil(4)).map(|_| next() as u8).collect();
            // Distances, and the two codes that name none.
            let summaries: Vec<u8> = (0..chunk * Earlier::BYTES)
                .map(|_| match next() % 4 {
                    0 => 254,
                    1 => 255,
                    _ => (next() % 40) as u8,
                })
                .collect();
            let write = |f: &ByteFile, offset: u64, buf: &[u8]| f.write_at(offset, buf);
            lists
                .add_chunk((&values, &flags, &summaries), write)
                .unwrap();
            made.push((values, flags, summaries));
        }
        assert_eq!(lists.chunks(), chunks as u64);
        let read = |f: &ByteFile, offset: u64, len: usize| {
            let mut buf = vec![0u8; len];
            f.read_at(offset, &mut buf).map(|()| buf)
        };
        // Every chunk's lists at every distance, as a plain scan makes them,
        // against what `lists` reads back; how many entries there were.
        let check = |lists: &DistanceLists| {
            let mut some = [0usize; 2];
            for (c, (values, flags, summaries)) in made.iter().enumerate() {
                for e in 0..45u32 {
                    let mut want = Listed::default();
                    for j in 0..chunk {
                        entries_of(values, flags, summaries, j, |d, l| {
                            if d == e as usize {
                                [&mut want.decided, &mut want.mentioning][l].push(j as u32);
                            }
                        });
                    }
                    some[0] += want.decided.len();
                    some[1] += want.mentioning.len();
                    assert_eq!(
                        lists.listed(c as u64, e, read).unwrap(),
                        want,
                        "chunk {c}, distance {e}"
                    );
                }
            }
            some
        };
        let some = check(&lists);
        assert!(some[0] > 1000 && some[1] > 1000, "{some:?}");

        // Kept, they are found again whole by a resumed build (of the same
        // partition: its size and chunks), and by nothing else.
        let (path, size) = (dir.join("lists"), (chunk * chunks) as u64);
        assert!(DistanceLists::reopen(&path, size, chunks as u64)
            .unwrap()
            .is_none());
        lists.keep().unwrap();
        drop(lists);
        let again = DistanceLists::reopen(&path, size, chunks as u64).unwrap();
        assert_eq!(check(&again.expect("kept lists reopen")), some);
        assert!(DistanceLists::reopen(&path, size + 64, chunks as u64)
            .unwrap()
            .is_none());
        assert!(DistanceLists::reopen(&path, size, chunks as u64 + 1)
            .unwrap()
            .is_none());
        // A damaged or cut index is no index: the passes do without.
        let index = index_path(&path);
        let good = std::fs::read(&index).unwrap();
        for at in [0, 9, good.len() / 2, good.len() - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&index, &bad).unwrap();
            assert!(
                DistanceLists::reopen(&path, size, chunks as u64)
                    .unwrap()
                    .is_none(),
                "byte {at}"
            );
        }
        std::fs::write(&index, &good[..good.len() - 5]).unwrap();
        assert!(DistanceLists::reopen(&path, size, chunks as u64)
            .unwrap()
            .is_none());
        std::fs::write(&index, &good).unwrap();
        assert!(DistanceLists::reopen(&path, size, chunks as u64)
            .unwrap()
            .is_some());
        // A new first scan's lists take the old index with them.
        drop(DistanceLists::create(&path, size).unwrap());
        assert!(!index.exists());
        DistanceLists::remove(&path).unwrap();
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
