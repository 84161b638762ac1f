//! The cross board of Fox-and-Geese: 33 points, their lines, the eight
//! symmetries, and move generation on bitboards (one `u64`, bit `i` = point
//! `i`), with fixed-size tables and no allocation per move so that a CUDA
//! twin can mirror it table for table.

/// Points on the board.
pub const CELLS: usize = 33;
/// Rows (and columns) of the grid the cross sits in.
const SIDE: i32 = 7;
/// Directions in the order moves are generated: the four orthogonal ones,
/// then the four diagonals.
const DIRECTIONS: [(i32, i32); 8] = [
    (-1, 0),
    (1, 0),
    (0, -1),
    (0, 1),
    (-1, -1),
    (-1, 1),
    (1, -1),
    (1, 1),
];
/// No point: a step off the board.
pub const NONE: u8 = u8::MAX;

/// Which diagonal lines the board has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diagonals {
    /// Every point joins its diagonal neighbours ("pieces can move to any
    /// empty intersection around them, also diagonally").
    All,
    /// Diagonals through every other point only (those whose row plus
    /// column is even), as drawn in Edelkamp's figure of the initial layout:
    /// the traditional board.
    Alternate,
}

impl Diagonals {
    /// The parameter's text.
    pub fn name(self) -> &'static str {
        match self {
            Diagonals::All => "all",
            Diagonals::Alternate => "alternate",
        }
    }
}

/// A symmetry of the grid, on (row, column).
type Symmetry = fn(i32, i32) -> (i32, i32);

/// Whether grid point (`r`, `c`) is on the cross.
fn on_board(r: i32, c: i32) -> bool {
    (0..SIDE).contains(&r)
        && (0..SIDE).contains(&c)
        && ((2..=4).contains(&r) || (2..=4).contains(&c))
}

/// The board's geometry: coordinates, steps, symmetries.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// Row and column of each point, row by row from the top left.
    pub coords: [(u8, u8); CELLS],
    /// `step[p][d]`: the neighbour of `p` in direction `d`, or [`NONE`].
    pub step: [[u8; 8]; CELLS],
    /// `perm[g][p]`: where symmetry `g` sends point `p` (`g = 0` the identity).
    pub perm: [[u8; CELLS]; 8],
    /// `bytes[g][i][b]`: the image under symmetry `g` of the points of byte
    /// `i` of a mask whose byte `i` is `b`: a mask's image is five look-ups
    /// (the kernels' `fg_map` reads the same table).
    pub(super) bytes: Vec<[[u64; 256]; 5]>,
}

impl Geometry {
    /// The cross with the given diagonals.
    pub fn new(diagonals: Diagonals) -> Geometry {
        let mut coords = [(0u8, 0u8); CELLS];
        let mut n = 0;
        for r in 0..SIDE {
            for c in 0..SIDE {
                if on_board(r, c) {
                    coords[n] = (r as u8, c as u8);
                    n += 1;
                }
            }
        }
        let cell_at = |r: i32, c: i32| -> u8 {
            if !on_board(r, c) {
                return NONE;
            }
            coords
                .iter()
                .position(|&(cr, cc)| i32::from(cr) == r && i32::from(cc) == c)
                .map_or(NONE, |p| p as u8)
        };
        let mut step = [[NONE; 8]; CELLS];
        for (p, &(r, c)) in coords.iter().enumerate() {
            let (r, c) = (i32::from(r), i32::from(c));
            for (d, &(dr, dc)) in DIRECTIONS.iter().enumerate() {
                let diagonal = d >= 4;
                if diagonal && diagonals == Diagonals::Alternate && (r + c) % 2 != 0 {
                    continue;
                }
                step[p][d] = cell_at(r + dr, c + dc);
            }
        }
        // The dihedral group of the square about the centre (3, 3).
        let maps: [Symmetry; 8] = [
            |r, c| (r, c),
            |r, c| (c, 6 - r),
            |r, c| (6 - r, 6 - c),
            |r, c| (6 - c, r),
            |r, c| (r, 6 - c),
            |r, c| (6 - r, c),
            |r, c| (c, r),
            |r, c| (6 - c, 6 - r),
        ];
        let mut perm = [[0u8; CELLS]; 8];
        for (g, map) in maps.iter().enumerate() {
            for (p, &(r, c)) in coords.iter().enumerate() {
                let (r2, c2) = map(i32::from(r), i32::from(c));
                perm[g][p] = cell_at(r2, c2);
            }
        }
        let mut bytes = vec![[[0u64; 256]; 5]; 8];
        for (table, perm) in bytes.iter_mut().zip(&perm) {
            for (i, row) in table.iter_mut().enumerate() {
                for (b, image) in row.iter_mut().enumerate() {
                    for bit in 0..8 {
                        let p = i * 8 + bit;
                        if b >> bit & 1 == 1 && p < CELLS {
                            *image |= 1 << perm[p];
                        }
                    }
                }
            }
        }
        Geometry {
            coords,
            step,
            perm,
            bytes,
        }
    }

    /// The image of a set of points under symmetry `g`.
    #[inline]
    pub fn map(&self, g: usize, mask: u64) -> u64 {
        let t = &self.bytes[g];
        t[0][(mask & 0xff) as usize]
            | t[1][(mask >> 8 & 0xff) as usize]
            | t[2][(mask >> 16 & 0xff) as usize]
            | t[3][(mask >> 24 & 0xff) as usize]
            | t[4][(mask >> 32 & 0xff) as usize]
    }

    /// Whether the fox on `fox`, with geese on `geese`, can move (a step to
    /// an empty neighbour or a jump over a goose to the empty point beyond).
    #[inline]
    pub fn fox_can_move(&self, fox: usize, geese: u64) -> bool {
        let occupied = geese | 1 << fox;
        for d in 0..8 {
            let n = self.step[fox][d];
            if n == NONE {
                continue;
            }
            if occupied >> n & 1 == 0 {
                return true;
            }
            let beyond = self.step[n as usize][d];
            if beyond != NONE && occupied >> beyond & 1 == 0 {
                return true;
            }
        }
        false
    }

    /// Whether some goose can step to an empty neighbour.
    #[inline]
    pub fn geese_can_move(&self, fox: usize, geese: u64) -> bool {
        let occupied = geese | 1 << fox;
        let mut m = geese;
        while m != 0 {
            let g = m.trailing_zeros() as usize;
            m &= m - 1;
            for d in 0..8 {
                let n = self.step[g][d];
                if n != NONE && occupied >> n & 1 == 0 {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cross() {
        let g = Geometry::new(Diagonals::Alternate);
        assert_eq!(g.coords[0], (0, 2));
        assert_eq!(g.coords[16], (3, 3));
        assert_eq!(g.coords[32], (6, 4));
        for s in 0..8 {
            let mut seen = 0u64;
            for p in 0..CELLS {
                assert_ne!(g.perm[s][p], NONE);
                seen |= 1 << g.perm[s][p];
            }
            assert_eq!(seen, (1 << CELLS) - 1, "symmetry {s} is a permutation");
            assert_eq!(g.perm[s][16], 16);
        }
        // Every symmetry keeps the lines: the rules do not tell images apart.
        for diagonals in [Diagonals::All, Diagonals::Alternate] {
            let g = Geometry::new(diagonals);
            for s in 0..8 {
                for p in 0..CELLS {
                    let mut here: Vec<u8> = g.step[p]
                        .iter()
                        .copied()
                        .filter(|&n| n != NONE)
                        .map(|n| g.perm[s][n as usize])
                        .collect();
                    let mut there: Vec<u8> = g.step[g.perm[s][p] as usize]
                        .iter()
                        .copied()
                        .filter(|&n| n != NONE)
                        .collect();
                    here.sort_unstable();
                    there.sort_unstable();
                    assert_eq!(here, there);
                }
            }
        }
    }
}
