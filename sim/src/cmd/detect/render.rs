//! Printing witnesses: one line of text or one JSON object per witness, by name.
//!
//! A [`Found`] is a witness with the ids its line needs (agents, values, times), given by the
//! stream detector when it is found, or built from a whole history for `--spec`
//! ([`FromHistory`]); so the batch run prints after the last record (when every name is known)
//! and the stream prints at once, both with the same words. Records are 0-based indices (as in `preds`). Nothing here
//! decides an anomaly.

use agentsim_models::detect::a4::{A4Read, A4Witness};
use agentsim_models::detect::stream::{Found, Write};
use agentsim_models::detect::{
    A1Witness, A2Reason, A2Witness, A3ResidueWitness, A3Witness, A6Witness, L1StructViolation,
};
use agentsim_models::{escape_text, Agent, Cell, History, Names, OpRecord, Value, ValueKey};
use serde_json::{json, Value as Json};

/// The printed witnesses of a whole history (the `--spec` path).
pub struct FromHistory<'a>(pub &'a History);

impl FromHistory<'_> {
    fn rec(&self, i: usize) -> &OpRecord {
        &self.0.records[i]
    }

    pub fn a1(&self, w: A1Witness) -> Found {
        let (r, wr) = (self.rec(w.reader), self.rec(w.writer));
        let writer = Write {
            record: w.writer as u64,
            time: wr.write_time,
            agent: wr.agent,
            value: ValueKey::id(wr.write_values.get(w.cell)),
        };
        Found::A1 {
            w,
            agent: r.agent,
            read: ValueKey::id(r.read_values.get(w.cell)),
            read_time: r.read_time,
            write_time: r.write_time,
            writer,
        }
    }
    pub fn a2(&self, w: A2Witness) -> Found {
        let agent = self.rec(w.record).agent;
        Found::A2 { w, agent }
    }
    pub fn a3(&self, w: A3Witness) -> Found {
        let (agent, pred_agent) = (self.rec(w.record).agent, Some(self.rec(w.pred).agent));
        Found::A3 {
            w,
            agent,
            pred_agent,
        }
    }
    pub fn a6(&self, w: A6Witness) -> Found {
        let r = self.rec(w.record);
        let keys = |e: &[(Cell, Value)]| e.iter().map(|&(c, v)| (c, ValueKey::id(v))).collect();
        let (agent, io, co) = (r.agent, keys(&r.io), keys(&r.co));
        Found::A6 { w, agent, io, co }
    }
    pub fn residue(&self, w: A3ResidueWitness) -> Found {
        let agent = self.rec(w.record).agent;
        let value = ValueKey::id(w.value);
        Found::Residue { w, agent, value }
    }
    pub fn l1(&self, w: L1StructViolation) -> Found {
        let agent = self.rec(w.record).agent;
        let (read, expected) = (ValueKey::id(w.read), ValueKey::id(w.expected));
        Found::L1 {
            w,
            agent,
            read,
            expected,
        }
    }
    pub fn a4(&self, w: A4Witness) -> Found {
        let agents = [
            self.rec(w.first.record).agent,
            self.rec(w.second.record).agent,
        ];
        let values = [ValueKey::id(w.first.value), ValueKey::id(w.second.value)];
        Found::A4 { w, agents, values }
    }
}

/// Names for witnesses.
pub struct Render<'a>(pub &'a Names);

impl Render<'_> {
    fn agent(&self, a: Agent) -> String {
        self.0.agent_name(a)
    }
    fn cell(&self, c: Cell) -> String {
        self.0.cell_name(c)
    }
    fn val(&self, v: ValueKey) -> String {
        self.0.key_name(v).unwrap_or_else(|| "NULL".to_owned())
    }
    fn val_json(&self, v: ValueKey) -> Json {
        self.0.key_name(v).map_or(Json::Null, Json::String)
    }
    fn effects(&self, e: &[(Cell, ValueKey)]) -> Json {
        e.iter()
            .map(|&(c, v)| json!([self.cell(c), self.val_json(v)]))
            .collect()
    }
    fn effects_text(&self, e: &[(Cell, ValueKey)]) -> String {
        let items: Vec<_> = e
            .iter()
            .map(|&(c, v)| format!("{}={}", self.cell(c), self.val(v)))
            .collect();
        format!("[{}]", items.join(", "))
    }

    /// The witness as one line of text. Names and values are the history's, so the line is
    /// escaped ([`escape_text`]): a newline or a bidi control in a name prints as `\n` or
    /// `\u{202e}` and cannot start a line of its own. The template has neither, so a line
    /// without them is printed as it is.
    pub fn text(&self, k: &Found) -> String {
        let line = self.line(k);
        match escape_text(&line) {
            std::borrow::Cow::Owned(escaped) => escaped,
            std::borrow::Cow::Borrowed(_) => line,
        }
    }

    fn line(&self, k: &Found) -> String {
        match k {
            Found::A1 {
                w,
                agent,
                read,
                read_time,
                write_time,
                writer,
            } => format!(
                "record {} ({}) read {} = {} at t={} and wrote at t={}; meanwhile record {} ({}) \
                 wrote {} = {} at t={}",
                w.reader,
                self.agent(*agent),
                self.cell(w.cell),
                self.val(*read),
                read_time,
                write_time,
                w.writer,
                self.agent(writer.agent),
                self.cell(w.cell),
                self.val(writer.value),
                writer.time
            ),
            Found::A2 { w, agent } => {
                let tool = self.0.tool_name(w.tool);
                let why = match w.reason {
                    A2Reason::Removed => "it had left the registry at write time".to_owned(),
                    A2Reason::VersionChanged { read, write } => {
                        format!("its signature changed from version {read} to {write}")
                    }
                };
                let agent = self.agent(*agent);
                format!(
                    "record {} ({agent}) planned tool {tool}, but {why}",
                    w.record
                )
            }
            Found::A3 {
                w,
                agent,
                pred_agent,
            } => {
                let pred = match pred_agent {
                    Some(a) => format!("{} ({})", w.pred, self.agent(*a)),
                    None => w.pred.to_string(),
                };
                format!(
                    "record {} ({}) survives although its pred record {pred} is aborted",
                    w.record,
                    self.agent(*agent)
                )
            }
            Found::A6 { w, agent, io, co } => format!(
                "record {} ({}) issued {} but its effects completed {}",
                w.record,
                self.agent(*agent),
                self.effects_text(io),
                self.effects_text(co)
            ),
            Found::Residue { w, agent, value } => format!(
                "record {} ({}) read {} = {} which no other live record had written by then",
                w.record,
                self.agent(*agent),
                self.cell(w.cell),
                self.val(*value)
            ),
            Found::L1 {
                w,
                agent,
                read,
                expected,
            } => {
                let latest = match w.writer {
                    Some(k) => format!("record {k}'s {}", self.val(*expected)),
                    None if expected.is_null() => "NULL (no earlier write)".to_owned(),
                    None => format!(
                        "the trace's initial {} (no earlier write)",
                        self.val(*expected)
                    ),
                };
                format!(
                    "record {} ({}) read {} = {}, latest committed was {latest}",
                    w.record,
                    self.agent(*agent),
                    self.cell(w.cell),
                    self.val(*read)
                )
            }
            Found::A4 { w, agents, values } => format!(
                "{} at committed version {}: {}, but {}",
                self.cell(w.cell),
                w.version,
                self.a4_side(&w.first, agents[0], values[0]),
                self.a4_side(&w.second, agents[1], values[1])
            ),
        }
    }

    fn a4_side(&self, r: &A4Read, agent: Agent, value: ValueKey) -> String {
        format!(
            "record {} ({}) got {} from {}",
            r.record,
            self.agent(agent),
            self.val(value),
            self.0.replica_name(r.replica)
        )
    }

    /// The witness as a JSON object.
    pub fn json(&self, k: &Found) -> Json {
        match k {
            Found::A1 {
                w,
                agent,
                read,
                writer,
                ..
            } => json!({
                "reader": w.reader, "reader_agent": self.agent(*agent),
                "writer": w.writer, "writer_agent": self.agent(writer.agent),
                "cell": self.cell(w.cell),
                "read_value": self.val_json(*read),
                "written_value": self.val_json(writer.value),
            }),
            Found::A2 { w, agent } => {
                let (reason, read, write) = match w.reason {
                    A2Reason::Removed => ("removed", None, None),
                    A2Reason::VersionChanged { read, write } => {
                        ("version_changed", Some(read), Some(write))
                    }
                };
                json!({
                    "record": w.record, "agent": self.agent(*agent),
                    "tool": self.0.tool_name(w.tool), "reason": reason,
                    "read_version": read, "write_version": write,
                })
            }
            Found::A3 { w, agent, .. } => {
                json!({ "record": w.record, "agent": self.agent(*agent), "pred": w.pred })
            }
            Found::A6 { w, agent, io, co } => json!({
                "record": w.record, "agent": self.agent(*agent),
                "io": self.effects(io), "co": self.effects(co),
            }),
            Found::Residue { w, value, .. } => json!({
                "record": w.record, "cell": self.cell(w.cell), "value": self.val_json(*value),
            }),
            Found::L1 {
                w,
                agent,
                read,
                expected,
            } => json!({
                "record": w.record, "agent": self.agent(*agent), "cell": self.cell(w.cell),
                "read": self.val_json(*read), "expected": self.val_json(*expected),
                "writer": w.writer,
            }),
            Found::A4 { w, agents, values } => {
                let side = |r: &A4Read, a: Agent, v: ValueKey| {
                    json!({ "record": r.record, "agent": self.agent(a),
                            "replica": self.0.replica_name(r.replica),
                            "value": self.val_json(v) })
                };
                json!({ "cell": self.cell(w.cell), "version": w.version,
                        "first": side(&w.first, agents[0], values[0]),
                        "second": side(&w.second, agents[1], values[1]) })
            }
        }
    }
}
