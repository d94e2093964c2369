//! The `reproduce` step `gallery`: an `agentsim view` page for every sample history
//! (`scenarios/histories/`), every OTel and LangGraph example trace (`scenarios/traces/`) and
//! each of the 16 lattice witnesses, in `results/gallery/`.
//!
//! The inputs are compiled in (`include_str!`, `include_bytes!`), so an installed binary
//! makes the same pages; the witnesses are searched again as the `lattice-witnesses` step
//! searches them. A page's bytes depend only on its input, so `reproduce --check` holds them.
//! The step lives with the command (it needs detect's report, a command's work) and is listed
//! by `cmd/reproduce.rs` after the experiments'.

use super::inputs::page_of;
use crate::artifacts::{Artifact, Ctx, Step};
use crate::experiments::lattice_witnesses::{find_all, DEFAULT_MAX_STATES};
use crate::view;
use agentsim_checker::jobs::lattice_witnesses::Order;
use agentsim_ingest::langgraph::read_langgraph;
use agentsim_ingest::otel::parse_otel;
use anyhow::{Context, Result};

/// The step.
pub const STEP: Step = Step {
    name: "gallery",
    about: "agentsim view pages of the sample histories, example traces and lattice witnesses",
    run: step_files,
};

macro_rules! inputs {
    ($dir:literal: $($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../../../../scenarios/", $dir, "/", $name)))),*]
    };
}
macro_rules! databases {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_bytes!(concat!("../../../../scenarios/traces/langgraph/", $name)) as &[u8])),*]
    };
}

const HISTORIES: [(&str, &str); 8] = inputs!("histories":
    "a1_stale_generation.jsonl", "a2_phantom_tool.jsonl", "a3_causal_cascade.jsonl",
    "a4_pinned.jsonl", "a4_split_view.jsonl", "a6_tool_reordering.jsonl", "clean.jsonl",
    "l1_struct_witness.jsonl",
);

const OTEL: [(&str, &str); 8] = inputs!("traces/otel":
    "memory_lost_update.json", "memory_occ.json", "memory_unidentified.json",
    "memory_versions_only.json", "phantom_signature.json", "phantom_tool.json",
    "tool_reordering.json", "tool_sequenced.json",
);

const LANGGRAPH: [(&str, &[u8]); 10] = databases!(
    "deerflow_3123.sqlite",
    "deerflow_3123_fixed.sqlite",
    "double_write.sqlite",
    "double_write_fixed.sqlite",
    "fold_order.sqlite",
    "stale_read.sqlite",
    "stale_read_fixed.sqlite",
    "toolnode_fanout.sqlite",
    "toolnode_fanout_fixed.sqlite",
    "toolnode_inline.sqlite",
);

fn stem(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

fn file(path: String, page: &view::Page, about: String) -> Artifact {
    Artifact {
        path,
        bytes: view::render(page).into_bytes(),
        about,
    }
}

fn step_files(ctx: &Ctx) -> Result<Vec<Artifact>> {
    let mut files = Vec::new();
    for (name, text) in HISTORIES {
        let shown = format!("scenarios/histories/{name}");
        let h = agentsim_jsonl::parse_history(text, &shown)?;
        let page = page_of(h, name.to_owned(), &shown, None)?;
        let about = format!("the sample history {name}, with detect's report");
        files.push(file(
            format!("gallery/history-{}.html", stem(name)),
            &page,
            about,
        ));
    }
    for (name, text) in OTEL {
        let shown = format!("scenarios/traces/otel/{name}");
        let i = agentsim_ingest::with_initial_state(parse_otel(text, &shown)?);
        let page = page_of(i.history, name.to_owned(), &shown, Some(i.report))?;
        let about =
            format!("the OTel example trace {name}, with the ingest's and detect's reports");
        files.push(file(
            format!("gallery/otel-{}.html", stem(name)),
            &page,
            about,
        ));
    }
    ctx.progress("LangGraph examples");
    let scratch = std::env::temp_dir().join(format!("agentsim-gallery-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).with_context(|| format!("{}", scratch.display()))?;
    let pages = LANGGRAPH.iter().map(|&(name, bytes)| -> Result<Artifact> {
        let db = scratch.join(name);
        std::fs::write(&db, bytes).with_context(|| format!("{}", db.display()))?;
        let shown = format!("scenarios/traces/langgraph/{name}");
        let i = read_langgraph(&db, None).with_context(|| shown.clone())?;
        let i = agentsim_ingest::with_initial_state(i);
        let mut page = page_of(i.history, name.to_owned(), &shown, Some(i.report))?;
        // The report names the file it read: the scratch copy, whose path changes per run.
        let scratch_name = db.display().to_string();
        page.ingest = page.ingest.map(|t| t.replace(&scratch_name, &shown));
        let about = format!("the LangGraph example {name}, with the ingest's and detect's reports");
        Ok(file(
            format!("gallery/langgraph-{}.html", stem(name)),
            &page,
            about,
        ))
    });
    let langgraph: Result<Vec<Artifact>> = pages.collect();
    let _ = std::fs::remove_dir_all(&scratch);
    files.extend(langgraph?);
    ctx.progress("searching the 16 lattice witnesses");
    for w in find_all(Order::Depth, DEFAULT_MAX_STATES)? {
        let name = w.file_name();
        let page = page_of(w.history, name.clone(), &format!("witnesses/{name}"), None)?;
        let about = format!("the lattice witness of {}", w.point.label());
        files.push(file(
            format!("gallery/witness-{}.html", stem(&name)),
            &page,
            about,
        ));
    }
    Ok(files)
}
