//! Figure (f): the checker's distinct-state counts against the bound, on a log axis, for the
//! paper-faithful model, the canonical-writes model and canonical writes with symmetry reduction.
//!
//! The point of the figure is the gap between the lines: each reduction is a constant factor or
//! more at every bound, and the log axis shows it as a vertical offset. A bound the checker did
//! not finish is simply absent from its series (never extrapolated). A pass proves layout and
//! determinism, not the counts (the checker's pinned-count tests do).

use super::style::{self, DrawResult, INK};
use crate::artifacts::tables::{Cell, Table};
use plotters::prelude::*;

/// One finished run: the bound and the distinct states the checker found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatePoint {
    /// The bound (x axis), e.g. the number of operations per agent.
    pub bound: u32,
    /// Distinct states explored.
    pub states: u64,
}

/// One model configuration's counts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StateSeries {
    /// Configuration name (e.g. `paper-faithful`, `canonical`, `canonical+symmetry`).
    pub config: String,
    /// Points in increasing bound.
    pub points: Vec<StatePoint>,
}

/// The state-count figure's data.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StateCountData {
    /// What the bound is, for the x axis (e.g. `operations per agent (2 agents, 1 cell)`).
    pub bound_desc: String,
    /// One series per configuration.
    pub series: Vec<StateSeries>,
}

impl StateCountData {
    /// One row per (configuration, bound) with the distinct-state count.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!("Checker distinct states vs bound ({})", self.bound_desc),
            &["config", "bound", "states"],
        );
        for s in &self.series {
            for p in &s.points {
                t.push(vec![
                    Cell::text(s.config.clone()),
                    Cell::Int(i64::from(p.bound)),
                    Cell::Int(i64::try_from(p.states).unwrap_or(i64::MAX)),
                ]);
            }
        }
        t
    }
}

/// One column of a paper (3.3 in): at this width `TEXT_PX` is 7.2 pt there.
const WIDTH: u32 = 560;
const HEIGHT: u32 = 440;
/// Tick, axis and legend text (plotters units; SVG font-size 16.9 px).
const TEXT_PX: f64 = 21.0;

/// Renders the figure as SVG text.
pub fn render(data: &StateCountData) -> String {
    style::svg("states", (WIDTH, HEIGHT), |root| draw(root, data))
}

/// Powers of ten enclosing every count (at least one decade).
fn y_range(data: &StateCountData) -> (f64, f64) {
    let counts = data
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.states));
    let (lo, hi) = counts.fold((u64::MAX, 1u64), |(lo, hi), c| (lo.min(c), hi.max(c)));
    let lo = if lo == u64::MAX { 1 } else { lo.max(1) };
    let mut y0 = 1.0f64;
    while y0 * 10.0 <= lo as f64 {
        y0 *= 10.0;
    }
    let mut y1 = y0 * 10.0;
    while y1 < hi as f64 {
        y1 *= 10.0;
    }
    (y0, y1)
}

fn x_range(data: &StateCountData) -> (u32, u32) {
    let bounds = data
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.bound));
    let (lo, hi) = bounds.fold((u32::MAX, 0), |(lo, hi), b| (lo.min(b), hi.max(b)));
    if lo > hi {
        (0, 1)
    } else {
        (lo, hi.max(lo + 1))
    }
}

fn draw(root: &style::Area, data: &StateCountData) -> DrawResult {
    let area = style::titled(root, "Checker state counts vs bound")?;
    let (x0, x1) = x_range(data);
    let (y0, y1) = y_range(data);
    let pad = 0.25;
    let mut chart = ChartBuilder::on(&area)
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(84)
        .build_cartesian_2d(
            (f64::from(x0) - pad)..(f64::from(x1) + pad),
            (y0..y1).log_scale(),
        )?;
    let int_only = |x: &f64| {
        let r = x.round();
        if (x - r).abs() < 1e-6 {
            format!("{r:.0}")
        } else {
            String::new()
        }
    };
    let count = |y: &f64| style::compact(y.round() as u64);
    chart
        .configure_mesh()
        .x_labels((x1 - x0 + 1) as usize)
        .x_label_formatter(&int_only)
        .y_label_formatter(&count)
        .x_desc(data.bound_desc.as_str())
        .y_desc("distinct states (log scale)")
        .label_style((style::FONT, TEXT_PX))
        .axis_desc_style((style::FONT, TEXT_PX))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()?;
    for (i, series) in data.series.iter().enumerate() {
        let color = style::series_color(i);
        let pts: Vec<(f64, f64)> = series
            .points
            .iter()
            .map(|p| (f64::from(p.bound), p.states.max(1) as f64))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(series.config.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((style::FONT, TEXT_PX))
        .background_style(WHITE.mix(0.9))
        .border_style(INK.mix(0.3))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(points: &[(u32, u64)]) -> StateCountData {
        StateCountData {
            bound_desc: "b".into(),
            series: vec![StateSeries {
                config: "c".into(),
                points: points
                    .iter()
                    .map(|&(bound, states)| StatePoint { bound, states })
                    .collect(),
            }],
        }
    }

    #[test]
    fn y_range_is_whole_decades_around_the_counts() {
        assert_eq!(y_range(&data(&[(1, 360), (5, 2_400_000)])), (100.0, 1e7));
        assert_eq!(y_range(&data(&[(1, 1000)])), (1000.0, 1e4));
        assert_eq!(y_range(&data(&[(1, 0)])), (1.0, 10.0));
        assert_eq!(y_range(&data(&[])), (1.0, 10.0));
    }

    #[test]
    fn x_range_spans_the_bounds() {
        assert_eq!(x_range(&data(&[(2, 9), (5, 9)])), (2, 5));
        assert_eq!(x_range(&data(&[(3, 9)])), (3, 4));
        assert_eq!(x_range(&data(&[])), (0, 1));
    }
}
