//! Answers kept by position text: an explorer's visitors ask for the same
//! openings and lines again and again, and a kept answer costs a lookup
//! instead of a probe of every successor and a JSON rendering.
//!
//! Sharded like the probe's block cache so that workers rarely meet on a
//! lock; least recently used out first.

use axum::body::Bytes;
use std::collections::HashMap;
use std::sync::Mutex;

const SHARDS: usize = 16;

struct Shard {
    tick: u64,
    map: HashMap<Box<str>, (Bytes, u64)>,
}

pub(super) struct AnswerCache {
    per_shard: usize,
    shards: Vec<Mutex<Shard>>,
}

impl AnswerCache {
    /// Room for about `answers` answers (0: keep none).
    pub(super) fn new(answers: usize) -> AnswerCache {
        AnswerCache {
            per_shard: answers.div_ceil(SHARDS),
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        tick: 0,
                        map: HashMap::new(),
                    })
                })
                .collect(),
        }
    }

    fn shard(&self, key: &str) -> &Mutex<Shard> {
        // FNV-1a: keys are short texts, and any spread will do.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        &self.shards[(h % SHARDS as u64) as usize]
    }

    pub(super) fn get(&self, key: &str) -> Option<Bytes> {
        let mut s = self.shard(key).lock().unwrap_or_else(|e| e.into_inner());
        s.tick += 1;
        let tick = s.tick;
        s.map.get_mut(key).map(|(answer, used)| {
            *used = tick;
            answer.clone()
        })
    }

    pub(super) fn insert(&self, key: &str, answer: Bytes) {
        if self.per_shard == 0 {
            return;
        }
        let mut s = self.shard(key).lock().unwrap_or_else(|e| e.into_inner());
        if !s.map.contains_key(key) && s.map.len() >= self.per_shard {
            // A linear scan: shards are small, and a miss already paid for a probe.
            if let Some(oldest) = s
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            {
                s.map.remove(&oldest);
            }
        }
        s.tick += 1;
        let tick = s.tick;
        s.map.insert(key.into(), (answer, tick));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_least_recent_out() {
        let c = AnswerCache::new(SHARDS);
        for i in 0..200 {
            c.insert(&format!("p{i}"), Bytes::from(format!("a{i}")));
        }
        let kept = (0..200)
            .filter(|i| c.get(&format!("p{i}")).is_some())
            .count();
        assert!(kept <= SHARDS, "{kept}");
        assert_eq!(c.get("p199").as_deref(), Some(&b"a199"[..]));
        let off = AnswerCache::new(0);
        off.insert("p", Bytes::from_static(b"a"));
        assert!(off.get("p").is_none());
    }
}
