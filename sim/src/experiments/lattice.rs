//! The lattice of consistency models (SPEC §4) as a `reproduce` step: the Hasse diagram, the
//! named chain L0..L4 in bold, and one table row per point. Everything is computed from
//! `agentsim_models::lattice`; a pass of the pinning test says the lattice has the shape SPEC §4
//! gives, nothing about which runtime realizes which point.

use crate::artifacts::figures::{hasse, HasseData};
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_models::lattice::{self, Point};

/// The `lattice` step.
pub const STEP: Step = Step {
    name: "lattice",
    about: "the lattice of consistency models (SPEC §4)",
    run: files,
};

fn files(_ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let data = HasseData::from_lattice();
    let about = "The 16-point lattice of consistency models: each point is the set of anomalies (of A1, A2, \
                 A3, A6) a model excludes, ordered by inclusion (Hasse diagram); the named chain \
                 L0..L4 is drawn in bold.";
    let mut files = vec![figure_file("lattice_hasse", about, hasse::render(&data))];
    files.extend(table_files("lattice", &table()));
    Ok(files)
}

/// One row per lattice point: what it excludes, where it sits on the named chain, the level it
/// guarantees, its covers and how many maximal chains pass through it.
pub fn table() -> Table {
    let mut t = Table::new(
        "Lattice of consistency models: points as sets of excluded anomalies",
        &[
            "point",
            "excluded",
            "named_chain",
            "guarantees",
            "lower_covers",
            "upper_covers",
            "maximal_chains_through",
        ],
    );
    let named = lattice::named_chain();
    let edges = lattice::cover_edges();
    let chains = lattice::maximal_chains();
    let all = Point(0b1111);
    for p in lattice::points() {
        let on_chain = named.iter().position(|&q| q == p);
        // A model excluding p admits at most the other anomalies; its guaranteed level is the
        // level of a history exhibiting exactly those.
        let guarantees = lattice::level(Point(all.0 & !p.0));
        let count = |f: &dyn Fn(&(Point, Point)) -> bool| edges.iter().filter(|e| f(e)).count();
        t.push(vec![
            Cell::text(p.label()),
            Cell::Int(i64::from(p.len())),
            on_chain.map_or(Cell::Empty, |k| Cell::text(format!("L{k}"))),
            Cell::text(format!("L{guarantees}")),
            Cell::Int(count(&|e| e.1 == p) as i64),
            Cell::Int(count(&|e| e.0 == p) as i64),
            Cell::Int(chains.iter().filter(|c| c.contains(&p)).count() as i64),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_table_pins_the_lattice() {
        let t = table();
        assert_eq!(t.rows.len(), 16);
        let bottom = &t.rows[0];
        assert_eq!(bottom[0], Cell::text("{}"));
        assert_eq!(bottom[2], Cell::text("L0"));
        assert_eq!(bottom[3], Cell::text("L0"));
        assert_eq!(bottom[5], Cell::Int(4));
        assert_eq!(bottom[6], Cell::Int(24));
        let a1 = t
            .rows
            .iter()
            .find(|r| r[0] == Cell::text("{A1}"))
            .expect("{A1}");
        assert_eq!(a1[2], Cell::text("L1"));
        assert_eq!(a1[3], Cell::text("L1"));
        assert_eq!(a1[6], Cell::Int(6));
        // Excluding only A3 guarantees nothing on the named chain: A1 may still happen.
        let a3 = t
            .rows
            .iter()
            .find(|r| r[0] == Cell::text("{A3}"))
            .expect("{A3}");
        assert_eq!(a3[2], Cell::Empty);
        assert_eq!(a3[3], Cell::text("L0"));
        let top = t.rows.last().expect("16 rows");
        assert_eq!(top[3], Cell::text("L4"));
        let edges: i64 = t
            .rows
            .iter()
            .map(|r| match r[5] {
                Cell::Int(n) => n,
                _ => 0,
            })
            .sum();
        assert_eq!(edges, 32);
    }
}
