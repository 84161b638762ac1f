//! Seed 000's worked example of binomial/multinomial ranking, in its published order.
//! # Source: Edelkamp, Sulewski, Yücel, "GPU Exploration of Two-Player Games with Perfect
//! Hash Functions" (SoCS 2010), section "Perfect Hashing": the perfect mapping of all
//! state vectors of length 6 with 3 bits set (/work/shared/seeds/000_bebabe50f35ffd6e.txt,
//! around line 45).
//!
//! The text extraction of that table kept the 16 entries of ranks 1-4, 6-9, 11-14 and
//! 16-19; the row holding ranks 0, 5, 10 and 15 lost its numbers (only "011100" survived, in
//! the header line). Those four are checked too, derived by hand from the rule the paper
//! states (strings ordered with 1 before 0, cell 0 first) and labelled as derived.

use tbforge::hash::{Binomial, Multinomial};

/// (rank, state) as printed; the leftmost character is cell 0.
const PUBLISHED: [(u64, &str); 16] = [
    (1, "110100"),
    (2, "110010"),
    (3, "110001"),
    (4, "101100"),
    (6, "101001"),
    (7, "100110"),
    (8, "100101"),
    (9, "100011"),
    (11, "011010"),
    (12, "011001"),
    (13, "010110"),
    (14, "010101"),
    (16, "001110"),
    (17, "001101"),
    (18, "001011"),
    (19, "000111"),
];

/// The row lost in extraction, by hand: the largest string first, and the
/// successors of ranks 4, 9 and 14 in descending binary order.
const DERIVED: [(u64, &str); 4] = [(0, "111000"), (5, "101010"), (10, "011100"), (15, "010011")];

fn mask(s: &str) -> u64 {
    s.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'1')
        .map(|(i, _)| 1u64 << i)
        .sum()
}

fn cells(s: &str) -> Vec<u8> {
    s.bytes().map(|b| b - b'0').collect()
}

#[test]
fn binomial_reproduces_the_published_table() {
    let b = Binomial::new(6, 3).unwrap();
    assert_eq!(b.size(), 20);
    for (rank, state) in PUBLISHED.iter().chain(&DERIVED) {
        assert_eq!(b.rank(mask(state)), *rank, "rank of {state}");
        assert_eq!(b.unrank(*rank), mask(state), "unrank of {rank}");
    }
}

#[test]
fn one_colour_multinomial_is_the_same_table() {
    // One colour plus empty: the paper's ordering with colour 1 before 0.
    let m = Multinomial::new(6, &[3]).unwrap();
    assert_eq!(m.size(), 20);
    let mut board = [0u8; 6];
    for (rank, state) in PUBLISHED.iter().chain(&DERIVED) {
        assert_eq!(m.rank(&cells(state)), *rank, "rank of {state}");
        m.unrank(*rank, &mut board);
        assert_eq!(board.as_slice(), cells(state), "unrank of {rank}");
        let mut masks = [0u64; 1];
        m.unrank_masks(*rank, &mut masks);
        assert_eq!(masks[0], mask(state));
        assert_eq!(m.rank_masks(&masks), *rank);
    }
}

/// Algorithm 1 (Rank) of the paper, transcribed line by line; the
/// multinomial coefficient with `k_3 = n - k_1 - k_2` is computed from factorials.
fn algorithm1(state: &[u8], mut l_ones: u64, mut l_twos: u64) -> u64 {
    let n = state.len() as u64;
    let mut r = 0;
    for i in 0..n {
        let m = n - i - 1;
        match state[i as usize] {
            2 => l_twos -= 1,
            1 => {
                if l_twos > 0 {
                    r += multinomial(m, l_ones, l_twos - 1);
                }
                l_ones -= 1;
            }
            _ => {
                if l_twos > 0 {
                    r += multinomial(m, l_ones, l_twos - 1);
                }
                if l_ones > 0 {
                    r += multinomial(m, l_ones - 1, l_twos);
                }
            }
        }
    }
    r
}

/// Algorithm 2 (Unrank) of the paper, transcribed line by line.
fn algorithm2(mut r: u64, n: usize, mut l_ones: u64, mut l_twos: u64) -> Vec<u8> {
    let mut state = vec![0u8; n];
    for (i, cell) in state.iter_mut().enumerate() {
        let m = (n - i - 1) as u64;
        let value2 = if l_twos > 0 {
            multinomial(m, l_ones, l_twos - 1)
        } else {
            0
        };
        let value1 = if l_ones > 0 {
            multinomial(m, l_ones - 1, l_twos)
        } else {
            0
        };
        if r < value2 {
            *cell = 2;
            l_twos -= 1;
        } else if r < value1 + value2 {
            *cell = 1;
            r -= value2;
            l_ones -= 1;
        } else {
            *cell = 0;
            r -= value1 + value2;
        }
    }
    state
}

/// n! / (k1! k2! (n-k1-k2)!), 0 when the counts do not fit.
fn multinomial(n: u64, k1: u64, k2: u64) -> u64 {
    if k1 + k2 > n {
        return 0;
    }
    let f = |x: u64| (1..=x).map(u128::from).product::<u128>();
    (f(n) / (f(k1) * f(k2) * f(n - k1 - k2))) as u64
}

/// Every board of every space up to 9 cells (all 3^n strings, grouped by
/// counts): the hash gives Algorithm 1's rank and Algorithm 2's board, and
/// each space's ranks are exactly 0..size.
#[test]
fn two_colours_match_algorithms_1_and_2_on_every_small_board() {
    for n in 0..=9usize {
        let mut seen = std::collections::HashMap::<(u32, u32), Vec<bool>>::new();
        for code in 0..3u32.pow(n as u32) {
            let board: Vec<u8> = (0..n)
                .map(|i| (code / 3u32.pow(i as u32) % 3) as u8)
                .collect();
            let k1 = board.iter().filter(|&&c| c == 1).count() as u32;
            let k2 = board.iter().filter(|&&c| c == 2).count() as u32;
            let h = Multinomial::new(n, &[k1, k2]).unwrap();
            let r = h.rank(&board);
            assert_eq!(r, algorithm1(&board, k1.into(), k2.into()), "{board:?}");
            assert_eq!(algorithm2(r, n, k1.into(), k2.into()), board);
            let mut back = vec![9u8; n];
            h.unrank(r, &mut back);
            assert_eq!(back, board);
            let hit = seen
                .entry((k1, k2))
                .or_insert_with(|| vec![false; h.size() as usize]);
            assert!(!hit[r as usize], "rank {r} hit twice in n={n} {k1}+{k2}");
            hit[r as usize] = true;
        }
        for ((k1, k2), hit) in seen {
            assert!(
                hit.iter().all(|&h| h),
                "n={n} {k1}+{k2}: a rank was never hit"
            );
        }
    }
}
