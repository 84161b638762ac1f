//! Most integration tests, in one binary: each file of tests/ is a module
//! here. One binary links the library and instantiates its generic solvers
//! once, where sixty binaries did it sixty times (the test builds took most
//! of CI's 30 minutes on 2 cores).
//!
//! Kept apart, in binaries of their own: tests/morris_tables.rs (it builds
//! rayon's global pool and needs Morris's class tables unbuilt),
//! tests/kernels_compile.rs (scripts/ci-nvrtc.sh runs it alone),
//! tests/probe_only.rs (it also builds without default features), and
//! tests/mpi.rs (linted and run again with `--features mpi`). tests/team.rs
//! is a module here although MPI's lint covers it: as a binary of its own it
//! took 138 s of CI's test builds for 55 s of tests.

mod common;

mod bdd;
mod bench_zstd;
mod build;
mod checkers;
mod checkers_frontier;
mod checkers_kernels;
mod checkers_search;
mod checkers_stream;
mod cli;
mod cli_bench_gpu;
mod cli_pipe;
mod compare;
mod connect4;
mod connect4_stream;
mod connect4_team;
mod connect4_twin;
mod cuda_copies;
mod cuda_morris_retro;
mod cuda_open;
mod cuda_twin;
mod engine_files;
mod format_corruption;
mod format_fuzz;
mod format_roundtrip;
mod foxandgeese;
mod frogsandtoads;
mod golden;
mod hash_binomial;
mod hash_multinomial;
mod hash_permutation;
mod hash_seed000;
mod house;
mod layered;
mod lock;
mod morris;
mod morris_candidates;
mod morris_stream;
mod morris_team;
mod morris_whole;
mod nim;
mod pipeline;
mod pipeline_faults;
mod pipeline_memory;
mod probe_api;
mod probe_bench;
mod puzzle_foreandaft;
mod puzzle_kernels;
mod puzzle_pancake;
mod puzzle_pegsolitaire;
mod puzzle_slidingtile;
mod puzzle_topspin;
mod search;
mod serve;
mod stream;
mod team;
mod tictactoe;
mod weights;
