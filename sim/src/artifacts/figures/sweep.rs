//! Figure (e): the contention sweep — anomaly rate, abort/drop rate, token overhead and makespan
//! against contention, one line per runtime with its interval as a translucent band.
//!
//! Four panels one above the other (one column of a paper wide) share one legend at the top, so
//! a runtime has the same colour everywhere. Points whose estimate is not finite or not ordered are left out of a line rather
//! than drawn at a made-up value. The x ticks sit at the sampled values (2, 4, 8, 16 agents,
//! not 5.0, 10.0); each panel's caption names its interval as the data names it (a note under
//! the panels when the caption would not fit), the notes name the x axis; and a line drawn under
//! a later one at every point of a panel (si under ssi when every op writes) is named in the
//! notes, so a reader does not take it for missing. A pass proves layout and
//! determinism, not the sweep's numbers.

use super::style::{self, wrap, Area, DrawResult, Estimate, COLUMN_PX, INK};
use crate::artifacts::tables::{Cell, Table};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// One runtime at one contention level.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepPoint {
    /// The contention level (x axis), e.g. agents per cell.
    pub contention: f64,
    /// Fraction of runs exhibiting any anomaly.
    pub anomaly_rate: Estimate,
    /// Fraction of operations aborted or dropped by the runtime.
    pub abort_rate: Estimate,
    /// Token overhead over vanilla, as a fraction.
    pub token_overhead: Estimate,
    /// Makespan in virtual milliseconds.
    pub makespan_ms: Estimate,
}

/// One runtime's curve.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepSeries {
    /// Runtime name (`RuntimeKind::name`).
    pub runtime: String,
    /// Points, in increasing contention.
    pub points: Vec<SweepPoint>,
}

/// What the bands are: the interval each metric's estimate carries.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepIntervals {
    /// The anomaly and abort/drop rates' (e.g. `95% Wilson`).
    pub rates: String,
    /// The token overhead's.
    pub token_overhead: String,
    /// The makespan's.
    pub makespan_ms: String,
}

/// The sweep figure's data.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepData {
    /// What contention means here, for the x axis (e.g. `agents sharing one cell`).
    pub x_desc: String,
    /// One series per runtime.
    pub series: Vec<SweepSeries>,
    /// What the bands are.
    pub intervals: SweepIntervals,
}

impl SweepData {
    /// Long format: one row per (runtime, contention, metric) with mean and interval.
    pub fn table(&self) -> Table {
        let mut t = Table::new(
            format!("Contention sweep ({})", self.x_desc),
            &["runtime", "contention", "metric", "mean", "lo", "hi"],
        );
        for s in &self.series {
            for p in &s.points {
                for m in &METRICS {
                    let e = (m.get)(p);
                    t.push(vec![
                        Cell::text(s.runtime.clone()),
                        Cell::float(p.contention, 3),
                        Cell::text(m.key),
                        Cell::float(e.mean, 4),
                        Cell::float(e.lo, 4),
                        Cell::float(e.hi, 4),
                    ]);
                }
            }
        }
        t
    }
}

/// A panel: its caption, how to read its metric, whether it is a fraction and its interval.
struct Metric {
    key: &'static str,
    caption: &'static str,
    get: fn(&SweepPoint) -> Estimate,
    percent: bool,
    interval: fn(&SweepIntervals) -> &str,
}

const METRICS: [Metric; 4] = [
    Metric {
        key: "anomaly_rate",
        caption: "anomaly rate",
        get: |p| p.anomaly_rate,
        percent: true,
        interval: |i| &i.rates,
    },
    Metric {
        key: "abort_rate",
        caption: "abort / drop rate",
        get: |p| p.abort_rate,
        percent: true,
        interval: |i| &i.rates,
    },
    Metric {
        key: "token_overhead",
        caption: "token overhead vs vanilla",
        get: |p| p.token_overhead,
        percent: true,
        interval: |i| &i.token_overhead,
    },
    Metric {
        key: "makespan_ms",
        caption: "makespan (virtual ms)",
        get: |p| p.makespan_ms,
        percent: false,
        interval: |i| &i.makespan_ms,
    },
];

/// One column of a paper (3.3 in) wide; every text is at least `COLUMN_PX`, 7.2 pt there.
const WIDTH: u32 = style::COLUMN_W;
/// One panel's height; the four are stacked.
const PANEL_H: u32 = 240;
const LINE_H: i32 = 24;
/// Characters of text that fit on a note line under the panels.
const NOTE_CHARS: usize = 50;

/// Legend entries laid out in rows across the width: (row, x, series index).
fn legend_slots(data: &SweepData) -> Vec<(i32, i32, usize)> {
    let (mut row, mut x) = (0, 12);
    let mut out = Vec::new();
    for (i, s) in data.series.iter().enumerate() {
        let w = 36 + style::text_width(COLUMN_PX, &s.runtime) + 18;
        if x + w > WIDTH as i32 && x > 12 {
            row += 1;
            x = 12;
        }
        out.push((row, x, i));
        x += w;
    }
    out
}

/// A panel's caption with its interval, or without it when that does not fit (the notes then
/// name the interval).
fn caption(data: &SweepData, metric: &Metric) -> (String, Option<String>) {
    let interval = (metric.interval)(&data.intervals);
    let full = match metric.caption.strip_suffix(')') {
        Some(open) => format!("{open}; {interval})"),
        None => format!("{} ({interval})", metric.caption),
    };
    if full.chars().count() <= NOTE_CHARS {
        (full, None)
    } else {
        let note = format!("{}: bands are {interval}", metric.caption);
        (metric.caption.to_owned(), Some(note))
    }
}

/// The lines under the panels: the x axis, intervals left out of captions, hidden lines.
fn notes(data: &SweepData) -> Vec<String> {
    let mut out = wrap(&format!("x axis: {}", data.x_desc), NOTE_CHARS);
    let mut items: Vec<String> = METRICS.iter().filter_map(|m| caption(data, m).1).collect();
    items.extend(hidden(data));
    for item in items {
        out.extend(wrap(&item, NOTE_CHARS));
    }
    out
}

/// Renders the four panels, one above the other, as SVG text.
pub fn render(data: &SweepData) -> String {
    let legend_rows = legend_slots(data).last().map_or(0, |s| s.0 + 1);
    let legend_h = (LINE_H * legend_rows + 8) as u32;
    let notes = notes(data);
    let height = 44 + legend_h + 4 * PANEL_H + (LINE_H * notes.len() as i32) as u32 + 12;
    style::svg("sweep", (WIDTH, height), |root| {
        let area = style::titled(root, "Contention sweep")?;
        let (legend_area, rest) = area.split_vertically(legend_h);
        legend(&legend_area, data)?;
        let (grid, foot) = rest.split_vertically(4 * PANEL_H);
        for (panel, metric) in grid.split_evenly((4, 1)).iter().zip(&METRICS) {
            draw_panel(panel, data, metric)?;
        }
        let font = style::text(COLUMN_PX, INK, HPos::Left, VPos::Top);
        for (k, line) in notes.iter().enumerate() {
            style::label(&foot, line, (12, 4 + k as i32 * LINE_H), &font)?;
        }
        Ok(())
    })
}

fn valid(series: &SweepSeries, metric: &Metric) -> Vec<(f64, Estimate)> {
    series
        .points
        .iter()
        .filter(|p| p.contention.is_finite())
        .map(|p| (p.contention, (metric.get)(p)))
        .filter(|(_, e)| e.is_valid())
        .collect()
}

fn ranges(data: &SweepData, metric: &Metric) -> ((f64, f64), (f64, f64)) {
    let all: Vec<(f64, Estimate)> = data.series.iter().flat_map(|s| valid(s, metric)).collect();
    let x0 = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x1 = all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let y0 = all.iter().map(|p| p.1.lo).fold(0.0, f64::min);
    let y1 = all.iter().map(|p| p.1.hi).fold(0.0, f64::max);
    let (x0, x1) = match (x0 < x1, x0 == x1) {
        (true, _) => (x0, x1),
        // One contention level: centre it rather than draw a zero-width axis.
        (false, true) => (x0 - 0.5, x0 + 0.5),
        (false, false) => (0.0, 1.0),
    };
    let y1 = if y1 > y0 { y1 } else { y0 + 1.0 };
    ((x0, x1), (y0, y1 + 0.06 * (y1 - y0)))
}

/// The sampled contention values, ascending and without repeats: the x ticks.
fn sampled(data: &SweepData) -> Vec<f64> {
    let mut xs: Vec<f64> = data
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.contention))
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// A tick label: integers without a decimal point (`2`, not `2.0`), others as short as they
/// print exactly.
fn tick(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

fn draw_panel(area: &Area, data: &SweepData, metric: &Metric) -> DrawResult {
    let ((x0, x1), (y0, y1)) = ranges(data, metric);
    let x = style::Ticked::new(x0..x1, sampled(data));
    let mut chart = ChartBuilder::on(area)
        .caption(
            caption(data, metric).0,
            (style::FONT, COLUMN_PX).into_font(),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y0..y1)?;
    let pct = |y: &f64| format!("{:.0}%", y * 100.0);
    let plain = |y: &f64| format!("{y:.0}");
    let fmt: &dyn Fn(&f64) -> String = if metric.percent { &pct } else { &plain };
    chart
        .configure_mesh()
        .y_labels(4)
        .x_label_formatter(&|x: &f64| tick(*x))
        .y_label_formatter(fmt)
        .label_style((style::FONT, COLUMN_PX))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()?;
    for (i, series) in data.series.iter().enumerate() {
        let color = style::runtime_color(&series.runtime, i);
        let pts = valid(series, metric);
        let mut band: Vec<(f64, f64)> = pts.iter().map(|(x, e)| (*x, e.hi)).collect();
        band.extend(pts.iter().rev().map(|(x, e)| (*x, e.lo)));
        if pts.len() > 1 {
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                color.mix(0.15).filled(),
            )))?;
        }
        let line = pts.iter().map(|(x, e)| (*x, e.mean));
        chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
        let dots = pts
            .iter()
            .map(|(x, e)| Circle::new((*x, e.mean), 3, color.filled()));
        chart.draw_series(dots)?;
    }
    Ok(())
}

fn legend(area: &Area, data: &SweepData) -> DrawResult {
    let font = style::text(COLUMN_PX, INK, HPos::Left, VPos::Center);
    for (row, x, i) in legend_slots(data) {
        let y = LINE_H / 2 + row * LINE_H;
        let series = &data.series[i];
        let color = style::runtime_color(&series.runtime, i);
        area.draw(&PathElement::new(
            vec![(x, y), (x + 28, y)],
            color.stroke_width(3),
        ))?;
        style::label(area, &series.runtime, (x + 36, y), &font)?;
    }
    Ok(())
}

/// Two lines within a hundredth of the panel's height at every point look like one.
const COINCIDE: f64 = 0.01;

/// Whether series `a`'s line lies under `b`'s in the panel of `metric`: the same x values, and
/// means within [`COINCIDE`] of the y span at each.
fn under(a: &SweepSeries, b: &SweepSeries, metric: &Metric, span: f64) -> bool {
    let (pa, pb) = (valid(a, metric), valid(b, metric));
    !pa.is_empty()
        && pa.len() == pb.len()
        && pa
            .iter()
            .zip(&pb)
            .all(|((xa, ea), (xb, eb))| xa == xb && (ea.mean - eb.mean).abs() <= COINCIDE * span)
}

/// One sentence per series that a later-drawn one hides in some panel: `si lies under ssi in
/// every panel`, or `pessimistic lies under ssi in: anomaly rate`.
fn hidden(data: &SweepData) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in data.series.iter().enumerate() {
        let mut by: Vec<(&str, Vec<&str>)> = Vec::new();
        for m in &METRICS {
            let (_, (y0, y1)) = ranges(data, m);
            let top = data.series[i + 1..]
                .iter()
                .rev()
                .find(|b| under(a, b, m, y1 - y0));
            if let Some(b) = top {
                match by.iter_mut().find(|(name, _)| *name == b.runtime) {
                    Some((_, panels)) => panels.push(m.caption),
                    None => by.push((&b.runtime, vec![m.caption])),
                }
            }
        }
        for (b, panels) in by {
            let whole = panels.len() == METRICS.len();
            out.push(match whole {
                true => format!("{} lies under {b} in every panel", a.runtime),
                false => format!("{} lies under {b} in: {}", a.runtime, panels.join(", ")),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intervals() -> SweepIntervals {
        SweepIntervals {
            rates: "95% Wilson".into(),
            token_overhead: "95% normal, paired by seed".into(),
            makespan_ms: "95% normal".into(),
        }
    }

    fn point(x: f64, rate: Estimate) -> SweepPoint {
        SweepPoint {
            contention: x,
            anomaly_rate: rate,
            abort_rate: Estimate::MISSING,
            token_overhead: rate,
            makespan_ms: rate,
        }
    }

    #[test]
    fn invalid_points_are_left_out_not_invented() {
        let ok = Estimate {
            mean: 0.5,
            lo: 0.25,
            hi: 0.75,
        };
        let backwards = Estimate {
            mean: 0.5,
            lo: 0.75,
            hi: 0.25,
        };
        let s = SweepSeries {
            runtime: "si".into(),
            points: vec![point(1.0, ok), point(2.0, backwards), point(f64::NAN, ok)],
        };
        assert_eq!(valid(&s, &METRICS[0]), vec![(1.0, ok)]);
        assert!(valid(&s, &METRICS[1]).is_empty());
        let data = SweepData {
            x_desc: "x".into(),
            series: vec![s],
            intervals: intervals(),
        };
        // One usable x value: centred in a unit-wide axis rather than a zero-width one.
        let ((x0, x1), (y0, y1)) = ranges(&data, &METRICS[0]);
        assert_eq!((x0, x1), (0.5, 1.5));
        assert_eq!(y0, 0.0);
        assert!((y1 - 0.75 * 1.06).abs() < 1e-12);
    }

    #[test]
    fn ticks_are_the_sampled_values_printed_as_integers() {
        let e = Estimate {
            mean: 0.5,
            lo: 0.4,
            hi: 0.6,
        };
        let s = SweepSeries {
            runtime: "si".into(),
            points: [16.0, 2.0, 8.0, 4.0, 4.0].map(|x| point(x, e)).to_vec(),
        };
        let data = SweepData {
            x_desc: "agents".into(),
            series: vec![s],
            intervals: intervals(),
        };
        assert_eq!(sampled(&data), vec![2.0, 4.0, 8.0, 16.0]);
        let labels: Vec<String> = sampled(&data).into_iter().map(tick).collect();
        assert_eq!(labels, ["2", "4", "8", "16"]);
        assert_eq!(tick(0.25), "0.25");
    }

    #[test]
    fn a_line_drawn_under_an_equal_one_is_named() {
        let at = |m: f64| Estimate {
            mean: m,
            lo: m - 0.01,
            hi: m + 0.01,
        };
        let series = |name: &str, ys: [f64; 2]| SweepSeries {
            runtime: name.into(),
            points: vec![point(2.0, at(ys[0])), point(4.0, at(ys[1]))],
        };
        let data = SweepData {
            x_desc: "agents".into(),
            series: vec![
                series("vanilla", [0.4, 0.9]),
                series("si", [0.2, 0.5]),
                series("ssi", [0.2, 0.5]),
            ],
            intervals: intervals(),
        };
        // abort_rate is missing in `point`, so si lies under ssi in three panels of four.
        let notes = hidden(&data);
        assert_eq!(
            notes,
            ["si lies under ssi in: anomaly rate, token overhead vs vanilla, makespan (virtual ms)"]
        );
        assert!(wrap(&notes[0], NOTE_CHARS)
            .iter()
            .all(|l| l.len() <= NOTE_CHARS));
        let svg = render(&data);
        assert!(svg.contains("si lies under ssi in:"), "the notes say so");
        assert!(
            svg.contains("anomaly rate (95% Wilson)"),
            "captions name the interval"
        );
    }
}
