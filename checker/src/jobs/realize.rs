//! Realizability (SPEC §4 extension, §5.1): for each of the 16 points S of the lattice (a set
//! of anomalies among A1, A2, A3, A6), a smallest stack of mechanisms that prevents exactly S
//! — every anomaly in S prevented by an exhaustive check (with its states), every other one
//! admitted (with its shortest witness) — or, where no stack does, the evidence.
//!
//! Each anomaly is checked in its matrix scenario ([`runtime_matrix::scenario`]), so "prevents" and
//! "admits" mean what the matrix means, at the matrix's bounds (or every MaxOps replaced by
//! `max_ops`), nothing beyond them. The search is exhaustive over the valid stacks of the
//! allowed mechanisms, smallest first: fewer mechanisms first, then a named runtime before a
//! stack no named runtime is (so the named chain is realized by its own runtimes where they
//! are smallest), then catalogue order (the stacks' bit order). It stops after the first
//! size at which every point has been realized; if some point is never realized, it has
//! checked every valid stack, and the evidence is what they did: the anomalies of S that
//! every candidate admits (with the shortest witness any of them has), and the candidates
//! closest to S (fewest anomalies off).
//!
//! Bounds: at most 2^|mechanisms| candidates, four checks each, each exploring at most
//! `max_states` distinct states (one that would go further is an error, not a verdict); the
//! matrix scenarios have under 1 000 states, so a whole search stays far below a gigabyte.

use super::runtime_matrix::{self, MatrixError, Verdict};
use agentsim_models::lattice::{self, Point};
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;

/// What the search may use and how far each check may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RealizeConfig {
    /// The mechanisms a stack may contain (every one: [`Stack::all`]).
    pub mechanisms: Stack,
    /// Replaces every scenario's MaxOps, as the matrix's `max_ops` does.
    pub max_ops: Option<u32>,
    pub threads: usize,
    /// Bound on distinct states of each check.
    pub max_states: u64,
}

impl Default for RealizeConfig {
    fn default() -> Self {
        RealizeConfig {
            mechanisms: Stack::all(),
            max_ops: None,
            threads: 2,
            max_states: 5_000_000,
        }
    }
}

/// The four verdicts of one stack, in lattice order ([`Anomaly::LATTICE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdicts(pub [Verdict; 4]);

impl Verdicts {
    /// The point this stack realizes: the anomalies it prevents.
    pub fn excluded(&self) -> Point {
        let prevented: Vec<Anomaly> = Anomaly::LATTICE
            .into_iter()
            .zip(self.0)
            .filter(|(_, v)| !v.admitted)
            .map(|(a, _)| a)
            .collect();
        Point::of(&prevented)
    }

    /// The verdict on `a`.
    pub fn of(&self, a: Anomaly) -> Verdict {
        self.0[Anomaly::LATTICE
            .iter()
            .position(|&x| x == a)
            .expect("a lattice anomaly")]
    }
}

/// A candidate and what the checker found for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub stack: Stack,
    pub verdicts: Verdicts,
}

/// Why a point is not realized by any candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// Anomalies of the point that every candidate admits, each with the candidate whose
    /// witness is shortest and that verdict.
    pub always_admitted: Vec<(Anomaly, Candidate)>,
    /// The candidates with the fewest anomalies off the point (prevented though outside it,
    /// or admitted though in it), smallest first; at most [`CLOSEST_MAX`].
    pub closest: Vec<(Candidate, Vec<Anomaly>)>,
}

/// How many closest candidates an [`Evidence`] lists.
pub const CLOSEST_MAX: usize = 4;

/// One point's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The smallest realizing stack, and the other stacks of its size that realize the
    /// point, in search order.
    Realized {
        by: Candidate,
        alternatives: Vec<Stack>,
    },
    /// No valid stack of the allowed mechanisms realizes the point.
    Unrealized(Evidence),
}

/// A point of the lattice and how it is realized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Realization {
    /// The anomalies to prevent (all others admitted).
    pub excludes: Point,
    pub answer: Answer,
}

/// The whole search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Realizability {
    /// One per point, in [`lattice::points`] order (by size, then bits).
    pub points: Vec<Realization>,
    /// Every candidate checked, in search order.
    pub checked: Vec<Candidate>,
}

impl Realizability {
    /// The answer for `excludes`.
    pub fn get(&self, excludes: Point) -> &Answer {
        &self
            .points
            .iter()
            .find(|r| r.excludes == excludes)
            .expect("every point is answered")
            .answer
    }
}

/// The four verdicts of `stack` (each anomaly in its matrix scenario).
pub fn verdicts(stack: Stack, cfg: &RealizeConfig) -> Result<Verdicts, MatrixError> {
    let mut out = [Verdict {
        admitted: false,
        witness_steps: None,
        states: 0,
    }; 4];
    for (slot, a) in out.iter_mut().zip(Anomaly::LATTICE) {
        *slot = runtime_matrix::verdict(
            stack,
            false,
            ReadDiscipline::AnyReplica,
            a,
            cfg.max_ops,
            cfg.threads,
            cfg.max_states,
        )?;
    }
    Ok(Verdicts(out))
}

/// The valid stacks of `mechanisms`, in search order.
pub fn candidates(mechanisms: Stack) -> Vec<Stack> {
    let mut out: Vec<Stack> = Stack::subsets(mechanisms)
        .into_iter()
        .filter(|s| s.validate().is_ok())
        .collect();
    out.sort_by_key(|s| (s.len(), s.kind().is_none(), *s));
    out
}

/// Runs the search (see the module docs).
pub fn realize(cfg: &RealizeConfig) -> Result<Realizability, MatrixError> {
    realize_with(cfg, &mut |_, _| {})
}

/// [`realize`], calling `progress(points_realized, stacks_checked)` after each candidate
/// stack is checked, so a command can report progress; the answer is the same.
pub fn realize_with(
    cfg: &RealizeConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Realizability, MatrixError> {
    let mut checked: Vec<Candidate> = Vec::new();
    let mut found: Vec<Option<usize>> = vec![None; 16];
    let mut size_done = 0;
    for stack in candidates(cfg.mechanisms) {
        let all_found = found.iter().all(Option::is_some);
        if all_found && stack.len() > size_done {
            break;
        }
        let verdicts = verdicts(stack, cfg)?;
        let point = verdicts.excluded();
        found[point.0 as usize].get_or_insert(checked.len());
        checked.push(Candidate { stack, verdicts });
        progress(found.iter().flatten().count(), checked.len());
        if !all_found {
            size_done = stack.len();
        }
    }
    let points = lattice::points()
        .into_iter()
        .map(|p| Realization {
            excludes: p,
            answer: match found[p.0 as usize] {
                Some(i) => realized(&checked, i),
                None => Answer::Unrealized(evidence(&checked, p)),
            },
        })
        .collect();
    Ok(Realizability { points, checked })
}

fn realized(checked: &[Candidate], i: usize) -> Answer {
    let by = checked[i];
    let point = by.verdicts.excluded();
    let alternatives = checked[i + 1..]
        .iter()
        .filter(|c| c.stack.len() == by.stack.len() && c.verdicts.excluded() == point)
        .map(|c| c.stack)
        .collect();
    Answer::Realized { by, alternatives }
}

fn evidence(checked: &[Candidate], p: Point) -> Evidence {
    let always_admitted = p
        .members()
        .into_iter()
        .filter(|&a| checked.iter().all(|c| c.verdicts.of(a).admitted))
        .filter_map(|a| {
            let shortest = checked
                .iter()
                .min_by_key(|c| c.verdicts.of(a).witness_steps)?;
            Some((a, *shortest))
        })
        .collect();
    let off = |c: &Candidate| -> Vec<Anomaly> {
        let got = c.verdicts.excluded();
        Anomaly::LATTICE
            .into_iter()
            .filter(|&a| got.contains(a) != p.contains(a))
            .collect()
    };
    let mut near: Vec<(Candidate, Vec<Anomaly>)> = checked.iter().map(|c| (*c, off(c))).collect();
    // A stable sort keeps search order (smallest first) among equally close candidates.
    near.sort_by_key(|(_, off)| off.len());
    near.truncate(CLOSEST_MAX);
    Evidence {
        always_admitted,
        closest: near,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::runtime::{Mechanism, RuntimeKind};

    fn stack(s: &str) -> Stack {
        s.parse().unwrap()
    }

    #[test]
    fn candidates_are_valid_and_smallest_first() {
        let all = candidates(Stack::all());
        assert_eq!(all[0], Stack::VANILLA);
        assert!(all.iter().all(|s| s.validate().is_ok()));
        assert!(all.windows(2).all(|w| w[0].len() <= w[1].len()));
        // 256 subsets less those with both of an excluded pair or cascade without
        // validate-preds.
        let invalid = Stack::subsets(Stack::all())
            .into_iter()
            .filter(|s| s.validate().is_err())
            .count();
        assert_eq!(all.len() + invalid, 256);
        // Named runtimes come first among stacks of their size.
        let ones: Vec<String> = all
            .iter()
            .filter(|s| s.len() == 1)
            .map(|s| s.to_string())
            .collect();
        assert_eq!(ones[..3], ["pessimistic", "si", "ssi"]);
    }

    /// Without pin and validate-tool no stack prevents A2: every point with A2 is
    /// unrealized, and the evidence is A2's witness, which every candidate admits; the
    /// points without A2 are realized as with every mechanism.
    #[test]
    fn a_missing_mechanism_leaves_points_unrealized_with_evidence() {
        let mechanisms = Stack::of(&[
            Mechanism::Lock,
            Mechanism::Validate,
            Mechanism::ValidatePreds,
            Mechanism::Cascade,
        ]);
        let cfg = RealizeConfig {
            mechanisms,
            ..RealizeConfig::default()
        };
        let r = realize(&cfg).unwrap();
        assert_eq!(
            r.checked.len(),
            candidates(mechanisms).len(),
            "all were checked"
        );
        for point in r.points.iter() {
            let has_a2 = point.excludes.contains(Anomaly::A2);
            let has_a6 = point.excludes.contains(Anomaly::A6);
            match &point.answer {
                Answer::Realized { by, .. } => {
                    assert!(!has_a2 && !has_a6, "{}", point.excludes.label());
                    assert_eq!(by.verdicts.excluded(), point.excludes);
                }
                Answer::Unrealized(e) => {
                    assert!(has_a2 || has_a6, "{}", point.excludes.label());
                    let always: Vec<Anomaly> = e.always_admitted.iter().map(|x| x.0).collect();
                    let want: Vec<Anomaly> = point
                        .excludes
                        .members()
                        .into_iter()
                        .filter(|&a| a == Anomaly::A2 || a == Anomaly::A6)
                        .collect();
                    assert_eq!(always, want, "{}", point.excludes.label());
                    for (a, c) in &e.always_admitted {
                        let v = c.verdicts.of(*a);
                        assert!(v.admitted);
                        assert_eq!(v.witness_steps, Some(if *a == Anomaly::A2 { 3 } else { 2 }));
                    }
                    let (best, off) = &e.closest[0];
                    assert_eq!(off.len(), want.len(), "{}", point.excludes.label());
                    assert!(best.verdicts.excluded().subset_of(point.excludes));
                }
            }
        }
        let a1 = Point::of(&[Anomaly::A1]);
        let Answer::Realized { by, alternatives } = r.get(a1) else {
            panic!("A1 alone is realized");
        };
        assert_eq!(by.stack, RuntimeKind::Pessimistic.stack());
        assert_eq!(alternatives, &[RuntimeKind::Ssi.stack()]);
        assert_eq!(by.verdicts.of(Anomaly::A1).states, 746);
        assert_eq!(by.verdicts.of(Anomaly::A3).witness_steps, Some(5));
        let a3 = Point::of(&[Anomaly::A3]);
        let Answer::Realized { by, .. } = r.get(a3) else {
            panic!("A3 alone is realized");
        };
        assert_eq!(by.stack, stack("validate-preds+cascade"));
    }
}
