//! Layered forward search (`Forward::Layer` / `Forward::Stop`): a toy game of
//! this file, placed then moved on a ring, built with layered partitions
//! and with every partition plain (`Forward::Expand`), checked against a
//! brute-force search, verified, probed, tabulated by depth, interrupted and
//! resumed, and broken on purpose.
//!
//! The toy is not in the registry, so the command line cannot open it: info,
//! verify and probe are checked through the library functions the command
//! line calls.

use crate::common;

use common::{assert_same, contents};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tbforge::format::{self, FormatError, TableFile};
use tbforge::game::{ForwardTargets, KernelSolve, Params, PartitionKernels, SolvedPartitions};
use tbforge::probe::Tablebase;
use tbforge::solve::{build_game, layered_search, BuildOptions, Layout, Progress};
use tbforge::verify::{verify_game_dir, VerifyOptions};
use tbforge::{Error, Forward, Game, GameInfo, GameKind, PartitionId, Rank, Status};

/// Cells on the ring.
const N: usize = 8;
/// Stones each side places.
const K: u8 = 3;
/// Boards: one base-3 digit per cell (0 empty, 1 X, 2 O).
const BOARDS: u64 = 3u64.pow(N as u32);
/// The movement phase's partition; placement partitions are `1 + 2 t + c`
/// (`t` stones placed, `c`: cell 0 occupied), so that each depth has two.
const MOVES: PartitionId = PartitionId(0);

/// Players alternately place `K` stones each on an `N`-ring (X first), then
/// move a stone to an adjacent empty cell; whoever makes two of their stones
/// adjacent wins, and a player without a move loses. Boards with the right
/// stone counts where both sides have a pair are legal indices no game reaches.
#[derive(Clone, Copy, Debug)]
struct Ring {
    /// Placement partitions `Layer(t)` and the movement partition `Stop`;
    /// otherwise every partition `Expand`.
    layered: bool,
    /// The start may also jump to two stones placed: a move from Layer(0) to
    /// Layer(2), which breaks the layered contract.
    breach: bool,
    /// The movement partition `Expand` beside `Layer` ones: no search serves that.
    mixed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Pos {
    board: [u8; N],
    /// Stones placed, `2 K` in the movement phase.
    placed: u8,
    /// Side to move: 1 X, 2 O.
    side: u8,
}

fn stones(board: &[u8; N], who: u8) -> u8 {
    board.iter().filter(|&&c| c == who).count() as u8
}

fn has_pair(board: &[u8; N], who: u8) -> bool {
    (0..N).any(|i| board[i] == who && board[(i + 1) % N] == who)
}

fn board_rank(board: &[u8; N]) -> u64 {
    board.iter().rev().fold(0, |r, &c| r * 3 + u64::from(c))
}

fn board_of(mut r: u64) -> [u8; N] {
    let mut board = [0; N];
    for c in &mut board {
        *c = (r % 3) as u8;
        r /= 3;
    }
    board
}

impl Ring {
    fn layer_of(&self, p: PartitionId) -> Option<u8> {
        (p != MOVES).then(|| ((p.0 - 1) / 2) as u8)
    }
}

impl Game for Ring {
    type Position = Pos;
    type Move = (u8, u8);

    fn info(&self) -> GameInfo {
        GameInfo {
            id: "layertoy",
            params: Params::new(),
            kind: GameKind::TwoPlayer,
        }
    }

    fn partitions(&self) -> Vec<PartitionId> {
        // Successors first: the movement phase, then placements from the last.
        let mut ps = vec![MOVES];
        for t in (0..2 * u32::from(K)).rev() {
            ps.push(PartitionId(1 + 2 * t + 1));
            ps.push(PartitionId(1 + 2 * t));
        }
        ps
    }

    fn partition_size(&self, p: PartitionId) -> u64 {
        if p == MOVES {
            2 * BOARDS
        } else {
            BOARDS
        }
    }

    fn partition_name(&self, p: PartitionId) -> String {
        match self.layer_of(p) {
            None => "moves".into(),
            Some(t) => format!("place{t}-{}", (p.0 - 1) % 2),
        }
    }

    fn unrank(&self, p: PartitionId, r: Rank) -> Option<Pos> {
        match self.layer_of(p) {
            None => {
                let board = board_of(r.0 % BOARDS);
                let side = 1 + (r.0 / BOARDS) as u8;
                (stones(&board, 1) == K && stones(&board, 2) == K).then_some(Pos {
                    board,
                    placed: 2 * K,
                    side,
                })
            }
            Some(t) => {
                let board = board_of(r.0);
                let ok = stones(&board, 1) == t.div_ceil(2)
                    && stones(&board, 2) == t / 2
                    && u32::from(board[0] != 0) == (p.0 - 1) % 2;
                ok.then_some(Pos {
                    board,
                    placed: t,
                    side: 1 + t % 2,
                })
            }
        }
    }

    fn rank(&self, pos: &Pos) -> (PartitionId, Rank) {
        let b = board_rank(&pos.board);
        if pos.placed == 2 * K {
            (MOVES, Rank(u64::from(pos.side - 1) * BOARDS + b))
        } else {
            let c = u32::from(pos.board[0] != 0);
            (PartitionId(1 + 2 * u32::from(pos.placed) + c), Rank(b))
        }
    }

    fn status(&self, pos: &Pos) -> Status {
        if has_pair(&pos.board, 3 - pos.side) {
            return Status::Lost;
        }
        let mut succ = Vec::new();
        self.successors(pos, &mut succ);
        if succ.is_empty() {
            Status::Lost
        } else {
            Status::Ongoing
        }
    }

    fn successors(&self, pos: &Pos, out: &mut Vec<((u8, u8), Pos)>) {
        let me = pos.side;
        if pos.placed < 2 * K {
            for i in 0..N {
                if pos.board[i] == 0 {
                    let mut board = pos.board;
                    board[i] = me;
                    let placed = pos.placed + 1;
                    let side = if placed == 2 * K { 1 } else { 3 - me };
                    out.push((
                        (i as u8, i as u8),
                        Pos {
                            board,
                            placed,
                            side,
                        },
                    ));
                }
            }
            if self.breach && pos.placed == 0 {
                let mut board = pos.board;
                board[0] = 1;
                board[2] = 2;
                out.push((
                    (0, 2),
                    Pos {
                        board,
                        placed: 2,
                        side: 1,
                    },
                ));
            }
            return;
        }
        for i in 0..N {
            if pos.board[i] != me {
                continue;
            }
            for j in [(i + N - 1) % N, (i + 1) % N] {
                if pos.board[j] == 0 {
                    let mut board = pos.board;
                    board[i] = 0;
                    board[j] = me;
                    out.push((
                        (i as u8, j as u8),
                        Pos {
                            board,
                            placed: pos.placed,
                            side: 3 - me,
                        },
                    ));
                }
            }
        }
    }

    fn start(&self) -> Option<Pos> {
        Some(Pos {
            board: [0; N],
            placed: 0,
            side: 1,
        })
    }

    fn parse_position(&self, text: &str) -> tbforge::Result<Pos> {
        // "placed/side/board", e.g. "2/1/x.o.....".
        let bad = || Error::NotAvailable(format!("bad position {text}"));
        let mut parts = text.split('/');
        let placed: u8 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let side: u8 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let cells: Vec<u8> = parts
            .next()
            .ok_or_else(bad)?
            .chars()
            .map(|c| match c {
                'x' => 1,
                'o' => 2,
                _ => 0,
            })
            .collect();
        let board: [u8; N] = cells.try_into().map_err(|_| bad())?;
        Ok(Pos {
            board,
            placed,
            side,
        })
    }

    fn format_position(&self, pos: &Pos) -> String {
        let cells: String = pos
            .board
            .iter()
            .map(|&c| ['.', 'x', 'o'][c as usize])
            .collect();
        format!("{}/{}/{cells}", pos.placed, pos.side)
    }

    fn format_move(&self, _pos: &Pos, mv: &(u8, u8)) -> String {
        format!("{}-{}", mv.0, mv.1)
    }

    fn forward(&self, p: PartitionId) -> Forward {
        match (self.layered, self.layer_of(p)) {
            (false, _) => Forward::Expand,
            (true, Some(t)) => Forward::Layer(u32::from(t)),
            (true, None) if self.mixed => Forward::Expand,
            (true, None) => Forward::Stop,
        }
    }
}

const LAYERED: Ring = Ring {
    layered: true,
    breach: false,
    mixed: false,
};
const PLAIN: Ring = Ring {
    layered: false,
    breach: false,
    mixed: false,
};

/// Brute force: breadth-first from the start, placements expanded, the
/// movement phase and terminal positions only counted. The layers and the
/// reached (partition, rank) pairs.
fn brute_force(g: &Ring) -> (Vec<u64>, HashSet<(PartitionId, Rank)>) {
    let start = g.start().unwrap();
    let mut seen = HashSet::from([g.rank(&start)]);
    let mut queue = VecDeque::from([(start, 0usize)]);
    let mut layers = vec![1u64];
    let mut succ = Vec::new();
    while let Some((pos, d)) = queue.pop_front() {
        if pos.placed == 2 * K || g.status(&pos) != Status::Ongoing {
            continue;
        }
        succ.clear();
        g.successors(&pos, &mut succ);
        for (_, s) in succ.drain(..) {
            if seen.insert(g.rank(&s)) {
                if layers.len() == d + 1 {
                    layers.push(0);
                }
                layers[d + 1] += 1;
                queue.push_back((s, d + 1));
            }
        }
    }
    (layers, seen)
}

fn build(g: &Ring, out: &Path, tweak: impl FnOnce(&mut BuildOptions)) -> tbforge::Result<()> {
    let mut opts = BuildOptions::new(out);
    tweak(&mut opts);
    build_game(g, &opts).map(|_| ())
}

/// Each partition's stored values.
fn values(g: &Ring, dir: &Path) -> BTreeMap<PartitionId, Vec<u8>> {
    g.partitions()
        .into_iter()
        .map(|p| {
            let path = dir.join(format::file_name(&g.partition_name(p)));
            (
                p,
                TableFile::open_read(&path)
                    .unwrap()
                    .read_all_codes()
                    .unwrap(),
            )
        })
        .collect()
}

#[test]
fn layers_reachable_and_values_against_brute_force_and_a_plain_build() {
    let tmp = tempfile::tempdir().unwrap();
    let (layered, plain) = (tmp.path().join("layered"), tmp.path().join("plain"));
    build(&LAYERED, &layered, |_| {}).unwrap();
    build(&PLAIN, &plain, |_| {}).unwrap();

    let (layers, seen) = brute_force(&LAYERED);
    let m = format::read_manifest(&layered).unwrap();
    assert_eq!(m.layers.as_ref(), Some(&layers));
    assert_eq!(layers.len(), 2 * K as usize + 1, "{layers:?}");
    for f in &m.files {
        let n = seen.iter().filter(|(p, _)| *p == f.partition).count() as u64;
        assert_eq!(f.reachable, Some(n), "{}", f.name);
    }

    let (lv, pv) = (values(&LAYERED, &layered), values(&PLAIN, &plain));
    let mut unreached_legal = 0;
    for p in LAYERED.partitions() {
        let (l, full) = (&lv[&p], &pv[&p]);
        if p == MOVES {
            assert_eq!(l, full, "the Stop partition is solved whole");
            continue;
        }
        for (r, (&a, &b)) in l.iter().zip(full).enumerate() {
            if seen.contains(&(p, Rank(r as u64))) {
                assert_ne!(a, 0, "{p} {r} reached but stored 0");
                assert_eq!(a, b, "{p} {r}: layered and plain builds differ");
            } else {
                assert_eq!(a, 0, "{p} {r} not reached but stored {a}");
                unreached_legal += usize::from(b != 0);
            }
        }
    }
    assert!(unreached_legal > 0, "the toy has no legal unreached index");
}

#[test]
fn verify_probe_and_info_accept_unreached_indices() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tb");
    build(&LAYERED, &dir, |_| {}).unwrap();

    let report = verify_game_dir(
        &LAYERED,
        &dir,
        &VerifyOptions {
            deep: true,
            samples_per_file: 1 << 20,
        },
    )
    .unwrap();
    assert!(
        report.ok,
        "{}",
        tbforge::verify::render_verify_text(&report)
    );
    assert!(report.positions_sampled > 0);

    // Both sides have a pair: legal for the index, reached by no game.
    let tb = Tablebase::open(&dir).unwrap();
    let pos = LAYERED.parse_position("4/1/xx.oo...").unwrap();
    assert!(LAYERED
        .unrank(LAYERED.rank(&pos).0, LAYERED.rank(&pos).1)
        .is_some());
    match tb.probe(&LAYERED, &pos) {
        Err(Error::Format(e @ FormatError::NotReached { .. })) => {
            assert!(
                e.to_string().contains("not reachable from the start"),
                "{e}"
            )
        }
        other => panic!("expected not reached, got {other:?}"),
    }
    // An illegal index is still called illegal.
    let bad = LAYERED.parse_position("4/1/xxxoo...").unwrap();
    assert!(matches!(
        tb.probe(&LAYERED, &bad),
        Err(Error::Format(FormatError::IllegalIndex { .. }))
    ));
    // A reached position probes as usual.
    let r = tb.probe(&LAYERED, &LAYERED.start().unwrap()).unwrap();
    assert!(!r.moves.is_empty());

    let mut info = format::info(&dir).unwrap();
    info.set_depths(|p| match LAYERED.forward(p) {
        Forward::Layer(d) => Some(d),
        _ => None,
    });
    let depths = info.depths.clone().unwrap();
    let layers = info.layers.clone().unwrap();
    assert_eq!(depths.len(), layers.len());
    for d in &depths {
        assert_eq!(d.reached, Some(layers[d.depth as usize]));
        if (d.depth as u8) < 2 * K {
            assert_eq!(d.partitions, 2);
            // Placements reach only placements: every first reach is stored.
            assert_eq!(d.classes, d.reached, "depth {}", d.depth);
            assert_eq!(
                d.positions.unwrap(),
                d.wins.unwrap() + d.draws.unwrap() + d.losses.unwrap()
            );
        } else {
            assert_eq!((d.partitions, d.classes), (0, None));
        }
    }
    let text = format::render_info_text(&info);
    assert!(
        text.contains("depth") && text.contains("partitions"),
        "{text}"
    );
    let json = serde_json::to_value(&info).unwrap();
    assert_eq!(json["depths"].as_array().unwrap().len(), depths.len());
    // Without a layered game, no depths key at all.
    let plain = serde_json::to_value(format::info(&dir).unwrap()).unwrap();
    assert!(plain.get("depths").is_none());
}

/// Kernels of the test: a full solve (unreached indices not 0) where asked,
/// the generic expansion re-done by hand for the partitions of one depth,
/// and a failure on one partition to interrupt a build.
#[derive(Debug, Default)]
struct TestKernels {
    full: BTreeMap<PartitionId, Vec<u8>>,
    expand_depth: Option<u8>,
    expanded: AtomicU64,
    fail_on: Option<PartitionId>,
}

impl PartitionKernels for TestKernels {
    fn solve(
        &self,
        p: PartitionId,
        solved: &SolvedPartitions<'_>,
    ) -> Option<tbforge::Result<KernelSolve>> {
        if Some(p) == self.fail_on {
            return Some(Err(Error::NotAvailable("interrupted on purpose".into())));
        }
        if LAYERED.layer_of(p).is_some() {
            assert!(
                solved.reached().is_some(),
                "{p} offered without its reached bits"
            );
        }
        self.full
            .get(&p)
            .map(|v| Ok(KernelSolve::on_cpu(v.clone(), None)))
    }

    fn expand(
        &self,
        p: PartitionId,
        reached: &[u64],
        next: &ForwardTargets<'_>,
    ) -> Option<tbforge::Result<()>> {
        if LAYERED.layer_of(p) != self.expand_depth {
            return None;
        }
        self.expanded.fetch_add(1, Ordering::Relaxed);
        let mut succ = Vec::new();
        for (w, &word) in reached.iter().enumerate() {
            for b in (0..64).filter(|b| (word >> b) & 1 == 1) {
                let pos = LAYERED.unrank(p, Rank(w as u64 * 64 + b)).unwrap();
                if LAYERED.status(&pos) != Status::Ongoing {
                    continue;
                }
                succ.clear();
                LAYERED.successors(&pos, &mut succ);
                for (_, s) in &succ {
                    let (sp, sr) = LAYERED.rank(s);
                    next.get(sp).unwrap()[(sr.0 / 64) as usize]
                        .fetch_or(1 << (sr.0 % 64), Ordering::Relaxed);
                }
            }
        }
        Some(Ok(()))
    }

    fn name(&self) -> String {
        "test kernels".into()
    }
}

#[test]
fn kernels_give_the_generic_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (generic, with) = (tmp.path().join("generic"), tmp.path().join("kernels"));
    let plain = tmp.path().join("plain");
    build(&LAYERED, &generic, |_| {}).unwrap();
    build(&PLAIN, &plain, |_| {}).unwrap();
    let kernels = Arc::new(TestKernels {
        full: values(&PLAIN, &plain),
        expand_depth: Some(3),
        ..TestKernels::default()
    });
    let k = kernels.clone();
    build(&LAYERED, &with, |o| o.kernels = Some(k)).unwrap();
    assert_eq!(kernels.expanded.load(Ordering::Relaxed), 2);
    assert_same(&contents(&with), &contents(&generic), "kernels vs generic");
}

#[test]
fn interrupted_build_resumes_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (whole, resumed) = (tmp.path().join("whole"), tmp.path().join("resumed"));
    build(&LAYERED, &whole, |_| {}).unwrap();
    let order = LAYERED.partitions();
    for fail_on in [order[3], order[order.len() - 1]] {
        let _ = std::fs::remove_dir_all(&resumed);
        let kernels = Arc::new(TestKernels {
            fail_on: Some(fail_on),
            ..TestKernels::default()
        });
        let err = build(&LAYERED, &resumed, |o| o.kernels = Some(kernels)).unwrap_err();
        assert!(err.to_string().contains("on purpose"), "{err}");
        build(&LAYERED, &resumed, |o| o.resume = true).unwrap();
        assert_same(&contents(&resumed), &contents(&whole), "resumed vs whole");
    }
}

#[test]
fn a_move_skipping_a_layer_is_a_contract_error() {
    let g = Ring {
        layered: true,
        breach: true,
        mixed: false,
    };
    let layout = Layout::new(&g).unwrap();
    let err = layered_search(&g, &layout, None, &Progress::hidden())
        .err()
        .expect("breach not found");
    let text = err.to_string();
    assert!(matches!(err, Error::GameContract { .. }), "{text}");
    assert!(
        text.contains("Layer(0)") && text.contains("Layer(2)"),
        "{text}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let err = build(&g, &tmp.path().join("tb"), |_| {}).unwrap_err();
    assert!(matches!(err, Error::GameContract { .. }), "{err}");
}

#[test]
fn the_external_path_writes_the_in_memory_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let memory = tmp.path().join("memory");
    build(&LAYERED, &memory, |_| {}).unwrap();
    // Chunks of 64 indices: every partition goes through the external path,
    // which solves only reached indices as well.
    let external = tmp.path().join("external");
    build(&LAYERED, &external, |o| {
        o.external_plan = Some(tbforge::pipeline::ExternalPlan {
            chunk: 64,
            lookup_chunk: 64,
            ..tbforge::pipeline::ExternalPlan::for_mem_limit(1 << 20)
        })
    })
    .unwrap();
    assert_same(
        &contents(&external),
        &contents(&memory),
        "external against in memory",
    );
}

#[test]
fn layer_beside_expand_partitions_is_a_contract_error() {
    let g = Ring {
        mixed: true,
        ..LAYERED
    };
    let tmp = tempfile::tempdir().unwrap();
    let err = build(&g, &tmp.path().join("tb"), |_| {}).unwrap_err();
    assert!(matches!(err, Error::GameContract { .. }), "{err}");
    assert!(err.to_string().contains("Expand"), "{err}");
}

#[test]
fn two_bit_files_of_compact_layers_hold_the_byte_files_outcomes() {
    // The byte files are written straight from the compact layers (bitmap
    // and values); two-bit files expand them block by block: both must say
    // the same of every index, unreached ones included.
    let tmp = tempfile::tempdir().unwrap();
    let bytes = tmp.path().join("bytes");
    let wdl = tmp.path().join("wdl");
    build(&LAYERED, &bytes, |_| {}).unwrap();
    build(&LAYERED, &wdl, |o| o.encoding = format::ValueEncoding::Wdl2).unwrap();
    let (b, w) = (values(&LAYERED, &bytes), values(&LAYERED, &wdl));
    let mut reached = 0;
    for (p, byte_values) in &b {
        assert_eq!(byte_values.len(), w[p].len(), "{p}");
        for (i, (&v, &code)) in byte_values.iter().zip(&w[p]).enumerate() {
            let want = format::ValueEncoding::Wdl2
                .encode(GameKind::TwoPlayer, tbforge::Value::from_byte(v));
            assert_eq!(code, want, "{p} index {i}");
            reached += u64::from(v != 0);
        }
    }
    assert!(reached > 0);
    let (mb, mw) = (
        format::read_manifest(&bytes).unwrap(),
        format::read_manifest(&wdl).unwrap(),
    );
    assert_eq!(mb.totals.wins, mw.totals.wins);
    assert_eq!(mb.totals.losses, mw.totals.losses);
    assert_eq!(mb.totals.classes, mw.totals.classes);
}
