//! What the PID namespace's init shows of itself: nothing of the runner.
//!
//! The init is a fork of the runner, so its `/proc/1/cmdline` and
//! `/proc/1/environ` would read the runner's own argument and environment
//! strings (data paths, flags, whatever the runner was started with). The
//! init, before it forks the command, zeroes those strings in its copy of
//! the memory and then points the kernel's bounds of both at an empty
//! range (`PR_SET_MM_MAP`, which needs no capability), so both files read
//! as empty; where the kernel refuses the second step (built without
//! checkpoint/restore), they read as zero bytes. Its name (`comm`) becomes
//! `init`. The bounds are read from `/proc/self/stat` once, in the runner;
//! the child only writes memory and makes two `prctl` calls.
//!
//! The zygote does the same to itself around each clone, and puts it all
//! back after ([`Veil`]): what it clones into the attempt's PID namespace
//! while a command runs there is born blank, before any command can look.

use std::sync::OnceLock;

/// The runner's memory layout as `/proc/self/stat` gives it, fields 26-28
/// and 45-51 (the current `brk` is asked of the kernel in the child).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Image {
    start_code: u64,
    end_code: u64,
    start_stack: u64,
    start_data: u64,
    end_data: u64,
    start_brk: u64,
    arg_start: u64,
    arg_end: u64,
    env_start: u64,
    env_end: u64,
}

/// `struct prctl_mm_map` (linux/prctl.h).
#[repr(C)]
struct MmMap {
    start_code: u64,
    end_code: u64,
    start_data: u64,
    end_data: u64,
    start_brk: u64,
    brk: u64,
    start_stack: u64,
    arg_start: u64,
    arg_end: u64,
    env_start: u64,
    env_end: u64,
    auxv: *mut u64,
    auxv_size: u32,
    exe_fd: u32,
}

/// The runner's layout, read once; `None` if `/proc/self/stat` cannot be
/// read or parsed (then nothing is blanked, which `doctor` would not
/// show, but the command still runs).
pub(crate) fn runner_image() -> Option<Image> {
    static IMAGE: OnceLock<Option<Image>> = OnceLock::new();
    *IMAGE.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        parse_stat(&stat)
    })
}

/// Parses the fields after the command name (which is in parentheses and
/// may hold spaces): field N of proc(5) is at index N - 3.
fn parse_stat(stat: &str) -> Option<Image> {
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    let image = Image {
        start_code: field(26)?,
        end_code: field(27)?,
        start_stack: field(28)?,
        start_data: field(45)?,
        end_data: field(46)?,
        start_brk: field(47)?,
        arg_start: field(48)?,
        arg_end: field(49)?,
        env_start: field(50)?,
        env_end: field(51)?,
    };
    // Zeros mean the kernel hid the layout (no ptrace access to itself).
    (image.arg_start != 0 && image.arg_start <= image.arg_end && image.env_start <= image.env_end)
        .then_some(image)
}

impl Image {
    /// Runs in the init after fork: blanks the argument and environment
    /// strings and empties their bounds, and renames the process. System
    /// calls and plain memory writes only; failures are ignored (the
    /// strings are zeroed either way).
    pub(crate) fn blank(&self) {
        for (start, end) in self.strings() {
            let len = usize::try_from(end - start).unwrap_or(0);
            // SAFETY: [start, end) are this process's own argument or
            // environment strings (on its initial stack, writable),
            // inherited unchanged through fork from the process whose
            // /proc/self/stat named them; nothing in this process reads
            // them afterwards (the command's argv and environment were
            // built separately, before the fork; a veil's copy is its own).
            unsafe { std::ptr::write_bytes(start as usize as *mut u8, 0, len) };
        }
        let empty = (self.arg_start, self.arg_start);
        self.set_bounds(empty, empty);
        // SAFETY: PR_SET_NAME reads a NUL-terminated static string.
        unsafe { libc::prctl(libc::PR_SET_NAME, c"init".as_ptr(), 0, 0, 0) };
    }

    /// Blanks this process (as [`blank`](Self::blank)) until the veil is
    /// dropped, which puts back its strings, their bounds and its name.
    /// The zygote holds one around each clone: a process cloned
    /// meanwhile is born blank, so no command watching `/proc` ever reads
    /// the zygote's arguments (the runner's pid) or name in it, however
    /// early it looks. Single-threaded callers only.
    pub(crate) fn veil(&self) -> Veil {
        let saved = self.strings().map(|(start, end)| {
            let len = usize::try_from(end - start).unwrap_or(0);
            // SAFETY: as in `blank`: this process's own strings, live
            // and unchanged since its stat line named them.
            unsafe { std::slice::from_raw_parts(start as usize as *const u8, len) }.to_vec()
        });
        let mut name = [0u8; 17];
        // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL included, into
        // a buffer that holds 17.
        unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr(), 0, 0, 0) };
        self.blank();
        Veil {
            image: *self,
            saved,
            name,
        }
    }

    /// The argument and the environment strings' ranges.
    fn strings(&self) -> [(u64, u64); 2] {
        [
            (self.arg_start, self.arg_end),
            (self.env_start, self.env_end),
        ]
    }

    /// Points the kernel's bounds of the argument and environment strings
    /// (what `/proc/PID/cmdline` and `environ` read) at `args` and `env`;
    /// whether the kernel took them (it does not where it was built
    /// without checkpoint/restore).
    fn set_bounds(&self, args: (u64, u64), env: (u64, u64)) -> bool {
        // SAFETY: brk(0) only returns the current break.
        let brk = unsafe { libc::syscall(libc::SYS_brk, 0) } as u64;
        let map = MmMap {
            start_code: self.start_code,
            end_code: self.end_code,
            start_data: self.start_data,
            end_data: self.end_data,
            start_brk: self.start_brk,
            brk,
            start_stack: self.start_stack,
            arg_start: args.0,
            arg_end: args.1,
            env_start: env.0,
            env_end: env.1,
            auxv: std::ptr::null_mut(),
            auxv_size: 0,
            exe_fd: u32::MAX,
        };
        // SAFETY: the kernel copies a struct of exactly the size passed
        // from this frame; auxv_size 0 and exe_fd -1 leave both unchanged.
        let done = unsafe {
            libc::prctl(
                libc::PR_SET_MM,
                libc::PR_SET_MM_MAP as libc::c_ulong,
                &map as *const MmMap,
                std::mem::size_of::<MmMap>(),
                0,
            )
        };
        done == 0
    }
}

/// A process blanked for a while (see [`Image::veil`]).
pub(crate) struct Veil {
    image: Image,
    /// The argument and environment strings as they were.
    saved: [Vec<u8>; 2],
    /// The name as it was, NUL-terminated.
    name: [u8; 17],
}

impl Drop for Veil {
    fn drop(&mut self) {
        for ((start, _), bytes) in self.image.strings().into_iter().zip(&self.saved) {
            // SAFETY: writes back, byte for byte, what `veil` copied out of
            // the same range of this process's own strings.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    start as usize as *mut u8,
                    bytes.len(),
                );
            }
        }
        let [args, env] = self.image.strings();
        self.image.set_bounds(args, env);
        // SAFETY: PR_SET_NAME reads a NUL-terminated string: `name` holds
        // at most 16 bytes from PR_GET_NAME and ends in NUL.
        unsafe { libc::prctl(libc::PR_SET_NAME, self.name.as_ptr(), 0, 0, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runners_layout_is_read_from_its_stat_line() {
        let image = runner_image().expect("this test process has a readable stat");
        assert!(image.arg_start < image.arg_end);
        assert!(image.start_code < image.end_code);
        let stat = "1 (a b) c) S 0 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0 \
                    100 200 300 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 \
                    400 500 600 700 800 900 1000 0";
        let parsed = parse_stat(stat).unwrap();
        assert_eq!((parsed.start_code, parsed.end_code), (100, 200));
        assert_eq!(parsed.start_stack, 300);
        assert_eq!((parsed.start_data, parsed.end_data), (400, 500));
        assert_eq!(parsed.start_brk, 600);
        assert_eq!((parsed.arg_start, parsed.arg_end), (700, 800));
        assert_eq!((parsed.env_start, parsed.env_end), (900, 1000));
    }
}
