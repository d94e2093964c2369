use super::*;
use std::path::Path;

fn scenario(text: &str) -> Scenario {
    Scenario::parse(Path::new("t.toml"), text).expect("a valid scenario")
}

fn run(sc: &Scenario, runtime: &str, f: Fairness) -> Liveness {
    let mut cfg = LiveConfig::new(Stack::parse(runtime).expect("a runtime"));
    cfg.fairness = f;
    liveness(sc, &cfg).expect("explores")
}

const WAIT_FOR_EACH_OTHER: &str = r#"
name = "wait-for-each-other"
runtime = "vanilla"
cells = ["x", "y"]

[[agents]]
name = "a"
script = [
  { do = "read", cells = ["y"], label = "poll" },
  { do = "write", cells = [] },
  { do = "branch", cell = "y", when = "null", goto = "poll" },
  { do = "read", cells = [] },
  { do = "write", cells = ["x"] },
]

[[agents]]
name = "b"
script = [
  { do = "read", cells = ["x"], label = "poll" },
  { do = "write", cells = [] },
  { do = "branch", cell = "x", when = "null", goto = "poll" },
  { do = "read", cells = [] },
  { do = "write", cells = ["y"] },
]
"#;

#[test]
fn probe() {
    let sc = scenario(WAIT_FOR_EACH_OTHER);
    let l = run(&sc, "vanilla", Fairness::Weak);
    eprintln!("{l:#?}");
    let sc = Scenario::load(Path::new("../../scenarios/liveness/retry-server.toml")).unwrap();
    let mut cfg = LiveConfig::new(Stack::parse("ssi").unwrap());
    cfg.max_states = 3000;
    let l = liveness(&sc, &cfg).unwrap();
    eprintln!("{l:#?}");
}
