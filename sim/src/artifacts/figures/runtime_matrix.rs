//! Figure (b): the runtime × anomaly matrix of the exhaustive checker as a coloured grid.
//!
//! One row per runtime, one column per anomaly. A cell is red when the checker found the anomaly
//! (with the length of its shortest witness), green when the whole bounded space was explored
//! without it (with the number of states explored), yellow when the search hit a limit first,
//! grey when that pair was not run. Each column checks its anomaly at its own bounds, printed
//! under the grid (one column of a paper is too narrow to print them over the columns); the cells
//! carry short codes the legend spells out. The renderer only draws what [`MatrixData`] says; a pass does not
//! prove the verdicts (the checker's tests do).

use super::style::{self, Area, DrawResult, BAD, COLUMN_PX, GOOD, INK, NONE, UNSURE};
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

/// One column of a paper (3.3 in) wide; every text is `COLUMN_PX`, 7.2 pt there.
const WIDTH: i32 = style::COLUMN_W as i32;
const CELL_H: i32 = 34;
/// Height of one line of text.
const LINE_H: i32 = 24;
/// The widest a line of the notes above and below the grid may be.
const NOTE_W: i32 = WIDTH - 30;

/// `text` broken at spaces into lines no wider than `NOTE_W` at `COLUMN_PX`.
fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if style::text_width(COLUMN_PX, &format!("{line} {word}")) <= NOTE_W => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// The subtitle's lines (the bounds shared by every column).
fn subtitle(data: &MatrixData) -> Vec<String> {
    wrap(&data.bounds)
}

/// Each column's bounds, as wrapped lines `A1: 2 agents, 1 cell, …` printed under the grid
/// (a column of a paper is too narrow to print them over the columns).
fn bounds_notes(data: &MatrixData) -> Vec<String> {
    data.anomalies
        .iter()
        .enumerate()
        .filter_map(|(j, a)| {
            let b = data.column_bounds.get(j).filter(|b| !b.is_empty())?;
            Some(wrap(&format!("{a}: {}", b.join(", "))))
        })
        .flatten()
        .collect()
}

/// The legend's entries: colour and text.
fn legend_items(not_run: bool) -> Vec<(RGBColor, &'static str)> {
    let mut items = vec![
        (BAD, "admitted: w4 = shortest witness, 4 steps"),
        (GOOD, "prevented: states of the exhausted space"),
        (UNSURE, "inconclusive: >N = limit hit at N states"),
    ];
    if not_run {
        items.push((NONE, "not run: pair not checked"));
    }
    items
}

fn has_not_run(data: &MatrixData) -> bool {
    data.rows
        .iter()
        .any(|r| (0..data.anomalies.len()).any(|j| r.cells.get(j).is_none_or(is_not_run)))
}

/// Where the column headers sit: below the title and the subtitle.
fn header_y(data: &MatrixData) -> i32 {
    44 + LINE_H * subtitle(data).len() as i32 + 8
}

/// Renders the matrix as SVG text.
pub fn render(data: &MatrixData) -> String {
    let label_w = data
        .rows
        .iter()
        .map(|r| style::text_width(COLUMN_PX, &r.runtime))
        .max()
        .unwrap_or(0)
        + 16;
    let cols = data.anomalies.len().max(1) as i32;
    let cell_w = (WIDTH - label_w - 8) / cols;
    let top = header_y(data) + LINE_H + 4;
    let notes = bounds_notes(data).len() + legend_items(has_not_run(data)).len();
    let height = top + data.rows.len() as i32 * CELL_H + 12 + LINE_H * notes as i32 + 8;
    style::svg("matrix", (WIDTH as u32, height as u32), |root| {
        draw(root, data, (label_w, cell_w, top))
    })
}

fn draw(root: &Area, data: &MatrixData, (label_w, cell_w, top): (i32, i32, i32)) -> DrawResult {
    style::titled(root, "Runtime \u{d7} anomaly (exhaustive checker)")?;
    let note = style::text(COLUMN_PX, INK, HPos::Center, VPos::Top);
    for (k, line) in subtitle(data).iter().enumerate() {
        style::label(root, line, (WIDTH / 2, 44 + k as i32 * LINE_H), &note)?;
    }
    let head = style::bold(COLUMN_PX, INK, HPos::Center, VPos::Top);
    for (j, a) in data.anomalies.iter().enumerate() {
        let x = label_w + j as i32 * cell_w + cell_w / 2;
        style::label(root, a, (x, header_y(data)), &head)?;
    }
    let name = style::text(COLUMN_PX, INK, HPos::Right, VPos::Center);
    for (i, row) in data.rows.iter().enumerate() {
        let y = top + i as i32 * CELL_H;
        style::label(root, &row.runtime, (label_w - 8, y + CELL_H / 2), &name)?;
        for j in 0..data.anomalies.len() {
            let cell = row.cells.get(j).copied().unwrap_or(MatrixCell::NotRun);
            draw_cell(root, cell, (label_w + j as i32 * cell_w, y), cell_w)?;
        }
    }
    let mut y = top + data.rows.len() as i32 * CELL_H + 12;
    let left = style::text(COLUMN_PX, INK, HPos::Left, VPos::Top);
    for line in bounds_notes(data) {
        style::label(root, &line, (12, y), &left)?;
        y += LINE_H;
    }
    legend(root, y, &legend_items(has_not_run(data)))
}

fn is_not_run(c: &MatrixCell) -> bool {
    *c == MatrixCell::NotRun
}

/// Fill colour and the short text of a cell (the legend says what it means).
fn describe(cell: MatrixCell) -> (RGBColor, String) {
    match cell {
        MatrixCell::Admitted { witness_len } => (BAD, format!("w{witness_len}")),
        MatrixCell::Prevented { states } => (GOOD, style::compact(states)),
        MatrixCell::Inconclusive { states } => (UNSURE, format!(">{}", style::compact(states))),
        MatrixCell::NotRun => (NONE, "\u{2013}".to_owned()),
    }
}

fn draw_cell(root: &Area, cell: MatrixCell, (x, y): (i32, i32), cell_w: i32) -> DrawResult {
    let (fill, text) = describe(cell);
    let corners = [(x + 2, y + 2), (x + cell_w - 2, y + CELL_H - 2)];
    root.draw(&Rectangle::new(corners, fill.filled()))?;
    let font = style::text(COLUMN_PX, INK, HPos::Center, VPos::Center);
    style::label(root, &text, (x + cell_w / 2, y + CELL_H / 2), &font)
}

fn legend(root: &Area, mut y: i32, items: &[(RGBColor, &str)]) -> DrawResult {
    let font = style::text(COLUMN_PX, INK, HPos::Left, VPos::Center);
    for (colour, text) in items {
        let mid = y + LINE_H / 2;
        root.draw(&Rectangle::new(
            [(12, mid - 8), (28, mid + 8)],
            colour.filled(),
        ))?;
        style::label(root, text, (36, mid), &font)?;
        y += LINE_H;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_say_what_they_are() {
        let (c, d) = describe(MatrixCell::Admitted { witness_len: 4 });
        assert_eq!((c, d.as_str()), (BAD, "w4"));
        let (c, d) = describe(MatrixCell::Prevented { states: 12_345 });
        assert_eq!((c, d.as_str()), (GOOD, "12.3k"));
        let (c, d) = describe(MatrixCell::Inconclusive { states: 2_000_000 });
        assert_eq!((c, d.as_str()), (UNSURE, ">2M"));
        assert_eq!(describe(MatrixCell::NotRun).0, NONE);
    }
}
