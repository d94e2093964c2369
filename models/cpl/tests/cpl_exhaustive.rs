//! Monitor == reference, mechanically, at small bounds (CPL.md "Correctness").
//!
//! Every MSC on 3 lifelines with up to 6 events (5 in unoptimised builds, where 6 would take
//! minutes): every sequence of `act` / `send(to)` / `recv` per lifeline, every matching of
//! receives to sends addressed to them (no FIFO; sends may stay in transit), every valuation of
//! one variable `x ∈ {0, 1}` set by every event, and every linear extension. For each, the
//! monitors run (messages through the binary wire) and at every event every formula of a
//! generated set — each operator at each nesting depth 1, 2, 3 — must equal the reference
//! evaluator. Extensions and valuations are searched depth-first from shared prefixes: a
//! monitor state depends only on its prefix, so each prefix is checked once for all its
//! completions (the reference is computed per full valuation beforehand).
//! A pass proves agreement within these bounds and this formula set, nothing beyond; the
//! proptest in `cpl_random.rs` samples further.

use agentsim_cpl::{
    compile, parse_formula, Causal, Event, Formula, Guards, Kind, Msc, Program, Reference, Symbols,
    System, Value,
};

const LIFELINES: usize = 3;
const MAX_EVENTS: usize = if cfg!(debug_assertions) { 5 } else { 6 };

/// Depth-0 formulas: every comparison, local/remote/constant terms in both positions, constants.
const ATOMS: [&str; 9] = [
    "x == 1",
    "@L1.x != 0",
    "x < @L2.x",
    "@L0.x >= 1",
    "0 <= x",
    "x > 0",
    "@L2.x == @L0.x",
    "true",
    "false",
];

/// The formula set: atoms, then for depth d = 1, 2, 3 every operator once (`S` twice, the
/// deeper operand on either side), each with an operand of depth d - 1 (so depth exactly d).
fn formula_set() -> Vec<Formula> {
    let g = Guards::default();
    let atoms = ATOMS
        .iter()
        .map(|a| parse_formula(a, &g).unwrap())
        .collect();
    let mut levels: Vec<Vec<Formula>> = vec![atoms];
    for d in 1..=3 {
        let below = &levels[d - 1];
        let any: Vec<&Formula> = levels.iter().flatten().collect();
        let mut level = Vec::new();
        for k in 0..1 {
            let a = || Box::new(below[(3 * k + d) % below.len()].clone());
            let b = || Box::new(any[(5 * k + 7 * d + 1) % any.len()].clone());
            level.extend([
                Formula::Not(a()),
                Formula::And(a(), b()),
                Formula::Or(b(), a()),
                Formula::Yesterday(a()),
                Formula::Since(b(), a()),
                Formula::Since(a(), b()),
                Formula::At(format!("L{}", (k + d) % LIFELINES), a()),
                Formula::Past(a()),
            ]);
        }
        for f in &level {
            assert_eq!(f.depth(), d, "{f}");
        }
        levels.push(level);
    }
    levels.concat()
}

/// Every MSC shape (events in a valid execution order, no values yet) with exactly `n` events.
fn shapes(n: usize) -> Vec<Msc> {
    let mut out = Vec::new();
    let mut counts = vec![0; LIFELINES];
    split(n, 0, &mut counts, &mut out);
    out
}

fn split(left: usize, l: usize, counts: &mut Vec<usize>, out: &mut Vec<Msc>) {
    if l == LIFELINES - 1 {
        counts[l] = left;
        let mut seqs = vec![Vec::new(); LIFELINES];
        sequences(0, counts, &mut seqs, out);
        return;
    }
    for c in 0..=left {
        counts[l] = c;
        split(left - c, l + 1, counts, out);
    }
}

/// A lifeline's event kinds: 0 act, 1 recv, 2 + t send to the t-th other lifeline.
fn sequences(l: usize, counts: &[usize], seqs: &mut Vec<Vec<usize>>, out: &mut Vec<Msc>) {
    if l == LIFELINES {
        matchings(seqs, out);
        return;
    }
    let kinds = 2 + LIFELINES - 1;
    for code in 0..kinds.pow(counts[l] as u32) {
        seqs[l] = (0..counts[l])
            .map(|i| code / kinds.pow(i as u32) % kinds)
            .collect();
        sequences(l + 1, counts, seqs, out);
    }
}

fn target(l: usize, kind: usize) -> usize {
    let t = kind - 2;
    if t >= l {
        t + 1
    } else {
        t
    }
}

/// Every injective matching of each lifeline's receives to the sends addressed to it.
fn matchings(seqs: &[Vec<usize>], out: &mut Vec<Msc>) {
    let mut recvs = Vec::new();
    for (l, seq) in seqs.iter().enumerate() {
        recvs.extend(
            seq.iter()
                .enumerate()
                .filter(|(_, &k)| k == 1)
                .map(|(i, _)| (l, i)),
        );
    }
    let mut chosen = Vec::new();
    assign(seqs, &recvs, &mut chosen, out);
}

fn assign(
    seqs: &[Vec<usize>],
    recvs: &[(usize, usize)],
    chosen: &mut Vec<(usize, usize)>,
    out: &mut Vec<Msc>,
) {
    let Some(&(rl, _)) = recvs.get(chosen.len()) else {
        out.extend(build(seqs, recvs, chosen));
        return;
    };
    for (sl, seq) in seqs.iter().enumerate() {
        for (si, &k) in seq.iter().enumerate() {
            if k >= 2 && target(sl, k) == rl && !chosen.contains(&(sl, si)) {
                chosen.push((sl, si));
                assign(seqs, recvs, chosen, out);
                chosen.pop();
            }
        }
    }
}

/// The MSC of a matched shape in one topological order, or none if the matching is cyclic.
fn build(seqs: &[Vec<usize>], recvs: &[(usize, usize)], sends: &[(usize, usize)]) -> Option<Msc> {
    let msg_of = |l: usize, i: usize| -> u64 { (l * 16 + i) as u64 };
    let match_of = |l: usize, i: usize| recvs.iter().position(|&r| r == (l, i)).expect("matched");
    let mut next = [0; LIFELINES];
    let mut sent = Vec::new();
    let mut events = Vec::new();
    let total: usize = seqs.iter().map(Vec::len).sum();
    while events.len() < total {
        let l = (0..LIFELINES).find(|&l| {
            next[l] < seqs[l].len()
                && (seqs[l][next[l]] != 1 || sent.contains(&sends[match_of(l, next[l])]))
        })?;
        let i = next[l];
        let kind = match seqs[l][i] {
            0 => Kind::Act,
            1 => {
                let (sl, si) = sends[match_of(l, i)];
                Kind::Recv {
                    msg: msg_of(sl, si),
                }
            }
            k => Kind::Send {
                msg: msg_of(l, i),
                to: target(l, k),
            },
        };
        sent.push((l, i));
        events.push(Event {
            lifeline: l,
            kind,
            set: vec![(0, Value::Num(0.0))],
        });
        next[l] += 1;
    }
    let names = (0..LIFELINES).map(|l| format!("L{l}")).collect();
    Some(Msc::new(names, vec!["x".into()], events).expect("a valid shape"))
}

#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Stats {
    shapes: u64,
    runs: u64,
    extensions: u64,
    prefix_checks: u64,
    event_checks: u64,
}

impl std::ops::Add for Stats {
    type Output = Stats;
    fn add(self, o: Stats) -> Stats {
        Stats {
            shapes: self.shapes + o.shapes,
            runs: self.runs + o.runs,
            extensions: self.extensions + o.extensions,
            prefix_checks: self.prefix_checks + o.prefix_checks,
            event_checks: self.event_checks + o.event_checks,
        }
    }
}

/// Depth-first search over (linear extension, valuation) prefixes of one shape: the next
/// event and the value it sets are chosen together, so prefixes are shared across both.
struct Search<'a> {
    prog: &'a Program,
    syms: Symbols,
    msc: &'a Msc,
    prev: Vec<Option<usize>>,
    nodes: &'a [usize],
    /// `events[e][v]`: event e setting x = v.
    events: Vec<[Event; 2]>,
    /// `expected[bits][e][k]`: the reference value of formula k at e under valuation `bits`.
    expected: Vec<Vec<Vec<bool>>>,
    states: Vec<System>,
    done: Vec<bool>,
    order: Vec<(usize, u32)>,
    stats: Stats,
}

impl Search<'_> {
    fn go(&mut self, depth: usize, bits: u32) {
        let n = self.msc.len();
        if depth == n {
            self.stats.extensions += 1;
            self.stats.event_checks += (n * self.nodes.len()) as u64;
            return;
        }
        for e in 0..n {
            let ready = !self.done[e]
                && self.prev[e].is_none_or(|p| self.done[p])
                && self.msc.send_of[e].is_none_or(|s| self.done[s]);
            if !ready {
                continue;
            }
            for v in 0..2u32 {
                let (lo, hi) = self.states.split_at_mut(depth + 1);
                hi[0].clone_from(&lo[depth]);
                let ev = &self.events[e][v as usize];
                hi[0]
                    .apply(self.prog, &mut self.syms, ev)
                    .expect("executable");
                self.order.push((e, v));
                // The reference at e reads only e's causal past, all of it already valued
                // here: unvalued (later) events may take any value, 0 stands for all.
                let bits = bits | v << e;
                self.check(e, depth + 1, bits);
                self.done[e] = true;
                self.go(depth + 1, bits);
                self.done[e] = false;
                self.order.pop();
            }
        }
    }

    fn check(&mut self, e: usize, depth: usize, bits: u32) {
        let mon = &self.states[depth].monitors[self.msc.events[e].lifeline];
        let want = &self.expected[bits as usize][e];
        for (k, &node) in self.nodes.iter().enumerate() {
            assert!(
                mon.value(node) == want[k],
                "monitor {} != reference {} for formula #{k} at event {e}\n\
                 replay: events={:?} order (event, x)={:?}",
                mon.value(node),
                want[k],
                self.msc.events,
                self.order
            );
        }
        self.stats.prefix_checks += self.nodes.len() as u64;
    }
}

/// Checks every valuation and every linear extension of `shape`.
fn check_shape(shape: &Msc, prog: &Program, nodes: &[usize], reference: &Reference) -> Stats {
    let causal = Causal::new(shape);
    let n = shape.len();
    let mut msc = shape.clone();
    let mut expected = Vec::with_capacity(1 << n);
    for bits in 0..1u32 << n {
        for (i, ev) in msc.events.iter_mut().enumerate() {
            ev.set[0].1 = Value::Num(f64::from(bits >> i & 1));
        }
        expected.push(reference.evaluate(&msc, &causal, &Symbols::new()));
    }
    let valued = |ev: &Event, v: f64| Event {
        set: vec![(0, Value::Num(v))],
        ..ev.clone()
    };
    let mut s = Search {
        prog,
        syms: Symbols::new(),
        msc: shape,
        prev: shape.prev(),
        nodes,
        events: shape
            .events
            .iter()
            .map(|ev| [valued(ev, 0.0), valued(ev, 1.0)])
            .collect(),
        expected,
        states: vec![System::new(prog); n + 1],
        done: vec![false; n],
        order: Vec::new(),
        stats: Stats {
            shapes: 1,
            runs: 1 << n,
            ..Stats::default()
        },
    };
    s.go(0, 0);
    s.stats
}

#[test]
fn monitor_equals_reference_on_every_small_msc() {
    let formulas = formula_set();
    assert_eq!(formulas.len(), 9 + 3 * 8);
    let names: Vec<String> = (0..LIFELINES).map(|l| format!("L{l}")).collect();
    let defs = formulas
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("f{i}"), f.clone()))
        .collect();
    let guards = Guards { defs };
    let prog = compile(&guards, &names, &["x".into()], &mut Symbols::new()).unwrap();
    assert_eq!(
        prog.lifelines.len(),
        LIFELINES,
        "the set names no other lifeline"
    );
    let nodes: Vec<usize> = prog.guards.iter().map(|g| g.1).collect();
    let reference = Reference::new(&formulas, &names, &["x".into()]);
    let shapes: Vec<Msc> = (0..=MAX_EVENTS).flat_map(shapes).collect();
    let total = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|t| {
                let (shapes, prog, nodes, reference) = (&shapes, &prog, &nodes, &reference);
                scope.spawn(move || {
                    let mine = shapes.iter().skip(t).step_by(2);
                    mine.map(|s| check_shape(s, prog, nodes, reference))
                        .fold(Stats::default(), |a, b| a + b)
                })
            })
            .collect();
        let parts = workers.into_iter().map(|h| h.join().expect("no mismatch"));
        parts.fold(Stats::default(), |a, b| a + b)
    });
    eprintln!("{total:?} subformulas={}", prog.len());
    // `extensions` counts (linear extension, valuation) pairs; `event_checks` is every
    // (MSC, extension, formula, event) comparison; `prefix_checks` those actually made.
    let want = if MAX_EVENTS == 6 {
        Stats {
            shapes: 80_406,
            runs: 4_647_267,
            extensions: 84_014_647,
            prefix_checks: 4_813_984_296,
            event_checks: 16_510_346_226,
        }
    } else {
        Stats {
            shapes: 14_218,
            runs: 411_235,
            extensions: 3_605_623,
            prefix_checks: 206_224_524,
            event_checks: 589_359_474,
        }
    };
    assert_eq!(total, want);
}

#[test]
fn shape_counts_match_an_independent_count() {
    // Counted separately by a Python enumeration over the same definition.
    let counts: Vec<usize> = (0..=4).map(|n| shapes(n).len()).collect();
    assert_eq!(counts, vec![1, 9, 60, 360, 2070]);
}
