//! CPL guard files (`agentsim cpl eval GUARDS MSC`, `[cpl]` in scenarios): the parser and the
//! compiler never panic and stay within their limits (MAX_DEPTH, MAX_STATE); what parses
//! prints back to text that parses to the same guards; and on the code-review run the
//! monitor (messages through the binary wire) equals the reference at every event.
#![no_main]

use agentsim_cpl::{
    compile, jsonl, parse_guards, run, Causal, Formula, Reference, Symbols,
};
use libfuzzer_sys::fuzz_target;

const MSC: &str = include_str!("../../../scenarios/cpl/code_review_stale.jsonl");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(guards) = parse_guards(text) else {
        return;
    };
    let printed: String = guards
        .defs
        .iter()
        .map(|(n, f)| format!("let {n} = {f};\n"))
        .collect();
    let again = parse_guards(&printed).expect("printed guards parse");
    assert_eq!(again, guards, "round trip through\n{printed}");
    let mut syms = Symbols::new();
    let msc = jsonl::parse_msc(MSC, &mut syms).expect("the code-review run");
    let Ok(prog) = compile(&guards, &msc.lifelines, &msc.vars, &mut syms) else {
        return;
    };
    let formulas: Vec<Formula> = guards.defs.iter().map(|(_, f)| f.clone()).collect();
    let reference = Reference::new(&formulas, &msc.lifelines, &msc.vars);
    let table = reference.evaluate(&msc, &Causal::new(&msc), &syms);
    let order: Vec<usize> = (0..msc.len()).collect();
    let rows = run::run(&prog, &mut syms, &msc, &order).expect("the run executes");
    for (e, row) in rows.iter().enumerate() {
        let got: Vec<bool> = prog.guards.iter().map(|&(_, k)| row[k]).collect();
        assert_eq!(got, table[e], "monitor and reference disagree at event {e}");
    }
});
