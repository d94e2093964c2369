//! One file per subcommand. Each exposes `Args` (clap) and `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (house style): 0 the run completed / every property holds; 1 a property was
//! violated or an anomaly named by `--fail-on` is present; 2 a usage or input error.

pub mod bench;

pub mod abstract_matrix;
pub mod check;
pub mod check_watch;
pub mod cpl;
pub mod cpl_twin;
pub mod deployed;
pub mod detect;
pub mod explore;
pub mod fit;
pub mod fix;
pub mod gate;
pub mod ingest;
pub mod input;
pub mod lattice;
pub mod merge;
pub mod progress;
pub mod replay;
pub mod reproduce;
pub mod run_args;
pub mod runtime_matrix;
pub mod serve;
pub mod sharding;
pub mod shrink;
pub mod simulate;
pub mod split_view;
pub mod stacked;
pub mod sweep;
pub mod test;
pub mod twins;
pub mod view;
pub mod workloads;

use clap::Subcommand;
use std::process::ExitCode;

/// The subcommands of `agentsim`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Regenerate every table and figure into results/, or check it is up to date.
    Reproduce(reproduce::Args),
    /// Detect anomalies (A1, A2, A3, A6; A4 with replica metadata) in a JSON Lines history.
    Detect(detect::Args),
    /// Receive spans over OTLP (HTTP and gRPC) and check them as they arrive; report on exit.
    Serve(serve::Args),
    /// Convert traces (GenAI, OpenInference), MCP logs or LangGraph checkpoints into a history.
    Ingest(ingest::Args),
    /// Fit a scenario of the observed system to a history or a trace.
    Fit(fit::Args),
    /// The cheapest verified stack that prevents the anomalies a run shows, and its cost.
    Fix(fix::Args),
    /// Print the lattice of consistency models, its cover edges and chains.
    Lattice(lattice::Args),
    /// Exhaustively check the model at small bounds, like TLC (SPEC §1, §3, §5).
    Check(check::Args),
    /// Explore every interleaving of a scenario's agents, with partial-order reduction.
    Explore(explore::Args),
    /// Runtime × anomaly matrix: admitted with a shortest witness, or prevented (SPEC §5).
    Matrix(runtime_matrix::Args),
    /// Run a scenario's seeded trials and summarise the anomalies found.
    Simulate(simulate::Args),
    /// Re-run one simulated trial from its replay line.
    Replay(replay::Args),
    /// Shrink a failing trial to a minimal schedule that keeps the anomaly.
    Shrink(shrink::Args),
    /// The prevention twins: k/N anomalies without and with each mechanism (SPEC §7).
    Twins(twins::Args),
    /// The three workloads under vanilla, pessimistic, si and ssi (the paper's Table 4).
    Workloads(workloads::Args),
    /// A contention grid × runtimes from a sweep file.
    Sweep(sweep::Args),
    /// Merge the partial results of a sharded seeded command into the unsharded output.
    Merge(merge::Args),
    /// Run the deployed reproductions (deer-flow, LangGraph), before and after each fix.
    Deployed(deployed::Args),
    /// Run the split-view (A4) twin on a replicated-store scenario.
    SplitView(split_view::Args),
    /// Causal Past Logic guards: evaluate on an MSC, or benchmark the monitor.
    Cpl(cpl::Args),
    /// Run the `[[expect]]` claims of scenario files as a test suite (JUnit for CI).
    Test(test::Args),
    /// Run a benchmark (`agentsim bench detect`, `agentsim bench sim`, `agentsim bench cpl`).
    Bench(bench::Args),
    /// Write one self-contained HTML page showing a history, trace, counterexample or schedule.
    View(view::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Reproduce(args) => reproduce::run(args),
            Command::Detect(args) => detect::run(args),
            Command::Serve(args) => serve::run(args),
            Command::Ingest(args) => ingest::run(args),
            Command::Fit(args) => fit::run(args),
            Command::Fix(args) => fix::run(args),
            Command::Lattice(args) => lattice::run(args),
            Command::Check(args) => check::run(args),
            Command::Explore(args) => explore::run(args),
            Command::Matrix(args) if args.abstract_model => abstract_matrix::run(&args),
            Command::Matrix(args) => runtime_matrix::run(args),
            Command::Simulate(args) => simulate::run(args),
            Command::Replay(args) => replay::run(args),
            Command::Shrink(args) => shrink::run(args),
            Command::Twins(args) => twins::run(args),
            Command::Workloads(args) => workloads::run(args),
            Command::Sweep(args) => sweep::run(args),
            Command::Merge(args) => merge::run(args),
            Command::Deployed(args) => deployed::run(args),
            Command::SplitView(args) => split_view::run(args),
            Command::Cpl(args) => cpl::run(args),
            Command::Bench(args) => bench::run(args),
            Command::Test(args) => test::run(args),
            Command::View(args) => view::run(args),
        }
    }
}
