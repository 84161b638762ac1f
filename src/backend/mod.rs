//! Expansion backends: the CPU (rayon) and, with feature `cuda`, a CUDA GPU.
//! Both compute the same things bit for bit; every CUDA kernel in `kernels/`
//! has a CPU twin in [`cpu`].
//!
//! - [`rank24`]: the 24-cell two-colour multinomial hash in bitboard form
//!   (`kernels/common.cuh`).
//! - [`morris`]: Nine Men's Morris move expansion with incremental successor
//!   ranking, and the board tables the kernel receives (`kernels/morris.cu`).
//! - [`connect4`]: one Connect Four partition from the next one's values, one
//!   index per thread (`kernels/connect4.cu`), with its CPU twin;
//!   [`accel_connect4`] hands a build's partitions to it.
//! - [`cpu`]: rayon drivers over rank ranges and rank lists.
//! - `cuda`: the device, NVRTC compilation, pinned double-buffered streaming.

pub mod accel;
pub mod accel_connect4;
pub mod connect4;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod morris;
pub mod morris_retro;
pub mod rank24;
