//! The C ABI against the Rust probe API (`tbforge::probe::Tablebase`), on
//! tablebases built here with the library's solver: every index of each
//! (tic-tac-toe in both encodings, Nim with a partition per object count,
//! Connect Four 4x4 whose files store only reachable positions) probed by
//! (partition, rank), and every legal position by text, must give the same
//! outcome, distance, best moves, index and error message; errors on bad
//! arguments and damaged files; many threads on one handle.
//!
//! The library's source is compiled into this test (cargo neither builds
//! nor links a cdylib for tests), so these are the functions the cdylib
//! exports; scripts/c_example.sh links the real library from C.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;
#[path = "../src/lib.rs"]
mod capi;

use capi::{
    tbf_best_moves, tbf_close, tbf_game, tbf_index, tbf_last_error, tbf_open, tbf_outcome,
    tbf_probe, tbf_probe_rank, tbf_result, tbf_status, tbf_tablebase, tbf_version,
};
use tbforge_core::format::{FormatError, ValueEncoding};
use tbforge_core::probe::{probe_value_only, ProbeResult, Tablebase};
use tbforge_core::registry::{open_game, AnyGame, GameVisitor};
use tbforge_core::solve::{build_game, BuildOptions};
use tbforge_core::{Error, Game, Outcome, PartitionId, Rank};

// ---- calling C -------------------------------------------------------------

/// A failed call: its status and `tbf_last_error`'s message.
type Failed = (c_int, String);

fn status(s: tbf_status) -> c_int {
    s as c_int
}

/// The calling thread's last error, through the size query then a copy.
fn last_error() -> String {
    // SAFETY: NULL with length 0 is the documented size query.
    let n = unsafe { tbf_last_error(null_mut(), 0) };
    let mut buf = vec![0xffu8; n + 1];
    // SAFETY: `buf` is a live Vec of exactly the length passed.
    let again = unsafe { tbf_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(again, n);
    let message = CStr::from_bytes_with_nul(&buf).unwrap().to_str().unwrap();
    message.to_owned()
}

/// Ok on `TBF_OK`; else the status and message, which must be one
/// non-empty line.
fn check(code: c_int) -> Result<(), Failed> {
    if code == 0 {
        return Ok(());
    }
    let message = last_error();
    assert!(
        !message.is_empty() && !message.contains(['\n', '\r']),
        "status {code}: {message:?}"
    );
    Err((code, message))
}

fn cstring(text: &str) -> CString {
    CString::new(text).unwrap()
}

/// An open handle, closed on drop.
struct Handle(*mut tbf_tablebase);

// SAFETY: the header promises that any number of threads may use one handle
// at once through the functions taking `const tbf_tablebase *`, which are
// all `Handle` calls while shared; `tbf_close` runs only in `drop`, with the
// handle owned.
unsafe impl Sync for Handle {}

impl Handle {
    fn open(dir: &Path) -> Result<Handle, Failed> {
        let dir = cstring(dir.to_str().unwrap());
        let mut tb = null_mut();
        // SAFETY: `dir` is a live CString and `tb` a local to write to.
        let code = unsafe { tbf_open(dir.as_ptr(), &mut tb) };
        match check(code) {
            Ok(()) => {
                assert!(!tb.is_null());
                Ok(Handle(tb))
            }
            Err(e) => {
                assert!(tb.is_null(), "a failed open leaves the handle NULL");
                Err(e)
            }
        }
    }

    fn probe(&self, text: &str) -> Result<tbf_result, Failed> {
        self.probe_raw(cstring(text).as_bytes_with_nul())
    }

    /// `tbf_probe` on raw bytes ending in NUL (to pass text that is not UTF-8).
    fn probe_raw(&self, text: &[u8]) -> Result<tbf_result, Failed> {
        assert_eq!(text.last(), Some(&0));
        let mut out = std::mem::MaybeUninit::<tbf_result>::uninit();
        // SAFETY: a live handle, a NUL-terminated buffer, and room for one
        // tbf_result that the call writes before we read it (on TBF_OK).
        check(unsafe { tbf_probe(self.0, text.as_ptr().cast(), out.as_mut_ptr()) })?;
        // SAFETY: TBF_OK means `*out` was written.
        Ok(unsafe { out.assume_init() })
    }

    fn probe_rank(&self, partition: u32, rank: u64) -> Result<tbf_result, Failed> {
        let mut out = std::mem::MaybeUninit::<tbf_result>::uninit();
        // SAFETY: a live handle and room for one tbf_result.
        check(unsafe { tbf_probe_rank(self.0, partition, rank, out.as_mut_ptr()) })?;
        // SAFETY: TBF_OK means `*out` was written.
        Ok(unsafe { out.assume_init() })
    }

    fn index(&self, text: &str) -> Result<(u32, u64), Failed> {
        let text = cstring(text);
        let (mut p, mut r) = (u32::MAX, u64::MAX);
        // SAFETY: a live handle, a live CString and two locals to write to.
        check(unsafe { tbf_index(self.0, text.as_ptr(), &mut p, &mut r) })?;
        Ok((p, r))
    }

    /// The best moves through the size query, then a buffer of exactly
    /// the size it gave.
    fn best_moves(&self, text: &str) -> Result<String, Failed> {
        let text = cstring(text);
        let mut needed = 0usize;
        // SAFETY: a live handle and CString; NULL and 0 ask for the size.
        let code = unsafe { tbf_best_moves(self.0, text.as_ptr(), null_mut(), 0, &mut needed) };
        if code != status(tbf_status::TBF_ERR_BUFFER_TOO_SMALL) {
            check(code)?;
            panic!("a size query succeeded: no string is empty enough to fit 0 bytes");
        }
        let mut buf = vec![0xffu8; needed];
        let mut again = 0usize;
        // SAFETY: `buf` is a live Vec of the length passed.
        check(unsafe {
            tbf_best_moves(
                self.0,
                text.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut again,
            )
        })?;
        assert_eq!(again, needed);
        Ok(CStr::from_bytes_with_nul(&buf)
            .expect("the string fills the buffer exactly")
            .to_str()
            .unwrap()
            .to_owned())
    }

    fn game(&self) -> String {
        // SAFETY: a live handle; the string lives as long as it.
        let p = unsafe { tbf_game(self.0) };
        // SAFETY: not NULL for a live handle, NUL-terminated, valid until close.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle came from tbf_open, is closed once, here, and
        // `&mut self` means no other thread uses it.
        unsafe { tbf_close(self.0) }
    }
}

// ---- what the Rust API says ------------------------------------------------

/// The status the header documents for an error of the Rust API.
fn status_of(e: &Error) -> c_int {
    status(match e {
        Error::BadPosition { .. } => tbf_status::TBF_ERR_BAD_POSITION,
        Error::Format(f) => return status_of_format(f),
        Error::Io(_) => tbf_status::TBF_ERR_FILE,
        Error::UnknownGame(_) => tbf_status::TBF_ERR_UNSUPPORTED,
        other => panic!("no probe should fail with {other}"),
    })
}

fn status_of_format(e: &FormatError) -> c_int {
    status(match e {
        FormatError::NotInTablebase { .. }
        | FormatError::RankOutOfRange { .. }
        | FormatError::IllegalIndex { .. }
        | FormatError::NotReached { .. } => tbf_status::TBF_ERR_NOT_STORED,
        FormatError::Unsupported(_) => tbf_status::TBF_ERR_UNSUPPORTED,
        _ => tbf_status::TBF_ERR_FILE,
    })
}

fn c_outcome(o: Outcome) -> tbf_outcome {
    match o {
        Outcome::Win => tbf_outcome::TBF_WIN,
        Outcome::Draw => tbf_outcome::TBF_DRAW,
        Outcome::Loss => tbf_outcome::TBF_LOSS,
    }
}

fn c_result(outcome: Outcome, distance: Option<u32>) -> tbf_result {
    tbf_result {
        outcome: c_outcome(outcome),
        has_distance: distance.is_some(),
        distance: distance.unwrap_or(0),
    }
}

/// The C answer must be the Rust answer: equal values, or the documented
/// status with the same message.
fn assert_agree<T: PartialEq + std::fmt::Debug, U>(
    c: Result<T, Failed>,
    rust: Result<U, (c_int, String)>,
    expect: impl FnOnce(U) -> T,
    what: &dyn Fn() -> String,
) {
    match (c, rust) {
        (Ok(c), Ok(r)) => assert_eq!(c, expect(r), "{}", what()),
        (Err(c), Err(r)) => assert_eq!(c, r, "{}", what()),
        (Ok(c), Err(r)) => panic!("{}: C gave {c:?}, Rust failed with {r:?}", what()),
        (Err(c), Ok(_)) => panic!("{}: C failed with {c:?}, Rust succeeded", what()),
    }
}

fn rust_err(e: Error) -> (c_int, String) {
    (status_of(&e), e.to_string())
}

// ---- tablebases ------------------------------------------------------------

/// Builds `name` with `params` in `encoding` into a fresh directory.
fn build(name: &str, params: &[(&str, &str)], encoding: ValueEncoding) -> tempfile::TempDir {
    let params = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let game = open_game(name, &params).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(dir.path());
    opts.encoding = encoding;
    // The three games these tests build, by name: a visitor would make this
    // crate compile the solver for every game (about a minute of CI).
    match game {
        AnyGame::TicTacToe(g) => build_game(&g, &opts),
        AnyGame::Nim(g) => build_game(&g, &opts),
        AnyGame::Connect4(g) => build_game(&g, &opts),
        _ => panic!("these tests build tictactoe, nim and connect4, not {name}"),
    }
    .unwrap();
    dir
}

/// Tic-tac-toe with distances, built once per test binary (several tests
/// read it; none writes to it).
fn tictactoe() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| build("tictactoe", &[], ValueEncoding::Byte))
        .path()
}

fn game_of(tb: &Tablebase) -> AnyGame {
    open_game(&tb.manifest().game, &tb.manifest().params).unwrap()
}

// ---- every position --------------------------------------------------------

/// What one sweep compared, so that a test can tell it compared something.
#[derive(Debug, Default)]
struct Tally {
    by_rank: u64,
    by_text: u64,
    stored: u64,
    not_stored: u64,
    file_errors: u64,
    with_distance: u64,
    outcomes: [u64; 3],
}

/// Compares C and Rust on every index of every partition, a few ranks past
/// each partition's end and one partition past the last, and by text on
/// every position an index names.
struct Sweep<'a> {
    c: &'a Handle,
    rust: &'a Tablebase,
}

impl GameVisitor for Sweep<'_> {
    type Output = Tally;
    fn visit<G: Game>(self, game: &G) -> Tally {
        let Sweep { c, rust } = self;
        let mut tally = Tally::default();
        let mut partitions = game.partitions();
        let past = partitions.iter().map(|p| p.0).max().unwrap() + 1;
        assert!(!rust.has_partition(PartitionId(past)));
        partitions.push(PartitionId(past));
        for p in partitions {
            let size = if p.0 == past {
                1
            } else {
                game.partition_size(p) + 2
            };
            for r in 0..size {
                let (p, r) = (p, Rank(r));
                let what = || format!("{} partition {p} rank {r}", game.info().canonical());
                // The game knows nothing of the partition past the last.
                let pos = (p.0 != past && r.0 < game.partition_size(p))
                    .then(|| game.unrank(p, r))
                    .flatten();

                // By index: the stored value, or for an index storing none
                // the error the Rust text probe gives there (which tells an
                // unreached position from an illegal index).
                let c_rank = c.probe_rank(p.0, r.0);
                let rust_rank = match rust.probe_stored(p, r) {
                    Err(e) => Err((status_of_format(&e), e.to_string())),
                    Ok(s) => match s.outcome {
                        Some(o) => Ok(c_result(o, s.distance)),
                        None => Err(match &pos {
                            Some(pos) => rust_err(rust.probe(game, pos).unwrap_err()),
                            None => {
                                let e = FormatError::IllegalIndex {
                                    partition: p,
                                    rank: r,
                                };
                                (status_of_format(&e), e.to_string())
                            }
                        }),
                    },
                };
                match &c_rank {
                    Ok(v) => {
                        tally.stored += 1;
                        tally.with_distance += u64::from(v.has_distance);
                        tally.outcomes[(v.outcome as i32 + 1) as usize] += 1;
                    }
                    Err((code, _)) if *code == status(tbf_status::TBF_ERR_FILE) => {
                        tally.file_errors += 1
                    }
                    Err(_) => tally.not_stored += 1,
                }
                assert_agree(c_rank, rust_rank, |v| v, &what);
                tally.by_rank += 1;

                // By text: whatever the position's text gives, value, best
                // moves and index alike (a text that does not parse back
                // must fail the same way).
                let Some(pos) = pos else { continue };
                let text = game.format_position(&pos);
                let what = || format!("{what_rank} `{text}`", what_rank = what());
                let rust_probe: Result<ProbeResult, _> = game
                    .parse_position(&text)
                    .and_then(|pos| rust.probe(game, &pos))
                    .map_err(rust_err);
                let rust_moves = rust_probe.clone().map(|r| r.best_moves.join(" "));
                // tbf_probe reads the position's own value, as
                // probe_value_only does (no successor).
                let rust_value = game
                    .parse_position(&text)
                    .and_then(|pos| probe_value_only(rust, game, &pos))
                    .map_err(rust_err);
                assert_agree(
                    c.probe(&text),
                    rust_value,
                    |s| c_result(s.outcome.expect("an error otherwise"), s.distance),
                    &what,
                );
                assert_agree(c.best_moves(&text), rust_moves, |m| m, &what);
                let rust_index = game
                    .parse_position(&text)
                    .map(|pos| game.rank(&pos))
                    .map_err(rust_err);
                assert_agree(c.index(&text), rust_index, |(p, r)| (p.0, r.0), &what);
                tally.by_text += 1;
            }
        }
        tally
    }
}

fn sweep(dir: &Path) -> Tally {
    let c = Handle::open(dir).unwrap();
    let rust = Tablebase::open(dir).unwrap();
    assert_eq!(c.game(), rust.manifest().canonical_game());
    let tally = game_of(&rust).visit(Sweep { c: &c, rust: &rust });
    assert!(tally.by_text > 0 && tally.stored > 0, "{tally:?}");
    tally
}

#[test]
fn tictactoe_every_position_agrees() {
    let t = sweep(tictactoe());
    // Tic-tac-toe has wins, draws, losses and impossible boards.
    assert!(
        t.outcomes.iter().all(|&n| n > 0) && t.not_stored > 0,
        "{t:?}"
    );
    assert_eq!(t.with_distance, t.outcomes[0] + t.outcomes[2], "{t:?}");
}

#[test]
fn tictactoe_win_draw_loss_only_agrees() {
    let dir = build("tictactoe", &[], ValueEncoding::Wdl2);
    let t = sweep(dir.path());
    assert_eq!(t.with_distance, 0, "2-bit files store no distance: {t:?}");
}

#[test]
fn nim_every_position_of_every_partition_agrees() {
    let dir = build("nim", &[("heaps", "1,3,5,7")], ValueEncoding::Byte);
    let rust = Tablebase::open(dir.path()).unwrap();
    assert!(
        rust.manifest().files.len() > 1,
        "Nim has a partition per total"
    );
    sweep(dir.path());
}

#[test]
fn connect4_4x4_every_position_agrees() {
    let dir = build(
        "connect4",
        &[("width", "4"), ("height", "4")],
        ValueEncoding::Byte,
    );
    let t = sweep(dir.path());
    // Layered: positions play never reaches are stored as nothing.
    assert!(t.not_stored > 0, "{t:?}");
}

// ---- errors ----------------------------------------------------------------

#[test]
fn null_arguments_name_the_function_and_the_argument() {
    let tb = Handle::open(tictactoe()).unwrap();
    let tb = tb.0 as *const tbf_tablebase;
    let pos = cstring("x........");
    let pos = pos.as_ptr();
    let mut out = std::mem::MaybeUninit::<tbf_result>::uninit();
    let out = out.as_mut_ptr();
    let (mut p, mut r, mut needed) = (0u32, 0u64, 0usize);
    let (p, r, needed) = (
        &mut p as *mut u32,
        &mut r as *mut u64,
        &mut needed as *mut usize,
    );
    let mut buf = [0 as c_char; 8];
    let buf = buf.as_mut_ptr();
    let mut handle = null_mut();
    let handle = &mut handle as *mut *mut tbf_tablebase;
    type Call<'a> = (&'a str, &'a str, Box<dyn Fn() -> c_int + 'a>);
    // SAFETY (every call): each pointer is NULL, which is under test, or
    // points to a live local or CString of the length passed.
    let calls: Vec<Call> = vec![
        (
            "tbf_open",
            "dir",
            Box::new(|| unsafe { tbf_open(null(), handle) }),
        ),
        (
            "tbf_open",
            "out",
            Box::new(|| unsafe { tbf_open(pos, null_mut()) }),
        ),
        (
            "tbf_probe",
            "tb",
            Box::new(|| unsafe { tbf_probe(null(), pos, out) }),
        ),
        (
            "tbf_probe",
            "position",
            Box::new(|| unsafe { tbf_probe(tb, null(), out) }),
        ),
        (
            "tbf_probe",
            "out",
            Box::new(|| unsafe { tbf_probe(tb, pos, null_mut()) }),
        ),
        (
            "tbf_probe_rank",
            "tb",
            Box::new(|| unsafe { tbf_probe_rank(null(), 0, 0, out) }),
        ),
        (
            "tbf_probe_rank",
            "out",
            Box::new(|| unsafe { tbf_probe_rank(tb, 0, 0, null_mut()) }),
        ),
        (
            "tbf_index",
            "tb",
            Box::new(|| unsafe { tbf_index(null(), pos, p, r) }),
        ),
        (
            "tbf_index",
            "position",
            Box::new(|| unsafe { tbf_index(tb, null(), p, r) }),
        ),
        (
            "tbf_index",
            "partition",
            Box::new(|| unsafe { tbf_index(tb, pos, null_mut(), r) }),
        ),
        (
            "tbf_index",
            "rank",
            Box::new(|| unsafe { tbf_index(tb, pos, p, null_mut()) }),
        ),
        (
            "tbf_best_moves",
            "tb",
            Box::new(|| unsafe { tbf_best_moves(null(), pos, buf, 8, needed) }),
        ),
        (
            "tbf_best_moves",
            "position",
            Box::new(|| unsafe { tbf_best_moves(tb, null(), buf, 8, needed) }),
        ),
        (
            "tbf_best_moves",
            "buf",
            Box::new(|| unsafe { tbf_best_moves(tb, pos, null_mut(), 8, needed) }),
        ),
    ];
    for (func, arg, call) in calls {
        let (code, message) = check(call()).unwrap_err();
        assert_eq!(
            code,
            status(tbf_status::TBF_ERR_NULL_ARGUMENT),
            "{func} {arg}"
        );
        let start = format!("{func}: argument `{arg}` is NULL; pass ");
        assert!(message.starts_with(&start), "{message}");
    }
    // SAFETY: `handle` points to a live local; the rest are NULL or
    // pointers as above.
    unsafe {
        assert!((*handle).is_null(), "a failed open writes NULL");
        assert!(tbf_game(null()).is_null());
        assert!(last_error().starts_with("tbf_game: argument `tb` is NULL; pass "));
        // Closing NULL is allowed, and so is the size query without `needed`.
        tbf_close(null_mut());
        let code = tbf_best_moves(tb, pos, null_mut(), 0, null_mut());
        assert_eq!(code, status(tbf_status::TBF_ERR_BUFFER_TOO_SMALL));
    }
}

#[test]
fn bad_utf8_and_malformed_positions() {
    let tb = Handle::open(tictactoe()).unwrap();
    let rust = Tablebase::open(tictactoe()).unwrap();
    let game = game_of(&rust);

    let (code, message) = tb.probe_raw(b"x\xff.......\0").unwrap_err();
    assert_eq!(code, status(tbf_status::TBF_ERR_UTF8));
    assert!(
        message.starts_with("tbf_probe: argument `position` is not valid UTF-8"),
        "{message}"
    );

    struct Parse<'a>(&'a str);
    impl GameVisitor for Parse<'_> {
        type Output = Error;
        fn visit<G: Game>(self, game: &G) -> Error {
            game.parse_position(self.0).unwrap_err()
        }
    }
    for text in ["", "xyz", "xxxxxxxxx", "x........x", "é........"] {
        let want = rust_err(game.visit(Parse(text)));
        assert_eq!(want.0, status(tbf_status::TBF_ERR_BAD_POSITION));
        assert_eq!(tb.probe(text).unwrap_err(), want, "{text:?}");
        assert_eq!(tb.best_moves(text).unwrap_err(), want, "{text:?}");
        assert_eq!(tb.index(text).unwrap_err(), want, "{text:?}");
    }
}

#[test]
fn last_error_cuts_at_a_character_boundary_and_reports_the_full_length() {
    let tb = Handle::open(tictactoe()).unwrap();
    let (_, message) = tb.probe("é........").unwrap_err();
    let at = message.find('é').expect("the message quotes the text");
    // A buffer ending inside the two bytes of `é`.
    let mut buf = vec![0xffu8; at + 2];
    // SAFETY: `buf` is a live Vec of the length passed.
    let n = unsafe { tbf_last_error(buf.as_mut_ptr().cast(), buf.len()) };
    assert_eq!(n, message.len());
    assert_eq!(&buf[..at], &message.as_bytes()[..at]);
    assert_eq!(buf[at], 0, "cut before `é`, not inside it");
    assert_eq!(buf[at + 1], 0xff, "nothing written past the NUL");
}

#[test]
fn best_moves_buffer_too_small_reports_the_size_and_leaves_the_buffer() {
    let tb = Handle::open(tictactoe()).unwrap();
    let text = cstring("x........");
    let want = tb.best_moves("x........").unwrap();
    assert!(!want.is_empty());
    let mut buf = vec![0x55 as c_char; want.len()]; // one byte short of the NUL
    let mut needed = 0usize;
    // SAFETY: `buf` is a live Vec of the length passed.
    let code = unsafe {
        tbf_best_moves(
            tb.0,
            text.as_ptr(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut needed,
        )
    };
    let (code, message) = check(code).unwrap_err();
    assert_eq!(code, status(tbf_status::TBF_ERR_BUFFER_TOO_SMALL));
    assert_eq!(needed, want.len() + 1);
    assert!(
        message.contains(&format!("at least {needed} bytes")),
        "{message}"
    );
    assert!(buf.iter().all(|&b| b == 0x55), "the buffer is unchanged");
}

#[test]
fn missing_directory_and_damaged_manifest_fail_to_open() {
    let missing = tempfile::tempdir()
        .unwrap()
        .path()
        .join("no-such-tablebase");
    let want = Tablebase::open(&missing).unwrap_err();
    let got = Handle::open(&missing).err().unwrap();
    assert_eq!(got, (status_of_format(&want), want.to_string()));
    assert_eq!(got.0, status(tbf_status::TBF_ERR_FILE));

    let dir = copy_of(tictactoe());
    let manifest = dir.path().join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, &text[..text.len() / 2]).unwrap();
    let want = Tablebase::open(dir.path()).unwrap_err();
    let got = Handle::open(dir.path()).err().unwrap();
    assert_eq!(got, (status_of_format(&want), want.to_string()));
    assert_eq!(got.0, status(tbf_status::TBF_ERR_FILE));

    // A manifest naming a game this library does not know.
    std::fs::write(&manifest, text.replacen("\"tictactoe\"", "\"chess\"", 1)).unwrap();
    let rust = Tablebase::open(dir.path()).unwrap();
    let want = open_game(&rust.manifest().game, &rust.manifest().params).unwrap_err();
    let got = Handle::open(dir.path()).err().unwrap();
    assert_eq!(got, rust_err(want));
    assert_eq!(got.0, status(tbf_status::TBF_ERR_UNSUPPORTED));
}

fn copy_of(dir: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.path().join(e.file_name())).unwrap();
    }
    copy
}

/// The data files of a tablebase directory, largest first.
fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tbf"))
        .collect();
    files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).unwrap().len()));
    files
}

#[test]
fn damaged_and_missing_data_files_fail_like_the_rust_api() {
    let dir = copy_of(tictactoe());
    let rust = Tablebase::open(dir.path()).unwrap();
    let game = game_of(&rust);
    let files = data_files(dir.path());
    let (damaged, removed) = (&files[0], &files[1]);
    // A byte in the middle of the largest file: inside a compressed block.
    let mut bytes = std::fs::read(damaged).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(damaged, bytes).unwrap();
    std::fs::remove_file(removed).unwrap();

    // Every position: those whose probe reads a damaged or missing file
    // fail in C as in Rust; the others still agree.
    let rust = Tablebase::open(dir.path()).unwrap();
    let c = Handle::open(dir.path()).unwrap();
    let tally = game.visit(Sweep { c: &c, rust: &rust });
    assert!(tally.file_errors > 0, "{tally:?}");
    assert!(tally.stored > 0, "the intact files still answer: {tally:?}");
}

// ---- threads ---------------------------------------------------------------

#[test]
fn many_threads_on_one_handle_agree_with_the_rust_api() {
    let dir = tictactoe();
    let rust = Tablebase::open(dir).unwrap();
    struct Expected<'a>(&'a Tablebase);
    type Row = (String, (u32, u64), tbf_result, String);
    impl GameVisitor for Expected<'_> {
        type Output = Vec<Row>;
        fn visit<G: Game>(self, game: &G) -> Vec<Row> {
            let mut rows = Vec::new();
            for p in game.partitions() {
                for r in 0..game.partition_size(p) {
                    let Some(pos) = game.unrank(p, Rank(r)) else {
                        continue;
                    };
                    let Ok(v) = self.0.probe(game, &pos) else {
                        continue;
                    };
                    rows.push((
                        game.format_position(&pos),
                        (p.0, r),
                        c_result(v.outcome, v.distance),
                        v.best_moves.join(" "),
                    ));
                }
            }
            rows
        }
    }
    let rows = game_of(&rust).visit(Expected(&rust));
    assert!(!rows.is_empty());

    let c = Handle::open(dir).unwrap();
    let threads = 8;
    std::thread::scope(|s| {
        for t in 0..threads {
            let (c, rows) = (&c, &rows);
            s.spawn(move || {
                // Each thread starts elsewhere, so that they meet on blocks
                // in different orders.
                let n = rows.len();
                for i in 0..n {
                    let (text, (p, r), value, moves) = &rows[(i + t * n / threads) % n];
                    assert_eq!(c.probe(text).unwrap(), *value, "{text}");
                    assert_eq!(c.probe_rank(*p, *r).unwrap(), *value, "{text}");
                    assert_eq!(c.index(text).unwrap(), (*p, *r), "{text}");
                    if i % 5 == t % 5 {
                        assert_eq!(c.best_moves(text).unwrap(), *moves, "{text}");
                    }
                    // Each thread's last error is its own.
                    if i % 97 == 0 {
                        let bad = format!("thread {t} move {i}");
                        let (_, message) = c.probe(&bad).unwrap_err();
                        assert!(message.contains(&bad), "{message}");
                    }
                }
            });
        }
    });
}

#[test]
fn version_and_game() {
    // SAFETY: tbf_version returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(tbf_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    let tb = Handle::open(tictactoe()).unwrap();
    let rust = Tablebase::open(tictactoe()).unwrap();
    assert_eq!(tb.game(), rust.manifest().canonical_game());
}
