//! Where each partition lives in the solver's tables: a dense slot per
//! [`PartitionId`], in solving order.

use crate::game::Game;
use crate::value::{PartitionId, Rank};
use crate::{Error, Result};

/// Partition ids mapped to dense slots (solving order) and their sizes.
#[derive(Clone, Debug)]
pub struct Layout {
    order: Vec<PartitionId>,
    sizes: Vec<u64>,
    slot_of: Vec<u32>,
}

const NO_SLOT: u32 = u32::MAX;
/// Partition ids index a direct table; games keep them small.
const MAX_PARTITION_ID: u32 = 1 << 22;

impl Layout {
    /// The layout of `game`'s partitions.
    pub fn new<G: Game>(game: &G) -> Result<Layout> {
        let order = game.partitions();
        let contract = |message: String| Error::GameContract {
            game: game.info().id.to_string(),
            message,
        };
        let max_id = order.iter().map(|p| p.0).max().unwrap_or(0);
        if max_id >= MAX_PARTITION_ID {
            return Err(contract(format!(
                "partition id {max_id} is beyond {MAX_PARTITION_ID}"
            )));
        }
        let mut slot_of = vec![NO_SLOT; max_id as usize + 1];
        for (slot, p) in order.iter().enumerate() {
            if slot_of[p.0 as usize] != NO_SLOT {
                return Err(contract(format!("partition {p} listed twice")));
            }
            slot_of[p.0 as usize] = slot as u32;
        }
        let sizes = order.iter().map(|&p| game.partition_size(p)).collect();
        Ok(Layout {
            order,
            sizes,
            slot_of,
        })
    }

    /// Partitions in solving order.
    pub fn order(&self) -> &[PartitionId] {
        &self.order
    }

    /// Number of partitions.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True for a game without partitions.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The slot (solving position) of `p`, if the game lists it.
    #[inline]
    pub fn slot(&self, p: PartitionId) -> Option<usize> {
        match self.slot_of.get(p.0 as usize) {
            Some(&s) if s != NO_SLOT => Some(s as usize),
            _ => None,
        }
    }

    /// Size of the partition in `slot`.
    pub fn size(&self, slot: usize) -> u64 {
        self.sizes[slot]
    }

    /// Total indices over all partitions.
    pub fn total_size(&self) -> u64 {
        self.sizes.iter().sum()
    }

    /// Checks a `(partition, rank)` pair a game produced: the slot, if in range.
    #[inline]
    pub fn locate(&self, p: PartitionId, r: Rank) -> Option<usize> {
        self.slot(p).filter(|&s| r.0 < self.sizes[s])
    }
}
