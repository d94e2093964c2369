//! Spec-form detectors: SPEC §3 transcribed literally, one loop per quantifier.
//!
//! These are the reference the fast forms are tested against. They are quadratic or worse;
//! use them on small histories (the enumeration tests, proptest, the checker's tiny logs).
//! See the module docs of [`crate::detect`] for how aborted records are read.

use super::witnesses::Summary;
use super::{
    a4, A1Witness, A2Reason, A2Witness, A3ResidueWitness, A3Witness, A6Witness, L1StructViolation,
    Report,
};
use crate::history::History;
use crate::names::Value;
use crate::record::OpRecord;

/// Runs every spec-form detector.
pub fn detect(h: &History) -> Report {
    let r = &h.records;
    Report {
        a1: a1(r),
        a2: a2(r),
        a3: a3(r),
        a3_residue: a3_residue(r),
        a6: a6(r),
        a4: super::a4::spec(r),
        l1_struct: l1_struct(r),
    }
}

/// Every spec-form detector, counting every witness and keeping the first `max` of each in
/// completion order (the loops below visit witnesses in exactly that order), A4 included when
/// some record has replica metadata. Memory is O(max) beyond the history.
pub fn summary(h: &History, max: usize, residue: bool) -> Summary {
    let r = &h.records;
    let mut s = Summary::new(max);
    a1_each(r, &mut |w| {
        s.a1.push(w);
    });
    a2_each(r, &mut |w| {
        s.a2.push(w);
    });
    a3_each(r, &mut |w| {
        s.a3.push(w);
    });
    if residue {
        a3_residue_each(r, &mut |w| {
            s.a3_residue.push(w);
        });
    }
    a6_each(r, &mut |w| {
        s.a6.push(w);
    });
    l1_struct_each(r, &mut |w| {
        s.l1_struct.push(w);
    });
    s.replica_meta = a4::has_replica_meta(h);
    a4::spec_in_completion_order(r, &mut s.a4);
    s.records = r.len() as u64;
    s
}

fn collect<T: Ord>(each: impl FnOnce(&mut dyn FnMut(T))) -> Vec<T> {
    let mut out = Vec::new();
    each(&mut |w| out.push(w));
    // On a valid history the loops visit witnesses in order already (preds are sorted).
    out.sort_unstable();
    out
}

/// A1 stale-generation: ∃ i ≠ j, agent(i) ≠ agent(j), c ∈ read_set(i) ∩ write_set(j),
/// read_time(i) < write_time(j) < write_time(i), read_values(i)[c] ≠ write_values(j)[c].
pub fn a1(r: &[OpRecord]) -> Vec<A1Witness> {
    collect(|f| a1_each(r, f))
}

/// [`a1`]'s witnesses, in order, to `out`.
pub fn a1_each(r: &[OpRecord], out: &mut dyn FnMut(A1Witness)) {
    for (i, ri) in r.iter().enumerate() {
        for (j, rj) in r.iter().enumerate() {
            if i == j || ri.agent == rj.agent || ri.aborted || rj.aborted {
                continue;
            }
            for &c in &ri.read_set {
                if rj.write_set.contains(&c)
                    && ri.read_time < rj.write_time
                    && rj.write_time < ri.write_time
                    && ri.read_values.get(c) != rj.write_values.get(c)
                {
                    out(A1Witness {
                        reader: i,
                        writer: j,
                        cell: c,
                    });
                }
            }
        }
    }
}

/// A2 phantom-tool: planned_tool ≠ NULL, planned_tool ∈ read_registry, and planned_tool ∉
/// write_registry or its signature version differs (extension 4).
pub fn a2(r: &[OpRecord]) -> Vec<A2Witness> {
    collect(|f| a2_each(r, f))
}

/// [`a2`]'s witnesses, in order, to `out`.
pub fn a2_each(r: &[OpRecord], out: &mut dyn FnMut(A2Witness)) {
    for (i, ri) in r.iter().enumerate() {
        if ri.aborted {
            continue;
        }
        let Some(t) = ri.planned_tool else { continue };
        let Some(seen) = ri.read_registry.get(t) else {
            continue;
        };
        let reason = match ri.write_registry.get(t) {
            None => A2Reason::Removed,
            Some(now) if now.version != seen.version => A2Reason::VersionChanged {
                read: seen.version,
                write: now.version,
            },
            Some(_) => continue,
        };
        out(A2Witness {
            record: i,
            tool: t,
            reason,
        });
    }
}

/// A3 causal-cascade (preds form): some j is not aborted and some p ∈ preds(j) is aborted.
pub fn a3(r: &[OpRecord]) -> Vec<A3Witness> {
    collect(|f| a3_each(r, f))
}

/// [`a3`]'s witnesses, in order, to `out`.
pub fn a3_each(r: &[OpRecord], out: &mut dyn FnMut(A3Witness)) {
    for (j, rj) in r.iter().enumerate() {
        if rj.aborted {
            continue;
        }
        for &p in &rj.preds {
            if r.get(p as usize).is_some_and(|rp| rp.aborted) {
                out(A3Witness {
                    record: j,
                    pred: p as usize,
                });
            }
        }
    }
}

/// A3 residue form: some j read a non-NULL value v of c ∈ read_set(j) that no other
/// non-aborted k wrote (c ∈ write_set(k), write_values(k)[c] = v) with
/// write_time(k) ≤ read_time(j).
pub fn a3_residue(r: &[OpRecord]) -> Vec<A3ResidueWitness> {
    collect(|f| a3_residue_each(r, f))
}

/// [`a3_residue`]'s witnesses, in order, to `out`.
pub fn a3_residue_each(r: &[OpRecord], out: &mut dyn FnMut(A3ResidueWitness)) {
    for (j, rj) in r.iter().enumerate() {
        for &c in &rj.read_set {
            let v = rj.read_values.get(c);
            if v.is_null() {
                continue;
            }
            let produced = r.iter().enumerate().any(|(k, rk)| {
                k != j
                    && !rk.aborted
                    && rk.write_set.contains(&c)
                    && rk.write_values.get(c) == v
                    && rk.write_time <= rj.read_time
            });
            if !produced {
                out(A3ResidueWitness {
                    record: j,
                    cell: c,
                    value: v,
                });
            }
        }
    }
}

/// A6 tool-effect reordering: |io| ≥ 2, co ≠ io, and co is a permutation of io.
pub fn a6(r: &[OpRecord]) -> Vec<A6Witness> {
    collect(|f| a6_each(r, f))
}

/// [`a6`]'s witnesses, in order, to `out`.
pub fn a6_each(r: &[OpRecord], out: &mut dyn FnMut(A6Witness)) {
    for (i, ri) in r.iter().enumerate() {
        if ri.aborted || ri.io.len() < 2 || ri.co == ri.io {
            continue;
        }
        if is_permutation(&ri.io, &ri.co) {
            out(A6Witness { record: i });
        }
    }
}

/// Whether `b` is a permutation of `a`: same length, and every element of `a` is matched by
/// a distinct element of `b`.
fn is_permutation<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut used = vec![false; b.len()];
    'outer: for x in a {
        for (k, y) in b.iter().enumerate() {
            if !used[k] && x == y {
                used[k] = true;
                continue 'outer;
            }
        }
        return false;
    }
    true
}

/// `L1_struct`: every read value (cells of the read set) equals the latest committed write to
/// that cell at or before the read time, NULL if none. Returns the violations.
pub fn l1_struct(r: &[OpRecord]) -> Vec<L1StructViolation> {
    collect(|f| l1_struct_each(r, f))
}

/// [`l1_struct`]'s violations, in order, to `out`.
pub fn l1_struct_each(r: &[OpRecord], out: &mut dyn FnMut(L1StructViolation)) {
    for (j, rj) in r.iter().enumerate() {
        for &c in &rj.read_set {
            let mut latest: Option<usize> = None;
            for (k, rk) in r.iter().enumerate() {
                if k != j
                    && !rk.aborted
                    && rk.write_set.contains(&c)
                    && rk.write_time <= rj.read_time
                {
                    // Log order breaks ties between equal write times: the later record wins.
                    if latest.is_none_or(|l| r[l].write_time <= rk.write_time) {
                        latest = Some(k);
                    }
                }
            }
            let expected = latest.map_or(Value::NULL, |k| r[k].write_values.get(c));
            let read = rj.read_values.get(c);
            if read != expected {
                out(L1StructViolation {
                    record: j,
                    cell: c,
                    read,
                    expected,
                    writer: latest,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Agent, Cell};
    use crate::record::ValueMap;

    fn rec(agent: u32, rt: u64, wt: u64) -> OpRecord {
        OpRecord {
            agent: Agent(agent),
            read_time: rt,
            write_time: wt,
            ..OpRecord::default()
        }
    }

    /// SPEC §3: both agents read NULL at 0, a1 writes v1 at 1, a2 commits at 2.
    #[test]
    fn snapshot_insufficiency_witness() {
        let mut r1 = rec(0, 0, 1);
        r1.read_set = vec![Cell(0)];
        r1.write_set = vec![Cell(0)];
        r1.write_values = ValueMap::from_pairs([(Cell(0), Value(1))]);
        let mut r2 = rec(1, 0, 2);
        r2.read_set = vec![Cell(0)];
        let h = History::from_records(vec![r1, r2]);
        let rep = detect(&h);
        assert!(rep.l1_struct_holds());
        assert_eq!(
            rep.a1,
            vec![A1Witness {
                reader: 1,
                writer: 0,
                cell: Cell(0)
            }]
        );
    }

    #[test]
    fn a1_needs_different_agents() {
        let mut r1 = rec(0, 0, 1);
        r1.write_set = vec![Cell(0)];
        r1.write_values = ValueMap::from_pairs([(Cell(0), Value(1))]);
        let mut r2 = rec(0, 0, 2);
        r2.read_set = vec![Cell(0)];
        assert!(a1(&[r1, r2]).is_empty());
    }

    #[test]
    fn a6_needs_a_permutation_of_length_two() {
        let mut r = rec(0, 0, 1);
        r.io = vec![(Cell(0), Value(1))];
        r.co = vec![];
        assert!(a6(std::slice::from_ref(&r)).is_empty());
        r.io = vec![(Cell(0), Value(1)), (Cell(1), Value(1))];
        r.co = vec![(Cell(1), Value(1)), (Cell(1), Value(1))];
        assert!(a6(std::slice::from_ref(&r)).is_empty());
        r.co = vec![(Cell(1), Value(1)), (Cell(0), Value(1))];
        assert_eq!(a6(&[r]), vec![A6Witness { record: 0 }]);
    }
}
