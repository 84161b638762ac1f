//! What the games' device checks of their streamed expanders share
//! (`tbforge bench gpu`): chunks of random input bytes, running them through
//! an expander, comparing what came back with a reference, and a pass's
//! input made from a first scan's output.

use super::kernels::{
    block_lookup_twin, ChunkDone, ChunkExpander, ChunkJob, DeviceCheckRow, StreamTargets,
    STREAM_PENDING,
};
use crate::hash::kernel_mix64 as mix64;
use crate::Result;

/// The chunks of indices `lo..hi` (`lo` a multiple of 64) of at most
/// `chunk` indices each, first-scan jobs with random values and flags (a
/// first scan must overwrite both).
pub(crate) fn noisy_jobs(lo: u64, hi: u64, chunk: u64, seed: u64) -> Vec<ChunkJob> {
    let mut jobs = Vec::new();
    let mut at = lo;
    while at < hi {
        let n = chunk.min(hi - at) as usize;
        let noise =
            |i: usize, salt: u64| (mix64(seed ^ mix64((at + i as u64) ^ salt)) & 0xff) as u8;
        jobs.push(ChunkJob {
            chunk: jobs.len() as u64,
            lo: at,
            first_scan: true,
            values: (0..n).map(|i| noise(i, 1)).collect(),
            flags: (0..n.div_ceil(4)).map(|i| noise(i, 2)).collect(),
        });
        at += n as u64;
    }
    jobs
}

/// A copy of a chunk's job.
pub(crate) fn copy_job(j: &ChunkJob) -> ChunkJob {
    ChunkJob {
        chunk: j.chunk,
        lo: j.lo,
        first_scan: j.first_scan,
        values: j.values.clone(),
        flags: j.flags.clone(),
    }
}

/// Runs `jobs` through `ex`, keeping up to its depth in flight, in order.
pub(crate) fn run_chunks(
    ex: &mut dyn ChunkExpander,
    jobs: Vec<ChunkJob>,
) -> Result<Vec<ChunkDone>> {
    let depth = ex.depth().max(1);
    let mut done = Vec::with_capacity(jobs.len());
    let mut in_flight = 0;
    for job in jobs {
        if in_flight == depth {
            done.push(ex.collect()?);
            in_flight -= 1;
        }
        ex.submit(job)?;
        in_flight += 1;
    }
    for _ in 0..in_flight {
        done.push(ex.collect()?);
    }
    Ok(done)
}

/// Where two lists first differ, if they do.
fn first_difference<T: PartialEq + std::fmt::Debug>(want: &[T], got: &[T]) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!("{} items, {} expected", got.len(), want.len()));
    }
    let i = want.iter().zip(got).position(|(w, g)| w != g)?;
    Some(format!(
        "first difference at {i}: expected {:?}, got {:?}",
        want[i], got[i]
    ))
}

/// `None` when the chunks `got` equal the reference's `want` (values,
/// flags, the multiset of requests) and each of them is grouped by bucket;
/// else the first difference.
pub(crate) fn chunks_difference(
    want: &[ChunkDone],
    got: &[ChunkDone],
    low_bits: u32,
) -> Option<String> {
    if want.len() != got.len() {
        return Some(format!(
            "{} chunks back, {} expected",
            got.len(),
            want.len()
        ));
    }
    for (w, g) in want.iter().zip(got) {
        let c = w.chunk;
        if (g.chunk, g.lo) != (w.chunk, w.lo) {
            return Some(format!(
                "chunk {c} came back as chunk {} at {}",
                g.chunk, g.lo
            ));
        }
        if let Some(d) = first_difference(&w.values, &g.values) {
            return Some(format!("chunk {c} values: {d}"));
        }
        // Index by index: the bits past a partial last chunk's end are
        // nobody's (the reference leaves them, a device clears them).
        let flags = |d: &ChunkDone| -> Vec<u8> {
            (0..d.values.len())
                .map(|j| d.flags.get(j / 4).map_or(4, |b| (b >> (2 * (j % 4))) & 3))
                .collect()
        };
        if let Some(d) = first_difference(&flags(w), &flags(g)) {
            return Some(format!("chunk {c} flags: {d}"));
        }
        if let Some(d) = first_difference(&w.sorted_requests(), &g.sorted_requests()) {
            return Some(format!("chunk {c} sorted requests: {d}"));
        }
        if !g.grouped(low_bits) {
            return Some(format!("chunk {c}: requests not grouped by bucket"));
        }
    }
    None
}

/// A pass's input from a first scan's output `first`: a random third of its
/// pending positions decided (odd distances: a win, as a pass writes
/// them); and the same jobs sent without values.
pub(crate) fn pass_jobs(first: Vec<ChunkDone>, seed: u64) -> (Vec<ChunkJob>, Vec<ChunkJob>) {
    let with_values: Vec<ChunkJob> = first
        .into_iter()
        .map(|d| {
            let values = d
                .values
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let z = mix64(seed ^ mix64(d.lo + i as u64));
                    if v == STREAM_PENDING && z % 3 == 0 {
                        3 + 2 * ((z >> 8) % 60) as u8
                    } else {
                        v
                    }
                })
                .collect();
            ChunkJob {
                chunk: d.chunk,
                lo: d.lo,
                first_scan: false,
                values,
                flags: d.flags,
            }
        })
        .collect();
    let bare = with_values
        .iter()
        .map(|j| {
            let mut bare = copy_job(j);
            bare.drop_values();
            bare
        })
        .collect();
    (with_values, bare)
}

/// The row of a pass answered on the device (`tb_block_lookup` against its
/// twin, [`block_lookup_twin`]): `jobs` run through `ex` with random
/// can-block bits for the whole partition, each chunk's blocked bits
/// against the twin's over `want`, the reference's expansion of the same
/// jobs with its requests. A note where the expander declines (the CPU's,
/// or bits that do not fit it) or the partition's bits pass 128 MB.
pub(crate) fn answered_row(
    ex: &mut dyn ChunkExpander,
    targets: &StreamTargets,
    jobs: Vec<ChunkJob>,
    want: &[ChunkDone],
    seed: u64,
    row: DeviceCheckRow,
) -> Result<DeviceCheckRow> {
    let own_base = targets.base_of(targets.partition).unwrap_or(0);
    let words = ((targets.buckets - own_base) * targets.lookup_chunk).div_ceil(64);
    if words > 1 << 24 {
        return Ok(row.note(format!(
            "not checked: the partition's can-block bits ({} MB) pass the check's 128 MB",
            words >> 17
        )));
    }
    // About a quarter of the positions block: requesters blocked and not.
    let bits: Vec<u64> = (0..words)
        .map(|i| mix64(seed ^ mix64(i)) & mix64(seed ^ mix64(!i)))
        .collect();
    if !ex.answer_on_device(Some(&bits))? {
        return Ok(row.note(format!(
            "the {} expander does not answer passes itself",
            ex.name()
        )));
    }
    let started = std::time::Instant::now();
    let got = run_chunks(ex, jobs);
    let seconds = started.elapsed().as_secs_f64();
    ex.answer_on_device(None)?;
    let got = got?;
    let positions: u64 = want.iter().map(|d| d.values.len() as u64).sum();
    let row = row.gpu(positions, seconds);
    if got.len() != want.len() {
        return Ok(row.matched(
            false,
            format!("{} chunks back, {} expected", got.len(), want.len()),
        ));
    }
    let (mut looked_up, mut blocked) = (0u64, 0u64);
    for (w, g) in want.iter().zip(&got) {
        let n = w.values.len();
        let twin = block_lookup_twin(&w.requests, targets, w.lo, n, &bits)?;
        let c = w.chunk;
        if !g.requests.is_empty() {
            return Ok(row.matched(false, format!("chunk {c}: requests came back")));
        }
        if g.looked_up != w.requests.len() as u64 {
            return Ok(row.matched(
                false,
                format!(
                    "chunk {c}: {} successors looked up, {} requested",
                    g.looked_up,
                    w.requests.len()
                ),
            ));
        }
        if let Some(d) = first_difference(&twin, &g.blocked) {
            return Ok(row.matched(false, format!("chunk {c} blocked bits: {d}")));
        }
        looked_up += g.looked_up;
        blocked += twin.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
    }
    Ok(row.matched(
        true,
        format!(
            "{} chunks, {looked_up} successors looked up on the device, {blocked} positions blocked: bits equal the twin's",
            got.len()
        ),
    ))
}
