//! Permutation hashes: lexicographic and Myrvold–Ruskey rank/unrank, parity
//! on the fly and the parity-halved index, against straight transcriptions,
//! exhaustively on small sizes and by round trips on 16 and 20 items.
//! # Source: Edelkamp, Sulewski, "Parallel State Space Search on the GPU" (SoCS 2009),
//! Definition 8 (lexicographic rank, parity = sum of the inverted index mod 2), Algorithm 1
//! (Myrvold-Ruskey unrank with parity) and Theorems 3 and 4
//! (/work/shared/seeds/002_7b0ac001f9396e38.txt); 20! = 2,432,902,008,176,640,000 (OEIS A000142).

use proptest::prelude::*;
use tbforge::hash::{
    factorial_table, lex_rank, lex_unrank, parity, HashError, Parity, Permutation,
};

/// Parity from the definition: the number of inversions.
fn inversions(p: &[u8]) -> Parity {
    let mut count = 0;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            count += usize::from(p[i] > p[j]);
        }
    }
    if count % 2 == 0 {
        Parity::Even
    } else {
        Parity::Odd
    }
}

/// Seed 002's Algorithm 1, transcribed.
fn algorithm1_unrank(mut r: u64, n: usize) -> (Parity, Vec<u8>) {
    let mut pi: Vec<u8> = (0..n as u8).collect();
    let mut odd = false;
    let mut n = n as u64;
    while n > 0 {
        let i = n - 1;
        let j = r % n;
        if i != j {
            odd = !odd;
            pi.swap(i as usize, j as usize);
        }
        r /= n;
        n -= 1;
    }
    (if odd { Parity::Odd } else { Parity::Even }, pi)
}

/// Myrvold and Ruskey's recursive rank1, transcribed.
fn rank1(n: usize, pi: &mut [u8], inv: &mut [u8]) -> u64 {
    if n <= 1 {
        return 0;
    }
    let s = pi[n - 1];
    let j = inv[n - 1] as usize;
    pi.swap(n - 1, j);
    inv.swap(s as usize, n - 1);
    u64::from(s) + n as u64 * rank1(n - 1, pi, inv)
}

fn mr_reference_rank(p: &[u8]) -> u64 {
    let mut pi = p.to_vec();
    let mut inv = vec![0u8; p.len()];
    for (i, &v) in p.iter().enumerate() {
        inv[v as usize] = i as u8;
    }
    rank1(p.len(), &mut pi, &mut inv)
}

/// Lexicographic rank from Definition 8.
fn lex_reference_rank(p: &[u8]) -> u64 {
    let n = p.len();
    (0..n)
        .map(|i| {
            let d = p[i + 1..].iter().filter(|&&x| x < p[i]).count() as u64;
            d * factorial_table()[n - 1 - i]
        })
        .sum()
}

#[test]
fn every_small_size_in_both_orders() {
    for n in 0..=8usize {
        let h = Permutation::new(n).unwrap();
        let size = h.size();
        assert_eq!(size, (1..=n as u64).product::<u64>());
        let mut lex_seen = vec![false; size as usize];
        let mut previous: Option<Vec<u8>> = None;
        let mut out = vec![0u8; n];
        for r in 0..size {
            // Lexicographic: strictly increasing strings, ranks back, parity right.
            let par = h.lex_unrank(r, &mut out);
            assert_eq!(h.check(&out), Ok(()));
            assert_eq!(par, inversions(&out));
            assert_eq!(parity(&out), par);
            assert_eq!(h.lex_rank(&out), r);
            assert_eq!(lex_reference_rank(&out), r);
            if let Some(p) = &previous {
                assert!(*p < out, "lex order broken at {r}");
            }
            previous = Some(out.clone());
            lex_seen[lex_rank(&out) as usize] = true;

            // Myrvold-Ruskey: Algorithm 1's permutation and parity, rank1 inverts it.
            let (want_parity, want) = algorithm1_unrank(r, n);
            let par = h.mr_unrank(r, &mut out);
            assert_eq!(out, want, "n={n} r={r}");
            assert_eq!(par, want_parity);
            assert_eq!(par, inversions(&out), "Theorem 3 at n={n} r={r}");
            assert_eq!(h.mr_rank(&out), (r, par));
            assert_eq!(mr_reference_rank(&out), r);
        }
        assert!(lex_seen.iter().all(|&s| s));
    }
}

#[test]
fn theorem_4_upper_half_swaps_the_first_two() {
    for n in 2..=8usize {
        let h = Permutation::new(n).unwrap();
        let half = h.half_size();
        assert_eq!(half * 2, h.size());
        let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
        for r in 0..half {
            let pa = h.mr_unrank(r, &mut a);
            let pb = h.mr_unrank(r + half, &mut b);
            a.swap(0, 1);
            assert_eq!(a, b);
            assert_ne!(pa, pb);
        }
    }
}

/// Both halved indices are bijections from each parity class onto 0..n!/2.
#[test]
fn halved_indices_are_bijections_per_parity() {
    for n in 2..=8usize {
        let h = Permutation::new(n).unwrap();
        let half = h.half_size() as usize;
        for wanted in [Parity::Even, Parity::Odd] {
            let mut out = vec![0u8; n];
            // Lexicographic and Myrvold-Ruskey halves: each index unranks to a
            // permutation of the wanted parity that ranks back to it.
            type Unrank = fn(&Permutation, u64, Parity, &mut [u8]);
            type RankOf = fn(&Permutation, &[u8]) -> u64;
            let orders: [(Unrank, RankOf); 2] = [
                (
                    |h, i, p, out| h.lex_half_unrank(i, p, out),
                    |h, out| h.lex_half_rank(out),
                ),
                (
                    |h, i, p, out| h.mr_half_unrank(i, p, out),
                    |h, out| h.mr_half_rank(out),
                ),
            ];
            for (unrank, rank) in orders {
                let mut hit = vec![false; half];
                for i in 0..half as u64 {
                    unrank(&h, i, wanted, &mut out);
                    assert_eq!(h.check(&out), Ok(()));
                    assert_eq!(inversions(&out), wanted);
                    assert_eq!(rank(&h, &out), i);
                    assert!(!hit[i as usize]);
                    hit[i as usize] = true;
                }
            }
            // Every permutation of that parity reaches a distinct index: count them.
            let mut count = 0;
            for r in 0..h.size() {
                h.lex_unrank(r, &mut out);
                if inversions(&out) == wanted {
                    count += 1;
                    let i = h.mr_half_rank(&out) as usize;
                    assert!(i < half, "index {i} outside the half of {half}");
                }
            }
            assert_eq!(count, half);
        }
    }
}

#[test]
fn random_round_trips_on_16_17_and_20_items() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for n in [16usize, 17, 20] {
        let h = Permutation::new(n).unwrap();
        let mut out = vec![0u8; n];
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let r = ((u128::from(x) * u128::from(h.size())) >> 64) as u64;
            let par = h.lex_unrank(r, &mut out);
            assert_eq!(h.check(&out), Ok(()));
            assert_eq!(h.lex_rank(&out), r);
            assert_eq!(lex_reference_rank(&out), r);
            assert_eq!(par, inversions(&out));

            let par = h.mr_unrank(r, &mut out);
            assert_eq!((par, out.clone()), algorithm1_unrank(r, n));
            assert_eq!(h.mr_rank(&out), (r, par));
            assert_eq!(par, inversions(&out));
            assert_eq!(h.mr_half_rank(&out), r % h.half_size());
        }
        // The extremes: identity and reversal in lexicographic order.
        h.lex_unrank(h.size() - 1, &mut out);
        assert_eq!(out, (0..n as u8).rev().collect::<Vec<_>>());
        assert_eq!(lex_unrank(0, n, &mut out), Parity::Even);
        assert_eq!(out, (0..n as u8).collect::<Vec<_>>());
    }
    assert_eq!(
        Permutation::new(20).unwrap().size(),
        2_432_902_008_176_640_000
    );
}

#[test]
fn errors() {
    assert!(matches!(
        Permutation::new(21),
        Err(HashError::Overflow { .. })
    ));
    let h = Permutation::new(4).unwrap();
    for bad in [&[0, 1, 2][..], &[0, 1, 1, 3], &[0, 1, 2, 4]] {
        assert!(
            matches!(h.check(bad), Err(HashError::Input { .. })),
            "{bad:?}"
        );
    }
    assert_eq!(h.check(&[3, 1, 2, 0]), Ok(()));
    assert_eq!(Permutation::new(1).unwrap().half_size(), 0);
}

proptest! {
    #[test]
    fn any_permutation_round_trips(
        p in (0usize..=20).prop_flat_map(|n| Just((0..n as u8).collect::<Vec<u8>>()).prop_shuffle())
    ) {
        let n = p.len();
        let h = Permutation::new(n).unwrap();
        let mut out = vec![0u8; n];
        let r = h.lex_rank(&p);
        prop_assert!(r < h.size());
        let par = h.lex_unrank(r, &mut out);
        prop_assert_eq!(&out, &p);
        prop_assert_eq!(par, inversions(&p));
        let (r, par) = h.mr_rank(&p);
        prop_assert!(r < h.size());
        prop_assert_eq!(h.mr_unrank(r, &mut out), par);
        prop_assert_eq!(&out, &p);
        prop_assert_eq!(par, inversions(&p));
        if n >= 2 {
            let i = h.mr_half_rank(&p);
            h.mr_half_unrank(i, par, &mut out);
            prop_assert_eq!(&out, &p);
            let i = h.lex_half_rank(&p);
            h.lex_half_unrank(i, par, &mut out);
            prop_assert_eq!(&out, &p);
        }
    }

    #[test]
    fn bad_input_does_not_panic(
        n in 0usize..=20,
        p in proptest::collection::vec(any::<u8>(), 0..40),
        r in any::<u64>(),
    ) {
        let h = Permutation::new(n).unwrap();
        let _ = h.lex_rank(&p);
        let _ = h.mr_rank(&p);
        let _ = h.mr_half_rank(&p);
        let _ = lex_rank(&p);
        let mut out = p.clone();
        h.lex_unrank(r, &mut out);
        h.mr_unrank(r, &mut out);
        h.lex_half_unrank(r, Parity::Even, &mut out);
        h.mr_half_unrank(r, Parity::Odd, &mut out);
        lex_unrank(r, p.len(), &mut out);
        let _ = parity(&p);
    }
}
