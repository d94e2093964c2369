//! Timed exploration's zones: which orders of the pending events the latency bounds allow.
//!
//! In an abstract-time trial whose scheduler asks for timing ([`Scheduler::timed`]), the
//! engine keeps a zone (Dill 1989; UPPAAL's difference-bound matrices) over "now" and the
//! due time of every agent's pending event, each a whole millisecond. When agent i's event
//! is chosen, it must be able to come next: `t_i ≤ t_j + window_ms` for every other pending
//! event j (the engine's enabled set: due within the window of the earliest) and the zone
//! closed under those constraints must not be empty. It then runs at `max(now, t_i)`: the
//! zone splits into `t_i ≥ now` (now becomes t_i) and `t_i < now` (possible only with a
//! window; now stays), a union of zones kept as a list. The step's next event is then due at
//! `now + [lo, hi]`, the bounds of whatever the step drew (a generation's latency, the last
//! of a write's effects, a wait, a retry's backoff, see [`crate::bounds`]). So the engine
//! offers only the agents whose event can come next under some assignment of latencies
//! within their bounds, and the search is exact for those bounds: integer bounds on integer
//! times, no widening.
//!
//! What it abstracts: probabilities (an order possible only in a 10^-9 corner is as
//! possible as any), a lognormal's tails beyond the stated quantiles, and message passing
//! (`[cpl]` scenarios are not explored; a parked agent is not a pending event here).
//!
//! [`Scheduler::timed`]: crate::scheduler::Scheduler::timed

use super::{messages, Engine, SimError};
use crate::bounds::Quantiles;
use crate::dist::Dist;
use crate::generator::{Generation, Output};
use crate::scenario::EffectOrder;
use crate::scheduler::ChoiceKind;
use agentsim_models::runtime::Runtime;

/// A bound on a difference of two variables; `INF` is none. Times are at most 2^62 ms (the
/// engine's largest sample), so sums along any path of a small matrix never overflow.
type Bound = i128;
const INF: Bound = i128::MAX;
/// A latency bound at or past this (about 73 million years) is no bound: the engine
/// saturates its clock far below any path that would need it.
const HORIZON_MS: u64 = 1 << 61;
/// The variable of the zero clock and of "now"; agent i's pending event is `2 + i`.
const ZERO: usize = 0;
const NOW: usize = 1;
/// The most zones one path keeps (a window splits a zone in two at most once per step, and
/// zones included in others are dropped); past it the trial stops with an error.
pub const ZONES_MAX: usize = 4096;

fn var(agent: usize) -> usize {
    2 + agent
}

fn add(a: Bound, b: Bound) -> Bound {
    if a == INF || b == INF {
        INF
    } else {
        a + b
    }
}

/// A difference-bound matrix over `n` variables, kept closed (every entry the tightest bound
/// any path of constraints gives): `m[i * n + j]` bounds `x_i - x_j`. Empty when a diagonal
/// entry is negative.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dbm {
    n: usize,
    m: Vec<Bound>,
}

impl Dbm {
    /// `n` variables, each ≥ 0 (`x_0` is the zero clock), otherwise unconstrained.
    pub fn new(n: usize) -> Dbm {
        assert!(n >= 1, "a matrix has the zero clock");
        let mut m = vec![INF; n * n];
        for i in 0..n {
            m[i * n + i] = 0;
            m[i] = 0; // 0 - x_i ≤ 0
        }
        Dbm { n, m }
    }

    /// The bound on `x_i - x_j`.
    pub fn get(&self, i: usize, j: usize) -> Bound {
        self.m[i * self.n + j]
    }

    fn set(&mut self, i: usize, j: usize, c: Bound) {
        self.m[i * self.n + j] = c;
    }

    pub fn is_empty(&self) -> bool {
        self.get(ZERO, ZERO) < 0
    }

    /// Adds `x_i - x_j ≤ c` and closes again (incrementally: a new shortest path uses the
    /// new edge at most once). Returns whether the zone is still non-empty.
    pub fn constrain(&mut self, i: usize, j: usize, c: Bound) -> bool {
        if self.is_empty() {
            return false;
        }
        if c >= self.get(i, j) {
            return true;
        }
        if add(c, self.get(j, i)) < 0 {
            self.set(ZERO, ZERO, -1);
            return false;
        }
        self.set(i, j, c);
        for a in 0..self.n {
            let ai = self.get(a, i);
            if ai == INF {
                continue;
            }
            for b in 0..self.n {
                let v = add(add(ai, c), self.get(j, b));
                if v < self.get(a, b) {
                    self.set(a, b, v);
                }
            }
        }
        true
    }

    /// Closes the matrix from scratch (Floyd–Warshall); marks it empty on a negative cycle.
    pub fn close(&mut self) {
        let n = self.n;
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    let v = add(self.get(i, k), self.get(k, j));
                    if v < self.get(i, j) {
                        self.set(i, j, v);
                    }
                }
            }
        }
        if (0..n).any(|i| self.get(i, i) < 0) {
            self.set(ZERO, ZERO, -1);
        }
    }

    /// Forgets everything about `x` but `x ≥ 0` (closed in, closed out).
    pub fn free(&mut self, x: usize) {
        for i in 0..self.n {
            if i != x {
                self.set(x, i, INF);
                let i0 = self.get(i, ZERO);
                self.set(i, x, i0);
            }
        }
        self.set(x, x, 0);
    }

    /// `x := y` (closed in, closed out).
    pub fn assign(&mut self, x: usize, y: usize) {
        for i in 0..self.n {
            if i != x {
                let (yi, iy) = (self.get(y, i), self.get(i, y));
                self.set(x, i, yi);
                self.set(i, x, iy);
            }
        }
        self.set(x, x, 0);
    }

    /// Whether every valuation of `other` is one of this zone's.
    pub fn includes(&self, other: &Dbm) -> bool {
        other.is_empty() || self.m.iter().zip(&other.m).all(|(a, b)| a >= b)
    }
}

/// The timed state of one trial: the zones (their union is every assignment of due times
/// consistent with the path so far) and which agents have a pending event.
pub(super) struct Zones {
    q: Quantiles,
    window: Bound,
    zones: Vec<Dbm>,
    pending: Vec<bool>,
}

impl Zones {
    /// Now is 0 and agent i's first event is due within `starts[i]` (if `running[i]`).
    pub(super) fn new(
        q: Quantiles,
        window_ms: u64,
        starts: &[(u64, u64)],
        running: &[bool],
    ) -> Zones {
        let mut z = Dbm::new(2 + starts.len());
        z.constrain(NOW, ZERO, 0);
        let mut out = Zones {
            q,
            window: Bound::from(window_ms),
            zones: vec![z],
            pending: vec![false; starts.len()],
        };
        for (i, &(lo, hi)) in starts.iter().enumerate() {
            if running[i] {
                out.schedule(i, lo, hi);
            }
        }
        out
    }

    pub(super) fn quantiles(&self) -> Quantiles {
        self.q
    }

    pub(super) fn bounds(&self, d: Dist) -> (u64, u64) {
        self.q.bounds(d)
    }

    /// `z` with `t_i ≤ t_j + window` for every other pending j: empty when i cannot come next.
    fn first(&self, z: &Dbm, i: usize) -> Dbm {
        let mut z = z.clone();
        for j in (0..self.pending.len()).filter(|&j| j != i && self.pending[j]) {
            if !z.constrain(var(i), var(j), self.window) {
                break;
            }
        }
        z
    }

    /// Whether agent i's pending event can come next under some assignment of latencies.
    pub(super) fn feasible(&self, i: usize) -> bool {
        self.pending[i] && self.zones.iter().any(|z| !self.first(z, i).is_empty())
    }

    /// Agent i's event comes next: now moves to its time (or stays, when a window lets an
    /// event run late).
    pub(super) fn fire(&mut self, i: usize) -> Result<(), SimError> {
        assert!(self.feasible(i), "only an event that can come next runs");
        let mut next = Vec::with_capacity(self.zones.len());
        for z in &self.zones {
            let z = self.first(z, i);
            if z.is_empty() {
                continue;
            }
            let mut on_time = z.clone();
            if on_time.constrain(NOW, var(i), 0) {
                on_time.assign(NOW, var(i));
                on_time.free(var(i));
                keep(&mut next, on_time);
            }
            let mut late = z;
            if self.window > 0 && late.constrain(var(i), NOW, -1) {
                late.free(var(i));
                keep(&mut next, late);
            }
        }
        assert!(!next.is_empty(), "a feasible event leaves a zone");
        if next.len() > ZONES_MAX {
            return Err(SimError::Zones(ZONES_MAX));
        }
        self.zones = next;
        self.pending[i] = false;
        Ok(())
    }

    /// Agent i's next event is due `lo..=hi` ms after now.
    pub(super) fn schedule(&mut self, i: usize, lo: u64, hi: u64) {
        assert!(lo <= hi, "bounds are ordered");
        assert!(!self.pending[i], "one pending event per agent");
        for z in &mut self.zones {
            z.free(var(i));
            if hi < HORIZON_MS {
                z.constrain(var(i), NOW, Bound::from(hi));
            }
            let fresh = z.constrain(NOW, var(i), -Bound::from(lo.min(HORIZON_MS)));
            assert!(fresh, "a fresh variable's bounds fit any zone");
        }
        self.pending[i] = true;
    }
}

/// Adds `z` to `zones` unless one of them includes it; drops those it includes.
fn keep(zones: &mut Vec<Dbm>, z: Dbm) {
    if zones.iter().any(|o| o.includes(&z)) {
        return;
    }
    zones.retain(|o| !z.includes(o));
    zones.push(z);
}

impl<R: Runtime> Engine<'_, R> {
    /// Timed: keeps among `enabled` the agents whose event can come next.
    pub(super) fn timed_filter(&self, enabled: &mut Vec<usize>) {
        if let Some(z) = &self.zone {
            enabled.retain(|&i| z.feasible(i));
        }
    }

    /// Timed: agent `a`'s event runs now; what it draws sets [`Engine::span`] (0 unless).
    pub(super) fn timed_fire(&mut self, a: usize) -> Result<(), SimError> {
        self.span = (0, 0);
        match self.zone.as_mut() {
            Some(z) => z.fire(a),
            None => Ok(()),
        }
    }

    /// Timed: agent `a`'s step is done; its next event (if any) is due within the span.
    pub(super) fn timed_schedule(&mut self, a: usize) {
        let st = &self.agents[a];
        let pending = !st.done && st.due_ms != messages::PARKED;
        if let Some(z) = self.zone.as_mut().filter(|_| pending) {
            z.schedule(a, self.span.0, self.span.1);
        }
    }

    /// Timed: the step drew from `d`.
    pub(super) fn drew(&mut self, d: Dist) {
        if let Some(z) = &self.zone {
            self.span = z.bounds(d);
        }
    }

    /// Timed: the step generated `g` (a recording's latency is exact; the stub draws from
    /// `latency_ms`).
    pub(super) fn drew_generation(&mut self, latency_ms: Dist, g: &Generation) {
        if let Some(z) = &self.zone {
            self.span = match g.output {
                Output::Digest(_) => z.bounds(latency_ms),
                Output::Values { .. } => (g.latency_ms, g.latency_ms),
            };
        }
    }

    /// Timed: whether a `wait`'s `prob` fires (a choice point, as it changes the time), or
    /// untimed a draw that sets only a delay.
    pub(super) fn wait_fires(&mut self, a: usize, prob: f64) -> bool {
        if self.zone.is_some() {
            self.decide(a, prob)
        } else {
            crate::dist::chance(&mut self.rng, prob)
        }
    }

    /// Timed: the completion orders of `w` effects of latency `effect_ms` that the bounds
    /// allow, one choice point per effect placed where two or more are allowed. Effects
    /// complete by (latency, issue index): an order is possible iff its descents (a later
    /// issued effect completing just before an earlier one needs a strictly smaller latency)
    /// number at most `hi - lo`, and the last completes `lo + descents ..= hi` after issue.
    pub(super) fn timed_order(
        &mut self,
        a: usize,
        w: usize,
        order: EffectOrder,
        effect_ms: Dist,
    ) -> Vec<usize> {
        let (lo, hi) = self.zone.as_ref().map_or((0, 0), |z| z.bounds(effect_ms));
        if order == EffectOrder::NonIdentity || w == 0 {
            // A shuffle that ignores latencies; the last effect is the slowest of w draws.
            self.span = if w == 0 { (0, 0) } else { (lo, hi) };
            return self.abstract_order(a, w, order);
        }
        let slack = hi - lo;
        let mut rest: Vec<usize> = (0..w).collect();
        let mut out: Vec<usize> = Vec::with_capacity(w);
        let mut descents = 0u64;
        while !rest.is_empty() {
            let last = out.last().copied();
            let ok: Vec<usize> = (0..rest.len())
                .filter(|&r| {
                    let k = rest[r];
                    let d = descents + u64::from(last.is_some_and(|l| l > k));
                    let min_rest = rest.iter().copied().filter(|&x| x != k).min();
                    d + u64::from(min_rest.is_some_and(|m| m < k)) <= slack
                })
                .collect();
            assert!(
                !ok.is_empty(),
                "the ascending completion of a feasible prefix is feasible"
            );
            let r = if ok.len() >= 2 {
                ok[self.choose_among(ChoiceKind::Order, ok.len(), a, &[], &[], &[])]
            } else {
                ok[0]
            };
            let k = rest.remove(r);
            descents += u64::from(last.is_some_and(|l| l > k));
            out.push(k);
        }
        assert!(descents <= slack, "the order fits the bounds");
        self.span = (lo + descents, hi);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Constraints added one at a time and closed incrementally give the matrix that
    /// Floyd–Warshall gives from all of them at once, and the same emptiness.
    #[test]
    fn incremental_closure_is_floyd_warshall() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut empties = 0;
        for _ in 0..400 {
            let n = 2 + crate::dist::below(&mut rng, 4);
            let mut inc = Dbm::new(n);
            let mut raw = Dbm::new(n);
            for _ in 0..crate::dist::below(&mut rng, 8) {
                let i = crate::dist::below(&mut rng, n);
                let j = crate::dist::below(&mut rng, n);
                let c = crate::dist::below(&mut rng, 40) as Bound - 15;
                if i == j {
                    continue;
                }
                inc.constrain(i, j, c);
                if c < raw.get(i, j) {
                    raw.set(i, j, c);
                }
            }
            raw.close();
            assert_eq!(inc.is_empty(), raw.is_empty());
            if inc.is_empty() {
                empties += 1;
            } else {
                assert_eq!(inc, raw);
            }
        }
        assert!(
            (20..380).contains(&empties),
            "both outcomes tried: {empties}"
        );
    }

    /// The stale review's timing: the author's first event is due at 5000 ms, the reviewer's
    /// at 0 and then 3000 ms later. The author cannot go first, nor after the reviewer's
    /// read; an overlapping start (2000..=6000) lets it in between.
    #[test]
    fn a_zone_rejects_an_order_the_bounds_forbid() {
        let q = Quantiles::default();
        let mut z = Zones::new(q, 0, &[(5000, 5000), (0, 0)], &[true, true]);
        assert!(
            !z.feasible(0),
            "the author's 5 s start cannot come before 0 ms"
        );
        assert!(z.feasible(1));
        z.fire(1).unwrap();
        z.schedule(1, 3000, 3000);
        assert!(
            !z.feasible(0),
            "nor before the reviewer's generation ends at 3 s"
        );
        assert!(z.feasible(1));
        z.fire(1).unwrap();
        z.schedule(1, 0, 0);
        assert!(!z.feasible(0));
        assert!(z.feasible(1));

        let mut z = Zones::new(q, 0, &[(2000, 6000), (0, 0)], &[true, true]);
        assert!(!z.feasible(0));
        z.fire(1).unwrap();
        z.schedule(1, 3000, 3000);
        assert!(
            z.feasible(0),
            "a start at 2..3 s lands inside the generation"
        );
        assert!(z.feasible(1), "and a start at 3..6 s after it");
        z.fire(0).unwrap();
        z.schedule(0, 500, 500);
        assert!(z.feasible(0), "read at 2.0..2.5 s, done by 3 s");
        assert!(z.feasible(1), "read at 2.5..3 s, done after 3 s");
        z.fire(0).unwrap();
        z.schedule(0, 0, 0);
        assert!(z.feasible(0));
        assert!(
            z.feasible(1),
            "now in 2.5..=3 s: the generation's end at 3 s can tie"
        );
        z.fire(0).unwrap();
        z.schedule(0, 1, 1);
        assert!(
            z.feasible(1),
            "due at 3 s, the author's next at 2.501..=3.001 s"
        );
        z.fire(1).unwrap();
        z.schedule(1, 0, 0);
        assert!(
            z.feasible(0),
            "now is 3 s, the author's next at 3.001 s at the latest"
        );
        assert!(z.feasible(1));
    }

    /// Equal fixed latencies tie: either may come first. A window lets an event run up to
    /// `window_ms` after the earliest, and then it runs late (now does not move back).
    #[test]
    fn ties_and_windows() {
        let q = Quantiles::default();
        let z = Zones::new(q, 0, &[(100, 100), (100, 100)], &[true, true]);
        assert!(z.feasible(0));
        assert!(z.feasible(1));
        let z = Zones::new(q, 0, &[(100, 100), (101, 101)], &[true, true]);
        assert!(!z.feasible(1));
        let mut z = Zones::new(q, 5, &[(100, 100), (104, 104)], &[true, true]);
        assert!(z.feasible(1), "within the window");
        z.fire(1).unwrap();
        z.schedule(1, 0, 0);
        assert!(z.feasible(0), "the earlier event runs late, at 104");
        z.fire(0).unwrap();
        z.schedule(0, 10, 10);
        assert!(z.feasible(1), "due at 104, now 104");
        assert!(!z.feasible(0), "due at 114 > 104 + 5");
        z.fire(1).unwrap();
        z.schedule(1, 3, 3);
        assert!(z.feasible(1), "due at 107");
        assert!(!z.feasible(0), "114 > 107 + 5");
    }
}
