//! Opening the CUDA backend where CUDA is missing or broken gives a one-line
//! error, never a panic.
#![cfg(feature = "cuda")]

use std::path::{Path, PathBuf};
use std::process::Command;

use tbforge::backend::cuda::{compile_kernel, CudaDevice};

/// Directories the dynamic loader searches for libcuda.so.1 on usual systems.
fn libcuda_somewhere() -> bool {
    let mut dirs: Vec<PathBuf> = [
        "/lib",
        "/lib64",
        "/usr/lib",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/compat",
        "/usr/local/nvidia/lib64",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    dirs.iter().any(|d| d.join("libcuda.so.1").exists())
}

fn assert_clean(err: tbforge::Error) {
    let msg = err.to_string();
    assert!(msg.starts_with("CUDA backend unavailable: "), "{msg}");
    assert!(!msg.contains('\n'), "not one line: {msg}");
}

#[test]
fn open_without_driver_is_a_clean_error() {
    if libcuda_somewhere() {
        eprintln!("SKIPPED: this machine has libcuda.so.1");
        return;
    }
    let err = CudaDevice::open(0).expect_err("no driver, yet the backend opened");
    assert!(err.to_string().contains("no CUDA driver found"), "{err}");
    assert_clean(err);
}

/// A library named libcuda.so.1 that is not the driver (here: the C math
/// library) loads, but lacks every CUDA symbol, on which cudarc panics.
#[test]
fn open_with_a_bogus_driver_is_a_clean_error() {
    if std::env::var_os("TBFORGE_BOGUS_CUDA").is_some() {
        let err = CudaDevice::open(0).expect_err("a bogus driver opened");
        println!("clean error with a bogus libcuda: {err}");
        assert_clean(err);
        return;
    }
    let lib = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.exists());
    let Some(lib) = lib else {
        eprintln!("SKIPPED: no libm.so.6 to stand in for a bogus driver");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(lib, dir.path().join("libcuda.so.1")).unwrap();
    // With NVRTC on the path too (scripts/ci-nvrtc.sh's wheel), opening gets
    // past both probes and into driver calls whose symbols cudarc cannot find.
    let mut path = dir.path().as_os_str().to_owned();
    if let Some(home) = std::env::var_os("HOME") {
        let wheel = PathBuf::from(home).join(".cache/tbforge-nvrtc/nvidia/cu13/lib");
        if wheel.exists() {
            path.push(":");
            path.push(wheel);
        }
    }
    // This test's name in its binary: the module path without the crate.
    let name = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::open_with_a_bogus_driver_is_a_clean_error"),
        None => "open_with_a_bogus_driver_is_a_clean_error".to_string(),
    };
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--nocapture"])
        .env("LD_LIBRARY_PATH", path)
        .env("TBFORGE_BOGUS_CUDA", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    println!("{text}");
    assert!(out.status.success(), "{text}");
    assert!(text.contains("clean error with a bogus libcuda"), "{text}");
}

#[test]
fn compile_without_nvrtc_is_a_clean_error() {
    if tbforge::backend::cuda::nvrtc_available().is_ok() {
        eprintln!("SKIPPED: NVRTC is present");
        return;
    }
    let err = compile_kernel(
        "connect4.cu",
        tbforge::registry::kernel_sources()[0].1,
        "sm_90",
    )
    .expect_err("compiled without NVRTC");
    assert!(err.to_string().contains("NVRTC not found"), "{err}");
    assert_clean(err);
}
