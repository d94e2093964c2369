//! `[[expect]]`: what a scenario file claims must or must not happen, as `agentsim test` checks
//! it. Each entry names an anomaly, optionally a runtime (a stack, or a read discipline in a
//! split-view file), exactly one verdict (`never = true`, `reachable = true` or
//! `rate = [lo, hi]`) and how it is decided (`by = "simulate"`, the default, or `"explore"`).
//! Or, in place of the anomaly, a liveness property (`property = "deadlock"`, `"starvation"`
//! or `"termination"`, with `never` or `reachable` and an optional `fairness`), decided by
//! `explore --liveness` on the scenario's state graph.
//!
//! Parsing is strict, like the rest of the file: every error names the file, line, column and
//! key. Which anomalies an engine can decide is checked here too (A4 needs the replicated store
//! of a split-view file; `L1_struct` is a property of a history, which `agentsim detect`
//! decides), so a claim that no engine could test never loads. Loading a claim says nothing
//! about whether it holds.

use crate::source::{ScenarioError, Source};
pub use agentsim_models::fair::Fairness;
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use serde::Deserialize;
use std::fmt;
use toml::Spanned;

/// One `[[expect]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub anomaly: Option<Spanned<String>>,
    /// A liveness property in place of an anomaly.
    #[serde(default)]
    pub property: Option<Spanned<String>>,
    /// With `property`: `weak` (the default), `strong` or `none`.
    #[serde(default)]
    pub fairness: Option<Spanned<String>>,
    #[serde(default)]
    pub runtime: Option<Spanned<String>>,
    #[serde(default)]
    pub never: Option<Spanned<bool>>,
    #[serde(default)]
    pub reachable: Option<Spanned<bool>>,
    #[serde(default)]
    pub rate: Option<Spanned<Vec<Spanned<f64>>>>,
    #[serde(default)]
    pub by: Option<Spanned<String>>,
    #[serde(default)]
    pub trials: Option<Spanned<u64>>,
    #[serde(default)]
    pub seed: Option<u64>,
}

/// The `[[expect]]` entries of any file, its other keys left to that file's own parser.
#[derive(Debug, Deserialize)]
struct ExpectOnly {
    #[serde(default)]
    expect: Vec<Spanned<RawExpect>>,
}

/// The engine a file runs under, which decides the anomalies and runtimes it can claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// A scenario file: seeded trials of the simulator (single store).
    Simulate,
    /// A split-view file: the replicated store of SPEC §6 under each read discipline.
    SplitView,
}

/// What an expectation is about: a catalogue anomaly, the structural snapshot condition, or
/// a liveness property under a fairness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    Anomaly(Anomaly),
    L1Struct,
    Live(Live, Fairness),
}

/// A liveness property of `explore --liveness`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live {
    Deadlock,
    Starvation,
    Termination,
}

impl Live {
    pub const NAMES: [&'static str; 3] = ["deadlock", "starvation", "termination"];

    pub fn parse(s: &str) -> Option<Live> {
        match s {
            "deadlock" => Some(Live::Deadlock),
            "starvation" => Some(Live::Starvation),
            "termination" => Some(Live::Termination),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Live::Deadlock => "deadlock",
            Live::Starvation => "starvation",
            Live::Termination => "termination",
        }
    }
}

impl Property {
    /// Every name a file may write, in the order errors list them.
    pub const NAMES: [&'static str; 7] = ["A1", "A2", "A3", "A3_residue", "A4", "A6", "L1_struct"];

    /// Parses a name (ASCII case ignored).
    pub fn parse(s: &str) -> Option<Property> {
        if s.eq_ignore_ascii_case("L1_struct") {
            return Some(Property::L1Struct);
        }
        Anomaly::parse(s).map(Property::Anomaly)
    }

    /// The name outputs print.
    pub fn name(self) -> &'static str {
        match self {
            Property::Anomaly(a) => a.name(),
            Property::L1Struct => "L1_struct",
            Property::Live(l, _) => l.name(),
        }
    }

    /// Why `engine` cannot decide this property, if it cannot.
    fn undecidable_by(self, engine: Engine) -> Option<&'static str> {
        use Anomaly::{A3Residue, A1, A2, A3, A4, A6};
        match (engine, self) {
            (Engine::Simulate, Property::Anomaly(A1 | A2 | A3 | A3Residue | A6)) => None,
            (Engine::Simulate, Property::Anomaly(A4)) => Some(
                "A4 needs a replicated store; the simulator's single store records no replica \
                 metadata (state it in a split-view file)",
            ),
            (Engine::Simulate, Property::L1Struct) => Some(
                "L1_struct is decided on a history by `agentsim detect`; the simulator does \
                 not record it per trial",
            ),
            (Engine::Simulate, Property::Live(..)) => None,
            (Engine::SplitView, Property::Live(..)) => {
                Some("liveness is decided on a scenario's state graph; a split-view file has none")
            }
            (Engine::SplitView, Property::Anomaly(A4)) => None,
            (Engine::SplitView, _) => {
                Some("a split-view file runs the replicated store, which decides A4 only")
            }
        }
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Property::Live(l, fair) => write!(f, "{} ({} fairness)", l.name(), fair.long_name()),
            p => f.write_str(p.name()),
        }
    }
}

/// The runtime an expectation runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectRuntime {
    /// A runtime or stack of the simulator.
    Stack(Stack),
    /// A read discipline of the split-view store.
    Discipline(ReadDiscipline),
}

impl ExpectRuntime {
    /// The name outputs print.
    pub fn name(self) -> String {
        match self {
            ExpectRuntime::Stack(s) => s.name(),
            ExpectRuntime::Discipline(d) => d.name().to_owned(),
        }
    }
}

/// The verdict claimed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Claim {
    /// No trial (or no interleaving, by exploration) exhibits the anomaly.
    Never,
    /// Some trial (or some interleaving) exhibits it.
    Reachable,
    /// The observed rate k/N lies in `[lo, hi]` (sampling only).
    Rate { lo: f64, hi: f64 },
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::Never => f.write_str("never"),
            Claim::Reachable => f.write_str("reachable"),
            Claim::Rate { lo, hi } => write!(f, "rate in [{lo}, {hi}]"),
        }
    }
}

/// How the claim is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    /// Seeded trials (the scenario's, or the expectation's `trials` and `seed`).
    Simulate,
    /// Every interleaving (`agentsim explore`).
    Explore,
}

impl By {
    /// The name a file writes.
    pub fn name(self) -> &'static str {
        match self {
            By::Simulate => "simulate",
            By::Explore => "explore",
        }
    }
}

/// One resolved `[[expect]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub name: Option<String>,
    /// Where the entry is written (1-based line and column of its `[[expect]]` header).
    pub line: usize,
    pub col: usize,
    pub property: Property,
    /// `None`: the scenario's own runtime.
    pub runtime: Option<ExpectRuntime>,
    pub claim: Claim,
    pub by: By,
    pub trials: Option<u64>,
    pub seed: Option<u64>,
}

type Res<T> = Result<T, ScenarioError>;

/// Parses the `[[expect]]` entries of `text`, whatever else the file holds (its own parser
/// checks the rest), for a file that runs under `engine`.
pub fn parse(src: Source<'_>, engine: Engine) -> Res<Vec<Expectation>> {
    let raw: ExpectOnly = toml::from_str(src.text).map_err(|e| src.from_toml(&e))?;
    resolve(src, &raw.expect, engine)
}

/// Resolves entries already deserialized (a scenario's [`super::raw::RawScenario`]).
pub fn resolve(
    src: Source<'_>,
    raw: &[Spanned<RawExpect>],
    engine: Engine,
) -> Res<Vec<Expectation>> {
    raw.iter().map(|e| one(src, e, engine)).collect()
}

fn one(src: Source<'_>, e: &Spanned<RawExpect>, engine: Engine) -> Res<Expectation> {
    let at = e.span();
    let r = e.get_ref();
    let property = match (&r.anomaly, &r.property) {
        (Some(a), None) => {
            if let Some(f) = &r.fairness {
                return Err(src.error(f.span(), "fairness", "`fairness` goes with `property`"));
            }
            property(src, a, engine)?
        }
        (None, Some(p)) => live_property(src, p, r.fairness.as_ref(), engine)?,
        (Some(_), Some(p)) => {
            return Err(src.error(
                p.span(),
                "property",
                "an entry claims an `anomaly` or a liveness `property`, not both",
            ))
        }
        (None, None) => {
            return Err(src.error(
                at,
                "anomaly",
                "no subject: write `anomaly = \"A1\"` (or another anomaly) or `property = \
                 \"starvation\"` (or deadlock, termination)",
            ))
        }
    };
    let runtime = runtime(src, r.runtime.as_ref(), engine, at.clone())?;
    let claim = claim(src, r, at.clone())?;
    let by = match property {
        Property::Live(..) => live_by(src, r, claim)?,
        _ => by(src, r, claim, engine)?,
    };
    if let Some(t) = &r.trials {
        super::limits::within(*t.get_ref(), 1, super::limits::TRIALS_MAX)
            .map_err(|m| src.error(t.span(), "trials", m))?;
    }
    let (line, col) = crate::source::line_col(src.text, at.start);
    Ok(Expectation {
        name: r.name.as_ref().map(|n| n.get_ref().clone()),
        line,
        col,
        property,
        runtime,
        claim,
        by,
        trials: r.trials.as_ref().map(|t| *t.get_ref()),
        seed: r.seed,
    })
}

fn property(src: Source<'_>, a: &Spanned<String>, engine: Engine) -> Res<Property> {
    let p = Property::parse(a.get_ref()).ok_or_else(|| {
        let msg = format!(
            "unknown anomaly `{}`; expected one of {}",
            a.get_ref(),
            Property::NAMES.join(", ")
        );
        src.error(a.span(), "anomaly", msg)
    })?;
    match p.undecidable_by(engine) {
        Some(why) => Err(src.error(a.span(), "anomaly", why)),
        None => Ok(p),
    }
}

fn live_property(
    src: Source<'_>,
    p: &Spanned<String>,
    fairness: Option<&Spanned<String>>,
    engine: Engine,
) -> Res<Property> {
    let live = Live::parse(p.get_ref()).ok_or_else(|| {
        let msg = format!(
            "unknown property `{}`; expected one of {}",
            p.get_ref(),
            Live::NAMES.join(", ")
        );
        src.error(p.span(), "property", msg)
    })?;
    let f = match fairness {
        None => Fairness::Weak,
        Some(f) => match f.get_ref().as_str() {
            "weak" => Fairness::Weak,
            "strong" => Fairness::Strong,
            "none" => Fairness::None,
            other => {
                let msg = format!("`{other}` is not weak, strong or none");
                return Err(src.error(f.span(), "fairness", msg));
            }
        },
    };
    let prop = Property::Live(live, f);
    match prop.undecidable_by(engine) {
        Some(why) => Err(src.error(p.span(), "property", why)),
        None => Ok(prop),
    }
}

fn runtime(
    src: Source<'_>,
    r: Option<&Spanned<String>>,
    engine: Engine,
    at: std::ops::Range<usize>,
) -> Res<Option<ExpectRuntime>> {
    match (engine, r) {
        (Engine::Simulate, None) => Ok(None),
        (Engine::Simulate, Some(r)) => Stack::parse(r.get_ref())
            .map(|s| Some(ExpectRuntime::Stack(s)))
            .map_err(|m| src.error(r.span(), "runtime", m.to_string())),
        (Engine::SplitView, Some(r)) => ReadDiscipline::parse(r.get_ref())
            .map(|d| Some(ExpectRuntime::Discipline(d)))
            .map_err(|m| src.error(r.span(), "runtime", m.to_string())),
        (Engine::SplitView, None) => Err(src.error(
            at,
            "runtime",
            "a split-view file runs every read discipline: name one (any-replica, session, \
             primary-pinned)",
        )),
    }
}

/// Exactly one of `never = true`, `reachable = true`, `rate = [lo, hi]`.
fn claim(src: Source<'_>, r: &RawExpect, at: std::ops::Range<usize>) -> Res<Claim> {
    let mut found: Vec<(std::ops::Range<usize>, &str, Claim)> = Vec::new();
    for (key, flag, claim) in [
        ("never", &r.never, Claim::Never),
        ("reachable", &r.reachable, Claim::Reachable),
    ] {
        if let Some(f) = flag {
            if !*f.get_ref() {
                let msg = format!("`{key} = false` claims nothing; write `{key} = true`");
                return Err(src.error(f.span(), key, msg));
            }
            found.push((f.span(), key, claim));
        }
    }
    if let Some(rate) = &r.rate {
        found.push((rate.span(), "rate", rate_bounds(src, rate)?));
    }
    found.sort_by_key(|(span, ..)| span.start);
    match found.as_slice() {
        [] => Err(src.error(
            at,
            "expect",
            "no verdict: write exactly one of `never = true`, `reachable = true`, \
             `rate = [lo, hi]`",
        )),
        [(_, _, c)] => Ok(*c),
        [(_, first, _), (span, key, _), ..] => Err(src.error(
            span.clone(),
            key,
            format!("a second verdict (after `{first}`): write exactly one of `never`, `reachable`, `rate`"),
        )),
    }
}

fn rate_bounds(src: Source<'_>, rate: &Spanned<Vec<Spanned<f64>>>) -> Res<Claim> {
    let b = rate.get_ref();
    if b.len() != 2 {
        let msg = format!("{} bounds; write two, `rate = [lo, hi]`", b.len());
        return Err(src.error(rate.span(), "rate", msg));
    }
    for x in b {
        if !(0.0..=1.0).contains(x.get_ref()) {
            let msg = format!(
                "{} is not in [0, 1] (a rate is a fraction of trials)",
                x.get_ref()
            );
            return Err(src.error(x.span(), "rate", msg));
        }
    }
    let (lo, hi) = (*b[0].get_ref(), *b[1].get_ref());
    if lo > hi {
        let msg = format!("lo {lo} is above hi {hi}");
        return Err(src.error(rate.span(), "rate", msg));
    }
    Ok(Claim::Rate { lo, hi })
}

/// A liveness claim is `never` or `reachable`, decided on the state graph (`by` absent or
/// `"explore"`).
fn live_by(src: Source<'_>, r: &RawExpect, claim: Claim) -> Res<By> {
    if let (Claim::Rate { .. }, Some(rate)) = (claim, &r.rate) {
        return Err(src.error(
            rate.span(),
            "rate",
            "a liveness property is decided on the state graph: `never` or `reachable`",
        ));
    }
    match &r.by {
        Some(b) if b.get_ref() != "explore" => Err(src.error(
            b.span(),
            "by",
            "a liveness property is decided by exploring the state graph (`by = \"explore\"`, \
             the default for it)",
        )),
        _ => Ok(By::Explore),
    }
}

fn by(src: Source<'_>, r: &RawExpect, claim: Claim, engine: Engine) -> Res<By> {
    let Some(b) = &r.by else {
        return Ok(By::Simulate);
    };
    let by = match b.get_ref().as_str() {
        "simulate" => By::Simulate,
        "explore" => By::Explore,
        other => {
            let msg = format!("`{other}` is not `simulate` or `explore`");
            return Err(src.error(b.span(), "by", msg));
        }
    };
    if by == By::Explore {
        if let Claim::Rate { .. } = claim {
            return Err(src.error(
                b.span(),
                "by",
                "`rate` is a sampled figure: exploration decides `never` or `reachable` over \
                 every interleaving (use `by = \"simulate\"` for a rate)",
            ));
        }
        if engine == Engine::SplitView {
            return Err(src.error(
                b.span(),
                "by",
                "a split-view file is decided by sampling (`by = \"simulate\"`)",
            ));
        }
    }
    Ok(by)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse_sim(body: &str) -> Res<Vec<Expectation>> {
        let text = format!("name = \"x\"\n{body}");
        let src = Source {
            file: Path::new("s.toml"),
            text: &text,
        };
        parse(src, Engine::Simulate)
    }

    fn err(body: &str) -> ScenarioError {
        parse_sim(body).expect_err("a bad expectation")
    }

    #[test]
    fn a_full_entry_resolves() {
        let e = parse_sim(
            "[[expect]]\nname = \"no A1\"\nanomaly = \"A1\"\nruntime = \"ssi\"\nnever = true\n\
             trials = 50\nseed = 3\n\n[[expect]]\nanomaly = \"a6\"\nrate = [0, 0.5]\n",
        )
        .expect("parses");
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].name.as_deref(), Some("no A1"));
        assert_eq!(e[0].line, 2);
        assert_eq!(e[0].property, Property::Anomaly(Anomaly::A1));
        assert_eq!(
            e[0].runtime.map(ExpectRuntime::name).as_deref(),
            Some("ssi")
        );
        assert_eq!(e[0].claim, Claim::Never);
        assert_eq!(e[0].by, By::Simulate);
        assert_eq!((e[0].trials, e[0].seed), (Some(50), Some(3)));
        assert_eq!(e[1].claim, Claim::Rate { lo: 0.0, hi: 0.5 });
        assert_eq!(e[1].runtime, None);
        assert_eq!(e[1].line, 10);
    }

    #[test]
    fn a_liveness_property_resolves_and_is_checked_strictly() {
        let e = parse_sim(
            "[[expect]]\nproperty = \"starvation\"\nruntime = \"ssi\"\nreachable = true\n\n\
             [[expect]]\nproperty = \"termination\"\nfairness = \"strong\"\nnever = true\n",
        )
        .unwrap();
        assert_eq!(
            e[0].property,
            Property::Live(Live::Starvation, Fairness::Weak)
        );
        assert_eq!((e[0].claim, e[0].by), (Claim::Reachable, By::Explore));
        assert_eq!(
            e[1].property,
            Property::Live(Live::Termination, Fairness::Strong)
        );
        assert_eq!(e[1].property.to_string(), "termination (strong fairness)");
        for (body, line, key, says) in [
            (
                "property = \"progress\"\nnever = true",
                3,
                "property",
                "unknown property",
            ),
            (
                "property = \"deadlock\"\nfairness = \"fair\"\nnever = true",
                4,
                "fairness",
                "not weak",
            ),
            (
                "property = \"deadlock\"\nrate = [0.0, 1.0]",
                4,
                "rate",
                "state graph",
            ),
            (
                "property = \"deadlock\"\nnever = true\nby = \"simulate\"",
                5,
                "by",
                "state graph",
            ),
            (
                "anomaly = \"A1\"\nproperty = \"deadlock\"\nnever = true",
                4,
                "property",
                "not both",
            ),
            (
                "anomaly = \"A1\"\nfairness = \"weak\"\nnever = true",
                4,
                "fairness",
                "`property`",
            ),
            ("never = true", 2, "anomaly", "no subject"),
        ] {
            let e = err(&format!("[[expect]]\n{body}\n"));
            assert_eq!((e.line, e.key.as_str()), (line, key), "{body}: {e}");
            assert!(e.to_string().contains(says), "{body}: {e}");
        }
    }

    #[test]
    fn a_missing_verdict_is_an_error_at_the_entry() {
        let e = err("[[expect]]\nanomaly = \"A1\"\n");
        assert_eq!((e.line, e.key.as_str()), (2, "expect"));
        assert!(e.message.contains("no verdict"), "{e}");
    }

    #[test]
    fn a_doubled_verdict_names_the_second_key() {
        let e = err("[[expect]]\nanomaly = \"A1\"\nnever = true\nreachable = true\n");
        assert_eq!((e.line, e.key.as_str()), (5, "reachable"));
        assert!(e.message.contains("second verdict"), "{e}");
        let e = err("[[expect]]\nanomaly = \"A1\"\nrate = [0, 1]\nnever = true\n");
        assert_eq!((e.line, e.key.as_str()), (5, "never"));
    }

    #[test]
    fn never_false_claims_nothing() {
        let e = err("[[expect]]\nanomaly = \"A1\"\nnever = false\n");
        assert_eq!((e.line, e.key.as_str()), (4, "never"));
    }

    #[test]
    fn a_rate_needs_two_bounds_in_the_unit_interval_in_order() {
        let e = err("[[expect]]\nanomaly = \"A1\"\nrate = [0.5]\n");
        assert_eq!((e.line, e.key.as_str()), (4, "rate"));
        assert!(e.message.contains("1 bounds"), "{e}");
        let e = err("[[expect]]\nanomaly = \"A1\"\nrate = [0.5, 1.5]\n");
        assert_eq!((e.line, e.col, e.key.as_str()), (4, 14, "rate"));
        assert!(e.message.contains("not in [0, 1]"), "{e}");
        let e = err("[[expect]]\nanomaly = \"A1\"\nrate = [-0.1, 0.5]\n");
        assert!(e.message.contains("not in [0, 1]"), "{e}");
        let e = err("[[expect]]\nanomaly = \"A1\"\nrate = [0.6, 0.5]\n");
        assert!(e.message.contains("above"), "{e}");
    }

    #[test]
    fn unknown_anomaly_and_runtime_are_named() {
        let e = err("[[expect]]\nanomaly = \"A5\"\nnever = true\n");
        assert_eq!((e.line, e.col, e.key.as_str()), (3, 11, "anomaly"));
        assert!(e.message.contains("L1_struct"), "{e}");
        let e = err("[[expect]]\nanomaly = \"A1\"\nruntime = \"sssi\"\nnever = true\n");
        assert_eq!((e.line, e.key.as_str()), (4, "runtime"));
    }

    #[test]
    fn a_rate_by_exploration_is_refused() {
        let e = err("[[expect]]\nanomaly = \"A1\"\nrate = [0, 1]\nby = \"explore\"\n");
        assert_eq!((e.line, e.key.as_str()), (5, "by"));
        assert!(e.message.contains("every interleaving"), "{e}");
        let ok = parse_sim("[[expect]]\nanomaly = \"A1\"\nnever = true\nby = \"explore\"\n");
        assert_eq!(ok.expect("parses")[0].by, By::Explore);
    }

    #[test]
    fn engines_decide_only_their_anomalies() {
        let e = err("[[expect]]\nanomaly = \"A4\"\nnever = true\n");
        assert!(e.message.contains("replicated store"), "{e}");
        let e = err("[[expect]]\nanomaly = \"L1_struct\"\nnever = true\n");
        assert!(e.message.contains("agentsim detect"), "{e}");
        let text = "[[expect]]\nanomaly = \"A4\"\nruntime = \"pinned\"\nnever = true\n";
        let src = Source {
            file: Path::new("v.toml"),
            text,
        };
        let e = parse(src, Engine::SplitView).expect("parses");
        assert_eq!(
            e[0].runtime,
            Some(ExpectRuntime::Discipline(ReadDiscipline::PrimaryPinned))
        );
        let text = "[[expect]]\nanomaly = \"A4\"\nnever = true\n";
        let src = Source {
            file: Path::new("v.toml"),
            text,
        };
        let e = parse(src, Engine::SplitView).expect_err("needs a discipline");
        assert_eq!(e.key, "runtime");
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_located() {
        let e = err("[[expect]]\nanomaly = \"A1\"\nnevr = true\n");
        assert_eq!(e.line, 4);
        let e = err("[[expect]]\nanomaly = \"A1\"\nnever = true\ntrials = 0\n");
        assert_eq!((e.line, e.key.as_str()), (5, "trials"));
    }
}
