//! No output path that is an input, and no two outputs that are one file.
//!
//! Every command that writes a file or a folder names its inputs and outputs here once, at
//! the start of `run`, before any work ([`Paths::check`]); a clash exits 2 with a message
//! that names the file and both roles:
//!
//! ```text
//! t.json is both an input (the trace) and the output of -o
//! r.json is the output of both -o and --report
//! DIR/s.toml is an input (the scenario) inside the output folder of --trace-out
//! ```
//!
//! Two paths are the same file when they have the same device and inode (so a hard link, a
//! symbolic link to the file and a `./` or `../` spelling are all caught), or, for a file
//! that does not exist yet, the same canonical path (its nearest existing folder canonicalized,
//! the rest appended). `-` (stdin, stdout) and what is not a regular file or folder (a device
//! such as `/dev/null`, a pipe) never clash, as before: they are read or written in place.
//! A folder output also owns every path inside it.

use anyhow::{bail, Result};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// A path as a text report prints it: escaped like a name ([`agentsim_models::escape_text`]),
/// so a newline or a bidi control in a file name cannot plant or reorder a line.
pub fn shown(path: &Path) -> String {
    agentsim_models::escape_text(&path.display().to_string()).into_owned()
}

/// What a path is to the command.
#[derive(Clone, Debug)]
enum Role {
    /// Read: what it is (`the trace`).
    Input(String),
    /// Written as one file: the flag (`--report`).
    Output(String),
    /// A folder written into: the flag (`--trace-out`).
    Folder(String),
}

/// How a path is told apart from another.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Id {
    /// An existing file or folder.
    Inode(u64, u64),
    /// A file that does not exist yet, by canonical path.
    Path(PathBuf),
}

/// One path with its identity and its canonical place (for "inside a folder").
#[derive(Debug)]
struct Entry {
    path: PathBuf,
    role: Role,
    id: Id,
    place: PathBuf,
}

/// The inputs and outputs of one run; [`Paths::check`] refuses a clash.
#[derive(Debug, Default)]
pub struct Paths {
    entries: Vec<Entry>,
}

impl Paths {
    /// No paths yet.
    pub fn new() -> Paths {
        Paths::default()
    }

    /// A file the command reads, described for messages (`the trace`, `the scenario`).
    pub fn input(mut self, what: &str, path: &Path) -> Paths {
        self.add(path, Role::Input(what.to_owned()));
        self
    }

    /// A file the command writes, named by its flag (`-o`, `--report`); `None` is no flag.
    pub fn output(mut self, flag: &str, path: Option<&Path>) -> Paths {
        if let Some(p) = path {
            self.add(p, Role::Output(flag.to_owned()));
        }
        self
    }

    /// A folder the command writes into, named by its flag; `None` is no flag.
    pub fn folder(mut self, flag: &str, path: Option<&Path>) -> Paths {
        if let Some(p) = path {
            self.add(p, Role::Folder(flag.to_owned()));
        }
        self
    }

    fn add(&mut self, path: &Path, role: Role) {
        if let Some((id, place)) = identity(path) {
            self.entries.push(Entry {
                path: path.to_owned(),
                role,
                id,
                place,
            });
        }
    }

    /// An error naming the first clash: an output that is an input or another output, or a
    /// path inside an output folder.
    pub fn check(&self) -> Result<()> {
        for (i, a) in self.entries.iter().enumerate() {
            for b in &self.entries[i + 1..] {
                clash(a, b)?;
                clash(b, a)?;
            }
        }
        Ok(())
    }
}

/// An error if `a` and `b` cannot both be what they are, `b` being the later (or, with the
/// arguments swapped, the earlier) of the two.
fn clash(a: &Entry, b: &Entry) -> Result<()> {
    let same = a.id == b.id;
    match (&a.role, &b.role) {
        (Role::Input(_), Role::Input(_)) => Ok(()),
        (Role::Input(what), Role::Output(flag) | Role::Folder(flag)) if same => bail!(
            "{} is both an input ({what}) and the output of {flag}",
            b.path.display()
        ),
        (Role::Output(f) | Role::Folder(f), Role::Output(g) | Role::Folder(g)) if same => {
            bail!("{} is the output of both {f} and {g}", b.path.display())
        }
        (_, Role::Folder(flag)) if a.place.starts_with(&b.place) => {
            let what = match &a.role {
                Role::Input(what) => format!("an input ({what})"),
                Role::Output(f) => format!("the output of {f}"),
                Role::Folder(f) => format!("the output folder of {f}"),
            };
            bail!(
                "{} is {what} inside the output folder {} of {flag}",
                a.path.display(),
                b.path.display()
            )
        }
        _ => Ok(()),
    }
}

/// The identity and canonical place of `path`, or `None` for what never clashes: `-`, a
/// device or pipe, a dangling link (the writer refuses that itself), or a path that cannot be
/// looked at (the command's own read or write reports it).
fn identity(path: &Path) -> Option<(Id, PathBuf)> {
    if path.as_os_str() == "-" {
        return None;
    }
    match fs::metadata(path) {
        Ok(m) if m.is_file() || m.is_dir() => {
            let place = fs::canonicalize(path).ok()?;
            Some((Id::Inode(m.dev(), m.ino()), place))
        }
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return None;
            }
            let place = not_yet(path)?;
            Some((Id::Path(place.clone()), place))
        }
        Err(_) => None,
    }
}

/// The canonical path a file that does not exist yet will have: its nearest existing
/// ancestor canonicalized, the rest of the path appended (`.` dropped, `..` taken back).
fn not_yet(path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut base = absolute.as_path();
    let mut rest = Vec::new();
    let real = loop {
        if let Ok(real) = fs::canonicalize(base) {
            break real;
        }
        rest.push(base.file_name()?.to_owned());
        base = base.parent()?;
    };
    let mut out = real;
    for part in rest.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => out.push(part),
        }
    }
    Some(out)
}

/// The files a scenario reads besides itself (a `recorded` generator's recording, a `[cpl]`
/// guard file), relative to its folder, as [`Paths::input`] takes them. A file that does not
/// parse gives none: the scenario loader reports it.
pub fn scenario_inputs(scenario: &Path) -> Vec<(&'static str, PathBuf)> {
    let Ok(text) = fs::read_to_string(scenario) else {
        return Vec::new();
    };
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let base = scenario
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let field = |table: &str, key: &str| {
        doc.get(table)
            .and_then(|t| t.get(key))
            .and_then(|v| v.as_str())
            .map(|s| base.join(s))
    };
    let mut out = Vec::new();
    if let Some(p) = field("generator", "recording") {
        out.push(("the scenario's recording", p));
    }
    if let Some(p) = field("cpl", "guards") {
        out.push(("the scenario's guards", p));
    }
    out
}

impl Paths {
    /// A scenario file and the files it reads ([`scenario_inputs`]), as inputs.
    pub fn scenario(self, path: &Path) -> Paths {
        let deps = scenario_inputs(path);
        let mut me = self.input("the scenario", path);
        for (what, p) in deps {
            me = me.input(what, &p);
        }
        me
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentsim-paths-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::canonicalize(dir).unwrap()
    }

    fn err(p: Paths) -> String {
        p.check().unwrap_err().to_string()
    }

    #[test]
    fn the_same_file_by_any_name_clashes() {
        let d = scratch("same");
        let t = d.join("t.json");
        fs::write(&t, "{}").unwrap();
        fs::hard_link(&t, d.join("hard.json")).unwrap();
        std::os::unix::fs::symlink(&t, d.join("soft.json")).unwrap();
        let dotted = d.join("sub/../t.json");
        fs::create_dir(d.join("sub")).unwrap();
        for out in [
            t.clone(),
            d.join("hard.json"),
            d.join("soft.json"),
            dotted,
            d.join("./t.json"),
        ] {
            let e = err(Paths::new().input("the trace", &t).output("-o", Some(&out)));
            assert_eq!(
                e,
                format!(
                    "{} is both an input (the trace) and the output of -o",
                    out.display()
                )
            );
        }
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn two_outputs_that_do_not_exist_yet_clash_by_path() {
        let d = scratch("new");
        let a = d.join("h.jsonl");
        let b = d.join("x/../h.jsonl");
        fs::create_dir(d.join("x")).unwrap();
        let e = err(Paths::new()
            .output("-o", Some(&a))
            .output("--report", Some(&b)));
        assert!(e.contains("is the output of both -o and --report"), "{e}");
        assert!(Paths::new()
            .output("-o", Some(&a))
            .output("--report", Some(&d.join("r.json")))
            .check()
            .is_ok());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn stdout_and_devices_never_clash() {
        let dash = Path::new("-");
        let null = Path::new("/dev/null");
        let p = Paths::new()
            .input("the trace", dash)
            .output("-o", Some(dash))
            .output("--report", Some(dash))
            .input("x", null)
            .output("--history-out", Some(null))
            .output("--json-out", Some(null));
        assert!(p.check().is_ok());
    }

    #[test]
    fn a_folder_owns_what_is_inside_it() {
        let d = scratch("folder");
        let sc = d.join("s.toml");
        fs::write(&sc, "").unwrap();
        let e = err(Paths::new()
            .input("the scenario", &sc)
            .folder("--trace-out", Some(&d)));
        assert!(
            e.contains("is an input (the scenario) inside the output folder"),
            "{e}"
        );
        let e = err(Paths::new()
            .folder("--trace-out", Some(&d.join("new")))
            .output("--record-out", Some(&d.join("new/replay.txt"))));
        assert!(
            e.contains("is the output of --record-out inside the output folder"),
            "{e}"
        );
        assert!(Paths::new()
            .input("the scenario", &sc)
            .folder("--trace-out", Some(&d.join("traces")))
            .check()
            .is_ok());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_scenario_names_its_recording_and_guards() {
        let d = scratch("scenario");
        let sc = d.join("s.toml");
        fs::write(
            &sc,
            "[generator]\nkind = \"recorded\"\nrecording = \"rec.jsonl\"\n[cpl]\nguards = \"g.cpl\"\n",
        )
        .unwrap();
        let got = scenario_inputs(&sc);
        assert_eq!(
            got,
            vec![
                ("the scenario's recording", d.join("rec.jsonl")),
                ("the scenario's guards", d.join("g.cpl"))
            ]
        );
        fs::remove_dir_all(&d).unwrap();
    }
}
