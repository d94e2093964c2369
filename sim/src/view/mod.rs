//! The one-file explorer page of `agentsim view`: a [`Page`] (what one run shows, already named
//! and explained by the commands that read it) rendered to a self-contained HTML file.
//!
//! The page is the template `page.html` with its style (`view.css`), its script (`view.js`)
//! and the page's data (one JSON document) inlined: no network request, no external font, so
//! it opens from `file://` offline. [`render`] is pure: the same page gives the same bytes (the
//! data's maps are ordered, nothing reads a clock). The script draws the lanes, the anomaly
//! list and the step list from the data; it decides nothing: every anomaly and every line of
//! explanation comes from `detect` or the checker, as the command passed them in.
//!
//! A rendered page proves only that these records were drawn; it does not check that the
//! records are a valid history (the readers do that before a page is built).

mod encode;

pub use encode::RECORDS_MAX;

use serde_json::Value as Json;

/// What the page shows, by the input it was made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A JSON Lines history.
    History,
    /// A trace ingested from another system (`--from otel|langgraph`).
    Trace,
    /// A checker counterexample (ITF).
    Counterexample,
    /// A simulated trial re-run from its replay line.
    Schedule,
}

impl Kind {
    /// The name the page and its tests use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::History => "history",
            Kind::Trace => "trace",
            Kind::Counterexample => "counterexample",
            Kind::Schedule => "schedule",
        }
    }
}

/// A cell and the value it held (`None`: NULL).
pub type CellValue = (String, Option<String>);

/// One operation record, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    /// Its 0-based position in the log (the number detect's lines use).
    pub index: usize,
    pub agent: String,
    pub read_time: u64,
    pub write_time: u64,
    pub reads: Vec<CellValue>,
    pub writes: Vec<CellValue>,
    /// Effects in issue order, then in completion order.
    pub io: Vec<CellValue>,
    pub co: Vec<CellValue>,
    /// Aborted at commit or retracted later (the record format does not tell them apart).
    pub aborted: bool,
    pub tool: Option<String>,
    pub preds: Vec<u32>,
    /// The registry at commit: each tool and its signature version.
    pub registry: Vec<(String, u32)>,
    /// Milliseconds of its read and its commit, when the input has a clock: the simulated
    /// clock of a schedule, or wall time since the trace's first step ([`Page::wall`]).
    pub ms: Option<(u64, u64)>,
}

/// One anomaly as detect (or the checker) reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anom {
    /// The list it belongs to: `A1` … `A6`, `L1_struct`, or a checker property.
    pub list: String,
    /// The explanation, as `detect` prints it.
    pub text: String,
    /// Its witness records.
    pub records: Vec<usize>,
    /// The conflicting write and the record it conflicts with (the arrow drawn between them).
    pub arrow: Option<(usize, usize)>,
}

/// One step of a counterexample or a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub label: String,
    /// The agent that acted, if the step names one.
    pub agent: Option<String>,
    /// How many records the log holds after the step.
    pub committed: usize,
    /// The state's variables, each as compact JSON text, by name.
    pub vars: Vec<(String, String)>,
}

/// Everything one page shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    pub kind: Option<Kind>,
    pub title: String,
    pub records: Vec<Rec>,
    /// Records in the input (more than `records` when the view was narrowed).
    pub total_records: usize,
    pub anomalies: Vec<Anom>,
    /// detect's (or the checker's) text report.
    pub report: String,
    /// The ingestion's report, for a trace.
    pub ingest: Option<String>,
    pub steps: Vec<Step>,
    /// Notes shown above the timeline (what was narrowed, what could not be shown).
    pub notes: Vec<String>,
    /// The records' milliseconds are wall time (a trace's span times), not a simulated clock.
    pub wall: bool,
    /// Why the page's input decides nothing (an empty history: *cannot tell*), shown in place
    /// of the anomaly list; `None` when the listed witnesses (or none) are the answer.
    pub undecided: Option<String>,
}

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("view.css");
const SCRIPT: &str = include_str!("view.js");

/// The page as one HTML document.
pub fn render(page: &Page) -> String {
    let data = encode::encode(page);
    let json = serde_json::to_string(&data).expect("a JSON value serializes");
    // Inside <script>, `</script` or `<!--` would end or change the element: every `<` in the
    // data is inside a string, where `\u003c` means the same.
    let json = json.replace('<', "\\u003c");
    let title = format!(
        "agentsim view: {}",
        agentsim_models::escape_text(&page.title)
    );
    let out = TEMPLATE
        .replace("{{TITLE}}", &escape_html(&title))
        .replace("/*{{STYLE}}*/", STYLE)
        .replace("/*{{SCRIPT}}*/", SCRIPT);
    // The data last: nothing in it is taken for a placeholder.
    out.replacen("{{DATA}}", &json, 1)
}

/// The page's data document (what the script reads), for tests and tools.
pub fn data(page: &Page) -> Json {
    encode::encode(page)
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(index: usize, agent: &str, rt: u64, wt: u64) -> Rec {
        Rec {
            index,
            agent: agent.into(),
            read_time: rt,
            write_time: wt,
            reads: vec![("doc".into(), None)],
            writes: vec![("doc".into(), Some(format!("v{index}")))],
            io: vec![],
            co: vec![],
            aborted: false,
            tool: None,
            preds: vec![],
            registry: vec![],
            ms: None,
        }
    }

    #[test]
    fn a_page_is_one_file_without_requests_and_the_same_bytes_each_time() {
        let page = Page {
            kind: Some(Kind::History),
            title: "x<y>.jsonl".into(),
            records: vec![rec(0, "editor", 0, 1), rec(1, "</script>", 0, 2)],
            total_records: 2,
            ..Page::default()
        };
        let html = render(&page);
        assert_eq!(html, render(&page));
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>agentsim view: x&lt;y&gt;.jsonl</title>"));
        // The agent named `</script>` cannot end the data element.
        assert_eq!(html.matches("</script>").count(), 2);
        for banned in [
            "src=",
            "href=",
            "@import",
            "url(http",
            "fetch(",
            "XMLHttpRequest",
            "<link",
        ] {
            assert!(!html.contains(banned), "the page holds {banned}");
        }
    }
}
