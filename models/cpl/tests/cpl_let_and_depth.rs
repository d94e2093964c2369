//! Guard files as a hostile user writes them: `let` names kept as
//! references mean what inlining them would mean; the heap-stack parser reads precedence and
//! associativity as CPL.md defines them; a formula at the depth limit goes through every
//! recursive walk (compile, reference, monitor, printing, clone, drop) on a small stack; a
//! program too large for the monitors is refused before it is built.
//! Random cases are rebuilt from a proptest-drawn seed with `ChaCha8Rng`; sampling finds bugs,
//! it proves nothing. The stack test proves the bound for these shapes on this build only.

use agentsim_cpl::{
    compile, jsonl, parse_formula, parse_guards, run, Causal, Cmp, CompileError, Formula, Guards,
    Lit, Reference, Symbols, Term, MAX_DEPTH,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const LIFELINES: [&str; 4] = ["Author", "Reviewer", "Tester", "Merger"];
const VARS: [&str; 2] = ["candidate", "status"];
const STRINGS: [&str; 4] = ["c1", "c2", "good", "pending"];

fn pick<'a>(rng: &mut ChaCha8Rng, xs: &[&'a str]) -> &'a str {
    xs[rng.random_range(0..xs.len())]
}

fn term(rng: &mut ChaCha8Rng) -> Term {
    let var = pick(rng, &VARS).to_owned();
    match rng.random_range(0..5) {
        0 => Term::Local(var),
        1 => Term::Remote(pick(rng, &LIFELINES).to_owned(), var),
        2 => Term::Const(Lit::Str(pick(rng, &STRINGS).to_owned())),
        3 => Term::Const(Lit::Bool(rng.random_bool(0.5))),
        _ => Term::Const(Lit::Num(f64::from(rng.random_range(-2..3)))),
    }
}

/// A random formula of depth ≤ `depth` that may name any of the first `defs` guards.
fn formula(rng: &mut ChaCha8Rng, depth: usize, defs: usize) -> Formula {
    if depth == 0 || rng.random_bool(0.25) {
        return match rng.random_range(0..8) {
            0 => Formula::True,
            1 => Formula::False,
            2 | 3 if defs > 0 => {
                let k = rng.random_range(0..defs);
                Formula::Named(k, format!("g{k}"))
            }
            _ => Formula::Atom(term(rng), Cmp::ALL[rng.random_range(0..6)], term(rng)),
        };
    }
    let sub = |rng: &mut ChaCha8Rng| Box::new(formula(rng, depth - 1, defs));
    match rng.random_range(0..8) {
        0 => Formula::Not(sub(rng)),
        1 => Formula::And(sub(rng), sub(rng)),
        2 => Formula::Or(sub(rng), sub(rng)),
        3 => Formula::Yesterday(sub(rng)),
        4 => Formula::Since(sub(rng), sub(rng)),
        5 => Formula::Past(sub(rng)),
        _ => Formula::At(pick(rng, &LIFELINES).to_owned(), sub(rng)),
    }
}

/// `f` with every name replaced by its guard's formula (what `let` meant when it was inlined).
fn inline(f: &Formula, defs: &[Formula]) -> Formula {
    let sub = |g: &Formula| Box::new(inline(g, defs));
    match f {
        Formula::True | Formula::False | Formula::Atom(..) => f.clone(),
        Formula::Named(k, _) => defs[*k].clone(),
        Formula::Not(a) => Formula::Not(sub(a)),
        Formula::And(a, b) => Formula::And(sub(a), sub(b)),
        Formula::Or(a, b) => Formula::Or(sub(a), sub(b)),
        Formula::Yesterday(a) => Formula::Yesterday(sub(a)),
        Formula::Since(a, b) => Formula::Since(sub(a), sub(b)),
        Formula::At(b, a) => Formula::At(b.clone(), sub(a)),
        Formula::Past(a) => Formula::Past(sub(a)),
    }
}

/// Binding strength in the concrete syntax (parse.rs): atoms 5, prefix 4, `&` 3, `|` 2, `S` 1.
fn strength(f: &Formula) -> u8 {
    match f {
        Formula::Since(..) => 1,
        Formula::Or(..) => 2,
        Formula::And(..) => 3,
        Formula::Not(_) | Formula::Yesterday(_) | Formula::Past(_) | Formula::At(..) => 4,
        Formula::True | Formula::False | Formula::Atom(..) | Formula::Named(..) => 5,
    }
}

/// `f` with only the parentheses precedence and associativity require: `&`, `|` left,
/// `S` right. (`Display` parenthesises everything, so it cannot test precedence.)
fn minimal(f: &Formula) -> String {
    let wrap = |g: &Formula, need: bool| match need {
        true => format!("({})", minimal(g)),
        false => minimal(g),
    };
    let binary = |a: &Formula, op: &str, b: &Formula, s: u8, right_assoc: bool| {
        let left = wrap(a, strength(a) < s || (right_assoc && strength(a) == s));
        let right = wrap(b, strength(b) < s || (!right_assoc && strength(b) == s));
        format!("{left} {op} {right}")
    };
    match f {
        Formula::And(a, b) => binary(a, "&", b, 3, false),
        Formula::Or(a, b) => binary(a, "|", b, 2, false),
        Formula::Since(a, b) => binary(a, "S", b, 1, true),
        Formula::Not(a) => format!("!{}", wrap(a, strength(a) < 4)),
        Formula::Yesterday(a) => format!("Y {}", wrap(a, strength(a) < 4)),
        Formula::Past(a) => format!("P {}", wrap(a, strength(a) < 4)),
        Formula::At(b, a) => format!("@{b} {}", wrap(a, strength(a) < 4)),
        _ => f.to_string(),
    }
}

/// A random guard file: `n` guards, each naming only earlier ones.
fn guards(rng: &mut ChaCha8Rng, n: usize) -> Guards {
    let defs = (0..n)
        .map(|i| (format!("g{i}"), formula(rng, 4, i)))
        .collect();
    Guards { defs }
}

fn text(g: &Guards) -> String {
    g.defs
        .iter()
        .map(|(n, f)| format!("let {n} = {};\n", minimal(f)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The parser reads the minimally parenthesised text and the printed text back to the
    /// same tree, names included.
    #[test]
    fn parse_reads_precedence_associativity_and_names(seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = guards(&mut rng, 5);
        prop_assert_eq!(&parse_guards(&text(&g)).unwrap(), &g, "{}", text(&g));
        let printed: String =
            g.defs.iter().map(|(n, f)| format!("let {n} = {f};\n")).collect();
        prop_assert_eq!(&parse_guards(&printed).unwrap(), &g);
        let last = formula(&mut rng, 5, g.defs.len());
        prop_assert_eq!(parse_formula(&minimal(&last), &g).unwrap(), last);
    }

    /// Names as references compile to the table inlining would give, and the reference
    /// evaluator gives the same values at every event, on the code-review run.
    #[test]
    fn references_mean_what_inlining_meant(seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = guards(&mut rng, 5);
        let mut inlined: Vec<Formula> = Vec::new();
        for (_, f) in &g.defs {
            let f = inline(f, &inlined);
            inlined.push(f);
        }
        let flat = Guards {
            defs: g.defs.iter().zip(&inlined).map(|((n, _), f)| (n.clone(), f.clone())).collect(),
        };
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/cpl/code_review_stale.jsonl"
        ))
        .unwrap();
        let mut syms = Symbols::new();
        let msc = jsonl::parse_msc(&text, &mut syms).unwrap();
        let mut syms_flat = syms.clone();
        let p = compile(&g, &msc.lifelines, &msc.vars, &mut syms).unwrap();
        let q = compile(&flat, &msc.lifelines, &msc.vars, &mut syms_flat).unwrap();
        prop_assert_eq!(&p.nodes, &q.nodes);
        prop_assert_eq!(&p.guards, &q.guards);
        prop_assert_eq!(&p.selected, &q.selected);
        let formulas: Vec<Formula> = g.defs.iter().map(|(_, f)| f.clone()).collect();
        let causal = Causal::new(&msc);
        let by_ref = Reference::new(&formulas, &msc.lifelines, &msc.vars);
        let by_copy = Reference::new(&inlined, &msc.lifelines, &msc.vars);
        let table = by_ref.evaluate(&msc, &causal, &syms);
        prop_assert_eq!(&table, &by_copy.evaluate(&msc, &causal, &syms));
        let order: Vec<usize> = (0..msc.len()).collect();
        let rows = run::run(&p, &mut syms, &msc, &order).unwrap();
        for (e, row) in rows.iter().enumerate() {
            let got: Vec<bool> = p.guards.iter().map(|&(_, k)| row[k]).collect();
            prop_assert_eq!(&got, &table[e], "event {}", e);
        }
    }
}

/// Guard files whose formulas are exactly `MAX_DEPTH` deep, one per way of nesting.
fn at_the_limit() -> Vec<String> {
    let d = MAX_DEPTH;
    let atom = "candidate == \"c1\"";
    let mut names = "let n0 = !Y @Reviewer.status == \"good\";\n".to_owned();
    for i in 1..d / 2 {
        names.push_str(&format!("let n{i} = Y !n{};\n", i - 1));
    }
    names.push_str(&format!("let a = n{};", d / 2 - 1));
    vec![
        format!("let a = {}{atom};", "Y ".repeat(d)),
        format!("let a = {}{atom};", "!".repeat(d)),
        format!("let a = {}{atom};", "P ".repeat(d)),
        format!("let a = {}{atom}{};", "@Tester(".repeat(d), ")".repeat(d)),
        format!("let a = {atom}{};", " & true".repeat(d)),
        format!("let a = {atom}{};", " | false".repeat(d)),
        format!("let a = {}{atom};", "true S ".repeat(d)),
        format!("let a = {}{atom}{};", "(".repeat(d), " S true)".repeat(d)),
        format!(
            "let a = {}{atom}{};",
            "Y (".repeat(d / 2),
            " & true)".repeat(d / 2)
        ),
        names,
    ]
}

/// Every recursive walk over a formula at the depth limit fits in 1 MiB of stack, half of what
/// a spawned thread gets by default (the simulator evaluates guards on such threads).
#[test]
fn formulas_at_the_depth_limit_fit_a_small_stack() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/cpl/code_review_stale.jsonl"
    ))
    .unwrap();
    for (i, src) in at_the_limit().into_iter().enumerate() {
        let text = text.clone();
        let walk = move || {
            let g = parse_guards(&src).unwrap();
            assert_eq!(g.depths().iter().max(), Some(&MAX_DEPTH), "case {i}");
            let deeper = format!("{src}\nlet deeper = !a;");
            assert!(parse_guards(&deeper).is_err(), "case {i}");
            let mut syms = Symbols::new();
            let msc = jsonl::parse_msc(&text, &mut syms).unwrap();
            let prog = compile(&g, &msc.lifelines, &msc.vars, &mut syms).unwrap();
            let formulas: Vec<Formula> = g.defs.iter().map(|(_, f)| f.clone()).collect();
            let reference = Reference::new(&formulas, &msc.lifelines, &msc.vars);
            let table = reference.evaluate(&msc, &Causal::new(&msc), &syms);
            let order: Vec<usize> = (0..msc.len()).collect();
            let rows = run::run(&prog, &mut syms, &msc, &order).unwrap();
            for (e, row) in rows.iter().enumerate() {
                let got: Vec<bool> = prog.guards.iter().map(|&(_, k)| row[k]).collect();
                assert_eq!(got, table[e], "case {i}, event {e}");
            }
            let printed: Vec<String> = formulas.iter().map(|f| format!("{f} {f:?}")).collect();
            assert!(printed.iter().all(|p| !p.is_empty()));
            assert_eq!(g.clone(), g);
        };
        let t = std::thread::Builder::new().stack_size(1 << 20).spawn(walk);
        t.unwrap()
            .join()
            .unwrap_or_else(|_| panic!("case {i} did not fit"));
    }
}

/// A guard file naming 2,048 lifelines needs 2,048² truth values per subformula: refused with
/// the sizes, before the table is built.
#[test]
fn programs_too_large_for_the_monitors_are_refused() {
    let mut src = String::new();
    for g in 0..16 {
        let terms: Vec<String> = (0..128)
            .map(|l| format!("@L{}(true)", 128 * g + l))
            .collect();
        src.push_str(&format!("let g{g} = {};\n", terms.join(" | ")));
    }
    let guards = parse_guards(&src).unwrap();
    let err = compile(&guards, &[], &[], &mut Symbols::new()).unwrap_err();
    assert_eq!(
        err,
        CompileError::TooLarge {
            lifelines: 2048,
            subformulas: 33,
        }
    );
    assert!(
        err.to_string().contains("more than the limit of 134217728"),
        "{err}"
    );
}
