//! The benchmarks, one home: each file times real work and returns its figures; the
//! `agentsim bench` command prints them (text, or `--json`). Benchmarks assert nothing about
//! speed. Figures and the command that made them go into `docs/benchmarks.md` by hand, with the
//! machine they ran on. Wall-clock time is read here only; nothing simulated reads a clock.

pub mod cpl;
pub mod detect;
pub mod explore;
pub mod history;
pub mod ingest;
pub mod serve;
pub mod sim;
pub mod stream;
pub mod workload;
