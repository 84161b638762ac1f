//! The candidate-driven Morris solver (`CpuTwin::solve`, the scheme of
//! the retro kernels of kernels/morris.cu) against the full-scan passes (`CpuTwin::solve_full_scan`,
//! every pending position re-checked in every pass), partition by partition
//! of morris max=4, both symmetry settings. The full scan is itself checked
//! against solve::solve_partition on max=3 (tests/cuda_morris_retro.rs runs the
//! candidate-driven twin there); max=4 through the game's generic solver takes
//! too long for CI.

use crate::common;

use common::{assert_same_values, cpu_values, morris, solve_in_order};
use tbforge::game::morris::kernels::{dependencies, spec_of};
use tbforge::game::morris::retro::CpuTwin;
use tbforge::solve::Layout;

fn compare(max: u32, symmetry: &str) -> Option<Vec<(String, u32)>> {
    let game = morris(max, symmetry);
    let layout = Layout::new(&game).unwrap();
    let mut out = Vec::new();
    solve_in_order(&game, &layout, |slot, name, deps, before| {
        let Some(spec) = spec_of(&game, layout.order()[slot]) else {
            assert!(name.starts_with("2-"), "{name} was declined");
            return Some(cpu_values(&game, &layout, deps, slot));
        };
        let d = dependencies(&spec, before).unwrap();
        let twin = CpuTwin::new(spec, d).unwrap();
        let t = std::time::Instant::now();
        let fast = twin.solve().unwrap();
        let t_fast = t.elapsed().as_secs_f64();
        let full = twin.solve_full_scan().unwrap();
        eprintln!(
            "{name}: candidates {t_fast:.2} s, full scan {:.2} s",
            t.elapsed().as_secs_f64() - t_fast
        );
        assert_same_values(
            name,
            ("candidates", &fast.value),
            ("full scan", &full.value),
        );
        assert_eq!(fast.passes, full.passes, "{name}");
        assert_eq!(fast.first_pending, full.first_pending, "{name}");
        assert_eq!(fast.max_seen, full.max_seen, "{name}");
        // Some positions are decided in passes (not all by the scan).
        let decided_in_passes = fast.value.iter().filter(|&&v| v >= 2).count() as u64;
        assert!(decided_in_passes > 0, "{name}");
        out.push((name.to_string(), fast.passes));
        Some(fast.value)
    });
    Some(out)
}

/// Symmetry on only, as the max=4 comparison it vouches for: the
/// candidate-driven twin meets the generic solver with symmetry off in
/// tests/cuda_morris_retro.rs, and the full scan here would add 18 s.
#[test]
fn candidates_match_full_scan_max3() {
    if let Some(parts) = compare(3, "on") {
        assert_eq!(parts, [("3-3".to_string(), 27)]);
    }
}

#[test]
fn candidates_match_full_scan_max4_symmetry_on() {
    if let Some(parts) = compare(4, "on") {
        let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["3-3", "4-3", "4-4"]);
        // Pass counts of kernels/PERF.md (H100 run, full-scan solver).
        assert_eq!(parts.iter().map(|p| p.1).collect::<Vec<_>>(), [27, 34, 10]);
    }
}

/// Every index used: 16 times the work of symmetry=on (~1 h on 2 cores).
#[test]
#[ignore = "slow: run with --ignored on a machine with many cores"]
fn candidates_match_full_scan_max4_symmetry_off() {
    if let Some(parts) = compare(4, "off") {
        assert_eq!(parts.len(), 3);
    }
}
