//! Devices any game's kernels run on. The CPU backend is rayon's pool, on
//! which the games' CPU twins of their kernels run; with feature `cuda`,
//! [`cuda`] opens a CUDA device, compiles and loads kernel sources and moves
//! data. Nothing here knows a game: each game's kernels and their host side
//! live in its own folder under `src/game/`.

#[cfg(feature = "cuda")]
pub mod cuda;

pub mod stream;
