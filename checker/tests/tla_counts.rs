//! The runtime configs on which the Rust checker and TLC explore the same transition system
//! and the skew configs of the paper model: each test pins the counts
//! that `tla/check.sh` compares with TLC's for the config named in its comment (TLC's figures
//! are pinned in that `.cfg` header and agree).
//! Only the CI-sized configs are here; the ~10⁶-state ones run in `tla/check.sh`.
//!
//! A failure here means the composed model's transition system or state identity changed;
//! if that was on purpose, the TLA+ twin must change with it (see `tla/README.md`). A pass
//! says the counts and verdicts are as pinned at these bounds, nothing beyond them.

use agentsim_checker::{
    explore, Bounds, ExploreOptions, Extensions, PaperModel, PropSet, Property, RuntimeModel, Skew,
    Space,
};
use agentsim_models::runtime::{Discipline, RuntimeKind};

/// The CI-sized runtime configs: 1 cell (or 2), 1 value, MaxOps 2, canonical writes.
fn bounds(agents: u32, cells: u32, tools: u32) -> Bounds {
    Bounds {
        values: 1,
        tools,
        ..Bounds::paper(agents, cells, 2)
    }
}

fn ext(provenance: bool, retraction: bool, tool_versions: bool, all_writers: bool) -> Extensions {
    Extensions {
        canonical_writes: true,
        provenance,
        retraction,
        tool_versions,
        all_writers,
    }
}

/// Explores the whole space, checks that no property in `props` is violated, and returns
/// (distinct, generated, depth).
fn counts(kind: RuntimeKind, b: Bounds, e: Extensions, props: &[Property]) -> (u64, u64, u32) {
    let m = RuntimeModel::of_kind(b, e, kind).unwrap();
    explored(&m, props, kind.name())
}

fn explored<S: Space>(m: &S, props: &[Property], what: &str) -> (u64, u64, u32)
where
    S::State: Send + Sync,
{
    let opts = ExploreOptions {
        threads: 2,
        check: PropSet::of(props),
        max_states: u64::MAX,
    };
    let o = explore(m, &opts);
    assert!(o.complete, "{what}: the space is explored to the end");
    assert!(o.violated.is_empty(), "{what}: {:?}", o.violated);
    (o.distinct, o.generated, o.depth)
}

/// The paper model with free write values, 2 values, 2 tools, and the composed vanilla model
/// on the same bounds: both must give TLC's counts.
fn skew_counts(b: Bounds) -> (u64, u64, u32) {
    let paper = PaperModel::new(b, Extensions::default(), false).unwrap();
    let got = explored(&paper, &[], "paper");
    let vanilla = RuntimeModel::of_kind(b, Extensions::default(), RuntimeKind::Vanilla).unwrap();
    assert_eq!(explored(&vanilla, &[], "vanilla"), got, "{b:?}");
    got
}

/// `Memory_paper_skew_1a2c1ops`: the paper's `AllowSkew` frees both cells' reads although
/// `ExternalCells` is empty (without skew: 10,168 / 10,937 / 5).
#[test]
fn memory_paper_skew_1a2c1ops() {
    let b = Bounds {
        skew: Skew::Every,
        ..Bounds::paper(1, 2, 1)
    };
    assert_eq!(skew_counts(b), (91_480, 98_393, 5));
}

/// `Memory_paper_skew_1a1c2ops`: free reads after a write as before it (without skew: 31,942 /
/// 33,497 / 7).
#[test]
fn memory_paper_skew_1a1c2ops() {
    let b = Bounds {
        skew: Skew::Every,
        ..Bounds::paper(1, 1, 2)
    };
    assert_eq!(skew_counts(b), (284_314, 298_049, 7));
}

/// `Memory_skewexternal_1a2c1ops`: extension 5 frees c1's reads only.
#[test]
fn memory_skewexternal_1a2c1ops() {
    let b = Bounds {
        skew: Skew::External,
        external: 1,
        ..Bounds::paper(1, 2, 1)
    };
    assert_eq!(skew_counts(b), (30_496, 32_801, 5));
}

/// `Pessimistic_L1_2a1c2ops`: a dropped begin is no transition (TLC: 746 / 785 / 6).
#[test]
fn pessimistic_l1_2a1c2ops() {
    let e = ext(false, false, false, false);
    let got = counts(
        RuntimeKind::Pessimistic,
        bounds(2, 1, 0),
        e,
        &[Property::A1],
    );
    assert_eq!(got, (746, 785, 6));
}

/// `SI_allwriters_L1_2a1c2ops`.
#[test]
fn si_allwriters_l1_2a1c2ops() {
    let e = ext(false, false, false, true);
    let got = counts(RuntimeKind::Si, bounds(2, 1, 0), e, &[Property::A1]);
    assert_eq!(got, (709, 753, 6));
}

/// `SSI_L1_2a1c2ops`.
#[test]
fn ssi_l1_2a1c2ops() {
    let e = ext(false, false, false, false);
    let got = counts(RuntimeKind::Ssi, bounds(2, 1, 0), e, &[Property::A1]);
    assert_eq!(got, (981, 1_033, 6));
}

/// `Causal_L2_2a1c2ops`: validation skips retracted versions, memory keeps retracted writes.
#[test]
fn causal_l2_2a1c2ops() {
    let kind = RuntimeKind::Causal { cascade: true };
    let props = [Property::A1, Property::A3];
    let got = counts(kind, bounds(2, 1, 0), ext(true, true, false, false), &props);
    assert_eq!(got, (4_153, 5_781, 8));
}

/// `Saga_seq_L3_1a2c2ops`.
#[test]
fn saga_seq_l3_1a2c2ops() {
    let props = [Property::A3, Property::A6];
    let e = ext(true, true, false, false);
    let got = counts(RuntimeKind::Saga, bounds(1, 2, 0), e, &props);
    assert_eq!(got, (14_157, 23_005, 7));
}

/// `Registry_pin_L4_1a1c2ops` and `Registry_validate_L4_1a1c2ops`: a removed tool's version
/// is not state; pin records the read-time registry as the write registry.
#[test]
fn registry_l4_1a1c2ops() {
    let props = [Property::A2, Property::A3, Property::A6];
    let e = ext(true, true, true, false);
    for (discipline, want) in [
        (Discipline::Pin, (6_361, 12_346, 9)),
        (Discipline::Validate, (11_129, 17_800, 9)),
    ] {
        let kind = RuntimeKind::Registry(discipline);
        assert_eq!(
            counts(kind, bounds(1, 1, 1), e, &props),
            want,
            "{}",
            kind.name()
        );
    }
}
