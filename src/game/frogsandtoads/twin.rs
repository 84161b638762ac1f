//! The CPU solver of the whole puzzle: breadth-first search from the goal,
//! one value byte per index, on all cores.
//!
//! Every move can be taken back (a slide or jump into the empty cell is
//! undone by the same piece moving back), so a position's distance to the
//! goal is its BFS depth from the goal, and layer `d + 1` is every unseen
//! successor of layer `d`. The generic retrograde solver re-expands every
//! undecided position at each distance (about 60 times on average for the
//! 31-cell board); this expands each once. Layer by layer the decisions do
//! not depend on the order threads see each other's writes (a cell only
//! goes from unseen to `d + 1`), so the bytes are the generic solver's for
//! any thread count: tests/frogsandtoads.rs compares them.

use super::FrogsAndToads;
use crate::game::{KernelSolve, PartitionKernels, SolvedPartitions};
use crate::value::{PartitionId, Value};
use crate::{Error, Result};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Indices per parallel work item.
const CHUNK: usize = 1 << 16;

/// The goal-distance search, offered to the build as the puzzle's kernels.
#[derive(Debug)]
pub struct GoalSearch {
    game: FrogsAndToads,
}

impl GoalSearch {
    /// The search of `game`.
    pub fn new(game: FrogsAndToads) -> Self {
        GoalSearch { game }
    }

    /// Every index's value: `2 + d` at `d` moves from the goal, 1 where the
    /// goal cannot be reached (no such position exists: the test says so).
    pub fn values(&self) -> Result<(Vec<u8>, u32)> {
        let g = &self.game;
        let size = usize::try_from(g.size()).map_err(|_| {
            Error::NotAvailable(format!(
                "{} indices do not fit this machine's memory",
                g.size()
            ))
        })?;
        let values: Vec<AtomicU8> = (0..size)
            .into_par_iter()
            .map(|_| AtomicU8::new(0))
            .collect();
        let goal = g.index(&g.goal()) as usize;
        values[goal].store(byte(0)?, Ordering::Relaxed);
        let mut d = 0u32;
        loop {
            let (here, next) = (byte(d)?, byte(d + 1)?);
            let grew = AtomicBool::new(false);
            values.par_chunks(CHUNK).enumerate().for_each(|(c, chunk)| {
                let base = (c * CHUNK) as u64;
                let mut any = false;
                for (i, v) in chunk.iter().enumerate() {
                    if v.load(Ordering::Relaxed) != here {
                        continue;
                    }
                    g.for_each_move(&g.board(base + i as u64), |_, s| {
                        let t = &values[g.index(&s) as usize];
                        if t.load(Ordering::Relaxed) == 0
                            && t.compare_exchange(0, next, Ordering::Relaxed, Ordering::Relaxed)
                                .is_ok()
                        {
                            any = true;
                        }
                    });
                }
                if any {
                    grew.store(true, Ordering::Relaxed);
                }
            });
            if !grew.load(Ordering::Relaxed) {
                break;
            }
            d += 1;
        }
        let draw = Value::DRAW.to_byte();
        // In place (same layout): a second array of this size may not fit.
        let out = values
            .into_iter()
            .map(|v| match v.into_inner() {
                0 => draw,
                b => b,
            })
            .collect();
        Ok((out, d + 1))
    }
}

/// The byte of distance `d`.
fn byte(d: u32) -> Result<u8> {
    Value::at_distance(d).map(Value::to_byte).ok_or_else(|| {
        Error::NotAvailable(format!("a distance of {d} moves does not fit a value byte"))
    })
}

impl PartitionKernels for GoalSearch {
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<KernelSolve>> {
        // Only the whole partition: a build asking for reached indices alone
        // (none does: the puzzle has no layered partitions) gets the generic solver.
        if p != PartitionId(0) || solved.reached().is_some() {
            return None;
        }
        Some(
            self.values()
                .map(|(values, passes)| KernelSolve::on_cpu(values, Some(passes))),
        )
    }

    fn name(&self) -> String {
        "frogsandtoads goal search on cpu".to_string()
    }
}
