//! The one output writer: every file a command writes goes through [`write_atomic`].
//!
//! - `-` writes to stdout; so does a path that names a device or a pipe (`/dev/stdout`,
//!   `/dev/stderr`, a FIFO): those are written in place, never renamed over.
//! - A regular file is replaced atomically: a temporary sibling, then a rename, so a reader
//!   never sees a partial file and a failed run leaves the old file as it was. The temporary
//!   file is removed on every error path.
//! - A symlink is written through: its target is replaced atomically and the link stays a
//!   link. A link whose target does not exist is refused rather than guessed at.
//! - A directory is refused. Commands call [`preflight`] on every output path before they
//!   start work, so a bad target costs nothing.

use anyhow::{bail, Context, Result};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Where bytes for `path` end up.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    Stdout,
    /// A device or a pipe: written in place.
    InPlace(PathBuf),
    /// A regular file (existing or not): replaced through a temporary sibling.
    File(PathBuf),
}

fn target(path: &Path) -> Result<Target> {
    if path.as_os_str() == "-" {
        return Ok(Target::Stdout);
    }
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if is_link {
        // Follow the link: a regular file is replaced at its real place; anything else (a
        // device, or a pipe behind /dev/stdout's /proc link) is written through the link.
        return match fs::metadata(path) {
            Ok(m) if m.is_file() => Ok(Target::File(fs::canonicalize(path)?)),
            Ok(m) if m.is_dir() => bail!("{}: is a directory (name a file)", path.display()),
            Ok(_) => Ok(Target::InPlace(path.to_path_buf())),
            Err(_) => bail!(
                "{}: a symbolic link whose target does not exist (not written)",
                path.display()
            ),
        };
    }
    let resolved = path.to_path_buf();
    match fs::metadata(&resolved) {
        Ok(m) if m.is_dir() => bail!("{}: is a directory (name a file)", path.display()),
        Ok(m) if m.is_file() => Ok(Target::File(resolved)),
        Ok(_) => Ok(Target::InPlace(resolved)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::File(resolved)),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => bail!(
            "{}: a folder on its path is not a directory",
            path.display()
        ),
        Err(e) => Err(e).with_context(|| format!("{}: cannot be written", path.display())),
    }
}

/// Checks, before any work, that `path` can be an output: not a directory, not a dangling
/// link, and its folder is not a file.
pub fn preflight(path: &Path) -> Result<()> {
    if let Target::File(p) = target(path)? {
        let mut dir = parent(&p);
        // The nearest existing ancestor must be a directory (create_dir_all makes the rest).
        loop {
            match fs::metadata(dir) {
                Ok(m) if m.is_dir() => break,
                Ok(_) => bail!("{}: {} is not a directory", path.display(), dir.display()),
                Err(_) => match dir.parent().filter(|d| !d.as_os_str().is_empty()) {
                    Some(up) => dir = up,
                    None => break,
                },
            }
        }
    }
    Ok(())
}

/// Checks, before any work, that `dir` can be an output folder: absent (it will be made) or
/// a directory.
pub fn preflight_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if !m.is_dir() => bail!("{}: is not a directory (name a folder)", dir.display()),
        _ => Ok(()),
    }
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `bytes` to `path` as the module header says; creates parent folders.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    match target(path)? {
        Target::Stdout => write_stdout(bytes),
        Target::InPlace(p) => OpenOptions::new()
            .write(true)
            .open(&p)
            .and_then(|mut f| f.write_all(bytes))
            .or_else(quiet_pipe)
            .with_context(|| format!("writing {}", path.display())),
        Target::File(p) => {
            replace(&p, bytes).with_context(|| format!("writing {}", path.display()))
        }
    }
}

fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent(path);
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let done = fs::write(&tmp, bytes)
        .with_context(|| format!("writing {}", tmp.display()))
        .and_then(|()| {
            fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))
        });
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    done
}

fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .or_else(quiet_pipe)
        .context("writing to stdout")
}

/// A reader that went away (`| head`) is not an error: the output was not wanted.
fn quiet_pipe(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("agentsim-out-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = scratch("replace");
        let path = dir.join("sub/x.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(leftovers(&dir.join("sub")).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let dir = scratch("link");
        let real = dir.join("real.txt");
        fs::write(&real, b"old").unwrap();
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let dangling = dir.join("dangling.txt");
        std::os::unix::fs::symlink(dir.join("nowhere/x"), &dangling).unwrap();
        let e = write_atomic(&dangling, b"x").unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert!(preflight(&dangling).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused_before_and_leaves_nothing() {
        let dir = scratch("dir");
        let e = preflight(&dir).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        assert!(write_atomic(&dir, b"x").is_err());
        assert!(leftovers(&dir).is_empty());
        assert!(leftovers(dir.parent().unwrap())
            .iter()
            .all(|n| !n.contains(&*dir.file_name().unwrap().to_string_lossy())));
        let file = dir.join("f");
        fs::write(&file, b"").unwrap();
        let e = preflight(&file.join("x.json")).unwrap_err().to_string();
        assert!(e.contains("is not a directory"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_are_written_in_place() {
        assert_eq!(target(Path::new("-")).unwrap(), Target::Stdout);
        assert!(matches!(
            target(Path::new("/dev/null")).unwrap(),
            Target::InPlace(_)
        ));
        write_atomic(Path::new("/dev/null"), b"gone").unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().file_type().is_file());
    }
}
