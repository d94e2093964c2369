//! The Hasse diagram of the 16-point lattice (SPEC §4) with every point labelled by the stack of
//! mechanisms that realizes it: the layout of [`super::hasse`] (layers by size, the
//! named chain L0..L4 up the left flank, in bold), on a wider canvas so that a stack's name fits
//! under its point, broken at `+` onto as many lines as it needs.
//!
//! The stacks come from the checker's realizability search; the renderer only draws them. A
//! pass shows layout and determinism, not which stack realizes a point.

use super::hasse::key;
use super::style::{self, Area, DrawResult, BODY_PX, FAINT, INK, SMALL_PX};
use agentsim_models::lattice::{self, Point};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// What the diagram shows: each point's stack name (or a note where none realizes it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HasseStacks {
    pub stacks: Vec<(Point, String)>,
}

const WIDTH: u32 = 1400;
const HEIGHT: u32 = 820;
const LAYER_GAP: i32 = 160;
const COLUMN_GAP: i32 = 225;
const LINE_H: i32 = 17;
/// Longest line of a stack's name before it breaks at a `+`.
const LINE_CHARS: usize = 26;

/// Renders the diagram as SVG text.
pub fn render(data: &HasseStacks) -> String {
    style::svg("hasse_stacks", (WIDTH, HEIGHT), |root| draw(root, data))
}

/// `name` broken after `+` into lines of at most [`LINE_CHARS`] (a longer part stays whole).
pub fn lines(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let parts: Vec<&str> = name.split('+').collect();
    let mut cur = String::new();
    for (i, part) in parts.iter().enumerate() {
        let piece = if i + 1 < parts.len() {
            format!("{part}+")
        } else {
            (*part).to_owned()
        };
        if !cur.is_empty() && cur.chars().count() + piece.chars().count() > LINE_CHARS {
            out.push(std::mem::take(&mut cur));
        }
        cur += &piece;
    }
    out.push(cur);
    out
}

fn draw(root: &Area, data: &HasseStacks) -> DrawResult {
    let area = style::titled(root, "Lattice points and the stacks that realize them")?;
    let sub = "each point: the anomalies a smallest stack prevents (every other admitted, \
               checked exhaustively at the matrix bounds); bold: the named chain L0..L4";
    let note = style::text(SMALL_PX, INK, HPos::Center, VPos::Top);
    style::label(&area, sub, (WIDTH as i32 / 2, 0), &note)?;
    let named = lattice::named_chain();
    for (lo, hi) in lattice::cover_edges() {
        let on_chain = named.windows(2).any(|w| w[0] == lo && w[1] == hi);
        let style = if on_chain {
            INK.stroke_width(4)
        } else {
            FAINT.stroke_width(1)
        };
        area.draw(&PathElement::new(vec![position(lo), position(hi)], style))?;
    }
    for p in lattice::points() {
        let name = data
            .stacks
            .iter()
            .find(|(q, _)| *q == p)
            .map_or("", |(_, s)| s.as_str());
        node(&area, p, name, named.iter().position(|&q| q == p))?;
    }
    Ok(())
}

fn node(area: &Area, p: Point, stack: &str, level: Option<usize>) -> DrawResult {
    let (x, y) = position(p);
    let label = p.label();
    let stack_lines = lines(stack);
    let widest = stack_lines
        .iter()
        .map(|l| style::text_width(SMALL_PX, l))
        .chain([style::text_width(BODY_PX, &label)])
        .max()
        .unwrap_or(0);
    let half_w = widest / 2 + 10;
    let h = 24 + LINE_H * stack_lines.len() as i32;
    let top = y - h / 2;
    let corners = [(x - half_w, top), (x + half_w, top + h)];
    area.draw(&Rectangle::new(corners, WHITE.filled()))?;
    let border = if level.is_some() {
        INK.stroke_width(3)
    } else {
        FAINT.stroke_width(1)
    };
    area.draw(&Rectangle::new(corners, border))?;
    let bold = level.is_some();
    let font = |size| {
        if bold {
            style::bold(size, INK, HPos::Center, VPos::Top)
        } else {
            style::text(size, INK, HPos::Center, VPos::Top)
        }
    };
    style::label(area, &label, (x, top + 4), &font(BODY_PX))?;
    for (i, line) in stack_lines.iter().enumerate() {
        let at = (x, top + 24 + LINE_H * i as i32);
        style::label(area, line, at, &font(SMALL_PX))?;
    }
    if let Some(k) = level {
        let tag = style::bold(BODY_PX + 4.0, INK, HPos::Right, VPos::Center);
        style::label(area, &format!("L{k}"), (x - half_w - 10, y), &tag)?;
    }
    Ok(())
}

/// Pixel centre of `p`: its layer gives the row, its rank by [`key`] in the layer the column.
fn position(p: Point) -> (i32, i32) {
    let mut layer: Vec<Point> = lattice::points()
        .into_iter()
        .filter(|q| q.len() == p.len())
        .collect();
    layer.sort_by_key(|&q| std::cmp::Reverse(key(q)));
    let rank = layer.iter().position(|&q| q == p).expect("p is a point") as i32;
    let count = layer.len() as i32;
    let x = WIDTH as i32 / 2 + (2 * rank - (count - 1)) * COLUMN_GAP / 2;
    let y = HEIGHT as i32 - 120 - p.len() as i32 * LAYER_GAP;
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_break_at_plus_within_the_line() {
        assert_eq!(lines("vanilla"), ["vanilla"]);
        assert_eq!(
            lines("validate-preds+cascade+sequencer+pin"),
            ["validate-preds+cascade+", "sequencer+pin"]
        );
        for l in lines("lock+validate-preds+cascade+pin+sequencer+validate-writers") {
            assert!(l.chars().count() <= LINE_CHARS, "{l}");
        }
    }

    #[test]
    fn boxes_in_a_layer_do_not_overlap() {
        // The widest line is LINE_CHARS at SMALL_PX: its box fits in a column.
        let widest = style::text_width(SMALL_PX, &"x".repeat(LINE_CHARS)) + 20;
        assert!(widest < COLUMN_GAP, "{widest}");
        let mut seen: Vec<(i32, i32)> = lattice::points().into_iter().map(position).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 16);
        let rendered = render(&HasseStacks {
            stacks: vec![(Point(0), "vanilla".to_owned())],
        });
        assert!(rendered.contains("vanilla"));
    }
}
