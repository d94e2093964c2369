//! What every gating command shares: the one opt-in flag `--allow-cannot-tell` and the exit
//! code of a gate over three-valued verdicts.
//!
//! A gate (`detect --fail-on`, `simulate --fail-on`, `check`) exits 1 when a gated property
//! is *violated*, else 2 when one is *cannot tell* (saying on stderr which and why), else 0.
//! A *cannot tell* never passes silently: only `--allow-cannot-tell` lets it pass, and the
//! gate still says on stderr what it let through. A violation wins over a *cannot tell*
//! (exit 1): a known failure is the more useful answer.

use agentsim_models::Verdict;
use std::process::ExitCode;

/// The opt-in every gating command flattens.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct GateArgs {
    /// Treat a *cannot tell* as passing; by default a gate exits 2 on it.
    #[arg(long)]
    pub allow_cannot_tell: bool,
}

/// How a gate ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every gated verdict holds (or cannot be told, with `--allow-cannot-tell`): exit 0.
    Pass,
    /// Some gated verdict is violated: exit 1.
    Fail,
    /// Some gated verdict cannot be told and none is violated: exit 2.
    CannotTell,
}

impl Outcome {
    /// 0, 1 or 2.
    pub fn code(self) -> ExitCode {
        ExitCode::from(match self {
            Outcome::Pass => 0,
            Outcome::Fail => 1,
            Outcome::CannotTell => 2,
        })
    }
}

impl GateArgs {
    /// The outcome of a gate over `verdicts`.
    pub fn outcome<'a>(&self, verdicts: impl IntoIterator<Item = &'a Verdict>) -> Outcome {
        let (mut violated, mut untold) = (false, false);
        for v in verdicts {
            violated |= *v == Verdict::Violated;
            untold |= !v.is_told();
        }
        match (violated, untold) {
            (true, _) => Outcome::Fail,
            (false, true) if !self.allow_cannot_tell => Outcome::CannotTell,
            _ => Outcome::Pass,
        }
    }

    /// The stderr lines of a gate `flag` (e.g. `--fail-on`) over named verdicts: one per
    /// *cannot tell*, an `error:` when it decides the exit, else a `warning:` (a violation
    /// decided it, or `--allow-cannot-tell` let it pass).
    pub fn messages(&self, flag: &str, verdicts: &[(String, Verdict)]) -> Vec<String> {
        let outcome = self.outcome(verdicts.iter().map(|(_, v)| v));
        let untold = verdicts.iter().filter_map(|(n, v)| Some((n, v.reason()?)));
        untold
            .map(|(name, reason)| match outcome {
                Outcome::CannotTell => format!(
                    "error: {flag} {name}: cannot tell ({reason}); a gate does not pass on \
                     that (pass --allow-cannot-tell to let it)"
                ),
                Outcome::Fail => format!("warning: {flag} {name}: cannot tell ({reason})"),
                Outcome::Pass => format!(
                    "warning: {flag} {name}: cannot tell ({reason}); passing because of \
                     --allow-cannot-tell"
                ),
            })
            .collect()
    }

    /// Prints [`GateArgs::messages`] on stderr and returns the exit code.
    pub fn finish(&self, flag: &str, verdicts: &[(String, Verdict)]) -> ExitCode {
        for m in self.messages(flag, verdicts) {
            eprintln!("{m}");
        }
        self.outcome(verdicts.iter().map(|(_, v)| v)).code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::Reason;

    fn untold() -> Verdict {
        Verdict::CannotTell(Reason::Undecidable("no provenance".into()))
    }

    #[test]
    fn violated_beats_cannot_tell_which_beats_holds() {
        let strict = GateArgs::default();
        let lax = GateArgs {
            allow_cannot_tell: true,
        };
        let all = |g: GateArgs, vs: &[Verdict]| g.outcome(vs);
        assert_eq!(all(strict, &[Verdict::Holds]), Outcome::Pass);
        assert_eq!(all(strict, &[]), Outcome::Pass);
        assert_eq!(
            all(strict, &[Verdict::Holds, untold()]),
            Outcome::CannotTell
        );
        assert_eq!(all(lax, &[Verdict::Holds, untold()]), Outcome::Pass);
        assert_eq!(all(strict, &[untold(), Verdict::Violated]), Outcome::Fail);
        assert_eq!(all(lax, &[untold(), Verdict::Violated]), Outcome::Fail);
    }

    #[test]
    fn every_cannot_tell_is_said_with_its_reason() {
        let vs = vec![
            ("A1".to_owned(), Verdict::Holds),
            ("A3".to_owned(), untold()),
        ];
        let strict = GateArgs::default().messages("--fail-on", &vs);
        assert_eq!(
            strict,
            [
                "error: --fail-on A3: cannot tell (undecidable: no provenance); a gate does not \
              pass on that (pass --allow-cannot-tell to let it)"
            ]
        );
        let lax = GateArgs {
            allow_cannot_tell: true,
        };
        assert!(lax.messages("--fail-on", &vs)[0].starts_with("warning: --fail-on A3"));
    }
}
