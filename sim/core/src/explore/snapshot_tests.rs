//! Snapshots change nothing but speed: on the generated families, the worked examples and
//! the twins with copies, every search with engine snapshots is the search without them,
//! field for field (schedules, classes, redundant and cut paths, depth, every anomaly set
//! with its shortest witness and replay line, verdicts, final histories), with and without
//! reduction, parking and symmetry, on one and two threads, and shard by shard.

use super::tests::{family, polls};
use super::*;
use agentsim_models::runtime::RuntimeKind;
use std::path::Path;

/// The search under `cfg` with snapshots off and on; asserts that the two are the same and
/// returns it.
fn same(sc: &Scenario, cfg: &ExploreConfig<'_>, what: &str) -> Exploration {
    let mut off = cfg.clone();
    off.snapshots = false;
    off.keep_histories = true;
    let mut on = off.clone();
    on.snapshots = true;
    let (a, b) = (explore(sc, &off).unwrap(), explore(sc, &on).unwrap());
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}");
    assert_eq!(a.redundant, b.redundant, "{what}");
    b
}

/// The configurations compared on each member: reduction on and off, parking off, two
/// threads, at a schedule budget that keeps the plain ones short.
fn configs(rt: Stack) -> Vec<(&'static str, ExploreConfig<'static>)> {
    let base = ExploreConfig::new(rt);
    let plain = ExploreConfig {
        search: Search::Plain,
        max_schedules: Some(2_000),
        ..base.clone()
    };
    let spinning = ExploreConfig {
        park: false,
        ..base.clone()
    };
    let threads = ExploreConfig {
        threads: 2,
        ..base.clone()
    };
    vec![
        ("reduced", base),
        ("plain", plain),
        ("unparked", spinning),
        ("two threads", threads),
    ]
}

#[test]
fn snapshots_change_nothing_on_the_families() {
    let mut paths = 0;
    for seed in 0..8 {
        let sc = if seed % 2 == 0 {
            family(seed, 2)
        } else {
            polls(300 + seed, 1, 2, 1)
        };
        for kind in RuntimeKind::ALL {
            for (name, cfg) in configs(kind.stack()) {
                let what = format!("member {seed} under {}, {name}", kind.name());
                paths += same(&sc, &cfg, &what).schedules;
            }
        }
    }
    // Enough paths that resuming mid-path happened (each member has a few hundred).
    assert!(paths > 10_000, "{paths} paths compared");
}

fn shipped(rel: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(rel);
    Scenario::load(&p).expect("shipped scenario")
}

/// The worked examples and a twin with interchangeable copies (symmetry on and off), and
/// the examples' triage with its polling loops parked, under every named runtime.
#[test]
fn snapshots_change_nothing_on_the_shipped_scenarios() {
    let files = [
        "explore/stale-review.toml",
        "explore/retired-tool.toml",
        "explore/effect-order.toml",
        "twins/a2-width4.toml",
        "examples/triage.toml",
    ];
    for file in files {
        let sc = shipped(file);
        for kind in RuntimeKind::ALL {
            let mut cfg = ExploreConfig::new(kind.stack());
            cfg.max_schedules = Some(5_000);
            same(&sc, &cfg, &format!("{file} under {}", kind.name()));
            cfg.search = Search::Reduced { symmetry: false };
            same(
                &sc,
                &cfg,
                &format!("{file} under {}, no symmetry", kind.name()),
            );
        }
    }
}

/// Shard by shard, the shares with snapshots are the shares without.
#[test]
fn snapshots_change_nothing_in_a_shard() {
    for (file, rt) in [
        ("examples/triage.toml", "ssi"),
        ("twins/a2-width4.toml", "saga"),
    ] {
        let sc = shipped(file);
        let mut off = ExploreConfig::new(Stack::parse(rt).expect("named runtime"));
        off.snapshots = false;
        let on = ExploreConfig {
            snapshots: true,
            ..off.clone()
        };
        for i in 1..=3 {
            let a = explore_shard(&sc, &off, i, 3).unwrap();
            let b = explore_shard(&sc, &on, i, 3).unwrap();
            assert_eq!(a, b, "{file} under {rt}, shard {i}/3");
        }
    }
}

/// Timed exploration keeps re-executing (its zones are not in a snapshot): the same with
/// the switch on or off.
#[test]
fn timed_search_is_untouched() {
    let sc = shipped("explore/stale-review.toml");
    let cfg = ExploreConfig {
        search: Search::Timed(Quantiles::default()),
        max_schedules: Some(2_000),
        ..ExploreConfig::new(sc.runtime)
    };
    same(&sc, &cfg, "timed stale-review");
}
