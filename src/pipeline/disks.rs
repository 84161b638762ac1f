//! Scratch space striped over several directories (as over the disks of a
//! RAID 0): partition value files and run files are spread round-robin, so a
//! build with two disks reads and writes both.

use crate::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, SendError, Sender};
use std::sync::{Arc, Mutex};

/// The scratch directories of one build.
#[derive(Clone, Debug)]
pub struct ScratchDisks {
    dirs: Vec<PathBuf>,
    trash: Arc<Trash>,
    runs: Arc<Mutex<LiveRuns>>,
}

/// The run files this process made since the directories were last listed
/// for them, so that clearing a pass's runs needs no listing: a listing
/// reads every emptied file kept for reuse too (up to [`FREE_FILES`] a
/// disk), about 1 ms a pass, a quarter of a build of small partitions
/// (7.4 M positions in 526 partitions under `--mem-limit 8M`: 25 of 97 s,
/// 25,708 passes).
#[derive(Debug, Default)]
struct LiveRuns {
    /// Whether every run file on the disks is in `paths`: not before the
    /// first listing (a killed build leaves some), nor after a resumed
    /// step cut files back.
    complete: bool,
    paths: std::collections::BTreeSet<PathBuf>,
}

/// Run files on their way out. Unlinking a file whose pages are still being
/// written back waits for that I/O (seconds per pass on a slow disk), so a
/// finished pass's runs are renamed aside, which is instant, and a
/// background thread unlinks them while the next pass runs. One thread for
/// the build, fed through a channel: one started per clearing (two or three
/// a pass, with the writers' own) cost the build of many small partitions
/// a thread's start, stack and teardown each time.
#[derive(Debug, Default)]
struct Trash {
    renamed: AtomicU64,
    /// The deleter's queue and thread, started with the first files to go.
    deleter: Mutex<Option<(Sender<PathBuf>, std::thread::JoinHandle<()>)>>,
    /// Renamed-aside files already cut to zero bytes, for new run files to
    /// take over: creating a file costs ext4 an inode search that grows with
    /// the files deleted before (0.27 ms each after a few thousand passes'
    /// runs), renaming one costs nothing of the kind.
    free: Arc<Mutex<Vec<PathBuf>>>,
}

/// Emptied files kept for reuse at most (the rest are unlinked).
const FREE_FILES: usize = 4096;

/// Name prefix of renamed-aside run files.
const TRASH_PREFIX: &str = "trash-";

impl Trash {
    /// Unlinks `paths` on the background thread (here, where none starts).
    fn delete_later(&self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        let mut deleter = self.deleter.lock().unwrap_or_else(|e| e.into_inner());
        if deleter.is_none() {
            let (queue, doomed) = channel::<PathBuf>();
            let free = Arc::clone(&self.free);
            // The thread ends once the queue's sender, which the trash
            // holds, is gone and the queue is empty.
            let spawned = std::thread::Builder::new()
                .name("tbforge-trash".into())
                .spawn(move || doomed.into_iter().for_each(|p| recycle(&free, p)));
            if let Ok(handle) = spawned {
                *deleter = Some((queue, handle));
            }
        }
        for p in paths {
            match deleter.as_ref() {
                Some((queue, _)) => {
                    if let Err(SendError(p)) = queue.send(p) {
                        let _ = fs::remove_file(p);
                    }
                }
                // No thread to be had: delete here, slowly but surely.
                None => {
                    let _ = fs::remove_file(p);
                }
            }
        }
    }

    /// Waits for every background deletion.
    fn wait(&self) {
        let deleter = self
            .deleter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((queue, handle)) = deleter {
            drop(queue);
            let _ = handle.join();
        }
    }
}

/// Empties `path` for reuse, or unlinks it when enough are kept in `free`.
fn recycle(free: &Mutex<Vec<PathBuf>>, path: PathBuf) {
    let room = free.lock().unwrap_or_else(|e| e.into_inner()).len() < FREE_FILES;
    let emptied = room
        && OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_len(0))
            .is_ok();
    if emptied {
        free.lock().unwrap_or_else(|e| e.into_inner()).push(path);
    } else {
        let _ = fs::remove_file(path);
    }
}

impl ScratchDisks {
    /// Scratch under each of `disks` (created if missing), in a subdirectory
    /// named for the build so that two builds never share files.
    pub fn open(disks: &[PathBuf], build_tag: &str) -> Result<ScratchDisks> {
        let mut dirs = Vec::new();
        for d in disks {
            let dir = d.join(Self::dir_name(build_tag));
            fs::create_dir_all(&dir)
                .map_err(|e| Error::io("creating scratch directory", &dir, e))?;
            // Fail now, with the directory's name, rather than mid-build.
            let probe = dir.join(".writable");
            fs::write(&probe, b"ok")
                .map_err(|e| Error::io("writing to scratch directory", &dir, e))?;
            let _ = fs::remove_file(&probe);
            dirs.push(dir);
        }
        if dirs.is_empty() {
            return Err(Error::NotAvailable(
                "no scratch directory: give at least one --disk DIR".into(),
            ));
        }
        let disks = ScratchDisks {
            dirs,
            trash: Arc::default(),
            runs: Arc::default(),
        };
        // Left by a build killed before its deleter finished.
        let mut leftovers = Vec::new();
        for d in &disks.dirs {
            let entries =
                fs::read_dir(d).map_err(|e| Error::io("listing scratch directory", d, e))?;
            for entry in entries.flatten() {
                if entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(TRASH_PREFIX)
                {
                    leftovers.push(entry.path());
                }
            }
        }
        disks.trash.delete_later(leftovers);
        Ok(disks)
    }

    /// The name of the build's directory under each disk.
    pub fn dir_name(build_tag: &str) -> String {
        format!(".tbforge-scratch-{build_tag}")
    }

    /// The directories, one per disk.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The raw values (one byte per index) of partition slot `slot`: in
    /// [`VALUE_STRIPES`] files of [`VALUE_STRIPE_UNIT`] bytes dealt in turn.
    /// A late pass writes back a few scattered bytes of each chunk it
    /// decides, a write call each, and buffered writes into one file take
    /// its lock in turn: spread over files, one writer per file, they run
    /// side by side.
    pub fn values_path(&self, slot: usize) -> FileParts {
        let dir = &self.dirs[slot % self.dirs.len()];
        FileParts::striped::<VALUE_STRIPES>(
            std::array::from_fn(|k| dir.join(format!("p{slot:05}.values{k}"))),
            VALUE_STRIPE_UNIT,
        )
    }

    /// A side file of partition slot `slot` (`what`: "summary", "internal").
    pub fn side_path(&self, slot: usize, what: &str) -> PathBuf {
        // The side files sit on the next disk so that a pass reads two disks at once.
        self.dirs[(slot + 1) % self.dirs.len()].join(format!("p{slot:05}.{what}"))
    }

    /// The run file of bucket `bucket` of kind `kind` ("req", "ans").
    pub fn run_path(&self, kind: &str, bucket: usize) -> PathBuf {
        self.dirs[bucket % self.dirs.len()].join(format!("{kind}-{bucket:06}.run"))
    }

    /// Removes the run files of `kind` ("req", "ans"), or all with `None`
    /// (between passes, and before a resumed pass). They are renamed aside
    /// at once and unlinked in the background (see `Trash`).
    pub fn clear_runs(&self, kind: Option<&str>) -> Result<()> {
        let of_kind = |name: &str| kind.is_none_or(|k| name.starts_with(&format!("{k}-")));
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.complete {
            let mut doomed = Vec::new();
            for path in std::mem::take(&mut runs.paths) {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                if of_kind(&name) {
                    let aside = self.aside(&path, &name);
                    fs::rename(&path, &aside)
                        .map_err(|e| Error::io("removing run file", &path, e))?;
                    doomed.push(aside);
                } else {
                    runs.paths.insert(path);
                }
            }
            self.trash.delete_later(doomed);
            return Ok(());
        }
        let mut doomed = Vec::new();
        for d in &self.dirs {
            let entries =
                fs::read_dir(d).map_err(|e| Error::io("listing scratch directory", d, e))?;
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let trash = name.starts_with(TRASH_PREFIX);
                if path.extension().is_some_and(|x| x == "run") && of_kind(&name) && !trash {
                    let aside = self.aside(&path, &name);
                    fs::rename(&path, &aside)
                        .map_err(|e| Error::io("removing run file", &path, e))?;
                    runs.paths.remove(&path);
                    doomed.push(aside);
                }
            }
        }
        // Every run file is gone now, the tracked ones with the others.
        if kind.is_none() {
            *runs = LiveRuns {
                complete: true,
                paths: Default::default(),
            };
        }
        self.trash.delete_later(doomed);
        Ok(())
    }

    /// The name run file `path` (named `name`) is renamed to on its way out.
    fn aside(&self, path: &Path, name: &str) -> PathBuf {
        let n = self.trash.renamed.fetch_add(1, Ordering::Relaxed);
        path.with_file_name(format!(
            "{TRASH_PREFIX}{}-{n}-{name}.gone",
            std::process::id()
        ))
    }

    /// Says that run files may have appeared or gone behind the tracking's
    /// back (a resumed step cut them back), so that the next clearing lists
    /// the directories again.
    pub(crate) fn forget_run_files(&self) {
        self.runs.lock().unwrap_or_else(|e| e.into_inner()).complete = false;
    }

    /// Creates the run file `path` (which must not exist), from an emptied
    /// file of the same directory where one is free. The caller keeps any
    /// other thread from creating `path` meanwhile.
    pub(crate) fn create_run_file(&self, path: &Path) -> Result<File> {
        let free = {
            let mut free = self.trash.free.lock().unwrap_or_else(|e| e.into_inner());
            let same_dir = free.iter().rposition(|f| f.parent() == path.parent());
            same_dir.map(|i| free.swap_remove(i))
        };
        if let Some(free) = free {
            if fs::rename(&free, path).is_err() {
                let _ = fs::remove_file(&free);
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io("opening run file", path, e))?;
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .paths
            .insert(path.to_path_buf());
        Ok(file)
    }

    /// Removes all scratch (after a finished build).
    pub fn remove_all(&self) -> Result<()> {
        self.trash.wait();
        for d in &self.dirs {
            if d.exists() {
                fs::remove_dir_all(d).map_err(|e| Error::io("removing scratch directory", d, e))?;
            }
        }
        Ok(())
    }
}

/// Threads [`ByteFile::read_ranges`] reads with at most.
const READERS: usize = 8;

/// Bytes a reader thread is worth starting for.
const READ_SHARE: usize = 256 << 10;
/// The least piece [`ByteFile::read_whole`] cuts a read into.
const WHOLE_SHARE: usize = 1 << 20;

/// The threads [`ByteFile::read_ranges`] reads with, started once: started
/// for every call (three a chunk), their stacks' mapping and unmapping cost
/// a TLB shootdown on every core each time. `None` where the system would
/// not start them: reads then go one after another.
fn reader_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(READERS)
            .thread_name(|_| "tbforge-read".into())
            .build()
            .ok()
    })
    .as_ref()
}

/// `buf` cut into the parts `ranges` (sorted, apart, within `buf`) name.
pub(super) fn cut_apart(
    buf: &mut [u8],
    ranges: impl IntoIterator<Item = (usize, usize)>,
) -> Vec<&mut [u8]> {
    let (mut rest, mut cut) = (buf, 0);
    let mut parts = Vec::new();
    for (start, end) in ranges {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - cut);
        let (part, tail) = tail.split_at_mut(end - start);
        parts.push(part);
        (rest, cut) = (tail, end);
    }
    parts
}

/// Files a partition's values are striped over (see
/// [`ScratchDisks::values_path`]). Scattered 16-byte writes on an H100
/// host's ext4 took 5.8 us each into one file from 1 to 4 threads, but 1.6
/// us of wall time each from 4 threads into 4 files.
pub const VALUE_STRIPES: usize = 4;

/// Bytes of a values stripe: small enough that a chunk of a few megabytes
/// lies in every stripe, large enough that a chunk's read is a few calls.
pub const VALUE_STRIPE_UNIT: NonZeroU64 = NonZeroU64::new(256 << 10).unwrap();

/// The files a [`ByteFile`] keeps its bytes in: one, or several, the bytes
/// dealt to them `unit` at a time (unit `i` is the `i / n`-th unit of file
/// `i % n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileParts {
    paths: Vec<PathBuf>,
    unit: u64,
}

impl FileParts {
    /// All in `path`.
    pub fn one(path: &Path) -> FileParts {
        FileParts {
            paths: vec![path.to_path_buf()],
            unit: u64::MAX,
        }
    }

    /// Dealt over `paths`, `unit` bytes at a time.
    pub fn striped<const N: usize>(paths: [PathBuf; N], unit: NonZeroU64) -> FileParts {
        const { assert!(N > 0, "a striped file needs at least one file") };
        FileParts {
            paths: paths.into(),
            unit: unit.get(),
        }
    }

    /// Each file with its length in a byte file of `len` bytes.
    pub fn lengths(&self, len: u64) -> Vec<(&Path, u64)> {
        let n = self.paths.len() as u64;
        if n == 1 {
            return vec![(&self.paths[0], len)];
        }
        let units = len.div_ceil(self.unit);
        let last = len - units.saturating_sub(1) * self.unit;
        self.paths
            .iter()
            .enumerate()
            .map(|(k, path)| {
                let k = k as u64;
                let count = if k < units {
                    (units - k).div_ceil(n)
                } else {
                    0
                };
                let short = if units > 0 && (units - 1) % n == k {
                    self.unit - last
                } else {
                    0
                };
                (path.as_path(), count * self.unit - short)
            })
            .collect()
    }

    /// Whether every file is there at its length for `len` bytes.
    pub fn complete(&self, len: u64) -> bool {
        self.lengths(len)
            .iter()
            .all(|(path, l)| fs::metadata(path).is_ok_and(|m| m.len() == *l))
    }

    /// The same files with `suffix` added to each name.
    pub fn with_suffix(&self, suffix: &str) -> FileParts {
        let paths = self
            .paths
            .iter()
            .map(|p| {
                let mut name = p.as_os_str().to_owned();
                name.push(suffix);
                PathBuf::from(name)
            })
            .collect();
        FileParts { paths, ..*self }
    }

    /// Renames each file to its counterpart in `to` (the same shape).
    pub fn rename_to(&self, to: &FileParts) -> Result<()> {
        for (from, to) in self.paths.iter().zip(&to.paths) {
            fs::rename(from, to).map_err(|e| Error::io("renaming scratch file", to, e))?;
        }
        Ok(())
    }

    /// The first file, which names them all in messages.
    pub fn first(&self) -> &Path {
        &self.paths[0]
    }

    /// Byte `offset`'s file, where it lies in it, and how many bytes from
    /// it on lie there in a row (`u64::MAX`: all that follow).
    fn locate(&self, offset: u64) -> (usize, u64, u64) {
        let n = self.paths.len() as u64;
        if n == 1 {
            return (0, offset, u64::MAX);
        }
        let (unit, within) = (offset / self.unit, offset % self.unit);
        (
            (unit % n) as usize,
            (unit / n) * self.unit + within,
            self.unit - within,
        )
    }
}

/// A fixed-size file of bytes read and written at offsets (pread/pwrite),
/// kept in one file or striped over several ([`FileParts`]).
pub struct ByteFile {
    files: Vec<File>,
    parts: FileParts,
    len: u64,
    /// Written since the last sync: a sync of a clean file is skipped, as a
    /// sync costs a journal commit even when there is nothing to write.
    /// Per file: a late pass or a small partition writes few of them.
    dirty: Vec<AtomicBool>,
    /// Write calls so far (see [`ByteFile::writes`]).
    writes: AtomicU64,
}

impl ByteFile {
    /// Opens `path`, creating it with `len` zero bytes if it is missing or of another size.
    pub fn create_or_open(path: &Path, len: u64) -> Result<ByteFile> {
        Self::create_or_open_parts(&FileParts::one(path), len)
    }

    /// [`Self::create_or_open`] of a file kept in `parts`.
    pub fn create_or_open_parts(parts: &FileParts, len: u64) -> Result<ByteFile> {
        Self::open_parts(parts, len, true, |path, want, have, file| {
            if have != want {
                file.set_len(want)
                    .map_err(|e| Error::io("sizing scratch file", path, e))?;
            }
            Ok(())
        })
    }

    /// Opens an existing file read-only and checks its size.
    pub fn open_existing(path: &Path, len: u64) -> Result<ByteFile> {
        Self::open_existing_parts(&FileParts::one(path), len)
    }

    /// [`Self::open_existing`] of a file kept in `parts`.
    pub fn open_existing_parts(parts: &FileParts, len: u64) -> Result<ByteFile> {
        Self::open_parts(parts, len, false, |path, want, have, _| {
            if have == want {
                return Ok(());
            }
            Err(Error::io(
                "checking scratch file",
                path,
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("{have} bytes, expected {want}: it was truncated or replaced; start the build again without --resume"),
                ),
            ))
        })
    }

    /// Opens each of `parts`' files (created where missing, if `writable`)
    /// and has `fit` see each one's path, wanted length, length, and file.
    fn open_parts(
        parts: &FileParts,
        len: u64,
        writable: bool,
        fit: impl Fn(&Path, u64, u64, &File) -> Result<()>,
    ) -> Result<ByteFile> {
        let mut files = Vec::new();
        for (path, want) in parts.lengths(len) {
            let file = OpenOptions::new()
                .read(true)
                .write(writable)
                .create(writable)
                .truncate(false)
                .open(path)
                .map_err(|e| Error::io("opening scratch file", path, e))?;
            let have = file
                .metadata()
                .map_err(|e| Error::io("reading size of", path, e))?
                .len();
            fit(path, want, have, &file)?;
            files.push(file);
        }
        Ok(ByteFile {
            files,
            parts: parts.clone(),
            len,
            // A writable file may be an earlier run's, whose writes may not
            // be durable yet.
            dirty: (0..parts.paths.len())
                .map(|_| AtomicBool::new(writable))
                .collect(),
            writes: AtomicU64::new(0),
        })
    }

    /// The pieces of `len` bytes at `offset` as its files hold them: file,
    /// offset there, and the piece's place in the `len` bytes.
    fn pieces(
        &self,
        offset: u64,
        len: usize,
    ) -> impl Iterator<Item = (usize, u64, usize, usize)> + '_ {
        let mut done = 0usize;
        std::iter::from_fn(move || {
            if done >= len {
                return None;
            }
            let (k, at, run) = self.parts.locate(offset + done as u64);
            let end = len.min(done.saturating_add(usize::try_from(run).unwrap_or(usize::MAX)));
            let piece = (k, at, done, end);
            done = end;
            Some(piece)
        })
    }

    /// `ranges` of the bytes from `base` on (offsets from `base`, sorted,
    /// apart) cut where its files change, gathered by file: what one writer
    /// per file writes ([`Self::read_at`] and [`Self::write_at`] cut the
    /// same way).
    pub fn ranges_by_file(&self, base: u64, ranges: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
        let mut by_file = vec![Vec::new(); self.files.len()];
        for &(start, end) in ranges {
            for (k, _, from, to) in self.pieces(base + start as u64, end - start) {
                by_file[k].push((start + from, start + to));
            }
        }
        by_file
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads `buf.len()` bytes at `offset`.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        for (k, at, start, end) in self.pieces(offset, buf.len()) {
            self.files[k]
                .read_exact_at(&mut buf[start..end], at)
                .map_err(|e| Error::io("reading scratch file", &self.parts.paths[k], e))?;
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at `offset` into `buf`, a long read cut into
    /// pieces read side by side ([`Self::read_ranges`]): a chunk's reads
    /// come from the page cache as often as from the disk, and one thread
    /// copying them (and faulting in the buffer's fresh pages) held up the
    /// step that waited for the chunk.
    pub fn read_whole(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let len = buf.len();
        if len < 2 * WHOLE_SHARE {
            return self.read_at(offset, buf);
        }
        let piece = len.div_ceil(READERS).max(WHOLE_SHARE);
        let pieces: Vec<(usize, usize)> = (0..len)
            .step_by(piece)
            .map(|start| (start, (start + piece).min(len)))
            .collect();
        self.read_ranges(offset, buf, &pieces)
    }

    /// Reads the `ranges` of `buf` (sorted, apart) from this file, where
    /// `buf` mirrors the file from offset `base` on, several at a time: the
    /// stretches of a sparse pass are many small reads, and one after
    /// another they wait for the disk's latency each (or copy from the page
    /// cache on one core). Threads of their own rather than the compute pool:
    /// the reads block, and the pool is busy with the chunk before.
    pub fn read_ranges(&self, base: u64, buf: &mut [u8], ranges: &[(usize, usize)]) -> Result<()> {
        let mut parts: Vec<(u64, &mut [u8])> = ranges
            .iter()
            .map(|&(start, _)| base + start as u64)
            .zip(cut_apart(buf, ranges.iter().copied()))
            .collect();
        let bytes: usize = ranges.iter().map(|(start, end)| end - start).sum();
        let readers = READERS.min(parts.len()).min(bytes.div_ceil(READ_SHARE));
        let read_share = |share: &mut [(u64, &mut [u8])]| {
            share
                .iter_mut()
                .try_for_each(|(at, part)| self.read_at(*at, part))
        };
        match reader_pool() {
            Some(pool) if readers > 1 => {
                use rayon::prelude::*;
                let per = parts.len().div_ceil(readers);
                pool.install(|| {
                    parts
                        .par_chunks_mut(per)
                        .with_max_len(1)
                        .try_for_each(read_share)
                })
            }
            _ => read_share(&mut parts),
        }
    }

    /// Writes `buf` at `offset`.
    pub fn write_at(&self, offset: u64, buf: &[u8]) -> Result<()> {
        for (k, at, start, end) in self.pieces(offset, buf.len()) {
            let written = self.files[k]
                .write_all_at(&buf[start..end], at)
                .map_err(|e| Error::io("writing scratch file", &self.parts.paths[k], e));
            // After the write: a sync that clears the flag first still sees
            // the flag this sets, and one that clears it later covers these
            // bytes.
            self.dirty[k].store(true, Ordering::Release);
            self.writes.fetch_add(1, Ordering::Relaxed);
            written?;
            start_writeback(&self.files[k], at, (end - start) as u64);
        }
        Ok(())
    }

    /// Makes the contents durable.
    pub fn sync(&self) -> Result<()> {
        for (k, (file, path)) in self.files.iter().zip(&self.parts.paths).enumerate() {
            if !self.dirty[k].swap(false, Ordering::AcqRel) {
                continue;
            }
            file.sync_data().map_err(|e| {
                self.dirty[k].store(true, Ordering::Release);
                Error::io("syncing scratch file", path, e)
            })?;
        }
        Ok(())
    }

    /// Write calls made through [`ByteFile::write_at`] since it was opened:
    /// short ones cost microseconds each on some file systems, whatever
    /// their bytes.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    /// The file's path (its first file's, where it is striped).
    pub fn path(&self) -> &Path {
        self.parts.first()
    }
}

/// Asks the kernel to start writing `len` bytes at `offset` of `file` to
/// storage now, without waiting. Scratch is written once and read back much
/// later: left dirty, it piles up until the kernel's dirty limit stops every
/// writer at once (or a checkpoint's sync waits for all of it), and the disk
/// idles in between. Started at once, write-back runs beside the CPU work.
/// Only a hint: errors are left to the writes and syncs that follow.
pub(crate) fn start_writeback(file: &File, offset: u64, len: u64) {
    const MIN_BYTES: u64 = 64 << 10;
    if len >= MIN_BYTES {
        hint(file, offset, len, Hint::WriteBack);
    }
}

/// Asks the kernel to start reading `len` bytes at `offset` of `file` into
/// the page cache now, without waiting: buffered reads alone keep only a
/// small read-ahead window in flight, well below the disk's sequential rate.
/// Only a hint: errors are left to the reads that follow.
pub(crate) fn read_ahead(file: &File, offset: u64, len: u64) {
    if len > 0 {
        hint(file, offset, len, Hint::ReadAhead);
    }
}

/// I/O the kernel is asked to start on a range of a file.
#[derive(Clone, Copy)]
enum Hint {
    WriteBack,
    ReadAhead,
}

/// Passes `what` for `len` bytes at `offset` of `file` to the kernel, where
/// it takes such hints (Linux); elsewhere, does nothing.
fn hint(file: &File, offset: u64, len: u64, what: Hint) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (fd, offset, len) = (
            file.as_raw_fd(),
            offset as libc::off64_t,
            len as libc::off64_t,
        );
        // SAFETY: the descriptor is open for as long as `file` is borrowed;
        // either call reads no memory of ours and only queues I/O.
        unsafe {
            match what {
                Hint::WriteBack => {
                    libc::sync_file_range(fd, offset, len, libc::SYNC_FILE_RANGE_WRITE);
                }
                Hint::ReadAhead => {
                    libc::posix_fadvise(fd, offset, len, libc::POSIX_FADV_WILLNEED);
                }
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len, what);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first clearing lists the directories (a killed build's runs go
    /// too); later ones take the run files this process made, whatever the
    /// kind asked for, and leave one made behind their back until a resumed
    /// step says files may have changed.
    #[test]
    fn clearing_runs_lists_the_directories_only_when_it_must() {
        let dir = tempfile::tempdir().unwrap();
        let disks = ScratchDisks::open(&[dir.path().join("a"), dir.path().join("b")], "t").unwrap();
        let runs_left = || -> Vec<String> {
            let mut names: Vec<String> = disks
                .dirs()
                .iter()
                .flat_map(|d| fs::read_dir(d).unwrap().flatten())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".run") && !n.starts_with(TRASH_PREFIX))
                .collect();
            names.sort();
            names
        };
        fs::write(disks.run_path("req", 7), b"left by a killed build").unwrap();
        disks.create_run_file(&disks.run_path("ans", 2)).unwrap();
        disks.clear_runs(Some("req")).unwrap();
        assert_eq!(runs_left(), ["ans-000002.run"]);
        disks.clear_runs(None).unwrap();
        assert!(runs_left().is_empty());

        for bucket in 0..3 {
            disks
                .create_run_file(&disks.run_path("req", bucket))
                .unwrap();
            disks
                .create_run_file(&disks.run_path("ans", bucket))
                .unwrap();
        }
        fs::write(disks.run_path("req", 9), b"behind its back").unwrap();
        disks.clear_runs(Some("ans")).unwrap();
        assert_eq!(
            runs_left(),
            [
                "req-000000.run",
                "req-000001.run",
                "req-000002.run",
                "req-000009.run"
            ]
        );
        disks.clear_runs(None).unwrap();
        assert_eq!(runs_left(), ["req-000009.run"]);
        disks.forget_run_files();
        disks.clear_runs(None).unwrap();
        assert!(runs_left().is_empty());
    }

    /// A file striped over three files in units of 1000 bytes reads and
    /// writes as one file of its length does, whatever the offsets and
    /// lengths (across units, whole units, one byte); its files hold their
    /// units in turn and are the lengths `lengths` says; a read past its
    /// end is an error; `complete` sees a file missing or cut short.
    #[test]
    fn a_striped_file_reads_and_writes_as_one_file() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0u64, 1, 999, 1000, 2500, 3000, 7_777, 200_001] {
            let paths: [PathBuf; 3] =
                std::array::from_fn(|k| dir.path().join(format!("s{len}.{k}")));
            let parts = FileParts::striped(paths.clone(), NonZeroU64::new(1000).unwrap());
            assert!(!parts.complete(len), "{len}: complete before it was made");
            let file = ByteFile::create_or_open_parts(&parts, len).unwrap();
            assert!(parts.complete(len), "{len}");
            let lengths: u64 = parts.lengths(len).iter().map(|(_, l)| l).sum();
            assert_eq!(lengths, len);
            let mut model = vec![0u8; len as usize];
            let mut seed = len ^ 0x9E37_79B9_7F4A_7C15;
            let mut next = |n: u64| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 33) % n.max(1)
            };
            for round in 0..200u64 {
                if len == 0 {
                    break;
                }
                let at = next(len);
                let n = next((len - at).min(if round % 3 == 0 { 5000 } else { 40 }) + 1);
                let bytes: Vec<u8> = (0..n).map(|i| (i + round * 31) as u8).collect();
                file.write_at(at, &bytes).unwrap();
                model[at as usize..(at + n) as usize].copy_from_slice(&bytes);
                let (from, m) = (next(len), next(len));
                let m = m.min(len - from);
                let mut got = vec![0u8; m as usize];
                file.read_at(from, &mut got).unwrap();
                assert!(
                    got == model[from as usize..(from + m) as usize],
                    "{len} {from} {m}"
                );
            }
            let mut whole = vec![0u8; len as usize];
            file.read_whole(0, &mut whole).unwrap();
            assert!(whole == model);
            file.sync().unwrap();
            // Unit i is the (i / 3)-th unit of file i % 3.
            for (k, path) in paths.iter().enumerate() {
                let bytes = std::fs::read(path).unwrap();
                for (j, b) in bytes.iter().enumerate() {
                    let unit = (j / 1000) * 3 + k;
                    assert_eq!(*b, model[unit * 1000 + j % 1000], "{len} file {k} byte {j}");
                }
            }
            let mut over = [0u8; 2];
            assert!(file.read_at(len.saturating_sub(1), &mut over).is_err());
            let again = ByteFile::open_existing_parts(&parts, len).unwrap();
            let mut back = vec![0u8; len as usize];
            again.read_at(0, &mut back).unwrap();
            assert!(back == model);
            if len > 2000 {
                assert_eq!(
                    again.ranges_by_file(500, &[(0, 1), (1990, 3600)]),
                    // Offsets 500, 2490..3000, 3000..4000 and 4000..4100
                    // of the file: its units 0, 2, 3 and 4.
                    [
                        vec![(0, 1), (2500, 3500)],
                        vec![(3500, 3600)],
                        vec![(1990, 2500)]
                    ]
                );
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&paths[1])
                    .unwrap()
                    .set_len(10)
                    .unwrap();
                assert!(!parts.complete(len));
                assert!(ByteFile::open_existing_parts(&parts, len).is_err());
            }
        }
        // One file: the plain layout, a single stripe.
        let one = FileParts::one(&dir.path().join("one"));
        let file = ByteFile::create_or_open_parts(&one, 5000).unwrap();
        assert_eq!(
            file.ranges_by_file(7, &[(3, 9), (4000, 4993)]),
            [vec![(3, 9), (4000, 4993)]]
        );
        assert_eq!(std::fs::metadata(one.first()).unwrap().len(), 5000);
    }

    /// A sync of a striped file syncs only the files written since the
    /// last one: a write marks the files its bytes lie in, and no other; a
    /// file opened for writing may hold an earlier run's unsynced bytes, so
    /// all of it counts as written, and one opened to read does not.
    #[test]
    fn a_sync_covers_the_files_written_since_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        let paths: [PathBuf; 3] = std::array::from_fn(|k| dir.path().join(format!("d.{k}")));
        let parts = FileParts::striped(paths, NonZeroU64::new(1000).unwrap());
        let dirty = |f: &ByteFile| -> Vec<bool> {
            f.dirty.iter().map(|d| d.load(Ordering::Relaxed)).collect()
        };
        let file = ByteFile::create_or_open_parts(&parts, 10_000).unwrap();
        assert_eq!(dirty(&file), [true; 3]);
        file.sync().unwrap();
        assert_eq!(dirty(&file), [false; 3]);
        // Unit 4 lies in file 1; units 5 and 6 in files 2 and 0.
        file.write_at(4100, &[1; 10]).unwrap();
        assert_eq!(dirty(&file), [false, true, false]);
        file.sync().unwrap();
        file.write_at(5990, &[2; 20]).unwrap();
        assert_eq!(dirty(&file), [true, false, true]);
        file.sync().unwrap();
        assert_eq!(dirty(&file), [false; 3]);
        drop(file);
        let again = ByteFile::open_existing_parts(&parts, 10_000).unwrap();
        assert_eq!(dirty(&again), [false; 3]);
        let mut back = [0u8; 20];
        again.read_at(5990, &mut back).unwrap();
        assert_eq!(back, [2; 20]);
    }

    /// Parts read several at a time land where they belong, each with its
    /// own offset's bytes, and nothing between them is touched.
    #[test]
    fn parts_read_at_their_offsets_into_their_places() {
        let dir = tempfile::tempdir().unwrap();
        let len = 4 << 20;
        let file = ByteFile::create_or_open(&dir.path().join("f"), len as u64).unwrap();
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        file.write_at(0, &bytes).unwrap();
        // Enough bytes for several readers, in parts of odd sizes and gaps.
        let ranges: Vec<(usize, usize)> = (0..40)
            .map(|k| {
                (
                    k * 100_000 + k * 13,
                    k * 100_000 + k * 13 + 60_000 + k * 977,
                )
            })
            .collect();
        assert!(ranges.iter().map(|(a, b)| b - a).sum::<usize>() > 4 * READ_SHARE);
        let mut buf = vec![0xAA; len];
        // Read from elsewhere in the file than where they land: the ranges
        // are the buffer's, the file's bytes start at `base`.
        let base = 12_345;
        file.read_ranges(base, &mut buf, &ranges).unwrap();
        let mut expected = vec![0xAA; len];
        for &(start, end) in &ranges {
            let at = base as usize + start;
            expected[start..end].copy_from_slice(&bytes[at..at + end - start]);
        }
        assert!(buf == expected, "parts read to the wrong places");
        // A part past the end is the file's error, not a panic.
        let mut tail = [0u8; 16];
        assert!(file
            .read_ranges(len as u64 - 8, &mut tail, &[(0, 16)])
            .is_err());
        // A long read in pieces side by side, of a length no piece divides,
        // from an odd offset: the bytes as one pread reads them.
        let (at, long) = (4_321usize, 3 * WHOLE_SHARE + 12_345);
        let mut whole = vec![0u8; long];
        file.read_whole(at as u64, &mut whole).unwrap();
        assert!(whole == bytes[at..at + long], "a long read differs");
        let mut over = vec![0u8; long];
        assert!(file.read_whole((len - long + 1) as u64, &mut over).is_err());
    }
}
