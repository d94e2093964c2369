//! The project's one verdict vocabulary: a property *holds*, is *violated*, or we *cannot
//! tell* — and then always why.
//!
//! A gate (`--fail-on`, `check`) never passes on [`Verdict::CannotTell`]: it exits 2 with the
//! [`Reason`], unless the user opts in with `--allow-cannot-tell`. The reasons are the ways an
//! answer can be missing:
//! * [`Reason::Undecidable`]: the input lacks what the definition needs (a trace without
//!   provenance cannot show A3; a single-store history cannot show A4), so "none found" is no
//!   answer.
//! * [`Reason::UpperBound`]: the input over-approximates, so what was found may be a false
//!   alarm. Only a *violation* is then untold: an upper bound that finds nothing has earned
//!   *holds* (nothing real can hide below an over-approximation that is empty).
//! * [`Reason::Vacuous`]: the property cannot be violated by the model at all, so passing it
//!   says nothing.
//! * [`Reason::EmptyInput`]: nothing was read (no record, no trial).
//! * [`Reason::Budget`]: a bound was hit before the answer was reached.
//!
//! Text is [`std::fmt::Display`] (`holds`, `violated`, `cannot tell (undecidable: …)`); JSON is
//! `{"verdict": "holds" | "violated" | "cannot_tell", "reason": {"kind": …, "detail": …}}`
//! with `reason` only on *cannot tell* (`kind` is `undecidable`, `upper_bound`, `vacuous`,
//! `empty_input` or `budget`; `detail` the sentence, absent for `empty_input`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Why a verdict cannot be told.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Reason {
    /// The input lacks what the definition needs; the sentence says what.
    Undecidable(String),
    /// What was found may be a false alarm; the sentence says why.
    UpperBound(String),
    /// The property cannot be violated here, so its passing says nothing.
    Vacuous(String),
    /// Nothing to judge: no record, no trial.
    EmptyInput,
    /// A bound was hit first; the sentence names it and what to raise.
    Budget(String),
}

impl Reason {
    /// `undecidable`, `upper_bound`, `vacuous`, `empty_input` or `budget` (the JSON `kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Reason::Undecidable(_) => "undecidable",
            Reason::UpperBound(_) => "upper_bound",
            Reason::Vacuous(_) => "vacuous",
            Reason::EmptyInput => "empty_input",
            Reason::Budget(_) => "budget",
        }
    }

    /// The sentence, if the reason has one.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Reason::Undecidable(s) | Reason::UpperBound(s) | Reason::Vacuous(s) => Some(s),
            Reason::Budget(s) => Some(s),
            Reason::EmptyInput => None,
        }
    }
}

impl fmt::Display for Reason {
    /// `undecidable: spans carry no provenance`, `empty input`, …
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.kind().replace('_', " "))?;
        match self.detail() {
            Some(d) => write!(f, ": {d}"),
            None => Ok(()),
        }
    }
}

/// One property's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Violated,
    CannotTell(Reason),
}

impl Verdict {
    /// `holds`, `violated` or `cannot_tell` (the JSON `verdict`).
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::CannotTell(_) => "cannot_tell",
        }
    }

    /// The reason of a *cannot tell*.
    pub fn reason(&self) -> Option<&Reason> {
        match self {
            Verdict::CannotTell(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the verdict is told (holds or violated).
    pub fn is_told(&self) -> bool {
        self.reason().is_none()
    }

    /// The verdict of a detector's answer on an input that over-approximates: a violation
    /// found may be a false alarm (`why`), a clean answer holds.
    pub fn upper_bound(found: bool, why: &str) -> Verdict {
        match found {
            true => Verdict::CannotTell(Reason::UpperBound(why.to_owned())),
            false => Verdict::Holds,
        }
    }

    /// The verdict of an exact detector's answer.
    pub fn of_found(found: bool) -> Verdict {
        match found {
            true => Verdict::Violated,
            false => Verdict::Holds,
        }
    }
}

impl fmt::Display for Verdict {
    /// `holds`, `violated`, or `cannot tell (REASON)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Holds => f.write_str("holds"),
            Verdict::Violated => f.write_str("violated"),
            Verdict::CannotTell(r) => write!(f, "cannot tell ({r})"),
        }
    }
}

/// The JSON form: `{"verdict": …, "reason": …}`, `reason` only on *cannot tell*.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    verdict: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<Reason>,
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            verdict: self.name().to_owned(),
            reason: self.reason().cloned(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
        use serde::de::Error;
        let w = Wire::deserialize(d)?;
        match (w.verdict.as_str(), w.reason) {
            ("holds", None) => Ok(Verdict::Holds),
            ("violated", None) => Ok(Verdict::Violated),
            ("cannot_tell", Some(r)) => Ok(Verdict::CannotTell(r)),
            ("cannot_tell", None) => Err(D::Error::custom("`cannot_tell` needs a `reason`")),
            ("holds" | "violated", Some(_)) => Err(D::Error::custom(format!(
                "`{}` takes no `reason` (only `cannot_tell` does)",
                w.verdict
            ))),
            (other, _) => Err(D::Error::custom(format!(
                "unknown verdict `{other}` (expected holds, violated or cannot_tell)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undecidable() -> Verdict {
        Verdict::CannotTell(Reason::Undecidable("no provenance".into()))
    }

    #[test]
    fn text_says_the_verdict_and_the_reason() {
        assert_eq!(Verdict::Holds.to_string(), "holds");
        assert_eq!(Verdict::Violated.to_string(), "violated");
        assert_eq!(
            undecidable().to_string(),
            "cannot tell (undecidable: no provenance)"
        );
        let empty = Verdict::CannotTell(Reason::EmptyInput);
        assert_eq!(empty.to_string(), "cannot tell (empty input)");
        let ub = Verdict::upper_bound(true, "whole state read");
        assert_eq!(
            ub.to_string(),
            "cannot tell (upper bound: whole state read)"
        );
    }

    #[test]
    fn an_upper_bound_earns_holds_but_not_violated() {
        assert_eq!(Verdict::upper_bound(false, "x"), Verdict::Holds);
        assert!(!Verdict::upper_bound(true, "x").is_told());
        assert_eq!(Verdict::of_found(true), Verdict::Violated);
    }

    #[test]
    fn json_has_the_three_strings_and_a_reason_only_on_cannot_tell() {
        let text = |v: &Verdict| serde_json::to_string(v).unwrap();
        assert_eq!(text(&Verdict::Holds), r#"{"verdict":"holds"}"#);
        assert_eq!(text(&Verdict::Violated), r#"{"verdict":"violated"}"#);
        assert_eq!(
            text(&undecidable()),
            r#"{"verdict":"cannot_tell","reason":{"kind":"undecidable","detail":"no provenance"}}"#
        );
        assert_eq!(
            text(&Verdict::CannotTell(Reason::EmptyInput)),
            r#"{"verdict":"cannot_tell","reason":{"kind":"empty_input"}}"#
        );
        for v in [Verdict::Holds, Verdict::Violated, undecidable()] {
            assert_eq!(serde_json::from_str::<Verdict>(&text(&v)).unwrap(), v);
        }
        let budget = Verdict::CannotTell(Reason::Budget("states_max".into()));
        assert_eq!(
            serde_json::from_str::<Verdict>(&text(&budget)).unwrap(),
            budget
        );
    }

    #[test]
    fn json_refuses_a_verdict_and_reason_that_do_not_fit() {
        let bad = |s: &str| serde_json::from_str::<Verdict>(s).unwrap_err().to_string();
        assert!(bad(r#"{"verdict":"cannot_tell"}"#).contains("needs a `reason`"));
        let r = r#"{"verdict":"holds","reason":{"kind":"empty_input"}}"#;
        assert!(bad(r).contains("takes no `reason`"));
        assert!(bad(r#"{"verdict":"maybe"}"#).contains("unknown verdict `maybe`"));
    }
}
