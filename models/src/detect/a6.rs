//! A6 tool-effect reordering (SPEC §3), in spec, fast and stream form, with its witness type.
//!
//! Definition: |io| ≥ 2, co ≠ io, and co is a permutation of io. Only non-aborted records
//! exhibit A6 (see [`crate::detect`]). The witness is per record, so the fast and stream forms
//! are one test of each record ([`of`]) and the stream reports it on arrival.

use super::stream::{Found, Keys, Sink, Stream};
use crate::names::{Cell, Value};
use crate::record::OpRecord;

/// A6: `record` externalized its (≥ 2) effects in an order that permutes its issue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A6Witness {
    pub record: usize,
}

/// Spec form: every witness, sorted.
pub fn spec(r: &[OpRecord]) -> Vec<A6Witness> {
    super::collect(|f| spec_each(r, f))
}

/// [`spec`]'s witnesses, in order, to `out`.
pub fn spec_each(r: &[OpRecord], out: &mut dyn FnMut(A6Witness)) {
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

/// Fast form: |io| ≥ 2, co ≠ io, co a permutation of io (equal as multisets).
pub fn fast(r: &[OpRecord]) -> Vec<A6Witness> {
    r.iter()
        .enumerate()
        .filter_map(|(i, ri)| of(i, ri))
        .collect()
}

/// Record `i`'s witness, if it has one (the fast and stream forms).
pub(crate) fn of(i: usize, ri: &OpRecord) -> Option<A6Witness> {
    if ri.aborted || ri.io.len() < 2 || ri.io.len() != ri.co.len() || ri.co == ri.io {
        return None;
    }
    let (mut io, mut co) = (ri.io.clone(), ri.co.clone());
    io.sort_unstable();
    co.sort_unstable();
    (io == co).then_some(A6Witness { record: i })
}

impl Stream {
    /// Stream form: record `j`'s witness, complete on arrival.
    pub(super) fn a6(
        &mut self,
        j: u64,
        r: &OpRecord,
        keys: Keys<'_>,
        line: u64,
        sink: &mut impl Sink,
    ) {
        let Some(w) = of(j as usize, r) else { return };
        if self.out.a6.push(w) {
            let with_keys =
                |e: &[(Cell, Value)]| e.iter().map(|&(c, v)| (c, keys.get(v))).collect();
            let (io, co) = (with_keys(&r.io), with_keys(&r.co));
            let agent = r.agent;
            sink.found(line, Found::A6 { w, agent, io, co });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a6_needs_a_permutation_of_length_two() {
        let mut r = OpRecord {
            write_time: 1,
            ..OpRecord::default()
        };
        r.io = vec![(Cell(0), Value(1))];
        r.co = vec![];
        assert!(spec(std::slice::from_ref(&r)).is_empty());
        r.io = vec![(Cell(0), Value(1)), (Cell(1), Value(1))];
        r.co = vec![(Cell(1), Value(1)), (Cell(1), Value(1))];
        assert!(spec(std::slice::from_ref(&r)).is_empty());
        r.co = vec![(Cell(1), Value(1)), (Cell(0), Value(1))];
        assert_eq!(spec(&[r]), vec![A6Witness { record: 0 }]);
    }
}
