//! Timed exploration (`agentsim explore --timed`): the walker's paths, restricted to the
//! orders the scenario's latency bounds allow. The zone that decides which events can come
//! next lives in the engine (`crate::engine::zone`); here the walker is wrapped so that the
//! engine asks for it, and the verdict text says what it holds under.
//!
//! Partial-order reduction is not sound here: a local step moves time, and moving time can
//! disable another agent's step (its event can no longer come first), so a persistent set
//! of one local step would miss orders. A timed search is the plain enumeration.
//!
//! What a timed verdict does not prove: anything outside the bounds (a lognormal's tails
//! past the stated quantiles), and nothing about probability: an order possible only in a
//! corner of the bounds counts as reachable.

use crate::bounds::Quantiles;
use crate::scheduler::{Chooser, Scheduler};

/// A scheduler that asks the engine for timed exploration and otherwise is `inner`.
pub(super) struct Timed<'w> {
    inner: &'w mut dyn Scheduler,
    q: Quantiles,
}

impl<'w> Timed<'w> {
    pub(super) fn new(inner: &'w mut dyn Scheduler, q: Quantiles) -> Self {
        Timed { inner, q }
    }
}

impl Scheduler for Timed<'_> {
    fn start_trial(&mut self, trial_seed: u64, agents: usize, steps_hint: usize) {
        self.inner.start_trial(trial_seed, agents, steps_hint);
    }

    fn choose(&mut self, event: u64, enabled: &[usize]) -> usize {
        self.inner.choose(event, enabled)
    }

    fn chooser(&mut self) -> Option<&mut dyn Chooser> {
        self.inner.chooser()
    }

    fn timed(&self) -> Option<Quantiles> {
        Some(self.q)
    }
}

/// "with these latency bounds (lognormal between the 0.1% and 99.9% quantiles)".
pub fn holds_under(q: Quantiles) -> String {
    format!(
        "with these latency bounds (lognormal between {})",
        q.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::below;
    use crate::explore::{explore, Exploration, ExploreConfig, Reach, Search};
    use crate::metrics::reported;
    use crate::Scenario;
    use agentsim_models::Anomaly;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    fn load(dir: &str, name: &str) -> Scenario {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(dir)
            .join(name);
        Scenario::load(&p).expect("shipped scenario")
    }

    fn timed(sc: &Scenario, q: Quantiles) -> Exploration {
        let cfg = ExploreConfig {
            search: Search::Timed(q),
            ..ExploreConfig::new(sc.runtime)
        };
        explore(sc, &cfg).unwrap()
    }

    const EXAMPLES: [(&str, &str, Anomaly); 3] = [
        ("stale-review", "stale-review-overlap", Anomaly::A1),
        ("retired-tool", "retired-tool-overlap", Anomaly::A2),
        ("effect-order", "effect-order-overlap", Anomaly::A6),
    ];

    /// With their fixed latencies the worked examples' anomalies are unreachable timed (the
    /// latencies decide the order, as sampling says) though reachable in abstract time; with
    /// latencies that overlap they are reachable, with a witness that replays (timed) to a
    /// history that shows them.
    #[test]
    fn fixed_latencies_forbid_the_worked_examples_overlapping_ones_allow_them() {
        let q = Quantiles::default();
        for (file, overlap, a) in EXAMPLES {
            let sc = load("explore", &format!("{file}.toml"));
            let ex = timed(&sc, q);
            assert!(ex.complete, "{file}");
            assert_eq!(ex.finding(a).unwrap().reach, Reach::Unreachable, "{file}");
            assert_eq!(
                ex.bound_text(),
                "over every interleaving with these latency bounds (lognormal between \
                 the 0.1% and 99.9% quantiles)"
            );
            let untimed = explore(&sc, &ExploreConfig::new(sc.runtime)).unwrap();
            assert_eq!(
                untimed.finding(a).unwrap().reach,
                Reach::Reachable,
                "{file}"
            );

            let sc = load("timed", &format!("{overlap}.toml"));
            let ex = timed(&sc, q);
            assert!(ex.complete, "{overlap}");
            let f = ex.finding(a).unwrap();
            assert_eq!(f.reach, Reach::Reachable, "{overlap}");
            let w = f.witness.as_ref().unwrap();
            let text = w.line.to_string();
            assert!(text.ends_with(":timed=0.001,0.999"), "{text}");
            crate::explore::tests::replays_to(&sc, w, a, overlap);
        }
    }

    /// A lognormal generation (median 3 s) against an author who starts at 5 s: between the
    /// 0.1% and 99.9% quantiles it can run past 5 s (A1 reachable); kept below its 60%
    /// quantile (3.4 s) it cannot.
    #[test]
    fn the_quantiles_decide_a_lognormal() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/explore/stale-review.toml"),
        )
        .unwrap();
        let text = text.replace(
            "latency_ms = { fixed = 3000 }",
            "latency_ms = { lognormal = { median = 3000, sigma = 0.5 } }",
        );
        let sc = Scenario::parse(&PathBuf::from("stale-review-lognormal.toml"), &text).unwrap();
        let wide = timed(&sc, Quantiles::default());
        assert_eq!(wide.finding(Anomaly::A1).unwrap().reach, Reach::Reachable);
        let narrow = timed(&sc, Quantiles::parse("0.001,0.6").unwrap());
        assert_eq!(
            narrow.finding(Anomaly::A1).unwrap().reach,
            Reach::Unreachable
        );
        assert!(narrow.bound_text().contains("the 0.1% and 60% quantiles"));
    }

    /// A latency as scenario text: fixed, uniform or (when `lognormal`) log-normal.
    fn latency(rng: &mut ChaCha8Rng, lognormal: bool) -> String {
        let base = 10 * (1 + below(rng, 10));
        match below(rng, if lognormal { 3 } else { 2 }) {
            0 => format!("{{ fixed = {base} }}"),
            1 => format!("{{ uniform = [{base}, {}] }}", base + 10 * below(rng, 6)),
            _ => format!("{{ lognormal = {{ median = {base}, sigma = 0.3 }} }}"),
        }
    }

    /// A small scenario with timing: two agents with one or two operations over two cells,
    /// random start times, generation and effect latencies (fixed, uniform, maybe
    /// lognormal), a `wait` that may fire, retries with a backoff, maybe an admin, maybe a
    /// scheduling window.
    fn family(seed: u64, lognormal: bool) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cells = |rng: &mut ChaCha8Rng| match below(rng, 3) {
            0 => "[\"x\"]",
            1 => "[\"y\"]",
            _ => "[\"x\", \"y\"]",
        };
        let mut s = format!(
            "name = \"timed-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
             cells = [\"x\", \"y\"]\ntools = [\"t\"]\n[schedule]\nwindow_ms = {}\n\
             [retry]\nmax = {}\nbackoff_ms = {}\n",
            [0, 0, 15][below(&mut rng, 3)],
            below(&mut rng, 2),
            latency(&mut rng, lognormal),
        );
        for agent in 0..2 {
            let start = latency(&mut rng, lognormal);
            s.push_str(&format!(
                "[[agents]]\nname = \"a{agent}\"\nstart_ms = {start}\nscript = [\n"
            ));
            for _ in 0..1 + usize::from(below(&mut rng, 4) == 0) {
                let tool = if below(&mut rng, 2) == 0 {
                    ", tool = \"t\""
                } else {
                    ""
                };
                s.push_str(&format!(
                    "  {{ do = \"read\", cells = {}{tool} }},\n",
                    cells(&mut rng)
                ));
                if below(&mut rng, 4) != 0 {
                    let l = latency(&mut rng, lognormal);
                    s.push_str(&format!("  {{ do = \"generate\", latency_ms = {l} }},\n"));
                }
                let (w, e) = (cells(&mut rng), latency(&mut rng, lognormal));
                s.push_str(&format!(
                    "  {{ do = \"write\", cells = {w}, effect_ms = {e} }},\n"
                ));
            }
            if below(&mut rng, 3) == 0 {
                let l = latency(&mut rng, lognormal);
                s.push_str(&format!(
                    "  {{ do = \"wait\", latency_ms = {l}, prob = 0.5 }},\n  \
                     {{ do = \"read\", cells = [\"x\"] }},\n  {{ do = \"write\", cells = [\"y\"] }},\n"
                ));
            }
            s.push_str("]\n");
        }
        if below(&mut rng, 2) == 0 {
            let start = latency(&mut rng, lognormal);
            s.push_str(&format!(
                "[[agents]]\nname = \"admin\"\nstart_ms = {start}\nscript = [\n  \
                 {{ do = \"registry\", change = \"remove\", tool = \"t\" }},\n]\n"
            ));
        }
        Scenario::parse(&PathBuf::from(format!("timed-{seed}.toml")), &s)
            .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
    }

    /// The untimed plain search's budget: members whose tree is larger are skipped (and
    /// counted), so the test stays within seconds.
    const UNTIMED_MAX: u64 = 20_000;

    fn sets(e: &Exploration) -> BTreeSet<Vec<Anomaly>> {
        e.sets.keys().cloned().collect()
    }

    /// On a generated family, timed exploration sits between sampling and abstract time:
    /// every anomaly set that 300 sampled trials show (latencies within their bounds: fixed
    /// and uniform) is among the timed search's, and every timed set is among the untimed
    /// plain search's; timing prunes on some members and not others; with lognormal
    /// latencies the timed sets stay among the untimed ones.
    #[test]
    fn timed_sets_lie_between_sampled_and_untimed() {
        let q = Quantiles::default();
        let (mut pruned, mut equal, mut skipped) = (0, 0, 0);
        for seed in 0..40 {
            let lognormal = seed % 4 == 3;
            let sc = family(seed, lognormal);
            let t = timed(&sc, q);
            let u = explore(
                &sc,
                &ExploreConfig {
                    search: Search::Plain,
                    max_schedules: Some(UNTIMED_MAX),
                    ..ExploreConfig::new(sc.runtime)
                },
            )
            .unwrap();
            let what = format!("member {seed}");
            assert!(t.complete, "{what}");
            if !u.complete {
                skipped += 1;
                continue;
            }
            assert!(t.schedules <= u.schedules, "{what}");
            assert!(
                sets(&t).is_subset(&sets(&u)),
                "{what}: {:?} ⊄ {:?}",
                sets(&t),
                sets(&u)
            );
            if sets(&t) == sets(&u) {
                equal += 1;
            } else {
                pruned += 1;
            }
            if lognormal {
                continue;
            }
            let mut cfg = crate::RunConfig::new(&sc);
            cfg.trials = 300;
            let run = crate::run(&cfg).unwrap();
            for tr in &run.trials {
                let set: Vec<Anomaly> = reported().filter(|&a| tr.metrics.has(a)).collect();
                assert!(sets(&t).contains(&set), "{what}: sampled {set:?} not timed");
            }
        }
        assert!(
            skipped <= 10,
            "most members finish untimed: {skipped} skipped"
        );
        assert!(pruned >= 5, "timing prunes some members: {pruned}");
        assert!(equal >= 5, "and leaves others alone: {equal}");
    }
}
