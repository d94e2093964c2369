//! A headless Chromium driven over the Chrome DevTools Protocol: launch it, open a page,
//! evaluate script, click and press keys as a user would (`Input.dispatch*`), take
//! screenshots, and collect every console error and uncaught exception the page raised.
//!
//! One websocket to the browser, with the page's target attached in flat mode (each command
//! carries the page's `sessionId`). Chromium picks a free port itself (`--remote-debugging-
//! port=0`) and writes it to `DevToolsActivePort` in its profile folder.

use crate::tools::Tool;
use serde_json::{json, Value as Json};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The browser, which the Rust toolchain does not bring; `AGENTSIM_CHROMIUM` names another.
pub const CHROMIUM: Tool = Tool {
    name: "Chromium",
    candidates: &[
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ],
    env: Some("AGENTSIM_CHROMIUM"),
    install: "apt-get install chromium",
};

/// A running headless browser with one page attached.
pub struct Browser {
    child: Child,
    profile: PathBuf,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    /// Console errors and exceptions seen since the last [`Browser::take_errors`].
    errors: Vec<String>,
}

impl Browser {
    /// Starts `chromium` with a fresh profile under `scratch` and attaches to a blank page.
    pub fn launch(chromium: &Path, scratch: &Path) -> Browser {
        let profile = scratch.join(format!("chromium-profile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).expect("profile folder");
        let child = Command::new(chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--hide-scrollbars",
                "--window-size=1400,900",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let url = devtools_url(&profile);
        let (ws, _) = tungstenite::connect(url.as_str()).expect("connect to the DevTools socket");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60))).ok();
        }
        let mut b = Browser {
            child,
            profile,
            ws,
            session: String::new(),
            next_id: 0,
            errors: Vec::new(),
        };
        let target = b.call("Target.createTarget", json!({ "url": "about:blank" }));
        let id = target["targetId"].as_str().expect("targetId").to_owned();
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": id, "flatten": true }),
        );
        b.session = attached["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_owned();
        for domain in ["Runtime.enable", "Page.enable", "Log.enable"] {
            b.call(domain, json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
        );
        b
    }

    /// Sends one command (to the page once attached) and returns its result; events that
    /// arrive meanwhile are scanned for errors.
    pub fn call(&mut self, method: &str, params: Json) -> Json {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send a DevTools command");
        loop {
            let m = self.ws.read().expect("read from the DevTools socket");
            let Message::Text(text) = m else { continue };
            let v: Json = serde_json::from_str(text.as_str()).expect("DevTools sends JSON");
            if v["id"].as_u64() == Some(id) {
                assert!(v.get("error").is_none(), "{method} failed: {}", v["error"]);
                return v["result"].clone();
            }
            self.event(&v);
        }
    }

    fn event(&mut self, v: &Json) {
        let p = &v["params"];
        match v["method"].as_str() {
            Some("Runtime.exceptionThrown") => {
                let d = &p["exceptionDetails"];
                let what = d["exception"]["description"].as_str().unwrap_or("");
                self.errors.push(format!("exception: {} {what}", d["text"]));
            }
            Some("Runtime.consoleAPICalled")
                if matches!(p["type"].as_str(), Some("error" | "assert")) =>
            {
                self.errors
                    .push(format!("console.{}: {}", p["type"], p["args"]));
            }
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => {
                self.errors.push(format!("log: {}", p["entry"]["text"]));
            }
            _ => {}
        }
    }

    /// Loads `file` and waits until the page's script has finished (`body[data-ready]`).
    pub fn open(&mut self, file: &Path) {
        let url = format!(
            "file://{}",
            file.canonicalize().expect("page path").display()
        );
        self.call("Page.navigate", json!({ "url": url }));
        let start = Instant::now();
        while self.eval("document.body && document.body.dataset.ready === '1'") != json!(true) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{}: the page's script did not finish in 30 s; errors: {:?}",
                file.display(),
                self.errors
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The value of a script expression.
    pub fn eval(&mut self, expr: &str) -> Json {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("`{expr}` threw: {e}");
        }
        r["result"]["value"].clone()
    }

    /// A real mouse click at the centre of the first element `selector` matches.
    pub fn click(&mut self, selector: &str) {
        let expr = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
             e.scrollIntoView({{block: 'center', inline: 'center'}}); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            sel = json!(selector)
        );
        let at = self.eval(&expr);
        let (x, y) = match at.as_array().map(Vec::as_slice) {
            Some([x, y]) => (x.as_f64().unwrap(), y.as_f64().unwrap()),
            _ => panic!("no element matches `{selector}`"),
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }

    /// A key press as the keyboard sends it (`key` as the DOM names it: `j`, `End`).
    pub fn press(&mut self, key: &str) {
        let text = if key.chars().count() == 1 { key } else { "" };
        for kind in ["keyDown", "keyUp"] {
            let kind = if kind == "keyDown" && text.is_empty() {
                "rawKeyDown"
            } else {
                kind
            };
            self.call(
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": key, "text": if kind == "keyUp" { "" } else { text } }),
            );
        }
    }

    /// A PNG of the viewport, written to `out`.
    pub fn screenshot(&mut self, out: &Path) {
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let bytes = base64(r["data"].as_str().expect("screenshot data"));
        assert!(bytes.starts_with(b"\x89PNG"), "a screenshot is a PNG");
        std::fs::write(out, bytes).expect("write the screenshot");
    }

    /// The errors seen so far (after letting pending events arrive), and forgets them.
    pub fn take_errors(&mut self) -> Vec<String> {
        self.eval("1");
        std::mem::take(&mut self.errors)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// The browser's DevTools websocket URL, once Chromium has written it.
fn devtools_url(profile: &Path) -> String {
    let file = profile.join("DevToolsActivePort");
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                return format!("ws://127.0.0.1:{port}{path}");
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "Chromium did not open its DevTools port in 30 s ({} not written)",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Standard base64 (what `Page.captureScreenshot` returns) to bytes.
fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

#[test]
fn base64_decodes() {
    assert_eq!(base64("aGVsbG8="), b"hello");
    assert_eq!(base64("aGk="), b"hi");
    assert_eq!(base64("YWJj"), b"abc");
}
