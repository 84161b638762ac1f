//! The `tbforge` binary: process set-up, then the command line (`src/cli`).

use std::process::ExitCode;

mod cli;

/// Makes glibc serve every allocation of 256 KiB or more (chunks, run
/// buffers) from its own mapping, returned to the system when freed. By
/// default glibc raises that threshold after each such free, so later big
/// buffers come from per-thread heap arenas that keep their freed memory:
/// measured on 16 threads, a pipeline build under `--mem-limit 128M` grew to
/// 331 MB that way, and stays at 67 MB with the threshold fixed.
fn return_large_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called first
    // thing in main, before any other thread exists, and M_MMAP_THRESHOLD with
    // a value below the 32 MiB maximum is a documented, valid setting.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
    }
}

/// Raises the soft limit on open files to the hard one: the pipeline keeps a
/// run file open per bucket it writes, and a game of many small partitions
/// (Morris) has hundreds of buckets; the usual soft limit of 1024 would send
/// it back to opening a file per piece written.
fn allow_many_open_files() {
    #[cfg(target_os = "linux")]
    // SAFETY: getrlimit/setrlimit read and write the struct we pass, which
    // lives on this stack frame; raising the soft limit up to the hard one
    // is always permitted.
    unsafe {
        let mut limit = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max.min(1 << 16);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Caps glibc's malloc arenas at four for a build under `--mem-limit`. By
/// default every thread that allocates may get an arena of its own, which
/// keeps what it freed: measured on a 16-thread pipeline build of 5.6 M indices
/// under `--mem-limit 16M`, peak RSS 15.6-16.8 MB with the default, 12.8-13.0
/// MB with four arenas (11.4 MB with one), at the same speed on 2 cores. The
/// pipeline's big buffers are separate mappings anyway (see above); arenas
/// only serve small allocations. Called before the worker threads start.
pub(crate) fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; M_ARENA_MAX with a
    // positive count is a documented, valid setting, and it is called before
    // the worker threads that would create more arenas exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 4);
    }
}

/// Lets a closed pipe end the process quietly, as it ends `cat` or `grep`:
/// Rust ignores SIGPIPE, so `tbforge games | head` made the next `println!`
/// fail with EPIPE and panic. A build killed this way is left as after any
/// interruption: finished files under their names, resumable.
fn end_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: signal() with SIG_DFL restores the default disposition of one
    // signal; called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    end_quietly_on_closed_pipe();
    return_large_buffers_to_the_system();
    allow_many_open_files();
    cli::main()
}
