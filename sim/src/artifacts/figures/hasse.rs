//! Figure (a): the Hasse diagram of the 16-point lattice of consistency models (SPEC §4).
//!
//! Points are sets of excluded anomalies (labelled without braces, `none` for ∅, to fit one
//! column of a paper), drawn in layers by size (∅ at the bottom, all four at
//! the top). The 32 cover edges are faint; the named chain L0 ⊂ L1 ⊂ … ⊂ L4 is bold and labelled.
//! Within a layer, points are ordered by the named chain's order of exclusions (A1, A3, A6, A2)
//! read as binary digits, so the named chain runs up the left flank and its labels never
//! collide with other nodes. A pass shows the picture is laid out from the computed lattice;
//! it does not prove the lattice itself (that is `models::lattice`'s tests).

use super::style::{self, Area, DrawResult, COLUMN_PX, FAINT, INK};
use agentsim_models::lattice::{self, Point, NAMED_ORDER};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// What the Hasse diagram shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HasseData {
    /// Every point of the lattice.
    pub points: Vec<Point>,
    /// Cover edges `(lower, upper)`.
    pub edges: Vec<(Point, Point)>,
    /// The named chain, bottom first; its k-th point is labelled Lk.
    pub named: Vec<Point>,
}

impl HasseData {
    /// The lattice as `models::lattice` computes it.
    pub fn from_lattice() -> HasseData {
        HasseData {
            points: lattice::points(),
            edges: lattice::cover_edges(),
            named: lattice::named_chain(),
        }
    }
}

/// One column of a paper (3.3 in) wide; every text is at least `COLUMN_PX`, 7.2 pt there.
const WIDTH: u32 = style::COLUMN_W;
const HEIGHT: u32 = 540;
const LAYER_GAP: i32 = 96;
/// The widest gap between two points of a layer; crowded layers get less.
const COLUMN_GAP: i32 = 150;
const BOX_H: i32 = 30;
/// The x of the diagram's axis: right of centre, leaving room for the chain's labels on the left.
const CENTRE_X: i32 = 310;
/// The y of the top layer, below the subtitle.
const TOP_Y: i32 = 84;
const LINE_H: i32 = 24;

/// Renders the diagram as SVG text.
pub fn render(data: &HasseData) -> String {
    style::svg("hasse", (WIDTH, HEIGHT), |root| draw(root, data))
}

fn draw(root: &Area, data: &HasseData) -> DrawResult {
    let area = style::titled(root, "Lattice of consistency models")?;
    let sub = [
        "a point: the anomalies it excludes",
        "bold: named chain L0..L4; faint: cover edges",
    ];
    let note = style::text(COLUMN_PX, INK, HPos::Center, VPos::Top);
    for (k, line) in sub.iter().enumerate() {
        style::label(&area, line, (WIDTH as i32 / 2, k as i32 * LINE_H), &note)?;
    }
    for (lo, hi) in &data.edges {
        let on_chain = data.named.windows(2).any(|w| w[0] == *lo && w[1] == *hi);
        let style = if on_chain {
            INK.stroke_width(4)
        } else {
            FAINT.stroke_width(1)
        };
        let path = vec![position(data, *lo), position(data, *hi)];
        area.draw(&PathElement::new(path, style))?;
    }
    for &p in &data.points {
        node(&area, data, p)?;
    }
    Ok(())
}

/// A point's label without the braces (a column is narrow); the empty set is `none`.
fn short_label(p: Point) -> String {
    let text = p.label();
    let inner = text.trim_start_matches('{').trim_end_matches('}');
    if inner.is_empty() {
        "none".to_owned()
    } else {
        inner.to_owned()
    }
}

fn node(area: &Area, data: &HasseData, p: Point) -> DrawResult {
    let (x, y) = position(data, p);
    let text = short_label(p);
    let half_w = style::text_width(COLUMN_PX, &text) / 2 + 8;
    let level = data.named.iter().position(|&q| q == p);
    let corners = [(x - half_w, y - BOX_H / 2), (x + half_w, y + BOX_H / 2)];
    area.draw(&Rectangle::new(corners, WHITE.filled()))?;
    let border = if level.is_some() {
        INK.stroke_width(3)
    } else {
        FAINT.stroke_width(1)
    };
    area.draw(&Rectangle::new(corners, border))?;
    let (font, ink) = match level {
        Some(_) => (style::bold(COLUMN_PX, INK, HPos::Center, VPos::Center), INK),
        None => (style::text(COLUMN_PX, INK, HPos::Center, VPos::Center), INK),
    };
    style::label(area, &text, (x, y), &font)?;
    if let Some(k) = level {
        let tag = style::bold(COLUMN_PX + 4.0, ink, HPos::Right, VPos::Center);
        style::label(area, &format!("L{k}"), (x - half_w - 8, y), &tag)?;
    }
    Ok(())
}

/// Sort key inside a layer: the point's exclusions as binary digits, A1 most significant, in
/// the named chain's order; larger keys go left.
pub(super) fn key(p: Point) -> u8 {
    NAMED_ORDER
        .iter()
        .fold(0u8, |acc, &a| (acc << 1) | u8::from(p.contains(a)))
}

/// Pixel centre of `p`: its layer gives the row, its rank by [`key`] in the layer the column.
fn position(data: &HasseData, p: Point) -> (i32, i32) {
    let mut layer: Vec<Point> = data
        .points
        .iter()
        .copied()
        .filter(|q| q.len() == p.len())
        .collect();
    layer.sort_by_key(|&q| std::cmp::Reverse(key(q)));
    let rank = layer.iter().position(|&q| q == p).expect("p is a point") as i32;
    let count = layer.len() as i32;
    let gap = COLUMN_GAP.min((WIDTH as i32 - 70) / count);
    let x = CENTRE_X + (2 * rank - (count - 1)) * gap / 2;
    let y = TOP_Y + (4 - p.len() as i32) * LAYER_GAP;
    (x, y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_chain_is_the_left_flank() {
        let data = HasseData::from_lattice();
        let xs: Vec<i32> = data.named.iter().map(|&p| position(&data, p).0).collect();
        // Layers of 1, 4, 6, 4, 1 points: the chain takes the leftmost slot of each.
        assert_eq!(xs, vec![310, 127, 108, 127, 310]);
    }

    #[test]
    fn positions_are_distinct() {
        let data = HasseData::from_lattice();
        let mut seen: Vec<(i32, i32)> = data.points.iter().map(|&p| position(&data, p)).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 16);
    }
}
