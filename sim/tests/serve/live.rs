use crate::util::{agentsim, root};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
use prost::Message as _;
use rand_chacha::rand_core::{Rng as _, SeedableRng as _};
use serde_json::{json, Value as Json};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `agentsim serve`, its addresses and what it printed on stderr.
struct Server {
    child: Child,
    http: String,
    grpc: Option<String>,
    stderr: Arc<Mutex<String>>,
    dir: PathBuf,
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

impl Server {
    fn start(name: &str, extra: &[&str]) -> Server {
        let dir = scratch(name);
        let report = dir.join("report.json");
        let alerts = dir.join("alerts.jsonl");
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentsim"))
            .current_dir(root())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(match extra.contains(&"--grpc") {
                true => &[][..],
                false => &["--grpc", "127.0.0.1:0"][..],
            })
            .arg("--report")
            .arg(&report)
            .arg("--alerts")
            .arg(&alerts)
            .args(["--quiet-ms", "50"])
            // A trace is mapped for good 5 s after its last span (not the default second),
            // so that a loaded machine's slow posts of one trace's batches are not late.
            .args(match extra.contains(&"--seal-ms") {
                true => &[][..],
                false => &["--seal-ms", "5000"][..],
            })
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start agentsim serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        lines.read_line(&mut first).unwrap();
        let prefix = "agentsim serve: listening on http://";
        let rest = first
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("unexpected first line: {first}"));
        let (http, grpc) = match rest.split_once(" (OTLP/HTTP), ") {
            Some((h, g)) => (
                h.to_owned(),
                Some(g.trim_end().trim_end_matches(" (OTLP/gRPC)").to_owned()),
            ),
            None => (
                rest.trim_end().trim_end_matches(" (OTLP/HTTP)").to_owned(),
                None,
            ),
        };
        let stderr = Arc::new(Mutex::new(first.clone()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = lines.read_to_string(&mut rest);
            sink.lock().unwrap().push_str(&rest);
        });
        Server {
            child,
            http,
            grpc,
            stderr,
            dir,
        }
    }

    fn post(&self, content_type: &str, gzip: bool, body: &[u8]) -> Resp {
        let body = match gzip {
            true => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(body).unwrap();
                e.finish().unwrap()
            }
            false => body.to_vec(),
        };
        let mut head = format!(
            "POST /v1/traces HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\nConnection: close\r\n",
            self.http,
            body.len()
        );
        if gzip {
            head.push_str("Content-Encoding: gzip\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&body);
        http(&self.http, &bytes)
    }

    fn get(&self, path: &str) -> Resp {
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.http
        );
        http(&self.http, req.as_bytes())
    }

    /// SIGTERM, then the exit status and the report.
    fn stop(mut self) -> (i32, String, String) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(killed.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(50));
        let report = std::fs::read_to_string(self.dir.join("report.json")).unwrap_or_default();
        let stderr = self.stderr.lock().unwrap().clone();
        (status.code().unwrap_or(-1), report, stderr)
    }

    fn alerts(&self) -> String {
        std::fs::read_to_string(self.dir.join("alerts.jsonl")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response: status, headers (lowercase names), body.
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(k, _)| k == name);
        found.map(|(_, v)| v.as_str())
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn http(addr: &str, request: &[u8]) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v == "chunked")
    {
        body = unchunk(&body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(nl) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let n = usize::from_str_radix(std::str::from_utf8(&b[..nl]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[nl + 2..nl + 2 + n]);
        b = &b[nl + 4 + n..];
    }
}

/// Each span of an export (one document or one per line) as a one-span document with its
/// resource and scope.
fn spans_of(file: &Path) -> Vec<Json> {
    let text = std::fs::read_to_string(file).unwrap();
    let docs = serde_json::Deserializer::from_str(&text).into_iter::<Json>();
    let mut out = Vec::new();
    for doc in docs {
        let doc = doc.unwrap();
        for rs in doc["resourceSpans"].as_array().into_iter().flatten() {
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for span in ss["spans"].as_array().into_iter().flatten() {
                    let mut one = json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]});
                    if let Some(r) = rs.get("resource") {
                        one["resourceSpans"][0]["resource"] = r.clone();
                    }
                    if let Some(s) = ss.get("scope") {
                        one["resourceSpans"][0]["scopeSpans"][0]["scope"] = s.clone();
                    }
                    out.push(one);
                }
            }
        }
    }
    out
}

/// `file` with every trace and span id that is not OTLP's (16 and 8 bytes of hex) replaced by
/// one that is, derived from it (some fixtures name ids `t`, `a`), one document per line in
/// the scratch folder `dir`.
fn with_otlp_ids(file: &str, dir: &Path) -> PathBuf {
    fn fix(v: &mut Json, key: &str, bytes: usize) {
        let Some(s) = v.get(key).and_then(Json::as_str) else {
            return;
        };
        let hex = s.len() == 2 * bytes && s.bytes().all(|c| c.is_ascii_hexdigit());
        if s.is_empty() || hex {
            return;
        }
        let mut h: u64 = 0xcbf29ce484222325;
        for b in s.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        v[key] = json!(format!("{h:0width$x}", width = 2 * bytes));
    }
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let mut out = String::new();
    for doc in serde_json::Deserializer::from_str(&text).into_iter::<Json>() {
        let mut doc = doc.unwrap();
        for rs in doc["resourceSpans"].as_array_mut().into_iter().flatten() {
            for ss in rs["scopeSpans"].as_array_mut().into_iter().flatten() {
                for span in ss["spans"].as_array_mut().into_iter().flatten() {
                    fix(span, "traceId", 16);
                    fix(span, "spanId", 8);
                    fix(span, "parentSpanId", 8);
                }
            }
        }
        out.push_str(&doc.to_string());
        out.push('\n');
    }
    let name = Path::new(file).file_name().unwrap().to_str().unwrap();
    let to = dir.join(name);
    std::fs::write(&to, out).unwrap();
    to
}

/// Batches of 1 to 3 spans, shuffled, about a third of them sent twice.
fn batches(spans: &[Json], seed: u64) -> Vec<Json> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out: Vec<Json> = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        let n = 1 + (rng.next_u32() as usize % 3);
        let mut doc = json!({"resourceSpans": []});
        for s in &spans[i..(i + n).min(spans.len())] {
            let rs = s["resourceSpans"][0].clone();
            doc["resourceSpans"].as_array_mut().unwrap().push(rs);
        }
        out.push(doc);
        i += n;
    }
    let repeats: Vec<Json> = out
        .iter()
        .filter(|_| rng.next_u32() % 3 == 0)
        .cloned()
        .collect();
    out.extend(repeats);
    for k in (1..out.len()).rev() {
        let j = rng.next_u32() as usize % (k + 1);
        out.swap(k, j);
    }
    out
}

fn protobuf(doc: &Json) -> Vec<u8> {
    agentsim_serve_request(doc).encode_to_vec()
}

fn agentsim_serve_request(
    doc: &Json,
) -> opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
    agentsim_serve::convert::request_of_json(doc)
}

/// `detect FILE --from otel --json` with the file's name written as serve names its input.
fn detect_json(file: &str) -> String {
    let out = agentsim(&["detect", file, "--from", "otel", "--json"]);
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "detect {file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.replace(file, "<otlp>")
}

/// The stored exports whose spans the tests send: GenAI scenarios, OpenInference fixtures,
/// and two framework exports (ADK, pydantic-ai).
const EXPORTS: [&str; 9] = [
    "scenarios/traces/otel/memory_lost_update.json",
    "scenarios/traces/otel/phantom_tool.json",
    "scenarios/traces/otel/tool_reordering.json",
    "scenarios/traces/otel/memory_occ.json",
    "integrations/ingest/tests/fixtures/oi_ran.json",
    "integrations/ingest/tests/fixtures/oi_refused_span.json",
    "integrations/ingest/tests/fixtures/genai_ran.json",
    "integrations/ingest/tests/data/adk_2.15.0_a6.jsonl",
    "integrations/ingest/tests/data/pydantic_ai_1.0.1_a6.jsonl",
];

#[test]
fn the_report_is_detects_on_the_same_spans_however_they_arrive() {
    let dir = scratch("exports");
    for (k, file) in EXPORTS.iter().enumerate() {
        let server = Server::start(&format!("same{k}"), &[]);
        let file = &with_otlp_ids(file, &dir);
        let spans = spans_of(file);
        let file = file.to_str().unwrap();
        assert!(!spans.is_empty(), "{file}");
        for (i, b) in batches(&spans, k as u64).iter().enumerate() {
            let r = match i % 4 {
                0 => server.post("application/json", false, b.to_string().as_bytes()),
                1 => server.post("application/x-protobuf", false, &protobuf(b)),
                2 => server.post("application/json", true, b.to_string().as_bytes()),
                _ => server.post("application/x-protobuf", true, &protobuf(b)),
            };
            assert_eq!(r.status, 200, "{file} batch {i}: {}", r.text());
        }
        let (code, report, stderr) = server.stop();
        assert_eq!(code, 0, "{file}: {stderr}");
        assert_eq!(report, detect_json(file), "{file}");
        assert!(report.contains("\"verdicts\""), "{file}");
    }
}

/// Traces mapped for good as they complete (all spans in one request, then quiet past
/// `--seal-ms`) give `detect`'s report too: the detection then settles the mapped steps alone.
#[test]
fn traces_mapped_as_they_complete_give_detects_report() {
    let dir = scratch("sealed");
    for (k, file) in EXPORTS.iter().enumerate() {
        let server = Server::start(&format!("sealed{k}"), &["--seal-ms", "100"]);
        let file = &with_otlp_ids(file, &dir);
        let spans = spans_of(file);
        let file = file.to_str().unwrap();
        let mut all = json!({"resourceSpans": []});
        for s in &spans {
            let rs = s["resourceSpans"][0].clone();
            all["resourceSpans"].as_array_mut().unwrap().push(rs);
        }
        let r = server.post("application/x-protobuf", false, &protobuf(&all));
        assert_eq!(r.status, 200, "{file}: {}", r.text());
        // Every span kept and, once a GenAI span has come (until then the export may be
        // OpenInference's, read whole), none waiting; a trace without a root waits ten times
        // as long.
        let kept = format!("agentsim_spans_kept {}", spans.len());
        let genai = spans.iter().any(|s| {
            let t = s.to_string();
            t.contains("\"gen_ai.operation.name\"") && !t.contains("openinference.span.kind")
        });
        match genai {
            true => wait_for_metrics(&server, &[&kept, "agentsim_spans_pending 0"]),
            false => wait_for_metrics(&server, &[&kept]),
        }
        let (code, report, stderr) = server.stop();
        assert_eq!(code, 0, "{file}: {stderr}");
        assert_eq!(report, detect_json(file), "{file}");
    }
}

#[test]
fn alerts_name_each_witness_once_as_it_is_found() {
    let file = "scenarios/traces/otel/memory_lost_update.json";
    let server = Server::start("alerts", &[]);
    let spans = spans_of(&root().join(file));
    for b in batches(&spans, 7) {
        let r = server.post("application/json", false, b.to_string().as_bytes());
        assert_eq!(r.status, 200);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.alerts().contains("\"A1\"") {
        assert!(Instant::now() < deadline, "no A1 alert");
        std::thread::sleep(Duration::from_millis(20));
    }
    let metrics = server.get("/metrics").text();
    assert!(
        metrics.contains("agentsim_verdict{anomaly=\"A1\",verdict=\"violated\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("agentsim_witnesses{anomaly=\"A1\"} 1"),
        "{metrics}"
    );
    let alerts = server.alerts();
    let (code, report, _) = server.stop();
    assert_eq!(code, 0);
    let lines: Vec<Json> = alerts
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{alerts}");
    let a = &lines[0];
    assert_eq!(a["anomaly"], "A1");
    assert_eq!(a["agents"], json!(["memory_updater", "memory_editor"]));
    let report: Json = serde_json::from_str(&report).unwrap();
    assert_eq!(a["witness"], report["anomalies"]["A1"][0]);
    // The records it rests on, each with its trace and the spans it was mapped from: the
    // updater's and the editor's search, chat and update spans (not the updater's HTTP span
    // below its chat, nor the agent spans).
    let rests: Vec<Json> = a["rests_on"].as_array().unwrap().clone();
    assert_eq!(rests.len(), a["records"].as_array().unwrap().len(), "{a}");
    for (r, n) in rests.iter().zip(a["records"].as_array().unwrap()) {
        assert_eq!(&r["record"], n, "{a}");
    }
    let by_trace: Vec<(String, Vec<String>)> = rests
        .iter()
        .map(|r| {
            let t = r["trace"].as_str().unwrap().to_owned();
            let spans = r["spans"].as_array().unwrap().iter();
            (t, spans.map(|s| s.as_str().unwrap().to_owned()).collect())
        })
        .collect();
    let want = |t: u8, update: u8| -> (String, Vec<String>) {
        let trace = format!("{:032x}", t);
        let spans = [2, 3, update].map(|k| format!("{t:08x}{k:08x}")).to_vec();
        (trace, spans)
    };
    let (mut got, mut expected) = (by_trace.clone(), vec![want(1, 5), want(2, 4)]);
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "{a}");
    let traces: Vec<String> = (a["traces"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let mut seen: Vec<String> = Vec::new();
    for (t, _) in &by_trace {
        if !seen.contains(t) {
            seen.push(t.clone());
        }
    }
    assert_eq!(traces, seen, "{a}");
}

/// Waits (up to a minute, on a loaded machine) until `/metrics` has every line of `want`.
fn wait_for_metrics(server: &Server, want: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut m = server.get("/metrics").text();
    while !want.iter().all(|w| m.contains(w)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        m = server.get("/metrics").text();
    }
    assert!(want.iter().all(|w| m.contains(w)), "{want:?}\n{m}");
}

/// A span that comes after its trace was detected over, but before the trace was mapped for
/// good, joins it: the trace is mapped again with it and the report is `detect`'s.
#[test]
fn a_late_span_of_an_open_trace_remaps_its_trace() {
    let file = "scenarios/traces/otel/memory_lost_update.json";
    let server = Server::start("remap", &["--seal-ms", "60000"]);
    let spans = spans_of(&root().join(file));
    // The first trace's chat span (0000000100000003) is held back.
    let held = spans
        .iter()
        .position(|s| s.to_string().contains("\"0000000100000003\""))
        .unwrap();
    for (i, s) in spans.iter().enumerate() {
        if i != held {
            let r = server.post("application/json", false, s.to_string().as_bytes());
            assert_eq!(r.status, 200);
        }
    }
    let before = format!("agentsim_spans_detected {}", spans.len() - 1);
    wait_for_metrics(&server, &[&before]);
    let r = server.post(
        "application/json",
        false,
        spans[held].to_string().as_bytes(),
    );
    assert_eq!(r.status, 200);
    let after = format!("agentsim_spans_detected {}", spans.len());
    wait_for_metrics(&server, &[&after, "agentsim_spans_late_total 0"]);
    let (code, report, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report, detect_json(file));
}

/// A span of a trace already mapped for good (its root arrived and then nothing for
/// `--seal-ms`) is late: counted, and no verdict is then *holds* or *violated*.
#[test]
fn a_span_after_its_trace_was_mapped_is_late_and_every_verdict_cannot_tell() {
    let file = "scenarios/traces/otel/memory_lost_update.json";
    let server = Server::start("late", &["--seal-ms", "100"]);
    let spans = spans_of(&root().join(file));
    let held = spans
        .iter()
        .position(|s| s.to_string().contains("\"0000000100000003\""))
        .unwrap();
    for (i, s) in spans.iter().enumerate() {
        if i != held {
            let r = server.post("application/json", false, s.to_string().as_bytes());
            assert_eq!(r.status, 200);
        }
    }
    // Both traces' roots are in: both are mapped for good after 100 ms.
    let kept = format!("agentsim_spans_kept {}", spans.len() - 1);
    wait_for_metrics(&server, &[&kept, "agentsim_spans_pending 0"]);
    let r = server.post(
        "application/json",
        false,
        spans[held].to_string().as_bytes(),
    );
    assert_eq!(r.status, 200);
    wait_for_metrics(&server, &["agentsim_spans_late_total 1"]);
    let (code, report, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    let v: Json = serde_json::from_str(&report).unwrap();
    for (a, verdict) in v["verdicts"].as_object().unwrap() {
        assert_eq!(verdict["verdict"], "cannot_tell", "{a}: {verdict}");
    }
    let a1 = v["verdicts"]["A1"]["reason"]["detail"].as_str().unwrap();
    assert!(
        a1.starts_with("1 span arrived after their trace was mapped"),
        "{a1}"
    );
}

#[test]
fn bad_requests_get_the_otlp_answers() {
    let server = Server::start("bad", &["--max-body", "2000"]);
    assert_eq!(server.get("/healthz").status, 200);
    let r = server.post("application/json", false, b"{\"resourceSpans\": [");
    assert_eq!(r.status, 400);
    assert!(r.text().contains("not JSON"), "{}", r.text());
    let r = server.post("application/x-protobuf", false, b"\xff\xff\xff");
    assert_eq!(r.status, 400);
    let r = server.post("application/json", true, b"not gzip at all");
    assert_eq!(r.status, 400, "a gzip body that does not inflate");
    let r = server.post("text/plain", false, b"{}");
    assert_eq!(r.status, 415);
    let big = format!("{{\"resourceSpans\":[],\"pad\":\"{}\"}}", "x".repeat(3000));
    assert_eq!(
        server
            .post("application/json", false, big.as_bytes())
            .status,
        413
    );
    // Past the limit once inflated, though small on the wire.
    assert_eq!(
        server.post("application/json", true, big.as_bytes()).status,
        413
    );
    // A span without a valid id is rejected, the others kept: partial success.
    let body = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "0000000000000000000000000000000a", "spanId": "000000000000000b", "name": "x",
         "startTimeUnixNano": "1", "endTimeUnixNano": "2"},
        {"traceId": "00000000000000000000000000000000", "spanId": "000000000000000c", "name": "y"}]}]}]});
    let r = server.post("application/json", false, body.to_string().as_bytes());
    assert_eq!(r.status, 200);
    let v: Json = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["partialSuccess"]["rejectedSpans"], "1");
    assert!(v["partialSuccess"]["errorMessage"]
        .as_str()
        .unwrap()
        .contains("traceId"));
    let r = server.post("application/x-protobuf", false, &protobuf(&body));
    assert_eq!(r.status, 200);
    let resp =
        opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse::decode(
            &r.body[..],
        )
        .unwrap();
    assert_eq!(resp.partial_success.unwrap().rejected_spans, 1);
    let metrics = server.get("/metrics").text();
    assert!(
        metrics.contains("agentsim_spans_rejected_total 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("agentsim_spans_received_total 4"),
        "{metrics}"
    );
    assert_eq!(server.get("/nowhere").status, 404);
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("http-equiv=\"refresh\""));
    let (code, _, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_full_queue_answers_429_and_the_retry_is_kept() {
    let dir = scratch("pause");
    let hold = dir.join("hold");
    std::fs::write(&hold, "").unwrap();
    let file = "scenarios/traces/otel/memory_lost_update.json";
    let server = Server::start(
        "full",
        &["--queue", "1", "--pause-while", hold.to_str().unwrap()],
    );
    let spans = spans_of(&root().join(file));
    let (first, rest) = spans.split_first().unwrap();
    assert_eq!(
        server
            .post("application/json", false, first.to_string().as_bytes())
            .status,
        200
    );
    let mut doc = json!({"resourceSpans": []});
    for s in rest {
        doc["resourceSpans"]
            .as_array_mut()
            .unwrap()
            .push(s["resourceSpans"][0].clone());
    }
    let body = protobuf(&doc);
    let r = server.post("application/x-protobuf", false, &body);
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("1"));
    let m = server.get("/metrics").text();
    assert!(m.contains("agentsim_queue_depth 1"), "{m}");
    assert!(m.contains("agentsim_batches_refused_total 1"), "{m}");
    std::fs::remove_file(&hold).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = server.post("application/x-protobuf", false, &body);
        if r.status == 200 {
            break;
        }
        assert_eq!(r.status, 429);
        assert!(Instant::now() < deadline, "still refused");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, report, _) = server.stop();
    assert_eq!(code, 0);
    assert_eq!(report, detect_json(file));
}

#[test]
fn spans_past_the_window_make_every_verdict_cannot_tell() {
    let file = "scenarios/traces/otel/memory_lost_update.json";
    let server = Server::start("window", &["--max-pending-spans", "4"]);
    let spans = spans_of(&root().join(file));
    assert!(spans.len() > 4);
    for s in &spans {
        assert_eq!(
            server
                .post("application/json", false, s.to_string().as_bytes())
                .status,
            200
        );
    }
    // The collector takes the queued batches on its own thread: wait (up to a minute, on a
    // loaded machine) until it has counted every span, kept or dropped.
    let dropped = spans.len() - 4;
    let want = format!("agentsim_spans_dropped_total {dropped}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut m = server.get("/metrics").text();
    while !m.contains(&want) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        m = server.get("/metrics").text();
    }
    assert!(m.contains(&want), "{m}");
    let (code, report, _) = server.stop();
    assert_eq!(code, 0);
    let v: Json = serde_json::from_str(&report).unwrap();
    for (a, verdict) in v["verdicts"].as_object().unwrap() {
        assert_eq!(verdict["verdict"], "cannot_tell", "{a}: {verdict}");
    }
    let a1 = v["verdicts"]["A1"]["reason"]["detail"].as_str().unwrap();
    assert!(a1.starts_with(&format!("{dropped} spans dropped")), "{a1}");
    assert_eq!(v["level_range"]["low"], 0);
}

#[test]
fn sigterm_mid_stream_reports_what_was_received() {
    let file = "integrations/ingest/tests/data/pydantic_ai_1.0.1_a6.jsonl";
    let server = Server::start("midstream", &[]);
    let spans = spans_of(&root().join(file));
    let half = &spans[..spans.len() / 2];
    let dir = scratch("midstream-file");
    let mut text = String::new();
    for s in half {
        text.push_str(&s.to_string());
        text.push('\n');
        assert_eq!(
            server
                .post("application/json", false, s.to_string().as_bytes())
                .status,
            200
        );
    }
    let (code, report, _) = server.stop();
    assert_eq!(code, 0);
    let sent = dir.join("half.jsonl");
    std::fs::write(&sent, text).unwrap();
    assert_eq!(report, detect_json(sent.to_str().unwrap()));
}

#[test]
fn grpc_export_through_tonic_gives_the_same_report() {
    let file = "scenarios/traces/otel/phantom_tool.json";
    let server = Server::start("grpc", &[]);
    let spans = spans_of(&root().join(file));
    let addr = format!("http://{}", server.grpc.clone().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut client = TraceServiceClient::connect(addr).await.unwrap();
        for b in batches(&spans, 3) {
            let req = agentsim_serve_request(&b);
            let resp = client.export(req).await.unwrap().into_inner();
            assert_eq!(resp.partial_success, None);
        }
    });
    let (code, report, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report, detect_json(file));
}

#[test]
fn nothing_received_is_cannot_tell_empty_input() {
    let server = Server::start("empty", &["--grpc", "off"]);
    assert!(server.grpc.is_none());
    let (code, report, stderr) = server.stop();
    assert_eq!(code, 0, "{stderr}");
    let v: Json = serde_json::from_str(&report).unwrap();
    for (a, verdict) in v["verdicts"].as_object().unwrap() {
        assert_eq!(verdict["reason"]["kind"], "empty_input", "{a}");
    }
}

#[test]
fn bad_flags_exit_2_before_binding() {
    let out = agentsim(&["serve", "--from", "langgraph"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("serve reads otel, genai or openinference")
    );
    let out = agentsim(&["serve", "--grpc", "nowhere"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Two instances behind a router that spreads spans by trace id, as a Collector's
/// load-balancing exporter does: the two traces of a stale read land apart. Each instance,
/// told it receives part of the spans (`--routed`), answers *cannot tell*; one not told would
/// answer *holds* on its half, which is why the flag exists.
#[test]
fn an_instance_given_part_of_the_spans_never_says_holds() {
    let file = "scenarios/traces/otel/memory_lost_update.json";
    let whole: Json = serde_json::from_str(&detect_json(file)).unwrap();
    assert_eq!(whole["verdicts"]["A1"]["verdict"], "violated");
    let spans = spans_of(&root().join(file));
    let trace = |s: &Json| {
        let id = s["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
            .as_str()
            .unwrap();
        u128::from_str_radix(id, 16).unwrap()
    };
    let traces: std::collections::BTreeSet<u128> = spans.iter().map(trace).collect();
    assert_eq!(traces.len(), 2, "the stale read spans two traces");
    for routed in [true, false] {
        let flag: &[&str] = if routed { &["--routed"] } else { &[] };
        let servers = [
            Server::start(&format!("route0{routed}"), flag),
            Server::start(&format!("route1{routed}"), flag),
        ];
        for s in &spans {
            // The router: by trace id, so each trace's spans stay together.
            let to = &servers[(trace(s) % 2) as usize];
            assert_eq!(
                to.post("application/json", false, s.to_string().as_bytes())
                    .status,
                200
            );
        }
        for server in servers {
            let (code, report, _) = server.stop();
            assert_eq!(code, 0);
            let v: Json = serde_json::from_str(&report).unwrap();
            let a1 = &v["verdicts"]["A1"];
            match routed {
                true => {
                    assert_eq!(a1["verdict"], "cannot_tell", "{a1}");
                    let why = a1["reason"]["detail"].as_str().unwrap();
                    assert!(why.contains("--routed"), "{why}");
                }
                // Half a stale read is a clean trace: the silent holds `--routed` prevents.
                false => assert_eq!(a1["verdict"], "holds", "{a1}"),
            }
        }
    }
}
