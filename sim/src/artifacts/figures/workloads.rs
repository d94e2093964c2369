//! Figure (d): workload A1 rates and token overhead per runtime, two panels one above the other
//! (one column of a paper wide).
//!
//! Left: the fraction of runs exhibiting A1 (stale generation) with its 95 % Wilson interval;
//! right: token overhead relative to the vanilla runtime, with the interval the workload runner
//! computes, named on the axis as the data names it. Rows are runtimes in data order, the same in both panels. A pass proves the
//! layout and determinism, not the rates (the workload runner's tests do).

use super::bars::{self, Bar, BarPanel, BarRow};
use super::style::{self, Count, Estimate};
use super::twins::count_cells;
use crate::artifacts::tables::{Cell, Table};

/// One runtime's results on the workload.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkloadRow {
    /// Runtime name (`RuntimeKind::name`).
    pub runtime: String,
    /// Runs exhibiting A1 out of runs.
    pub a1: Count,
    /// Token overhead over vanilla as a fraction (0.12 = 12 % more tokens), with its interval.
    pub token_overhead: Estimate,
}

/// The workload figure's data.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkloadData {
    /// Workload name, shown in the title (e.g. `A1 stale-generation workload`).
    pub workload: String,
    /// What the token overhead's interval is (e.g. `95% normal, paired by seed`), for the
    /// axis label.
    pub overhead_interval: String,
    /// One row per runtime, top to bottom.
    pub rows: Vec<WorkloadRow>,
}

impl WorkloadData {
    /// One row per runtime: A1 counts with Wilson interval, token overhead with its interval.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!(
                "Workload {}: A1 rate and token overhead per runtime",
                self.workload
            ),
            &[
                "runtime",
                "a1_k",
                "a1_n",
                "a1_rate",
                "a1_lo95",
                "a1_hi95",
                "token_overhead",
                "token_overhead_lo",
                "token_overhead_hi",
            ],
        );
        for r in &self.rows {
            let mut row = vec![Cell::text(r.runtime.clone())];
            row.extend(count_cells(r.a1));
            let o = r.token_overhead;
            row.extend([o.mean, o.lo, o.hi].map(|x| Cell::float(x, 4)));
            t.push(row);
        }
        t
    }
}

/// One column of a paper: the two panels are stacked, each with its own runtime labels.
const WIDTH: u32 = style::COLUMN_W;
const ROW_H: u32 = 36;
/// Caption, x axis and margins of one panel.
const PANEL_EXTRA: u32 = 36 + 60 + 20;

/// Renders the two panels as SVG text.
pub fn render(data: &WorkloadData) -> String {
    let n = data.rows.len().max(1) as u32;
    let panel_h = PANEL_EXTRA + ROW_H * n;
    let height = 44 + 2 * panel_h;
    let top = rows(data, rate_bar);
    let bottom = rows(data, overhead_bar);
    let label_w = bars::label_width(&top);
    style::svg("workloads", (WIDTH, height), |root| {
        let area = style::titled(root, &format!("Workload: {}", data.workload))?;
        let (a, b) = area.split_vertically(panel_h);
        let rate = BarPanel {
            caption: "runs exhibiting A1",
            x_desc: "95% Wilson interval",
            rows: &top,
            percent: true,
            unit: true,
            label_w,
        };
        bars::draw(root, &a, &rate)?;
        let tokens = BarPanel {
            caption: "token overhead vs vanilla",
            x_desc: &data.overhead_interval,
            rows: &bottom,
            percent: true,
            unit: false,
            label_w,
        };
        bars::draw(root, &b, &tokens)
    })
}

fn rows(data: &WorkloadData, bar: impl Fn(usize, &WorkloadRow) -> Bar) -> Vec<BarRow> {
    data.rows
        .iter()
        .enumerate()
        .map(|(i, r)| BarRow {
            label: r.runtime.clone(),
            sublabel: String::new(),
            bars: vec![bar(i, r)],
        })
        .collect()
}

fn rate_bar(i: usize, r: &WorkloadRow) -> Bar {
    Bar {
        value: r.a1.wilson95().unwrap_or(Estimate::MISSING),
        color: style::runtime_color(&r.runtime, i),
        note: format!("{}/{}", r.a1.k, r.a1.n),
    }
}

fn overhead_bar(i: usize, r: &WorkloadRow) -> Bar {
    Bar {
        value: r.token_overhead,
        color: style::runtime_color(&r.runtime, i),
        note: format!("{:+.1}%", r.token_overhead.mean * 100.0),
    }
}
