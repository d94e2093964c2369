//! Figure (b): the runtime × anomaly matrix of the exhaustive checker as a coloured grid.
//!
//! One row per runtime, one column per anomaly. A cell is red when the checker found the anomaly
//! (with the length of its shortest witness), green when the whole bounded space was explored
//! without it (with the number of states explored), yellow when the search hit a limit first,
//! grey when that pair was not run. Each column checks its anomaly at its own bounds, printed
//! under the column's name. The renderer only draws what [`MatrixData`] says; a pass does not
//! prove the verdicts (the checker's tests do).

use super::style::{self, Area, DrawResult, BAD, BODY_PX, GOOD, INK, NONE, SMALL_PX, UNSURE};
use crate::artifacts::tables::{Cell, Table};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// What the checker found for one (runtime, anomaly) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MatrixCell {
    /// The anomaly is reachable; the shortest witness has this many steps.
    Admitted {
        /// Steps in the shortest (BFS) witness.
        witness_len: u32,
    },
    /// The whole bounded space was explored and no reachable state exhibits the anomaly.
    Prevented {
        /// Distinct states explored.
        states: u64,
    },
    /// The search stopped at a limit before finishing; nothing is claimed.
    Inconclusive {
        /// Distinct states explored before the limit.
        states: u64,
    },
    /// This pair was not checked.
    NotRun,
}

/// One runtime's row.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MatrixRow {
    /// Runtime name (`RuntimeKind::name`).
    pub runtime: String,
    /// One cell per entry of [`MatrixData::anomalies`], same order.
    pub cells: Vec<MatrixCell>,
}

/// The whole matrix.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MatrixData {
    /// The bounds the checker ran at, shown under the title (e.g. `2 agents, 2 cells, ...`).
    pub bounds: String,
    /// Column headers, in order (e.g. `A1`, `A2`, `A3`, `A6`).
    pub anomalies: Vec<String>,
    /// Per column, the bounds it was checked at, as short lines under its header (e.g.
    /// `2 agents, 1 cell`, `MaxOps 2`); empty for none.
    pub column_bounds: Vec<Vec<String>>,
    /// Rows, in the order to draw them (top first).
    pub rows: Vec<MatrixRow>,
}

impl MatrixData {
    /// The same verdicts as a long table: one row per (runtime, anomaly).
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!("Runtime x anomaly, exhaustive checker ({})", self.bounds),
            &[
                "runtime",
                "anomaly",
                "verdict",
                "witness_len",
                "states",
                "bounds",
            ],
        );
        for row in &self.rows {
            for (j, a) in self.anomalies.iter().enumerate() {
                let cell = row.cells.get(j).copied().unwrap_or(MatrixCell::NotRun);
                let (verdict, witness, states) = match cell {
                    MatrixCell::Admitted { witness_len } => {
                        ("admitted", Cell::Int(i64::from(witness_len)), Cell::Empty)
                    }
                    MatrixCell::Prevented { states } => ("prevented", Cell::Empty, count(states)),
                    MatrixCell::Inconclusive { states } => {
                        ("inconclusive", Cell::Empty, count(states))
                    }
                    MatrixCell::NotRun => ("not run", Cell::Empty, Cell::Empty),
                };
                let (r, a, v) = (row.runtime.clone(), a.clone(), verdict);
                let bounds = self.column_bounds.get(j).map(|b| b.join("; "));
                t.push(vec![
                    Cell::Text(r),
                    Cell::Text(a),
                    Cell::text(v),
                    witness,
                    states,
                    bounds.map_or(Cell::Empty, Cell::Text),
                ]);
            }
        }
        t
    }
}

fn count(n: u64) -> Cell {
    Cell::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

const CELL_W: i32 = 150;
const CELL_H: i32 = 54;
/// Where the cells start when no column prints its bounds.
const TOP: i32 = 100;
/// Height of one line of a column's bounds.
const BOUNDS_LINE_H: i32 = 16;
const LEGEND_H: i32 = 70;

/// Where the cells start: below the headers and the longest list of column bounds.
fn cells_top(data: &MatrixData) -> i32 {
    let lines = data.column_bounds.iter().map(Vec::len).max().unwrap_or(0);
    TOP + BOUNDS_LINE_H * lines as i32 + if lines > 0 { 6 } else { 0 }
}

/// Renders the matrix as SVG text.
pub fn render(data: &MatrixData) -> String {
    let label_w = data
        .rows
        .iter()
        .map(|r| style::text_width(BODY_PX, &r.runtime))
        .max()
        .unwrap_or(0)
        + 40;
    let cols = data.anomalies.len() as i32;
    let width = (label_w + cols * CELL_W + 30).max(720);
    let height = cells_top(data) + data.rows.len() as i32 * CELL_H + LEGEND_H;
    style::svg("matrix", (width as u32, height as u32), |root| {
        draw(root, data, label_w, width)
    })
}

fn draw(root: &Area, data: &MatrixData, label_w: i32, width: i32) -> DrawResult {
    style::titled(root, "Runtime \u{d7} anomaly (exhaustive checker)")?;
    let note = style::text(SMALL_PX, INK, HPos::Center, VPos::Top);
    style::label(root, &data.bounds, (width / 2, 46), &note)?;
    let head = style::bold(BODY_PX, INK, HPos::Center, VPos::Bottom);
    let small = style::text(SMALL_PX, INK, HPos::Center, VPos::Top);
    for (j, a) in data.anomalies.iter().enumerate() {
        let x = label_w + j as i32 * CELL_W + CELL_W / 2;
        style::label(root, a, (x, TOP - 8), &head)?;
        for (k, line) in data.column_bounds.get(j).into_iter().flatten().enumerate() {
            let y = TOP - 4 + k as i32 * BOUNDS_LINE_H;
            style::label(root, line, (x, y), &small)?;
        }
    }
    let top = cells_top(data);
    let name = style::text(BODY_PX, INK, HPos::Right, VPos::Center);
    for (i, row) in data.rows.iter().enumerate() {
        let y = top + i as i32 * CELL_H;
        style::label(root, &row.runtime, (label_w - 14, y + CELL_H / 2), &name)?;
        for j in 0..data.anomalies.len() {
            let cell = row.cells.get(j).copied().unwrap_or(MatrixCell::NotRun);
            draw_cell(root, cell, (label_w + j as i32 * CELL_W, y))?;
        }
    }
    let not_run = data
        .rows
        .iter()
        .any(|r| (0..data.anomalies.len()).any(|j| r.cells.get(j).is_none_or(is_not_run)));
    legend(
        root,
        top + data.rows.len() as i32 * CELL_H + 24,
        label_w,
        not_run,
    )
}

fn is_not_run(c: &MatrixCell) -> bool {
    *c == MatrixCell::NotRun
}

/// Fill colour and the two lines of text of a cell.
fn describe(cell: MatrixCell) -> (RGBColor, &'static str, String) {
    match cell {
        MatrixCell::Admitted { witness_len } => {
            (BAD, "admitted", format!("witness {witness_len} steps"))
        }
        MatrixCell::Prevented { states } => (
            GOOD,
            "prevented",
            format!("{} states", style::compact(states)),
        ),
        MatrixCell::Inconclusive { states } => (
            UNSURE,
            "inconclusive",
            format!("limit at {}", style::compact(states)),
        ),
        MatrixCell::NotRun => (NONE, "not run", String::new()),
    }
}

fn draw_cell(root: &Area, cell: MatrixCell, (x, y): (i32, i32)) -> DrawResult {
    let (fill, verdict, detail) = describe(cell);
    let corners = [(x + 2, y + 2), (x + CELL_W - 2, y + CELL_H - 2)];
    root.draw(&Rectangle::new(corners, fill.filled()))?;
    let cx = x + CELL_W / 2;
    let top = style::bold(BODY_PX, INK, HPos::Center, VPos::Center);
    let bottom = style::text(SMALL_PX, INK, HPos::Center, VPos::Center);
    if detail.is_empty() {
        style::label(root, verdict, (cx, y + CELL_H / 2), &top)?;
    } else {
        style::label(root, verdict, (cx, y + CELL_H / 2 - 9), &top)?;
        style::label(root, &detail, (cx, y + CELL_H / 2 + 11), &bottom)?;
    }
    Ok(())
}

fn legend(root: &Area, y: i32, x0: i32, not_run: bool) -> DrawResult {
    let mut items = vec![
        (BAD, "admitted: shortest witness found"),
        (GOOD, "prevented: bounded space exhausted"),
        (UNSURE, "inconclusive: limit hit"),
    ];
    if not_run {
        items.push((NONE, "not run: pair not checked"));
    }
    let font = style::text(SMALL_PX, INK, HPos::Left, VPos::Center);
    let mut x = x0.min(40);
    for (colour, text) in items {
        root.draw(&Rectangle::new(
            [(x, y - 8), (x + 16, y + 8)],
            colour.filled(),
        ))?;
        style::label(root, text, (x + 22, y), &font)?;
        x += 22 + style::text_width(SMALL_PX, text) + 24;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_say_what_they_are() {
        let (c, v, d) = describe(MatrixCell::Admitted { witness_len: 4 });
        assert_eq!((c, v, d.as_str()), (BAD, "admitted", "witness 4 steps"));
        let (c, v, d) = describe(MatrixCell::Prevented { states: 12_345 });
        assert_eq!((c, v, d.as_str()), (GOOD, "prevented", "12.3k states"));
        assert_eq!(describe(MatrixCell::NotRun).1, "not run");
    }
}
