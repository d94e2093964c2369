//! The reference workloads of CPL.md, as guard text plus what each lifeline may write.
//!
//! Code review (4 lifelines, 16 subformulas, one selected variable `candidate`) is the guard of
//! the paper; the scaling workloads are generated: `atoms` remote atoms `@Lj.vk op c` (all distinct) in groups
//! of four, `(a0 & !a1) S (a2 | a3)`, each group under `@Lm(·)` or `Y ·` alternately, all groups
//! joined by alternating `&` and `|`. The paper does not publish its scaling formulas, so
//! only the shape (atoms, lifelines, variables) matches; figures compare per event, not per
//! formula. Generating a workload proves nothing about speed; `agentsim cpl bench` measures.

use super::ast::Lit;
use std::fmt::Write as _;

/// The code-review guards of CPL.md.
pub const CODE_REVIEW: &str = r#"# Code review (CPL.md): may the Merger merge the Author's current candidate?
# A review is ok once "good" was reported and no "bad"/"pending" came after it.
let review_ok = (status != "bad" & !(status == "pending")) S (status == "good");
# Both reviews are ok and were made for the candidate the Author now proposes.
let merge_ok = @Reviewer(review_ok) & @Tester(review_ok)
    & @Reviewer.candidate == @Author.candidate
    & @Tester.candidate == @Author.candidate;
# Rising edge: merge_ok just became true.
let merge_rise = merge_ok & !Y merge_ok;
"#;

/// A workload: guards, lifelines, and per lifeline the variables it writes with their domain.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Short name for tables.
    pub name: String,
    /// Guard-file text.
    pub guards: String,
    /// Lifeline names.
    pub lifelines: Vec<String>,
    /// `writes[l]`: `(variable, domain)` pairs lifeline `l` sets at its events.
    pub writes: Vec<Vec<(String, Vec<Lit>)>>,
}

fn strs(xs: &[&str]) -> Vec<Lit> {
    xs.iter().map(|s| Lit::Str((*s).to_owned())).collect()
}

/// The code-review workload.
pub fn code_review() -> Workload {
    let cand = || ("candidate".to_owned(), strs(&["c1", "c2"]));
    let status = || ("status".to_owned(), strs(&["pending", "good", "bad"]));
    Workload {
        name: "code-review".into(),
        guards: CODE_REVIEW.into(),
        lifelines: ["Author", "Reviewer", "Tester", "Merger"]
            .map(String::from)
            .to_vec(),
        writes: vec![
            vec![cand()],
            vec![cand(), status()],
            vec![cand(), status()],
            vec![],
        ],
    }
}

/// The generated scaling workload: `atoms` atoms over `lifelines` lifelines and `vars`
/// variables per lifeline.
pub fn scaling(lifelines: usize, atoms: usize, vars: usize) -> Workload {
    assert!(lifelines >= 2, "at least two lifelines");
    assert!(vars >= 1, "at least one variable");
    assert!(atoms >= 4, "at least one group of four atoms");
    assert!(atoms.is_multiple_of(4), "atoms come in groups of four");
    let ops = ["==", "!=", "<=", ">="];
    // The constant `i / lifelines` keeps all atoms distinct even with one variable.
    let atom = |i: usize| {
        let (l, v, c) = (i % lifelines, i % vars, i / lifelines);
        format!("@L{l}.v{v} {} {c}", ops[i % 4])
    };
    let mut text = format!("# {atoms} atoms, {lifelines} lifelines, {vars} variables\n");
    let groups = atoms / 4;
    for m in 0..groups {
        let a = |k| atom(4 * m + k);
        let g = format!("({} & !({})) S ({} | {})", a(0), a(1), a(2), a(3));
        let h = match m % 2 {
            0 => format!("@L{}({g})", m % lifelines),
            _ => format!("Y ({g})"),
        };
        writeln!(text, "let g{m} = {h};").expect("string");
    }
    let mut top = "g0".to_owned();
    for m in 1..groups {
        let op = if m % 2 == 1 { "&" } else { "|" };
        top = format!("({top}) {op} g{m}");
    }
    writeln!(text, "let all = {top};").expect("string");
    let top_constant = atoms.div_ceil(lifelines).max(3);
    let domain: Vec<Lit> = (0..top_constant).map(|c| Lit::Num(c as f64)).collect();
    let writes = (0..lifelines)
        .map(|_| {
            (0..vars)
                .map(|k| (format!("v{k}"), domain.clone()))
                .collect()
        })
        .collect();
    Workload {
        name: format!("scaling-{atoms}a-{lifelines}l-{vars}v"),
        guards: text,
        lifelines: (0..lifelines).map(|l| format!("L{l}")).collect(),
        writes,
    }
}

/// Every workload of CPL.md in table order.
pub fn all() -> Vec<Workload> {
    let mut w = vec![code_review(), scaling(8, 128, 1), scaling(8, 128, 128)];
    w.extend([2, 4, 8, 16, 32].map(|l| scaling(l, 16, 4)));
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use crate::parse::parse_guards;
    use crate::value::Symbols;

    fn shape(w: &Workload) -> (usize, usize, usize) {
        let g = parse_guards(&w.guards).unwrap();
        let p = compile(&g, &w.lifelines, &[], &mut Symbols::new()).unwrap();
        let vars: std::collections::BTreeSet<u32> = p.selected.iter().map(|s| s.1).collect();
        (p.lifelines.len(), p.len(), vars.len())
    }

    #[test]
    fn code_review_has_16_subformulas_and_one_selected_variable() {
        assert_eq!(shape(&code_review()), (4, 16, 1));
    }

    #[test]
    fn scaling_shapes_are_pinned() {
        assert_eq!(shape(&scaling(8, 128, 1)), (8, 319, 1));
        assert_eq!(shape(&scaling(8, 128, 128)), (8, 319, 128));
        assert_eq!(shape(&scaling(32, 16, 4)), (32, 39, 4));
        assert_eq!(all().len(), 8);
    }
}
