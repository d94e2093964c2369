//! A repeat cap: the same scenario with every agent's `repeat` lowered to at most N, so a
//! workload too large to explore at its own size can be explored at a smaller one.
//!
//! Only `repeat` is capped. `count` copies are left as written: a copy is a named agent that
//! retract targets, traces and replay lines refer to, and dropping one would change which
//! agents a scenario has rather than how long each runs. A verdict on a capped scenario holds
//! for the capped scenario only, and callers say the cap beside it: a capped run's history
//! is a prefix of some run at the scenario's own counts, so an anomaly whose witness a longer
//! history keeps is reachable there too, but an unreachable one says nothing past the cap.

use super::Scenario;

/// What a repeat cap did to a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepeatCap {
    /// The cap: every agent repeats at most this many times.
    pub max: u32,
    /// Some agent's `repeat` was above the cap (the scenario changed).
    pub lowered: bool,
}

/// A repeat cap of zero: an agent must run its script at least once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a repeat cap must be at least 1")]
pub struct ZeroCap;

impl Scenario {
    /// The scenario with every agent's `repeat` at most `max` (see the module header).
    pub fn with_repeat_cap(&self, max: u32) -> Result<(Scenario, RepeatCap), ZeroCap> {
        if max == 0 {
            return Err(ZeroCap);
        }
        let mut sc = self.clone();
        let mut lowered = false;
        for a in &mut sc.agents {
            if a.repeat > max {
                a.repeat = max;
                lowered = true;
            }
            assert!(a.repeat <= max);
        }
        // Recorded only when it changed something: an uncapped scenario's replay lines stay
        // plain.
        if lowered {
            sc.repeat_cap = Some(max);
        }
        Ok((sc, RepeatCap { max, lowered }))
    }

    /// The largest `repeat` of any agent (the cap at which the scenario is its own size).
    pub fn repeat_max(&self) -> u32 {
        self.agents.iter().map(|a| a.repeat).max().unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const TEXT: &str =
        "name = \"c\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\ncells = [\"x\"]\n\
        [[agents]]\nname = \"a\"\nrepeat = 5\nscript = [{ do = \"read\", cells = [\"x\"] }, \
        { do = \"write\", cells = [\"x\"] }]\n\
        [[agents]]\nname = \"b\"\ncount = 3\nscript = [{ do = \"read\", cells = [\"x\"] }, \
        { do = \"write\", cells = [\"x\"] }]\n";

    #[test]
    fn caps_repeat_and_keeps_copies() {
        let sc = Scenario::parse(Path::new("c.toml"), TEXT).unwrap();
        assert_eq!(sc.repeat_max(), 5);
        let (c, cap) = sc.with_repeat_cap(2).unwrap();
        assert_eq!(
            cap,
            RepeatCap {
                max: 2,
                lowered: true
            }
        );
        let repeats: Vec<u32> = c.agents.iter().map(|a| a.repeat).collect();
        assert_eq!(repeats, [2, 1, 1, 1]);
        assert_eq!(c.repeat_cap, Some(2));
        let (same, cap) = sc.with_repeat_cap(5).unwrap();
        assert!(!cap.lowered);
        assert_eq!(same.repeat_cap, None);
        assert_eq!(same.agents.iter().map(|a| a.repeat).max(), Some(5));
        assert_eq!(sc.with_repeat_cap(0).unwrap_err(), ZeroCap);
    }
}
