//! Split-view TOML (`agentsim split-view FILE`): the reader never panics, and trial 0 of a
//! file it accepts runs under every read discipline with the literal and fast A4 detectors
//! agreeing on its history.
#![no_main]

mod common;

use agentsim::experiments::split_view::{run_trial, Scenario};
use agentsim_models::detect::a4;
use agentsim_models::replica::ReadDiscipline;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::write("split-view.toml", data);
    let Ok(sc) = Scenario::load(&path) else {
        return;
    };
    for d in ReadDiscipline::ALL {
        let rt = run_trial(&sc, d, 0);
        let records = rt.log();
        assert_eq!(
            a4::spec(records),
            a4::fast(records),
            "A4 forms disagree under {d:?}"
        );
    }
});
