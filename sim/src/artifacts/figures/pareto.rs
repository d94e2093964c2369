//! The cost figure, one column wide: each realizing stack as a numbered row, its overhead over
//! `vanilla` in tokens (top panel) and makespan (bottom panel) as a dot with its 95 % interval,
//! and ticks for the per-scenario overheads behind the mean. Rows are grouped by how many of
//! A1, A2, A3, A6 the stack excludes (the group's number in the gutter, strongest on top); the
//! key under the panels names each row's stack and the point it realizes. Stacks on the Pareto
//! front are filled and named in bold, the others hollow and grey. Names would not fit beside
//! the rows at 3.3 in and 7 pt, hence the numbers.
//!
//! The renderer draws what the cost experiment computed, including which stacks are on the
//! front; a pass shows layout and determinism, not the numbers.

use super::style::{self, wrap, Area, DrawResult, Estimate, COLUMN_PX, COLUMN_W, FAINT, INK};
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

const WIDTH: u32 = COLUMN_W;
/// Height of one row of a panel, in pixels.
const ROW_H: u32 = 24;
/// Room between strength groups, in rows.
const GROUP_GAP: f64 = 0.6;
/// Width of the gutter left of each panel (strength and row number).
const GUTTER: u32 = 64;
/// Height of a panel's x axis (labels and description).
const X_AXIS_H: u32 = 64;
/// Space between the two panels.
const PANEL_GAP: u32 = 24;
/// Line height of the subtitle and the key.
const LINE_H: i32 = 26;
/// Characters per line of wrapped text at [`COLUMN_PX`].
const LINE_CHARS: usize = 48;
/// The names of stacks off the front.
const NAME_GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// The rows top to bottom: the points' indices, strongest first, each group in data order.
fn order(data: &ParetoData) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..data.points.len()).collect();
    idx.sort_by_key(|&i| std::cmp::Reverse(data.points[i].strength));
    idx
}

/// The y of each row (row 0 at the top, at the largest y), with a gap between strength groups;
/// and the y range.
fn rows_y(data: &ParetoData, order: &[usize]) -> (Vec<f64>, f64) {
    let mut ys = Vec::with_capacity(order.len());
    let mut y = 0.0;
    let mut last = None;
    for &i in order {
        let s = data.points[i].strength;
        if last.is_some_and(|l| l != s) {
            y += GROUP_GAP;
        }
        last = Some(s);
        ys.push(y);
        y += 1.0;
    }
    let top = (y - 1.0).max(0.0);
    (ys.iter().map(|v| top - v).collect(), top)
}

/// The subtitle, the key's lines (row number, point, stack, bold when on the front) and the
/// footnote.
fn key(data: &ParetoData, order: &[usize]) -> Vec<(String, bool)> {
    order
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            let p = &data.points[i];
            let drops = if p.drops > 0.0 { " \u{2020}" } else { "" };
            (
                format!("{:>2} {} {}{drops}", n + 1, p.excludes, p.stack),
                p.front,
            )
        })
        .collect()
}

fn notes(data: &ParetoData) -> (Vec<String>, Vec<String>) {
    let head = wrap(
        &format!(
            "Overhead vs vanilla, paired by seed: dot and bar, the mean over {} with its 95 % \
             interval; ticks, each scenario. Rows grouped by anomalies excluded.",
            data.over.join(", ")
        ),
        LINE_CHARS,
    );
    let mut foot = wrap(
        "Bold, filled: Pareto front (no stack excludes a superset at no more tokens, makespan \
         and drops).",
        LINE_CHARS,
    );
    if let Some(d) = data.points.iter().map(|p| p.drops).find(|&d| d > 0.0) {
        let same = data
            .points
            .iter()
            .all(|p| p.drops == 0.0 || (p.drops - d).abs() < 0.005);
        let text = if same {
            format!("\u{2020} drops {d:.2} operations per session before generation (no tokens).")
        } else {
            "\u{2020} drops operations before generation (no tokens); per stack: costs_pareto.md."
                .to_owned()
        };
        foot.extend(wrap(&text, LINE_CHARS));
    }
    (head, foot)
}

/// Renders the two panels and the key as SVG text.
pub fn render(data: &ParetoData) -> String {
    let order = order(data);
    let (ys, top) = rows_y(data, &order);
    let (head, foot) = notes(data);
    let key = key(data, &order);
    let panel_h = (top + 1.6) * f64::from(ROW_H) + f64::from(X_AXIS_H) + 40.0;
    let panel_h = panel_h.round() as u32;
    let head_h = LINE_H * head.len() as i32 + 10;
    let key_h = LINE_H * (key.len() + foot.len()) as i32 + 20;
    let height = 44 + head_h as u32 + 2 * panel_h + PANEL_GAP + key_h as u32;
    style::svg("pareto", (WIDTH, height), |root| {
        let area = style::titled(root, "What a guarantee costs")?;
        let note = style::text(COLUMN_PX, INK, HPos::Left, VPos::Top);
        for (k, line) in head.iter().enumerate() {
            style::label(&area, line, (8, LINE_H * k as i32), &note)?;
        }
        let area = area.split_vertically(head_h).1;
        let (top_panel, rest) = area.split_vertically(panel_h);
        let rest = rest.split_vertically(PANEL_GAP).1;
        let (bottom_panel, key_area) = rest.split_vertically(panel_h);
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
        panel(&top_panel, data, &order, (&ys, top), &token)?;
        panel(&bottom_panel, data, &order, (&ys, top), &makespan)?;
        let lines = key
            .iter()
            .map(|(s, front)| (s.as_str(), *front))
            .chain(foot.iter().map(|s| (s.as_str(), false)));
        for (k, (line, front)) in lines.enumerate() {
            let font = if front {
                style::bold(COLUMN_PX, INK, HPos::Left, VPos::Top)
            } else if k < key.len() {
                style::text(COLUMN_PX, NAME_GREY, HPos::Left, VPos::Top)
            } else {
                note.clone()
            };
            style::label(&key_area, line, (8, 10 + LINE_H * k as i32), &font)?;
        }
        Ok(())
    })
}

/// One panel's quantity: its mean with interval, and the per-scenario values behind it.
struct Axis {
    caption: &'static str,
    mean: fn(&ParetoPoint) -> Estimate,
    ticks: fn(&ParetoPoint) -> &Vec<f64>,
}

/// The fraction of the x range left empty on each side.
const ROOM: f64 = 0.04;

/// The x range: every valid interval, every finite tick and 0, widened a little on both sides.
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

fn panel(
    area: &Area,
    data: &ParetoData,
    order: &[usize],
    (ys, top): (&[f64], f64),
    axis: &Axis,
) -> DrawResult {
    let (x0, x1) = x_range(data, axis);
    let (y0, y1) = (-0.6, top + 0.6);
    let mut chart = ChartBuilder::on(area)
        .caption(axis.caption, (style::FONT, COLUMN_PX).into_font())
        .margin_left(4)
        .margin_right(22)
        .margin_top(6)
        .x_label_area_size(X_AXIS_H)
        .y_label_area_size(GUTTER)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_labels(5)
        .disable_y_mesh()
        .y_labels(0)
        .x_label_formatter(&|v: &f64| percent(*v))
        .x_desc("overhead vs vanilla")
        .label_style((style::FONT, COLUMN_PX))
        .axis_desc_style((style::FONT, COLUMN_PX))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()?;
    // Vanilla's cost: no overhead.
    let zero = PathElement::new(vec![(0.0, y0), (0.0, y1)], FAINT.stroke_width(1));
    chart.draw_series(std::iter::once(zero))?;
    let (bx, by) = area.get_base_pixel();
    let mut last_strength = None;
    for (n, (&i, &y)) in order.iter().zip(ys).enumerate() {
        let p = &data.points[i];
        let ink = if p.front {
            INK.to_rgba()
        } else {
            INK.mix(0.55)
        };
        let (px, py) = chart.backend_coord(&(x0, y));
        // The row's number beside the axis; the group's strength once, at the gutter's edge.
        let number = if p.front {
            style::bold(COLUMN_PX, INK, HPos::Right, VPos::Center)
        } else {
            style::text(COLUMN_PX, NAME_GREY, HPos::Right, VPos::Center)
        };
        style::label(area, &(n + 1).to_string(), (px - bx - 8, py - by), &number)?;
        if last_strength != Some(p.strength) {
            last_strength = Some(p.strength);
            let group = style::bold(COLUMN_PX, INK, HPos::Left, VPos::Center);
            style::label(area, &format!("{}", p.strength), (6, py - by), &group)?;
        }
        let e = (axis.mean)(p);
        if !e.is_valid() {
            continue;
        }
        let row = PathElement::new(vec![(x0, y), (x1, y)], INK.mix(0.07).stroke_width(1));
        chart.draw_series(std::iter::once(row))?;
        let ticks = (axis.ticks)(p)
            .iter()
            .filter(|x| x.is_finite())
            .map(|&x| PathElement::new(vec![(x, y - 0.25), (x, y + 0.25)], ink.stroke_width(1)));
        chart.draw_series(ticks)?;
        let bar = PathElement::new(vec![(e.lo, y), (e.hi, y)], ink.stroke_width(2));
        chart.draw_series(std::iter::once(bar))?;
        let dot = if p.front {
            Circle::new((e.mean, y), 5, INK.filled())
        } else {
            Circle::new((e.mean, y), 5, ink.stroke_width(2))
        };
        chart.draw_series(std::iter::once(dot))?;
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
    fn renders_deterministically_with_numbered_rows_and_a_key() {
        let mut data = ParetoData {
            over: vec!["a".into(), "b".into()],
            points: vec![
                point("vanilla", 0, 0.0, false),
                point("pessimistic", 1, 0.4, true),
                point("pin", 1, 0.0, true),
            ],
        };
        data.points[1].drops = 4.0;
        let a = render(&data);
        assert_eq!(a, render(&data));
        assert!(a.ends_with("</svg>\n"));
        // Strongest first: pessimistic is row 1, pin row 2, vanilla row 3; the key says so.
        let order = order(&data);
        assert_eq!(order, vec![1, 2, 0]);
        let key = key(&data, &order);
        assert_eq!(key[0], (" 1 {} pessimistic \u{2020}".to_owned(), true));
        assert_eq!(key[2], (" 3 {} vanilla".to_owned(), false));
        for (line, _) in &key {
            assert!(
                a.contains(line.trim_start()),
                "the key line {line:?} is drawn"
            );
        }
        assert!(a.contains("drops 4.00 operations per session"));
        // Rows of one group are one unit apart; groups a gap more; the top row is highest.
        let (ys, top) = rows_y(&data, &order);
        assert_eq!(ys[0], top);
        assert_eq!(ys[0] - ys[1], 1.0);
        assert!((ys[1] - ys[2] - (1.0 + GROUP_GAP)).abs() < 1e-9);
        assert_eq!(ys[2], 0.0);
        // Every line of text fits the column at the figure's one text size.
        let (head, foot) = notes(&data);
        for l in head.iter().chain(&foot).chain(key.iter().map(|(s, _)| s)) {
            assert!(
                style::text_width(COLUMN_PX, l) + 8 <= WIDTH as i32,
                "{l:?} is wider than the column"
            );
        }
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
