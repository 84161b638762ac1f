//! MPI ranks as a team (feature `mpi`, the `mpi` crate on the system's Open
//! MPI): `mpirun -np N tbforge build ...` or `srun`.

use super::{slice_of, CommStats, RegionOwner, SharedRegion, Team};
use crate::{Error, Result};
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::raw::AsRaw;
use mpi::traits::*;
use mpi::Count;
use std::sync::Mutex;
use std::time::Instant;

/// Bytes one round of an all-to-all moves per member: MPI counts are 32-bit,
/// so larger exchanges go in rounds (with `size` parts per round, a round's
/// buffer stays below 2^31 bytes).
const ROUND_BYTES: u64 = 1 << 30;

/// This process's rank of the MPI job (`MPI_COMM_WORLD`).
pub struct MpiTeam {
    comm: Mutex<Comm>,
    rank: usize,
    size: usize,
    local_rank: usize,
    host: String,
    stats: CommStats,
    /// Whether every rank runs on this host and may share memory with the
    /// others ([`Team::shared_region`]).
    one_host: bool,
}

struct Comm {
    world: mpi::topology::SimpleCommunicator,
    /// Shared windows not freed yet, by their base address.
    windows: Vec<(usize, mpi::ffi::MPI_Win)>,
    // Finalises MPI when dropped, after the communicator above.
    _universe: mpi::environment::Universe,
}

// SAFETY: MPI is initialised with MPI_THREAD_SERIALIZED (checked in `init`)
// and every MPI call goes through the `comm` mutex, so no two threads are
// ever inside MPI at once, which is all that level requires of callers.
unsafe impl Send for MpiTeam {}
// SAFETY: as for Send: all access to the communicator is serialised by the mutex.
unsafe impl Sync for MpiTeam {}

impl std::fmt::Debug for MpiTeam {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MpiTeam(rank {} of {} on {})",
            self.rank, self.size, self.host
        )
    }
}

impl MpiTeam {
    /// Initialises MPI for this process (once per process). Where every
    /// rank runs on one host and `share_host_memory` holds, the ranks share
    /// memory for what every one of them must hold whole (a partition's
    /// values); otherwise they exchange it through messages, as ranks on
    /// several hosts must.
    pub fn init(share_host_memory: bool) -> Result<MpiTeam> {
        // A rank waiting in a collective spins by default, on a core that
        // the other ranks of its host compute on (ranks share the host's
        // cores): yielding hands it back. Set before MPI reads its
        // parameters; a value the user set stays.
        if std::env::var_os("OMPI_MCA_mpi_yield_when_idle").is_none() {
            std::env::set_var("OMPI_MCA_mpi_yield_when_idle", "1");
        }
        let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)
            .ok_or_else(|| {
                Error::NotAvailable("MPI was already initialised in this process".into())
            })?;
        if level < mpi::Threading::Serialized {
            return Err(Error::NotAvailable(format!(
                "this MPI library offers thread level {level:?}; tbforge needs MPI_THREAD_SERIALIZED (Open MPI offers it)"
            )));
        }
        let world = universe.world();
        let rank = world.rank() as usize;
        let size = world.size() as usize;
        // Ranks of one host, numbered from 0: which GPU each takes.
        let node = world.split_shared(world.rank());
        let local_rank = node.rank() as usize;
        let one_host = share_host_memory && node.size() == world.size();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Ok(MpiTeam {
            comm: Mutex::new(Comm {
                world,
                windows: Vec::new(),
                _universe: universe,
            }),
            rank,
            size,
            local_rank,
            host,
            stats: CommStats::default(),
            one_host,
        })
    }

    /// Whether this process was started by an MPI launcher (mpirun, srun),
    /// from the variables they set.
    pub fn launched() -> bool {
        ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
    }

    /// This rank's number among the ranks of its host.
    pub fn local_rank(&self) -> usize {
        self.local_rank
    }

    /// The host's name, as MPI reports it.
    pub fn host(&self) -> &str {
        &self.host
    }

    fn exchange(
        &self,
        world: &mpi::topology::SimpleCommunicator,
        parts: &[Vec<u8>],
    ) -> Vec<Vec<u8>> {
        let size = self.size;
        let send_lens: Vec<u64> = parts.iter().map(|p| p.len() as u64).collect();
        let mut recv_lens = vec![0u64; size];
        world.all_to_all_into(&send_lens[..], &mut recv_lens[..]);
        let per = (ROUND_BYTES / size as u64).max(1);
        let mine = send_lens
            .iter()
            .chain(&recv_lens)
            .map(|l| l.div_ceil(per))
            .max()
            .unwrap_or(0);
        let mut rounds = 0u64;
        world.all_reduce_into(&mine, &mut rounds, SystemOperation::max());
        let mut got: Vec<Vec<u8>> = recv_lens
            .iter()
            .map(|&l| Vec::with_capacity(l as usize))
            .collect();
        let piece = |len: u64, round: u64| {
            let lo = (round * per).min(len);
            lo..((round + 1) * per).min(len)
        };
        for round in 0..rounds {
            let mut send = Vec::new();
            let mut send_counts = Vec::with_capacity(size);
            let mut send_displs = Vec::with_capacity(size);
            for p in parts {
                let r = piece(p.len() as u64, round);
                send_displs.push(send.len() as Count);
                send_counts.push((r.end - r.start) as Count);
                send.extend_from_slice(&p[r.start as usize..r.end as usize]);
            }
            let recv_counts: Vec<Count> = recv_lens
                .iter()
                .map(|&l| {
                    let r = piece(l, round);
                    (r.end - r.start) as Count
                })
                .collect();
            let recv_displs: Vec<Count> = recv_counts
                .iter()
                .scan(0, |at, &c| {
                    let d = *at;
                    *at += c;
                    Some(d)
                })
                .collect();
            let total: Count = recv_counts.iter().sum();
            // Never an empty buffer: its dangling address is 1, which is
            // Open MPI's MPI_IN_PLACE, and would be taken for it.
            send.push(0);
            let mut recv = vec![0u8; total as usize + 1];
            {
                let sendp = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
                let mut recvp =
                    PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
                world.all_to_all_varcount_into(&sendp, &mut recvp);
            }
            for (i, g) in got.iter_mut().enumerate() {
                let d = recv_displs[i] as usize;
                g.extend_from_slice(&recv[d..d + recv_counts[i] as usize]);
            }
        }
        got
    }
}

impl Team for MpiTeam {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_to_all(&self, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        assert_eq!(parts.len(), self.size, "one part per member");
        let started = Instant::now();
        let comm = self.comm.lock().unwrap_or_else(|e| e.into_inner());
        // What this rank stored in a shared region before the collective is
        // seen by the others after it (Open MPI's unified memory model for
        // shared windows on a cache-coherent host; the fences order the
        // stores around the collective's own synchronisation).
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let got = self.exchange(&comm.world, &parts);
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let others = |v: &[Vec<u8>]| -> u64 {
            v.iter()
                .enumerate()
                .filter(|(i, _)| *i != self.rank)
                .map(|(_, p)| p.len() as u64)
                .sum()
        };
        self.stats.record(started, others(&parts), others(&got));
        Ok(got)
    }

    fn shared_region(&self, len: usize) -> Result<Option<SharedRegion>> {
        if !self.one_host {
            return Ok(None);
        }
        let started = Instant::now();
        let bytes = len.div_ceil(8) * 8;
        let mut comm = self.comm.lock().unwrap_or_else(|e| e.into_inner());
        // Rank 0 holds the memory; the others map it (one contiguous block).
        let mine = if self.rank == 0 { bytes } else { 0 };
        let mut own_base: *mut u8 = std::ptr::null_mut();
        let mut win = std::mem::MaybeUninit::<mpi::ffi::MPI_Win>::uninit();
        // SAFETY: MPI_Win_allocate_shared, a collective every rank enters
        // here (the Team contract) over MPI_COMM_WORLD, all of whose ranks
        // share this host (`one_host`, from MPI_Comm_split_type): it writes
        // the window handle into `win` and this rank's base into
        // `own_base`, both valid out-pointers. Errors abort the job (MPI's
        // default handler); the return code is checked too.
        let rc = unsafe {
            mpi::ffi::MPI_Win_allocate_shared(
                mine as mpi::ffi::MPI_Aint,
                8,
                mpi::ffi::RSMPI_INFO_NULL,
                comm.world.as_raw(),
                (&mut own_base as *mut *mut u8).cast(),
                win.as_mut_ptr(),
            )
        };
        if rc != mpi::ffi::MPI_SUCCESS as i32 {
            return Err(Error::NotAvailable(format!(
                "MPI could not share {bytes} bytes among the ranks of host {} (MPI_Win_allocate_shared: {rc}); run with --no-shared-memory",
                self.host
            )));
        }
        // SAFETY: MPI_Win_allocate_shared returned success, so `win` holds a
        // window handle.
        let win = unsafe { win.assume_init() };
        let mut size: mpi::ffi::MPI_Aint = 0;
        let mut unit: std::os::raw::c_int = 0;
        let mut base: *mut u8 = std::ptr::null_mut();
        // SAFETY: `win` is the shared window just made; rank 0's segment is
        // queried into valid out-pointers.
        let rc = unsafe {
            mpi::ffi::MPI_Win_shared_query(
                win,
                0,
                &mut size,
                &mut unit,
                (&mut base as *mut *mut u8).cast(),
            )
        };
        let base = std::ptr::NonNull::new(base)
            .filter(|_| rc == mpi::ffi::MPI_SUCCESS as i32 && size as usize >= bytes);
        let Some(base) = base.filter(|b| b.as_ptr() as usize % 8 == 0) else {
            return Err(Error::NotAvailable(format!(
                "MPI's shared window on host {} is not {bytes} aligned bytes (MPI_Win_shared_query: {rc}, {size} bytes); run with --no-shared-memory",
                self.host
            )));
        };
        // Each rank zeroes its stripe (the memory's first touch spread
        // over the ranks), then all wait for all.
        let stripe = slice_of(bytes as u64, 8, self.rank, self.size);
        // SAFETY: the stripe lies inside rank 0's segment of `bytes` bytes
        // (slice_of's ranges partition 0..bytes), mapped in this process by
        // the window; no rank reads the region before the barrier below.
        unsafe {
            std::ptr::write_bytes(
                base.as_ptr().add(stripe.start as usize),
                0,
                (stripe.end - stripe.start) as usize,
            );
        }
        comm.world.barrier();
        comm.windows.push((base.as_ptr() as usize, win));
        drop(comm);
        self.stats.record(started, 0, 0);
        Ok(Some(SharedRegion::new(base, bytes, RegionOwner::Window)))
    }

    fn free_region(&self, region: SharedRegion) -> Result<()> {
        let base = region.bytes().as_ptr() as usize;
        drop(region);
        let mut comm = self.comm.lock().unwrap_or_else(|e| e.into_inner());
        let Some(at) = comm.windows.iter().position(|&(b, _)| b == base) else {
            return Ok(());
        };
        let (_, mut win) = comm.windows.swap_remove(at);
        // SAFETY: `win` is a window this team made and has not freed; every
        // rank frees it here (a collective, the Team contract), after its
        // last use of the region, dropped above.
        unsafe {
            mpi::ffi::MPI_Win_free(&mut win);
        }
        Ok(())
    }

    fn abort(&self, message: &str) {
        eprintln!(
            "tbforge: rank {} of {} on {}: {message}; stopping every rank",
            self.rank, self.size, self.host
        );
        let comm = self.comm.lock().unwrap_or_else(|e| e.into_inner());
        comm.world.abort(2)
    }

    fn stats(&self) -> &CommStats {
        &self.stats
    }

    fn kind(&self) -> &'static str {
        "mpi"
    }
}
