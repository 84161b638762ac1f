//! Morris's class tables are built on first use, by whichever thread asks
//! first: a thread outside rayon's pool, or a pool worker in the middle of
//! a parallel loop whose other items ask for the same table. Before the
//! tables were built so, a worker waiting for the table's own parallel
//! build stole an item of the outer loop, asked for the table again and
//! blocked for good; and a thread outside the pool held a table's lock
//! while its parallel build waited for pool workers that were all blocked
//! on that lock (CI hung in `tests/compare.rs` on two cores).

use rayon::prelude::*;
use std::sync::mpsc;
use std::time::Duration;
use tbforge::game::morris::classes::HalfIndex;

#[test]
fn tables_first_asked_for_inside_parallel_loops_are_built_without_hanging() {
    // A hang is a failure with a message, not a CI run that never ends.
    let (done, watch) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if watch.recv_timeout(Duration::from_secs(120)).is_err() {
            eprintln!("building Morris class tables from parallel loops hung for 120 s");
            std::process::exit(1);
        }
    });
    // The global pool, as the library's own loops use it, of two threads
    // as on CI.
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global()
        .unwrap();
    // (a, b) with 3..=7 pieces a side: none built before this test.
    let pairs: Vec<(u32, u32)> = (3..=7).flat_map(|a| (3..=7).map(move |b| (a, b))).collect();
    let sizes = |order: &[(u32, u32)]| -> Vec<u64> {
        order
            .par_iter()
            .flat_map_iter(|&p| std::iter::repeat_n(p, 8))
            .map(|(a, b)| HalfIndex::get(a, b).size())
            .collect()
    };
    let reversed: Vec<(u32, u32)> = pairs.iter().rev().copied().collect();
    let (forward, backward, outside) = std::thread::scope(|s| {
        let forward = s.spawn(|| sizes(&pairs));
        let backward = s.spawn(|| sizes(&reversed));
        let outside = s.spawn(|| {
            pairs
                .iter()
                .map(|&(a, b)| HalfIndex::get(a, b).size())
                .collect::<Vec<u64>>()
        });
        (
            forward.join().unwrap(),
            backward.join().unwrap(),
            outside.join().unwrap(),
        )
    });
    done.send(()).unwrap();
    // Every asker saw the one table of each pair.
    let per_pair: Vec<u64> = forward.chunks(8).map(|c| c[0]).collect();
    assert!(forward.chunks(8).all(|c| c.iter().all(|&s| s == c[0])));
    assert_eq!(per_pair, outside);
    let mut back: Vec<u64> = backward.chunks(8).map(|c| c[0]).collect();
    back.reverse();
    assert_eq!(back, outside);
    // Symmetry folds boards into classes: fewer classes than boards, more
    // than a sixteenth of them (16 symmetries).
    for (&(a, b), &classes) in pairs.iter().zip(&outside) {
        let boards = binomial(24, a) * binomial(24 - a as u64, b);
        assert!(classes < boards && classes * 16 >= boards, "S({a}, {b})");
    }
}

fn binomial(n: u64, k: u32) -> u64 {
    (0..u64::from(k)).fold(1, |c, i| c * (n - i) / (i + 1))
}
