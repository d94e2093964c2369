//! The flags every experiment command (`twins`, `workloads`, `sweep`) shares.

use crate::artifacts::paths::Paths;
use crate::limits::{self, default_threads};

/// The flags every experiment command shares: output format, threads and where tables go.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Print a JSON array on stdout.
    #[arg(long)]
    pub json: bool,
    /// Worker threads, 1..=256 (results do not depend on it); default: all cores.
    #[arg(long, value_parser = limits::threads)]
    pub threads: Option<usize>,
    /// Also write the table files under DIR (`DIR/tables/<stem>.{md,csv,json}`). Without
    /// it nothing is written: a quick look never changes the published `results/`, which
    /// `agentsim reproduce` alone regenerates.
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Write no table files (the default; kept for scripts that pass it).
    #[arg(long, hide = true, conflicts_with = "out")]
    pub no_write: bool,
    #[command(flatten)]
    pub progress: crate::cmd::progress::ProgressArgs,
}

impl RunArgs {
    /// The settings of a command that only prints (no table files, default progress), as
    /// `split-view` and `cpl twin` run through [`crate::cmd::sharding::run`].
    pub fn printing(json: bool, threads: Option<usize>) -> Self {
        RunArgs {
            json,
            threads,
            out: None,
            no_write: false,
            progress: crate::cmd::progress::ProgressArgs::default(),
        }
    }

    /// The folder to write the tables under, if any; checked before the run starts.
    pub fn tables_dir(&self) -> anyhow::Result<Option<&std::path::Path>> {
        match &self.out {
            Some(dir) => {
                crate::artifacts::output::preflight_dir(dir)?;
                Ok(Some(dir))
            }
            None => Ok(None),
        }
    }

    /// `paths` with the folder `--out` writes into (`DIR/tables`), for [`Paths::check`].
    pub fn outputs(&self, paths: Paths) -> Paths {
        let tables = self.out.as_ref().map(|d| d.join("tables"));
        paths.folder("--out", tables.as_deref())
    }

    /// The thread count to use (at least 1).
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(default_threads)
    }
}
