//! The name-table steps only the block pipeline takes: seeding a block's tables from the
//! global ones ([`seed_from`]), absorbing a block's names into the global tables ([`absorb`])
//! and the keys of a literal block's values ([`literal_keys`]).

use agentsim_models::names::{Interner, Names, Value};
use agentsim_models::value_key::ValueKey;

/// Where [`absorb`] put each id of another table: `agents[local] = global`, and so
/// on; `values` is indexed by value id (`values[0]` is NULL, 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdMap {
    pub agents: Vec<u32>,
    pub cells: Vec<u32>,
    pub tools: Vec<u32>,
    pub replicas: Vec<u32>,
    pub values: Vec<u32>,
}

/// The largest table [`seed_from`] copies: the copy is made for every block, and a
/// history has few agents, cells and tools.
pub const SEED_MAX: usize = 4096;

impl IdMap {
    /// Whether every agent, cell, tool and replica keeps its id (values are not looked at).
    pub fn is_identity(&self) -> bool {
        let same = |m: &[u32]| m.iter().enumerate().all(|(i, &id)| id as usize == i);
        same(&self.agents) && same(&self.cells) && same(&self.tools) && same(&self.replicas)
    }
}

/// The keys a literal table's ids stand for (id − 1), long names' ids renamed by `map`
/// (this table's value ids absorbed elsewhere, [`absorb`]), into `out`.
pub fn literal_keys(names: &Names, map: Option<&IdMap>, out: &mut Vec<ValueKey>) {
    out.clear();
    let Some(l) = names.literals() else { return };
    out.extend(l.keys().iter().map(|&k| match (k.as_id(), map) {
        (Some(v), Some(m)) => ValueKey::id(Value(m.values[v.0 as usize])),
        _ => k,
    }));
}

/// Empties the tables `to`, then copies into them the agents, cells, tools and replicas of
/// `global` (each table of at most [`SEED_MAX`] names; a larger one stays empty), keeping
/// whether values are literal: a block parsed into tables seeded this way gives the names
/// `global` already has the ids they have there, so that merging it into `global` renames
/// none of them ([`IdMap::is_identity`]).
pub fn seed_from(to: &mut Names, global: &Names) {
    to.clear();
    for (to, from) in [
        (&mut to.agents, &global.agents),
        (&mut to.cells, &global.cells),
        (&mut to.tools, &global.tools),
        (&mut to.replicas, &global.replicas),
    ] {
        if from.len() <= SEED_MAX {
            to.clone_from(from);
        }
    }
}

/// Interns every name of `local` into `global`, table by table in `local`'s id order, and
/// sets `map` to the id each local id now has there. Merging the tables of consecutive
/// parts of a history this way, part by part, gives every name the id one pass over the
/// whole would: a name's first appearance is in the first part that has it, and within
/// that part its local id is its order of first appearance.
pub fn absorb(global: &mut Names, local: &Names, map: &mut IdMap) {
    let each = |to: &mut Interner, from: &Interner, out: &mut Vec<u32>| {
        out.clear();
        to.intern_all(from, out);
    };
    each(&mut global.agents, &local.agents, &mut map.agents);
    each(&mut global.cells, &local.cells, &mut map.cells);
    each(&mut global.tools, &local.tools, &mut map.tools);
    each(&mut global.replicas, &local.replicas, &mut map.replicas);
    global.absorb_values(local, &mut map.values);
    // Value ids are interner ids + 1; NULL (0) stays NULL.
    for v in &mut map.values {
        *v += 1;
    }
    map.values.insert(0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::names::Cell;

    #[test]
    fn absorbing_parts_gives_the_ids_of_one_pass() {
        let parts = [["x", "y", "x"], ["z", "y", "w"], ["w", "v", "x"]];
        let mut whole = Names::new();
        for part in &parts {
            for n in part {
                whole.value(n);
                whole.cell(n);
            }
        }
        let (mut merged, mut local, mut map) = (Names::new(), Names::new(), IdMap::default());
        for part in &parts {
            local.clear();
            let ids: Vec<(Value, Cell)> = part
                .iter()
                .map(|n| (local.value(n), local.cell(n)))
                .collect();
            absorb(&mut merged, &local, &mut map);
            for (n, (v, c)) in part.iter().zip(ids) {
                assert_eq!(
                    Value(map.values[v.0 as usize]),
                    whole.find_value(n).unwrap()
                );
                assert_eq!(Some(map.cells[c.index()]), whole.cells.get(n));
            }
        }
        assert_eq!(merged, whole);
        assert_eq!(map.values[0], 0, "NULL stays NULL");
        local.clear();
        assert!(local.cells.is_empty());
        assert_eq!(local.cell("q"), Cell(0));
    }
}
