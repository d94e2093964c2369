//! The Hasse figure: deterministic bytes and the structure the issue asks for (16 labelled
//! points, 32 cover edges of which the 4 on the named chain are bold, labels L0..L4).
//! A pass does not prove the picture is pleasant to read; that was checked by eye.

use agentsim::artifacts::figures::hasse::{self, HasseData};

fn svg() -> String {
    hasse::render(&HasseData::from_lattice())
}

#[test]
fn rendering_twice_gives_the_same_bytes() {
    assert_eq!(svg(), svg());
}

#[test]
fn has_sixteen_point_labels() {
    let s = svg();
    // A point is labelled by its anomalies without braces, `none` for the empty set.
    let point = |l: &&str| *l == "none" || l.split(',').all(|a| a.len() == 2 && a.starts_with('A'));
    let labels = s.lines().filter(point).count();
    assert_eq!(labels, 16, "{s}");
}

#[test]
fn has_thirty_two_edges_four_bold() {
    let s = svg();
    let lines: Vec<&str> = s.lines().filter(|l| l.contains("<polyline")).collect();
    assert_eq!(lines.len(), 32);
    let bold = lines
        .iter()
        .filter(|l| l.contains("stroke-width=\"4\""))
        .count();
    assert_eq!(bold, 4);
}

#[test]
fn labels_the_named_chain() {
    let s = svg();
    let lines: Vec<&str> = s.lines().collect();
    for k in 0..5 {
        let tag = format!("L{k}");
        assert_eq!(
            lines.iter().filter(|l| **l == tag).count(),
            1,
            "missing {tag}"
        );
    }
    // Text content sits on its own line after its <text ...> tag; the chain's labels are bold.
    for label in ["none", "A1", "A1,A3", "A1,A3,A6", "A1,A2,A3,A6"] {
        let i = lines.iter().position(|l| *l == label).expect(label);
        assert!(
            lines[i - 1].contains("font-weight=\"bold\""),
            "{label} not bold"
        );
    }
    let i = lines.iter().position(|l| *l == "A2,A6").expect("A2,A6");
    assert!(!lines[i - 1].contains("font-weight"));
}
