//! The shard format, ranges and merge: round trips, partitions, refusals.

use super::*;
use crate::metrics::TrialMetrics;
use crate::runner::{run, RunConfig, RunResult};
use crate::scenario::Scenario;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const SCENARIO: &str = include_str!("../../../../scenarios/examples/edit-review.toml");

fn scenario() -> Scenario {
    Scenario::parse(Path::new("scenarios/examples/edit-review.toml"), SCENARIO).expect("parses")
}

fn header() -> Header {
    Header {
        command: "simulate".into(),
        args: serde_json::json!({"n": 1}),
        scenario_digest: "00".into(),
        seed: 4,
        build: Build {
            version: "0".into(),
            digest: "1".into(),
        },
    }
}

fn partial(sc: &Scenario, slice: Slice) -> Partial {
    let cfg = RunConfig {
        trials: 10,
        seed: 4,
        ..RunConfig::new(sc)
    };
    let mut rec = Recorder::new(slice);
    rec.run(&cfg).expect("runs");
    rec.into_partial(header())
}

#[test]
fn shards_and_ranges_parse_and_refuse_nonsense() {
    assert_eq!(
        "2/3".parse::<Shard>().ok(),
        Some(Shard { index: 2, count: 3 })
    );
    for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
        assert!(bad.parse::<Shard>().is_err(), "{bad}");
    }
    assert_eq!(
        "3..7".parse::<TrialRange>().ok(),
        Some(TrialRange { lo: 3, hi: 7 })
    );
    for bad in ["7..3", "3-7", "..7", "x..1"] {
        assert!(bad.parse::<TrialRange>().is_err(), "{bad}");
    }
    let too_far = Slice::Range(TrialRange { lo: 0, hi: 11 }).range(10);
    assert!(matches!(too_far, Err(ShardError::RangeTooLarge { .. })));
}

proptest! {
    #[test]
    fn shards_partition_the_trials(trials in 0u64..5000, count in 1u64..200) {
        let mut next = 0;
        for index in 1..=count {
            let r = Shard { index, count }.range(trials);
            prop_assert_eq!(r.lo, next);
            prop_assert!(r.len() <= trials / count + 1);
            prop_assert!(r.len() >= trials / count);
            next = r.hi;
        }
        prop_assert_eq!(next, trials);
    }
}

#[test]
fn shards_run_the_trials_the_whole_run_runs_and_merge_to_its_aggregate() {
    let sc = scenario();
    let cfg = RunConfig {
        trials: 10,
        seed: 4,
        threads: 2,
        ..RunConfig::new(&sc)
    };
    let whole = run(&cfg).expect("runs");
    let parts: Vec<(PathBuf, Partial)> = (1..=3)
        .map(|i| {
            let p = partial(&sc, Slice::Shard(Shard { index: i, count: 3 }));
            let text = p.to_json();
            let file = PathBuf::from(format!("p{i}.json"));
            let back = Partial::parse(&file, &text).expect("reads back");
            assert_eq!(back, p);
            (file, back)
        })
        .rev()
        .collect();
    let merged = merge(parts).expect("merges");
    assert_eq!(merged.header, header());
    let mut replay = Replay::new(merged);
    let again = replay.run(&cfg).expect("the same run");
    replay.finish().expect("nothing left over");
    assert_eq!(again.aggregate, whole.aggregate);
    let metrics = |r: &RunResult| -> Vec<TrialMetrics> {
        r.trials.iter().map(|t| t.metrics.clone()).collect()
    };
    assert_eq!(metrics(&again), metrics(&whole));
}

#[test]
fn merge_refuses_what_does_not_belong_or_cover() {
    let sc = scenario();
    let shard = |i| partial(&sc, Slice::Shard(Shard { index: i, count: 2 }));
    let named = |n: &str, p: Partial| (PathBuf::from(n), p);
    let overlap = merge(vec![
        named("a", shard(1)),
        named("b", shard(2)),
        named("c", shard(1)),
    ]);
    assert!(
        matches!(overlap, Err(ShardError::Overlap { .. })),
        "{overlap:?}"
    );
    let gap = merge(vec![named("a", shard(1))]);
    let msg = gap.expect_err("trials 5..10 missing").to_string();
    assert!(
        msg.contains("5..10 of 10") && msg.contains("a 0..5"),
        "{msg}"
    );
    let mut other = shard(2);
    other.seed = 5;
    let msg = merge(vec![named("a", shard(1)), named("b", other)])
        .expect_err("seeds differ")
        .to_string();
    assert!(msg.contains("`seed`") && msg.contains("a and b"), "{msg}");
    assert!(matches!(merge(Vec::new()), Err(ShardError::Empty)));
    let mut short = shard(1);
    short.runs[0].trials.pop();
    let msg = Partial::parse(Path::new("s"), &short.to_json())
        .expect_err("one trial short")
        .to_string();
    assert!(msg.starts_with("s: run 0 holds 4 trials"), "{msg}");
}

#[test]
fn replay_refuses_a_run_the_partials_do_not_hold() {
    let sc = scenario();
    let merged = merge(vec![(PathBuf::from("a"), partial(&sc, Slice::All))]).expect("one");
    let mut replay = Replay::new(merged);
    let cfg = RunConfig {
        trials: 10,
        seed: 5,
        ..RunConfig::new(&sc)
    };
    let err = replay.run(&cfg).expect_err("another seed");
    assert!(
        matches!(err, ShardError::OtherRun { index: 0, .. }),
        "{err}"
    );
}

/// A fact run whose trial k's facts are `[k % 3, k * k]`.
fn squares() -> (
    FactKey,
    impl Fn(TrialRange) -> Result<Vec<Vec<u64>>, ShardError>,
) {
    let key = FactKey {
        name: "squares".into(),
        columns: vec!["mod3".into(), "square".into()],
        trials: 11,
    };
    let compute = |r: TrialRange| Ok((r.lo..r.hi).map(|k| vec![k % 3, k * k]).collect());
    (key, compute)
}

#[test]
fn fact_runs_shard_merge_and_replay_to_the_local_rows() {
    let (key, compute) = squares();
    let whole = Local.facts(&key, &compute).expect("local");
    assert_eq!(whole.lo, 0);
    let parts: Vec<(PathBuf, Partial)> = (1..=4)
        .map(|i| {
            let mut rec = Recorder::new(Slice::Shard(Shard { index: i, count: 4 }));
            let mine = rec.facts(&key, &compute).expect("shard");
            let range = Shard { index: i, count: 4 }.range(11);
            assert_eq!(mine.lo, range.lo);
            assert_eq!(mine.rows, whole.rows[range.lo as usize..range.hi as usize]);
            let p = rec.into_partial(header());
            let file = PathBuf::from(format!("f{i}.json"));
            let back = Partial::parse(&file, &p.to_json()).expect("reads back");
            assert_eq!(back, p);
            (file, back)
        })
        .rev()
        .collect();
    let mut replay = Replay::new(merge(parts).expect("merges"));
    let never = |_: TrialRange| -> Result<Vec<Vec<u64>>, ShardError> {
        panic!("a replay computes no trial")
    };
    assert_eq!(replay.facts(&key, &never).expect("replays"), whole);
    replay.finish().expect("nothing left over");
}

#[test]
fn fact_runs_refuse_another_key_and_a_row_of_the_wrong_width() {
    let (key, compute) = squares();
    let mut rec = Recorder::new(Slice::All);
    rec.facts(&key, &compute).expect("records");
    let p = rec.into_partial(header());
    let mut replay = Replay::new(merge(vec![(PathBuf::from("a"), p.clone())]).expect("one"));
    let other = FactKey {
        name: "cubes".into(),
        ..key.clone()
    };
    let err = replay.facts(&other, &compute).expect_err("another run");
    assert!(
        matches!(err, ShardError::OtherRun { index: 0, .. }),
        "{err}"
    );
    let mut wide = p;
    wide.facts[0].rows[4].push(1);
    let msg = Partial::parse(Path::new("w"), &wide.to_json())
        .expect_err("three facts")
        .to_string();
    assert!(
        msg.starts_with("w: fact run 0: trial 4 has 3 facts"),
        "{msg}"
    );
}
