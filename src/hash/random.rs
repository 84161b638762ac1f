//! SplitMix64: the one deterministic random stream of the crate (benchmark
//! inputs, probe samples, device checks' fresh inputs, fuzz mutations), so
//! that every seed printed anywhere replays the same way.

/// SplitMix64's finaliser: a bijection of `u64` that mixes every input bit
/// into every output bit.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The kernels' `tb_mix64` (kernels/common.cuh): [`mix64`] of `z` plus
/// SplitMix64's increment, so that zero does not map to zero. CPU twins of
/// kernel checksums use this one.
#[inline]
pub fn kernel_mix64(z: u64) -> u64 {
    mix64(z.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// A SplitMix64 stream from a seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream that `seed` names.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// A number in `0..size` (`size > 0`; multiply-high, uniform enough for
    /// test and benchmark inputs).
    pub fn below(&mut self, size: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(size)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_of_splitmix64() {
        // The first outputs for seed 0 of the reference implementation
        // (Steele, Lea, Flood: "Fast splittable pseudorandom number
        // generators"; Vigna's splitmix64.c).
        let mut s = SplitMix64::new(0);
        assert_eq!(s.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(s.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut s = SplitMix64::new(7);
        assert!((0..1000).all(|_| s.below(10) < 10));
    }
}
