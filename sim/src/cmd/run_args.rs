//! The flags every experiment command (`twins`, `workloads`, `sweep`) shares.

use crate::experiments::run::default_threads;

/// The flags every experiment command shares: output format, threads and where tables go.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Print a JSON array on stdout.
    #[arg(long)]
    pub json: bool,
    /// Worker threads (results do not depend on it); default: all cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Folder the table files go under (`tables/<stem>.{md,csv,json}`).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: std::path::PathBuf,
    /// Do not write the table files.
    #[arg(long)]
    pub no_write: bool,
}

impl RunArgs {
    /// The thread count to use (at least 1).
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(default_threads).max(1)
    }
}
