//! The 16 points of the lattice (SPEC §4), each with the stack of mechanisms that realizes it, as
//! a table one column of a paper wide: a row per point, layers by size from the top as in the
//! Hasse diagram of [`super::hasse`] (which draws the order; six stack names side by side do not
//! fit a column), the named chain L0..L4 in bold and tagged, a stack's name broken at `+` onto
//! as many lines as it needs.
//!
//! The stacks come from the checker's realizability search; the renderer only draws them. A
//! pass shows layout and determinism, not which stack realizes a point.

use super::hasse::key;
use super::style::{self, Area, DrawResult, COLUMN_PX, FAINT, INK};
use agentsim_models::lattice::{self, Point};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// What the diagram shows: each point's stack name (or a note where none realizes it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HasseStacks {
    pub stacks: Vec<(Point, String)>,
}

/// One column of a paper (3.3 in) wide; every text is at least `COLUMN_PX`, 7.2 pt there.
const WIDTH: u32 = style::COLUMN_W;
const LINE_H: i32 = 24;
/// Longest line of a stack's name before it breaks at a `+`.
const LINE_CHARS: usize = 32;
/// Left edges of the columns: the chain tag, the point, the stack.
const TAG_X: i32 = 10;
const POINT_X: i32 = 52;
const STACK_X: i32 = 186;
const SUBTITLE: [&str; 3] = [
    "a row: the anomalies a smallest stack prevents;",
    "every other one admitted (checked exhaustively",
    "at the matrix bounds); bold: named chain L0..L4",
];

/// Where the table's header row starts (below the title and the subtitle).
const HEAD_Y: i32 = 44 + LINE_H * SUBTITLE.len() as i32 + 10;

/// Renders the figure as SVG text.
pub fn render(data: &HasseStacks) -> String {
    let rows = rows(data);
    let lines: usize = rows.iter().map(|(_, s)| lines(s).len().max(1)).sum();
    let height = HEAD_Y + LINE_H + 6 + lines as i32 * LINE_H + 6 * rows.len() as i32 + 10;
    style::svg("hasse_stacks", (WIDTH, height as u32), |root| {
        draw(root, &rows)
    })
}

/// The points top layer first (as the Hasse diagram reads), within a layer by [`key`], larger
/// first (the named chain's point leads), each with its stack name.
fn rows(data: &HasseStacks) -> Vec<(Point, String)> {
    let mut points = lattice::points();
    points.sort_by_key(|&p| std::cmp::Reverse((p.len(), key(p))));
    points
        .into_iter()
        .map(|p| {
            let name = data.stacks.iter().find(|(q, _)| *q == p);
            (p, name.map_or(String::new(), |(_, s)| s.clone()))
        })
        .collect()
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

/// A point's label without the braces; the empty set is `none`.
fn short_label(p: Point) -> String {
    let text = p.label();
    let inner = text.trim_start_matches('{').trim_end_matches('}');
    if inner.is_empty() {
        "none".to_owned()
    } else {
        inner.to_owned()
    }
}

fn draw(root: &Area, rows: &[(Point, String)]) -> DrawResult {
    style::titled(root, "Lattice points and the stacks that realize them")?;
    let note = style::text(COLUMN_PX, INK, HPos::Center, VPos::Top);
    for (k, line) in SUBTITLE.iter().enumerate() {
        let y = 44 + k as i32 * LINE_H;
        style::label(root, line, (WIDTH as i32 / 2, y), &note)?;
    }
    let head = style::bold(COLUMN_PX, INK, HPos::Left, VPos::Top);
    style::label(root, "prevents", (POINT_X, HEAD_Y), &head)?;
    style::label(root, "smallest stack", (STACK_X, HEAD_Y), &head)?;
    let mut y = HEAD_Y + LINE_H + 6;
    let rule = |y: i32, colour: ShapeStyle| {
        root.draw(&PathElement::new(
            vec![(TAG_X, y - 4), (WIDTH as i32 - TAG_X, y - 4)],
            colour,
        ))
    };
    rule(y, INK.stroke_width(1))?;
    let named = lattice::named_chain();
    let mut layer = None;
    for (p, stack) in rows {
        if layer.is_some_and(|l| l != p.len()) {
            rule(y, FAINT.stroke_width(1))?;
        }
        layer = Some(p.len());
        let level = named.iter().position(|q| q == p);
        let font = if level.is_some() {
            style::bold(COLUMN_PX, INK, HPos::Left, VPos::Top)
        } else {
            style::text(COLUMN_PX, INK, HPos::Left, VPos::Top)
        };
        if let Some(k) = level {
            style::label(root, &format!("L{k}"), (TAG_X, y), &font)?;
        }
        style::label(root, &short_label(*p), (POINT_X, y), &font)?;
        let stack_lines = lines(stack);
        for (i, line) in stack_lines.iter().enumerate() {
            style::label(root, line, (STACK_X, y + LINE_H * i as i32), &font)?;
        }
        y += LINE_H * stack_lines.len().max(1) as i32 + 6;
    }
    Ok(())
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
    fn columns_fit_the_width() {
        // The longest point label fits before the stack column; the longest stack line fits
        // in the figure.
        let point = style::text_width(COLUMN_PX, "A1,A2,A3,A6");
        assert!(POINT_X + point < STACK_X, "{point}");
        let widest = style::text_width(COLUMN_PX, &"x".repeat(LINE_CHARS));
        assert!(STACK_X + widest <= WIDTH as i32, "{widest}");
        let rendered = render(&HasseStacks {
            stacks: vec![(Point(0), "vanilla".to_owned())],
        });
        assert!(rendered.contains("vanilla"));
        assert_eq!(rows(&HasseStacks { stacks: vec![] }).len(), 16);
    }
}
