//! Byte counters and peak memory for the build log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes the pipeline read and wrote, and where its time went.
#[derive(Debug, Default)]
pub struct IoStats {
    read: AtomicU64,
    written: AtomicU64,
    /// See [`PassRecord::stretch_reads`].
    stretch_reads: AtomicU64,
    busy_nanos: AtomicU64,
    /// Shared with the run writers' flusher threads.
    pub(crate) profile: Arc<Profile>,
    /// The timeline of the passes since [`IoStats::take_passes`], where
    /// no journal holds them.
    passes: std::sync::Mutex<Vec<PassRecord>>,
    /// Where each pass is also appended as it ends (see
    /// [`IoStats::journal_passes_to`]).
    journal: std::sync::Mutex<Option<Journal>>,
}

/// The pass journal: an append-only file of one JSON object a line.
#[derive(Debug)]
struct Journal {
    path: std::path::PathBuf,
    file: std::fs::File,
    /// The file's length: where the next line goes.
    end: u64,
    /// Where the passes since [`IoStats::take_passes`] begin, and how many.
    since: u64,
    count: usize,
}

/// A partition's passes, in order: held in memory, or a stretch of the
/// pass journal that is read back, a line at a time, when the build log
/// is written. A build of many small partitions makes hundreds of
/// thousands of passes, and holding their records took a hundred
/// megabytes beside a `--mem-limit` of twenty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTimeline(Timeline);

#[derive(Clone, Debug, PartialEq)]
enum Timeline {
    Held(Vec<PassRecord>),
    Journaled {
        path: std::path::PathBuf,
        start: u64,
        end: u64,
        count: usize,
    },
    /// Written to the build log, the journal gone: this many.
    Logged(usize),
}

impl Default for Timeline {
    fn default() -> Timeline {
        Timeline::Held(Vec::new())
    }
}

impl PassTimeline {
    /// How many passes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Timeline::Held(passes) => passes.len(),
            Timeline::Journaled { count, .. } | Timeline::Logged(count) => *count,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Says that the passes were written to the build log and their
    /// journal is about to go: from then on they are counted, not listed
    /// (see [`Self::is_listed`]).
    pub fn logged(&mut self) {
        if let Timeline::Journaled { count, .. } = self.0 {
            self.0 = Timeline::Logged(count);
        }
    }

    /// Whether serialising leaves the passes out: where there are none, or
    /// where they went to the build log (the report a build returns counts
    /// them, and build-log.json lists them).
    pub fn is_unlisted(&self) -> bool {
        self.is_empty() || matches!(self.0, Timeline::Logged(_))
    }
}

impl From<Vec<PassRecord>> for PassTimeline {
    fn from(passes: Vec<PassRecord>) -> PassTimeline {
        PassTimeline(Timeline::Held(passes))
    }
}

impl serde::Serialize for PassTimeline {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let (path, start, end, count) = match &self.0 {
            Timeline::Held(passes) => return passes.serialize(serializer),
            Timeline::Logged(count) => {
                return Err(S::Error::custom(format!(
                    "{count} passes went to the build log; they are not listed again"
                )))
            }
            Timeline::Journaled {
                path,
                start,
                end,
                count,
            } => (path, *start, *end, *count),
        };
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            S::Error::custom(format!("{what} the pass journal {}: {e}", path.display()))
        };
        let mut file = std::fs::File::open(path).map_err(|e| failed("opening", &e))?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(start))
            .map_err(|e| failed("reading", &e))?;
        let lines = std::io::BufRead::lines(std::io::BufReader::new(std::io::Read::take(
            file,
            end - start,
        )));
        let mut seq = serializer.serialize_seq(Some(count))?;
        let mut seen = 0;
        for line in lines {
            let line = line.map_err(|e| failed("reading", &e))?;
            let pass: PassRecord =
                serde_json::from_str(&line).map_err(|e| failed("a corrupt line in", &e))?;
            seq.serialize_element(&pass)?;
            seen += 1;
        }
        if seen != count {
            return Err(failed(
                "reading",
                &format!("{seen} passes where {count} were written"),
            ));
        }
        seq.end()
    }
}

impl<'de> serde::Deserialize<'de> for PassTimeline {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<PassRecord>::deserialize(deserializer).map(PassTimeline::from)
    }
}

/// A line of the pass journal: the pass and its partition.
#[derive(serde::Serialize)]
struct JournalLine<'a> {
    partition: &'a str,
    #[serde(flatten)]
    pass: &'a PassRecord,
}

/// One pass of an external partition solve (the first scan is pass 0):
/// what moved where, and who waited for whom.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PassRecord {
    /// The pass (0: the first scan).
    pub pass: u32,
    /// What expanded its chunks ("cpu", or "cuda: DEVICE"; "none: ..."
    /// where the pass decided its candidates by their marks alone), then
    /// how a pass that decides losses was answered: ", answered in memory"
    /// (on the host, as its requests came back) or ", answered on the
    /// device" (the device looked its successors up itself and sent back a
    /// bit a position).
    pub expander: String,
    /// Wall seconds of the pass.
    pub seconds: f64,
    /// Wall seconds of its expand, answer and combine steps.
    pub expand_seconds: f64,
    /// Wall seconds of marking the positions the pass can decide (zero
    /// where it expands every pending position).
    #[serde(default)]
    pub candidate_seconds: f64,
    /// The pending positions the pass expanded, where it expanded only
    /// those it can decide (`None`: every pending position); where it
    /// decided them by their marks alone, those.
    #[serde(default)]
    pub candidates: Option<u64>,
    /// Candidates the pass did not expand: it decides losses, and their
    /// successors in earlier partitions (a draw, or a distance at the
    /// pass's or beyond) block one whatever the others are.
    #[serde(default)]
    pub settled_by_summary: u64,
    /// Chunks whose candidates for this pass the pass before marked in its
    /// combine step, which held them: the scan before this pass did not
    /// read them again.
    #[serde(default)]
    pub chunks_marked_by_combine: u64,
    /// See `expand_seconds`.
    pub answer_seconds: f64,
    /// See `expand_seconds`.
    pub combine_seconds: f64,
    /// Scratch bytes read.
    pub bytes_read: u64,
    /// Scratch bytes written.
    pub bytes_written: u64,
    /// Calls that read stretches of a chunk's values, flags or summaries
    /// (a sparse pass reads many short ones, each a system call).
    #[serde(default)]
    pub stretch_reads: u64,
    /// Calls that wrote into the partition's values (a late pass writes
    /// back what it decided, often a byte a call: on some file systems
    /// each costs microseconds on the combine step's writer).
    #[serde(default)]
    pub value_writes: u64,
    /// The process's CPU seconds (all threads) while the pass ran, and while
    /// each of its steps did ("expand", "answer", "combine" (with the
    /// marking it does), "marking"): against the wall seconds, the cores
    /// each kept busy.
    #[serde(default)]
    pub cpu_seconds: std::collections::BTreeMap<String, f64>,
    /// Jobs the expander ran.
    pub jobs: u64,
    /// Requests the expand step wrote.
    pub requests: u64,
    /// Bytes of request and answer runs written per request, as stored
    /// (compressed; 32 raw: a 16-byte request and its 16-byte answer).
    pub scratch_bytes_per_request: Option<f64>,
    /// The expander's copies and kernels (zero but for kernel time on the CPU).
    pub device: crate::game::ChunkTiming,
    /// Seconds spent waiting: for chunk reads from disk, for the device, for
    /// write-buffer flushers (back-pressure from the disk), for run reads.
    pub waits: std::collections::BTreeMap<String, f64>,
    /// Scratch bytes read and written during each step ("marking",
    /// "expand", "answer", "combine" with the marking it does): against the
    /// disk's rates, the least time each step could take.
    #[serde(default)]
    pub step_bytes: std::collections::BTreeMap<String, [u64; 2]>,
}

/// Where the pipeline's time went, in nanoseconds, so a benchmark can tell
/// a disk-bound pass from one held up by a thread of its own.
#[derive(Debug, Default)]
pub(crate) struct Profile {
    nanos: [AtomicU64; Part::COUNT],
    /// The process's CPU time (all threads) while a step ran, for the
    /// steps timed by [`Profile::time_step`]: over their wall time, how
    /// many cores the step kept busy.
    cpu_nanos: [AtomicU64; Part::COUNT],
    /// The step under way (its [`Part`] plus one; zero: none), which the
    /// bytes read and written are counted against.
    step: std::sync::atomic::AtomicUsize,
    /// Scratch bytes read and written during each step: against the disk's
    /// rates, the least time the step could take.
    bytes: [[AtomicU64; 2]; Part::COUNT],
}

/// The wall clock and the process's CPU time (all threads) at a step's or
/// a pass's start: against both, the cores it kept busy.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepClock {
    at: Instant,
    cpu: u64,
}

impl StepClock {
    pub(crate) fn start() -> StepClock {
        StepClock {
            at: Instant::now(),
            cpu: process_cpu_nanos(),
        }
    }

    /// Wall time and CPU nanoseconds since the start.
    pub(crate) fn read(&self) -> (Duration, u64) {
        (
            self.at.elapsed(),
            process_cpu_nanos().saturating_sub(self.cpu),
        )
    }
}

/// CPU time this process has used so far, all threads, in nanoseconds.
fn process_cpu_nanos() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the pointer, which
    // points at the local above; the clock id is a constant Linux knows.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
    if ok {
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    } else {
        0
    }
}

/// A part of the pipeline whose time is counted.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Part {
    /// Wall time of expand steps.
    Expand,
    /// Wall time of answer steps.
    Answer,
    /// Wall time of combine steps.
    Combine,
    /// Flusher threads grouping write buffers by bucket.
    FlushGroup,
    /// Flusher threads writing run files.
    FlushWrite,
    /// Producers waiting for a flusher to take a full buffer (back-pressure).
    WaitFlusher,
    /// Consumers waiting for a run file's next block.
    WaitRunRead,
    /// Consumers waiting for a partition chunk's reader.
    WaitChunkRead,
    /// Making scratch durable at checkpoints.
    Sync,
    /// Readers sorting blocks by key before applying them.
    BlockSort,
    /// Recording checkpoints between passes.
    Checkpoint,
    /// Removing a finished pass's run files.
    ClearRuns,
    /// Flusher threads encoding runs (sort by key, deltas, compression).
    FlushEncode,
    /// Run readers checking and decoding frames.
    RunDecode,
    /// Marking the positions a pass can decide (`candidates.rs`).
    Candidates,
    /// A combine step waiting for the write of a chunk before to end.
    WaitWriteBack,
    /// A combine step waiting for the marking of a chunk before to end.
    WaitMarking,
}

/// [`Profile`]'s counters at one moment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot {
    wall: [u64; Part::COUNT],
    cpu: [u64; Part::COUNT],
    bytes: [[u64; 2]; Part::COUNT],
}

impl Part {
    pub(crate) const COUNT: usize = 17;
    const ALL: [Part; Part::COUNT] = [
        Part::Expand,
        Part::Answer,
        Part::Combine,
        Part::FlushGroup,
        Part::FlushWrite,
        Part::WaitFlusher,
        Part::WaitRunRead,
        Part::WaitChunkRead,
        Part::Sync,
        Part::BlockSort,
        Part::Checkpoint,
        Part::ClearRuns,
        Part::FlushEncode,
        Part::RunDecode,
        Part::Candidates,
        Part::WaitWriteBack,
        Part::WaitMarking,
    ];

    fn key(self) -> &'static str {
        match self {
            Part::Expand => "expand",
            Part::Answer => "answer",
            Part::Combine => "combine",
            Part::FlushGroup => "flusher_group",
            Part::FlushWrite => "flusher_write",
            Part::WaitFlusher => "wait_for_flusher",
            Part::WaitRunRead => "wait_for_run_reads",
            Part::WaitChunkRead => "wait_for_chunk_reads",
            Part::Sync => "sync",
            Part::BlockSort => "block_sort",
            Part::Checkpoint => "checkpoint",
            Part::ClearRuns => "clear_runs",
            Part::FlushEncode => "flusher_encode",
            Part::RunDecode => "run_decode",
            Part::Candidates => "candidates",
            Part::WaitWriteBack => "wait_for_write_back",
            Part::WaitMarking => "wait_for_marking",
        }
    }
}

impl Profile {
    /// Counts `d` against `part`.
    pub(crate) fn add(&self, part: Part, d: Duration) {
        self.nanos[part as usize].fetch_add(
            d.as_nanos().min(u128::from(u64::MAX)) as u64,
            Ordering::Relaxed,
        );
    }

    /// Counts a step's `wall` time and `cpu` nanoseconds of the process's
    /// CPU time against `part`.
    pub(crate) fn add_step(&self, part: Part, wall: Duration, cpu: u64) {
        self.add(part, wall);
        self.cpu_nanos[part as usize].fetch_add(cpu, Ordering::Relaxed);
    }

    /// Runs `f`, a step of a pass, counting its wall time and the process's
    /// CPU time meanwhile against `part`.
    pub(crate) fn time_step<T>(&self, part: Part, f: impl FnOnce() -> T) -> T {
        let clock = StepClock::start();
        let out = self.in_step(part, f);
        let (wall, cpu) = clock.read();
        self.add_step(part, wall, cpu);
        out
    }

    /// Runs `f` with the bytes read and written meanwhile counted against
    /// step `part` (a step inside another counts its own).
    pub(crate) fn in_step<T>(&self, part: Part, f: impl FnOnce() -> T) -> T {
        let before = self.step.swap(part as usize + 1, Ordering::Relaxed);
        let out = f();
        self.step.store(before, Ordering::Relaxed);
        out
    }

    /// Counts `n` bytes read (`direction` 0) or written (1) against the
    /// step under way, if any.
    fn count_bytes(&self, direction: usize, n: u64) {
        if let Some(part) = self.step.load(Ordering::Relaxed).checked_sub(1) {
            self.bytes[part][direction].fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Bytes read and written during step `part` since snapshot `before`.
    pub(crate) fn bytes_since(&self, before: &Snapshot, part: Part) -> [u64; 2] {
        std::array::from_fn(|d| {
            self.bytes[part as usize][d]
                .load(Ordering::Relaxed)
                .saturating_sub(before.bytes[part as usize][d])
        })
    }

    /// The counters now, to take differences of.
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot {
            wall: std::array::from_fn(|i| self.nanos[i].load(Ordering::Relaxed)),
            cpu: std::array::from_fn(|i| self.cpu_nanos[i].load(Ordering::Relaxed)),
            bytes: std::array::from_fn(|i| {
                std::array::from_fn(|d| self.bytes[i][d].load(Ordering::Relaxed))
            }),
        }
    }

    /// CPU seconds counted against `part` between snapshot `before` and now.
    pub(crate) fn cpu_since(&self, before: &Snapshot, part: Part) -> f64 {
        self.cpu_nanos[part as usize]
            .load(Ordering::Relaxed)
            .saturating_sub(before.cpu[part as usize]) as f64
            / 1e9
    }

    /// Seconds of `part` between snapshot `before` and now.
    pub(crate) fn since(&self, before: &Snapshot, part: Part) -> f64 {
        self.nanos[part as usize]
            .load(Ordering::Relaxed)
            .saturating_sub(before.wall[part as usize]) as f64
            / 1e9
    }

    /// Runs `f`, counting its time against `part`.
    pub(crate) fn time<T>(&self, part: Part, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = f();
        self.add(part, started.elapsed());
        out
    }

    /// Seconds per part, keyed by name (for the build log); for the steps
    /// timed with their CPU time, also that, as `STEP_cpu`.
    pub(crate) fn seconds(&self) -> std::collections::BTreeMap<String, f64> {
        let mut out = std::collections::BTreeMap::new();
        for &p in &Part::ALL {
            let n = self.nanos[p as usize].load(Ordering::Relaxed);
            out.insert(p.key().to_string(), n as f64 / 1e9);
            let cpu = self.cpu_nanos[p as usize].load(Ordering::Relaxed);
            if cpu > 0 {
                out.insert(format!("{}_cpu", p.key()), cpu as f64 / 1e9);
            }
        }
        out
    }
}

impl IoStats {
    /// Counts `n` bytes read.
    pub fn read(&self, n: u64) {
        self.read.fetch_add(n, Ordering::Relaxed);
        self.profile.count_bytes(0, n);
    }

    /// Counts `n` bytes written.
    pub fn wrote(&self, n: u64) {
        self.written.fetch_add(n, Ordering::Relaxed);
        self.profile.count_bytes(1, n);
    }

    /// Counts `n` calls that read stretches of a chunk.
    pub(crate) fn read_stretches(&self, n: u64) {
        self.stretch_reads.fetch_add(n, Ordering::Relaxed);
    }

    /// Calls so far that read stretches of a chunk.
    pub(crate) fn stretch_reads(&self) -> u64 {
        self.stretch_reads.load(Ordering::Relaxed)
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Appends every pass, as it ends, to the file at `path` (created if
    /// missing; a resumed build adds to what the interrupted one wrote), one
    /// JSON object a line with its partition's name: the build log has the
    /// passes only once the build ends, and a build stopped by a time limit
    /// can be profiled from this file.
    pub fn journal_passes_to(&self, path: &std::path::Path) -> crate::Result<()> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| crate::Error::io("opening the pass journal", path, e))?;
        let end = file
            .metadata()
            .map_err(|e| crate::Error::io("opening the pass journal", path, e))?
            .len();
        *self.journal.lock().unwrap_or_else(|e| e.into_inner()) = Some(Journal {
            path: path.to_path_buf(),
            file,
            end,
            since: end,
            count: 0,
        });
        Ok(())
    }

    /// Adds a pass of `partition` to the timeline, and to the journal.
    pub(crate) fn record_pass(&self, partition: &str, pass: PassRecord) -> crate::Result<()> {
        if let Some(journal) = &mut *self.journal.lock().unwrap_or_else(|e| e.into_inner()) {
            let mut line = serde_json::to_vec(&JournalLine {
                partition,
                pass: &pass,
            })
            .expect("a pass record serialises");
            line.push(b'\n');
            // One write a line: an interrupted build leaves whole lines.
            std::io::Write::write_all(&mut journal.file, &line)
                .map_err(|e| crate::Error::io("appending to the pass journal", &journal.path, e))?;
            journal.end += line.len() as u64;
            journal.count += 1;
            return Ok(());
        }
        self.passes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(pass);
        Ok(())
    }

    /// The passes recorded since the last call (one partition's, when
    /// called after each): where they were journaled, their lines there,
    /// which must stay until the build log is written.
    pub fn take_passes(&self) -> PassTimeline {
        if let Some(journal) = &mut *self.journal.lock().unwrap_or_else(|e| e.into_inner()) {
            let taken = Timeline::Journaled {
                path: journal.path.clone(),
                start: journal.since,
                end: journal.end,
                count: journal.count,
            };
            journal.since = journal.end;
            journal.count = 0;
            return PassTimeline(taken);
        }
        std::mem::take(&mut *self.passes.lock().unwrap_or_else(|e| e.into_inner())).into()
    }

    /// Counts time spent in the pipeline.
    pub fn busy(&self, d: Duration) {
        self.busy_nanos.fetch_add(
            d.as_nanos().min(u128::from(u64::MAX)) as u64,
            Ordering::Relaxed,
        );
    }

    /// Seconds spent in the pipeline so far.
    pub fn busy_seconds(&self) -> f64 {
        self.busy_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Seconds per part of the pipeline (steps' wall time, flusher threads'
    /// busy time, waits), summed over threads where several run at once.
    pub fn profile_seconds(&self) -> std::collections::BTreeMap<String, f64> {
        self.profile.seconds()
    }
}

/// Bytes a process moved to and from storage, as the kernel counts them
/// below the page cache: what the disks really saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StorageIo {
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent to storage (dirty pages written back), less those of files
    /// truncated or deleted before write-back.
    pub write_bytes: u64,
}

impl StorageIo {
    /// This process's counters so far (Linux `/proc/self/io`), if readable.
    pub fn of_process() -> Option<StorageIo> {
        let text = std::fs::read_to_string("/proc/self/io").ok()?;
        let field = |name: &str| -> Option<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))?
                .trim()
                .parse()
                .ok()
        };
        Some(StorageIo {
            read_bytes: field("read_bytes")?,
            write_bytes: field("write_bytes")?
                .saturating_sub(field("cancelled_write_bytes").unwrap_or(0)),
        })
    }
}

/// The process's peak resident memory in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The process's resident memory now in bytes (Linux `VmRSS`), if known.
pub fn resident_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// A field of `/proc/self/status` given in kB, in bytes.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(n: u32) -> PassRecord {
        PassRecord {
            pass: n,
            expander: format!("cpu {n}"),
            seconds: 0.1 * f64::from(n) + 1e-9,
            requests: 1000 + u64::from(n),
            ..PassRecord::default()
        }
    }

    #[test]
    fn journaled_passes_read_back_as_recorded_and_are_not_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal");
        // An interrupted run's lines stay out of this run's timelines.
        std::fs::write(&path, b"{\"partition\":\"old\",\"pass\":7}\n").unwrap();
        let stats = IoStats::default();
        stats.journal_passes_to(&path).unwrap();
        for n in 0..3 {
            stats.record_pass("a", pass(n)).unwrap();
        }
        let a = stats.take_passes();
        let none = stats.take_passes();
        stats.record_pass("b", pass(3)).unwrap();
        let b = stats.take_passes();
        assert!(
            stats.passes.lock().unwrap().is_empty(),
            "journaled passes are not held"
        );
        assert_eq!((a.len(), none.len(), b.len()), (3, 0, 1));
        let json = |t: &PassTimeline| serde_json::to_value(t).unwrap();
        let held = |r: std::ops::Range<u32>| json(&r.map(pass).collect::<Vec<_>>().into());
        assert_eq!(json(&a), held(0..3));
        assert_eq!(json(&b), held(3..4));
        assert_eq!(json(&none), held(0..0));
        // Read back through Deserialize, as `tbforge bench stages` does.
        let back: PassTimeline = serde_json::from_value(json(&a)).unwrap();
        assert_eq!(json(&back), held(0..3));

        // Once in the build log, they are counted, not listed again.
        let mut logged = a.clone();
        logged.logged();
        assert!(logged.is_unlisted() && !a.is_unlisted() && none.is_unlisted());
        assert_eq!(logged.len(), 3);
        assert!(serde_json::to_string(&logged).is_err());

        // A journal cut short or damaged is an error, not a panic.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() - 20]).unwrap();
        let err = serde_json::to_string(&b).unwrap_err().to_string();
        assert!(err.contains("pass journal"), "{err}");
        std::fs::remove_file(&path).unwrap();
        let err = serde_json::to_string(&a).unwrap_err().to_string();
        assert!(err.contains("opening the pass journal"), "{err}");
    }

    #[test]
    fn passes_are_held_without_a_journal() {
        let stats = IoStats::default();
        stats.record_pass("a", pass(1)).unwrap();
        let a = stats.take_passes();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(vec![pass(1)]).unwrap()
        );
        assert!(stats.take_passes().is_empty());
    }
}
