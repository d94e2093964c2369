//! Figure (c): the twins as a compact table-figure — for each anomaly and pair of runtimes
//! (`causal-no-cascade → causal`), k/N runs exhibiting the anomaly without the preventing
//! mechanism and with it; the sizes whose counts are equal share one row (thirteen identical
//! rows of bars said one thing). Sized for one column of a paper (3.3 in), where no text is
//! under 7 pt. The Wilson intervals are in the twins table.
//!
//! A twin is the same seeded scenario run twice, once on a runtime that admits the anomaly and
//! once on the runtime whose mechanism prevents it. The renderer draws the counts it is given;
//! a pass does not prove the counts (the twin runner's tests do).

use super::style::{self, Count, Estimate, WITH, WITHOUT};
use crate::artifacts::tables::{Cell, Table};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// One twin: an anomaly at one size, without and with the mechanism.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TwinGroup {
    /// The anomaly (`A1` ...).
    pub anomaly: String,
    /// The size, as shown (e.g. `3 agents`).
    pub size: String,
    /// The runtime or mechanism that prevents it (e.g. `registry-pin`).
    pub mechanism: String,
    /// The runtime the twin runs without the mechanism (e.g. `saga`).
    pub baseline: String,
    /// Runs exhibiting the anomaly without the mechanism.
    pub without: Count,
    /// Runs exhibiting the anomaly with the mechanism.
    pub with: Count,
}

/// All twins, drawn top to bottom in this order.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TwinsData {
    /// Twins.
    pub groups: Vec<TwinGroup>,
}

/// The columns of a twins table that count runs, each side with its Wilson interval.
pub const COUNT_COLUMNS: [&str; 10] = [
    "without_k",
    "without_n",
    "without_rate",
    "without_lo95",
    "without_hi95",
    "with_k",
    "with_n",
    "with_rate",
    "with_lo95",
    "with_hi95",
];

impl TwinsData {
    /// The counts and their Wilson intervals, one row per twin.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "Twins: runs exhibiting the anomaly without and with the mechanism",
            &[
                &["anomaly", "size", "mechanism", "without_runtime"][..],
                &COUNT_COLUMNS,
            ]
            .concat(),
        );
        for g in &self.groups {
            let mut row = vec![
                Cell::text(g.anomaly.clone()),
                Cell::text(g.size.clone()),
                Cell::text(g.mechanism.clone()),
                Cell::text(g.baseline.clone()),
            ];
            row.extend(count_cells(g.without));
            row.extend(count_cells(g.with));
            t.push(row);
        }
        t
    }
}

/// `k`, `n`, rate and its 95 % Wilson interval as table cells (4 decimals).
pub fn count_cells(c: Count) -> Vec<Cell> {
    let e = c.wilson95().unwrap_or(Estimate::MISSING);
    vec![
        Cell::Int(i64::try_from(c.k).unwrap_or(i64::MAX)),
        Cell::Int(i64::try_from(c.n).unwrap_or(i64::MAX)),
        Cell::float(e.mean, 4),
        Cell::float(e.lo, 4),
        Cell::float(e.hi, 4),
    ]
}

/// One column of a two-column paper (3.3 in): at this width the text below is 7.2 pt there.
const WIDTH: u32 = 560;
/// Text size (plotters units; SVG font-size 16.9 px).
const TEXT_PX: f64 = 21.0;
const TITLE_H: i32 = 44;
const HEAD_H: i32 = 34;
const ROW_H: i32 = 60;
const LINE_H: i32 = 26;
/// Column starts: anomaly, runtimes (first line) and sizes (second line), runs without and
/// with on the second line, so a long stack name has the whole first line.
const COLS: [i32; 4] = [12, 62, 330, 440];
const FOOT: [&str; 2] = [
    "k/N: runs exhibiting the anomaly of N seeded",
    "trials per side. A row holds every size whose",
];

/// Twins that say the same thing, as one row: the same anomaly, runtimes and counts at
/// several sizes.
struct Row {
    anomaly: String,
    runtimes: String,
    sizes: Vec<String>,
    without: Count,
    with: Count,
}

/// Consecutive twins with the same anomaly, runtimes and counts merge into one row.
fn rows(data: &TwinsData) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    for g in &data.groups {
        let runtimes = format!("{} \u{2192} {}", g.baseline, g.mechanism);
        match out.last_mut() {
            Some(r)
                if r.anomaly == g.anomaly
                    && r.runtimes == runtimes
                    && r.without == g.without
                    && r.with == g.with =>
            {
                r.sizes.push(g.size.clone());
            }
            _ => out.push(Row {
                anomaly: g.anomaly.clone(),
                runtimes,
                sizes: vec![g.size.clone()],
                without: g.without,
                with: g.with,
            }),
        }
    }
    out
}

/// `depth 2, 3, 5` for sizes that share their first word, else the sizes joined.
fn sizes_text(sizes: &[String]) -> String {
    let split: Vec<Option<(&str, &str)>> = sizes.iter().map(|s| s.split_once(' ')).collect();
    let word = split.first().copied().flatten().map(|(w, _)| w);
    match word {
        Some(w) if split.iter().all(|p| p.is_some_and(|(x, _)| x == w)) => {
            let rest: Vec<&str> = split.iter().flatten().map(|(_, r)| *r).collect();
            format!("{w} {}", rest.join(", "))
        }
        _ => sizes.join(", "),
    }
}

/// Renders the twins as a compact table-figure (SVG text): one row per anomaly and pair of
/// runtimes, the sizes with equal counts merged, k/N without and with the mechanism.
pub fn render(data: &TwinsData) -> String {
    render_as(data, "Twins: runs with the anomaly", "twins")
}

/// [`render`] under another title, naming the table (`tables/<table>.md`) that holds the
/// intervals.
pub fn render_as(data: &TwinsData, title: &str, table: &str) -> String {
    let rows = rows(data);
    let foot = [
        FOOT[0].to_owned(),
        FOOT[1].to_owned(),
        format!("counts are equal; intervals: {table}.md"),
    ];
    let body = TITLE_H + HEAD_H + ROW_H * rows.len().max(1) as i32;
    let height = body + 14 + LINE_H * foot.len() as i32 + 8;
    style::svg("twins", (WIDTH, height as u32), |root| {
        let big = style::bold(24.0, style::INK, HPos::Left, VPos::Top);
        style::label(root, title, (COLS[0], 10), &big)?;
        let head = style::bold(TEXT_PX, style::INK, HPos::Left, VPos::Center);
        let y = TITLE_H + HEAD_H / 2;
        for (x, h) in COLS
            .iter()
            .zip(["", "without \u{2192} with", "without", "with"])
        {
            style::label(root, h, (*x, y), &head)?;
        }
        let rule =
            |y: i32, c: RGBColor| root.draw(&PathElement::new(vec![(0, y), (WIDTH as i32, y)], c));
        rule(TITLE_H + HEAD_H, style::INK)?;
        for (i, r) in rows.iter().enumerate() {
            let top = TITLE_H + HEAD_H + ROW_H * i as i32;
            draw_row(root, r, top)?;
            rule(top + ROW_H, style::FAINT)?;
        }
        let text = style::text(TEXT_PX, style::INK, HPos::Left, VPos::Top);
        for (k, line) in foot.iter().enumerate() {
            style::label(root, line, (COLS[0], body + 14 + LINE_H * k as i32), &text)?;
        }
        Ok(())
    })
}

fn draw_row(root: &style::Area, r: &Row, top: i32) -> style::DrawResult {
    let (y1, y2) = (top + 17, top + 17 + LINE_H);
    let plain = style::text(TEXT_PX, style::INK, HPos::Left, VPos::Center);
    let strong = style::bold(TEXT_PX, style::INK, HPos::Left, VPos::Center);
    style::label(root, &r.anomaly, (COLS[0], y1), &strong)?;
    style::label(root, &r.runtimes, (COLS[1], y1), &plain)?;
    style::label(root, &sizes_text(&r.sizes), (COLS[1], y2), &plain)?;
    for (x, c, colour) in [(COLS[2], r.without, WITHOUT), (COLS[3], r.with, WITH)] {
        let s = style::bold(TEXT_PX, colour, HPos::Left, VPos::Center);
        style::label(root, &format!("{}/{}", c.k, c.n), (x, y2), &s)?;
    }
    Ok(())
}
