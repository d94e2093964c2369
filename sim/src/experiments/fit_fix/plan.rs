//! From an anomaly set to a verified, costed stack: every stack the realizability search
//! found for a lattice point that excludes the set (the realizing stack and its alternatives)
//! is a candidate; it is *verified* when the checker shows it prevents each anomaly (at the
//! matrix bounds) and none of the fitted scenario's N sampled trials under it shows one; the
//! cheapest such candidates are then explored (`agentsim explore`, time abstracted, at most
//! [`EXPLORED_MAX`], until one is unreachable on every interleaving: *proven*); a witness
//! found there unverifies a candidate, a search stopped at its ceiling says so; it is
//! *costed* on the fitted scenario against vanilla, paired by trial seed. Candidates are
//! ordered verified first, then those that give up no operation vanilla committed (a stack
//! whose retries run out is cheap because it does less), then by token overhead, makespan
//! overhead, size and name; the Pareto front is over token and makespan overhead among the
//! verified that give up nothing.
//!
//! Before a candidate is explored it must be *live*: the liveness search
//! (`agentsim explore --liveness`, weak fairness) on the fitted scenario under the stack
//! finds no starvation and no termination violation; a stack with a lasso is refused
//! (unverified, and named as refused for liveness), since a stack that trades the anomaly for
//! an agent that never commits is no fix. A liveness search that cannot tell (its graph cut)
//! refuses nothing and is reported as such.
//!
//! What a verified stack does not prove: 0/N sampled is "no trial showed it" (the Wilson
//! interval says how rare it could still be), and the checker's prevention holds at its
//! bounds, on its abstract scenarios, not on every length of the user's run.

use crate::artifacts::figures::Estimate;
use crate::experiments::paired::{mean_interval, overhead};
use crate::experiments::realize;
use crate::experiments::run::run_under;
use agentsim_checker::jobs::realize::Answer;
use agentsim_models::lattice::Point;
use agentsim_models::runtime::Stack;
use agentsim_models::verdict::Verdict;
use agentsim_models::Anomaly;
use agentsim_sim::explore::live::{liveness, LiveConfig, LiveVerdict, Liveness};
use agentsim_sim::metrics::TrialMetrics;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::stats::Proportion;
use agentsim_sim::RunResult;

/// One candidate stack, checked and measured.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub stack: Stack,
    /// The lattice point it realizes.
    pub excludes: Point,
    /// The checker prevents every anomaly of the set.
    pub checker: bool,
    /// How far that prevention reaches (the explored candidates only).
    pub lengths: Vec<(Anomaly, Lengths)>,
    /// Per anomaly of the set: trials of the fitted scenario showing it.
    pub sampled: Vec<(Anomaly, Proportion)>,
    /// Per anomaly of the set: whether some interleaving of the fitted scenario under the
    /// stack reaches it (*holds*: reachable, *violated*: unreachable, or *cannot tell*).
    pub explored: Vec<(Anomaly, Verdict)>,
    pub verified: bool,
    pub token_overhead: Estimate,
    pub makespan_overhead: Estimate,
    pub tokens_wasted: Estimate,
    pub aborts: Estimate,
    pub drops: Estimate,
    pub retries: Estimate,
    /// Operations per trial that committed under vanilla but not under the stack (retries
    /// exhausted): work the stack gave up rather than protected.
    pub lost: Estimate,
    pub pareto: bool,
    /// The liveness search on the fitted scenario under the stack (weak fairness), for the
    /// candidates that came to be explored.
    pub liveness: Option<Liveness>,
}

/// How far the checker's prevention reaches for one anomaly, on the abstract model (shown
/// equivalent to the concrete one where both run; `checker/src/jobs/abstract_matrix.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lengths {
    /// Its unbounded search closed: every history length, at the matrix's agents and cells.
    All,
    /// Histories of at most this many records (the search needs the op counter, or did not
    /// close within its state budget).
    UpTo(u32),
    /// The abstract model admits the anomaly under the stack (a witness of this many steps):
    /// the realize table's bounded answer does not carry over.
    Admitted(usize),
    /// The abstract model cannot run this anomaly or stack; the sentence says why.
    NotModelled(String),
}

impl std::fmt::Display for Lengths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lengths::All => f.write_str("all lengths"),
            Lengths::UpTo(n) => write!(f, "up to {n} records"),
            Lengths::Admitted(n) => write!(f, "admitted ({n}-step witness)"),
            Lengths::NotModelled(why) => write!(f, "not on the abstract model ({why})"),
        }
    }
}

/// States one abstract check may visit before it falls back to the length bound.
const ABSTRACT_STATES_MAX: u64 = 2_000_000;

/// How far `stack`'s prevention of each anomaly of `set` reaches on the abstract model, at the
/// abstract matrix's agents and cells: every length when the unbounded search closes, else
/// the matrix's length bound.
pub fn checker_lengths(stack: Stack, set: &[Anomaly]) -> Vec<(Anomaly, Lengths)> {
    use agentsim_checker::engine::frontier::Storage;
    use agentsim_checker::jobs::abstract_matrix::{cell_config, COLUMNS};
    use agentsim_checker::jobs::check_abstract::check_abstract;
    use agentsim_models::runtime::RuntimeKind;
    let mut o = crate::experiments::abstract_matrix::step_options();
    o.threads = 1;
    o.max_states = ABSTRACT_STATES_MAX;
    set.iter()
        .map(|&a| {
            if !COLUMNS.contains(&a) {
                return (
                    a,
                    Lengths::NotModelled(format!("{a} is not one of its anomalies")),
                );
            }
            let mut cfg = match cell_config(RuntimeKind::Vanilla, false, a, &o) {
                Ok(cfg) => cfg,
                Err(e) => return (a, Lengths::NotModelled(e.to_string())),
            };
            cfg.runtime = stack;
            let storage = Storage::default();
            let mut bounded = cfg.ext.retraction;
            loop {
                let r = match check_abstract(&cfg, bounded, &storage) {
                    Ok(r) => r,
                    Err(e) => return (a, Lengths::NotModelled(e.to_string())),
                };
                if let Some(cx) = r.report.verdicts[0].counterexample.as_ref() {
                    return (a, Lengths::Admitted(cx.steps.len()));
                }
                if r.all_lengths {
                    return (a, Lengths::All);
                }
                if bounded {
                    return (a, Lengths::UpTo(o.max_ops));
                }
                bounded = true;
            }
        })
        .collect()
}

/// States the liveness search of one candidate may number before it cannot tell.
const LIVE_STATES_MAX: u64 = 50_000;

impl Candidate {
    /// Refused for liveness: an agent starves, or one not `serves = true` never finishes,
    /// on some weakly fair run.
    pub fn not_live(&self) -> bool {
        self.liveness.as_ref().is_some_and(|l| {
            l.starvation.verdict == LiveVerdict::Violated
                || l.termination.verdict == LiveVerdict::Violated
        })
    }

    /// Explored, and no interleaving reaches any anomaly of the set.
    pub fn proven(&self) -> bool {
        !self.explored.is_empty() && self.explored.iter().all(|(_, v)| *v == Verdict::Violated)
    }
}

/// The vanilla baseline and every candidate.
pub struct Plan {
    pub vanilla: Vec<(Anomaly, Proportion)>,
    pub candidates: Vec<Candidate>,
}

impl Plan {
    /// The cheapest verified candidate (one that gives up no work, if any does).
    pub fn chosen(&self) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.verified)
    }
}

/// The candidate stacks for `set`, with the point each realizes, smallest point first.
pub fn candidates(set: &[Anomaly], threads: usize) -> anyhow::Result<Vec<(Stack, Point)>> {
    let r = realize::search(None, threads)?;
    let want = Point::of(set);
    let mut out: Vec<(Stack, Point)> = Vec::new();
    for p in &r.points {
        if p.excludes.0 & want.0 != want.0 {
            continue;
        }
        if let Answer::Realized { by, alternatives } = &p.answer {
            let prevented = by.verdicts.excluded();
            assert_eq!(
                prevented, p.excludes,
                "a realizing stack prevents its point"
            );
            for s in std::iter::once(by.stack).chain(alternatives.iter().copied()) {
                if !out.iter().any(|(x, _)| *x == s) {
                    out.push((s, p.excludes));
                }
            }
        }
    }
    Ok(out)
}

fn rates(r: &RunResult, set: &[Anomaly]) -> Vec<(Anomaly, Proportion)> {
    let n = r.trials.len() as u64;
    set.iter()
        .map(|&a| {
            let k = r
                .trials
                .iter()
                .filter(|t| t.metrics.anomalies.contains(&a))
                .count() as u64;
            (a, Proportion::new(k, n))
        })
        .collect()
}

fn per(r: &RunResult, f: fn(&TrialMetrics) -> u64) -> Vec<u64> {
    r.trials.iter().map(|t| f(&t.metrics)).collect()
}

fn mean(r: &RunResult, f: fn(&TrialMetrics) -> u64) -> Estimate {
    let v: Vec<f64> = per(r, f).into_iter().map(|x| x as f64).collect();
    mean_interval(&v)
}

/// Runs the vanilla baseline and each candidate on `sc` (`trials` from `seed`), calling
/// `progress(done, total)` after each.
pub fn plan(
    sc: &Scenario,
    set: &[Anomaly],
    stacks: &[(Stack, Point)],
    trials: u64,
    seed: u64,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<Plan> {
    let base = run_under(sc, Stack::VANILLA, trials, seed, threads)?;
    let tokens = per(&base, |m| m.tokens_total);
    let makespan = per(&base, |m| m.makespan_ms);
    let commits = per(&base, |m| m.commits);
    let mut out = Vec::new();
    for (i, &(stack, excludes)) in stacks.iter().enumerate() {
        let r = run_under(sc, stack, trials, seed, threads)?;
        let sampled = rates(&r, set);
        let checker = set.iter().all(|a| excludes.contains(*a));
        // Sampling first; exploration, the costly half, below in rank order.
        let verified = checker && sampled.iter().all(|(_, p)| p.k == 0);
        let explored = Vec::new();
        out.push(Candidate {
            stack,
            excludes,
            checker,
            lengths: Vec::new(),
            verified,
            token_overhead: overhead(&tokens, &per(&r, |m| m.tokens_total)),
            makespan_overhead: overhead(&makespan, &per(&r, |m| m.makespan_ms)),
            tokens_wasted: mean(&r, |m| m.tokens_wasted),
            aborts: mean(&r, |m| m.aborts),
            drops: mean(&r, |m| m.drops),
            retries: mean(&r, |m| m.retries),
            lost: lost(&commits, &per(&r, |m| m.commits)),
            sampled,
            explored,
            pareto: false,
            liveness: None,
        });
        progress(i + 1, stacks.len());
    }
    rank(&mut out);
    mark_front(&mut out);
    // Explore the candidates that passed the checker and sampling, cheapest first, until one
    // is unreachable on every interleaving (at most EXPLORED_MAX of them). A witness refutes
    // sampling's "no trial showed it" (the candidate is unverified); a search stopped at its
    // ceiling adds nothing either way and says so; the rest stay unexplored.
    let mut tried = 0;
    for c in out.iter_mut() {
        if !c.verified || tried == EXPLORED_MAX {
            continue;
        }
        let live = LiveConfig {
            max_states: LIVE_STATES_MAX,
            ..LiveConfig::new(c.stack)
        };
        c.liveness = liveness(sc, &live).ok();
        if c.not_live() {
            c.verified = false;
            continue;
        }
        tried += 1;
        c.lengths = checker_lengths(c.stack, set);
        c.explored = super::contains::explore_reachable(sc, c.stack, set);
        let admitted = c
            .lengths
            .iter()
            .any(|(_, l)| matches!(l, Lengths::Admitted(_)));
        if admitted || c.explored.iter().any(|(_, v)| *v == Verdict::Holds) {
            c.verified = false;
        }
        if c.proven() {
            break;
        }
    }
    rank(&mut out);
    Ok(Plan {
        vanilla: rates(&base, set),
        candidates: out,
    })
}

/// Candidates `fix` explores before it gives up on finding one verified on every interleaving.
pub const EXPLORED_MAX: usize = 4;

/// An estimate's mean when it was measured: a scenario without `[tokens]` (or a baseline of
/// zero) gives no overhead, and an unmeasured cost ranks nothing.
pub fn measured(e: &Estimate) -> Option<f64> {
    e.mean.is_finite().then_some(e.mean)
}

/// Two measured costs in order; equal when either is not measured.
fn by_measured(a: &Estimate, b: &Estimate) -> std::cmp::Ordering {
    match (measured(a), measured(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        _ => std::cmp::Ordering::Equal,
    }
}

/// Verified first, those exploration proves before the rest, then those that give up
/// nothing, then by token and makespan overhead where measured, size and name.
fn rank(out: &mut [Candidate]) {
    out.sort_by(|a, b| {
        let key = |c: &Candidate| (!c.verified, c.stack.len(), c.stack.to_string());
        let gives_up = |c: &Candidate| c.lost.mean > 0.0;
        (!a.verified)
            .cmp(&!b.verified)
            .then((!a.proven()).cmp(&!b.proven()))
            .then(gives_up(a).cmp(&gives_up(b)))
            .then(by_measured(&a.token_overhead, &b.token_overhead))
            .then(by_measured(&a.makespan_overhead, &b.makespan_overhead))
            .then(key(a).cmp(&key(b)))
    });
}

/// Operations per trial vanilla committed and the stack did not, paired by trial.
fn lost(base: &[u64], stack: &[u64]) -> Estimate {
    let v: Vec<f64> = base
        .iter()
        .zip(stack)
        .map(|(&b, &s)| b.saturating_sub(s) as f64)
        .collect();
    mean_interval(&v)
}

/// Marks the candidates that pass the checker and sampling (before exploration) and that no
/// other such candidate beats on both overheads.
fn mark_front(cs: &mut [Candidate]) {
    let pts: Vec<(bool, f64, f64)> = cs
        .iter()
        .map(|c| {
            // An unmeasured cost is the same for every candidate: the front is over the rest.
            let ok = c.verified && c.lost.mean == 0.0;
            let cost = |e: &Estimate| measured(e).unwrap_or(0.0);
            (ok, cost(&c.token_overhead), cost(&c.makespan_overhead))
        })
        .collect();
    for (i, c) in cs.iter_mut().enumerate() {
        let (v, t, m) = pts[i];
        c.pareto = v
            && !pts
                .iter()
                .enumerate()
                .any(|(j, &(vj, tj, mj))| j != i && vj && tj <= t && mj <= m && (tj < t || mj < m));
    }
}
