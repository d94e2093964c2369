//! Sweep TOML (`agentsim sweep FILE`): the reader never panics, and the scenario of the first
//! grid point of a file it accepts (TOML text it generates) resolves.
#![no_main]

use agentsim::experiments::sweep;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz-sweep.toml");
    let Ok(f) = sweep::parse(path, text) else {
        return;
    };
    let g = &f.grid;
    let first = sweep::Point {
        agents: g.agents[0],
        cells: g.cells[0],
        overlap: g.overlap[0],
        generation_ms: g.generation_ms[0],
    };
    if let Err(e) = sweep::scenario(&f, path, &first) {
        panic!("an accepted sweep makes a scenario that does not resolve: {e:#}");
    }
});
