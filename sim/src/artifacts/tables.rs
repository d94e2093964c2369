//! Tables as deterministic bytes: one [`Table`] written as Markdown, CSV and JSON.
//!
//! `agentsim reproduce --check` compares regenerated files byte for byte with the committed
//! ones, so nothing here may depend on the platform, the locale or a hash order: floats are
//! written with a fixed number of decimals chosen per cell (never `{}` of an `f64`), `-0.00`
//! is written `0.00`, JSON object keys are sorted, lines end in `\n`. JSON is written by hand
//! for that reason (serde_json would re-print a float in shortest form). A pass proves the
//! formats are stable and well formed; it does not prove the numbers in them.

use std::fmt::Write as _;

/// One table cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Text, written as is (escaped per format).
    Text(String),
    /// An integer.
    Int(i64),
    /// A float written with exactly `digits` decimals; NaN and infinities are written empty
    /// (Markdown, CSV) or `null` (JSON).
    Float {
        /// The value.
        value: f64,
        /// Decimals to write.
        digits: usize,
    },
    /// No value.
    Empty,
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// A float cell with `digits` decimals.
    pub fn float(value: f64, digits: usize) -> Cell {
        Cell::Float { value, digits }
    }

    /// The cell as it appears in Markdown and CSV (before escaping); `None` for no value.
    fn plain(&self) -> Option<String> {
        match self {
            Cell::Text(s) => Some(s.clone()),
            Cell::Int(i) => Some(i.to_string()),
            Cell::Float { value, digits } if value.is_finite() => {
                let s = format!("{value:.digits$}");
                // `-0.00` and `0.00` are the same number; write one of them.
                let zero = s
                    .trim_start_matches('-')
                    .chars()
                    .all(|c| c == '0' || c == '.');
                Some(if zero {
                    s.trim_start_matches('-').to_string()
                } else {
                    s
                })
            }
            Cell::Float { .. } | Cell::Empty => None,
        }
    }

    fn is_number(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Float { .. })
    }

    fn json(&self) -> String {
        match (self, self.plain()) {
            (Cell::Text(s), _) => json_string(s),
            (_, Some(number)) => number,
            (_, None) => "null".to_string(),
        }
    }
}

/// A table: a title, named columns and rows of cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Shown as the Markdown heading and the JSON `title`.
    pub title: String,
    /// Column names; also the JSON keys of each row.
    pub columns: Vec<String>,
    /// Rows, each exactly as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        let mut sorted = columns.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            columns.len(),
            "duplicate column names: {columns:?}"
        );
        Table {
            title: title.into(),
            columns,
            rows: Vec::new(),
        }
    }

    /// Appends a row; its length must match the columns.
    pub fn push(&mut self, row: Vec<Cell>) {
        assert_eq!(
            row.len(),
            self.columns.len(),
            "row length vs columns of {}",
            self.title
        );
        self.rows.push(row);
    }

    /// Whether column `j` holds only numbers (and blanks): right-aligned in Markdown.
    fn numeric(&self, j: usize) -> bool {
        let mut cells = self.rows.iter().map(|r| &r[j]);
        let any = self.rows.iter().any(|r| r[j].is_number());
        any && cells.all(|c| c.is_number() || *c == Cell::Empty)
    }

    /// GitHub-flavoured Markdown: a `##` heading, then the table padded to column widths.
    pub fn to_markdown(&self) -> String {
        let esc = |s: String| s.replace('|', "\\|");
        let grid: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|c| esc(c.plain().unwrap_or_default()))
                    .collect()
            })
            .collect();
        let head: Vec<String> = self.columns.iter().map(|c| esc(c.clone())).collect();
        let widths: Vec<usize> = (0..head.len())
            .map(|j| {
                let body = grid.iter().map(|r| r[j].chars().count());
                body.chain([head[j].chars().count(), 3]).max().unwrap_or(3)
            })
            .collect();
        let right: Vec<bool> = (0..head.len()).map(|j| self.numeric(j)).collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(j, s)| pad(s, widths[j], right[j]))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let mut out = format!("## {}\n\n", self.title);
        out.push_str(&line(&head));
        let rule: Vec<String> = (0..head.len())
            .map(|j| match right[j] {
                true => format!("{}:", "-".repeat(widths[j] - 1)),
                false => "-".repeat(widths[j]),
            })
            .collect();
        out.push_str(&line(&rule));
        for r in &grid {
            out.push_str(&line(r));
        }
        out
    }

    /// RFC 4180 CSV with `\n` line ends: a header row, then the rows; fields holding a comma,
    /// quote or line break are quoted.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let head: Vec<String> = self.columns.iter().map(|c| csv_field(c)).collect();
        writeln!(out, "{}", head.join(",")).expect("string");
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .map(|c| csv_field(&c.plain().unwrap_or_default()))
                .collect();
            writeln!(out, "{}", cells.join(",")).expect("string");
        }
        out
    }

    /// JSON: `{"columns": [...], "rows": [{...}], "title": "..."}`, keys sorted at every level,
    /// one row per line.
    pub fn to_json(&self) -> String {
        let mut order: Vec<usize> = (0..self.columns.len()).collect();
        order.sort_by(|&a, &b| self.columns[a].cmp(&self.columns[b]));
        let columns: Vec<String> = self.columns.iter().map(|c| json_string(c)).collect();
        let mut out = format!(
            "{{\n  \"columns\": [{}],\n  \"rows\": [",
            columns.join(", ")
        );
        for (i, r) in self.rows.iter().enumerate() {
            let fields: Vec<String> = order
                .iter()
                .map(|&j| format!("{}: {}", json_string(&self.columns[j]), r[j].json()))
                .collect();
            let sep = if i == 0 { "\n" } else { ",\n" };
            write!(out, "{sep}    {{{}}}", fields.join(", ")).expect("string");
        }
        let close = if self.rows.is_empty() { "]" } else { "\n  ]" };
        writeln!(
            out,
            "{close},\n  \"title\": {}\n}}",
            json_string(&self.title)
        )
        .expect("string");
        out
    }
}

fn pad(s: &str, width: usize, right: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(s.chars().count()));
    if right {
        format!("{fill}{s}")
    } else {
        format!("{s}{fill}")
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("Sample", &["name", "k", "rate"]);
        t.push(vec![Cell::text("a|b"), Cell::Int(3), Cell::float(0.125, 2)]);
        t.push(vec![
            Cell::text("x,\"y\""),
            Cell::Empty,
            Cell::float(-0.0001, 2),
        ]);
        t.push(vec![
            Cell::text("z"),
            Cell::Int(-4),
            Cell::float(f64::NAN, 2),
        ]);
        t
    }

    #[test]
    fn markdown_is_padded_escaped_and_aligned() {
        let md = sample().to_markdown();
        let expected = "## Sample\n\n\
            | name  |   k | rate |\n\
            | ----- | --: | ---: |\n\
            | a\\|b  |   3 | 0.12 |\n\
            | x,\"y\" |     | 0.00 |\n\
            | z     |  -4 |      |\n";
        assert_eq!(md, expected);
    }

    #[test]
    fn csv_quotes_only_when_needed() {
        let csv = sample().to_csv();
        assert_eq!(
            csv,
            "name,k,rate\na|b,3,0.12\n\"x,\"\"y\"\"\",,0.00\nz,-4,\n"
        );
    }

    #[test]
    fn json_has_sorted_keys_and_fixed_floats() {
        let json = sample().to_json();
        let expected = "{\n  \"columns\": [\"name\", \"k\", \"rate\"],\n  \"rows\": [\n    \
            {\"k\": 3, \"name\": \"a|b\", \"rate\": 0.12},\n    \
            {\"k\": null, \"name\": \"x,\\\"y\\\"\", \"rate\": 0.00},\n    \
            {\"k\": -4, \"name\": \"z\", \"rate\": null}\n  ],\n  \"title\": \"Sample\"\n}\n";
        assert_eq!(json, expected);
        let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(v["rows"][0]["rate"], 0.12);
    }

    #[test]
    fn empty_table_is_valid_json() {
        let t = Table::new("Empty", &["a"]);
        let v: serde_json::Value = serde_json::from_str(&t.to_json()).expect("valid JSON");
        assert_eq!(v["rows"].as_array().map(Vec::len), Some(0));
    }

    #[test]
    #[should_panic(expected = "row length")]
    fn short_rows_are_a_bug() {
        let mut t = Table::new("T", &["a", "b"]);
        t.push(vec![Cell::Int(1)]);
    }
}
