//! Guarded agents: messages between agents and CPL guards on their actions.
//!
//! Each agent is a lifeline with a knowledge-vector monitor (CPL.md, Algorithms 1–2) and a
//! local store of variables. `send` is a send event: the monitor's metadata is encoded with
//! the binary wire format, and the message arrives after its sampled latency, so messages
//! overtake each other. `recv` waits until a message (from the named sender, or anyone) has
//! arrived, takes the earliest arrived one, decodes it and runs the receive event. `set` is a
//! local event; `act` is a choice event whose guard, as the agent's monitor decides it,
//! commits or refuses the action. A waiting agent is due when its next message arrives, or
//! parked (due [`PARKED`]) until a message to it is sent; an agent still parked when nothing
//! else can run is blocked for good.
//!
//! The events of a trial form an MSC; at the end the literal reference evaluator runs over it,
//! every guard decision the monitor made is asserted equal to the reference's value (a check
//! that stays on in release), and the scenario's `stale` formula, also by the reference,
//! marks committed actions as stale. A trial that passes says the monitor, the wire format and
//! the reference agree on this execution; not on every execution.

use super::Engine;
use crate::scenario::{CplSpec, Step};
use agentsim_cpl::{wire, Causal, Event, Kind, Message, Monitor, Msc, Reference};
use agentsim_cpl::{Symbols, Value};
use agentsim_models::runtime::Runtime;
use serde::Serialize;

/// The due time of an agent waiting at a `recv` with no message on its way to it.
pub(super) const PARKED: u64 = u64::MAX;

/// A message in transit.
struct Flight {
    id: u64,
    from: usize,
    to: usize,
    deliver_ms: u64,
    bytes: Vec<u8>,
    /// The sender's variables at its send (what `take` reads).
    payload: Vec<Option<Value>>,
}

/// A guard decision: at MSC event `event`, guard `guard` was `value` at `agent`'s monitor.
struct Decision {
    event: usize,
    guard: usize,
    value: bool,
}

/// What the guarded agents did in one trial.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CplTrial {
    /// Messages sent.
    pub messages: u64,
    /// Messages received.
    pub received: u64,
    /// Wire bytes of every message sent.
    pub bytes: u64,
    /// Times a `recv` found no arrived message and had to wait.
    pub waits: u64,
    /// `act` steps whose guard held (the action was done).
    pub done: u64,
    /// `act` steps whose guard did not hold.
    pub refusals: u64,
    /// Done actions the scenario's `stale` formula marks.
    pub stale: u64,
    /// Agents still waiting at a `recv` when the trial ended.
    pub blocked: u64,
    /// Events of the trial's MSC.
    pub events: u64,
}

/// The message and monitor state of one trial.
pub(super) struct CplRun<'a> {
    spec: &'a CplSpec,
    /// Decoding may intern strings a guard never named.
    syms: Symbols,
    monitors: Vec<Monitor>,
    stores: Vec<Vec<Option<Value>>>,
    flight: Vec<Flight>,
    /// Agents that ran their `recv` and found nothing yet.
    waiting: Vec<bool>,
    scratch: Message,
    set: Vec<(usize, Value)>,
    events: Vec<Event>,
    decisions: Vec<Decision>,
    next_msg: u64,
    out: CplTrial,
}

impl<'a> CplRun<'a> {
    pub(super) fn new(spec: &'a CplSpec, agents: usize) -> CplRun<'a> {
        let prog = &spec.prog;
        assert_eq!(prog.lifelines.len(), agents, "one lifeline per agent");
        CplRun {
            spec,
            syms: spec.syms.clone(),
            monitors: (0..agents).map(|l| Monitor::new(prog, l)).collect(),
            stores: vec![vec![None; prog.vars.len()]; agents],
            flight: Vec::new(),
            waiting: vec![false; agents],
            scratch: Message::new(prog),
            set: Vec::new(),
            events: Vec::new(),
            decisions: Vec::new(),
            next_msg: 0,
            out: CplTrial::default(),
        }
    }

    /// `x=v, y=w` for a trace line.
    fn show(&self, set: &[(usize, Value)]) -> String {
        let value = |v: Value| match v {
            Value::Str(s) => self.syms.text(s).to_owned(),
            Value::Num(x) => x.to_string(),
            Value::Bool(b) => b.to_string(),
        };
        let parts: Vec<String> = set
            .iter()
            .map(|&(k, v)| format!("{}={}", self.spec.prog.vars[k], value(v)))
            .collect();
        parts.join(", ")
    }

    fn apply(&mut self, a: usize, set: &[(usize, Value)]) {
        for &(v, x) in set {
            self.stores[a][v] = Some(x);
        }
    }

    fn event(&mut self, a: usize, kind: Kind, set: &[(usize, Value)]) {
        self.events.push(Event {
            lifeline: a,
            kind,
            set: set.to_vec(),
        });
    }

    fn local(&mut self, a: usize, set: &[(usize, Value)]) {
        self.apply(a, set);
        self.monitors[a].local(&self.spec.prog, &self.syms, set);
        self.event(a, Kind::Act, set);
    }

    /// A send event; returns the message id and its size in bytes.
    fn send(
        &mut self,
        a: usize,
        to: usize,
        set: &[(usize, Value)],
        deliver_ms: u64,
    ) -> (u64, usize) {
        let prog = &self.spec.prog;
        self.apply(a, set);
        self.monitors[a].send(prog, &self.syms, set, &mut self.scratch);
        let mut bytes = Vec::new();
        wire::encode(&self.scratch, prog, &self.syms, &mut bytes);
        let id = self.next_msg;
        self.next_msg += 1;
        let size = bytes.len();
        self.out.messages += 1;
        self.out.bytes += size as u64;
        self.flight.push(Flight {
            id,
            from: a,
            to,
            deliver_ms,
            bytes,
            payload: self.stores[a].clone(),
        });
        self.event(a, Kind::Send { msg: id, to }, set);
        (id, size)
    }

    /// The earliest message to `a` (from `from`) that matches `arrived`, by (arrival, id).
    fn next_for(
        &self,
        a: usize,
        from: Option<usize>,
        arrived: impl Fn(u64) -> bool,
    ) -> Option<usize> {
        self.flight
            .iter()
            .enumerate()
            .filter(|(_, f)| f.to == a && from.is_none_or(|s| s == f.from) && arrived(f.deliver_ms))
            .min_by_key(|(_, f)| (f.deliver_ms, f.id))
            .map(|(i, _)| i)
    }

    /// A receive event of in-transit message `i`; returns its id and sender.
    fn recv(&mut self, a: usize, i: usize, take: &[usize], set: &[(usize, Value)]) -> (u64, usize) {
        let f = self.flight.swap_remove(i);
        assert_eq!(f.to, a, "a message is received by its addressee");
        let prog = &self.spec.prog;
        if let Err(e) = wire::decode(&f.bytes, prog, &mut self.syms, &mut self.scratch) {
            panic!("message {} does not decode: {e}", f.id);
        }
        self.set.clear();
        self.set
            .extend(take.iter().filter_map(|&v| f.payload[v].map(|x| (v, x))));
        self.set.extend_from_slice(set);
        let taken = std::mem::take(&mut self.set);
        self.apply(a, &taken);
        self.monitors[a].recv(prog, &self.syms, &self.scratch, &taken);
        self.event(a, Kind::Recv { msg: f.id }, &taken);
        self.set = taken;
        self.out.received += 1;
        (f.id, f.from)
    }

    /// A choice event reading guard `guard`; returns its value at `a`'s monitor.
    fn decide(&mut self, a: usize, guard: usize) -> bool {
        let prog = &self.spec.prog;
        self.monitors[a].local(prog, &self.syms, &[]);
        let value = self.monitors[a].value(prog.guards[guard].1);
        self.decisions.push(Decision {
            event: self.events.len(),
            guard,
            value,
        });
        self.event(a, Kind::Choice, &[]);
        if value {
            self.out.done += 1;
        } else {
            self.out.refusals += 1;
        }
        value
    }

    /// Checks every decision against the reference evaluator and counts stale actions.
    pub(super) fn finish(mut self, blocked: u64) -> CplTrial {
        let spec = self.spec;
        let prog = &spec.prog;
        let msc = Msc::new(prog.lifelines.clone(), prog.vars.clone(), self.events)
            .expect("the engine builds a valid MSC");
        let reference = Reference::new(&spec.formulas, &prog.lifelines, &prog.vars);
        let table = reference.evaluate(&msc, &Causal::new(&msc), &self.syms);
        for d in &self.decisions {
            let name = spec.guard_name(d.guard);
            assert_eq!(
                table[d.event][d.guard], d.value,
                "guard {name} at event {}: the reference disagrees with the monitor",
                d.event
            );
            if d.value && spec.stale.is_some_and(|k| table[d.event][k]) {
                self.out.stale += 1;
            }
        }
        self.out.blocked = blocked;
        self.out.events = msc.len() as u64;
        assert_eq!(
            self.out.done + self.out.refusals,
            self.decisions.len() as u64,
            "every decision is counted once"
        );
        self.out
    }
}

impl<R: Runtime> Engine<'_, R> {
    /// Runs a `send`, `recv`, `set` or `act` step of agent `a`; returns the trace text.
    pub(super) fn cpl_step(
        &mut self,
        a: usize,
        pc: usize,
        step: &Step,
        next: &mut Option<usize>,
        delay: &mut u64,
    ) -> String {
        let now = self.now_ms;
        assert!(now != PARKED, "a parked agent never runs");
        let sc = self.sc;
        let cpl = self.cpl.as_mut().expect("message steps need [cpl]");
        match step {
            Step::Send {
                to,
                set,
                latency_ms,
            } => {
                let to = to.0 as usize;
                let deliver = now.saturating_add(latency_ms.sample(&mut self.rng));
                let (id, size) = cpl.send(a, to, set, deliver);
                let shown = cpl.show(set);
                self.wake(to, a, deliver);
                let to = &sc.agents[to].name;
                format!("send #{id} to {to} [{shown}] ({size} bytes), arrives at {deliver} ms")
            }
            Step::Recv { from, take, set } => {
                let from = from.map(|f| f.0 as usize);
                if let Some(i) = cpl.next_for(a, from, |t| t <= now) {
                    cpl.waiting[a] = false;
                    let (id, src) = cpl.recv(a, i, take, set);
                    let shown = cpl.show(&cpl.set);
                    return format!("recv #{id} from {} [{shown}]", sc.agents[src].name);
                }
                if !cpl.waiting[a] {
                    cpl.waiting[a] = true;
                    cpl.out.waits += 1;
                }
                *next = Some(pc);
                match cpl.next_for(a, from, |_| true) {
                    Some(i) => {
                        *delay = cpl.flight[i].deliver_ms - now;
                        format!("recv: waits for #{}", cpl.flight[i].id)
                    }
                    None => {
                        *delay = PARKED;
                        "recv: waits for a message".into()
                    }
                }
            }
            Step::Set { set } => {
                cpl.local(a, set);
                format!("set [{}]", cpl.show(set))
            }
            Step::Act {
                name,
                guard,
                refused,
            } => {
                let guard_name = cpl.spec.guard_name(*guard);
                if cpl.decide(a, *guard) {
                    format!("{name}: {guard_name} holds, done")
                } else {
                    *next = Some(*refused);
                    format!("{name}: {guard_name} does not hold, refused")
                }
            }
            _ => unreachable!("cpl_step runs message steps only"),
        }
    }

    /// A message from `from` to `to` arriving at `deliver`: if `to` waits at a `recv` that
    /// accepts it, `to` is due no later than then.
    fn wake(&mut self, to: usize, from: usize, deliver: u64) {
        let cpl = self.cpl.as_ref().expect("message steps need [cpl]");
        if !cpl.waiting[to] {
            return;
        }
        let st = &mut self.agents[to];
        let accepts = match self.sc.agents[to].script.steps.get(st.pc) {
            Some(Step::Recv { from: f, .. }) => f.is_none_or(|f| f.0 as usize == from),
            _ => false,
        };
        assert!(!st.done, "a finished agent does not wait");
        if accepts {
            st.due_ms = st.due_ms.min(deliver);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_cpl::{compile, parse_guards};

    #[test]
    fn a_message_round_trips_the_monitors_metadata_through_the_wire() {
        let mut syms = Symbols::new();
        let g = parse_guards("let ok = @A.x == \"c1\" & @A(Y (y == 2));").unwrap();
        let names = ["A".to_owned(), "B".to_owned()];
        let prog = compile(&g, &names, &["x".into(), "y".into()], &mut syms).unwrap();
        let c1 = Value::Str(syms.intern("c1"));
        let mut a = Monitor::new(&prog, 0);
        a.local(&prog, &syms, &[(1, Value::Num(2.0))]);
        let mut msg = Message::new(&prog);
        a.send(&prog, &syms, &[(0, c1)], &mut msg);
        let mut bytes = Vec::new();
        wire::encode(&msg, &prog, &syms, &mut bytes);
        // The receiver's table (a trial's copy of the scenario's) decodes the string by text.
        let mut rx = syms.clone();
        let mut back = Message::new(&prog);
        wire::decode(&bytes, &prog, &mut rx, &mut back).unwrap();
        assert_eq!(back, msg);
        assert_eq!(back.vc, vec![2, 0]);
        let [Some(Value::Str(s))] = back.vars[..] else {
            panic!("one selected variable, a string: {back:?}");
        };
        assert_eq!(rx.text(s), "c1");
        let mut b = Monitor::new(&prog, 1);
        assert_eq!(b.guard_value(&prog, "ok"), Some(false));
        b.recv(&prog, &rx, &back, &[]);
        assert_eq!(b.guard_value(&prog, "ok"), Some(true));
        assert_eq!(b.clock(), &[2, 1]);
    }
}
