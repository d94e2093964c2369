//! Every figure renderer on sample data: the same data gives the same bytes, and each SVG has
//! the structure its data asks for (one cell, bar or line per datum, labels present). The sample
//! numbers below are test fixtures only; `agentsim reproduce` never draws them. A pass does not
//! prove the figures are legible; that was checked by eye (set AGENTSIM_FIGURE_PREVIEW=<dir> to
//! write the SVGs and look at them).

use agentsim::artifacts::figures::*;

const RUNTIMES: [&str; 9] = [
    "vanilla",
    "pessimistic",
    "si",
    "ssi",
    "causal",
    "causal-no-cascade",
    "saga",
    "registry-validate",
    "registry-pin",
];

fn est(mean: f64, half: f64) -> Estimate {
    Estimate {
        mean,
        lo: mean - half,
        hi: mean + half,
    }
}

fn matrix() -> MatrixData {
    let rows = RUNTIMES
        .iter()
        .enumerate()
        .map(|(i, r)| MatrixRow {
            runtime: r.to_string(),
            cells: (0..4)
                .map(|j| match (i + j) % 4 {
                    0 => MatrixCell::Admitted {
                        witness_len: 3 + j as u32,
                    },
                    1 => MatrixCell::Prevented {
                        states: 12_345 * (i as u64 + 1),
                    },
                    2 => MatrixCell::Inconclusive { states: 1_000_000 },
                    _ => MatrixCell::NotRun,
                })
                .collect(),
        })
        .collect();
    MatrixData {
        bounds: "2 agents, 2 cells, 2 tools, 2 values, depth 6".into(),
        anomalies: ["A1", "A2", "A3", "A6"].map(String::from).to_vec(),
        column_bounds: (1..=4)
            .map(|k| vec![format!("{k} agents"), format!("MaxOps {k}")])
            .collect(),
        rows,
    }
}

fn twins() -> TwinsData {
    let groups = [
        ("A1", "registry-validate"),
        ("A2", "registry-pin"),
        ("A3", "causal"),
    ]
    .iter()
    .flat_map(|&(a, m)| {
        [2u64, 4].map(|size| TwinGroup {
            anomaly: a.into(),
            size: format!("{size} agents"),
            mechanism: m.into(),
            baseline: "vanilla".into(),
            without: Count { k: 7 * size, n: 50 },
            with: Count { k: 0, n: 50 },
        })
    })
    .collect();
    TwinsData { groups }
}

fn workloads() -> WorkloadData {
    let rows = RUNTIMES
        .iter()
        .enumerate()
        .map(|(i, r)| WorkloadRow {
            runtime: r.to_string(),
            a1: Count {
                k: (9 - i as u64) * 4,
                n: 40,
            },
            token_overhead: est(0.03 * i as f64, 0.01),
        })
        .collect();
    WorkloadData {
        workload: "A1 stale generation, 3 agents".into(),
        overhead_interval: "95% normal, paired by seed".into(),
        rows,
    }
}

fn sweep() -> SweepData {
    let series = RUNTIMES[..5]
        .iter()
        .enumerate()
        .map(|(i, r)| SweepSeries {
            runtime: r.to_string(),
            points: (1..=6)
                .map(|c| {
                    let x = c as f64;
                    let f = 1.0 / (1.0 + i as f64);
                    SweepPoint {
                        contention: x,
                        anomaly_rate: est(f * x / 7.0, 0.04),
                        abort_rate: est((1.0 - f) * x / 8.0, 0.03),
                        token_overhead: est(0.05 * i as f64 * x / 6.0, 0.02),
                        makespan_ms: est(1000.0 + 150.0 * x * i as f64, 80.0),
                    }
                })
                .collect(),
        })
        .collect();
    SweepData {
        x_desc: "agents sharing one cell".into(),
        series,
        intervals: intervals(),
    }
}

fn intervals() -> SweepIntervals {
    SweepIntervals {
        rates: "95% Wilson".into(),
        token_overhead: "95% normal, paired by seed".into(),
        makespan_ms: "95% normal".into(),
    }
}

fn states() -> StateCountData {
    let series = [
        ("paper-faithful", 40.0),
        ("canonical", 12.0),
        ("canonical+symmetry", 5.0),
    ]
    .iter()
    .map(|&(name, base)| StateSeries {
        config: name.into(),
        points: (1..=5)
            .map(|b| StatePoint {
                bound: b,
                states: (base * 9f64.powi(b as i32)) as u64,
            })
            .collect(),
    })
    .collect();
    StateCountData {
        bound_desc: "operations per agent (2 agents, 1 cell)".into(),
        series,
    }
}

fn all() -> Vec<(&'static str, String)> {
    vec![
        ("hasse", hasse::render(&HasseData::from_lattice())),
        ("matrix", runtime_matrix::render(&matrix())),
        ("twins", twins::render(&twins())),
        ("workloads", workloads::render(&workloads())),
        ("sweep", sweep::render(&sweep())),
        ("states", states::render(&states())),
    ]
}

#[test]
fn every_figure_is_byte_deterministic() {
    let (a, b) = (all(), all());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(x, y, "{name} differs between two renders");
        assert!(x.starts_with("<svg "), "{name}");
        assert!(x.ends_with("</svg>\n"), "{name}");
    }
    if let Ok(dir) = std::env::var("AGENTSIM_FIGURE_PREVIEW") {
        for (name, svg) in a {
            std::fs::write(format!("{dir}/{name}.svg"), svg).unwrap();
        }
    }
}

#[test]
fn rendering_on_other_threads_gives_the_same_bytes() {
    let here = all();
    let handles: Vec<_> = (0..2).map(|_| std::thread::spawn(all)).collect();
    for h in handles {
        let there = h.join().expect("render thread");
        assert_eq!(here, there);
    }
}

fn text_lines(svg: &str) -> Vec<&str> {
    svg.lines().filter(|l| !l.starts_with('<')).collect()
}

#[test]
fn matrix_has_one_verdict_per_cell() {
    let svg = runtime_matrix::render(&matrix());
    let lines = text_lines(&svg);
    // A cell's code: `w3` (witness steps), `12.3k` (states), `>2M` (limit, escaped in SVG) or `–`.
    let cell = |l: &str| {
        let v = l.strip_prefix('w').or(l.strip_prefix("&gt;")).unwrap_or(l);
        l == "\u{2013}"
            || (v.starts_with(|c: char| c.is_ascii_digit())
                && v.chars().all(|c| c.is_ascii_digit() || ".kMG".contains(c)))
    };
    assert_eq!(lines.iter().filter(|l| cell(l)).count(), 9 * 4, "{lines:?}");
    assert!(lines.contains(&"w3"));
    assert!(lines.contains(&"12.3k"));
    assert!(
        lines.iter().any(|l| l.contains("MaxOps 3")),
        "each column's bounds are printed"
    );
    for r in RUNTIMES {
        assert!(lines.contains(&r), "{r}");
    }
}

#[test]
fn twins_show_k_over_n_for_both_arms() {
    let svg = twins::render(&twins());
    let lines = text_lines(&svg);
    assert_eq!(lines.iter().filter(|l| **l == "0/50").count(), 6);
    assert!(lines.contains(&"28/50"));
    assert!(lines.contains(&"2 agents"), "each size is named");
    assert!(
        lines.contains(&"vanilla \u{2192} causal"),
        "both runtimes are named"
    );
}

#[test]
fn twins_with_equal_counts_share_a_row() {
    let same = |size: &str| TwinGroup {
        anomaly: "A6".into(),
        size: format!("width {size}"),
        mechanism: "saga".into(),
        baseline: "vanilla".into(),
        without: Count { k: 20, n: 20 },
        with: Count { k: 0, n: 20 },
    };
    let data = TwinsData {
        groups: vec![same("2"), same("4"), same("8")],
    };
    let svg = twins::render(&data);
    let lines = text_lines(&svg);
    assert!(lines.contains(&"width 2, 4, 8"), "{lines:?}");
    assert_eq!(lines.iter().filter(|l| **l == "20/20").count(), 1);
}

#[test]
fn workloads_have_a_row_per_runtime_in_both_panels() {
    let svg = workloads::render(&workloads());
    let lines = text_lines(&svg);
    for r in RUNTIMES {
        assert_eq!(lines.iter().filter(|l| **l == r).count(), 2, "{r}");
    }
    assert!(lines.contains(&"36/40"));
    assert!(lines.contains(&"+24.0%"));
    let axis = "95% normal, paired by seed";
    assert!(lines.contains(&axis), "the interval is named");
}

#[test]
fn sweep_has_four_panels_and_a_band_per_series() {
    let svg = sweep::render(&sweep());
    let polygons = svg.lines().filter(|l| l.starts_with("<polygon")).count();
    assert_eq!(polygons, 4 * 5);
    let lines = text_lines(&svg);
    for caption in [
        "anomaly rate (95% Wilson)",
        "abort / drop rate (95% Wilson)",
        "makespan (virtual ms; 95% normal)",
    ] {
        assert!(lines.contains(&caption), "{caption}");
    }
}

#[test]
fn states_has_one_marker_per_point_and_a_legend() {
    let svg = states::render(&states());
    let circles = svg.lines().filter(|l| l.starts_with("<circle")).count();
    assert_eq!(circles, 15);
    let lines = text_lines(&svg);
    assert!(lines.contains(&"canonical+symmetry"));
}

#[test]
fn empty_data_renders_without_panicking() {
    let m = MatrixData {
        bounds: String::new(),
        anomalies: vec![],
        column_bounds: vec![],
        rows: vec![],
    };
    assert!(runtime_matrix::render(&m).ends_with("</svg>\n"));
    assert!(twins::render(&TwinsData { groups: vec![] }).ends_with("</svg>\n"));
    let s = SweepData {
        x_desc: String::new(),
        series: vec![],
        intervals: intervals(),
    };
    assert!(sweep::render(&s).ends_with("</svg>\n"));
    let c = StateCountData {
        bound_desc: String::new(),
        series: vec![],
    };
    assert!(states::render(&c).ends_with("</svg>\n"));
}

#[test]
fn every_figure_has_a_table_of_the_same_numbers() {
    use agentsim::artifacts::tables::Cell;
    let m = matrix().table();
    assert_eq!(m.rows.len(), 9 * 4);
    assert_eq!(
        m.rows[0],
        vec![
            Cell::text("vanilla"),
            Cell::text("A1"),
            Cell::text("admitted"),
            Cell::Int(3),
            Cell::Empty,
            Cell::text("1 agents; MaxOps 1"),
        ]
    );
    assert_eq!(m.rows[1][2], Cell::text("prevented"));
    assert_eq!(m.rows[1][4], Cell::Int(12_345));
    let t = twins().table();
    assert_eq!(t.rows.len(), 6);
    let csv = t.to_csv();
    assert!(csv.contains("A1,2 agents,registry-validate,vanilla,14,50,0.2800,0.1747,0.4167,"));
    assert!(csv.contains(",0,50,0.0000,0.0000,0.0713\n"), "{csv}");
    assert_eq!(workloads().table().rows.len(), 9);
    let s = sweep().table();
    assert_eq!(s.rows.len(), 5 * 6 * 4);
    assert_eq!(s.rows[3][2], Cell::text("makespan_ms"));
    let c = states().table();
    assert_eq!(c.rows.len(), 15);
    assert_eq!(c.rows[0][2], Cell::Int(360));
    assert_eq!(states().table().to_json(), c.to_json());
}
