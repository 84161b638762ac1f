//! A bounded cache of decompressed blocks, least recently used out first.
//!
//! Sharded by key so that threads probing different blocks rarely meet on a
//! lock; decompression happens outside any lock (two threads missing on the
//! same block both decompress it, and one copy wins).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// (file slot, block number).
pub(crate) type Key = (u32, u64);

const SHARDS: usize = 8;

struct Shard {
    capacity: usize,
    tick: u64,
    map: HashMap<Key, (Arc<[u8]>, u64)>,
}

pub(crate) struct BlockCache {
    shards: Vec<Mutex<Shard>>,
}

impl BlockCache {
    /// A cache of at most `blocks` blocks in all (0 turns caching off).
    pub(crate) fn new(blocks: usize) -> BlockCache {
        BlockCache {
            shards: (0..SHARDS)
                .map(|i| {
                    let per_shard = blocks / SHARDS + usize::from(i < blocks % SHARDS);
                    Mutex::new(Shard {
                        capacity: per_shard,
                        tick: 0,
                        map: HashMap::with_capacity(per_shard.min(1024)),
                    })
                })
                .collect(),
        }
    }

    fn shard(&self, key: Key) -> &Mutex<Shard> {
        // Neighbouring blocks of one file land in different shards.
        let h = key.1 ^ (u64::from(key.0)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        &self.shards[(h % SHARDS as u64) as usize]
    }

    pub(crate) fn get(&self, key: Key) -> Option<Arc<[u8]>> {
        let mut s = self.shard(key).lock().unwrap_or_else(|e| e.into_inner());
        s.tick += 1;
        let tick = s.tick;
        s.map.get_mut(&key).map(|(block, used)| {
            *used = tick;
            Arc::clone(block)
        })
    }

    pub(crate) fn insert(&self, key: Key, block: Arc<[u8]>) {
        let mut s = self.shard(key).lock().unwrap_or_else(|e| e.into_inner());
        if s.capacity == 0 {
            return;
        }
        if !s.map.contains_key(&key) && s.map.len() >= s.capacity {
            // A linear scan: shards are small, and misses already pay for a decompression.
            if let Some(oldest) = s
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k)
            {
                s.map.remove(&oldest);
            }
        }
        s.tick += 1;
        let tick = s.tick;
        s.map.insert(key, (block, tick));
    }

    pub(crate) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).map.len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_least_recent_out() {
        let c = BlockCache::new(SHARDS); // one per shard
        let block: Arc<[u8]> = Arc::from(vec![1u8; 4]);
        for b in 0..100 {
            c.insert((0, b), Arc::clone(&block));
            assert!(c.len() <= SHARDS);
        }
        assert_eq!(c.len(), SHARDS);
        // The last inserted block of each shard is what stays.
        assert!(c.get((0, 99)).is_some());
        let off = BlockCache::new(0);
        off.insert((0, 0), block);
        assert!(off.get((0, 0)).is_none());
    }
}
