//! Solved partitions' values left on a device after their solve, so that a
//! later solve reading them as dependencies finds them there instead of
//! uploading them again from host memory (pageable uploads run at 5-10 GB/s;
//! a copy on the device at over 1 TB/s).
//!
//! A kept copy answers for one host copy only: the allocation it was
//! downloaded into (address and length), under the same key, with the same
//! bytes at [`FINGERPRINT`] places. A dependency whose host bytes are not
//! that copy (read back from a file, or another build's) is uploaded instead.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaSlice;

use super::{cuda_err, CudaDevice};
use crate::Result;

/// Bytes compared between a dependency and a kept copy's host bytes.
const FINGERPRINT: usize = 256;

/// The bytes of `values` at [`FINGERPRINT`] places spread over it.
fn fingerprint(values: &[u8]) -> Vec<u8> {
    let n = values.len();
    (0..FINGERPRINT)
        .filter_map(|i| {
            values.get(((i as u128 * n as u128) / FINGERPRINT as u128) as usize + i % 7)
        })
        .copied()
        .collect()
}

/// One partition's values on the device and what identifies their host copy.
struct Kept {
    key: String,
    host: (usize, usize),
    fingerprint: Vec<u8>,
    values: Arc<CudaSlice<u8>>,
}

/// Values kept on one device, oldest first, within a budget of bytes.
pub struct ResidentValues {
    budget: u64,
    held: Mutex<VecDeque<Kept>>,
}

impl ResidentValues {
    /// Keeps at most `budget` bytes.
    pub fn new(budget: u64) -> ResidentValues {
        ResidentValues {
            budget,
            held: Mutex::new(VecDeque::new()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, VecDeque<Kept>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The device copy kept under `key` whose host bytes are `host`, if any.
    pub fn get(&self, key: &str, host: &[u8]) -> Option<Arc<CudaSlice<u8>>> {
        let held = self.held();
        let kept = held.iter().find(|k| k.key == key)?;
        (kept.host == (host.as_ptr() as usize, host.len()) && kept.fingerprint == fingerprint(host))
            .then(|| kept.values.clone())
    }

    /// Keeps `values` under `key` beside their host copy `host` (replacing
    /// what was kept under `key`), dropping the oldest beyond the budget.
    pub fn keep(&self, key: String, values: CudaSlice<u8>, host: &[u8]) {
        let mut held = self.held();
        held.retain(|k| k.key != key);
        if host.len() as u64 > self.budget {
            return;
        }
        held.push_back(Kept {
            key,
            host: (host.as_ptr() as usize, host.len()),
            fingerprint: fingerprint(host),
            values: Arc::new(values),
        });
        while held.iter().map(|k| k.host.1 as u64).sum::<u64>() > self.budget {
            held.pop_front();
        }
    }

    /// Drops kept values, oldest first, until `bytes` are free on `device`
    /// (or none is kept).
    pub fn make_room(&self, device: &CudaDevice, bytes: u64) -> Result<()> {
        loop {
            if device.free_memory()? >= bytes {
                return Ok(());
            }
            if self.held().pop_front().is_none() {
                return Ok(());
            }
            // Freed memory returns to the device once the stream passes.
            device
                .stream()
                .synchronize()
                .map_err(cuda_err("freeing kept partitions"))?;
        }
    }
}
