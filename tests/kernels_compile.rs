//! Every kernel in kernels/ compiles to PTX for sm_90 through NVRTC, on a
//! machine without a GPU. NVRTC comes from the CUDA toolkit or the PyPI wheel
//! `nvidia-cuda-nvrtc` (scripts/ci-nvrtc.sh installs it under
//! ~/.cache/tbforge-nvrtc). Without NVRTC the test is skipped with a notice,
//! or fails when TBFORGE_REQUIRE_NVRTC=1 (CI sets it).
#![cfg(feature = "cuda")]

use std::path::PathBuf;
use std::process::Command;

use tbforge::backend::cuda::{compile_kernel, kernel_source, nvrtc_available};
use tbforge::registry::kernel_sources;

/// Where scripts/ci-nvrtc.sh puts the wheel's libraries.
fn wheel_lib_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let dir = PathBuf::from(home).join(".cache/tbforge-nvrtc/nvidia/cu13/lib");
    dir.join("libnvrtc.so.13").exists().then_some(dir)
}

/// The entry points common.cuh gives every kernel file: the streamed
/// path's grouping of requests by bucket.
const COMMON_ENTRIES: [&str; 4] = [
    "tb_bucket_count",
    "tb_bucket_scan",
    "tb_bucket_scatter",
    "tb_block_lookup",
];

/// The entry points each kernel file must define, besides [`COMMON_ENTRIES`].
fn entries(file: &str) -> &'static [&'static str] {
    match file {
        "morris.cu" => &[
            "tb_rank_check",
            "class_rank_check",
            "morris_expand3w",
            "morris_summary3b_lb",
            "retro_first_scan",
            "retro_candidates",
            "retro_compact",
            "retro_merge_marks",
            "retro_pass_candidates",
            "place_solve",
            "place_expand",
            "morris_stream_expand",
        ],
        "connect4.cu" => &[
            "connect4_solve",
            "connect4_expand",
            "connect4_stream_expand",
        ],
        "frogsandtoads.cu" => &[
            "ft_expand_check",
            "ft_two_bit_step",
            "ft_byte_step",
            "ft_byte_finish",
        ],
        "pegsolitaire.cu" => &["pg_solve", "pg_expand"],
        "foxandgeese.cu" => &["fg_init", "fg_candidates", "fg_expand", "fg_check"],
        "checkers.cu" => &[
            "checkers_first_scan",
            "checkers_pass",
            "checkers_list_pending",
            "checkers_fill_targets",
            "checkers_pass_listed",
            "checkers_successors",
            "checkers_stream_expand",
            "checkers_frontier_count",
            "checkers_frontier_scan_tiles",
            "checkers_frontier_scan_add",
            "checkers_frontier_expand",
            "checkers_frontier_leaves",
            "checkers_frontier_backup",
        ],
        "permutation.cu" => &[
            "perm_expand",
            "perm_two_bit_step",
            "perm_byte_step",
            "perm_byte_finish",
        ],
        other => panic!("kernel file {other} has no entry list in this test: add one"),
    }
}

#[test]
fn every_kernel_compiles_for_sm_90() {
    if nvrtc_available().is_err() {
        // The dynamic loader reads LD_LIBRARY_PATH at start only: run this
        // test again in a child process that can see the wheel's libraries.
        if std::env::var_os("TBFORGE_NVRTC_REEXEC").is_none() {
            if let Some(dir) = wheel_lib_dir() {
                let mut path = dir.into_os_string();
                if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
                    path.push(":");
                    path.push(old);
                }
                let out = Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "every_kernel_compiles_for_sm_90", "--nocapture"])
                    .env("LD_LIBRARY_PATH", path)
                    .env("TBFORGE_NVRTC_REEXEC", "1")
                    .output()
                    .expect("re-running the test binary");
                let text = String::from_utf8_lossy(&out.stdout).into_owned()
                    + &String::from_utf8_lossy(&out.stderr);
                println!("{text}");
                assert!(out.status.success(), "kernel compilation failed:\n{text}");
                assert!(text.contains("1 passed"), "the re-run ran no test:\n{text}");
                return;
            }
        }
        let why = nvrtc_available().unwrap_err();
        if std::env::var("TBFORGE_REQUIRE_NVRTC").as_deref() == Ok("1") {
            panic!("{why}. Install it with scripts/ci-nvrtc.sh (PyPI wheel nvidia-cuda-nvrtc==13.0.88).");
        }
        eprintln!("SKIPPED every_kernel_compiles_for_sm_90: {why}");
        return;
    }
    for (file, source) in kernel_sources() {
        let ptx = compile_kernel(file, source, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let text = ptx.to_src();
        assert!(
            text.contains(".target sm_90"),
            "{file}: not built for sm_90"
        );
        for entry in entries(file).iter().chain(&COMMON_ENTRIES) {
            assert!(
                text.contains(&format!(".entry {entry}(")),
                "{file}: no entry point {entry}"
            );
        }
        // Every entry point of a file is listed: a kernel added or left
        // behind shows here (and needs a CPU twin and a row in `bench gpu`).
        let defined = text.matches(".entry ").count();
        let listed = entries(file).len() + COMMON_ENTRIES.len();
        assert_eq!(
            defined, listed,
            "{file}: {defined} entry points, the lists name {listed}"
        );
        // The Morris host fills TB_BIN in its module: it must survive.
        if file == "morris.cu" {
            assert!(
                text.contains(" TB_BIN["),
                "{file}: __constant__ TB_BIN was optimised away"
            );
        }
        // A per-thread array spilled to local memory would show as a depot:
        // the kernels keep everything in registers and shared memory.
        assert!(
            !text.contains("__local_depot"),
            "{file}: uses local memory (a per-thread array indexed at run time?)"
        );
        println!("{file}: {} bytes of PTX for sm_90", text.len());
    }
}

#[test]
fn one_kernel_file_per_game() {
    let files: Vec<&str> = kernel_sources().iter().map(|(f, _)| *f).collect();
    // permutation.cu: the permutation puzzles' one shared kernel family.
    assert_eq!(
        files,
        [
            "morris.cu",
            "connect4.cu",
            "checkers.cu",
            "permutation.cu",
            "foxandgeese.cu",
            "frogsandtoads.cu",
            "pegsolitaire.cu"
        ]
    );
}

#[test]
fn kernel_sources_paste_common_header() {
    for (file, raw) in kernel_sources() {
        assert!(raw.contains("#include \"common.cuh\""), "{file}");
        let src = kernel_source(file, raw);
        assert!(
            !src.lines().any(|l| l.trim_start().starts_with("#include")),
            "{file}: an include left for NVRTC"
        );
        assert!(src.contains("typedef unsigned long long u64;"), "{file}");
        assert!(
            src.contains(&format!("\"{file}\"\n")),
            "{file}: no #line back to the file"
        );
    }
}
