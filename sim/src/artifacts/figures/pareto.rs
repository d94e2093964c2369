//! The cost figure: each realizing stack as a point, its guarantee (how many
//! of A1, A2, A3, A6 it excludes, y) against its token overhead (top panel) and makespan
//! overhead (bottom panel) over `vanilla`, with the 95 % interval as a horizontal bar. Stacks
//! on the Pareto front are filled and named in bold, the others hollow and grey.
//!
//! Several stacks share a strength, so a row of the lattice is spread a little up and down
//! (by its order in the data), each stack on its own faint row line with its name in the left
//! gutter; ticks on the row mark the per-scenario overheads behind the mean. The renderer draws what the cost experiment computed, including which stacks are on
//! the front; a pass shows layout and determinism, not the numbers.

use super::style::{self, Area, DrawResult, Estimate, BODY_PX, FAINT, INK, SMALL_PX};
use crate::artifacts::tables::{Cell, Table};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// One stack on the figure.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParetoPoint {
    /// The stack's canonical name.
    pub stack: String,
    /// The point it realizes, as a label (`{A1,A3}`).
    pub excludes: String,
    /// How many anomalies it excludes (0–4).
    pub strength: u32,
    /// Token overhead over vanilla (0.1 = 10 % more tokens), with its interval.
    pub token_overhead: Estimate,
    /// Makespan overhead over vanilla, with its interval.
    pub makespan_overhead: Estimate,
    /// Operations dropped before generation, per session: work not done, which costs no
    /// tokens.
    pub drops: f64,
    /// The token and makespan overheads of each scenario the means are over (drawn as ticks),
    /// in [`ParetoData::over`]'s order.
    pub token_by_scenario: Vec<f64>,
    pub makespan_by_scenario: Vec<f64>,
    /// On the Pareto front.
    pub front: bool,
}

/// The figure's data.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParetoData {
    /// The scenarios the overheads are averaged over.
    pub over: Vec<String>,
    pub points: Vec<ParetoPoint>,
}

impl ParetoData {
    /// One row per stack.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!(
                "What a guarantee costs, per realizing stack: token and makespan overhead vs \
                 vanilla (mean over {}), drops, and the Pareto front",
                self.over.join(", ")
            ),
            &[
                "excludes",
                "stack",
                "strength",
                "token_overhead",
                "token_overhead_lo95",
                "token_overhead_hi95",
                "makespan_overhead",
                "makespan_overhead_lo95",
                "makespan_overhead_hi95",
                "drops_per_session",
                "pareto_front",
            ],
        );
        for p in &self.points {
            let mut row = vec![
                Cell::text(p.excludes.clone()),
                Cell::text(p.stack.clone()),
                Cell::Int(i64::from(p.strength)),
            ];
            for e in [p.token_overhead, p.makespan_overhead] {
                row.extend([e.mean, e.lo, e.hi].map(|x| Cell::float(x, 4)));
            }
            row.push(Cell::float(p.drops, 3));
            row.push(Cell::text(if p.front { "yes" } else { "no" }));
            t.push(row);
        }
        t
    }
}

const WIDTH: u32 = 1300;
const HEIGHT: u32 = 1240;
/// Vertical distance between stacks of one strength, in strength units.
const SPREAD: f64 = 0.15;
/// The fraction of the x range left empty on each side.
const ROOM: f64 = 0.04;
/// Width of the left gutter that holds the y ticks and the stacks' names, in pixels.
const GUTTER: u32 = 450;
/// Space between a name and the plotting area (the y tick labels sit in it).
const NAME_GAP: i32 = 36;
/// The names of stacks off the front.
const NAME_GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// Renders the two panels as SVG text.
pub fn render(data: &ParetoData) -> String {
    style::svg("pareto", (WIDTH, HEIGHT), |root| {
        let area = style::titled(root, "What a guarantee costs")?;
        let sub = "each stack realizing a lattice point: anomalies it excludes against its \
                   overhead vs vanilla; filled, bold: Pareto front (no stack excludes a superset \
                   at no more tokens, makespan and drops)";
        let note = style::text(SMALL_PX, INK, HPos::Center, VPos::Top);
        style::label(&area, sub, (WIDTH as i32 / 2, 0), &note)?;
        let area = area.split_vertically(26).1;
        let (top, bottom) = area.split_vertically((HEIGHT - 70) / 2);
        let token = Axis {
            caption: "token overhead",
            mean: |p| p.token_overhead,
            ticks: |p| &p.token_by_scenario,
        };
        let makespan = Axis {
            caption: "makespan overhead",
            mean: |p| p.makespan_overhead,
            ticks: |p| &p.makespan_by_scenario,
        };
        panel(&top, data, &token)?;
        panel(&bottom, data, &makespan)
    })
}

/// The y of point `i`: its strength, spread by its rank among the points of that strength.
pub fn y_of(data: &ParetoData, i: usize) -> f64 {
    let s = data.points[i].strength;
    let same: Vec<usize> = (0..data.points.len())
        .filter(|&j| data.points[j].strength == s)
        .collect();
    let rank = same.iter().position(|&j| j == i).unwrap_or(0) as f64;
    let n = same.len() as f64;
    f64::from(s) + (rank - (n - 1.0) / 2.0) * SPREAD
}

/// One panel's quantity: its mean with interval, and the per-scenario values behind it.
struct Axis {
    caption: &'static str,
    mean: fn(&ParetoPoint) -> Estimate,
    ticks: fn(&ParetoPoint) -> &Vec<f64>,
}

/// The x range: every valid interval, every finite tick and 0, widened on both sides for the
/// names.
fn x_range(data: &ParetoData, axis: &Axis) -> (f64, f64) {
    let mut xs = vec![0.0];
    for p in &data.points {
        let e = (axis.mean)(p);
        if e.is_valid() {
            xs.extend([e.lo, e.hi]);
            xs.extend((axis.ticks)(p).iter().copied().filter(|x| x.is_finite()));
        }
    }
    let lo = xs.iter().copied().fold(0.0, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    let span = (hi - lo).max(0.02);
    (lo - span * ROOM, hi + span * ROOM)
}

/// A percentage tick label; a value that rounds to zero is `0%`, never `-0%`.
fn percent(v: f64) -> String {
    let p = (v * 100.0).round();
    if p == 0.0 {
        "0%".to_owned()
    } else {
        format!("{p:.0}%")
    }
}

fn panel(area: &Area, data: &ParetoData, axis: &Axis) -> DrawResult {
    let (x0, x1) = x_range(data, axis);
    let mut chart = ChartBuilder::on(area)
        .caption(axis.caption, (style::FONT, BODY_PX).into_font())
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(GUTTER)
        .build_cartesian_2d(x0..x1, -0.7f64..4.7f64)?;
    let desc = format!(
        "overhead vs vanilla, paired by seed: dot and bar, the mean over {} with its 95 % \
         interval; ticks, each of them",
        data.over.join(", ")
    );
    chart
        .configure_mesh()
        .x_labels(9)
        .y_labels(5)
        .x_label_formatter(&|v: &f64| percent(*v))
        .y_label_formatter(&|v: &f64| format!("{v:.0}"))
        .x_desc(desc)
        .y_desc("anomalies excluded")
        .label_style((style::FONT, SMALL_PX))
        .axis_desc_style((style::FONT, SMALL_PX))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()?;
    // Vanilla's cost: no overhead.
    let zero = PathElement::new(vec![(0.0, -0.7), (0.0, 4.7)], FAINT.stroke_width(1));
    chart.draw_series(std::iter::once(zero))?;
    for (i, p) in data.points.iter().enumerate() {
        let e = (axis.mean)(p);
        if !e.is_valid() {
            continue;
        }
        let y = y_of(data, i);
        let ink = if p.front {
            INK.to_rgba()
        } else {
            INK.mix(0.55)
        };
        let row = PathElement::new(vec![(x0, y), (x1, y)], INK.mix(0.07).stroke_width(1));
        chart.draw_series(std::iter::once(row))?;
        let ticks = (axis.ticks)(p)
            .iter()
            .filter(|x| x.is_finite())
            .map(|&x| PathElement::new(vec![(x, y - 0.05), (x, y + 0.05)], ink.stroke_width(1)));
        chart.draw_series(ticks)?;
        let bar = PathElement::new(vec![(e.lo, y), (e.hi, y)], ink.stroke_width(2));
        chart.draw_series(std::iter::once(bar))?;
        let dot = if p.front {
            Circle::new((e.mean, y), 5, INK.filled())
        } else {
            Circle::new((e.mean, y), 5, ink.stroke_width(2))
        };
        chart.draw_series(std::iter::once(dot))?;
        // The name in the left gutter, on the point's row.
        let name = if p.drops > 0.0 {
            format!("{} {} · drops {:.2}/session", p.stack, p.excludes, p.drops)
        } else {
            format!("{} {}", p.stack, p.excludes)
        };
        let font = if p.front {
            style::bold(SMALL_PX - 1.0, INK, HPos::Right, VPos::Center)
        } else {
            style::text(SMALL_PX - 1.0, NAME_GREY, HPos::Right, VPos::Center)
        };
        let (px, py) = chart.backend_coord(&(x0, y));
        let (bx, by) = area.get_base_pixel();
        style::label(area, &name, (px - bx - NAME_GAP, py - by), &font)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(mean: f64) -> Estimate {
        Estimate {
            mean,
            lo: mean - 0.01,
            hi: mean + 0.01,
        }
    }

    fn point(stack: &str, strength: u32, t: f64, front: bool) -> ParetoPoint {
        ParetoPoint {
            stack: stack.into(),
            excludes: "{}".into(),
            strength,
            token_overhead: est(t),
            makespan_overhead: est(t / 2.0),
            drops: 0.0,
            token_by_scenario: vec![t - 0.2, t + 0.2],
            makespan_by_scenario: vec![t],
            front,
        }
    }

    #[test]
    fn renders_deterministically_and_spreads_a_row() {
        let mut data = ParetoData {
            over: vec!["a".into(), "b".into()],
            points: vec![
                point("vanilla", 0, 0.0, false),
                point("pessimistic", 1, 0.4, true),
                point("pin", 1, 0.0, true),
            ],
        };
        let a = render(&data);
        assert_eq!(a, render(&data));
        assert!(a.contains("pessimistic {}"), "names are drawn");
        assert!(a.ends_with("</svg>\n"));
        assert_eq!(y_of(&data, 0), 0.0);
        assert!(y_of(&data, 1) < 1.0 && y_of(&data, 2) > 1.0);
        assert_eq!(data.table().rows.len(), 3);
        // A point without an estimate is left out, not drawn at a made-up place.
        data.points[1].token_overhead = Estimate::MISSING;
        let token = Axis {
            caption: "",
            mean: |p| p.token_overhead,
            ticks: |p| &p.token_by_scenario,
        };
        let (lo, hi) = x_range(&data, &token);
        assert!(
            lo < -0.2 && hi > 0.2 && hi < 0.4,
            "the ticks widen the range: {lo} {hi}"
        );
        assert_eq!(
            (percent(-0.001), percent(0.123)),
            ("0%".to_owned(), "12%".to_owned())
        );
    }
}
