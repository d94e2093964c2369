//! The contention sweep (SPEC §7): a synthetic workload under one model profile, swept over
//! a grid of (agents, hot cells, overlap, generation latency) × runtimes, reporting anomaly
//! rate, abort/drop rate, token overhead against `vanilla` (paired by seed) and makespan,
//! each with a 95 % interval.
//!
//! A sweep file (`scenarios/sweeps/*.toml`) names the grid and the profile; each grid point
//! becomes a scenario (TOML text, parsed by the same resolver as a user's file): every agent
//! runs `ops` operations; each operation, with probability `overlap`, reads one of the
//! `cells` hot cells at random and rewrites it, and otherwise reads and rewrites the agent's
//! own private cell. A sweep shows trends under this synthetic model, not a deployment's.

use super::paired::{mean_interval, overhead};
use super::run as common;
use super::run::run_from;
use crate::artifacts::figures::{Estimate, SweepData, SweepIntervals, SweepPoint, SweepSeries};
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_models::runtime::Stack;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::shard::{Local, TrialSource};
use agentsim_sim::source::Source;
use agentsim_sim::stats::Proportion;
use agentsim_sim::RunResult;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `sweep` step.
pub const STEP: Step = Step {
    name: "sweep",
    about: "the contention sweep (SPEC §7)",
    run: step_files,
};

/// The committed sweep file.
pub const SWEEP_FILE: &str = "scenarios/sweeps/contention.toml";
pub const SWEEP_TEXT: &str = include_str!("../../../scenarios/sweeps/contention.toml");

/// The sweep file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub seed: u64,
    pub trials: u64,
    /// Trials per point in a `--quick` reproduce run.
    pub quick_trials: u64,
    /// Named runtimes or `+`-joined stacks, parsed as the file is read.
    #[serde(with = "agentsim_models::runtime::stack::by_names")]
    pub runtimes: Vec<Stack>,
    /// The grid axis drawn on the figure's x axis (the others at their first value).
    pub x: String,
    pub grid: Grid,
    pub profile: Profile,
}

/// The contention grid.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    pub agents: Vec<u32>,
    pub cells: Vec<u32>,
    pub overlap: Vec<f64>,
    pub generation_ms: Vec<u64>,
}

/// The one model profile.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub ops: u32,
    pub sigma: f64,
    pub prompt_base: u64,
    pub prompt_per_cell: u64,
    pub completion_median: u64,
    pub start_spread_ms: u64,
    pub retry_max: u32,
    pub backoff_ms: [u64; 2],
}

/// The axes a file's `x` may name.
pub const AXES: [&str; 4] = ["agents", "cells", "overlap", "generation_ms"];

/// One grid point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    pub agents: u32,
    pub cells: u32,
    pub overlap: f64,
    pub generation_ms: u64,
}

impl Point {
    fn axis(&self, name: &str) -> f64 {
        match name {
            "agents" => f64::from(self.agents),
            "cells" => f64::from(self.cells),
            "overlap" => self.overlap,
            _ => self.generation_ms as f64,
        }
    }
}

/// One runtime at one grid point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepResult {
    #[serde(flatten)]
    pub point: Point,
    pub runtime: String,
    pub trials: u64,
    pub anomaly_rate: Estimate,
    pub abort_rate: Estimate,
    pub token_overhead: Estimate,
    pub makespan_ms: Estimate,
}

/// Loads and validates a sweep file; errors name the file, and the line for TOML errors.
pub fn load(path: &Path) -> anyhow::Result<SweepFile> {
    let text = agentsim_sim::source::read_source(path)?;
    parse(path, &text)
}

/// `choices` in order, each once; a stack given twice (under any spelling: `lock` and
/// `pessimistic`) is an error naming it canonically.
pub fn canonical_runtimes(choices: &[Stack]) -> Result<Vec<Stack>, String> {
    let mut out: Vec<Stack> = Vec::new();
    for &c in choices {
        if out.contains(&c) {
            return Err(format!("`{c}` is listed twice"));
        }
        out.push(c);
    }
    Ok(out)
}

/// Parses and validates sweep text.
pub fn parse(path: &Path, text: &str) -> anyhow::Result<SweepFile> {
    // The one TOML loader: errors read `file:line:col: key `k`: what`, as for scenarios.
    let src = agentsim_sim::source::Source { file: path, text };
    let mut f: SweepFile = agentsim_sim::source::parse_toml(src)?;
    let bad = |field: &str, why: &str| anyhow::anyhow!(src.key_error(field, why));
    if f.trials == 0 || f.quick_trials == 0 {
        return Err(bad("trials", "trials and quick_trials must be at least 1"));
    }
    if !AXES.contains(&f.x.as_str()) {
        return Err(bad(
            "x",
            &format!("`{}` is not one of {}", f.x, AXES.join(", ")),
        ));
    }
    if f.runtimes.is_empty() {
        return Err(bad("runtimes", "list at least one runtime"));
    }
    f.runtimes = canonical_runtimes(&f.runtimes).map_err(|e| bad("runtimes", &e))?;
    let g = &f.grid;
    if g.agents.is_empty()
        || g.cells.is_empty()
        || g.overlap.is_empty()
        || g.generation_ms.is_empty()
    {
        return Err(bad("grid", "every axis needs at least one value"));
    }
    if g.agents.contains(&0) || g.cells.contains(&0) {
        return Err(bad("grid", "agents and cells must be at least 1"));
    }
    if g.overlap.iter().any(|o| !(0.0..=1.0).contains(o)) {
        return Err(bad("grid.overlap", "overlap is a probability in [0, 1]"));
    }
    if f.profile.ops == 0 || f.profile.backoff_ms[0] > f.profile.backoff_ms[1] {
        return Err(bad(
            "profile",
            "ops >= 1 and backoff_ms = [lo, hi] with lo <= hi",
        ));
    }
    check_limits(src, &f)?;
    Ok(f)
}

/// Every number of a sweep file that sizes memory or work, against its documented limit
/// (`agentsim_sim::scenario::limits`), before any grid point is built: a value past it is
/// refused at the line of its key, naming the range, instead of allocating for it.
fn check_limits(src: Source<'_>, f: &SweepFile) -> anyhow::Result<()> {
    use agentsim_sim::scenario::limits::{
        AGENTS_MAX, CELLS_MAX, DIST_VALUE_MAX, POINTS_MAX, REPEAT_MAX, SIGMA_MAX, TOKENS_MAX,
        TRIALS_MAX,
    };
    let over = |key: &str, n: String, hi: String| {
        let msg = format!("{n} is out of range: expected at most {hi}");
        Err(anyhow::anyhow!(src.key_error(key, msg)))
    };
    for (key, n) in [("trials", f.trials), ("quick_trials", f.quick_trials)] {
        if n > TRIALS_MAX {
            let msg = format!("{n} is out of range: expected 1..={TRIALS_MAX}");
            return Err(src.key_error(key, msg).into());
        }
    }
    let g = &f.grid;
    let axes = [
        g.agents.len(),
        g.cells.len(),
        g.overlap.len(),
        g.generation_ms.len(),
    ];
    let points = axes
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n as u64));
    if points.is_none_or(|p| p > POINTS_MAX) {
        let [a, c, o, m] = axes;
        let msg = format!("{a} × {c} × {o} × {m} points, more than the {POINTS_MAX} allowed");
        return Err(src.key_error("grid", msg).into());
    }
    let whole = |ms: u64| ms as f64 > DIST_VALUE_MAX;
    let pr = &f.profile;
    let counts = [
        ("grid.agents", g.agents.iter().max().copied(), AGENTS_MAX),
        ("grid.cells", g.cells.iter().max().copied(), CELLS_MAX),
        ("profile.ops", Some(pr.ops), REPEAT_MAX),
    ];
    for (key, n, hi) in counts {
        if let Some(n) = n.filter(|&n| n > hi) {
            return over(key, n.to_string(), hi.to_string());
        }
    }
    let tokens = [
        ("profile.prompt_base", pr.prompt_base),
        ("profile.prompt_per_cell", pr.prompt_per_cell),
        ("profile.completion_median", pr.completion_median),
    ];
    if let Some((key, n)) = tokens.into_iter().find(|&(_, n)| n > TOKENS_MAX) {
        return over(key, n.to_string(), TOKENS_MAX.to_string());
    }
    let times = [
        ("grid.generation_ms", g.generation_ms.iter().max().copied()),
        ("profile.start_spread_ms", Some(pr.start_spread_ms)),
        ("profile.backoff_ms", Some(pr.backoff_ms[1])),
    ];
    for (key, n) in times {
        if let Some(n) = n.filter(|&n| whole(n)) {
            return over(key, n.to_string(), DIST_VALUE_MAX.to_string());
        }
    }
    if !(0.0..=SIGMA_MAX).contains(&pr.sigma) {
        let msg = format!("{} is out of range: expected 0..={SIGMA_MAX}", pr.sigma);
        return Err(src.key_error("profile.sigma", msg).into());
    }
    Ok(())
}

/// Every grid point, in file order (agents outermost).
pub fn points(f: &SweepFile) -> Vec<Point> {
    let g = &f.grid;
    let mut out = Vec::new();
    for &agents in &g.agents {
        for &cells in &g.cells {
            for &overlap in &g.overlap {
                for &generation_ms in &g.generation_ms {
                    out.push(Point {
                        agents,
                        cells,
                        overlap,
                        generation_ms,
                    });
                }
            }
        }
    }
    out
}

/// The scenario text of one grid point (see the module docs for the workload).
pub fn scenario_text(f: &SweepFile, p: &Point) -> String {
    let pr = &f.profile;
    let hot: Vec<String> = (0..p.cells).map(|k| format!("\"hot{k}\"")).collect();
    let own: Vec<String> = (0..p.agents).map(|k| format!("\"own{k}\"")).collect();
    let mut s = format!(
        "name = {}\nruntime = \"vanilla\"\ntrials = {}\nseed = {}\n\
         cells = [\"flag\", {}, {}]\n\n[tokens]\nprompt_base = {}\nprompt_per_cell = {}\n\
         completion = {{ lognormal = {{ median = {}, sigma = 0.3 }} }}\n\n[retry]\nmax = {}\n\
         backoff_ms = {{ uniform = [{}, {}] }}\n",
        // Quoted by the TOML writer: a name is the user's text, and may hold `"` or `\`.
        toml::Value::String(f.name.clone()),
        f.trials,
        f.seed,
        hot.join(", "),
        own.join(", "),
        pr.prompt_base,
        pr.prompt_per_cell,
        pr.completion_median,
        pr.retry_max,
        pr.backoff_ms[0],
        pr.backoff_ms[1],
    );
    let gen = format!(
        "{{ lognormal = {{ median = {}, sigma = {} }} }}",
        p.generation_ms, pr.sigma
    );
    for k in 0..p.agents {
        // `flag` is never read, so a branch on it being NULL is a coin with `prob`.
        let _ = write!(
            s,
            "\n[[agents]]\nname = \"agent{k}\"\nrepeat = {ops}\n\
             start_ms = {{ uniform = [0, {spread}] }}\nscript = [\n\
             {{ do = \"branch\", cell = \"flag\", when = \"null\", goto = \"hot\", prob = {ov} }},\n\
             {{ do = \"read\", cells = [\"own{k}\"] }},\n\
             {{ do = \"generate\", latency_ms = {gen} }},\n\
             {{ do = \"write\", cells = [\"own{k}\"] }},\n\
             {{ do = \"branch\", cell = \"flag\", when = \"null\", goto = \"end\" }},\n\
             {{ do = \"read\", cells = [{hot}], pick = 1, label = \"hot\" }},\n\
             {{ do = \"generate\", latency_ms = {gen} }},\n\
             {{ do = \"write\", cells = [], include_read = true }},\n]\n",
            ops = pr.ops,
            spread = pr.start_spread_ms,
            ov = p.overlap,
            hot = hot.join(", "),
        );
    }
    s
}

/// The scenario of one grid point.
pub fn scenario(f: &SweepFile, file: &Path, p: &Point) -> anyhow::Result<Scenario> {
    let name = PathBuf::from(format!(
        "{}#agents={},cells={},overlap={},generation_ms={}",
        file.display(),
        p.agents,
        p.cells,
        p.overlap,
        p.generation_ms
    ));
    Scenario::parse(&name, &scenario_text(f, p)).map_err(|e| anyhow::anyhow!("{e}"))
}

fn tokens(r: &RunResult) -> Vec<u64> {
    r.trials.iter().map(|t| t.metrics.tokens_total).collect()
}

fn estimate(p: Proportion) -> Estimate {
    Estimate {
        mean: p.rate,
        lo: p.lo,
        hi: p.hi,
    }
}

fn result(p: Point, runtime: &str, r: &RunResult, base: &[u64]) -> SweepResult {
    let a = &r.aggregate;
    let failed: u64 = r
        .trials
        .iter()
        .map(|t| t.metrics.aborts + t.metrics.drops)
        .sum();
    let ms: Vec<f64> = r
        .trials
        .iter()
        .map(|t| t.metrics.makespan_ms as f64)
        .collect();
    SweepResult {
        point: p,
        runtime: runtime.to_string(),
        trials: a.trials,
        anomaly_rate: estimate(a.any),
        abort_rate: estimate(Proportion::new(failed.min(a.ops_total), a.ops_total)),
        token_overhead: overhead(base, &tokens(r)),
        makespan_ms: mean_interval(&ms),
    }
}

/// Runs the grid × runtimes with `trials` per point; `vanilla` is always run as the baseline.
pub fn run(
    f: &SweepFile,
    file: &Path,
    trials: u64,
    threads: usize,
) -> anyhow::Result<Vec<SweepResult>> {
    run_from_source(&mut Local, f, file, trials, threads)
}

/// [`run`] with the trials taken from `src`.
pub fn run_from_source(
    src: &mut dyn TrialSource,
    f: &SweepFile,
    file: &Path,
    trials: u64,
    threads: usize,
) -> anyhow::Result<Vec<SweepResult>> {
    let mut out = Vec::new();
    for p in points(f) {
        let sc = scenario(f, file, &p)?;
        let base = run_from(src, &sc, Stack::VANILLA, trials, f.seed, threads)?;
        let base_tokens = tokens(&base);
        for &rt in &f.runtimes {
            let r = if rt == Stack::VANILLA {
                base.clone()
            } else {
                run_from(src, &sc, rt, trials, f.seed, threads)?
            };
            out.push(result(p, &rt.name(), &r, &base_tokens));
        }
    }
    Ok(out)
}

/// The full grid as a table: one row per point × runtime, each metric with its interval.
pub fn table(f: &SweepFile, results: &[SweepResult]) -> Table {
    let mut cols = vec![
        "agents",
        "cells",
        "overlap",
        "generation_ms",
        "runtime",
        "trials",
    ];
    for m in [
        "anomaly_rate",
        "abort_rate",
        "token_overhead",
        "makespan_ms",
    ] {
        cols.push(m);
        cols.push(match m {
            "anomaly_rate" => "anomaly_lo95",
            "abort_rate" => "abort_lo95",
            "token_overhead" => "token_overhead_lo95",
            _ => "makespan_ms_lo95",
        });
        cols.push(match m {
            "anomaly_rate" => "anomaly_hi95",
            "abort_rate" => "abort_hi95",
            "token_overhead" => "token_overhead_hi95",
            _ => "makespan_ms_hi95",
        });
    }
    let mut t = Table::new(
        format!("Contention sweep `{}`: grid x runtime", f.name),
        &cols,
    );
    for r in results {
        let p = r.point;
        let mut row = vec![
            Cell::Int(i64::from(p.agents)),
            Cell::Int(i64::from(p.cells)),
            Cell::float(p.overlap, 3),
            Cell::Int(p.generation_ms as i64),
            Cell::text(r.runtime.clone()),
            Cell::Int(r.trials as i64),
        ];
        for (e, d) in [
            (r.anomaly_rate, 4),
            (r.abort_rate, 4),
            (r.token_overhead, 4),
            (r.makespan_ms, 1),
        ] {
            row.extend([e.mean, e.lo, e.hi].map(|x| Cell::float(x, d)));
        }
        t.push(row);
    }
    t
}

/// The figure's data: along the file's `x` axis, the other axes at their first value.
pub fn figure_data(f: &SweepFile, results: &[SweepResult]) -> SweepData {
    let g = &f.grid;
    let first = Point {
        agents: g.agents[0],
        cells: g.cells[0],
        overlap: g.overlap[0],
        generation_ms: g.generation_ms[0],
    };
    let on_line = |p: &Point| {
        AXES.iter()
            .all(|&ax| ax == f.x || p.axis(ax) == first.axis(ax))
    };
    let series = f
        .runtimes
        .iter()
        .map(|rt| SweepSeries {
            runtime: rt.name(),
            points: results
                .iter()
                .filter(|r| r.runtime == rt.name() && on_line(&r.point))
                .map(|r| SweepPoint {
                    contention: r.point.axis(&f.x),
                    anomaly_rate: r.anomaly_rate,
                    abort_rate: r.abort_rate,
                    token_overhead: r.token_overhead,
                    makespan_ms: r.makespan_ms,
                })
                .collect(),
        })
        .collect();
    let fixed: Vec<String> = AXES
        .iter()
        .filter(|&&ax| ax != f.x)
        .map(|&ax| format!("{ax}={}", first.axis(ax)))
        .collect();
    SweepData {
        x_desc: format!("{} ({})", f.x, fixed.join(", ")),
        series,
        intervals: SweepIntervals {
            rates: agentsim_sim::stats::INTERVAL.to_owned(),
            token_overhead: super::paired::OVERHEAD_INTERVAL.to_owned(),
            makespan_ms: super::paired::MEAN_INTERVAL.to_owned(),
        },
    }
}

/// The contention sweep of `scenarios/sweeps/contention.toml`.
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let path = Path::new(SWEEP_FILE);
    let f = parse(path, SWEEP_TEXT)?;
    let trials = if ctx.quick { f.quick_trials } else { f.trials };
    let threads = common::default_threads();
    let results = ctx.trials(|src| run_from_source(src, &f, path, trials, threads))?;
    let data = figure_data(&f, &results);
    let stem = format!("sweep_{}", f.name);
    let about =
        "Contention sweep: per runtime, at each contention level of the sweep, the anomaly \
                 rate, the abort and drop rate, the token overhead and the makespan.";
    let mut files = vec![figure_file(
        &stem,
        about,
        crate::artifacts::figures::sweep::render(&data),
    )];
    files.extend(table_files(&stem, &table(&f, &results)));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = include_str!("../../../scenarios/sweeps/contention.toml");

    #[test]
    fn a_name_with_quotes_and_backslashes_stays_the_name() {
        // A regression: `name = "con\"tention"` was accepted, then the generated scenario text
        // did not parse ("unexpected key or value") when the sweep ran.
        let path = Path::new("q.toml");
        let text = FILE.replacen("name = \"contention\"", r#"name = "con\"ten\\tion""#, 1);
        let f = parse(path, &text).expect("parses");
        let sc = scenario(&f, path, &points(&f)[0]).expect("resolves");
        assert_eq!(sc.name, "con\"ten\\tion");
    }

    #[test]
    fn the_shipped_sweep_parses_and_every_point_resolves() {
        let path = Path::new("scenarios/sweeps/contention.toml");
        let f = parse(path, FILE).expect("parses");
        for p in points(&f) {
            let sc = scenario(&f, path, &p).expect("resolves");
            assert_eq!(sc.agents.len() as u32, p.agents);
        }
    }

    #[test]
    fn bad_fields_are_named() {
        let path = Path::new("s.toml");
        let bad = FILE.replace("x = \"agents\"", "x = \"colour\"");
        let err = parse(path, &bad).expect_err("bad axis").to_string();
        assert!(err.contains("s.toml") && err.contains("`x`"), "{err}");
        let bad = FILE.replace("\"ssi\"", "\"nope\"");
        let err = parse(path, &bad).expect_err("bad runtime").to_string();
        assert!(err.contains("runtimes"), "{err}");
    }
}
