//! The realizability search at the matrix's bounds: every one of the 16 lattice
//! points is realized by a stack of mechanisms, and the table below pins which stack, its
//! alternatives' count, the states of each prevented anomaly and the witness length of each
//! admitted one. A failure means a mechanism or the search order changed; a pass says the
//! table holds at these bounds (the matrix scenarios), nothing beyond them.

use agentsim_checker::jobs::realize::{candidates, realize, Answer, RealizeConfig};
use agentsim_models::lattice::{self, Point};
use agentsim_models::runtime::{Mechanism, Stack};
use agentsim_models::Anomaly;

/// (excludes, smallest stack, how many other stacks of its size realize the point).
const TABLE: [(&str, &str, usize); 16] = [
    ("{}", "vanilla", 0),
    ("{A1}", "pessimistic", 1),
    ("{A2}", "pin", 1),
    ("{A3}", "validate-preds+cascade", 0),
    ("{A6}", "sequencer", 0),
    ("{A1,A2}", "lock+pin", 3),
    ("{A1,A3}", "causal", 1),
    ("{A2,A3}", "validate-preds+cascade+pin", 1),
    ("{A1,A6}", "lock+sequencer", 1),
    ("{A2,A6}", "sequencer+pin", 1),
    ("{A3,A6}", "validate-preds+cascade+sequencer", 0),
    ("{A1,A2,A3}", "lock+validate-preds+cascade+pin", 3),
    ("{A1,A2,A6}", "lock+sequencer+pin", 3),
    ("{A1,A3,A6}", "saga", 1),
    ("{A2,A3,A6}", "validate-preds+cascade+sequencer+pin", 1),
    ("{A1,A2,A3,A6}", "registry-pin", 3),
];

#[test]
fn every_point_is_realized_at_the_matrix_bounds() {
    let r = realize(&RealizeConfig::default()).unwrap();
    assert_eq!(r.points.len(), 16);
    // Every valid stack of at most 5 mechanisms (the size of the last point) was checked.
    let upto5 = candidates(Stack::all())
        .into_iter()
        .filter(|s| s.len() <= 5);
    assert_eq!(r.checked.len(), upto5.count());
    assert_eq!(r.checked.len(), 104);
    let order: Vec<Point> = r.points.iter().map(|p| p.excludes).collect();
    assert_eq!(order, lattice::points());
    for (point, (label, stack, alternatives)) in r.points.iter().zip(TABLE) {
        assert_eq!(point.excludes.label(), label);
        let Answer::Realized {
            by,
            alternatives: alt,
        } = &point.answer
        else {
            panic!("{label} is not realized");
        };
        assert_eq!(by.stack.to_string(), stack, "{label}");
        assert_eq!(alt.len(), alternatives, "{label}: {alt:?}");
        for (i, a) in Anomaly::LATTICE.into_iter().enumerate() {
            let v = by.verdicts.of(a);
            // Prevented exactly where the point says, admitted with the matrix's witness
            // everywhere else (vanilla's: A1 4 steps, A2 3, A3 5, A6 2).
            assert_eq!(v.admitted, !point.excludes.contains(a), "{label} {a:?}");
            let witness = [4, 3, 5, 2][i];
            assert_eq!(
                v.witness_steps,
                v.admitted.then_some(witness),
                "{label} {a:?}"
            );
            // A prevented anomaly costs the states of the mechanism that prevents it (the
            // matrix's: lock 746, validate 981, pin or validate-tool 91, validate-preds +
            // cascade 203, sequencer 57); the others do not change that scenario's space.
            let states = match a {
                Anomaly::A1 if by.stack.contains(Mechanism::Lock) => 746,
                _ => [981, 91, 203, 57][i],
            };
            if !v.admitted {
                assert_eq!(v.states, states, "{label} {a:?}");
            }
        }
    }
}
