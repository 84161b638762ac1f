//! The C ABI of tbforge's probe API: `libtbforge.so` / `libtbforge.a`, with
//! the header `include/tbforge.h` that cbindgen generates from this file (the
//! doc comments of exported items become the header's comments, so they are
//! written for C programmers).
//!
//! Every exported function checks its pointer arguments for NULL and catches
//! panics, which become `TBF_ERR_INTERNAL` and never unwind into C. They are
//! `unsafe` for Rust callers (the tests) because a non-NULL pointer must still
//! be valid, which no check can tell. Functions return plain `int`, not
//! `tbf_status`: Rust never reads an enum value back from C, where it could
//! lie outside the variants.
#![allow(non_camel_case_types)]
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use tbforge_core::format::{FormatError, Stored};
use tbforge_core::probe::{probe_value_only, ProbeResult, Tablebase};
use tbforge_core::registry::{open_game, AnyGame, GameVisitor};
use tbforge_core::{Error, Forward, Game, Outcome, PartitionId, Rank};

/// An open tablebase directory: what `tbf_open` returns and `tbf_close`
/// frees. Opaque; used only through pointers.
///
/// Thread safety: any number of threads may use one handle at once (every
/// function taking a `const tbf_tablebase *`); the files it opens and its
/// cache of decompressed blocks are shared and locked inside. Only
/// `tbf_close` must not overlap another call on the same handle.
pub struct tbf_tablebase {
    tb: Tablebase,
    game: AnyGame,
    /// `tbf_game`'s answer, kept so that the pointer lives as long as the handle.
    name: CString,
}

// The thread-safety promise in the header rests on this.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<tbf_tablebase>();
};

/// What the functions returning `int` return: `TBF_OK` (0) on success, a
/// negative code on failure; `tbf_last_error` then gives the message.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tbf_status {
    /// Success.
    TBF_OK = 0,
    /// A pointer argument that must not be NULL was NULL.
    TBF_ERR_NULL_ARGUMENT = -1,
    /// A text argument is not valid UTF-8.
    TBF_ERR_UTF8 = -2,
    /// The position text could not be parsed, or names no legal position of
    /// the tablebase's game.
    TBF_ERR_BAD_POSITION = -3,
    /// The tablebase stores no value there: an illegal index, a position the
    /// start does not reach (in tablebases of reachable positions only), a
    /// partition without a file, or a rank beyond the partition's size.
    TBF_ERR_NOT_STORED = -4,
    /// A file or the manifest is missing, unreadable, damaged, of another
    /// format version, or belongs to another tablebase.
    TBF_ERR_FILE = -5,
    /// The tablebase needs what this library does not have (a game or
    /// parameters it does not know).
    TBF_ERR_UNSUPPORTED = -6,
    /// The output buffer is too short; the size it needs is reported.
    TBF_ERR_BUFFER_TOO_SMALL = -7,
    /// A bug in tbforge (a caught panic); please report the message.
    TBF_ERR_INTERNAL = -8,
}

/// The outcome of a position for the side to move. In puzzles, `TBF_WIN`
/// means the goal is reachable and `TBF_DRAW` that it is not.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tbf_outcome {
    /// The side to move wins with best play.
    TBF_WIN = 1,
    /// Neither side can force a win.
    TBF_DRAW = 0,
    /// The side to move loses against best play.
    TBF_LOSS = -1,
}

/// A probe's answer, filled in by `tbf_probe` and `tbf_probe_rank`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct tbf_result {
    /// Win, draw or loss for the side to move.
    pub outcome: tbf_outcome,
    /// Whether `distance` holds a distance: false for draws and in
    /// tablebases that store win/draw/loss only.
    pub has_distance: bool,
    /// Plies to the end under best play (puzzles: moves to the goal) when
    /// `has_distance`; 0 otherwise.
    pub distance: u32,
}

impl tbf_result {
    fn new(outcome: Outcome, distance: Option<u32>) -> tbf_result {
        tbf_result {
            outcome: match outcome {
                Outcome::Win => tbf_outcome::TBF_WIN,
                Outcome::Draw => tbf_outcome::TBF_DRAW,
                Outcome::Loss => tbf_outcome::TBF_LOSS,
            },
            has_distance: distance.is_some(),
            distance: distance.unwrap_or(0),
        }
    }
}

/// A failure on its way to C: the status and the message `tbf_last_error` gives.
struct Failure(tbf_status, String);

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let status = match &e {
            Error::BadPosition { .. } => tbf_status::TBF_ERR_BAD_POSITION,
            Error::Format(f) => format_status(f),
            Error::Io(_) => tbf_status::TBF_ERR_FILE,
            // Only opening a manifest's game reaches these: its name or
            // parameters are beyond this library.
            Error::UnknownGame(_)
            | Error::BadParam { .. }
            | Error::Hash(_)
            | Error::NotAvailable(_) => tbf_status::TBF_ERR_UNSUPPORTED,
            _ => tbf_status::TBF_ERR_INTERNAL,
        };
        Failure(status, e.to_string())
    }
}

impl From<FormatError> for Failure {
    fn from(e: FormatError) -> Failure {
        Failure(format_status(&e), e.to_string())
    }
}

fn format_status(e: &FormatError) -> tbf_status {
    match e {
        FormatError::NotInTablebase { .. }
        | FormatError::RankOutOfRange { .. }
        | FormatError::IllegalIndex { .. }
        | FormatError::NotReached { .. } => tbf_status::TBF_ERR_NOT_STORED,
        FormatError::Unsupported(_) => tbf_status::TBF_ERR_UNSUPPORTED,
        _ => tbf_status::TBF_ERR_FILE,
    }
}

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(message: &str) {
    // C programs print the message as one line; an OS error's text could
    // hold a line break. `try_with`: a call from a thread-local destructor,
    // after ours is gone, must not panic (a panic here would abort).
    let one_line = message.replace(['\n', '\r'], " ");
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = one_line);
}

/// Runs `f`, turning a failure or a panic into its status and the thread's
/// last error.
fn guard(f: impl FnOnce() -> Result<(), Failure>) -> c_int {
    let failure = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return tbf_status::TBF_OK as c_int,
        Ok(Err(failure)) => failure,
        Err(panic) => panic_failure(panic),
    };
    set_last_error(&failure.1);
    failure.0 as c_int
}

fn panic_failure(panic: Box<dyn std::any::Any + Send>) -> Failure {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    Failure(
        tbf_status::TBF_ERR_INTERNAL,
        format!("internal error in tbforge: {what}; please report it with the call that caused it"),
    )
}

/// The failure for a NULL `arg` of `func`, which should have been `wanted`.
fn null(func: &str, arg: &str, wanted: &str) -> Failure {
    Failure(
        tbf_status::TBF_ERR_NULL_ARGUMENT,
        format!("{func}: argument `{arg}` is NULL; pass {wanted}"),
    )
}

/// The text behind `ptr`, argument `arg` of `func`.
///
/// # Safety
///
/// `ptr` is NULL or points to a NUL-terminated string that stays valid and
/// unchanged for `'a`.
unsafe fn text<'a>(ptr: *const c_char, func: &str, arg: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(null(
            func,
            arg,
            "a NUL-terminated position in the game's notation",
        ));
    }
    // SAFETY: `ptr` is not NULL, and this function's contract makes it a
    // NUL-terminated string valid and unchanged for `'a`.
    let c = unsafe { CStr::from_ptr(ptr) };
    c.to_str().map_err(|e| {
        Failure(
            tbf_status::TBF_ERR_UTF8,
            format!("{func}: argument `{arg}` is not valid UTF-8 ({e}); pass UTF-8 text"),
        )
    })
}

/// The handle behind `tb`, argument of `func`.
///
/// # Safety
///
/// `tb` is NULL or came from `tbf_open`, and `tbf_close` does not run on it
/// during `'a`.
unsafe fn handle<'a>(tb: *const tbf_tablebase, func: &str) -> Result<&'a tbf_tablebase, Failure> {
    if tb.is_null() {
        return Err(null(func, "tb", "the handle tbf_open returned"));
    }
    // SAFETY: `tb` is not NULL, so by the contract it is a live `Box` from
    // `tbf_open` for `'a`; shared references from many threads are fine
    // because the handle is Sync and nothing mutates it through a pointer.
    Ok(unsafe { &*tb })
}

/// Stores `value` through `out`.
///
/// # Safety
///
/// `out` is not NULL and points to writable memory for one aligned `T`.
unsafe fn write_out<T: Copy>(out: *mut T, value: T) {
    // SAFETY: as the contract says; `write` neither reads nor drops the old
    // contents, which may be uninitialised.
    unsafe { out.write(value) }
}

/// Copies `bytes` and a terminating NUL into `buf`.
///
/// # Safety
///
/// `buf` is not NULL and points to at least `bytes.len() + 1` writable bytes
/// that do not overlap `bytes`.
unsafe fn copy_out(bytes: &[u8], buf: *mut c_char) {
    debug_assert!(!buf.is_null());
    // SAFETY: as the contract says.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len());
        *buf.add(bytes.len()) = 0;
    }
}

/// Probes a position given as text on the handle's game.
struct ProbeText<'a> {
    tb: &'a Tablebase,
    text: &'a str,
}

impl GameVisitor for ProbeText<'_> {
    type Output = tbforge_core::Result<ProbeResult>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let pos = game.parse_position(self.text)?;
        self.tb.probe(game, &pos)
    }
}

/// The whole analysis of a position: its value, every move's and the best.
fn probe_text(tb: &tbf_tablebase, position: &str) -> Result<ProbeResult, Failure> {
    Ok(tb.game.visit(ProbeText {
        tb: &tb.tb,
        text: position,
    })?)
}

/// A position's own value: one block read, no successor (the handle's game
/// is the tablebase's, checked when it was opened).
struct ValueOfText<'a> {
    tb: &'a Tablebase,
    text: &'a str,
}

impl GameVisitor for ValueOfText<'_> {
    type Output = tbforge_core::Result<Stored>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let pos = game.parse_position(self.text)?;
        probe_value_only(self.tb, game, &pos)
    }
}

/// Opens the tablebase in directory `dir` (a NUL-terminated path, e.g.
/// "tablebases/tictactoe"): reads and checks its manifest and makes the
/// game it names; the data files are opened and checked when first probed.
/// Decompressed blocks are cached (256 blocks of 64 KiB at most). On
/// success `*out` receives the handle to pass to the other functions and
/// finally to `tbf_close`.
///
/// Returns `TBF_OK`, or a negative `tbf_status` (`*out` is then set to
/// NULL when `out` is not NULL, and `tbf_last_error` says why):
/// `TBF_ERR_NULL_ARGUMENT` when `dir` or `out` is NULL, `TBF_ERR_FILE` for
/// a missing directory or manifest or a damaged one, `TBF_ERR_UNSUPPORTED`
/// for a game or parameters this library does not know.
///
/// # Safety
///
/// `dir` is NULL or a NUL-terminated string; `out` is NULL or points to a
/// writable `tbf_tablebase *`; both valid during the call.
#[no_mangle]
pub unsafe extern "C" fn tbf_open(dir: *const c_char, out: *mut *mut tbf_tablebase) -> c_int {
    if !out.is_null() {
        // SAFETY: `out` is not NULL, so by the contract it is writable.
        unsafe { write_out(out, std::ptr::null_mut()) };
    }
    guard(|| {
        if dir.is_null() {
            return Err(null(
                "tbf_open",
                "dir",
                "the path of a tablebase directory (the one holding manifest.json)",
            ));
        }
        if out.is_null() {
            return Err(null("tbf_open", "out", "a pointer to a tbf_tablebase *"));
        }
        // SAFETY: `dir` is not NULL, so by the contract it is a
        // NUL-terminated string valid during the call.
        let bytes = unsafe { CStr::from_ptr(dir) }.to_bytes();
        let path = path_from_bytes(bytes)?;
        let tb = Tablebase::open(&path)?;
        let manifest = tb.manifest();
        let game = open_game(&manifest.game, &manifest.params)?;
        game.visit(CheckGame(&tb))?;
        let name = CString::new(manifest.canonical_game()).map_err(|_| {
            Failure(
                tbf_status::TBF_ERR_FILE,
                format!(
                    "manifest in {}: the game's name holds a NUL byte; rebuild the tablebase",
                    path.display()
                ),
            )
        })?;
        let handle = Box::into_raw(Box::new(tbf_tablebase { tb, game, name }));
        // SAFETY: `out` is not NULL (checked above), so by the contract it
        // is writable; the caller owns the box from here on.
        unsafe { write_out(out, handle) };
        Ok(())
    })
}

/// Checks once, at open, that the manifest's game is the game the files hold.
struct CheckGame<'a>(&'a Tablebase);

impl GameVisitor for CheckGame<'_> {
    type Output = Result<(), FormatError>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        self.0.check_game(game)
    }
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8]) -> Result<PathBuf, Failure> {
    // Unix paths are bytes: a directory whose name is not UTF-8 still opens.
    use std::os::unix::ffi::OsStrExt;
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> Result<PathBuf, Failure> {
    std::str::from_utf8(bytes).map(PathBuf::from).map_err(|e| {
        Failure(
            tbf_status::TBF_ERR_UTF8,
            format!("tbf_open: argument `dir` is not valid UTF-8 ({e}); pass the path as UTF-8"),
        )
    })
}

/// Closes a handle from `tbf_open` and frees everything it holds. NULL is
/// ignored.
///
/// # Safety
///
/// `tb` is NULL or a handle from `tbf_open` not closed before; no other
/// thread uses it during the call, and no one after it.
#[no_mangle]
pub unsafe extern "C" fn tbf_close(tb: *mut tbf_tablebase) {
    if tb.is_null() {
        return;
    }
    // SAFETY: `tb` is not NULL, so by the contract it came from `tbf_open`
    // (`Box::into_raw`), is not closed yet and is used by no one else: this
    // is the one owner taking the box back.
    let handle = unsafe { Box::from_raw(tb) };
    // Dropping closes files; a panic there must not cross into C.
    if let Err(panic) = catch_unwind(AssertUnwindSafe(move || drop(handle))) {
        set_last_error(&panic_failure(panic).1);
    }
}

/// The game and parameters the tablebase was built for, as `tbforge info`
/// names them (e.g. "connect4:height=4,width=4", or "tictactoe"): a
/// NUL-terminated string owned by the handle, valid until `tbf_close`.
///
/// Returns NULL when `tb` is NULL.
///
/// # Safety
///
/// `tb` is NULL or a handle from `tbf_open` that is not being closed.
#[no_mangle]
pub unsafe extern "C" fn tbf_game(tb: *const tbf_tablebase) -> *const c_char {
    // SAFETY: the contract is `handle`'s.
    match unsafe { handle(tb, "tbf_game") } {
        // The CString lives in the handle, so the pointer lives until `tbf_close`.
        Ok(tb) => tb.name.as_ptr(),
        Err(failure) => {
            set_last_error(&failure.1);
            std::ptr::null()
        }
    }
}

/// Probes `position`, a NUL-terminated UTF-8 position in the game's
/// notation (the notation `tbforge probe` and `tbforge games` describe),
/// and stores its outcome and distance in `*out`. It reads the position's
/// own value alone (one cached block; in engine files also the successors
/// that resolve a don't-care value), not every move's as `tbforge probe`
/// and `tbf_best_moves` do.
///
/// Returns `TBF_OK`, or a negative `tbf_status` (`*out` is then unchanged
/// and `tbf_last_error` says why): `TBF_ERR_NULL_ARGUMENT` when `tb`,
/// `position` or `out` is NULL, `TBF_ERR_UTF8`, `TBF_ERR_BAD_POSITION` for
/// text that names no legal position, `TBF_ERR_NOT_STORED` for a position
/// the tablebase does not hold, `TBF_ERR_FILE` for missing, unreadable or
/// damaged files.
///
/// Thread-safe: many threads may probe one handle at once.
///
/// # Safety
///
/// `tb` is NULL or a handle from `tbf_open` that is not being closed;
/// `position` is NULL or a NUL-terminated string; `out` is NULL or points
/// to a writable `tbf_result`; all valid during the call.
#[no_mangle]
pub unsafe extern "C" fn tbf_probe(
    tb: *const tbf_tablebase,
    position: *const c_char,
    out: *mut tbf_result,
) -> c_int {
    guard(|| {
        // SAFETY: the contracts of `handle` and `text` are this function's.
        let (tb, position) = unsafe {
            (
                handle(tb, "tbf_probe")?,
                text(position, "tbf_probe", "position")?,
            )
        };
        if out.is_null() {
            return Err(null("tbf_probe", "out", "a pointer to a tbf_result"));
        }
        let r = tb.game.visit(ValueOfText {
            tb: &tb.tb,
            text: position,
        })?;
        let outcome = r.outcome.ok_or_else(|| {
            Failure(
                tbf_status::TBF_ERR_NOT_STORED,
                format!("tbf_probe: `{position}` is not stored in the tablebase"),
            )
        })?;
        // SAFETY: `out` is not NULL, so by the contract it is writable.
        unsafe { write_out(out, tbf_result::new(outcome, r.distance)) };
        Ok(())
    })
}

/// Parses a position's text (as for `tbf_index`) and gives its index.
struct Index<'a>(&'a str);

impl GameVisitor for Index<'_> {
    type Output = tbforge_core::Result<(PartitionId, Rank)>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        Ok(game.rank(&game.parse_position(self.0)?))
    }
}

/// Stores the index of `position` (a NUL-terminated UTF-8 position in the
/// game's notation) in the tablebase's perfect hash: its partition in
/// `*partition` and its rank inside the partition in `*rank`, the pair that
/// `tbf_probe_rank` takes and `tbforge probe` prints. Reads no file. In
/// games indexed by symmetry class, the positions of one class share an
/// index.
///
/// Returns `TBF_OK`, or a negative `tbf_status` (the outputs are then
/// unchanged): `TBF_ERR_NULL_ARGUMENT` when any pointer is NULL,
/// `TBF_ERR_UTF8`, `TBF_ERR_BAD_POSITION`.
///
/// Thread-safe.
///
/// # Safety
///
/// `tb` is NULL or a handle from `tbf_open` that is not being closed;
/// `position` is NULL or a NUL-terminated string; `partition` and `rank`
/// are NULL or point to a writable `uint32_t` and `uint64_t`; all valid
/// during the call.
#[no_mangle]
pub unsafe extern "C" fn tbf_index(
    tb: *const tbf_tablebase,
    position: *const c_char,
    partition: *mut u32,
    rank: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the contracts of `handle` and `text` are this function's.
        let (tb, position) = unsafe {
            (
                handle(tb, "tbf_index")?,
                text(position, "tbf_index", "position")?,
            )
        };
        if partition.is_null() {
            return Err(null("tbf_index", "partition", "a pointer to a uint32_t"));
        }
        if rank.is_null() {
            return Err(null("tbf_index", "rank", "a pointer to a uint64_t"));
        }
        let (p, r) = tb.game.visit(Index(position))?;
        // SAFETY: neither is NULL, so by the contract both are writable.
        unsafe {
            write_out(partition, p.0);
            write_out(rank, r.0);
        }
        Ok(())
    })
}

/// The error for an index that stores no position: whether it is illegal,
/// or legal but never reached from the start (as the text probe says).
struct Unstored(PartitionId, Rank);

/// The value of index (`partition`, `rank`) of an engine directory, resolved.
struct Resolved<'a>(&'a Tablebase, PartitionId, Rank);

impl GameVisitor for Resolved<'_> {
    type Output = Result<tbforge_core::format::Stored, FormatError>;
    fn visit<G: Game>(self, game: &G) -> Self::Output {
        let Resolved(tb, partition, rank) = self;
        match game.unrank(partition, rank) {
            Some(pos) => tb.probe_position(game, &pos),
            None => Ok(tbforge_core::format::Stored {
                outcome: None,
                distance: None,
                value: None,
            }),
        }
    }
}

impl GameVisitor for Unstored {
    type Output = FormatError;
    fn visit<G: Game>(self, game: &G) -> FormatError {
        let Unstored(partition, rank) = self;
        if matches!(game.forward(partition), Forward::Layer(_))
            && game.unrank(partition, rank).is_some()
        {
            FormatError::NotReached { partition, rank }
        } else {
            FormatError::IllegalIndex { partition, rank }
        }
    }
}

/// Reads the value stored at index (`partition`, `rank`) of the perfect
/// hash (see `tbf_index`) into `*out`: one block look-up, the fast path for
/// engines that keep indices. It neither parses text nor reads successors,
/// except in engine files (FORMAT.md, "Engine files"), where it unranks the
/// index and resolves its value by the one-ply search.
///
/// Returns `TBF_OK` or a negative `tbf_status` (`*out` is then unchanged):
/// `TBF_ERR_NULL_ARGUMENT`, `TBF_ERR_NOT_STORED` for an illegal or
/// unreached index, a partition without a file or a rank out of range,
/// `TBF_ERR_FILE` for missing, unreadable or damaged files.
///
/// Thread-safe.
///
/// # Safety
///
/// `tb` is NULL or a handle from `tbf_open` that is not being closed;
/// `out` is NULL or points to a writable `tbf_result`; both valid during
/// the call.
#[no_mangle]
pub unsafe extern "C" fn tbf_probe_rank(
    tb: *const tbf_tablebase,
    partition: u32,
    rank: u64,
    out: *mut tbf_result,
) -> c_int {
    guard(|| {
        // SAFETY: the contract of `handle` is this function's.
        let tb = unsafe { handle(tb, "tbf_probe_rank")? };
        if out.is_null() {
            return Err(null("tbf_probe_rank", "out", "a pointer to a tbf_result"));
        }
        let (p, r) = (PartitionId(partition), Rank(rank));
        let mut stored = tb.tb.probe_stored(p, r)?;
        // Engine files store don't-care values that the position's one-ply
        // search resolves: unrank, then probe the position.
        if tb.tb.is_engine() && stored.outcome.is_some() {
            stored = tb.game.visit(Resolved(&tb.tb, p, r))?;
        }
        let Some(outcome) = stored.outcome else {
            return Err(tb.game.visit(Unstored(p, r)).into());
        };
        // SAFETY: `out` is not NULL, so by the contract it is writable.
        unsafe { write_out(out, tbf_result::new(outcome, stored.distance)) };
        Ok(())
    })
}

/// Writes the best moves of `position` (see `tbf_probe`) into `buf` as a
/// NUL-terminated string: the moves in the game's notation, separated by
/// single spaces, in the game's move order; the empty string when there is
/// none (the game is over, or a puzzle position cannot reach the goal).
/// Best moves keep the optimal value: when winning, the quickest win; when
/// losing, the slowest loss; when drawing, the draw.
///
/// Buffer protocol: `buf` must point to `len` writable bytes (it may be
/// NULL when `len` is 0). When `needed` is not NULL, `*needed` receives the
/// size the string takes including its NUL, both on success and on
/// `TBF_ERR_BUFFER_TOO_SMALL`; so a call with `buf` NULL and `len` 0 asks
/// for the size.
///
/// Returns `TBF_OK`; `TBF_ERR_BUFFER_TOO_SMALL` when `len` is less than
/// that size (`buf` is then unchanged: call again with a larger buffer); or
/// another negative `tbf_status` as for `tbf_probe`.
///
/// Thread-safe.
///
/// # Safety
///
/// `tb` is NULL or a handle from `tbf_open` that is not being closed;
/// `position` is NULL or a NUL-terminated string; `buf` is NULL or points
/// to `len` writable bytes; `needed` is NULL or points to a writable
/// `size_t`; all valid during the call.
#[no_mangle]
pub unsafe extern "C" fn tbf_best_moves(
    tb: *const tbf_tablebase,
    position: *const c_char,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: the contracts of `handle` and `text` are this function's.
        let (tb, position) = unsafe {
            (
                handle(tb, "tbf_best_moves")?,
                text(position, "tbf_best_moves", "position")?,
            )
        };
        if buf.is_null() && len > 0 {
            return Err(null(
                "tbf_best_moves",
                "buf",
                "a buffer of `len` bytes (or NULL with `len` 0 to ask for the size)",
            ));
        }
        let moves = probe_text(tb, position)?.best_moves.join(" ");
        let size = moves.len() + 1;
        if !needed.is_null() {
            // SAFETY: `needed` is not NULL, so by the contract it is writable.
            unsafe { write_out(needed, size) };
        }
        if len < size {
            return Err(Failure(
                tbf_status::TBF_ERR_BUFFER_TOO_SMALL,
                format!("tbf_best_moves: the best moves take {size} bytes with their NUL, `len` is {len}; call again with a buffer of at least {size} bytes"),
            ));
        }
        // SAFETY: `len >= size >= 1`, so `buf` is not NULL and by the
        // contract holds `len >= moves.len() + 1` writable bytes; `moves` is
        // ours, so they do not overlap.
        unsafe { copy_out(moves.as_bytes(), buf) };
        Ok(())
    })
}

/// Copies the message of the calling thread's last failure into `buf`: one
/// line of text without a line break that names what is wrong and, where
/// there is one, the fix. The copy is NUL-terminated and cut short (at a
/// UTF-8 character boundary) to fit `len` bytes; nothing is written when
/// `buf` is NULL or `len` is 0. Each thread has its own last error, and
/// successful calls leave it as it was (check the status first).
///
/// Returns the whole message's length in bytes without the NUL (0 when no
/// call on this thread has failed), as `snprintf` does: a return value of
/// `len` or more means the copy was cut short; call again with a buffer of
/// the return value plus one.
///
/// # Safety
///
/// `buf` is NULL or points to `len` writable bytes, valid during the call.
#[no_mangle]
pub unsafe extern "C" fn tbf_last_error(buf: *mut c_char, len: usize) -> usize {
    let copied = catch_unwind(AssertUnwindSafe(|| {
        LAST_ERROR
            .try_with(|e| {
                let message = e.borrow();
                if !buf.is_null() && len > 0 {
                    let mut end = message.len().min(len - 1);
                    while !message.is_char_boundary(end) {
                        end -= 1;
                    }
                    // SAFETY: `buf` is not NULL, so by the contract it holds
                    // `len >= end + 1` writable bytes, apart from `message`.
                    unsafe { copy_out(&message.as_bytes()[..end], buf) };
                }
                message.len()
            })
            .unwrap_or(0)
    }));
    copied.unwrap_or(0)
}

/// The library's version, e.g. "0.1.0": a static NUL-terminated string,
/// never freed.
#[no_mangle]
pub extern "C" fn tbf_version() -> *const c_char {
    VERSION.as_ptr()
}

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => panic!("the version holds a NUL"),
    };

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        let mut buf = [0u8; 512];
        // SAFETY: `buf` is a writable local array of the length passed.
        let n = unsafe { tbf_last_error(buf.as_mut_ptr().cast(), buf.len()) };
        assert!(n < buf.len());
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn a_panic_becomes_internal_and_its_message() {
        let status = guard(|| panic!("boom\nsecond line"));
        assert_eq!(status, tbf_status::TBF_ERR_INTERNAL as c_int);
        let message = last_error();
        assert!(message.contains("boom second line"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn success_keeps_the_last_error() {
        let status = guard(|| Err(null("f", "x", "something")));
        assert_eq!(status, tbf_status::TBF_ERR_NULL_ARGUMENT as c_int);
        let before = last_error();
        assert_eq!(guard(|| Ok(())), 0);
        assert_eq!(last_error(), before);
    }
}
