//! The scenario-wide settings of a scenario file: `[schedule]`, `[retry]`, `[tokens]` and
//! `[generator]` (which loads a recording), resolved with defaults. Split from
//! [`super::resolve`], which resolves agents and scripts.

use super::limits::{within, EVENTS_MAX_MAX, TOKENS_MAX};
use super::raw::{RawRetryMax, RawScenario};
use super::resolve::Resolver;
use super::{GeneratorSpec, OnMissing, RetryPolicy, TokenModel, EVENTS_MAX_DEFAULT};
use crate::dist::Dist;
use crate::generator::recorded::Recording;
use crate::source::ScenarioError;
use std::path::Path;
use std::sync::Arc;

type Res<T> = Result<T, ScenarioError>;

/// The largest scheduling window: due time + window must stay below the engine's "parked"
/// due time (`u64::MAX`, an agent waiting for a message that nobody has sent yet).
pub const WINDOW_MS_MAX: u64 = 1_000_000_000_000;

impl Resolver<'_> {
    pub(super) fn tokens(&self, raw: &RawScenario) -> Res<TokenModel> {
        let Some(t) = &raw.tokens else {
            return Ok(TokenModel {
                prompt_base: 0,
                prompt_per_cell: 0,
                completion: Dist::ZERO,
            });
        };
        let completion = self
            .dist(Some(&t.completion), "completion")?
            .unwrap_or(Dist::ZERO);
        let count = |n: &Option<toml::Spanned<u64>>, key: &str| match n {
            None => Ok(0),
            Some(n) => within(*n.get_ref(), 0, TOKENS_MAX).or_else(|m| self.err(n.span(), key, m)),
        };
        Ok(TokenModel {
            prompt_base: count(&t.prompt_base, "prompt_base")?,
            prompt_per_cell: count(&t.prompt_per_cell, "prompt_per_cell")?,
            completion,
        })
    }

    pub(super) fn retry(&self, raw: &RawScenario) -> Res<RetryPolicy> {
        let Some(r) = &raw.retry else {
            return Ok(RetryPolicy {
                max: 0,
                unbounded: false,
                backoff_ms: Dist::ZERO,
            });
        };
        let backoff_ms = self
            .dist(r.backoff_ms.as_ref(), "backoff_ms")?
            .unwrap_or(Dist::ZERO);
        let (max, unbounded) = match r.max.get_ref() {
            RawRetryMax::Count(n) => (*n, false),
            RawRetryMax::Word(w) if w == "unbounded" => (u32::MAX, true),
            RawRetryMax::Word(w) => {
                let msg = format!("`{w}` is not a count or \"unbounded\"");
                return self.err(r.max.span(), "max", msg);
            }
        };
        Ok(RetryPolicy {
            max,
            unbounded,
            backoff_ms,
        })
    }

    pub(super) fn generator(&mut self, raw: &RawScenario, path: &Path) -> Res<GeneratorSpec> {
        let Some(g) = &raw.generator else {
            return Ok(GeneratorSpec::Stub);
        };
        let on_missing = match &g.on_missing {
            None => OnMissing::Error,
            Some(m) => OnMissing::parse(m.get_ref())
                .or_else(|e| self.err(m.span(), "on_missing", e.to_string()))?,
        };
        match (g.kind.get_ref().as_str(), &g.recording) {
            ("stub", None) => Ok(GeneratorSpec::Stub),
            ("recorded", Some(rec)) => {
                let base = path.parent().unwrap_or(Path::new("."));
                let file = base.join(rec.get_ref());
                let recording = Recording::load(&file, &mut self.names)?;
                Ok(GeneratorSpec::Recorded {
                    recording: Arc::new(recording),
                    on_missing,
                })
            }
            ("stub", Some(rec)) => self.err(
                rec.span(),
                "recording",
                "a `stub` generator takes no recording",
            ),
            ("recorded", None) => self.err(
                g.kind.span(),
                "recording",
                "a `recorded` generator needs `recording`",
            ),
            (k, _) => self.err(
                g.kind.span(),
                "kind",
                format!("unknown generator `{k}`; valid: stub, recorded"),
            ),
        }
    }

    pub(super) fn schedule(&self, raw: &RawScenario) -> Res<(u64, u64)> {
        let Some(s) = &raw.schedule else {
            return Ok((0, EVENTS_MAX_DEFAULT));
        };
        let events_max = s
            .events_max
            .as_ref()
            .map_or(EVENTS_MAX_DEFAULT, |e| *e.get_ref());
        if let Some(e) = &s.events_max {
            within(events_max, 1, EVENTS_MAX_MAX)
                .or_else(|m| self.err(e.span(), "events_max", m))?;
        }
        let window_ms = s.window_ms.as_ref().map_or(0, |w| *w.get_ref());
        if let Some(w) = s.window_ms.as_ref().filter(|_| window_ms > WINDOW_MS_MAX) {
            let msg = format!("{window_ms} exceeds {WINDOW_MS_MAX} ms (about 31 years)");
            return self.err(w.span(), "window_ms", msg);
        }
        Ok((window_ms, events_max))
    }
}
