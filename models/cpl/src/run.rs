//! Driving one monitor per lifeline over an MSC in a given execution order.
//!
//! A [`System`] is what a deployment would be: each lifeline's monitor, and the messages in
//! transit as **binary bytes** (`wire.rs`), so every run also exercises the encoding. It is
//! `Clone` (and cheap to `clone_from`), so a search over linear extensions can branch from a
//! shared prefix. It checks that the order is executable (a receive after its send) but
//! trusts the MSC's lifeline and variable ids to be the program's (compile against the MSC's
//! names, which `compile` keeps as a prefix).

use super::compile::Program;
use super::monitor::{Message, Monitor};
use super::msc::{Event, Kind, Msc};
use super::value::Symbols;
use super::wire::{self, WireError};

/// Why a run could not go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A receive whose message is not in transit.
    #[error("message {0} is received but not in transit")]
    NotInTransit(u64),
    /// A message failed to decode.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The order is not a permutation of the events.
    #[error("the order is not a permutation of the MSC's events")]
    BadOrder,
}

/// Every lifeline's monitor plus the messages in transit.
#[derive(Debug)]
pub struct System {
    /// One monitor per program lifeline.
    pub monitors: Vec<Monitor>,
    /// Ids of the messages in transit; `bytes[i]` is the encoding of `ids[i]`.
    ids: Vec<u64>,
    /// Buffers past `ids.len()` are spares, reused by later sends (no allocation per event).
    bytes: Vec<Vec<u8>>,
    scratch: Message,
}

impl Clone for System {
    fn clone(&self) -> System {
        System {
            monitors: self.monitors.clone(),
            ids: self.ids.clone(),
            bytes: self.bytes[..self.ids.len()].to_vec(),
            scratch: self.scratch.clone(),
        }
    }

    /// Reuses every buffer (`Vec::clone_from` clones element-wise into existing ones).
    fn clone_from(&mut self, src: &System) {
        self.monitors.clone_from(&src.monitors);
        self.ids.clone_from(&src.ids);
        for (i, b) in src.bytes[..src.ids.len()].iter().enumerate() {
            match self.bytes.get_mut(i) {
                Some(mine) => mine.clone_from(b),
                None => self.bytes.push(b.clone()),
            }
        }
    }
}

impl System {
    /// Monitors before any event.
    pub fn new(prog: &Program) -> System {
        System {
            monitors: (0..prog.lifelines.len())
                .map(|l| Monitor::new(prog, l))
                .collect(),
            ids: Vec::new(),
            bytes: Vec::new(),
            scratch: Message::new(prog),
        }
    }

    /// Executes one event at its lifeline.
    pub fn apply(
        &mut self,
        prog: &Program,
        syms: &mut Symbols,
        ev: &Event,
    ) -> Result<(), RunError> {
        let mon = &mut self.monitors[ev.lifeline];
        match ev.kind {
            Kind::Act | Kind::Choice => mon.local(prog, syms, &ev.set),
            Kind::Send { msg, .. } => {
                mon.send(prog, syms, &ev.set, &mut self.scratch);
                let at = self.ids.len();
                if at == self.bytes.len() {
                    self.bytes.push(Vec::new());
                }
                wire::encode(&self.scratch, prog, syms, &mut self.bytes[at]);
                self.ids.push(msg);
            }
            Kind::Recv { msg } => {
                let at = self.ids.iter().position(|m| *m == msg);
                let at = at.ok_or(RunError::NotInTransit(msg))?;
                let last = self.ids.len() - 1;
                self.ids.swap_remove(at);
                self.bytes.swap(at, last);
                wire::decode(&self.bytes[last], prog, syms, &mut self.scratch)?;
                mon.recv(prog, syms, &self.scratch, &ev.set);
            }
        }
        Ok(())
    }

    /// The number of messages sent and not yet received.
    pub fn in_transit(&self) -> usize {
        self.ids.len()
    }
}

/// Runs `msc` in `order`; `rows[e]` is the row of e's monitor just after event e.
pub fn run(
    prog: &Program,
    syms: &mut Symbols,
    msc: &Msc,
    order: &[usize],
) -> Result<Vec<Vec<bool>>, RunError> {
    if !msc.is_linear_extension(order) {
        return Err(RunError::BadOrder);
    }
    let mut sys = System::new(prog);
    let mut rows = vec![Vec::new(); msc.len()];
    for &e in order {
        sys.apply(prog, syms, &msc.events[e])?;
        rows[e] = sys.monitors[msc.events[e].lifeline].row().to_vec();
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use crate::parse::parse_guards;
    use crate::value::Value;

    #[test]
    fn a_message_carries_the_senders_knowledge() {
        let mut syms = Symbols::new();
        let names = vec!["A".to_owned(), "B".to_owned()];
        let set = vec![(0, Value::Num(2.0))];
        let events = vec![
            Event {
                lifeline: 0,
                kind: Kind::Send { msg: 1, to: 1 },
                set,
            },
            Event {
                lifeline: 1,
                kind: Kind::Act,
                set: Vec::new(),
            },
            Event {
                lifeline: 1,
                kind: Kind::Recv { msg: 1 },
                set: Vec::new(),
            },
        ];
        let msc = Msc::new(names.clone(), vec!["x".into()], events).unwrap();
        let g = parse_guards("let k = @A.x == 2;").unwrap();
        let p = compile(&g, &names, &msc.vars, &mut syms).unwrap();
        let rows = run(&p, &mut syms, &msc, &[1, 0, 2]).unwrap();
        assert_eq!(rows, vec![vec![true], vec![false], vec![true]]);
        assert_eq!(
            run(&p, &mut syms, &msc, &[2, 0, 1]),
            Err(RunError::BadOrder)
        );
    }
}
