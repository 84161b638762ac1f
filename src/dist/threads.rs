//! A team of threads in one process: one member per GPU of a host
//! (`--gpus`), and the stand-in for MPI ranks in tests of machines without
//! MPI. Members hand each other buffers through shared memory.

use super::{aborted, CommStats, SharedRegion, Team};
use crate::Result;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// One member of a team of threads; [`ThreadTeam::new`] makes all of them.
#[derive(Debug)]
pub struct ThreadTeam {
    rank: usize,
    shared: Arc<Shared>,
    stats: CommStats,
    /// False for a team that stands in for separate processes.
    shares_memory: bool,
}

/// What one member lends the others.
#[derive(Clone, Debug)]
enum Lent {
    Buffer(Arc<Vec<u8>>),
    Words(Arc<Vec<AtomicU64>>),
}

#[derive(Debug)]
struct Shared {
    size: usize,
    round: Mutex<Round>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Round {
    /// Bumped each time every member has arrived at a rendezvous.
    generation: u64,
    arrived: usize,
    /// What each member deposited this round: one buffer per receiver,
    /// taken by the receiver.
    deposits: Vec<Vec<Option<Vec<u8>>>>,
    /// The first failure, by rank and message: every later call fails.
    aborted: Option<(usize, String)>,
    /// What each member lends to the others (a buffer of
    /// [`Team::broadcast_shared`], a [`Team::shared_region`]'s memory), by
    /// lender: a lender clears its own place, so a faster member lending in
    /// the next call never meets it.
    lent: Vec<Option<Lent>>,
}

impl ThreadTeam {
    /// The `size` members of a new team, in rank order: hand one to each thread.
    pub fn new(size: usize) -> Vec<ThreadTeam> {
        Self::members(size, true)
    }

    /// A team whose members exchange only through collectives, as separate
    /// processes (MPI ranks) must: checks that path without MPI.
    pub fn apart(size: usize) -> Vec<ThreadTeam> {
        Self::members(size, false)
    }

    fn members(size: usize, shares_memory: bool) -> Vec<ThreadTeam> {
        let size = size.max(1);
        let shared = Arc::new(Shared {
            size,
            round: Mutex::new(Round {
                deposits: vec![Vec::new(); size],
                lent: vec![None; size],
                ..Round::default()
            }),
            changed: Condvar::new(),
        });
        (0..size)
            .map(|rank| ThreadTeam {
                rank,
                shared: shared.clone(),
                stats: CommStats::default(),
                shares_memory,
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Round> {
        self.shared.round.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Member `root`'s `mine` (given on `root` only) on every member.
    fn lend(&self, root: usize, mine: Option<Lent>) -> Result<Lent> {
        let mut round = self.lock();
        if let Some(m) = mine {
            round.lent[root] = Some(m);
        }
        let round = self.rendezvous(round)?;
        let got = round.lent[root].clone();
        drop(round);
        let got = got.expect("the lender deposits before the rendezvous");
        // Everyone has taken it; the lender clears its place (a faster
        // member lending next uses its own).
        let mut round = self.rendezvous(self.lock())?;
        if self.rank == root {
            round.lent[root] = None;
        }
        Ok(got)
    }

    fn failed(&self, round: &Round) -> Option<crate::Error> {
        round.aborted.as_ref().map(|(rank, message)| {
            aborted(
                self.rank,
                self.shared.size,
                &format!("rank {rank} failed: {message}"),
            )
        })
    }

    /// Waits until every member has arrived here (or one aborted).
    fn rendezvous<'a>(&'a self, mut round: MutexGuard<'a, Round>) -> Result<MutexGuard<'a, Round>> {
        if let Some(e) = self.failed(&round) {
            return Err(e);
        }
        let generation = round.generation;
        round.arrived += 1;
        if round.arrived == self.shared.size {
            round.arrived = 0;
            round.generation += 1;
            self.shared.changed.notify_all();
            return Ok(round);
        }
        while round.generation == generation {
            if let Some(e) = self.failed(&round) {
                return Err(e);
            }
            round = self
                .shared
                .changed
                .wait(round)
                .unwrap_or_else(|e| e.into_inner());
        }
        Ok(round)
    }
}

impl Team for ThreadTeam {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn all_to_all(&self, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        assert_eq!(parts.len(), self.shared.size, "one part per member");
        let started = Instant::now();
        let sent: u64 = parts
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != self.rank)
            .map(|(_, p)| p.len() as u64)
            .sum();
        let mut round = self.lock();
        round.deposits[self.rank] = parts.into_iter().map(Some).collect();
        // Everyone has deposited: take this member's column.
        let mut round = self.rendezvous(round)?;
        let got: Vec<Vec<u8>> = (0..self.shared.size)
            .map(|i| round.deposits[i][self.rank].take().unwrap_or_default())
            .collect();
        // Everyone has taken: the deposits may be overwritten by the next call.
        drop(self.rendezvous(round)?);
        let received = got
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.rank)
            .map(|(_, p)| p.len() as u64)
            .sum();
        self.stats.record(started, sent, received);
        Ok(got)
    }

    fn broadcast_shared(&self, root: usize, mine: Arc<Vec<u8>>) -> Result<Arc<Vec<u8>>> {
        if !self.shares_memory {
            // Standing in for separate processes: through the collective.
            return super::broadcast_copied(self, root, mine);
        }
        assert!(root < self.shared.size, "a member lends");
        let started = Instant::now();
        let len = mine.len() as u64;
        let got = self.lend(root, (self.rank == root).then_some(Lent::Buffer(mine)))?;
        if self.rank == root {
            self.stats
                .record(started, len * (self.shared.size as u64 - 1), 0);
        } else {
            self.stats.record(started, 0, len);
        }
        match got {
            Lent::Buffer(b) => Ok(b),
            Lent::Words(_) => unreachable!("members lend in the same order"),
        }
    }

    fn shared_region(&self, len: usize) -> Result<Option<SharedRegion>> {
        if !self.shares_memory {
            return Ok(None);
        }
        let started = Instant::now();
        let mine = (self.rank == 0).then(|| {
            Lent::Words(Arc::new(
                (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
            ))
        });
        let words = match self.lend(0, mine)? {
            Lent::Words(w) => w,
            Lent::Buffer(_) => unreachable!("members lend in the same order"),
        };
        self.stats.record(started, 0, 0);
        Ok(Some(SharedRegion::from_words(words)))
    }

    fn abort(&self, message: &str) {
        let mut round = self.lock();
        if round.aborted.is_none() {
            round.aborted = Some((self.rank, message.to_string()));
        }
        self.shared.changed.notify_all();
    }

    fn stats(&self) -> &CommStats {
        &self.stats
    }

    fn kind(&self) -> &'static str {
        "threads"
    }

    fn shares_memory(&self) -> bool {
        self.shares_memory
    }

    fn members_in_process(&self) -> usize {
        self.size()
    }

    /// One rendezvous (the default, an empty all-gather, takes two).
    fn barrier(&self) -> Result<()> {
        let started = Instant::now();
        drop(self.rendezvous(self.lock())?);
        self.stats.record(started, 0, 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn all_to_all_delivers_each_part_to_its_receiver_many_times_over() {
        let team = ThreadTeam::new(3);
        std::thread::scope(|s| {
            for member in &team {
                s.spawn(move || {
                    for round in 0..50u8 {
                        let parts = (0..3)
                            .map(|j| vec![member.rank() as u8, j as u8, round])
                            .collect();
                        let got = member.all_to_all(parts).unwrap();
                        for (i, g) in got.iter().enumerate() {
                            assert_eq!(g, &vec![i as u8, member.rank() as u8, round]);
                        }
                        assert_eq!(member.all_sum(member.rank() as u64 + 1).unwrap(), 6);
                        assert_eq!(member.broadcast(2, &[round, 7]).unwrap(), vec![round, 7]);
                    }
                });
            }
        });
        assert!(team[0].stats().read().bytes_sent > 0);
        assert!(team.iter().all(|m| m.members_in_process() == 3));
        assert_eq!(crate::dist::Solo::default().members_in_process(), 1);
    }

    #[test]
    fn lent_buffers_reach_every_member_and_are_shared_where_memory_is() {
        for team in [ThreadTeam::new(3), ThreadTeam::apart(3)] {
            std::thread::scope(|s| {
                for member in &team {
                    s.spawn(move || {
                        for round in 0..30usize {
                            let root = round % 3;
                            let bytes: Vec<u8> = (0..(round * 997 + 5))
                                .map(|i| (i * 31 + round) as u8)
                                .collect();
                            let mine = Arc::new(if member.rank() == root {
                                bytes.clone()
                            } else {
                                Vec::new()
                            });
                            let at = mine.as_ptr();
                            let got = member.broadcast_shared(root, mine).unwrap();
                            assert_eq!(*got, bytes, "round {round}, member {}", member.rank());
                            if member.rank() == root {
                                assert_eq!(got.as_ptr(), at, "the lender keeps its own buffer");
                            }
                            // Threads of one process hold one buffer.
                            let ptrs = member
                                .all_gather(&(got.as_ptr() as u64).to_le_bytes())
                                .unwrap();
                            let shared = ptrs.iter().all(|p| p == &ptrs[root]);
                            assert_eq!(shared, member.shares_memory(), "round {round}");
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn a_shared_region_is_one_zeroed_memory_for_every_member_and_none_apart() {
        let team = ThreadTeam::new(3);
        std::thread::scope(|s| {
            for member in &team {
                s.spawn(move || {
                    for round in 0..10usize {
                        let region = member.shared_region(8 * 100 + round).unwrap().unwrap();
                        assert!(region.len() >= 8 * 100 + round);
                        assert!(region
                            .bytes()
                            .iter()
                            .all(|b| b.load(Ordering::Relaxed) == 0));
                        member.barrier().unwrap();
                        // Every member writes its stripe; after a collective,
                        // every member reads all of them.
                        let n = region.words().len();
                        for w in (member.rank()..n).step_by(3) {
                            region.words()[w].store((w + round) as u64, Ordering::Relaxed);
                        }
                        member.barrier().unwrap();
                        for (w, x) in region.words().iter().enumerate() {
                            assert_eq!(x.load(Ordering::Relaxed), (w + round) as u64);
                        }
                        member.barrier().unwrap();
                        member.free_region(region).unwrap();
                    }
                });
            }
        });
        let apart = ThreadTeam::apart(2);
        std::thread::scope(|s| {
            for member in &apart {
                s.spawn(move || assert!(member.shared_region(64).unwrap().is_none()));
            }
        });
    }

    #[test]
    fn a_team_apart_shares_no_memory_and_its_barriers_meet() {
        let apart = ThreadTeam::apart(2);
        assert!(!apart[0].shares_memory() && ThreadTeam::new(2)[1].shares_memory());
        std::thread::scope(|s| {
            for member in &apart {
                s.spawn(move || {
                    for _ in 0..20 {
                        member.barrier().unwrap();
                        assert_eq!(member.all_sum(1).unwrap(), 2);
                    }
                });
            }
        });
    }

    #[test]
    fn a_member_that_aborts_fails_the_others_instead_of_hanging_them() {
        let team = ThreadTeam::new(3);
        std::thread::scope(|s| {
            let waiting: Vec<_> = team[1..]
                .iter()
                .map(|m| s.spawn(move || m.barrier()))
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(20));
            team[0].abort("disk full");
            for w in waiting {
                let e = w.join().unwrap().unwrap_err().to_string();
                assert!(e.contains("rank 0 failed: disk full"), "{e}");
            }
        });
        assert!(team[2].barrier().is_err(), "an aborted team stays aborted");
    }
}
