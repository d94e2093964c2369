//! The history-free monitors driven event by event along the concrete model, one test per
//! runtime: at every reachable state (paired with the monitor state that the path to it
//! built), every watched property's monitor verdict equals the spec detector's on the log.
//! A4 likewise on the replicated store. At the bounds named here only.

use super::model::{AbstractConfig, AbstractModel};
use crate::config::{Bounds, Extensions, Replication, Skew};
use crate::engine::space::{fingerprint_of, Space};
use crate::models::action::Action;
use crate::models::composed::RuntimeModel;
use crate::models::replicated::{RepAction, ReplicatedModel};
use crate::property::{PropSet, Property};
use agentsim_models::monitor::a4::SplitView;
use agentsim_models::monitor::alpha::{cell_mask, packed};
use agentsim_models::monitor::{Monitor, Prop, Read, Write};
use agentsim_models::names::Agent;
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::{Discipline, Guarded, RuntimeKind, Stack};
use stateright::Model;
use std::collections::HashSet;

/// The monitor after concrete step `a` from `s` to `n`.
fn feed(
    kind: RuntimeKind,
    m: &mut Monitor<u32>,
    s: &Guarded<Stack>,
    n: &Guarded<Stack>,
    a: Action,
) {
    match a {
        Action::StartRead { agent, .. } => {
            let p = n.store().pending(Agent(agent.into()));
            let read = Read {
                rs: cell_mask(&p.request.read_set),
                rv: packed(&p.snapshot.read_values),
                tool: p.request.planned_tool.map_or(0, |t| t.0 as u8 + 1),
            };
            m.begin(agent.into(), read);
        }
        Action::CompleteWrite { agent, .. } => {
            let r = n.log().last().expect("a commit appends");
            let w = Write {
                live: !r.aborted,
                ws: cell_mask(&r.write_set),
                wv: packed(&r.write_values),
                reordered: r.io.len() >= 2 && r.co != r.io,
                pinned: kind == RuntimeKind::Registry(Discipline::Pin),
            };
            m.commit(agent.into(), &w, n.log().len() as u32 - 1);
        }
        Action::Retract(_) => {
            let dead: Vec<u32> = (0..s.log().len())
                .filter(|&i| !s.log()[i].aborted && n.log()[i].aborted)
                .map(|i| i as u32)
                .collect();
            m.retract(&dead);
        }
        Action::RemoveTool(t) | Action::ChangeSignature(t) => m.tool_changed(t),
    }
}

/// Drives a monitor along every path of `kind`'s concrete space; returns the pairs visited.
fn drive(kind: RuntimeKind, b: Bounds, ext: Extensions) -> usize {
    let all = PropSet::of(&Property::ALL);
    let conc = RuntimeModel::of_kind(b, ext, kind).unwrap();
    let abs = AbstractModel::new(AbstractConfig {
        bounds: b,
        ext,
        stack: kind.stack(),
        watch: all,
        bounded: true,
        symmetry: false,
    })
    .unwrap();
    let init = Monitor::new(*abs.need(), b.agents as usize);
    let mut seen = HashSet::new();
    let mut stack = vec![(conc.init_states().remove(0), init)];
    let mut actions = Vec::new();
    while let Some((s, m)) = stack.pop() {
        if !seen.insert((conc.fingerprint(&s), fingerprint_of(&m))) {
            continue;
        }
        let v = m.verdict();
        for (prop, q) in [
            (Property::A1, Prop::A1),
            (Property::A2, Prop::A2),
            (Property::A3, Prop::A3),
            (Property::A3_RESIDUE, Prop::A3Residue),
            (Property::A6, Prop::A6),
            (Property::L1Struct, Prop::L1Struct),
        ] {
            let want = prop.violated_by(s.log());
            assert_eq!(v.contains(q), want, "{kind}: {q:?} on {:#?}", s.log());
        }
        actions.clear();
        conc.actions(&s, &mut actions);
        for &a in &actions {
            if let Some(n) = conc.next_state(&s, a) {
                let mut next = m.clone();
                feed(kind, &mut next, &s, &n, a);
                stack.push((n, next));
            }
        }
    }
    seen.len()
}

fn small(agents: u32, cells: u32, tools: u32, max_ops: u32) -> Bounds {
    Bounds {
        values: 1,
        tools,
        ..Bounds::paper(agents, cells, max_ops)
    }
}

/// The configurations each runtime's monitor test runs.
fn drive_all(kind: RuntimeKind) {
    let canonical = Extensions {
        canonical_writes: true,
        ..Extensions::default()
    };
    let retracting = Extensions {
        provenance: true,
        retraction: true,
        ..canonical
    };
    let versions = Extensions {
        tool_versions: true,
        ..canonical
    };
    let mut skewed = small(2, 1, 0, 2);
    skewed.skew = Skew::Every;
    let mut one_external = small(1, 2, 0, 2);
    (one_external.external, one_external.skew) = (1, Skew::External);
    let runs = [
        (small(2, 1, 0, 3), canonical),
        (small(2, 1, 0, 2), retracting),
        (small(1, 2, 0, 2), retracting),
        (small(1, 1, 1, 2), versions),
        (small(1, 2, 0, 1), canonical),
        (skewed, canonical),
        (skewed, retracting),
        (one_external, canonical),
    ];
    for (b, ext) in runs {
        assert!(drive(kind, b, ext) > 10, "{kind} {b:?}");
    }
}

macro_rules! per_runtime {
    ($($name:ident => $kind:expr,)*) => {
        $(
            #[test]
            fn $name() {
                drive_all($kind);
            }
        )*
    };
}

per_runtime! {
    monitors_match_spec_vanilla => RuntimeKind::Vanilla,
    monitors_match_spec_pessimistic => RuntimeKind::Pessimistic,
    monitors_match_spec_si => RuntimeKind::Si,
    monitors_match_spec_ssi => RuntimeKind::Ssi,
    monitors_match_spec_causal => RuntimeKind::Causal { cascade: true },
    monitors_match_spec_causal_no_cascade => RuntimeKind::Causal { cascade: false },
    monitors_match_spec_saga => RuntimeKind::Saga,
    monitors_match_spec_registry_validate => RuntimeKind::Registry(Discipline::Validate),
    monitors_match_spec_registry_pin => RuntimeKind::Registry(Discipline::Pin),
}

/// The A4 monitor along every path of the replicated store: 2 agents, 1 cell, MaxOps 3,
/// 1 secondary lagging at most 1; returns how many states exhibit A4.
fn drive_split_view(runs: &[(RuntimeKind, ReadDiscipline)]) -> usize {
    let b = small(2, 1, 0, 3);
    let ext = Extensions {
        canonical_writes: true,
        ..Extensions::default()
    };
    let mut found = 0;
    for &(kind, discipline) in runs {
        {
            let rep = Replication {
                secondaries: 1,
                max_lag: 1,
                discipline,
            };
            let m = ReplicatedModel::of_kind(b, ext, rep, kind).unwrap();
            let mut seen = HashSet::new();
            let mut stack = vec![(m.init_states().remove(0), SplitView::new(1, 2))];
            let mut actions = Vec::new();
            while let Some((s, mon)) = stack.pop() {
                if !seen.insert((m.fingerprint(&s), fingerprint_of(&mon))) {
                    continue;
                }
                let want = Property::A4.violated_by(&s.log());
                assert_eq!(mon.verdict(), want, "{kind} {discipline}: {:#?}", s.log());
                found += usize::from(want);
                actions.clear();
                m.actions(&s, &mut actions);
                for &a in &actions {
                    let Some(n) = m.next_state(&s, a) else {
                        continue;
                    };
                    let mut next = mon.clone();
                    match a {
                        RepAction::Read { agent, .. } => {
                            if let Some(p) = n.rt.store().inflight().get(&Agent(agent.into())) {
                                let rs = cell_mask(&p.request.read_set);
                                next.read(agent.into(), rs, packed(&p.snapshot.read_values));
                            }
                        }
                        RepAction::Write { agent, .. } => {
                            let r = n.rt.log().last().expect("a write appends");
                            next.commit(agent.into(), !r.aborted, cell_mask(&r.write_set));
                        }
                        RepAction::Apply { .. } => {}
                    }
                    stack.push((n, next));
                }
            }
        }
    }
    found
}

/// Every runtime with reads to any replica (where every runtime admits A4 but
/// `si+all-writers`, which this does not run).
#[test]
fn split_view_monitor_matches_spec_any_replica() {
    let runs: Vec<_> = RuntimeKind::ALL
        .iter()
        .map(|&k| (k, ReadDiscipline::AnyReplica))
        .collect();
    assert!(drive_split_view(&runs) > 0, "A4 is exercised");
}

/// The other read disciplines, under vanilla.
#[test]
fn split_view_monitor_matches_spec_disciplines() {
    let runs = [
        (RuntimeKind::Vanilla, ReadDiscipline::Session),
        (RuntimeKind::Vanilla, ReadDiscipline::PrimaryPinned),
    ];
    assert!(
        drive_split_view(&runs) > 0,
        "session reads split across agents"
    );
}
