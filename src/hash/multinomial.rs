//! Boards of `n` cells holding fixed counts of colours 1..=c plus empties
//! (colour 0), ranked by seed 000's Algorithms 1 and 2 generalised to c colours.

use super::HashError;

/// The multinomial perfect hash of boards with fixed colour counts.
#[derive(Clone, Debug)]
pub struct Multinomial {
    cells: usize,
    counts: Vec<u32>,
    size: u64,
}

impl Multinomial {
    /// Boards of `cells` cells with `counts[i]` pieces of colour `i + 1`.
    pub fn new(cells: usize, counts: &[u32]) -> Result<Multinomial, HashError> {
        let what = || format!("multinomial({cells}; {counts:?})");
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if total > cells as u64 {
            return Err(HashError::Shape {
                what: what(),
                message: format!("{total} pieces do not fit on {cells} cells"),
            });
        }
        let mut all = counts.to_vec();
        all.push((cells as u64 - total) as u32);
        let size = multinomial(&all).ok_or_else(|| HashError::Overflow { what: what() })?;
        Ok(Multinomial {
            cells,
            counts: counts.to_vec(),
            size,
        })
    }

    /// Number of boards.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Rank of `board` (`board.len() == cells`, counts as given to `new`).
    pub fn rank(&self, board: &[u8]) -> u64 {
        let mut left = self.counts.clone();
        left.push((self.cells as u32) - self.counts.iter().sum::<u32>());
        let empties = left.len() - 1;
        let mut r = 0u64;
        for &cell in board {
            // Colours ordered: highest colour first, empty last (seed 000's order).
            let colour = if cell == 0 { empties } else { cell as usize - 1 };
            for higher in (colour + 1..self.counts.len()).rev() {
                r += count_with(&left, higher);
            }
            if colour == empties {
                for c in 0..self.counts.len() {
                    r += count_with(&left, c);
                }
            }
            left[colour] -= 1;
        }
        r
    }

    /// Writes the board with index `rank` into `board`.
    pub fn unrank(&self, mut rank: u64, board: &mut [u8]) {
        let mut left = self.counts.clone();
        left.push((self.cells as u32) - self.counts.iter().sum::<u32>());
        let empties = left.len() - 1;
        for cell in board.iter_mut() {
            let mut order: Vec<usize> = (0..self.counts.len()).rev().collect();
            order.push(empties);
            for &colour in &order {
                let n = count_with(&left, colour);
                if rank < n {
                    *cell = if colour == empties { 0 } else { colour as u8 + 1 };
                    left[colour] -= 1;
                    break;
                }
                rank -= n;
            }
        }
    }
}

/// Boards completing `left` after placing colour `c` in the current cell.
fn count_with(left: &[u32], c: usize) -> u64 {
    if left[c] == 0 {
        return 0;
    }
    let mut l = left.to_vec();
    l[c] -= 1;
    multinomial(&l).expect("sub-multinomial of a representable one")
}

/// n! / (k0! k1! ...) with n = sum k, or None on overflow.
fn multinomial(k: &[u32]) -> Option<u64> {
    let mut result: u64 = 1;
    let mut n: u64 = 0;
    for &ki in k {
        for j in 1..=u64::from(ki) {
            n += 1;
            // result * n / j stays integral: it is C(n, j) times the earlier product.
            result = (u128::from(result) * u128::from(n) / u128::from(j)).try_into().ok()?;
        }
    }
    Some(result)
}
