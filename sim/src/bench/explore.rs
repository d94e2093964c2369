//! `agentsim bench explore`: how far `agentsim explore` reaches in a time budget. For each
//! scenario of the given folders × each runtime (vanilla and every named runtime), the search
//! is run with reduction at repeat caps 1, 2, … up to the scenario's own largest `repeat`, and
//! the largest cap whose search completes within the per-case budget is reported, with its
//! schedules, classes, seconds and peak memory; then the plain enumeration (`--no-reduction`)
//! at that cap, for the reduction factor (a lower bound, `≥`, when the plain search did not
//! finish in the budget). When the own counts do not finish at the default per-agent step
//! budget, the reduced search at the own counts is run again at smaller step budgets
//! ([`STEPS_TRIED`], upwards until one does not finish), and the largest that completes is
//! reported: its verdicts hold within that many steps per agent, and only there; a budget
//! that did not finish says *cannot tell*. Beside them, the stateful search
//! (`--stateful --steps-per-agent unbounded`: plain enumeration with a seen set, no step
//! budget, no repeat cap) at the own counts, with its states and merged paths: complete, it
//! covers every interleaving at any length.
//!
//! A search past its budget is stopped through the explorer's cancel flag (as a signal stops
//! `agentsim explore`), so a case costs at most a few budgets. Peak memory is the process's
//! resident high-water mark (`VmHWM`), reset before each search through
//! `/proc/self/clear_refs` where Linux allows it (else `null`): it includes the binary's own
//! few MiB, and what the allocator kept from the searches before (the reset does not return
//! freed memory), so a small search after a large one shows about the large one's size. Figures are wall-clock and machine-dependent; nothing here asserts a speed, and
//! none of it goes into `results/`.

use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::explore::{
    explore, has_copies, Exploration, ExploreConfig, Reach, Search, STEPS_PER_AGENT_DEFAULT,
    STEPS_UNBOUNDED,
};
use agentsim_sim::scenario::Scenario;
use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The folders benchmarked when none is given.
pub const DIRS_DEFAULT: [&str; 4] = [
    "scenarios/examples",
    "scenarios/workloads",
    "scenarios/explore",
    "scenarios/twins",
];
/// The per-case budget of `--quick`.
pub const QUICK_BUDGET_S: f64 = 2.0;
/// The per-agent step budgets tried, smallest first, when the own counts do not finish at
/// the default budget (a polling loop is bounded by the step budget alone).
pub const STEPS_TRIED: [u64; 5] = [8, 12, 16, 24, 32];

/// `agentsim bench explore`.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Folders of scenario files (every `*.toml` in each, sorted); default the examples,
    /// workloads, worked examples and twins.
    #[arg(long = "dir")]
    pub dirs: Vec<PathBuf>,
    /// Only scenario files whose path contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Runtimes, comma-separated; default vanilla and every named runtime.
    #[arg(long, value_delimiter = ',')]
    pub runtime: Vec<Stack>,
    /// Seconds one search may take before it is stopped (a cap that does not finish in it
    /// is past the reach).
    #[arg(long, default_value_t = 60.0)]
    pub budget_s: f64,
    /// A short run: a 2 s budget per search and no plain enumeration.
    #[arg(long)]
    pub quick: bool,
    /// Skip the plain enumeration (no reduction factor).
    #[arg(long)]
    pub no_plain: bool,
    /// Skip the stateful search without a step budget.
    #[arg(long)]
    pub no_stateful: bool,
    /// Worker threads of each search, 1..=256.
    #[arg(long, default_value_t = 2, value_parser = crate::limits::threads)]
    pub threads: usize,
    /// Print one JSON array on stdout.
    #[arg(long)]
    pub json: bool,
    /// No per-case line on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// One search's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub complete: bool,
    pub schedules: u64,
    pub classes: u64,
    /// The per-agent step budget the search ran with.
    pub steps_per_agent: u64,
    /// Paths on which the per-agent step budget cut an agent.
    pub budget_cut: u64,
    /// Paths cut by the scenario's `events_max`.
    pub truncated: u64,
    /// The counts are up to renaming `count` copies (symmetry on and copies to fold), as
    /// `agentsim explore --json` says.
    pub symmetry: bool,
    pub seconds: f64,
    pub peak_rss_mib: Option<f64>,
    /// The anomalies the search reached (a witness each).
    pub reachable: Vec<Anomaly>,
    /// A stateful search's states kept and paths ended at a state seen before (`None`:
    /// stateless).
    pub states: Option<u64>,
    pub merged: Option<u64>,
}

/// The own counts at smaller per-agent step budgets.
#[derive(Clone, Debug, Serialize)]
pub struct Steps {
    /// The largest budget tried whose search completed (`None`: not even the smallest).
    pub steps_per_agent: Option<u64>,
    /// The search at that budget, or the smallest budget's stopped one.
    pub run: Run,
    /// "cannot tell (no witness within N steps per agent)" when the budget cut a path,
    /// "unreachable over every interleaving" when none was; "cannot tell" for a stopped search.
    pub verdict: String,
}

/// One scenario under one runtime.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub scenario: String,
    pub runtime: String,
    /// The scenario's own largest `repeat`.
    pub own_repeat: u32,
    /// The largest cap whose reduced search completed (`None`: not even 1).
    pub repeat_cap: Option<u32>,
    /// That cap is the scenario's own counts.
    pub at_own: bool,
    /// The reduced search at `repeat_cap`, or the stopped one at cap 1.
    pub reduced: Run,
    /// The next cap's reduced search, stopped by the budget (absent at the own counts).
    pub next: Option<Run>,
    /// The plain enumeration at `repeat_cap`.
    pub plain: Option<Run>,
    /// The own counts at smaller per-agent step budgets, when they did not finish at the
    /// default one.
    pub steps: Option<Steps>,
    /// The stateful search at the own counts without a step budget.
    pub stateful: Option<Run>,
    /// Plain schedules over reduced schedules; a lower bound when the plain search stopped.
    pub reduction_factor: Option<f64>,
    pub factor_is_lower_bound: bool,
    pub threads: usize,
    /// The seconds one search was given before it was stopped.
    pub budget_s: f64,
    /// Why the scenario was not explored (e.g. `[cpl]`), if it was not.
    pub refused: Option<String>,
}

/// The scenario files of `dirs` (sorted), filtered by `only`.
pub fn files(dirs: &[PathBuf], only: Option<&str>) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for d in dirs {
        let rd = std::fs::read_dir(d).with_context(|| format!("reading {}", d.display()))?;
        for e in rd {
            let p = e
                .with_context(|| format!("reading {}", d.display()))?
                .path();
            if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out.retain(|p| only.is_none_or(|o| p.to_string_lossy().contains(o)));
    Ok(out)
}

/// Runs the benchmark.
pub fn run(a: &Args) -> Result<Vec<Case>> {
    anyhow::ensure!(a.threads >= 1, "--threads must be at least 1");
    anyhow::ensure!(
        a.budget_s > 0.0 && a.budget_s.is_finite(),
        "--budget-s must be a positive number of seconds"
    );
    let dirs: Vec<PathBuf> = if a.dirs.is_empty() {
        DIRS_DEFAULT.iter().map(PathBuf::from).collect()
    } else {
        a.dirs.clone()
    };
    let runtimes: Vec<Stack> = if a.runtime.is_empty() {
        RuntimeKind::ALL.iter().map(|k| k.stack()).collect()
    } else {
        a.runtime.clone()
    };
    let budget = Duration::from_secs_f64(if a.quick { QUICK_BUDGET_S } else { a.budget_s });
    let plain = !a.quick && !a.no_plain;
    let mut cases = Vec::new();
    for f in files(&dirs, a.only.as_deref())? {
        let sc = Scenario::load(&f)?;
        for &rt in &runtimes {
            let mut c = case(&f, &sc, rt, budget, plain, a.threads);
            if !a.no_stateful && c.refused.is_none() {
                c.stateful =
                    timed(&sc, rt, Kind::Stateful, budget, a.threads, STEPS_UNBOUNDED).ok();
            }
            if !a.quiet {
                eprintln!("{}", line(&c));
            }
            cases.push(c);
        }
    }
    Ok(cases)
}

/// One scenario under one runtime: the caps upwards until one does not finish.
fn case(file: &Path, sc: &Scenario, rt: Stack, budget: Duration, plain: bool, t: usize) -> Case {
    let own = sc.repeat_max();
    let mut c = Case {
        scenario: file.display().to_string(),
        runtime: rt.to_string(),
        own_repeat: own,
        repeat_cap: None,
        at_own: false,
        reduced: Run::none(),
        next: None,
        plain: None,
        steps: None,
        stateful: None,
        reduction_factor: None,
        factor_is_lower_bound: false,
        threads: t,
        budget_s: budget.as_secs_f64(),
        refused: None,
    };
    let mut best: Option<Scenario> = None;
    for cap in 1..=own {
        let capped = match sc.with_repeat_cap(cap) {
            Ok((s, _)) => s,
            Err(e) => return c.refuse(e.to_string()),
        };
        let r = match timed(
            &capped,
            rt,
            Kind::Reduced,
            budget,
            t,
            STEPS_PER_AGENT_DEFAULT,
        ) {
            Ok(r) => r,
            Err(e) => return c.refuse(e),
        };
        if !r.complete {
            if best.is_none() {
                c.reduced = r;
            } else {
                c.next = Some(r);
            }
            break;
        }
        c.repeat_cap = Some(cap);
        c.at_own = cap == own;
        c.reduced = r;
        best = Some(capped);
    }
    if !c.at_own {
        c.steps = step_budgets(sc, rt, budget, t);
    }
    if let (Some(s), true) = (best, plain) {
        if let Ok(p) = timed(&s, rt, Kind::Plain, budget, t, STEPS_PER_AGENT_DEFAULT) {
            let reduced = c.reduced.schedules.max(1) as f64;
            c.reduction_factor = Some(p.schedules as f64 / reduced);
            c.factor_is_lower_bound = !p.complete;
            c.plain = Some(p);
        }
    }
    c
}

/// The own counts at the budgets of [`STEPS_TRIED`], upwards until one does not finish.
fn step_budgets(sc: &Scenario, rt: Stack, budget: Duration, t: usize) -> Option<Steps> {
    let mut out: Option<Steps> = None;
    for steps in STEPS_TRIED {
        let Ok(r) = timed(sc, rt, Kind::Reduced, budget, t, steps) else {
            break;
        };
        if !r.complete {
            if out.is_none() {
                out = Some(Steps {
                    steps_per_agent: None,
                    run: r,
                    verdict: "cannot tell".to_owned(),
                });
            }
            break;
        }
        let verdict = if r.budget_cut > 0 {
            // A cut search is no proof: the bench says how far it got, not "unreachable".
            format!("cannot tell (no witness within {steps} steps per agent)")
        } else {
            "unreachable over every interleaving".to_owned()
        };
        out = Some(Steps {
            steps_per_agent: Some(steps),
            run: r,
            verdict,
        });
    }
    out
}

impl Case {
    fn refuse(mut self, why: String) -> Case {
        self.refused = Some(why);
        self
    }
}

impl Run {
    fn none() -> Run {
        Run {
            complete: false,
            schedules: 0,
            classes: 0,
            steps_per_agent: 0,
            budget_cut: 0,
            truncated: 0,
            symmetry: false,
            seconds: 0.0,
            peak_rss_mib: None,
            reachable: Vec::new(),
            states: None,
            merged: None,
        }
    }

    fn of(sc: &Scenario, e: &Exploration, seconds: f64, peak_rss_mib: Option<f64>) -> Run {
        Run {
            complete: e.stopped.is_none(),
            schedules: e.schedules,
            classes: e.classes,
            steps_per_agent: e.steps_per_agent,
            budget_cut: e.budget_cut,
            truncated: e.truncated,
            symmetry: e.symmetry() && has_copies(sc),
            seconds,
            peak_rss_mib,
            reachable: e
                .findings
                .iter()
                .filter(|f| f.reach == Reach::Reachable)
                .map(|f| f.anomaly)
                .collect(),
            states: e.stateful.map(|s| s.states),
            merged: e.stateful.map(|s| s.merged),
        }
    }
}

/// Which search [`timed`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Source-DPOR with sleep sets and symmetry (`explore`'s default).
    Reduced,
    /// Plain enumeration (`--no-reduction`).
    Plain,
    /// Plain enumeration with a seen set (`--stateful`).
    Stateful,
}

/// One search, stopped when `budget` runs out.
fn timed(
    sc: &Scenario,
    rt: Stack,
    kind: Kind,
    budget: Duration,
    threads: usize,
    steps_per_agent: u64,
) -> Result<Run, String> {
    let cancel = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let cfg = ExploreConfig {
        search: if kind == Kind::Reduced {
            Search::Reduced { symmetry: true }
        } else {
            Search::Plain
        },
        stateful: kind == Kind::Stateful,
        threads,
        steps_per_agent,
        cancel: Some(&cancel),
        ..ExploreConfig::new(rt)
    };
    reset_peak_rss();
    let started = Instant::now();
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                if started.elapsed() >= budget {
                    cancel.store(true, Ordering::SeqCst);
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let r = explore(sc, &cfg);
        done.store(true, Ordering::SeqCst);
        r
    });
    let seconds = started.elapsed().as_secs_f64();
    let e = result.map_err(|e| e.to_string())?;
    Ok(Run::of(sc, &e, seconds, super::detect::peak_rss_mib()))
}

/// Resets the process's resident high-water mark (Linux 4.0+); a no-op elsewhere, where
/// the figure is then the whole run's peak.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// One case on one line (stderr while running, and the text report).
pub fn line(c: &Case) -> String {
    if let Some(why) = &c.refused {
        return format!("{} under {}: not explored: {why}", c.scenario, c.runtime);
    }
    let reach = match (c.repeat_cap, c.at_own) {
        (None, _) => format!(
            "repeat ≤ 1 did not finish in the budget ({})",
            counts(&c.reduced)
        ),
        (Some(_), true) => format!("own repeat counts (≤ {})", c.own_repeat),
        (Some(n), false) => format!("capped at repeat ≤ {n} of {}", c.own_repeat),
    };
    let mut s = format!("{} under {}: {reach}", c.scenario, c.runtime);
    if c.repeat_cap.is_some() {
        let _ = write!(s, "; reduced {}", counts(&c.reduced));
    }
    if let Some(p) = &c.plain {
        let _ = write!(s, "; plain {}", counts(p));
    }
    if let Some(f) = c.reduction_factor {
        let ge = if c.factor_is_lower_bound { "≥ " } else { "" };
        let _ = write!(s, "; factor {ge}{f:.1}×");
    }
    if let Some(n) = &c.next {
        let _ = write!(s, "; next cap stopped at {} schedules", n.schedules);
    }
    if let Some(st) = &c.steps {
        let _ = write!(s, "; own counts {}", steps_text(st));
    }
    if let Some(r) = &c.stateful {
        let _ = write!(s, "; stateful unbounded {}", counts(r));
    }
    s
}

/// The step-budget result in words: the largest budget that completed with its verdict, or
/// the smallest's stopped search.
fn steps_text(st: &Steps) -> String {
    let r = &st.run;
    match st.steps_per_agent {
        Some(n) => {
            let reach = if r.reachable.is_empty() {
                "none reachable".to_owned()
            } else {
                let names: Vec<String> = r.reachable.iter().map(|a| a.to_string()).collect();
                format!("{} reachable", names.join(", "))
            };
            format!(
                "complete within {n} steps per agent ({}; {reach}, the rest {})",
                counts(r),
                st.verdict
            )
        }
        None => format!(
            "not complete even within {} steps per agent ({}): cannot tell",
            STEPS_TRIED[0],
            counts(r)
        ),
    }
}

/// The step-budget result in a table cell.
fn steps_cell(st: &Steps) -> String {
    let r = &st.run;
    match st.steps_per_agent {
        Some(n) => {
            let reach: Vec<String> = r.reachable.iter().map(|a| a.to_string()).collect();
            let reach = if reach.is_empty() {
                "none reachable".to_owned()
            } else {
                format!("{} reachable", reach.join(", "))
            };
            format!(
                "{n} steps/agent: {} schedules, {:.2} s; {reach}",
                r.schedules, r.seconds
            )
        }
        None => format!(
            "not even {} steps/agent ({} schedules, stopped): cannot tell",
            STEPS_TRIED[0], r.schedules
        ),
    }
}

fn counts(r: &Run) -> String {
    let mem = r
        .peak_rss_mib
        .map_or_else(|| "peak ? MiB".to_owned(), |m| format!("peak {m:.0} MiB"));
    let state = if r.complete { "" } else { ", stopped" };
    let kept = r.states.map_or(String::new(), |n| {
        format!("{n} states, {} merged, ", r.merged.unwrap_or(0))
    });
    format!(
        "{kept}{} schedules, {} classes, {:.2} s, {mem}{state}{}",
        r.schedules,
        r.classes,
        r.seconds,
        if r.budget_cut > 0 {
            ", step budget cut some paths"
        } else {
            ""
        }
    )
}

/// The report as a Markdown table (what `docs/benchmarks.md` shows); `cut` counts the paths
/// on which the per-agent step budget stopped an agent (verdicts then hold within it).
pub fn table(cases: &[Case]) -> String {
    let mut s = String::from(
        "| scenario | runtime | repeat | schedules | classes | cut | s | peak MiB \
         | plain schedules | plain s | factor | own counts within \
         | stateful states | stateful s | stateful peak MiB |\n\
         |---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|\n",
    );
    for c in cases {
        let name = c.scenario.trim_start_matches("scenarios/");
        if let Some(why) = &c.refused {
            let _ = writeln!(
                s,
                "| {name} | {} | not explored: {why} |||||||||||| |",
                c.runtime
            );
            continue;
        }
        let repeat = match (c.repeat_cap, c.at_own) {
            (None, _) if c.own_repeat == 1 => "own (1), stopped".to_owned(),
            (None, _) => format!("≤ 1 of {}, stopped", c.own_repeat),
            (Some(n), true) => format!("own ({n})"),
            (Some(n), false) => format!("≤ {n} of {}", c.own_repeat),
        };
        let r = &c.reduced;
        let mem = r.peak_rss_mib.map_or("?".to_owned(), |m| format!("{m:.0}"));
        let (ps, pt) = c
            .plain
            .as_ref()
            .map_or(("–".to_owned(), "–".to_owned()), |p| {
                let stop = if p.complete { "" } else { " (stopped)" };
                (
                    format!("{}{stop}", p.schedules),
                    format!("{:.2}", p.seconds),
                )
            });
        let f = c.reduction_factor.map_or("–".to_owned(), |f| {
            format!("{}{f:.1}×", if c.factor_is_lower_bound { "≥ " } else { "" })
        });
        let within = c.steps.as_ref().map_or("–".to_owned(), steps_cell);
        let (ss, st, sm) = c.stateful.as_ref().map_or(
            ("–".to_owned(), "–".to_owned(), "–".to_owned()),
            |r| {
                let stop = if r.complete { "" } else { " (stopped)" };
                (
                    format!("{}{stop}", r.states.unwrap_or(0)),
                    format!("{:.2}", r.seconds),
                    r.peak_rss_mib.map_or("?".to_owned(), |m| format!("{m:.0}")),
                )
            },
        );
        let _ = writeln!(
            s,
            "| {name} | {} | {repeat} | {} | {} | {} | {:.2} | {mem} | {ps} | {pt} | {f} \
             | {within} | {ss} | {st} | {sm} |",
            c.runtime, r.schedules, r.classes, r.budget_cut, r.seconds
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(row: &str) -> usize {
        row.trim().trim_matches('|').split('|').count()
    }

    fn args(dir: &str, only: &str, runtime: &str) -> Args {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        Args {
            dirs: vec![root.join(dir)],
            only: Some(only.to_owned()),
            runtime: vec![runtime.parse().unwrap()],
            budget_s: 60.0,
            quick: false,
            no_plain: false,
            no_stateful: false,
            threads: 1,
            json: true,
            quiet: true,
        }
    }

    /// Two callers of a2-width2 finish both ways in well under the budget: the factor is the
    /// plain schedules over the reduced ones, exact, and the JSON says what the counts are
    /// (folded over the copies, at which step budget, under which time budget).
    #[test]
    fn a_finished_case_has_an_exact_factor_and_says_what_it_counted() {
        let cases = run(&args("scenarios/twins", "a2-width2", "vanilla")).unwrap();
        assert_eq!(cases.len(), 1);
        let c = &cases[0];
        assert!(c.refused.is_none(), "{:?}", c.refused);
        assert_eq!(c.repeat_cap, Some(c.own_repeat));
        assert!(c.at_own && c.reduced.complete);
        let p = c.plain.as_ref().expect("a plain search");
        assert!(p.complete && !c.factor_is_lower_bound);
        assert!(
            p.schedules > c.reduced.schedules,
            "{p:?} vs {:?}",
            c.reduced
        );
        let f = c.reduction_factor.unwrap();
        assert!((f - p.schedules as f64 / c.reduced.schedules as f64).abs() < 1e-9);
        assert!(c.reduced.symmetry, "two callers are copies to fold");
        assert!(!p.symmetry, "the plain enumeration does not fold copies");
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["budget_s"], 60.0);
        assert_eq!(v["reduced"]["steps_per_agent"], STEPS_PER_AGENT_DEFAULT);
        assert_eq!(v["reduced"]["truncated"], 0);
        assert_eq!(v["reduced"]["symmetry"], true);
        assert_eq!(v["plain"]["symmetry"], false);
        // The stateful search without a step budget finishes too, with the same verdicts.
        let st = c.stateful.as_ref().expect("a stateful search");
        assert!(st.complete, "{st:?}");
        assert!(st.states.is_some_and(|n| n > 0), "{st:?}");
        assert_eq!(st.reachable, c.reduced.reachable);
        assert_eq!(v["stateful"]["steps_per_agent"], STEPS_UNBOUNDED);
        assert!(v["reduced"]["states"].is_null());
    }

    /// Every row of the table, refused or explored, has the header's cells.
    #[test]
    fn every_table_row_has_the_headers_cells() {
        let mut cases = run(&args("scenarios/twins", "a2-width2", "vanilla")).unwrap();
        let mut refused = cases[0].clone();
        refused.refused = Some("[cpl]".to_owned());
        let mut stopped = cases[0].clone();
        stopped.repeat_cap = None;
        stopped.at_own = false;
        stopped.plain = None;
        stopped.reduction_factor = None;
        stopped.steps = Some(Steps {
            steps_per_agent: None,
            run: Run::none(),
            verdict: "cannot tell".to_owned(),
        });
        cases.extend([refused, stopped]);
        let t = table(&cases);
        let rows: Vec<&str> = t.lines().collect();
        assert_eq!(rows.len(), 2 + 3);
        let want = cells(rows[0]);
        for r in &rows[1..] {
            assert_eq!(cells(r), want, "{r}");
        }
    }
}
