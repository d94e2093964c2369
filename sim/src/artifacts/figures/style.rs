//! The shared look of every figure, and the one place an SVG string is produced.
//!
//! Why a shared file: colours must mean the same runtime in every figure, text must be sized the
//! same way, and every renderer must get its bytes the same deterministic way. Text is drawn
//! with plotters' built-in estimate (no font library, no font file): plotters is built without
//! its `ttf`/`ab_glyph` features, so it lays text out with a fixed per-character width and the
//! SVG backend writes `<text>` elements whose glyphs the viewer picks. The bytes therefore do
//! not depend on the fonts installed; what a pass does *not* prove is that every viewer's
//! sans-serif font fits the estimated widths exactly (we leave slack for that).

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// The drawing area every renderer draws on.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What a drawing step returns; errors only come from plotters' own bookkeeping.
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The font family named in the SVG; the viewer chooses the glyphs.
pub const FONT: &str = "sans-serif";
/// Title size (plotters units; the SVG font-size is this / 1.24).
pub const TITLE_PX: f64 = 22.0;
/// Body text size.
pub const BODY_PX: f64 = 16.0;
/// Small text size (in-cell annotations).
pub const SMALL_PX: f64 = 14.0;
/// The width of a figure drawn for one column of a paper (3.3 in).
pub const COLUMN_W: u32 = 560;
/// The smallest text of a one-column figure: SVG font-size 16.9 px, 7.2 pt at 3.3 in.
pub const COLUMN_PX: f64 = 21.0;

/// Ink for text and axes.
pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
/// Faint grey for context lines (non-named cover edges).
pub const FAINT: RGBColor = RGBColor(0xB8, 0xB8, 0xB8);
/// "Admitted" (an anomaly was found).
pub const BAD: RGBColor = RGBColor(0xE8, 0x8E, 0x8E);
/// "Prevented" (no anomaly in the explored space).
pub const GOOD: RGBColor = RGBColor(0x9C, 0xD3, 0x9C);
/// "Inconclusive" (the search hit its bound).
pub const UNSURE: RGBColor = RGBColor(0xF0, 0xDC, 0x82);
/// "Not run".
pub const NONE: RGBColor = RGBColor(0xE2, 0xE2, 0xE2);
/// The "without mechanism" arm of a twin.
pub const WITHOUT: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
/// The "with mechanism" arm of a twin.
pub const WITH: RGBColor = RGBColor(0x00, 0x72, 0xB2);

/// Renders one SVG of `size` pixels: white background, `draw` on top, ending in one newline.
///
/// Drawing into a `String` with the estimate-only font cannot fail at run time (no I/O, no
/// font lookup); an error here is a bug in a renderer, so it panics with the renderer's name.
pub fn svg(name: &str, size: (u32, u32), draw: impl FnOnce(&Area) -> DrawResult) -> String {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        let result = root
            .fill(&WHITE)
            .map_err(|e| e.into())
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(|e| e.into()));
        if let Err(e) = result {
            panic!("figure {name}: drawing into a string failed: {e}");
        }
    }
    if !buf.ends_with('\n') {
        buf.push('\n');
    }
    buf
}

/// A text style of `size` in `color`, anchored at `(h, v)`.
pub fn text(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font(),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// The same as [`text`], bold.
pub fn bold(size: f64, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle {
        font: (FONT, size).into_font().style(FontStyle::Bold),
        color: color.to_backend_color(),
        pos: Pos::new(h, v),
    }
}

/// A linear axis whose ticks are exactly the given values: the sampled x values of a sweep, or
/// 0..100 % of a unit axis that runs on past 100 % to make room for notes. (plotters' own
/// `WithKeyPoints` gives an f64 axis no label formatter, so the figures use this one.)
pub struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    /// The axis over `range` with a tick (and a grid line) at each of `ticks`.
    pub fn new(range: Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked {
            inner: range.into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Light (minor) grid lines: none; the ticks are the bold ones.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// Draws `s` at `(x, y)` in `style`.
pub fn label(area: &Area, s: &str, at: (i32, i32), style: &TextStyle) -> DrawResult {
    area.draw(&Text::new(s.to_string(), at, style.clone()))?;
    Ok(())
}

/// Width in pixels plotters' estimate gives `s` at `size` (the same formula as its naive font),
/// used to size boxes around labels. Counts characters, not bytes, and adds 10 % slack.
pub fn text_width(size: f64, s: &str) -> i32 {
    let em = size / 1.24 / 1.24;
    (em * 0.7 * 1.1 * s.chars().count() as f64).round() as i32
}

/// Splits `s` at spaces into lines of at most `width` characters (a longer word stays whole).
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in s.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// Draws the figure title centred at the top and returns the area below it.
pub fn titled<'a>(area: &Area<'a>, title: &str) -> Result<Area<'a>, Box<dyn std::error::Error>> {
    let (w, _) = area.dim_in_pixel();
    let style = bold(TITLE_PX, INK, HPos::Center, VPos::Top);
    label(area, title, (w as i32 / 2, 10), &style)?;
    Ok(area.split_vertically(44).1)
}

/// The colour of a runtime, the same in every figure: the contract's nine names have fixed
/// colours (Okabe–Ito based, colour-blind safe); any other name takes a palette slot by index.
pub fn runtime_color(name: &str, index: usize) -> RGBColor {
    match RUNTIME_COLORS.iter().find(|(n, _)| *n == name) {
        Some((_, c)) => *c,
        None => RUNTIME_COLORS[index % RUNTIME_COLORS.len()].1,
    }
}

/// The fixed colours of the contract's runtime names (`RuntimeKind::name`).
const RUNTIME_COLORS: [(&str, RGBColor); 9] = [
    ("vanilla", RGBColor(0x55, 0x55, 0x55)),
    ("pessimistic", RGBColor(0xE6, 0x9F, 0x00)),
    ("si", RGBColor(0x56, 0xB4, 0xE9)),
    ("ssi", RGBColor(0x00, 0x72, 0xB2)),
    ("causal", RGBColor(0x00, 0x9E, 0x73)),
    ("causal-no-cascade", RGBColor(0x7F, 0xC9, 0x7F)),
    ("saga", RGBColor(0xD5, 0x5E, 0x00)),
    ("registry-validate", RGBColor(0xCC, 0x79, 0xA7)),
    ("registry-pin", RGBColor(0x7B, 0x32, 0x94)),
];

/// The colour of the i-th series of a figure that is not keyed by runtime.
pub fn series_color(index: usize) -> RGBColor {
    const PALETTE: [RGBColor; 4] = [
        RGBColor(0xD5, 0x5E, 0x00),
        RGBColor(0x00, 0x72, 0xB2),
        RGBColor(0x00, 0x9E, 0x73),
        RGBColor(0xCC, 0x79, 0xA7),
    ];
    PALETTE[index % PALETTE.len()]
}

/// A count in at most four significant characters: `987`, `12.3k`, `4.56M`, `7.89G`, with
/// trailing zeros dropped (`1k`, `10M`) so log-axis ticks read cleanly.
pub fn compact(n: u64) -> String {
    const UNITS: [(f64, &str); 3] = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, unit) in UNITS {
        let x = n as f64 / scale;
        if x >= 1.0 {
            let digits = if x >= 100.0 {
                0
            } else if x >= 10.0 {
                1
            } else {
                2
            };
            let s = format!("{x:.digits$}");
            let s = if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.')
            } else {
                &s
            };
            return format!("{s}{unit}");
        }
    }
    n.to_string()
}

/// A value with its interval (e.g. a mean with a 95 % interval), as the data sources report it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Estimate {
    /// The point estimate.
    pub mean: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
}

impl Estimate {
    /// No estimate (drawn as "n/a").
    pub const MISSING: Estimate = Estimate {
        mean: f64::NAN,
        lo: f64::NAN,
        hi: f64::NAN,
    };

    /// Whether all three numbers are finite and ordered `lo <= mean <= hi`; renderers skip
    /// estimates that are not.
    pub fn is_valid(&self) -> bool {
        let finite = self.mean.is_finite() && self.lo.is_finite() && self.hi.is_finite();
        finite && self.lo <= self.mean && self.mean <= self.hi
    }
}

/// k successes out of n trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Count {
    /// Successes (runs that exhibited the anomaly).
    pub k: u64,
    /// Trials (runs).
    pub n: u64,
}

impl Count {
    /// k / n as an [`Estimate`] with the 95 % Wilson score interval; `None` when n = 0.
    ///
    /// Wilson rather than the normal approximation because the interesting counts are 0/N and
    /// N/N, where the normal interval collapses to a point.
    pub fn wilson95(&self) -> Option<Estimate> {
        if self.n == 0 {
            return None;
        }
        assert!(
            self.k <= self.n,
            "count k = {} exceeds n = {}",
            self.k,
            self.n
        );
        let z = 1.959_963_984_540_054_f64;
        let n = self.n as f64;
        let p = self.k as f64 / n;
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
        let lo = if self.k == 0 { 0.0 } else { centre - half };
        let hi = if self.k == self.n { 1.0 } else { centre + half };
        Some(Estimate {
            mean: p,
            lo: lo.clamp(0.0, p),
            hi: hi.clamp(p, 1.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_known_values() {
        let e = Count { k: 0, n: 20 }.wilson95().unwrap();
        assert_eq!(e.lo, 0.0);
        assert!((e.hi - 0.1611).abs() < 1e-4, "{}", e.hi);
        let e = Count { k: 5, n: 10 }.wilson95().unwrap();
        assert!((e.lo - 0.2366).abs() < 1e-4, "{}", e.lo);
        assert!((e.hi - 0.7634).abs() < 1e-4, "{}", e.hi);
        let e = Count { k: 20, n: 20 }.wilson95().unwrap();
        assert_eq!(e.hi, 1.0);
        assert!((e.lo - 0.8389).abs() < 1e-4, "{}", e.lo);
        assert_eq!(Count { k: 0, n: 0 }.wilson95(), None);
    }

    #[test]
    fn compact_counts() {
        assert_eq!(compact(987), "987");
        assert_eq!(compact(12_345), "12.3k");
        assert_eq!(compact(4_560_000), "4.56M");
        assert_eq!(compact(123_000_000), "123M");
        assert_eq!(compact(1_000), "1k");
        assert_eq!(compact(10_000_000), "10M");
        assert_eq!(compact(12_000), "12k");
    }

    #[test]
    fn every_runtime_kind_has_its_own_fixed_colour() {
        use agentsim_models::runtime::RuntimeKind;
        let mut seen = Vec::new();
        for k in RuntimeKind::ALL {
            let named = RUNTIME_COLORS.iter().find(|(n, _)| *n == k.name());
            let (_, c) = named.unwrap_or_else(|| panic!("{} has no fixed colour", k.name()));
            assert!(!seen.contains(c), "{} shares a colour", k.name());
            seen.push(*c);
        }
    }

    #[test]
    fn runtime_colours_are_stable() {
        assert_eq!(runtime_color("saga", 0), runtime_color("saga", 7));
        assert_ne!(runtime_color("si", 0), runtime_color("ssi", 0));
    }
}
