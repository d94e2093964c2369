//! The committed figures at one column of a paper (3.3 in): each SVG's smallest text, scaled to
//! that width, is at least 7 pt, and each renders with librsvg (`rsvg-convert`, Debian's
//! `librsvg2-bin`) to a PNG of the expected size — 990 px wide, 3.3 in at 300 dpi — kept
//! under the target folder (`figures-one-column/`) to look at.
//!
//! The sizes are read from the SVG (`width`, every `font-size`), not guessed from the PNG; a
//! pass says the text is large enough at that width, not that nothing overlaps (that was
//! checked by eye on the PNGs). Figures still drawn for a full page are listed in
//! [`FULL_WIDTH`]; the test fails if one of them becomes legible too, so the list only shrinks.
//! Without `rsvg-convert` the sizes are still checked and the rendering is not (said on the
//! terminal; a failure under `AGENTSIM_REQUIRE_TOOLS=1`, as CI runs it).

use crate::tools::{require, Tool};
use crate::util::root;
use std::path::Path;
use std::process::Command;

/// One column of a two-column paper, in points.
const COLUMN_PT: f64 = 3.3 * 72.0;
/// The smallest text a paper's figure may have at that width.
const MIN_PT: f64 = 7.0;
/// The PNG's width: 3.3 in at 300 dpi.
const PNG_W: u32 = 990;

/// Figures whose layout is still a full page's: at 3.3 in their smallest text is under 7 pt.
const FULL_WIDTH: &[&str] = &[];

/// The value of the first `name="…"` attribute after `from` in `s`.
fn attr(s: &str, name: &str) -> Option<f64> {
    let key = format!("{name}=\"");
    let at = s.find(&key)? + key.len();
    s[at..].split('"').next()?.parse().ok()
}

/// (width, height, smallest font-size) of an SVG, in its own units.
fn measure(svg: &str) -> (f64, f64, f64) {
    let head = &svg[svg.find("<svg").expect("an <svg> element")..];
    let (w, h) = (attr(head, "width").unwrap(), attr(head, "height").unwrap());
    let sizes = svg
        .split("font-size=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next()?.parse::<f64>().ok());
    (w, h, sizes.fold(f64::INFINITY, f64::min))
}

/// librsvg's renderer, which the Rust toolchain does not bring.
const RSVG: Tool = Tool {
    name: "rsvg-convert",
    candidates: &["/usr/bin/rsvg-convert"],
    env: None,
    install: "apt-get install librsvg2-bin",
};

/// The width and height a PNG's header says.
fn png_size(file: &Path) -> (u32, u32) {
    let b = std::fs::read(file).expect("the PNG");
    assert!(
        b.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is a PNG",
        file.display()
    );
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn figures_are_legible_at_one_column_and_render_to_png() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("figures-one-column");
    std::fs::create_dir_all(&out).unwrap();
    let dir = root().join("results/figures");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "found only {names:?}");
    let rsvg = require(
        &RSVG,
        "figures_are_legible_at_one_column_and_render_to_png (the PNG rendering)",
    );
    let mut report = Vec::new();
    let mut wrong = Vec::new();
    for name in &names {
        let svg = std::fs::read_to_string(dir.join(name)).unwrap();
        let (w, h, font) = measure(&svg);
        let pt = font * COLUMN_PT / w;
        let legible = pt >= MIN_PT;
        report.push(format!(
            "{name}: {w}x{h}, smallest text {pt:.1} pt at 3.3 in"
        ));
        if legible == FULL_WIDTH.contains(&name.as_str()) {
            wrong.push(format!("{name}: {pt:.1} pt at 3.3 in"));
        }
        let Some(rsvg) = &rsvg else { continue };
        let png = out.join(name.replace(".svg", ".png"));
        let status = Command::new(rsvg)
            .args(["--width", &PNG_W.to_string(), "--keep-aspect-ratio", "-o"])
            .arg(&png)
            .arg(dir.join(name))
            .status()
            .expect("run rsvg-convert");
        assert!(status.success(), "rsvg-convert failed on {name}");
        let (pw, ph) = png_size(&png);
        assert_eq!(pw, PNG_W, "{name}");
        let expect = (f64::from(PNG_W) * h / w).round();
        assert!(
            (f64::from(ph) - expect).abs() <= 1.0,
            "{name}: {ph} px high, not {expect}"
        );
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        wrong.is_empty(),
        "legible at one column (>= {MIN_PT} pt) exactly when not listed in FULL_WIDTH: {wrong:?}"
    );
}
