//! The device's page-locked copy buffers: bounded (as a build under
//! `--mem-limit` bounds them) and grown by the copies, every copy in and
//! back comes whole, whatever the pieces it is cut into. Skipped without a
//! GPU.
#![cfg(feature = "cuda")]

use tbforge::backend::cuda::CudaDevice;

#[test]
fn copies_through_bounded_buffers_come_back_whole() {
    let device = match CudaDevice::open(0) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("SKIPPED copies_through_bounded_buffers_come_back_whole: {e}");
            return;
        }
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let bytes = |n: usize| -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    };
    // Below, at and past one buffer of the bound, and many buffers of it,
    // growing and then shrinking (the buffers are kept between copies).
    let cap = 64 << 10;
    device.limit_copy_buffers(cap);
    assert_eq!(device.copy_buffer_bytes(), cap);
    for n in [1, 1000, cap, cap + 1, 5 * cap + 12_345, 4096] {
        let data = bytes(n);
        let on_device = device.upload(&data).unwrap();
        assert_eq!(
            device.download(&on_device).unwrap(),
            data,
            "{n} bytes, seed {seed}"
        );
    }
    // A bound below the least buffer is raised to it; above the most, cut.
    device.limit_copy_buffers(1);
    assert_eq!(device.copy_buffer_bytes(), cap);
    device.limit_copy_buffers(usize::MAX);
    assert_eq!(device.copy_buffer_bytes(), 64 << 20);
    let data = bytes(3 << 20);
    let on_device = device.upload(&data).unwrap();
    assert_eq!(
        device.download(&on_device).unwrap(),
        data,
        "3 MiB, seed {seed}"
    );
}
