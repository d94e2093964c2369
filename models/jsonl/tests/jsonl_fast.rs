//! The fast reader against the spec reader: the same records, ids, lines and errors.
//!
//! Three readers must agree on every input: the spec form (`RecordReader::spec`: the generic
//! JSON tree walked key by key), the default reader (the schema-directed scanner, falling
//! back to the spec form on anything it declines), and the block reader (lines cut into
//! blocks at arbitrary newlines, each parsed apart with local names, then merged in order;
//! and the threaded pipeline over it). Agreement means the same records with the same ids
//! and lines, or the same first error, byte for byte. Inputs: every history of the detector
//! enumeration families (written as JSON Lines), generated histories, and those mutated at
//! random (bytes replaced, inserted, deleted; whitespace, escapes, duplicate keys, numbers);
//! plus a list of hostile lines. A pass says the readers agree on these inputs; that the
//! spec form reads the format as documented is `jsonl_roundtrip.rs` and `jsonl_rejects.rs`.

#[path = "../../tests/detect_support/mod.rs"]
mod detect_support;

use agentsim_jsonl::{self as jsonl, Merger, Parsed, RecordReader};
use agentsim_models::{History, Names, OpRecord, Value, ValueKey};
use detect_support::*;
use proptest::prelude::*;
use std::ops::ControlFlow;

/// What a reader made of some bytes: the names and the records with their lines, or the error.
type Outcome = Result<(Names, Vec<(OpRecord, usize)>), String>;

fn sequential(bytes: &[u8], spec: bool) -> Outcome {
    let mut reader = match spec {
        true => RecordReader::spec(bytes, "f.jsonl"),
        false => RecordReader::new(bytes, "f.jsonl"),
    };
    let (mut names, mut out, mut rec) = (Names::new(), Vec::new(), OpRecord::default());
    loop {
        match reader.next_into(&mut names, &mut rec) {
            Ok(Some(line)) => out.push((rec.clone(), line)),
            Ok(None) => return Ok((names, out)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// The blocks reader, cutting after the newlines at the given byte offsets.
fn blocks(bytes: &[u8], cuts: &[usize]) -> Outcome {
    let mut out = vec![];
    let (merger, parsed) = (Merger::new("f.jsonl"), Parsed::default());
    let names = merge_blocks(bytes, cuts, merger, parsed, |p| {
        out.extend(p.records().iter().cloned())
    })?;
    Ok((names, out))
}

/// Parses and merges the blocks of `bytes` cut at `cuts` in order, `take` seeing each merged.
fn merge_blocks(
    bytes: &[u8],
    cuts: &[usize],
    mut merger: Merger,
    mut parsed: Parsed,
    mut take: impl FnMut(&Parsed),
) -> Result<Names, String> {
    let mut from = 0;
    for end in block_ends(bytes, cuts) {
        let block = &bytes[from..end];
        jsonl::parse_block(block, &mut parsed);
        merger
            .merge(block, &mut parsed)
            .map_err(|e| e.to_string())?;
        take(&parsed);
        from = end;
    }
    Ok(merger.names)
}

/// Where blocks cut after the newlines at the given byte offsets end.
fn block_ends(bytes: &[u8], cuts: &[usize]) -> Vec<usize> {
    let mut ends: Vec<usize> = cuts
        .iter()
        .filter_map(|&c| {
            let c = c.min(bytes.len());
            bytes[c..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| c + i + 1)
        })
        .collect();
    ends.push(bytes.len());
    ends.sort_unstable();
    ends.dedup();
    ends
}

/// A record read by names: its shape (every value id made 1, NULL kept) and the name of each
/// value, field by field; with the agent, cell and tool names. Readers whose value ids differ
/// (a literal merger's are block-local) agree when these do.
type Named = Result<(Vec<String>, Vec<(OpRecord, Vec<Option<String>>, usize)>), String>;

fn named_with(
    names: &Names,
    records: impl IntoIterator<Item = (OpRecord, usize, Vec<ValueKey>)>,
) -> Vec<(OpRecord, Vec<Option<String>>, usize)> {
    records
        .into_iter()
        .map(|(mut r, line, keys)| {
            let name = |v: Value| match keys.is_empty() {
                true => names.value_name(v),
                false => names.key_name(ValueKey::listed(&keys, v.0)),
            };
            let mut values: Vec<Option<String>> = vec![];
            for m in [&r.read_values, &r.write_values] {
                values.extend(m.entries().iter().map(|&(_, v)| name(v)));
            }
            values.extend(r.io.iter().chain(&r.co).map(|&(_, v)| name(v)));
            let one = |v: Value| if v.is_null() { v } else { Value(1) };
            r.read_values.rename(|c| c, one);
            r.write_values.rename(|c| c, one);
            for (_, v) in r.io.iter_mut().chain(r.co.iter_mut()) {
                *v = one(*v);
            }
            (r, values, line)
        })
        .collect()
}

fn tables(n: &Names) -> Vec<String> {
    [&n.agents, &n.cells, &n.tools, &n.replicas]
        .map(|t| format!("{t:?}"))
        .to_vec()
}

/// An outcome by names.
fn named(o: &Outcome) -> Named {
    let (names, records) = o.as_ref().map_err(Clone::clone)?;
    let records = records.iter().map(|(r, l)| (r.clone(), *l, vec![]));
    Ok((tables(names), named_with(names, records)))
}

/// The blocks reader with a literal merger (value ids block-local, with their keys).
fn blocks_literal(bytes: &[u8], cuts: &[usize]) -> Named {
    let mut out = vec![];
    let (merger, parsed) = (Merger::literal("f.jsonl"), Parsed::literal());
    let names = merge_blocks(bytes, cuts, merger, parsed, |p| {
        let keys = &p.keys;
        out.extend(
            p.records()
                .iter()
                .map(|(r, l)| (r.clone(), *l, keys.clone())),
        )
    })?;
    Ok((tables(&names), named_with(&names, out)))
}

/// `for_each_literal_block` by names.
fn pipeline_literal(bytes: &[u8], threads: usize, cut: jsonl::Blocks) -> Named {
    let mut out = Vec::new();
    let names = jsonl::for_each_literal_block(bytes, "f.jsonl", threads, cut, |_, recs, keys| {
        out.extend(recs.iter().map(|(r, l)| (r.clone(), *l, keys.to_vec())));
        ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())?;
    Ok((tables(&names), named_with(&names, out)))
}

fn pipeline(bytes: &[u8], threads: usize) -> Outcome {
    pipeline_in(bytes, threads, jsonl::Blocks::FILE)
}

/// The pipeline's outcome, which must be the same whether the records are taken on the
/// merging thread or on a thread of their own (`for_each_block_apart`).
fn pipeline_in(bytes: &[u8], threads: usize, cut: jsonl::Blocks) -> Outcome {
    let mut out = Vec::new();
    let inline = jsonl::for_each_block_in(bytes, "f.jsonl", threads, cut, |_, recs| {
        out.extend(recs.iter().cloned());
        ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())
    .map(|names| (names, out));
    let mut out = Vec::new();
    let expect = Some(bytes.len() as u64);
    let apart = jsonl::for_each_block_apart(bytes, "f.jsonl", threads, cut, expect, |recs| {
        out.extend(recs.iter().cloned());
        ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())
    .map(|names| (names, out));
    assert_eq!(apart, inline, "apart vs inline, {cut:?}, {threads} threads");
    let literal = pipeline_literal(bytes, threads, cut);
    assert_eq!(
        literal,
        named(&inline),
        "literal, {cut:?}, {threads} threads"
    );
    inline
}

/// All readers agree on `bytes` (blocks cut at `cuts`); returns the spec outcome.
fn agree(bytes: &[u8], cuts: &[usize]) -> Outcome {
    let spec = sequential(bytes, true);
    assert_eq!(sequential(bytes, false), spec, "fast vs spec");
    assert_eq!(blocks(bytes, cuts), spec, "blocks at {cuts:?} vs spec");
    let literal = blocks_literal(bytes, cuts);
    assert_eq!(literal, named(&spec), "literal blocks at {cuts:?} vs spec");
    spec
}

/// Every way of cutting a short text into blocks (at most 4 lines: 8 ways).
fn agree_all_cuts(text: &str) {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < text.len())
        .collect();
    let spec = agree(text.as_bytes(), &[]);
    let n = starts.len().min(4);
    for mask in 0u32..1 << n {
        let cuts: Vec<usize> = (0..n)
            .filter(|b| mask & (1 << b) != 0)
            .map(|b| starts[b])
            .collect();
        assert_eq!(
            blocks(text.as_bytes(), &cuts),
            spec,
            "cuts {cuts:?}\n{text}"
        );
        let literal = blocks_literal(text.as_bytes(), &cuts);
        assert_eq!(literal, named(&spec), "literal, cuts {cuts:?}\n{text}");
    }
}

fn family(choices: &[OpRecord], max: usize) -> u64 {
    enumerate(choices, max, Reads::Free, &mut |h: &History| {
        agree_all_cuts(&jsonl::write_history(h));
    })
}

#[test]
fn enumeration_families_read_the_same() {
    assert_eq!(family(&model_choices(), 2), 1 + 128 + 128 * 128 * 2);
    assert_eq!(family(&skewed_choices(), 1), 1 + 1600);
    assert_eq!(family(&one_cell_choices(), 2), 1 + 64 + 64 * 64 * 2);
    assert_eq!(family(&registry_choices(), 1), 1 + 486);
    assert_eq!(family(&effects_choices(), 1), 1 + 25 * 259 * 2);
    let mut provenance = 0;
    for n in 0..=4usize {
        for preds in 0u64..1 << (n * n.saturating_sub(1) / 2) {
            for aborted in 0u32..1 << n {
                agree_all_cuts(&jsonl::write_history(&provenance_history(
                    n, preds, aborted,
                )));
                provenance += 1;
            }
        }
    }
    assert_eq!(provenance, 1 + 2 + 8 + 64 + 1024);
}

/// Lines the fast scanner must decline or read exactly as the spec form does.
const HOSTILE: &[&str] = &[
    "",
    "   ",
    "{}",
    "[]",
    "null",
    "{\"agent\":\"a\"}",
    " { \"agent\" : \"a\" , \"read_set\" : [ \"c\" ] , \"read_values\" : { \"c\" : null } , \
     \"read_time\" : 0 , \"write_set\" : [ ] , \"write_values\" : { } , \"write_time\" : 1 } ",
    "{\"agent\":\"a\\u0062\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1,\"agent\":\"b\"}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":01,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":1.0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":-0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":18446744073709551616}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":18446744073709551615}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":2,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{\"c\":\"x\",\"c\":\"y\"},\"read_time\":0,\
     \"write_set\":[],\"write_values\":{},\"write_time\":1}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"read_registry\":[\"t\",{\"version\":2,\"tool\":\"t\"}]}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"read_registry\":[{\"tool\":\"t\",\"version\":4294967296}]}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"read_registry\":[{\"tool\":\"t\",\"tool\":\"u\"}]}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"io\":[[\"c\",\"x\",\"y\"]],\"co\":[[\"c\",\"x\"]]}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"io\":[[\"c\",\"x\"]],\"co\":[[\"c\",\"y\"]]}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"preds\":[0]}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"aborted\":tru}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"planned_tool\":nul}",
    "{\"agent\":\"a\",\"read_set\":[\"c\"],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"read_replica\":{\"c\":\"r\"},\"read_version\":{\"c\":1}}",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1} x",
    "{\"agent\":\"a\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,}",
    "{\"agent\":\"\t\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1}",
    "{\"write_time\":1,\"write_values\":{},\"write_set\":[\"c\"],\"read_time\":0,\
     \"read_values\":{\"c\":\"x\"},\"read_set\":[\"c\"],\"agent\":\"a\",\"preds\":[]}",
    "{\"agent\":\"é\",\"read_set\":[\"ü\"],\"read_values\":{},\"read_time\":0,\"write_set\":[],\
     \"write_values\":{},\"write_time\":1,\"colour\":1}",
];

#[test]
fn hostile_lines_read_the_same() {
    for (i, line) in HOSTILE.iter().enumerate() {
        let ok = "{\"agent\":\"z\",\"read_set\":[],\"read_values\":{},\"read_time\":0,\
                  \"write_set\":[],\"write_values\":{},\"write_time\":0}";
        for text in [
            line.to_string(),
            format!("{ok}\n{line}\n{ok}"),
            format!("{line}\r\n"),
        ] {
            agree_all_cuts(&text);
        }
        let bad = [line.as_bytes(), b"\xff\n"].concat();
        assert_eq!(sequential(&bad, false), sequential(&bad, true), "line {i}");
    }
}

/// A generated history as JSON Lines.
fn generated() -> impl Strategy<Value = String> {
    prop::collection::vec(arb_raw(), 0..=40).prop_map(|raw| jsonl::write_history(&assemble(&raw)))
}

/// One edit of a text.
#[derive(Clone, Debug)]
enum Edit {
    Replace(usize, &'static str),
    Insert(usize, &'static str),
    Delete(usize, usize),
    /// The text between two offsets copied to a third (a key given twice, a line twice).
    Copy(usize, usize, usize),
}

const PIECES: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\t",
    "0",
    "1",
    "-",
    ".",
    "e",
    "9",
    "n",
    "null",
    "true",
    "\u{1}",
    "é",
    "\\u0063",
    "\\n",
    "\n",
    "\r\n",
    "\"agent\":\"x\",",
    "\"preds\":[0],",
    "\"read_replica\":{},",
    "18446744073709551616",
    "{\"tool\":\"t9\"}",
];

fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<prop::sample::Index>();
    let piece = prop::sample::select(PIECES);
    prop_oneof![
        (at.clone(), piece.clone()).prop_map(|(i, p)| Edit::Replace(i.index(usize::MAX / 2), p)),
        (at.clone(), piece).prop_map(|(i, p)| Edit::Insert(i.index(usize::MAX / 2), p)),
        (at.clone(), 1usize..12).prop_map(|(i, n)| Edit::Delete(i.index(usize::MAX / 2), n)),
        (at.clone(), 1usize..40, at).prop_map(|(i, n, j)| Edit::Copy(
            i.index(usize::MAX / 2),
            n,
            j.index(usize::MAX / 2)
        )),
    ]
}

fn apply(text: &mut Vec<u8>, e: &Edit) {
    if text.is_empty() {
        return;
    }
    let at = |i: usize| i % (text.len() + 1);
    match *e {
        Edit::Replace(i, p) => {
            let i = at(i).min(text.len() - 1);
            text.splice(i..i + 1, p.bytes());
        }
        Edit::Insert(i, p) => {
            let i = at(i);
            text.splice(i..i, p.bytes());
        }
        Edit::Delete(i, n) => {
            let i = at(i);
            text.drain(i..(i + n).min(text.len()));
        }
        Edit::Copy(i, n, j) => {
            let i = at(i);
            let piece = text[i..(i + n).min(text.len())].to_vec();
            let j = at(j);
            text.splice(j..j, piece);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_histories_read_the_same(text in generated(), cuts in prop::collection::vec(0usize..20_000, 0..6)) {
        let _ = agree(text.as_bytes(), &cuts);
    }

    #[test]
    fn mutated_histories_read_the_same(
        text in generated(),
        edits in prop::collection::vec(edit(), 1..4),
        cuts in prop::collection::vec(0usize..20_000, 0..6),
    ) {
        let mut bytes = text.into_bytes();
        for e in &edits {
            apply(&mut bytes, e);
        }
        let _ = agree(&bytes, &cuts);
    }
}

/// A history of a few MiB (several blocks) with a defect at `line` (1-based) if given.
fn big(defect: Option<(usize, &str)>) -> Vec<u8> {
    let raw: Vec<RawRecord> = (0..12_000u32)
        .map(|k| RawRecord {
            agent: k % 3,
            read_mask: (k % 16) as u8,
            read_values: [k % 4, (k / 4) % 4, 1, 2],
            write_mask: ((k * 7) % 16) as u8,
            write_values: [1, k % 4, 3, (k / 3) % 4],
            registries: ((k % 9) as u8, (k % 3) as u8, ((k / 9) % 9) as u8),
            co_shape: if k % 50 == 0 { 1 } else { 0 },
            aborted: k % 17 == 0,
            preds_mask: u64::from(k % 5) << (k % 40),
            time_gap: u64::from(k % 3),
            read_lag: u64::from(k % 12),
        })
        .collect();
    let text = jsonl::write_history(&assemble(&raw));
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if let Some((line, with)) = defect {
        lines[line - 1] = lines[line - 1].replacen("\"agent\"", with, 1);
    }
    (lines.join("\n") + "\n").into_bytes()
}

#[test]
fn the_pipeline_reads_as_one_thread_does_whatever_the_thread_count() {
    let bytes = big(None);
    assert!(
        bytes.len() > 3 * jsonl::BLOCK,
        "{} bytes: several blocks",
        bytes.len()
    );
    let one = sequential(&bytes, false);
    assert_eq!(one.as_ref().map(|(_, r)| r.len()), Ok(12_000));
    for threads in [1, 2, 3, 8] {
        assert_eq!(pipeline(&bytes, threads), one, "{threads} threads");
    }
    // The stream's cut, and blocks shorter than a line (each grows to hold its line).
    let tiny = jsonl::Blocks {
        size: 100,
        in_flight: 1,
    };
    for cut in [jsonl::Blocks::STREAM, tiny] {
        for threads in [1, 2, 3] {
            assert_eq!(pipeline_in(&bytes, threads, cut), one, "{cut:?}, {threads}");
        }
    }
    // The first error in line order wins, wherever the blocks fall.
    let late = (11_000, "\"colour\":1,\"agent\"");
    let early = (5_000, "\"agent\":\"x\",\"agent\"");
    for defects in [vec![late], vec![early], vec![early, late]] {
        let mut bytes = big(Some(defects[0]));
        if let Some(&second) = defects.get(1) {
            let more = big(Some(second));
            let cut = bytes.len() / 2;
            bytes.truncate(cut);
            bytes.extend_from_slice(&more[cut..]);
        }
        let want = sequential(&bytes, true);
        assert!(want.is_err());
        for threads in [1, 2, 3] {
            assert_eq!(
                pipeline(&bytes, threads),
                want,
                "{threads} threads, {defects:?}"
            );
            assert_eq!(
                pipeline_in(&bytes, threads, jsonl::Blocks::STREAM),
                want,
                "stream blocks, {threads} threads, {defects:?}"
            );
        }
    }
}

/// Values too long to be their own key (interned by the literal merger, their keys renamed
/// to its ids) and short ones, mixed in one history, read by names as the spec form reads
/// them, on every thread count and cut; and in a line the scanner declines (whitespace).
#[test]
fn long_and_short_values_read_the_same_through_a_literal_merger() {
    let text = String::from_utf8(big(None)).expect("utf-8");
    let long = text
        .replace("\"v3\"", "\"a value of more than fifteen bytes\"")
        .replace("\"v1\"", "\"fifteen bytes!!\"")
        .replace("\"v2\"", "\"sixteen bytes!!!\"");
    let mut lines: Vec<&str> = long.lines().collect();
    let spaced = lines[7000].replace(',', ", ");
    lines[7000] = &spaced;
    let bytes = (lines.join("\n") + "\n").into_bytes();
    let spec = sequential(&bytes, true);
    assert!(spec.is_ok());
    for threads in [1, 2, 3] {
        for cut in [jsonl::Blocks::FILE, jsonl::Blocks::STREAM] {
            let literal = pipeline_literal(&bytes, threads, cut);
            assert_eq!(literal, named(&spec), "{cut:?}, {threads} threads");
        }
    }
    assert_eq!(blocks_literal(&bytes, &[1000, 500_000]), named(&spec));
}

/// A consumer that stops early stops the whole pipeline: the call returns (no thread is left
/// waiting on another), with the records of the blocks it took, whichever form runs it.
#[test]
fn breaking_early_returns_with_what_was_taken() {
    let bytes = big(None);
    let small = jsonl::Blocks {
        size: 4096,
        in_flight: 1,
    };
    // Continue until the `stop`-th call, then break.
    let until = |stop: usize, calls: &mut usize| {
        *calls += 1;
        match *calls == stop {
            true => ControlFlow::Break(()),
            false => ControlFlow::Continue(()),
        }
    };
    for threads in [1, 2, 3] {
        for stop in [1, 3] {
            let (mut taken, mut calls) = (0, 0);
            let names =
                jsonl::for_each_block_apart(&bytes[..], "f.jsonl", threads, small, None, |r| {
                    taken += r.len();
                    until(stop, &mut calls)
                })
                .expect("a clean history");
            assert_eq!(calls, stop, "{threads} threads");
            assert!(taken > 0 && taken < 12_000, "{taken} records taken");
            assert!(!names.agents.is_empty());
            let mut calls = 0;
            jsonl::for_each_block_in(&bytes[..], "f.jsonl", threads, small, |_, _| {
                until(stop, &mut calls)
            })
            .expect("a clean history");
            assert_eq!(calls, stop, "{threads} threads, inline");
        }
    }
}
