//! Copies between the GPUs of one process: a device buffer named so that
//! another member of a team of threads can find it ([`PeerBuffer`]), peer
//! access between two devices, and copies from and to another device.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DriverError};

use super::{cuda_err, CudaDevice};
use crate::{Error, Result};

/// A device buffer as another member of a team of threads sees it (its
/// context, device and address under unified addressing): what members of
/// one process exchange so that each can copy from the others' devices
/// directly ([`CudaDevice::copy_from_peer`]) rather than through host
/// memory. Meaningless in another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerBuffer {
    context: u64,
    device: i32,
    address: u64,
    bytes: u64,
}

impl PeerBuffer {
    /// Bytes of [`Self::to_bytes`].
    pub const ENCODED: usize = 28;

    /// `slice`, allocated on `device`.
    pub fn of<T>(device: &CudaDevice, slice: &CudaSlice<T>) -> PeerBuffer {
        let stream = slice.stream();
        let (address, _sync) = cudarc::driver::DevicePtr::device_ptr(slice, stream);
        PeerBuffer {
            context: device.ctx.cu_ctx() as usize as u64,
            device: device.ctx.cu_device(),
            address,
            bytes: (slice.len() * std::mem::size_of::<T>()) as u64,
        }
    }

    /// Its bytes, to be sent to the other members.
    pub fn to_bytes(&self) -> [u8; Self::ENCODED] {
        let mut out = [0u8; Self::ENCODED];
        out[0..8].copy_from_slice(&self.context.to_le_bytes());
        out[8..12].copy_from_slice(&self.device.to_le_bytes());
        out[12..20].copy_from_slice(&self.address.to_le_bytes());
        out[20..28].copy_from_slice(&self.bytes.to_le_bytes());
        out
    }

    /// The buffer `bytes` describe (`None` unless they are [`Self::ENCODED`] long).
    pub fn from_bytes(bytes: &[u8]) -> Option<PeerBuffer> {
        let b: &[u8; Self::ENCODED] = bytes.try_into().ok()?;
        Some(PeerBuffer {
            context: u64::from_le_bytes(b[0..8].try_into().ok()?),
            device: i32::from_le_bytes(b[8..12].try_into().ok()?),
            address: u64::from_le_bytes(b[12..20].try_into().ok()?),
            bytes: u64::from_le_bytes(b[20..28].try_into().ok()?),
        })
    }

    /// Its length in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl CudaDevice {
    /// Lets kernels and copies of this device's context reach `peer`'s
    /// device memory directly (NVLink or PCIe) where the hardware allows it.
    /// Where it does not, nothing changes: peer copies then go through host
    /// memory inside the driver. Whether copies from `peer` are direct
    /// (always on the same context).
    pub fn enable_peer_access(&self, peer: &PeerBuffer) -> Result<bool> {
        if self.ctx.cu_ctx() as usize as u64 == peer.context {
            return Ok(true);
        }
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&direct) = peers.get(&peer.context) {
            return Ok(direct);
        }
        let direct = self.open_to_peer(peer)?;
        peers.insert(peer.context, direct);
        Ok(direct)
    }

    /// [`Self::enable_peer_access`] the first time for `peer`.
    fn open_to_peer(&self, peer: &PeerBuffer) -> Result<bool> {
        use cudarc::driver::sys;
        self.ctx
            .bind_to_thread()
            .map_err(cuda_err("binding the context"))?;
        let mut can = 0;
        // SAFETY: FFI into the driver with a valid out-pointer and two
        // device ordinals of this process's driver.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, self.ctx.cu_device(), peer.device) }
            .result()
            .map_err(cuda_err("asking whether two GPUs reach each other"))?;
        if can == 0 {
            return Ok(false);
        }
        // SAFETY: `peer.context` is a live context of this process (a team
        // member's, which keeps its device open for the whole build); this
        // context is bound to the thread.
        let r = unsafe { sys::cuCtxEnablePeerAccess(peer.context as usize as sys::CUcontext, 0) };
        match r {
            sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
            }
            other => {
                return Err(cuda_err("enabling peer access between GPUs")(DriverError(
                    other,
                )))
            }
        }
        // cudarc allocates from the device's memory pool (cuMemAllocAsync),
        // which context peer access does not open: the pool grants the peer
        // access itself, or copies from it crawl through host memory
        // (measured: 20 GB/s between two NVLinked H100s).
        if self.ctx.has_async_alloc() {
            let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
            // SAFETY: FFI with a valid out-pointer and this context's device.
            unsafe { sys::cuDeviceGetMemPool(&mut pool, self.ctx.cu_device()) }
                .result()
                .map_err(cuda_err("finding the device's memory pool"))?;
            let access = sys::CUmemAccessDesc {
                location: sys::CUmemLocation {
                    type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                    id: peer.device,
                },
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: `pool` is this device's current pool (from the driver
            // above) and `access` one valid descriptor naming a device that
            // can reach this one (checked above).
            unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) }
                .result()
                .map_err(cuda_err("opening the memory pool to another GPU"))?;
        }
        Ok(true)
    }

    /// Queues on `stream` (of this device) a copy of `count` elements from
    /// `src` (starting at element `src_at`) into `dst` (starting at element
    /// `dst_at`).
    ///
    /// # Safety
    /// `src` must describe a live buffer of this process holding at least
    /// `src_at + count` elements of `T`, that no one writes or frees until
    /// `stream` has passed this copy (the caller synchronises `stream`
    /// before telling the buffer's owner it may go on).
    pub unsafe fn copy_from_peer<T>(
        &self,
        stream: &Arc<CudaStream>,
        dst: &mut CudaSlice<T>,
        dst_at: usize,
        src: &PeerBuffer,
        src_at: usize,
        count: usize,
    ) -> Result<()> {
        let dst = PeerBuffer::of(self, dst);
        // SAFETY: `dst` is this device's, borrowed mutably for the call;
        // `src` as the caller promises.
        unsafe { self.copy_between(stream, &dst, dst_at, src, src_at, count, size_of::<T>()) }
    }

    /// A copy of `count` elements of `unit` bytes between two buffers of
    /// this process, queued on `stream` (of this device), bounds checked.
    ///
    /// # Safety
    /// Both buffers must be live, and no one but this copy may touch them
    /// (the source: write them) until `stream` has passed it.
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_between(
        &self,
        stream: &Arc<CudaStream>,
        dst: &PeerBuffer,
        dst_at: usize,
        src: &PeerBuffer,
        src_at: usize,
        count: usize,
        unit: usize,
    ) -> Result<()> {
        if count == 0 {
            return Ok(());
        }
        if ((dst_at + count) * unit) as u64 > dst.bytes
            || ((src_at + count) * unit) as u64 > src.bytes
        {
            return Err(Error::Cuda(format!(
                "a copy between GPUs of {count} elements out of bounds (from {src_at} of {} bytes, into {dst_at} of {} bytes); report this as a bug",
                src.bytes, dst.bytes
            )));
        }
        self.ctx
            .bind_to_thread()
            .map_err(cuda_err("binding the context"))?;
        let context = |b: &PeerBuffer| b.context as usize as cudarc::driver::sys::CUcontext;
        // SAFETY: both ranges are in bounds (checked above); both buffers
        // stay live and untouched until the stream passes the copy (the
        // caller's contract).
        unsafe {
            cudarc::driver::result::memcpy_peer_async(
                context(dst),
                dst.address + (dst_at * unit) as u64,
                context(src),
                src.address + (src_at * unit) as u64,
                count * unit,
                stream.cu_stream(),
            )
        }
        .map_err(cuda_err("copying between GPUs"))
    }
}

impl CudaDevice {
    /// Queues on `stream` (of this device) a copy of `count` elements from
    /// `src` (starting at element `src_at`) into `dst`, another member's
    /// buffer (starting at element `dst_at`).
    ///
    /// # Safety
    /// `dst` must describe a live buffer of this process holding at least
    /// `dst_at + count` elements of `T`, that no one reads, writes or frees
    /// until `stream` has passed this copy (the caller synchronises `stream`
    /// before telling the buffer's owner it may go on).
    pub unsafe fn copy_to_peer<T>(
        &self,
        stream: &Arc<CudaStream>,
        dst: &PeerBuffer,
        dst_at: usize,
        src: &CudaSlice<T>,
        src_at: usize,
        count: usize,
    ) -> Result<()> {
        let src = PeerBuffer::of(self, src);
        // SAFETY: `src` is this device's, borrowed for the call; `dst` as
        // the caller promises.
        unsafe { self.copy_between(stream, dst, dst_at, &src, src_at, count, size_of::<T>()) }
    }
}
