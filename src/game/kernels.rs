//! The device-kernel interface: how the generic build hands a whole partition
//! to a game's own kernels (on a CUDA GPU, or their CPU twins on all cores).
//!
//! A game that has kernels returns them from [`Game::kernels`](super::Game::kernels)
//! for a [`Device`]; the build then offers every partition it solves in
//! memory to [`PartitionKernels::solve`] and falls back to the generic solver
//! where the kernels decline. Whatever the device, the values must be the
//! generic solver's bytes: the golden and twin tests hold that.

use crate::value::PartitionId;
use crate::Result;

/// Where a build may run a game's kernels.
#[derive(Clone, Debug, Default)]
pub enum Device {
    /// The CPU: the kernels' CPU twins, where a game has them.
    #[default]
    Cpu,
    /// A CUDA GPU, opened and shared by every game's kernels.
    #[cfg(feature = "cuda")]
    Cuda(std::sync::Arc<crate::backend::cuda::CudaDevice>),
}

impl Device {
    /// "cpu", or "cuda: <device name>", for logs and errors.
    pub fn describe(&self) -> String {
        match self {
            Device::Cpu => "cpu".into(),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => format!("cuda: {}", d.name()),
        }
    }
}

/// The values of partitions solved earlier in a build, by partition: what a
/// partition's moves into other partitions read.
#[derive(Clone, Debug, Default)]
pub struct SolvedPartitions<'a> {
    parts: Vec<(PartitionId, &'a [u8])>,
}

impl<'a> SolvedPartitions<'a> {
    /// The given partitions' values.
    pub fn new(parts: impl IntoIterator<Item = (PartitionId, &'a [u8])>) -> Self {
        SolvedPartitions {
            parts: parts.into_iter().collect(),
        }
    }

    /// The partitions of `order` whose values `values` holds, slot by slot
    /// (`None`: not solved), as a build keeps them.
    pub fn from_slots(order: &[PartitionId], values: &[Option<&'a [u8]>]) -> Self {
        Self::new(
            order
                .iter()
                .zip(values)
                .filter_map(|(p, v)| Some((*p, (*v)?))),
        )
    }

    /// Partition `p`'s values, if it is solved.
    pub fn get(&self, p: PartitionId) -> Option<&'a [u8]> {
        self.parts.iter().find(|(q, _)| *q == p).map(|(_, v)| *v)
    }
}

/// A game's solver of whole partitions on one device: the host side of its
/// kernels (or their CPU twins), with exactly the generic solver's bytes.
pub trait PartitionKernels: Send + Sync + std::fmt::Debug {
    /// Values of partition `p` given the earlier partitions' values, or `None`
    /// when these kernels do not cover `p` (the generic solver takes it).
    fn solve(&self, p: PartitionId, solved: &SolvedPartitions<'_>) -> Option<Result<Vec<u8>>>;

    /// A name for logs ("morris on cuda: NVIDIA H100").
    fn name(&self) -> String;
}
