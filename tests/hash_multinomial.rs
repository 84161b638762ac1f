//! The multinomial hash: bijection on every small space, the order of the
//! first cut (and so of seed 000's Algorithm 1, generalised), round trips on
//! large spaces, overflow and shape errors, and robustness on bad input.

use std::collections::HashMap;

use proptest::prelude::*;
use tbforge::hash::{HashError, Multinomial};

/// The first-cut implementation this module replaced, kept verbatim in
/// substance as the order's reference: other code stored ranks in this order.
mod first_cut {
    pub fn rank(cells: usize, counts: &[u32], board: &[u8]) -> u64 {
        let mut left = counts.to_vec();
        left.push((cells as u32) - counts.iter().sum::<u32>());
        let empties = left.len() - 1;
        let mut r = 0u64;
        for &cell in board {
            let colour = if cell == 0 {
                empties
            } else {
                cell as usize - 1
            };
            for higher in (colour + 1..counts.len()).rev() {
                r += count_with(&left, higher);
            }
            if colour == empties {
                for c in 0..counts.len() {
                    r += count_with(&left, c);
                }
            }
            left[colour] -= 1;
        }
        r
    }

    fn count_with(left: &[u32], c: usize) -> u64 {
        if left[c] == 0 {
            return 0;
        }
        let mut l = left.to_vec();
        l[c] -= 1;
        multinomial(&l).unwrap()
    }

    pub fn multinomial(k: &[u32]) -> Option<u64> {
        let mut result: u128 = 1;
        let mut n: u128 = 0;
        for &ki in k {
            for j in 1..=u128::from(ki) {
                n += 1;
                result = result.checked_mul(n)? / j;
            }
        }
        result.try_into().ok()
    }
}

/// Every board of `n` cells over colours `0..=c`, grouped into their spaces:
/// each space's ranks are exactly `0..size`, equal to the first cut's, and
/// unrank inverts rank (by board and by masks).
fn exhaust(n: usize, c: usize) {
    let mut hit: HashMap<Vec<u32>, Vec<bool>> = HashMap::new();
    let base = c as u64 + 1;
    for code in 0..base.pow(n as u32) {
        let board: Vec<u8> = (0..n)
            .map(|i| (code / base.pow(i as u32) % base) as u8)
            .collect();
        let counts: Vec<u32> = (1..=c)
            .map(|y| board.iter().filter(|&&x| usize::from(x) == y).count() as u32)
            .collect();
        let h = Multinomial::new(n, &counts).unwrap();
        let r = h.rank(&board);
        assert_eq!(r, first_cut::rank(n, &counts, &board), "{board:?}");
        assert_eq!(h.checked_rank(&board), Ok(r));
        let mut back = vec![0u8; n];
        h.unrank(r, &mut back);
        assert_eq!(back, board);
        let mut masks = vec![0u64; c];
        h.unrank_masks(r, &mut masks);
        for (j, m) in masks.iter().enumerate() {
            for (i, &x) in board.iter().enumerate() {
                assert_eq!(m >> i & 1 == 1, usize::from(x) == j + 1);
            }
        }
        assert_eq!(h.rank_masks(&masks), r);
        let seen = hit
            .entry(counts)
            .or_insert_with(|| vec![false; h.size() as usize]);
        assert!(!seen[r as usize], "rank {r} twice");
        seen[r as usize] = true;
    }
    for (counts, seen) in hit {
        assert!(seen.iter().all(|&s| s), "n={n} {counts:?}: rank never hit");
    }
}

#[test]
fn every_small_space_is_a_bijection_in_the_first_cut_order() {
    for n in 0..=8 {
        exhaust(n, 0);
        exhaust(n, 1);
        exhaust(n, 2);
    }
    for n in 0..=7 {
        exhaust(n, 3);
    }
    for n in 0..=6 {
        exhaust(n, 4);
    }
    exhaust(5, 6);
}

/// A tiny deterministic generator for the large-space round trips.
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((u128::from(self.0) * u128::from(n)) >> 64) as u64
    }
}

/// Lexicographic comparison under seed 000's alphabet: highest colour first, empty last.
fn key(c: u8, colours: u8) -> u8 {
    if c == 0 {
        colours + 1
    } else {
        colours - c
    }
}

#[test]
fn random_round_trips_on_24_cells_with_9_and_9() {
    let h = Multinomial::new(24, &[9, 9]).unwrap();
    // 24! / (9! 9! 6!), by hand: C(24,6) * C(18,9) = 134596 * 48620.
    assert_eq!(h.size(), 134_596 * 48_620);
    let mut rng = Lcg(1);
    let mut board = [0u8; 24];
    let mut next = [0u8; 24];
    for _ in 0..100_000 {
        let r = rng.below(h.size() - 1);
        h.unrank(r, &mut board);
        assert_eq!(h.check(&board), Ok(()));
        assert_eq!(h.rank(&board), r);
        assert_eq!(first_cut::rank(24, &[9, 9], &board), r);
        let (ones, twos) = h.unrank2(r);
        assert_eq!(h.rank2(ones, twos), r);
        assert_eq!(h.rank_masks(&[ones, twos]), r);
        // The next rank is the next board in the alphabet order.
        h.unrank(r + 1, &mut next);
        let a: Vec<u8> = board.iter().map(|&c| key(c, 2)).collect();
        let b: Vec<u8> = next.iter().map(|&c| key(c, 2)).collect();
        assert!(a < b, "{board:?} !< {next:?}");
    }
    h.unrank(0, &mut board);
    assert_eq!(board[..9], [2; 9]);
    assert_eq!(board[9..18], [1; 9]);
    assert_eq!(board[18..], [0; 6]);
    h.unrank(h.size() - 1, &mut board);
    assert_eq!(board[..6], [0; 6]);
    assert_eq!(board[6..15], [1; 9]);
    assert_eq!(board[15..], [2; 9]);
}

#[test]
fn random_round_trips_on_three_and_four_colours() {
    for (cells, counts) in [
        (33usize, vec![8u32, 8, 8]),
        (64, vec![3, 3, 3, 3]),
        (40, vec![10, 1, 10]),
    ] {
        let h = Multinomial::new(cells, &counts).unwrap();
        let mut rng = Lcg(7);
        let mut board = vec![0u8; cells];
        for _ in 0..20_000 {
            let r = rng.below(h.size());
            h.unrank(r, &mut board);
            assert_eq!(h.check(&board), Ok(()));
            assert_eq!(h.rank(&board), r);
            assert_eq!(first_cut::rank(cells, &counts, &board), r);
            let mut masks = vec![0u64; counts.len()];
            h.unrank_masks(r, &mut masks);
            assert_eq!(h.rank_masks(&masks), r);
        }
    }
}

/// `new` succeeds exactly when the multinomial fits a u64, on shapes around the edge.
#[test]
fn sizes_beyond_u64_are_overflow_errors() {
    for cells in [40usize, 56, 63, 64] {
        for k1 in 0..=cells as u32 {
            for k2 in 0..=(cells as u32 - k1) {
                let want = first_cut::multinomial(&[k1, k2, cells as u32 - k1 - k2]);
                match (Multinomial::new(cells, &[k1, k2]), want) {
                    (Ok(h), Some(size)) => assert_eq!(h.size(), size),
                    (Err(HashError::Overflow { what }), None) => {
                        assert!(what.contains("multinomial"), "{what}")
                    }
                    (got, want) => panic!("{cells}; {k1}+{k2}: {got:?} vs {want:?}"),
                }
            }
        }
    }
    assert!(matches!(
        Multinomial::new(64, &[20, 20]),
        Err(HashError::Overflow { .. })
    ));
}

#[test]
fn bad_shapes_and_inputs_are_errors() {
    for (n, colours) in [(65, &[1, 1][..]), (9, &[5, 5]), (64, &[0; 33])] {
        assert!(
            matches!(Multinomial::new(n, colours), Err(HashError::Shape { .. })),
            "{n} cells, {colours:?}"
        );
    }
    let h = Multinomial::new(4, &[1, 1]).unwrap();
    for bad in [&[1, 2, 0][..], &[1, 2, 0, 3], &[1, 1, 0, 0]] {
        assert!(
            matches!(h.check(bad), Err(HashError::Input { .. })),
            "{bad:?}"
        );
    }
    assert!(matches!(
        h.checked_rank(&[2, 2, 0, 0]),
        Err(HashError::Input { .. })
    ));
    let mut board = [0u8; 4];
    assert_eq!(
        h.checked_unrank(12, &mut board),
        Err(HashError::Range {
            what: "multinomial(4; [1, 1])".into(),
            rank: 12,
            size: 12
        })
    );
    assert!(matches!(
        h.checked_unrank(0, &mut board[..3]),
        Err(HashError::Input { .. })
    ));
    assert_eq!(h.checked_unrank(11, &mut board), Ok(()));
    assert_eq!(board, [0, 0, 1, 2]);
}

/// A space of up to 64 cells whose size fits a u64, and one of its boards.
fn space_and_board() -> impl Strategy<Value = (Vec<u32>, Vec<u8>)> {
    (1usize..=64, 1usize..=4)
        .prop_flat_map(|(cells, colours)| {
            proptest::collection::vec(0u32..=16, colours).prop_map(move |mut counts| {
                // Trim counts until they fit the board and the size fits a u64.
                while counts.iter().sum::<u32>() as usize > cells
                    || Multinomial::new(cells, &counts).is_err()
                {
                    let j = counts
                        .iter()
                        .enumerate()
                        .max_by_key(|&(_, c)| *c)
                        .unwrap()
                        .0;
                    counts[j] -= 1;
                }
                let mut board = vec![0u8; cells];
                let mut i = 0;
                for (y, &k) in counts.iter().enumerate() {
                    for _ in 0..k {
                        board[i] = y as u8 + 1;
                        i += 1;
                    }
                }
                (counts, board)
            })
        })
        .prop_flat_map(|(counts, board)| (Just(counts), Just(board).prop_shuffle()))
}

proptest! {
    #[test]
    fn any_board_round_trips((counts, board) in space_and_board()) {
        let h = Multinomial::new(board.len(), &counts).unwrap();
        let r = h.rank(&board);
        prop_assert!(r < h.size());
        prop_assert_eq!(r, first_cut::rank(board.len(), &counts, &board));
        let mut back = vec![0u8; board.len()];
        h.unrank(r, &mut back);
        prop_assert_eq!(&back, &board);
        let mut masks = vec![0u64; counts.len()];
        h.unrank_masks(r, &mut masks);
        prop_assert_eq!(h.rank_masks(&masks), r);
    }

    #[test]
    fn any_rank_round_trips((counts, board) in space_and_board(), x in any::<u64>()) {
        let h = Multinomial::new(board.len(), &counts).unwrap();
        let r = ((u128::from(x) * u128::from(h.size())) >> 64) as u64;
        let mut out = vec![0u8; board.len()];
        h.unrank(r, &mut out);
        prop_assert_eq!(h.checked_rank(&out), Ok(r));
    }

    /// Garbage in (wrong counts, colours, lengths, ranks) never panics.
    #[test]
    fn bad_input_does_not_panic(
        board in proptest::collection::vec(any::<u8>(), 0..80),
        masks in proptest::collection::vec(any::<u64>(), 0..5),
        r in any::<u64>(),
        colours in 0usize..5,
    ) {
        let counts = vec![3u32; colours];
        let h = Multinomial::new(24, &counts).unwrap();
        let _ = h.rank(&board);
        let _ = h.rank_masks(&masks);
        let _ = h.rank2(masks.first().copied().unwrap_or(0), r);
        let mut out = board.clone();
        h.unrank(r, &mut out);
        let mut m = masks.clone();
        h.unrank_masks(r, &mut m);
        let _ = h.unrank2(r);
        prop_assert!(h.checked_rank(&board).is_err() || board.len() == 24);
    }
}

/// The walk table's layout, documented for the GPU twin, checked from first principles.
#[test]
fn walk_table_layout() {
    let h = Multinomial::new(24, &[9, 9]).unwrap();
    let t = h.walk_table().unwrap();
    assert_eq!(t.len(), 4 * 7 * 10 * 10);
    for (l0, l1, l2) in [
        (6u32, 9u32, 9u32),
        (3, 2, 5),
        (0, 4, 4),
        (6, 0, 1),
        (1, 1, 0),
    ] {
        let at = 4 * (l0 * 100 + l1 * 10 + l2) as usize;
        let start2 = if l2 == 0 {
            0
        } else {
            first_cut::multinomial(&[l1, l2 - 1, l0]).unwrap()
        };
        let start1 = if l1 == 0 {
            0
        } else {
            first_cut::multinomial(&[l1 - 1, l2, l0]).unwrap()
        };
        assert_eq!(t[at + 2], 0, "a 2 adds nothing");
        assert_eq!(t[at + 1], start2, "a 1 passes the boards starting with 2");
        assert_eq!(
            t[at],
            start2 + start1,
            "an empty passes those starting with 2 or 1"
        );
    }
    assert!(Multinomial::new(24, &[9]).unwrap().walk_table().is_none());
}
