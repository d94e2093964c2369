//! Vacuity: whether a property can be violated at all by the model a check explores, decided
//! before exploring from the model's definition, so that a check never says "holds" about an
//! anomaly the bounds or extensions make impossible (A3 without retraction, A1 with one agent).
//!
//! Two halves meet here. Each property states what its detector's definition needs of a
//! history ([`needs`], read off `agentsim_models::detect`, SPEC §3), as alternatives of
//! conjunctions of [`Need`]s. Each model states which of those needs its actions can produce
//! ([`Features`]): the single-store models by probing the very action generator they explore
//! ([`Choices::enumerate`], so a change to what the generator offers changes the analysis),
//! the replicated store from its definition (`models::replicated`: no tools, no skew, no
//! retraction, writes complete in issue order). A property is *vacuous* when every alternative
//! has a need the model cannot produce; the verdict is then *cannot tell* with what would make
//! it possible.
//!
//! Vacuity is judged on the unguarded model: vanilla, reads routed as asked. A runtime or a
//! read discipline only removes transitions (it drops, aborts or routes to the primary, which
//! an unguarded read may also ask), so a property vacuous under vanilla holds under every
//! guard, and a non-vacuous property that holds under a guard is the guard's doing: that is a
//! real "holds". Provenance forced on by a stack that reads `preds` counts as provenance.
//! The analysis is exact on the grid the tests explore (agents 1..3, cells 1..2, tools 0..1,
//! MaxOps 1..3, every extension and skew): "not vacuous" iff some reachable state of the
//! vanilla model violates the property. It says nothing about bounds it was not tested on
//! beyond the argument in each [`needs`] entry.

use crate::config::{Bounds, Extensions, Replication, MAX_OPS_MAX};
use crate::models::action::{cell_value, seq_mask, Action, Choices, View};
use crate::property::Property;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use std::collections::BTreeSet;

/// One thing a history must contain for a detector to fire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// At least this many records in one history.
    Records(u32),
    /// Records of at least this many distinct agents.
    Agents(u32),
    /// A record with two effects completing out of issue order (`co ≠ io`, `|io| ≥ 2`).
    ReorderedEffects,
    /// A planned tool that leaves the registry or changes signature between read and write.
    ToolLoss,
    /// A read whose value is not memory's (skew).
    FreeReads,
    /// A read served an older value than the latest committed write (a lagging replica).
    StaleReads,
    /// Records carrying `preds` (provenance).
    Preds,
    /// A committed record flagged aborted later (`Retract`), its writes kept in memory.
    Retraction,
    /// A record that reads a cell it does not write.
    ReadWithoutWrite,
}

use Need::*;

/// What `p`'s detector needs of a history: any one alternative, every need of it.
///
/// * A1 (and A1_snapshot, whose witness is an A1 with every read fresh): a reader and a
///   writer of different agents, the write landing between the reader's read and its commit:
///   two records, two agents. Values differ for free (the reader saw NULL, the writer wrote
///   a value).
/// * A2: a live record whose planned tool left (or changed) before it committed: a tool that
///   can be removed or changed, one record.
/// * A3: a live record with an aborted pred; vanilla aborts nothing at commit, so the pred
///   was retracted after being read: provenance, retraction, two records.
/// * A3_residue and L1_struct: a read of a value no live record wrote by then (L1_struct:
///   not the latest such write). Vanilla reads memory, which only writes change, so either the
///   read is free (skew, one record), or memory keeps a write whose record was retracted (two
///   records); L1_struct also by a stale replica read (two records: the write, the read).
/// * A6: one record whose effects complete out of issue order.
/// * A4: two records reading one cell at one committed version with different values: a write
///   first (version 0 is NULL everywhere), then two reads, one from a lagging secondary: three
///   records; the two reads at one version are either by two agents, or by one agent in turn,
///   which needs the first read not to write the cell (a write moves the version).
pub fn needs(p: Property) -> &'static [&'static [Need]] {
    match p {
        Property::Never(a) => match a {
            Anomaly::A1 => &[&[Agents(2), Records(2)]],
            Anomaly::A2 => &[&[ToolLoss, Records(1)]],
            Anomaly::A3 => &[&[Preds, Retraction, Records(2)]],
            Anomaly::A3Residue => &[&[FreeReads, Records(1)], &[Retraction, Records(2)]],
            Anomaly::A6 => &[&[ReorderedEffects, Records(1)]],
            Anomaly::A4 => &[
                &[StaleReads, Records(3), Agents(2)],
                &[StaleReads, Records(3), ReadWithoutWrite],
            ],
        },
        Property::L1Struct => &[
            &[FreeReads, Records(1)],
            &[Retraction, Records(2)],
            &[StaleReads, Records(2)],
        ],
        Property::A1Snapshot => &[&[Agents(2), Records(2)]],
    }
}

/// Which store a model is: it decides what flag would supply a missing need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// SPEC §1, concrete or abstract.
    Single,
    /// SPEC §6.
    Replicated,
}

/// What a model's actions can put into a history at its bounds and extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    pub store: Store,
    /// Most records one history can hold; `None`: no bound (the unbounded abstract model).
    pub records: Option<u32>,
    /// Agents that can commit a record.
    pub agents: u32,
    pub reordered_effects: bool,
    pub tool_loss: bool,
    pub free_reads: bool,
    pub stale_reads: bool,
    pub preds: bool,
    pub retraction: bool,
    pub read_without_write: bool,
}

impl Features {
    /// The single-store model under `stack` (provenance forced on where the stack reads
    /// `preds`), probed through the action generator it explores; `bounded` false for the
    /// abstract model without `--max-ops`, which keeps no op counter.
    pub fn single_store(b: Bounds, ext: Extensions, stack: Stack, bounded: bool) -> Features {
        let ext = Extensions {
            provenance: ext.provenance || stack.provenance(),
            ..ext
        };
        let ch = Choices::new(b, ext);
        let n = b.agents as usize;
        let tools: Vec<u32> = (0..b.tools).collect();
        let (idle, busy) = (vec![false; n], vec![true; n]);
        let every_cell = (1u32 << b.cells) - 1;
        // The most permissive view: every tool present and changeable, one live record.
        let view = |log_len, pending: &[bool], reads: &[u32], out: &mut Vec<Action>| {
            out.clear();
            let v = View {
                log_len,
                pending,
                registry: &tools,
                changeable: &tools,
                memory: 0,
                pending_reads: reads,
                retractable: &[0],
            };
            ch.enumerate(&v, out);
        };
        let mut acts = Vec::new();
        let appends = |acts: &[Action]| acts.iter().any(|a| matches!(a, Action::StartRead { .. }));
        // A record is appended only where a read may start; the first length with none is
        // the most records a history holds.
        let records = if bounded {
            let full = (0..=MAX_OPS_MAX).find(|&len| {
                view(len, &idle, &vec![0; n], &mut acts);
                !appends(&acts)
            });
            Some(full.unwrap_or(MAX_OPS_MAX))
        } else {
            None
        };
        view(0, &idle, &vec![0; n], &mut acts);
        let mut readers = BTreeSet::new();
        let (mut planned, mut lost, mut free, mut retract) = (false, false, false, false);
        for a in &acts {
            match *a {
                Action::StartRead {
                    agent,
                    read_set,
                    tool,
                    read_values,
                } => {
                    readers.insert(agent);
                    planned |= tool != 0;
                    free |= (0..b.cells)
                        .any(|c| read_set & (1 << c) != 0 && cell_value(read_values, c) != 0);
                }
                Action::RemoveTool(_) | Action::ChangeSignature(_) => lost = true,
                Action::Retract(_) => retract = true,
                Action::CompleteWrite { .. } => {}
            }
        }
        // Every agent pending, having read every cell (or only the first, for a read-only op).
        view(0, &busy, &vec![every_cell; n], &mut acts);
        let reordered = acts
            .iter()
            .any(|a| matches!(a, Action::CompleteWrite { io, co, .. } if io.len >= 2 && io != co));
        view(0, &busy, &vec![1; n], &mut acts);
        let read_only = acts
            .iter()
            .any(|a| matches!(a, Action::CompleteWrite { io, .. } if seq_mask(*io) & 1 == 0));
        Features {
            store: Store::Single,
            records,
            agents: readers.len() as u32,
            reordered_effects: reordered,
            tool_loss: planned && lost,
            free_reads: free,
            stale_reads: false,
            preds: ext.provenance,
            retraction: retract,
            read_without_write: read_only,
        }
    }

    /// The replicated store of SPEC §6 under `stack`, from its definition
    /// (`models::replicated`): no tools, no skew, no retraction (`Replication::validate`
    /// refuses them), writes complete in issue order, and a read asked of a secondary that
    /// may lag (`max_lag ≥ 1`) can be stale. The read discipline is a guard, not a feature.
    pub fn replicated(b: Bounds, ext: Extensions, rep: Replication, stack: Stack) -> Features {
        Features {
            store: Store::Replicated,
            records: Some(b.max_ops),
            agents: b.agents,
            reordered_effects: false,
            tool_loss: false,
            free_reads: false,
            stale_reads: rep.max_lag >= 1,
            preds: ext.provenance || stack.provenance(),
            retraction: false,
            read_without_write: !ext.all_writers,
        }
    }

    /// Whether this model can produce `need`.
    pub fn has(&self, need: Need) -> bool {
        match need {
            Records(n) => self.records.is_none_or(|r| r >= n),
            Agents(n) => self.agents >= n,
            ReorderedEffects => self.reordered_effects,
            ToolLoss => self.tool_loss,
            FreeReads => self.free_reads,
            StaleReads => self.stale_reads,
            Preds => self.preds,
            Retraction => self.retraction,
            ReadWithoutWrite => self.read_without_write,
        }
    }

    /// The flag that would supply `need` in this store, if one can.
    fn fix(&self, need: Need) -> Option<String> {
        let single = self.store == Store::Single;
        Some(match need {
            Records(n) => format!("--max-ops {n}"),
            Agents(n) => format!("--agents {n}"),
            ReorderedEffects if single => "--cells 2".into(),
            ToolLoss if single => "--tools 1".into(),
            FreeReads if single => "--skew".into(),
            StaleReads if single => "--replicas 1".into(),
            StaleReads => "--max-lag 1".into(),
            Preds => "--provenance".into(),
            Retraction if single => "--retraction".into(),
            ReadWithoutWrite => "drop --all-writers".into(),
            ReorderedEffects | ToolLoss | FreeReads | Retraction => return None,
        })
    }
}

/// A need in words.
fn describe(need: Need) -> String {
    match need {
        Records(n) => format!("{n} records"),
        Agents(n) => format!("{n} agents"),
        ReorderedEffects => "a write of two cells completing out of issue order".into(),
        ToolLoss => "a tool to remove or change".into(),
        FreeReads => "a skewed read".into(),
        StaleReads => "a read from a lagging replica".into(),
        Preds => "provenance".into(),
        Retraction => "retraction".into(),
        ReadWithoutWrite => "an op reading a cell it does not write".into(),
    }
}

fn and(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Flags to add (`--x`) first, then the phrases that say otherwise (`drop --all-writers`).
fn advice(fixes: &[String]) -> String {
    let (add, other): (Vec<&String>, Vec<&String>) =
        fixes.iter().partition(|f| f.starts_with("--"));
    let mut out: Vec<String> = Vec::new();
    if !add.is_empty() {
        let flags: Vec<&str> = add.iter().map(|f| f.as_str()).collect();
        out.push(format!("add {}", flags.join(" ")));
    }
    out.extend(other.into_iter().cloned());
    out.join(", ")
}

/// Why `p` cannot be violated by a model with features `f`, or `None` if it can. The text
/// names each alternative's missing needs and the flags that would supply them, e.g.
/// `A3 needs provenance and retraction (add --provenance --retraction)`.
pub fn vacuous(p: Property, f: &Features) -> Option<String> {
    let mut gaps: Vec<Vec<Need>> = Vec::new();
    for alt in needs(p) {
        let missing: Vec<Need> = alt.iter().copied().filter(|&n| !f.has(n)).collect();
        if missing.is_empty() {
            return None;
        }
        gaps.push(missing);
    }
    // Name only the smallest gaps: an alternative missing more than another adds nothing.
    let smallest: Vec<&Vec<Need>> = gaps
        .iter()
        .filter(|g| {
            !gaps
                .iter()
                .any(|h| h.len() < g.len() && h.iter().all(|n| g.contains(n)))
        })
        .collect();
    let mut parts: Vec<String> = Vec::new();
    for missing in smallest {
        let words: Vec<String> = missing.iter().map(|&n| describe(n)).collect();
        let fixes: Option<Vec<String>> = missing.iter().map(|&n| f.fix(n)).collect();
        let part = match fixes {
            Some(fixes) => format!("{} ({})", and(&words), advice(&fixes)),
            None => format!("{}, which this model cannot produce", and(&words)),
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    Some(format!("{} needs {}", p.name(), parts.join(", or ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Skew;

    fn single(b: Bounds, ext: Extensions) -> Features {
        Features::single_store(b, ext, Stack::VANILLA, true)
    }

    #[test]
    fn the_generator_probe_reads_bounds_and_extensions() {
        let f = single(Bounds::paper(2, 1, 3), Extensions::default());
        assert_eq!(f.records, Some(3));
        assert_eq!(f.agents, 2);
        assert!(f.tool_loss && f.read_without_write);
        assert!(!f.reordered_effects && !f.free_reads && !f.retraction && !f.preds);
        let mut b = Bounds::paper(1, 2, 1);
        b.tools = 0;
        b.skew = Skew::Every;
        let ext = Extensions {
            retraction: true,
            all_writers: true,
            ..Extensions::default()
        };
        let f = single(b, ext);
        assert!(f.reordered_effects && f.free_reads && f.retraction);
        assert!(!f.tool_loss && !f.read_without_write);
        let unbounded = Features::single_store(b, ext, Stack::VANILLA, false);
        assert_eq!(unbounded.records, None);
        let causal = agentsim_models::runtime::RuntimeKind::Causal { cascade: true }.stack();
        assert!(Features::single_store(b, ext, causal, true).preds);
    }

    #[test]
    fn reasons_name_what_is_missing_and_the_flags() {
        let f = single(Bounds::paper(2, 1, 2), Extensions::default());
        assert_eq!(
            vacuous(Property::A3, &f).unwrap(),
            "A3 needs provenance and retraction (add --provenance --retraction)"
        );
        assert_eq!(vacuous(Property::A1, &f), None);
        assert_eq!(
            vacuous(Property::A6, &f).unwrap(),
            "A6 needs a write of two cells completing out of issue order (add --cells 2)"
        );
        let one = single(Bounds::paper(1, 1, 1), Extensions::default());
        let r = vacuous(Property::L1Struct, &one).unwrap();
        let want = "L1_struct needs a skewed read (add --skew), or retraction and 2 records \
                    (add --retraction --max-ops 2), or a read from a lagging replica and 2 \
                    records (add --replicas 1 --max-ops 2)";
        assert_eq!(r, want);
        let rep = Replication {
            secondaries: 1,
            max_lag: 0,
            discipline: agentsim_models::replica::ReadDiscipline::AnyReplica,
        };
        let mut b = Bounds::paper(2, 2, 3);
        b.tools = 0;
        let f = Features::replicated(b, Extensions::default(), rep, Stack::VANILLA);
        let r = vacuous(Property::A6, &f).unwrap();
        assert!(r.ends_with("which this model cannot produce"), "{r}");
        let r = vacuous(Property::A4, &f).unwrap();
        assert_eq!(
            r,
            "A4 needs a read from a lagging replica (add --max-lag 1)"
        );
    }
}
