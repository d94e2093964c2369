//! Which span convention an OTLP/JSON export follows, so that `--from otel` reads an export of
//! OpenInference spans with this module's reader instead of finding no GenAI steps in it.
//!
//! A span is **OpenInference's** when it has `openinference.span.kind`, and a **step span**
//! of it when that kind is `AGENT`, `LLM`, `TOOL` or `RETRIEVER` (what [`super`] maps to
//! agents, generations, effects and reads; `CHAIN`, `GUARDRAIL`, … only link children). A span
//! is **GenAI's** when it has `gen_ai.operation.name`. The rule ([`choose`]):
//!
//! * no OpenInference step span outside GenAI's → the GenAI reader (OpenInference `CHAIN`
//!   spans in a GenAI export are links there, as any non-GenAI span is);
//! * no GenAI span outside OpenInference's, and some OpenInference step span → the
//!   OpenInference reader, and the report says so;
//! * both conventions with spans of their own → refused (exit 2) with the counts: either
//!   reader alone would leave the other's spans unread, and a merge of the two would count the
//!   same LLM call twice when both instrumentors saw it. The user picks `--from openinference`
//!   or `--from genai`, each of which says what it left out.
//!
//! The whole export is classified before any of it is read as steps; a file that never
//! mentions `"openinference.span.kind"` is not parsed twice ([`mentions`] streams it).

use crate::error::IngestError;
use crate::otel::otlp::Span;
use std::io::Read;
use std::path::Path;

/// The attribute OpenInference spans carry, as it appears in OTLP/JSON (a quoted key).
const KEY: &[u8] = b"\"openinference.span.kind\"";

/// How many spans follow which convention.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conventions {
    /// OpenInference step spans (`AGENT`, `LLM`, `TOOL`, `RETRIEVER`) without
    /// `gen_ai.operation.name`.
    pub openinference_steps: u64,
    /// Other OpenInference spans without `gen_ai.operation.name` (`CHAIN`, …).
    pub openinference_links: u64,
    /// GenAI spans without `openinference.span.kind`.
    pub genai: u64,
    /// Spans with both attributes.
    pub both: u64,
}

/// What reads the export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    GenAi,
    OpenInference,
    Mixed,
}

/// Counts the conventions of `spans`.
pub fn classify(spans: &[Span]) -> Conventions {
    let mut c = Conventions::default();
    for s in spans {
        let oi = s.attrs.contains_key("openinference.span.kind");
        let genai = s.attrs.contains_key("gen_ai.operation.name");
        let step = s.str("openinference.span.kind").is_some_and(|k| {
            ["AGENT", "LLM", "TOOL", "RETRIEVER"]
                .iter()
                .any(|x| k.eq_ignore_ascii_case(x))
        });
        match (oi, genai) {
            (true, true) => c.both += 1,
            (true, false) if step => c.openinference_steps += 1,
            (true, false) => c.openinference_links += 1,
            (false, true) => c.genai += 1,
            (false, false) => {}
        }
    }
    c
}

/// The reader for an export of these conventions (the rule in the module header).
pub fn choose(c: &Conventions) -> Reader {
    match (c.openinference_steps > 0, c.genai > 0) {
        (false, _) => Reader::GenAi,
        (true, false) => Reader::OpenInference,
        (true, true) => Reader::Mixed,
    }
}

/// The refusal of a mixed export, with its counts and the way out.
pub fn mixed_message(c: &Conventions) -> String {
    format!(
        "the export mixes span conventions: {} OpenInference step spans \
         (openinference.span.kind AGENT/LLM/TOOL/RETRIEVER) without gen_ai.operation.name, {} \
         GenAI spans (gen_ai.operation.name) without openinference.span.kind, {} with both; \
         either reader alone would leave the other's spans unread, so none is chosen: read it \
         with --from openinference (the GenAI-only spans are counted, not read) or --from genai \
         (the OpenInference-only spans are ignored), or export one instrumentor's spans",
        c.openinference_steps, c.genai, c.both
    )
}

/// Whether the file's bytes contain `"openinference.span.kind"` anywhere (read in chunks: the
/// memory is one chunk, whatever the file's size).
pub fn mentions(path: &Path) -> Result<bool, IngestError> {
    let io = |source| IngestError::Io {
        file: path.display().to_string(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    const CHUNK: usize = 1 << 20;
    let mut buf = vec![0u8; CHUNK + KEY.len()];
    // The last KEY.len() - 1 bytes of a chunk are kept in front of the next: a key split
    // across two reads is still found.
    let mut kept = 0;
    loop {
        let n = f.read(&mut buf[kept..]).map_err(io)?;
        if n == 0 {
            return Ok(false);
        }
        let end = kept + n;
        if contains(&buf[..end], KEY) {
            return Ok(true);
        }
        let keep = (KEY.len() - 1).min(end);
        buf.copy_within(end - keep..end, 0);
        kept = keep;
    }
}

/// Whether `text` contains `"openinference.span.kind"`.
pub fn mentions_text(text: &str) -> bool {
    contains(text.as_bytes(), KEY)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_split_across_chunks_is_found() {
        let dir = std::env::temp_dir().join(format!("oi-conv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.json");
        for pad in [0, (1 << 20) - 10, (1 << 20) + 3] {
            let mut text = " ".repeat(pad);
            text.push_str("{\"key\":\"openinference.span.kind\"}");
            std::fs::write(&p, &text).unwrap();
            assert!(mentions(&p).unwrap(), "pad {pad}");
            std::fs::write(&p, text.replace("span.kind", "span.kin")).unwrap();
            assert!(!mentions(&p).unwrap(), "pad {pad}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_rule() {
        let c = |openinference_steps, genai| Conventions {
            openinference_steps,
            openinference_links: 3,
            genai,
            both: 1,
        };
        assert_eq!(
            choose(&c(0, 5)),
            Reader::GenAi,
            "CHAIN links in a GenAI export"
        );
        assert_eq!(choose(&c(4, 0)), Reader::OpenInference);
        assert_eq!(choose(&c(4, 5)), Reader::Mixed);
        assert!(mixed_message(&c(4, 5)).contains("4 OpenInference step spans"));
    }
}
