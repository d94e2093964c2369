//! The vacuity analysis against the explorer, both ways, on a generated family.

use super::*;
use crate::dist::below;
use crate::explore::tests::family;
use crate::explore::{explore, ExploreConfig, Reach};
use crate::metrics::reported;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// A member of a family that also has what the explorer's family lacks: agents kept to one
/// cell each (so no cell is shared), copies (`count = 2`), `repeat = 2`, writes of no cell,
/// a registry change that only adds a tool, and a retraction that never fires (`prob = 0`).
fn member(seed: u64) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = format!(
        "name = \"vac-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
         cells = [\"x\", \"y\"]\ntools = [\"t\"]\n"
    );
    let alphabets = [&["x"][..], &["y"][..], &["x", "y"][..]];
    for agent in 0..2 {
        let cells = alphabets[below(&mut rng, 3)];
        let pick = |rng: &mut ChaCha8Rng, empty: bool| -> String {
            let mut chosen: Vec<String> = cells
                .iter()
                .filter(|_| below(rng, 3) != 0)
                .map(|c| format!("\"{c}\""))
                .collect();
            if chosen.is_empty() && !empty {
                chosen.push(format!("\"{}\"", cells[0]));
            }
            format!("[{}]", chosen.join(", "))
        };
        // Copies or a repeat on the second agent only, with one operation, to keep the tree
        // small.
        let (more, ops) = match (agent, below(&mut rng, 4)) {
            (1, 0) => ("count = 2\n", 1),
            (1, 1) => ("repeat = 2\n", 1),
            _ => ("", 1 + below(&mut rng, 2)),
        };
        s.push_str(&format!(
            "[[agents]]\nname = \"a{agent}\"\n{more}script = [\n"
        ));
        for _ in 0..ops {
            let tool = if below(&mut rng, 2) == 0 {
                ", tool = \"t\""
            } else {
                ""
            };
            let read = pick(&mut rng, false);
            s.push_str(&format!("  {{ do = \"read\", cells = {read}{tool} }},\n"));
            let incl = if below(&mut rng, 4) == 0 {
                ", include_read = true"
            } else {
                ""
            };
            let write = pick(&mut rng, true);
            s.push_str(&format!("  {{ do = \"write\", cells = {write}{incl} }},\n"));
        }
        s.push_str("]\n");
    }
    match below(&mut rng, 4) {
        0 => {
            let change = ["remove", "add"][below(&mut rng, 2)];
            s.push_str(&format!(
                "[[agents]]\nname = \"admin\"\nscript = [\n  {{ do = \"registry\", \
                 change = \"{change}\", tool = \"t\", prob = 0.5 }},\n]\n"
            ));
        }
        1 => {
            let prob = ["0.5", "0"][below(&mut rng, 2)];
            s.push_str(&format!(
                "[[agents]]\nname = \"supervisor\"\nscript = [\n  {{ do = \"retract\", \
                 agent = \"a0\", prob = {prob} }},\n]\n"
            ));
        }
        _ => {}
    }
    Scenario::parse(&PathBuf::from(format!("vac-{seed}.toml")), &s)
        .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
}

/// On a generated family (two agents over two cells and a tool, reads that may `pick`,
/// writes of one or two effects, maybe `include_read`, a branch, maybe an admin who removes
/// the tool or a supervisor who retracts), with provenance on: an anomaly is not vacuous
/// under vanilla iff some explored path shows it. With provenance off, A3 is vacuous.
#[test]
fn vacuity_matches_exploration() {
    let mut seen = std::collections::BTreeMap::<(Anomaly, bool), u32>::new();
    let members = (0..32).map(|s| family(s, 2)).chain((0..48).map(member));
    let mut cfg = ExploreConfig::new(Stack::VANILLA);
    cfg.max_schedules = Some(20_000);
    let mut skipped = 0;
    for (seed, mut sc) in members.enumerate() {
        sc.provenance = true;
        let ex = explore(&sc, &cfg).unwrap();
        if !ex.complete {
            // Only a complete search tells "no path shows it".
            skipped += 1;
            continue;
        }
        for a in reported() {
            let possible = vacuous(&sc, Stack::VANILLA, a).is_none();
            let reached = ex.sets.keys().any(|k| k.contains(&a));
            assert_eq!(
                possible,
                reached,
                "family {seed}, {a}: vacuous says {:?}",
                vacuous(&sc, Stack::VANILLA, a)
            );
            let f = ex.finding(a).unwrap();
            assert_eq!(f.reach == Reach::Reachable, reached, "family {seed}, {a}");
            assert_eq!(f.vacuous(), !reached, "family {seed}, {a}");
            *seen.entry((a, possible)).or_default() += 1;
        }
        sc.provenance = false;
        if let Some(why) = vacuous(&sc, Stack::VANILLA, Anomaly::A3) {
            assert!(why.starts_with("A3 needs provenance"), "{why}");
        } else {
            panic!("member {seed}: A3 without provenance is not vacuous");
        }
    }
    assert!(skipped <= 8, "{skipped} members did not explore to the end");
    // The family tells both ways for every anomaly.
    for a in reported() {
        for possible in [true, false] {
            assert!(
                seen.get(&(a, possible)).is_some_and(|&n| n > 0),
                "the family has a member where {a} is {}vacuous",
                if possible { "not " } else { "" }
            );
        }
    }
}

/// A runtime that reads provenance supplies it; one that may abort counts as a retraction.
#[test]
fn a_provenance_runtime_supplies_provenance() {
    let sc = (0..48)
        .map(|s| family(s, 1))
        .find(|sc| {
            sc.agents.iter().any(|a| a.name == "supervisor")
                && vacuous(sc, Stack::VANILLA, Anomaly::A3Residue).is_none()
        })
        .expect("a member with a retraction that is read");
    assert!(!sc.provenance);
    let causal = Stack::parse("causal").unwrap();
    assert!(vacuous(&sc, Stack::VANILLA, Anomaly::A3).is_some());
    assert_eq!(vacuous(&sc, causal, Anomaly::A3), None);
}
