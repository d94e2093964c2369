//! The one chart primitive the bar figures share: a horizontal bar panel with interval whiskers.
//!
//! Horizontal because the categories are runtime names and twin descriptions, which are too long
//! to sit under vertical bars without rotating them. Rows run top to bottom in data order; each
//! row holds one or more bars side by side, each with a whisker for its interval and a short
//! note (`3/20`, `+12 %`) to the right of the whisker. Category labels are drawn only when the
//! panel asks for them, so two panels can share one label column. A pass proves layout, not data.

use super::style::Ticked;
use super::style::{self, Area, DrawResult, Estimate, COLUMN_PX, INK};
use plotters::coord::ranged1d::Ranged;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// One bar: its value with interval, colour and the note printed beside it.
pub struct Bar {
    /// Value and interval; an invalid estimate is drawn as "n/a" without a bar.
    pub value: Estimate,
    /// Fill colour.
    pub color: RGBColor,
    /// Text after the whisker.
    pub note: String,
}

/// One category: a label, an optional second line and its bars.
pub struct BarRow {
    /// Category label (left of the panel).
    pub label: String,
    /// Smaller second line under the label; empty for none.
    pub sublabel: String,
    /// Bars, drawn top to bottom inside the row.
    pub bars: Vec<Bar>,
}

/// A panel: the rows, the x axis and whether to draw labels.
pub struct BarPanel<'a> {
    /// Panel caption above the plot.
    pub caption: &'a str,
    /// x-axis description.
    pub x_desc: &'a str,
    /// The rows.
    pub rows: &'a [BarRow],
    /// Format the x axis and the notes as percentages of 1.0.
    pub percent: bool,
    /// The values are fractions of runs: fix the axis to 0..100 %, whatever the data.
    pub unit: bool,
    /// Width reserved left of the plot for labels; 0 draws none.
    pub label_w: u32,
}

/// Height of the x-axis label area; panels side by side share it so their rows line up.
const X_AREA: u32 = 60;

/// The x range covering every bar's interval and zero, with room on the right for notes.
fn x_range(rows: &[BarRow], unit: bool) -> (f64, f64) {
    if unit {
        return (-0.02, 1.3);
    }
    let vals = rows
        .iter()
        .flat_map(|r| r.bars.iter())
        .filter(|b| b.value.is_valid());
    let (lo, hi) = vals.fold((0.0f64, 0.0f64), |(lo, hi), b| {
        (lo.min(b.value.lo), hi.max(b.value.hi))
    });
    let hi = if hi <= lo { lo + 1.0 } else { hi };
    let span = hi - lo;
    (lo - 0.02 * span, hi + 0.36 * span)
}

/// The x ticks: on a unit axis 0 %, 20 %, …, 100 % only (the axis runs on past 100 % to make
/// room for the notes, and a tick there would be one no value can reach); elsewhere plotters'
/// own choice of about four round values (a column is narrow).
fn x_ticks(x0: f64, x1: f64, unit: bool) -> Vec<f64> {
    if unit {
        return (0..=5).map(|k| f64::from(k) / 5.0).collect();
    }
    RangedCoordf64::from(x0..x1).key_points(4)
}

/// Draws the panel into `area`; `root` is the whole figure, used for labels in pixels.
pub fn draw(root: &Area, area: &Area, panel: &BarPanel) -> DrawResult {
    let n = panel.rows.len().max(1) as f64;
    let (x0, x1) = x_range(panel.rows, panel.unit);
    let ticks = x_ticks(x0, x1, panel.unit);
    let mut chart = ChartBuilder::on(area)
        .caption(panel.caption, (style::FONT, COLUMN_PX).into_font())
        .margin(10)
        .x_label_area_size(X_AREA)
        .y_label_area_size(panel.label_w)
        .build_cartesian_2d(Ticked::new(x0..x1, ticks), 0.0..n)?;
    let pct = |x: &f64| format!("{:.0}%", x * 100.0);
    let plain = |x: &f64| format!("{x:.2}");
    let fmt: &dyn Fn(&f64) -> String = if panel.percent { &pct } else { &plain };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_label_formatter(fmt)
        .x_desc(panel.x_desc)
        .label_style((style::FONT, COLUMN_PX))
        .axis_desc_style((style::FONT, COLUMN_PX))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for (i, row) in panel.rows.iter().enumerate() {
        let top = n - i as f64;
        draw_row(&mut chart, row, top, panel.percent)?;
        if panel.label_w > 0 {
            row_label(root, &chart, row, top - 0.5, x0)?;
        }
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, RangedCoordf64>>;

fn draw_row(chart: &mut Chart, row: &BarRow, top: f64, percent: bool) -> DrawResult {
    let k = row.bars.len().max(1) as f64;
    let h = 0.76 / k;
    for (j, bar) in row.bars.iter().enumerate() {
        let y_hi = top - 0.12 - j as f64 * h;
        let y_lo = y_hi - h * 0.9;
        let mid = (y_hi + y_lo) / 2.0;
        let area = chart.plotting_area();
        if !bar.value.is_valid() {
            note(area, (0.0, mid), "n/a".to_string())?;
            continue;
        }
        let v = bar.value;
        area.draw(&Rectangle::new(
            [(0.0, y_lo), (v.mean, y_hi)],
            bar.color.filled(),
        ))?;
        let whisker = INK.stroke_width(2);
        area.draw(&PathElement::new(vec![(v.lo, mid), (v.hi, mid)], whisker))?;
        for x in [v.lo, v.hi] {
            let cap = vec![(x, mid - h * 0.25), (x, mid + h * 0.25)];
            area.draw(&PathElement::new(cap, whisker))?;
        }
        let text = if bar.note.is_empty() {
            if percent {
                format!("{:.0}%", v.mean * 100.0)
            } else {
                format!("{:.2}", v.mean)
            }
        } else {
            bar.note.clone()
        };
        note(area, (v.hi.max(v.mean), mid), text)?;
    }
    Ok(())
}

type Plot<'b> = DrawingArea<SVGBackend<'b>, Cartesian2d<Ticked, RangedCoordf64>>;

/// Writes `s` 6 px right of the data point `at`.
fn note(area: &Plot, at: (f64, f64), s: String) -> DrawResult {
    let font = style::text(COLUMN_PX, INK, HPos::Left, VPos::Center);
    area.draw(&(EmptyElement::at(at) + Text::new(s, (6, 0), font)))?;
    Ok(())
}

fn row_label(root: &Area, chart: &Chart, row: &BarRow, y: f64, x0: f64) -> DrawResult {
    let (px, py) = chart.backend_coord(&(x0, y));
    let main = style::text(COLUMN_PX, INK, HPos::Right, VPos::Center);
    if row.sublabel.is_empty() {
        return style::label(root, &row.label, (px - 10, py), &main);
    }
    style::label(root, &row.label, (px - 10, py - 9), &main)?;
    let sub = style::text(COLUMN_PX, style::INK, HPos::Right, VPos::Center);
    style::label(root, &row.sublabel, (px - 10, py + 10), &sub)
}

/// The label column width that fits every row's label and sublabel, plus padding.
pub fn label_width(rows: &[BarRow]) -> u32 {
    let w = rows
        .iter()
        .map(|r| {
            let a = style::text_width(COLUMN_PX, &r.label);
            a.max(style::text_width(COLUMN_PX, &r.sublabel))
        })
        .max()
        .unwrap_or(0);
    (w + 24) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(values: &[Estimate]) -> BarRow {
        BarRow {
            label: "r".into(),
            sublabel: String::new(),
            bars: values
                .iter()
                .map(|&value| Bar {
                    value,
                    color: INK,
                    note: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn range_covers_intervals_and_zero_and_skips_missing() {
        let e = |mean, lo, hi| Estimate { mean, lo, hi };
        let rows = [
            row(&[e(0.5, 0.4, 0.9), Estimate::MISSING]),
            row(&[e(-0.1, -0.2, 0.0)]),
        ];
        let (lo, hi) = x_range(&rows, false);
        assert!(lo < -0.2 && lo > -0.25, "{lo}");
        assert!(hi > 0.9 + 0.35 && hi < 0.9 + 0.45, "{hi}");
        assert_eq!(x_range(&rows, true), (-0.02, 1.3));
        let (lo, hi) = x_range(&[], false);
        assert!(
            (lo + 0.02).abs() < 1e-9 && (hi - 1.36).abs() < 1e-9,
            "{lo} {hi}"
        );
    }

    #[test]
    fn a_unit_axis_has_no_tick_past_100_percent() {
        let ticks = x_ticks(-0.02, 1.3, true);
        assert_eq!(ticks, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        let free = x_ticks(-0.02, 1.36, false);
        assert!(free.len() >= 3 && free.iter().all(|x| (-0.02..=1.36).contains(x)));
    }

    #[test]
    fn label_column_fits_the_longest_label() {
        let mut r = row(&[]);
        r.label = "causal-no-cascade".into();
        let w = label_width(&[r]);
        assert_eq!(
            w as i32,
            style::text_width(COLUMN_PX, "causal-no-cascade") + 24
        );
    }
}
