//! The binomial hash: bijection on every small space, its order (1 before 0,
//! cell 0 first), round trips on large spaces, errors and bad input.
//! # Source: C(64, 32) = 1,832,624,140,942,590,534, OEIS A000984 (central binomial
//! coefficients), the largest entry of the binomial table.

use proptest::prelude::*;
use tbforge::hash::{binomial_table, Binomial, HashError};

/// The mask read as a number with cell 0 the most significant of `n` bits:
/// the order is descending in it.
fn as_string_value(mask: u64, n: usize) -> u64 {
    (0..n).fold(0, |acc, i| acc << 1 | (mask >> i & 1))
}

#[test]
fn every_small_space_is_a_bijection_in_descending_string_order() {
    for n in 0..=16usize {
        let mut hit = vec![false; 1 << n];
        for k in 0..=n {
            let b = Binomial::new(n, k).unwrap();
            let mut previous = None;
            for r in 0..b.size() {
                let mask = b.unrank(r);
                assert_eq!(mask.count_ones() as usize, k);
                assert!(mask >> n == 0);
                assert!(!hit[mask as usize], "mask {mask:b} twice");
                hit[mask as usize] = true;
                assert_eq!(b.rank(mask), r);
                assert_eq!(b.checked_rank(mask), Ok(r));
                let v = as_string_value(mask, n);
                if let Some(p) = previous {
                    assert!(v < p, "n={n} k={k} r={r}");
                }
                previous = Some(v);
            }
        }
        assert!(hit.iter().all(|&h| h), "n={n}: a subset was never reached");
    }
}

#[test]
fn table_is_pascals_triangle() {
    let t = binomial_table();
    for n in 1..=64 {
        assert_eq!(t[n][0], 1);
        for k in 1..=64 {
            assert_eq!(t[n][k], t[n - 1][k - 1] + t[n - 1][k], "C({n},{k})");
        }
    }
    // Published value: C(64, 32) = 1,832,624,140,942,590,534 (OEIS A000984, central binomials).
    assert_eq!(t[64][32], 1_832_624_140_942_590_534);
}

#[test]
fn random_round_trips_on_large_spaces() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for (n, k) in [
        (33usize, 16usize),
        (64, 32),
        (64, 1),
        (64, 63),
        (64, 64),
        (50, 7),
    ] {
        let b = Binomial::new(n, k).unwrap();
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let r = ((u128::from(x) * u128::from(b.size())) >> 64) as u64;
            let mask = b.unrank(r);
            assert_eq!(mask.count_ones() as usize, k);
            assert_eq!(b.rank(mask), r);
        }
        let first_k = if k == 0 { 0 } else { u64::MAX >> (64 - k) };
        assert_eq!(b.unrank(0), first_k, "rank 0 sets the first k cells");
    }
}

#[test]
fn errors() {
    assert!(matches!(Binomial::new(65, 3), Err(HashError::Shape { .. })));
    assert!(matches!(Binomial::new(3, 4), Err(HashError::Shape { .. })));
    let b = Binomial::new(10, 3).unwrap();
    assert!(matches!(
        b.checked_rank(0b1111),
        Err(HashError::Input { .. })
    ));
    assert!(matches!(
        b.checked_rank(1 << 10 | 3),
        Err(HashError::Input { .. })
    ));
    assert_eq!(
        b.checked_unrank(120),
        Err(HashError::Range {
            what: "binomial(10, 3)".into(),
            rank: 120,
            size: 120
        })
    );
    assert_eq!(b.checked_unrank(119), Ok(0b111 << 7));
}

proptest! {
    #[test]
    fn any_subset_round_trips(n in 0usize..=64, bits in any::<u64>()) {
        let mask = if n == 64 { bits } else { bits & ((1u64 << n) - 1) };
        let b = Binomial::new(n, mask.count_ones() as usize).unwrap();
        let r = b.rank(mask);
        prop_assert!(r < b.size());
        prop_assert_eq!(b.unrank(r), mask);
    }

    #[test]
    fn bad_input_does_not_panic(n in 0usize..=64, k in 0usize..=64, mask in any::<u64>(), r in any::<u64>()) {
        if let Ok(b) = Binomial::new(n, k) {
            let _ = b.rank(mask);
            let m = b.unrank(r);
            prop_assert_eq!(m.count_ones() as usize, k);
        }
    }
}
