//! Constant tables shared by the hashes, built at compile time.
//!
//! They are plain arrays of integers so that the CUDA backend can copy them
//! byte for byte into constant memory and run the same arithmetic: no hash on
//! the hot path divides, it looks up and multiplies.

/// Largest board (cells) the tables cover: masks are `u64`.
pub const MAX_CELLS: usize = 64;

/// Largest permutation whose `n!` indices fit in a `u64` (20! < 2^64 < 21!).
pub const MAX_PERMUTATION: usize = 20;

/// `BINOMIAL[n][k]` = C(n, k) for `0 <= n, k <= 64` (0 where `k > n`).
///
/// Every entry fits in a `u64`: the largest is C(64, 32) < 2^61.
static BINOMIAL: [[u64; MAX_CELLS + 1]; MAX_CELLS + 1] = build_binomial();

/// `FACTORIAL[n]` = n! for `0 <= n <= 20`.
static FACTORIAL: [u64; MAX_PERMUTATION + 1] = build_factorial();

/// `DIVISOR[d]` = `(m, t)` such that `x / d == mulhi(x, m) >> t` (the high
/// 64 bits of the 128-bit product, shifted) for every `x < 2^62` and
/// `2 <= d <= 64`; entries 0 and 1 are unused.
///
/// Why it is exact: with `l = ceil(log2 d)`, `s = max(64, 62 + l)` and
/// `m = ceil(2^s / d)`, the error `e = m d - 2^s` is below `d <= 2^l` (and 0
/// for the powers of two), so `x e < 2^s` for `x < 2^62`, which is Granlund
/// and Montgomery's condition for the rounded-up reciprocal to give the exact
/// quotient; `m < 2^63 + 1` fits a `u64` and `t = s - 64`.
static DIVISOR: [(u64, u32); MAX_CELLS + 1] = build_divisor();

/// `EXACT[d]` = `(t, v)` with `d = 2^t * o`, `o` odd and `v = o^-1 mod 2^64`,
/// for `1 <= d <= 64`; entry 0 is unused.
///
/// A quotient `q = x / d` that is known to be exact and to fit a `u64` is
/// `((x >> t) as u64).wrapping_mul(v)` for any 128-bit `x`: the low 64 bits
/// of `x >> t` are `q o mod 2^64`, and multiplying by `o^-1` leaves `q`.
static EXACT: [(u32, u64); MAX_CELLS + 1] = build_exact();

const fn build_binomial() -> [[u64; MAX_CELLS + 1]; MAX_CELLS + 1] {
    let mut t = [[0u64; MAX_CELLS + 1]; MAX_CELLS + 1];
    let mut n = 0;
    while n <= MAX_CELLS {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            // Pascal's rule; every entry is itself a binomial of n <= 64, so no sum overflows.
            t[n][k] = t[n - 1][k - 1] + t[n - 1][k];
            k += 1;
        }
        n += 1;
    }
    t
}

const fn build_factorial() -> [u64; MAX_PERMUTATION + 1] {
    let mut f = [1u64; MAX_PERMUTATION + 1];
    let mut n = 1;
    while n <= MAX_PERMUTATION {
        f[n] = f[n - 1] * n as u64;
        n += 1;
    }
    f
}

const fn build_divisor() -> [(u64, u32); MAX_CELLS + 1] {
    let mut t = [(0u64, 0u32); MAX_CELLS + 1];
    let mut d = 2;
    while d <= MAX_CELLS {
        let l = (d as u64).next_power_of_two().trailing_zeros();
        let s = if 62 + l > 64 { 62 + l } else { 64 };
        let m = (1u128 << s).div_ceil(d as u128);
        t[d] = (m as u64, s - 64);
        d += 1;
    }
    t
}

const fn build_exact() -> [(u32, u64); MAX_CELLS + 1] {
    let mut t = [(0u32, 0u64); MAX_CELLS + 1];
    let mut d = 1;
    while d <= MAX_CELLS {
        let tz = (d as u64).trailing_zeros();
        let o = (d as u64) >> tz;
        // Newton's iteration doubles the correct low bits of an inverse each
        // step; o is its own inverse mod 8, so 5 steps give 96 >= 64 bits.
        let mut v = o;
        let mut i = 0;
        while i < 5 {
            v = v.wrapping_mul(2u64.wrapping_sub(o.wrapping_mul(v)));
            i += 1;
        }
        t[d] = (tz, v);
        d += 1;
    }
    t
}

/// The binomial table `C(n, k)`, `0 <= n, k <= 64` (0 where `k > n`), row
/// `n`, column `k`: the layout a GPU kernel copies to constant memory.
pub fn binomial_table() -> &'static [[u64; MAX_CELLS + 1]; MAX_CELLS + 1] {
    &BINOMIAL
}

/// The factorials `0! ..= 20!`.
pub fn factorial_table() -> &'static [u64; MAX_PERMUTATION + 1] {
    &FACTORIAL
}

/// Division by a small constant: entry `d` (2..=64) is `(m, t)` with
/// `x / d == (((x as u128 * m as u128) >> 64) as u64) >> t` for all `x < 2^62`.
pub fn divisor_table() -> &'static [(u64, u32); MAX_CELLS + 1] {
    &DIVISOR
}

/// Exact division by a small constant: entry `d` (1..=64) is `(t, v)` with
/// `x / d == ((x >> t) as u64).wrapping_mul(v)` whenever `d` divides `x`
/// and the quotient fits a `u64`.
pub fn exact_division_table() -> &'static [(u32, u64); MAX_CELLS + 1] {
    &EXACT
}

/// The binomials again, padded for branch-free reads:
/// `PADDED[(n + 2) * 128 + (k + 2)]` = C(n, k), with zero rows and columns
/// for `n, k` in `{-2, -1}` and beyond 64. The index is masked to the table, so a read never needs a
/// bounds check (128 KiB, of which a space touches a few rows).
static PADDED: [u64; 128 * 128] = build_padded();

const fn build_padded() -> [u64; 128 * 128] {
    let mut t = [0u64; 128 * 128];
    let mut n = 0;
    while n <= MAX_CELLS {
        let mut k = 0;
        while k <= n {
            t[(n + 2) * 128 + k + 2] = BINOMIAL[n][k];
            k += 1;
        }
        n += 1;
    }
    t
}

/// C(n, k) for `-2 <= n, k <= 64` (negative values passed wrapped, as the
/// path-counting recurrences produce them): 0 when `k > n` or either is
/// negative. Other arguments only come from bad input: some table value,
/// never a panic.
#[inline(always)]
pub(crate) fn binom(n: u32, k: u32) -> u64 {
    let row = (n.wrapping_add(2) & 127) as usize;
    let col = (k.wrapping_add(2) & 127) as usize;
    PADDED[row << 7 | col]
}

/// n!, 0 beyond the table.
#[inline(always)]
pub(crate) fn factorial(n: usize) -> u64 {
    FACTORIAL.get(n).copied().unwrap_or(0)
}

/// `(x / d, x % d)` for `x < 2^62`, `2 <= d <= 64`, by multiplication.
/// Outside that domain the result is wrong but the call does not panic.
#[inline(always)]
pub(crate) fn divmod_small(x: u64, d: usize) -> (u64, u64) {
    let (m, t) = DIVISOR[d.min(MAX_CELLS)];
    let q = (((u128::from(x) * u128::from(m)) >> 64) as u64) >> (t & 63);
    (q, x.wrapping_sub(q.wrapping_mul(d as u64)))
}

/// `x / d` for `1 <= d <= 64` when the division is exact and the quotient fits a `u64`.
#[inline(always)]
pub(crate) fn div_exact(x: u128, d: usize) -> u64 {
    let (t, v) = EXACT[d.min(MAX_CELLS)];
    ((x >> (t & 127)) as u64).wrapping_mul(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials_match_the_multiplicative_formula() {
        for n in 0..=64u32 {
            for k in 0..=64u32 {
                let mut want: u128 = if k > n { 0 } else { 1 };
                if k <= n {
                    for j in 0..k {
                        want = want * u128::from(n - j) / u128::from(j + 1);
                    }
                }
                assert_eq!(u128::from(binom(n, k)), want, "C({n},{k})");
            }
        }
        for m in 0..=64u32 {
            for minus in [u32::MAX, u32::MAX - 1] {
                assert_eq!(binom(m, minus), 0, "C({m}, -)");
                assert_eq!(binom(minus, m), 0, "C(-, {m})");
            }
        }
        assert_eq!(binom(u32::MAX, u32::MAX), 0);
        assert_eq!(binom(65, 0), 0);
    }

    #[test]
    fn factorials() {
        let mut f: u128 = 1;
        for n in 0..=20usize {
            if n > 0 {
                f *= n as u128;
            }
            assert_eq!(u128::from(factorial(n)), f);
        }
        assert!(f * 21 > u128::from(u64::MAX), "21! must overflow u64");
    }

    #[test]
    fn small_division_is_exact_at_the_edges() {
        let limit = (1u64 << 62) - 1;
        for d in 2..=64usize {
            let dd = d as u64;
            let mut xs = vec![0, 1, dd - 1, dd, dd + 1, limit, limit - 1, limit - dd];
            // Near every multiple boundary at the top of the range, where rounding errors bite.
            for j in 0..200u64 {
                let base = (limit / dd - j) * dd;
                xs.extend([base, base - 1, base + dd - 1]);
            }
            let mut x = 0x9E37_79B9_7F4A_7C15u64;
            for _ in 0..2000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                xs.push(x >> 2);
            }
            for &x in &xs {
                assert_eq!(divmod_small(x, d), (x / dd, x % dd), "{x} / {d}");
            }
        }
    }

    #[test]
    fn exact_division() {
        for (d, &(_, v)) in EXACT.iter().enumerate().skip(1) {
            let o = (d as u64) >> (d as u64).trailing_zeros();
            assert_eq!(o.wrapping_mul(v), 1, "inverse of {o}");
            for q in [
                0u64,
                1,
                7,
                u64::MAX / 64,
                u64::MAX,
                1 << 63,
                12345678901234567,
            ] {
                let x = u128::from(q) * d as u128;
                assert_eq!(div_exact(x, d), q, "{q} * {d} / {d}");
            }
        }
    }
}
