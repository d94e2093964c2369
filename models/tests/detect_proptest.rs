//! Agreement of the spec and fast detectors on random histories of up to 200 records (proptest).
//!
//! Beyond the enumeration bounds: 3 agents, 4 cells, 3 values, ties in write time, long
//! generation windows, aborts, preds, tool versions, reordered and lossy completion orders.
//! Fast A1 is run with both of its paths forced and with the default tuning. Each history runs
//! from a random initial state (each cell NULL or one of the values), as a trace that starts in
//! the middle of a system's life does. A pass is evidence, not proof, of agreement beyond the
//! enumerated spaces.

mod detect_support;

use agentsim_models::detect::stream::Limits;
use agentsim_models::detect::{fast, spec, Summary};
use agentsim_models::{Cell, Value, ValueMap};
use detect_support::{arb_raw, assemble, stream_summary_from, tight_limits};
use proptest::prelude::*;

/// A state to start from: each of the generator's 4 cells NULL or one of its 3 values.
fn arb_initial() -> impl Strategy<Value = ValueMap> {
    prop::collection::vec(0u32..=3, 4)
        .prop_map(|vs| ValueMap::from_pairs((0..4).map(|c| (Cell(c), Value(vs[c as usize])))))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn spec_equals_fast(
        raw in prop::collection::vec(arb_raw(), 0..=200),
        initial in arb_initial(),
    ) {
        let h = assemble(&raw);
        prop_assert_eq!(h.validate(), Ok(()));
        let expected = spec::detect_from(&h, &initial);
        for scan_max in [0, 1, 3, 32, usize::MAX] {
            let got = fast::detect_from(&h, &initial, fast::Tuning { scan_max });
            prop_assert_eq!(&got, &expected, "scan_max {}", scan_max);
        }
        prop_assert_eq!(fast::detect(&h), spec::detect(&h));
    }

    /// The limited spec form and the stream detector: equal counts and kept prefixes, for
    /// every cut, keeping everything or only the tightest window.
    #[test]
    fn stream_equals_spec_summary(
        raw in prop::collection::vec(arb_raw(), 0..=200),
        max in prop_oneof![0usize..6, Just(usize::MAX)],
        initial in arb_initial(),
    ) {
        let h = assemble(&raw);
        let want = spec::summary_from(&h, &initial, max, true);
        let report = spec::detect_from(&h, &initial);
        let mut from_report = Summary::of_report(&report, h.len() as u64, max);
        from_report.replica_meta = want.replica_meta;
        prop_assert_eq!(&want, &from_report);
        let limits = [Limits::unbounded(max), tight_limits(&h, max)];
        for l in limits {
            prop_assert_eq!(&stream_summary_from(&h, &initial, l), &want);
        }
    }
}

/// The generator does produce every anomaly (otherwise agreement would be vacuous).
#[test]
fn generator_covers_every_anomaly() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = prop::collection::vec(arb_raw(), 150..=200);
    let mut seen = [0usize; 6];
    for _ in 0..20 {
        let h = assemble(&strategy.new_tree(&mut runner).expect("tree").current());
        let r = spec::detect(&h);
        let sizes = [
            r.a1.len(),
            r.a2.len(),
            r.a3.len(),
            r.a3_residue.len(),
            r.a6.len(),
        ];
        for (s, n) in seen
            .iter_mut()
            .zip(sizes.into_iter().chain([r.l1_struct.len()]))
        {
            *s += usize::from(n > 0);
        }
    }
    assert_eq!(
        seen, [20; 6],
        "histories exhibiting A1, A2, A3, residue, A6, ¬L1_struct"
    );
}
