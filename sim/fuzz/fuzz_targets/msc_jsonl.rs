//! MSC JSONL (`agentsim cpl eval GUARDS MSC`): the reader never panics; what it accepts
//! writes back to text that reads as the same MSC; and under the code-review guards the
//! monitor equals the reference at every event of it, in file order.
#![no_main]

use agentsim_cpl::{
    compile, jsonl, parse_guards, run, Causal, Formula, Reference, Symbols,
};
use libfuzzer_sys::fuzz_target;

const GUARDS: &str = include_str!("../../../scenarios/cpl/code_review.cpl");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut syms = Symbols::new();
    let Ok(msc) = jsonl::parse_msc(text, &mut syms) else {
        return;
    };
    let written = jsonl::write_msc(&msc, &syms);
    let again = jsonl::parse_msc(&written, &mut syms).expect("a written MSC reads back");
    assert_eq!(again, msc, "round trip through\n{written}");
    let guards = parse_guards(GUARDS).expect("the code-review guards");
    let prog = compile(&guards, &msc.lifelines, &msc.vars, &mut syms).expect("they compile");
    let formulas: Vec<Formula> = guards.defs.iter().map(|(_, f)| f.clone()).collect();
    let reference = Reference::new(&formulas, &msc.lifelines, &msc.vars);
    let table = reference.evaluate(&msc, &Causal::new(&msc), &syms);
    let order: Vec<usize> = (0..msc.len()).collect();
    let rows = run::run(&prog, &mut syms, &msc, &order).expect("file order executes");
    for (e, row) in rows.iter().enumerate() {
        let got: Vec<bool> = prog.guards.iter().map(|&(_, k)| row[k]).collect();
        assert_eq!(got, table[e], "monitor and reference disagree at event {e}");
    }
});
