//! Agreement of the spec and fast detectors on random histories of up to 200 records (proptest).
//!
//! Beyond the enumeration bounds: 3 agents, 4 cells, 3 values, ties in write time, long
//! generation windows, aborts, preds, tool versions, reordered and lossy completion orders.
//! Fast A1 is run with both of its paths forced and with the default tuning. A pass is
//! evidence, not proof, of agreement beyond the enumerated spaces.

mod detect_support;

use agentsim_models::detect::stream::Limits;
use agentsim_models::detect::{fast, spec, Summary};
use detect_support::{arb_raw, assemble, stream_summary, tight_limits};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn spec_equals_fast(raw in prop::collection::vec(arb_raw(), 0..=200)) {
        let h = assemble(&raw);
        prop_assert_eq!(h.validate(), Ok(()));
        let expected = spec::detect(&h);
        for scan_max in [0, 1, 3, 32, usize::MAX] {
            let got = fast::detect_with(&h, fast::Tuning { scan_max });
            prop_assert_eq!(&got, &expected, "scan_max {}", scan_max);
        }
        prop_assert_eq!(fast::detect(&h), expected);
    }

    /// The limited spec form and the stream detector: equal counts and kept prefixes, for
    /// every cut, keeping everything or only the tightest window.
    #[test]
    fn stream_equals_spec_summary(
        raw in prop::collection::vec(arb_raw(), 0..=200),
        max in prop_oneof![0usize..6, Just(usize::MAX)],
    ) {
        let h = assemble(&raw);
        let want = spec::summary(&h, max, true);
        let mut from_report = Summary::of_report(&spec::detect(&h), h.len() as u64, max);
        from_report.replica_meta = want.replica_meta;
        prop_assert_eq!(&want, &from_report);
        prop_assert_eq!(&stream_summary(&h, Limits::unbounded(max)), &want);
        prop_assert_eq!(&stream_summary(&h, tight_limits(&h, max)), &want);
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
