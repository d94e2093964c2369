//! The MCP JSON-RPC log's lines: parsed and checked, every error at file:line with the field.

use crate::error::IngestError;
use serde_json::{Map, Value as Json};

/// Whether the client sent or received the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Send,
    Recv,
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// 1-based line number in the file.
    pub line: usize,
    /// Nanoseconds (any clock shared by the clients of a log).
    pub t: u64,
    pub client: String,
    pub server: String,
    pub session: Option<String>,
    pub dir: Dir,
    /// The JSON-RPC message (an object).
    pub message: Map<String, Json>,
}

impl Line {
    /// The message's `method`, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        self.message.get("method").and_then(Json::as_str)
    }

    /// The message's `id`, as its JSON text (`1` and `"1"` stay apart, as JSON-RPC has it).
    pub fn id(&self) -> Option<String> {
        self.message
            .get("id")
            .filter(|v| !v.is_null())
            .map(Json::to_string)
    }
}

/// Every line of the log, in file order (blank lines skipped).
pub fn parse_log(text: &str, file: &str) -> Result<Vec<Line>, IngestError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        out.push(line(raw, i + 1, file)?);
    }
    Ok(out)
}

fn line(raw: &str, n: usize, file: &str) -> Result<Line, IngestError> {
    let err = |path: &str, message: String| IngestError::Log {
        file: file.to_owned(),
        line: n,
        path: path.to_owned(),
        message,
    };
    let v: Json =
        serde_json::from_str(raw).map_err(|e| err("(line)", format!("invalid JSON: {e}")))?;
    let Json::Object(mut o) = v else {
        return Err(err("(line)", "expected an object".to_owned()));
    };
    let text = |o: &Map<String, Json>, key: &str| -> Result<String, IngestError> {
        match o.get(key) {
            Some(Json::String(s)) => Ok(s.clone()),
            Some(_) => Err(err(key, "expected a string".to_owned())),
            None => Err(err(key, "missing".to_owned())),
        }
    };
    let t = match o.get("t") {
        Some(Json::Number(x)) => x.as_u64(),
        Some(Json::String(s)) => s.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| {
        err(
            "t",
            "expected an unsigned 64-bit integer (nanoseconds)".to_owned(),
        )
    })?;
    let client = text(&o, "client")?;
    let server = text(&o, "server")?;
    let session = match o.get("session") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(_) => return Err(err("session", "expected a string or null".to_owned())),
    };
    let dir = match text(&o, "dir")?.as_str() {
        "send" => Dir::Send,
        "recv" => Dir::Recv,
        other => {
            return Err(err(
                "dir",
                format!("expected \"send\" or \"recv\", found {other:?}"),
            ))
        }
    };
    let message = match o.remove("message") {
        Some(Json::Object(m)) => m,
        Some(_) => {
            return Err(err(
                "message",
                "expected a JSON-RPC message object".to_owned(),
            ))
        }
        None => return Err(err("message", "missing".to_owned())),
    };
    if message.get("jsonrpc").and_then(Json::as_str) != Some("2.0") {
        return Err(err("message.jsonrpc", "expected \"2.0\"".to_owned()));
    }
    if let Some(m) = message.get("method") {
        if !m.is_string() {
            return Err(err("message.method", "expected a string".to_owned()));
        }
    } else if !message.contains_key("id") {
        return Err(err(
            "message",
            "neither a request or notification (`method`) nor a response (`id`)".to_owned(),
        ));
    }
    Ok(Line {
        line: n,
        t,
        client,
        server,
        session,
        dir,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_file_line_and_field() {
        let good = concat!(
            r#"{"t":1,"client":"c","server":"s","dir":"send","#,
            r#""message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#
        );
        let l = parse_log(&format!("{good}\n\n{good}\n"), "m.jsonl").unwrap();
        assert_eq!(
            (l.len(), l[1].line, l[0].id().as_deref()),
            (2, 3, Some("1"))
        );
        let bad = good.replace("\"send\"", "\"sent\"");
        let e = parse_log(&format!("{good}\n{bad}"), "m.jsonl").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.jsonl:2: dir: expected \"send\" or \"recv\", found \"sent\""
        );
        let e = parse_log("{\"t\":-1}", "m.jsonl").unwrap_err().to_string();
        assert!(e.starts_with("m.jsonl:1: t: expected an unsigned"), "{e}");
        let e = parse_log("{", "m.jsonl").unwrap_err().to_string();
        assert!(e.starts_with("m.jsonl:1: (line): invalid JSON"), "{e}");
        let no_rpc = good.replace("\"jsonrpc\":\"2.0\",", "");
        let e = parse_log(&no_rpc, "m.jsonl").unwrap_err().to_string();
        assert_eq!(e, "m.jsonl:1: message.jsonrpc: expected \"2.0\"");
    }
}
