//! The code-review guard of CPL.md on hand-built runs, monitor and reference.
//!
//! Pins: a merge authorised by reviews of an older candidate is rejected (while the guard
//! without the identity check accepts it); `Y` and `S` at first events; and the rising-edge
//! fact — `merge_ok & !Y merge_ok` over purely remote knowledge is never true at a `choice`,
//! only at a receive — on the hand-built runs and on 2000 seeded random runs.
//! These runs exercise one guard; the exhaustive test covers the operators in general.

use agentsim_cpl::{
    compile, jsonl, parse_guards, run, Causal, Event, Formula, Kind, Msc, Reference, Symbols, Value,
};
use rand::{RngExt as _, SeedableRng};
use rand_chacha::ChaCha8Rng;

const GUARDS: &str = include_str!("../../../scenarios/cpl/code_review.cpl");
const STALE: &str = include_str!("../../../scenarios/cpl/code_review_stale.jsonl");
const FRESH: &str = include_str!("../../../scenarios/cpl/code_review_fresh.jsonl");

/// Guard values per event by guard name, after asserting monitor == reference.
struct Values {
    msc: Msc,
    names: Vec<String>,
    table: Vec<Vec<bool>>,
}

impl Values {
    fn get(&self, e: usize, guard: &str) -> bool {
        self.table[e][self.names.iter().position(|n| n == guard).expect("guard")]
    }

    fn kind(&self, e: usize) -> Kind {
        self.msc.events[e].kind
    }
}

fn evaluate(guards: &str, msc: Msc, syms: &mut Symbols) -> Values {
    let g = parse_guards(guards).unwrap();
    let prog = compile(&g, &msc.lifelines, &msc.vars, syms).unwrap();
    let order: Vec<usize> = (0..msc.len()).collect();
    let rows = run::run(&prog, syms, &msc, &order).unwrap();
    let formulas: Vec<Formula> = g.defs.iter().map(|(_, f)| f.clone()).collect();
    let reference = Reference::new(&formulas, &msc.lifelines, &msc.vars);
    let table = reference.evaluate(&msc, &Causal::new(&msc), syms);
    for (e, row) in rows.iter().enumerate() {
        let mine: Vec<bool> = prog.guards.iter().map(|&(_, k)| row[k]).collect();
        assert_eq!(mine, table[e], "event {e}: monitor vs reference");
    }
    let names = g.defs.iter().map(|(n, _)| n.clone()).collect();
    Values { msc, names, table }
}

fn from_jsonl(text: &str) -> Values {
    let mut syms = Symbols::new();
    let msc = jsonl::parse_msc(text, &mut syms).unwrap();
    evaluate(GUARDS, msc, &mut syms)
}

#[test]
fn a_review_of_an_older_candidate_does_not_authorise_the_merge() {
    let v = from_jsonl(STALE);
    let last = v.msc.len() - 1;
    assert_eq!(v.kind(last), Kind::Choice);
    assert!(v.get(last, "merge_naive"), "reviews are ok, for c1");
    assert!(!v.get(last, "merge_ok"), "the Author now proposes c2");
    // The reviews carried the Author's c1 transitively, so merge_ok held at the second review's
    // receive (10) — until the Author's c2 arrived (13).
    let ok: Vec<usize> = (0..v.msc.len()).filter(|&e| v.get(e, "merge_ok")).collect();
    assert_eq!(ok, vec![10]);
    assert!(v.get(13, "merge_naive"));
    assert!(!v.get(13, "merge_ok"));
}

#[test]
fn fresh_reviews_authorise_and_the_edge_rises_at_the_receive() {
    let v = from_jsonl(FRESH);
    let values = |g: &str| (0..v.msc.len()).map(|e| v.get(e, g)).collect::<Vec<_>>();
    let merge: Vec<usize> = values("merge_ok")
        .iter()
        .enumerate()
        .filter(|p| *p.1)
        .map(|p| p.0)
        .collect();
    assert_eq!(merge, vec![13, 14], "true from the Tester's receive on");
    let rise: Vec<usize> = values("merge_rise")
        .iter()
        .enumerate()
        .filter(|p| *p.1)
        .map(|p| p.0)
        .collect();
    assert_eq!(
        rise,
        vec![13],
        "the edge rises at the receive, not at the choice after it"
    );
    assert_eq!(v.kind(14), Kind::Choice);
}

#[test]
fn yesterday_and_since_at_first_events() {
    let guards = "let y = Y true; let s = (false) S (status == \"good\");\n\
                  let review_ok = (status != \"bad\" & !(status == \"pending\")) S (status == \"good\");";
    let run_of = |first: &str| {
        let text = format!(
            "{{\"lifeline\":\"Reviewer\",\"kind\":\"act\",\"set\":{{\"status\":\"{first}\"}}}}\n\
             {{\"lifeline\":\"Reviewer\",\"kind\":\"act\"}}\n\
             {{\"lifeline\":\"Reviewer\",\"kind\":\"act\",\"set\":{{\"status\":\"bad\"}}}}"
        );
        let mut syms = Symbols::new();
        let msc = jsonl::parse_msc(&text, &mut syms).unwrap();
        evaluate(guards, msc, &mut syms)
    };
    let good = run_of("good");
    assert!(!good.get(0, "y"), "Y is false at the first event");
    assert!(good.get(1, "y"));
    assert!(good.get(0, "s"), "at the first event, φ S ψ is ψ");
    assert!(
        good.get(1, "s"),
        "false S ψ is ψ now, and status is still good"
    );
    assert!(!good.get(2, "s"));
    assert!(good.get(0, "review_ok"));
    assert!(good.get(1, "review_ok"), "status stays good");
    assert!(!good.get(2, "review_ok"), "a bad status ends it");
    let pending = run_of("pending");
    assert!(!pending.get(0, "s"));
    assert!(!pending.get(0, "review_ok"));
    assert!(!pending.get(1, "review_ok"));
}

/// A random code-review run: the Author, Reviewer and Tester change their variables and send
/// to others; the Merger receives and sometimes makes a choice.
fn random_run(seed: u64, syms: &mut Symbols) -> Msc {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names: Vec<String> = ["Author", "Reviewer", "Tester", "Merger"]
        .map(String::from)
        .into();
    let vars = vec!["candidate".to_owned(), "status".to_owned()];
    // Biased towards c1 and "good" so that merges are often authorised.
    let cands = ["c1", "c1", "c1", "c2"].map(|s| Value::Str(syms.intern(s)));
    let stats = ["pending", "good", "good", "bad"].map(|s| Value::Str(syms.intern(s)));
    let (mut events, mut transit, mut next) = (Vec::new(), Vec::<(u64, usize)>::new(), 0u64);
    for _ in 0..rng.random_range(8..32) {
        let l = rng.random_range(0..4usize);
        let mut set = Vec::new();
        if l < 3 && rng.random_bool(0.5) {
            set.push((0, cands[rng.random_range(0..4)]));
        }
        if (l == 1 || l == 2) && rng.random_bool(0.6) {
            set.push((1, stats[rng.random_range(0..4)]));
        }
        let mine: Vec<usize> = (0..transit.len()).filter(|&i| transit[i].1 == l).collect();
        let kind = if !mine.is_empty() && rng.random_bool(0.6) {
            let (msg, _) = transit.swap_remove(mine[rng.random_range(0..mine.len())]);
            Kind::Recv { msg }
        } else if l < 3 && rng.random_bool(0.6) {
            let to = if rng.random_bool(0.5) {
                3
            } else {
                (l + rng.random_range(1..4)) % 4
            };
            next += 1;
            transit.push((next, to));
            Kind::Send { msg: next, to }
        } else if l == 3 {
            Kind::Choice
        } else {
            Kind::Act
        };
        events.push(Event {
            lifeline: l,
            kind,
            set: if l == 3 { Vec::new() } else { set },
        });
    }
    Msc::new(names, vars, events).unwrap()
}

#[test]
fn a_rising_edge_over_remote_knowledge_never_fires_at_a_choice() {
    let (mut rises_at_receive, mut ok_at_choice) = (0, 0);
    for seed in 0..2000 {
        let mut syms = Symbols::new();
        let msc = random_run(seed, &mut syms);
        let v = evaluate(GUARDS, msc, &mut syms);
        for e in 0..v.msc.len() {
            if v.msc.events[e].lifeline != 3 {
                continue;
            }
            match v.kind(e) {
                Kind::Choice => {
                    assert!(!v.get(e, "merge_rise"), "seed {seed}: rise at choice {e}");
                    ok_at_choice += usize::from(v.get(e, "merge_ok"));
                }
                Kind::Recv { .. } => rises_at_receive += usize::from(v.get(e, "merge_rise")),
                _ => {}
            }
        }
    }
    // Not vacuous: the guard does hold at choices, and does rise at receives.
    assert_eq!((rises_at_receive, ok_at_choice), (13, 5));
}
