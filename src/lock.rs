//! One miniplane per data dir.
//!
//! Two servers on one store would each believe they own every revision.
//! sled refuses the second with a raw OS error after a wait; this lock
//! refuses it at once and says who holds the dir. It is an advisory OS
//! file lock (`flock`) on `<data-dir>/lock`, which also holds the owner's
//! pid: the OS releases it when the process exits, kill -9 included, so a
//! crash never leaves a stale lock behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Held for the life of a server; dropping it releases the data dir.
#[derive(Debug)]
pub struct DataDirLock {
    file: File,
}

impl Drop for DataDirLock {
    /// Unlocks before the file closes. Closing alone is not enough: a child
    /// process another thread is spawning holds a copy of every descriptor
    /// until its exec closes them, and the lock belongs to the open file
    /// that copy shares, so it would outlive this handle for that moment.
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Why the data dir could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error(
        "the data dir {dir} is in use by another miniplane{pid}; stop that one, or pass another --data-dir",
        dir = .dir.display(),
        pid = .pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    InUse {
        /// The data dir.
        dir: PathBuf,
        /// The holder's pid, when it wrote one.
        pid: Option<u32>,
    },
    /// The lock file could not be opened or written.
    #[error("locking the data dir {dir}: {source}", dir = .dir.display())]
    Io {
        /// The data dir.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl DataDirLock {
    /// Locks `dir` (which must exist) for this process.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, LockError> {
        let io = |source| LockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join("lock"))
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(LockError::InUse {
                    dir: dir.to_path_buf(),
                    pid: text.trim().parse().ok(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DataDirLock { file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let err = DataDirLock::acquire(dir.path()).unwrap_err();
        let LockError::InUse { pid, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!(*pid, Some(std::process::id()));
        let message = err.to_string();
        assert!(
            message.contains("is in use by another miniplane (pid "),
            "{message}"
        );
        assert!(!message.contains('\n'));
        drop(first);
        DataDirLock::acquire(dir.path()).expect("released on drop");
    }

    /// A child spawned by another thread holds a copy of every descriptor
    /// until its exec closes them; a lock released only by closing would
    /// stay held through that copy, and a restart at that moment would be
    /// refused by its own process (seen in CI, where tests run kubectl).
    #[test]
    fn a_lock_dropped_while_children_are_spawned_is_free_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spawner = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::process::Command::new("true").status();
                }
            })
        };
        let refused = (0..3000)
            .filter(|_| {
                let held = DataDirLock::acquire(dir.path()).expect("free");
                drop(held);
                DataDirLock::acquire(dir.path()).is_err()
            })
            .count();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spawner.join().unwrap();
        assert_eq!(refused, 0, "a dropped lock was still held");
    }
}
