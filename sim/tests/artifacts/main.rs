//! The `artifacts` test binary: the figures and `reproduce`, the output writer, progress,
//! `bench` and the numeric limits of every command, one module per subject.

#[path = "../util/tools.rs"]
mod tools;
#[path = "../util/mod.rs"]
mod util;

mod bench_cli;
mod docs_cli;
mod figures_column;
mod figures_hasse;
mod figures_render;
mod figures_reproduce;
mod limits;
mod outputs;
mod progress;
mod same_file;
mod suites;
mod view_browser;
