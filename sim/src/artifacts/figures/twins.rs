//! Figure (c): the twins — for each anomaly and size, k/N runs exhibiting the anomaly without
//! the preventing mechanism next to k/N with it, each with its 95 % Wilson interval; each row
//! names both runtimes (`without causal-no-cascade, with causal`).
//!
//! A twin is the same seeded scenario run twice, once on a runtime that admits the anomaly and
//! once on the runtime whose mechanism prevents it; the expected picture is a long orange bar
//! over an empty blue one. The renderer draws the counts it is given and computes only the
//! Wilson intervals; a pass does not prove the counts (the twin runner's tests do).

use super::bars::{self, Bar, BarPanel, BarRow};
use super::style::{self, Count, Estimate, SMALL_PX, WITH, WITHOUT};
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

impl TwinsData {
    /// The counts and their Wilson intervals, one row per twin.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            "Twins: runs exhibiting the anomaly without and with the mechanism",
            &[
                "anomaly",
                "size",
                "mechanism",
                "without_runtime",
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
            ],
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

const WIDTH: u32 = 1000;
const ROW_H: u32 = 64;

/// Renders the twins as SVG text.
pub fn render(data: &TwinsData) -> String {
    let rows: Vec<BarRow> = data.groups.iter().map(row).collect();
    let height = 44 + 40 + 80 + ROW_H * rows.len().max(1) as u32 + 30;
    style::svg("twins", (WIDTH, height), |root| {
        let area = style::titled(root, "Twins: runs exhibiting the anomaly, k/N")?;
        let (legend_area, plot) = area.split_vertically(30);
        legend(&legend_area)?;
        let panel = BarPanel {
            caption: "",
            x_desc: "fraction of runs (95% Wilson interval)",
            rows: &rows,
            percent: true,
            unit: true,
            label_w: bars::label_width(&rows),
        };
        bars::draw(root, &plot, &panel)
    })
}

fn bar(c: Count, color: RGBColor) -> Bar {
    Bar {
        value: c.wilson95().unwrap_or(Estimate::MISSING),
        color,
        note: format!("{}/{}", c.k, c.n),
    }
}

fn row(g: &TwinGroup) -> BarRow {
    BarRow {
        label: format!("{}, {}", g.anomaly, g.size),
        sublabel: format!("without {}, with {}", g.baseline, g.mechanism),
        bars: vec![bar(g.without, WITHOUT), bar(g.with, WITH)],
    }
}

fn legend(area: &style::Area) -> style::DrawResult {
    let font = style::text(SMALL_PX, style::INK, HPos::Left, VPos::Center);
    let mut x = 40;
    for (colour, text) in [(WITHOUT, "without mechanism"), (WITH, "with mechanism")] {
        area.draw(&Rectangle::new([(x, 7), (x + 16, 23)], colour.filled()))?;
        style::label(area, text, (x + 22, 15), &font)?;
        x += 22 + style::text_width(SMALL_PX, text) + 30;
    }
    Ok(())
}
