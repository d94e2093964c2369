//! The mapping file (`--tool-memory MAP.toml`): what the spans cannot say about an application.
//!
//! Agent Framework emits no memory spans: a team whose shared memory is a tool
//! (`read_profile`, `write_profile`) shows it only as `execute_tool` spans. The mapping file
//! says which tools read or write which cells, and how to name the cell from the call's
//! arguments; and which agents share one tool registry (so a retirement one agent's spans show
//! applies to the others). Example:
//!
//! ```toml
//! [[tool]]
//! name = "read_profile"
//! reads = "profile/{key}"      # the cell: `{key}` is the call's argument `key`
//!
//! [[tool]]
//! name = "write_profile"
//! writes = "profile/{key}"
//! value = "{value}"            # what it wrote (default: the call's arguments, as JSON)
//!
//! [[registry]]
//! agents = ["planner", "admin"] # these agents share one tool registry
//!
//! [invocations]
//! separate = ["support"]        # overlapping invocations of these agents are separate actors
//!
//! [attributes]                  # where this framework records a tool call (optional)
//! arguments = "myfw.tool.input" # the call's arguments, a JSON object (or one as a string)
//! result = "myfw.tool.output"   # what it returned
//! ```
//!
//! A framework that records a call's arguments and result in attributes of its own namespace
//! (not the GenAI or OpenInference ones) names them in `[attributes]`; a span that carries
//! them is read from them first, then from the conventions' own. Arguments are read through
//! the wrapping instrumentors write ([`unwrap_args`]: `{"args": [...], "kwargs": {...}}`).
//!
//! Invocations of one agent that overlap in time are read as separate actors (`name#2`), and an
//! A1 witness between two of them is an upper bound: the spans do not say whether they are
//! separate callers or one actor's work split in two. `[invocations] separate` names the agents
//! whose overlapping invocations the application knows to be separate callers (two requests
//! served by one agent instance), and their witnesses are then not lowered.
//!
//! Validated strictly: an unknown key, a tool named twice, a tool that neither reads nor
//! writes, an unclosed `{`, an agent in two registries — each is an error at `file:line`. A
//! mapping is a claim about the application the trace cannot check: a tool it leaves out is
//! not memory to the reader, and the report says which tools it used.
//!
//! Both span readers take it: the GenAI reader (`execute_tool` spans, arguments from
//! `gen_ai.tool.call.arguments`) and the OpenInference one (`TOOL` spans, arguments from
//! `input.value`). Each finds a call's tool name and arguments in its own attributes; what the
//! call did to memory ([`Mapping::access`], [`Mapping::cell`]) is decided here, once.

use crate::error::IngestError;
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// What one tool does to memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolMemory {
    /// The cell it reads, as a template over the call's arguments.
    pub reads: Option<Template>,
    /// The cell it writes.
    pub writes: Option<Template>,
    /// The value it writes (`None`: the call's arguments, canonical JSON).
    pub value: Option<Template>,
}

/// A cell name with `{argument}` placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub text: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Lit(String),
    Arg(String),
}

/// A parsed mapping file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    /// The file, as named on the command line (the report names it).
    pub file: String,
    pub tools: BTreeMap<String, ToolMemory>,
    /// Agent name → its declared registry group (the group's index, as `group<k>`).
    pub registry_groups: BTreeMap<String, String>,
    /// Agents whose overlapping invocations are separate callers (`[invocations] separate`).
    pub separate_invocations: std::collections::BTreeSet<String>,
    /// The attribute a tool call's arguments are in, when the framework's own.
    pub arguments: Option<String>,
    /// The attribute a tool call's result is in, when the framework's own.
    pub result: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    tool: Vec<Spanned<RawTool>>,
    #[serde(default)]
    registry: Vec<Spanned<RawRegistry>>,
    attributes: Option<Spanned<RawAttributes>>,
    invocations: Option<Spanned<RawInvocations>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInvocations {
    separate: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAttributes {
    arguments: Option<Spanned<String>>,
    result: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    name: Spanned<String>,
    reads: Option<Spanned<String>>,
    writes: Option<Spanned<String>>,
    value: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistry {
    agents: Vec<Spanned<String>>,
}

impl Template {
    /// Parses `text`; `Err` says what is wrong with it.
    pub fn parse(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find(['{', '}']) {
            if rest[open..].starts_with('}') {
                return Err(format!("`}}` without `{{` in {text:?}"));
            }
            if open > 0 {
                parts.push(Part::Lit(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| format!("unclosed `{{` in {text:?}"))?;
            let name = &after[..close];
            if name.is_empty() || name.contains('{') {
                return Err(format!("an empty or nested `{{…}}` in {text:?}"));
            }
            parts.push(Part::Arg(name.to_owned()));
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.to_owned()));
        }
        Ok(Template {
            text: text.to_owned(),
            parts,
        })
    }

    /// The text with each `{arg}` replaced by the argument (a string as is, anything else as
    /// JSON); `Err(arg)` names an argument the call did not pass. `{a.b}` is the field `b` of
    /// the object argument `a` when the call has no argument named `a.b`.
    pub fn fill(&self, args: &serde_json::Map<String, Json>) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Arg(a) => match lookup(args, a).as_deref() {
                    Some(Json::String(s)) => out.push_str(s),
                    Some(v) => out.push_str(&v.to_string()),
                    None => return Err(a.clone()),
                },
            }
        }
        Ok(out)
    }
}

/// The argument `name` of `args`, else the path `name` names through nested objects
/// (`user.id`), a JSON object written as a string read as the object.
fn lookup<'a>(
    args: &'a serde_json::Map<String, Json>,
    name: &str,
) -> Option<std::borrow::Cow<'a, Json>> {
    use std::borrow::Cow;
    if let Some(v) = args.get(name) {
        return Some(Cow::Borrowed(v));
    }
    let (head, rest) = name.split_once('.')?;
    let inner = match args.get(head)? {
        Json::Object(m) => m.clone(),
        Json::String(t) => match serde_json::from_str(t).ok()? {
            Json::Object(m) => m,
            _ => return None,
        },
        _ => return None,
    };
    lookup(&inner, rest).map(|v| Cow::Owned(v.into_owned()))
}

/// A call's arguments as the function received them, through the wrapping instrumentors
/// write: OpenInference's Python instrumentors record a call as `{"args": [...], "kwargs":
/// {...}}` (with flags of their own beside, such as `sanitize_inputs_outputs`), each of the
/// two possibly a JSON string. Such an object is read as its keyword arguments plus its
/// positional ones named by position (`{0}`, `{1}`, …); the instrumentor's flags are not
/// arguments. Any other object is the arguments as they are.
pub fn unwrap_args(
    args: &serde_json::Map<String, Json>,
) -> std::borrow::Cow<'_, serde_json::Map<String, Json>> {
    use std::borrow::Cow;
    let decoded = |v: &Json| match v {
        Json::String(t) => serde_json::from_str::<Json>(t).ok(),
        v => Some(v.clone()),
    };
    let Some(kwargs) = args.get("kwargs") else {
        return Cow::Borrowed(args);
    };
    let (Some(Json::Object(kwargs)), positional) = (decoded(kwargs), args.get("args").map(decoded))
    else {
        return Cow::Borrowed(args);
    };
    let positional = match positional {
        None => Vec::new(),
        Some(Some(Json::Array(a))) => a,
        Some(_) => return Cow::Borrowed(args),
    };
    let mut out = serde_json::Map::new();
    for (i, v) in positional.into_iter().enumerate() {
        out.insert(i.to_string(), v);
    }
    out.extend(kwargs);
    Cow::Owned(out)
}

/// What a call of a mapped tool is to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// A tool that writes (and maybe reads too) is its write: the step's read is the call's
    /// own plan, and the cell it names is what it changed.
    Write,
}

/// A call's arguments as a reader found them: the object, or why there is none.
pub type Args<'a> = Result<&'a serde_json::Map<String, Json>, String>;

/// The 1-based line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    1 + text[..at.min(text.len())].matches('\n').count()
}

impl Mapping {
    /// The registry `agent` resolves its tools against: its declared group's, else its own
    /// (`agent:<name>`).
    pub fn registry_group(&self, agent: &str) -> String {
        match self.registry_groups.get(agent) {
            Some(g) => g.clone(),
            None => format!("agent:{agent}"),
        }
    }

    /// Reads and validates the mapping file at `path`.
    pub fn read(path: &std::path::Path) -> Result<Mapping, IngestError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| IngestError::Io {
            file: file.clone(),
            source,
        })?;
        Mapping::parse(&text, &file)
    }

    /// Parses and validates `text`; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Mapping, IngestError> {
        let err = |span: Option<Range<usize>>, message: String| IngestError::Mapping {
            file: file.to_owned(),
            line: span.map_or(1, |s| line_of(text, s.start)),
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let message = e.message().trim_end().to_owned();
            err(e.span(), message)
        })?;
        let mut m = Mapping {
            file: file.to_owned(),
            ..Mapping::default()
        };
        for t in &raw.tool {
            let span = t.span();
            let t = t.get_ref();
            let name = t.name.get_ref();
            if name.is_empty() {
                return Err(err(Some(t.name.span()), "`name` is empty".into()));
            }
            let template = |f: &Option<Spanned<String>>, key: &str| match f {
                Some(s) => Template::parse(s.get_ref())
                    .map(Some)
                    .map_err(|why| err(Some(s.span()), format!("`{key}`: {why}"))),
                None => Ok(None),
            };
            let tool = ToolMemory {
                reads: template(&t.reads, "reads")?,
                writes: template(&t.writes, "writes")?,
                value: template(&t.value, "value")?,
            };
            if tool.reads.is_none() && tool.writes.is_none() {
                let why = format!("tool `{name}` has neither `reads` nor `writes`");
                return Err(err(Some(span), why));
            }
            if tool.value.is_some() && tool.writes.is_none() {
                let why = format!("tool `{name}` has `value` but no `writes`");
                return Err(err(t.value.as_ref().map(Spanned::span), why));
            }
            if m.tools.insert(name.clone(), tool).is_some() {
                let why = format!("tool `{name}` is mapped twice");
                return Err(err(Some(t.name.span()), why));
            }
        }
        if let Some(a) = &raw.attributes {
            let named = |f: &Option<Spanned<String>>, key: &str| match f {
                Some(s) if s.get_ref().is_empty() => {
                    Err(err(Some(s.span()), format!("`{key}` is empty")))
                }
                Some(s) => Ok(Some(s.get_ref().clone())),
                None => Ok(None),
            };
            let inner = a.get_ref();
            m.arguments = named(&inner.arguments, "arguments")?;
            m.result = named(&inner.result, "result")?;
            if m.arguments.is_none() && m.result.is_none() {
                let why = "`[attributes]` names neither `arguments` nor `result`".to_owned();
                return Err(err(Some(a.span()), why));
            }
        }
        if let Some(inv) = &raw.invocations {
            if inv.get_ref().separate.is_empty() {
                let why = "`[invocations] separate` names no agent".to_owned();
                return Err(err(Some(inv.span()), why));
            }
            for a in &inv.get_ref().separate {
                if a.get_ref().is_empty() {
                    return Err(err(Some(a.span()), "an empty agent name".into()));
                }
                if !m.separate_invocations.insert(a.get_ref().clone()) {
                    let why = format!("agent `{}` is named twice", a.get_ref());
                    return Err(err(Some(a.span()), why));
                }
            }
        }
        for (k, g) in raw.registry.iter().enumerate() {
            if g.get_ref().agents.is_empty() {
                return Err(err(
                    Some(g.span()),
                    "a `[[registry]]` with no agents".into(),
                ));
            }
            for a in &g.get_ref().agents {
                let group = format!("group{}", k + 1);
                if let Some(old) = m.registry_groups.insert(a.get_ref().clone(), group) {
                    let why = format!("agent `{}` is in two registries ({old} too)", a.get_ref());
                    return Err(err(Some(a.span()), why));
                }
            }
        }
        Ok(m)
    }

    /// What a call of `tool` is to memory, or `None` when the mapping leaves it out.
    pub fn access(&self, tool: &str) -> Option<Access> {
        let t = self.tools.get(tool)?;
        Some(match t.writes {
            Some(_) => Access::Write,
            None => Access::Read,
        })
    }

    /// The cell a call of `tool` with `args` read (`write` false) or wrote, with the value it
    /// wrote (its `value` template, else its arguments as JSON; `None` when the template names
    /// an argument the call lacks: a new version of unknown content). `None` when the tool is
    /// not mapped to that access; `Err` says why the call names no cell (the argument it
    /// lacks, or `args`'s own reason).
    pub fn cell(
        &self,
        tool: &str,
        write: bool,
        args: Args<'_>,
    ) -> Option<Result<(String, Option<Json>), String>> {
        let t = self.tools.get(tool)?;
        let template = match write {
            true => t.writes.as_ref()?,
            false => t.reads.as_ref()?,
        };
        Some(args.and_then(|a| {
            let a = unwrap_args(a);
            let a = a.as_ref();
            let cell = template
                .fill(a)
                .map_err(|arg| format!("argument `{arg}` missing"))?;
            let value = match &t.value {
                Some(v) => v.fill(a).ok().map(Json::String),
                None => Some(Json::Object(a.clone())),
            };
            Ok((cell, value))
        }))
    }

    /// One sentence for the report: which tools it maps, and to what.
    pub fn describe(&self) -> String {
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|(name, t)| {
                let mut what = Vec::new();
                if let Some(r) = &t.reads {
                    what.push(format!("reads {}", r.text));
                }
                if let Some(w) = &t.writes {
                    what.push(format!("writes {}", w.text));
                }
                format!("{name} ({})", what.join(", "))
            })
            .collect();
        let mut out = format!("{}: {}", self.file, tools.join(", "));
        if !self.separate_invocations.is_empty() {
            let names: Vec<&str> = self
                .separate_invocations
                .iter()
                .map(String::as_str)
                .collect();
            out.push_str(&format!(
                "; overlapping invocations of {} are separate callers",
                names.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "[[tool]]\nname = \"read_profile\"\nreads = \"profile/{key}\"\n\n\
        [[tool]]\nname = \"write_profile\"\nwrites = \"profile/{key}\"\nvalue = \"{value}\"\n\n\
        [[registry]]\nagents = [\"a\", \"b\"]\n";

    #[test]
    fn reads_tools_and_registries() {
        let m = Mapping::parse(GOOD, "m.toml").unwrap();
        let args = serde_json::json!({"key": "k1", "value": "v", "n": 3});
        let args = args.as_object().unwrap();
        let w = &m.tools["write_profile"];
        assert_eq!(w.writes.as_ref().unwrap().fill(args).unwrap(), "profile/k1");
        assert_eq!(w.value.as_ref().unwrap().fill(args).unwrap(), "v");
        let t = Template::parse("x/{n}/{missing}").unwrap();
        assert_eq!(t.fill(args), Err("missing".to_owned()));
        assert_eq!(m.registry_groups["b"], "group1");
        assert_eq!(m.access("write_profile"), Some(Access::Write));
        assert_eq!(m.access("read_profile"), Some(Access::Read));
        assert_eq!(m.access("other"), None);
        let cell = m.cell("write_profile", true, Ok(args)).unwrap().unwrap();
        assert_eq!(
            cell,
            ("profile/k1".to_owned(), Some(Json::String("v".into())))
        );
        let read = m.cell("read_profile", false, Ok(args)).unwrap().unwrap();
        assert_eq!(read.1, Some(Json::Object(args.clone())));
        assert_eq!(m.cell("read_profile", true, Ok(args)), None);
        let none = serde_json::Map::new();
        let e = m.cell("read_profile", false, Ok(&none)).unwrap();
        assert_eq!(e, Err("argument `key` missing".to_owned()));
        let e = m
            .cell("read_profile", false, Err("not captured".into()))
            .unwrap();
        assert_eq!(e, Err("not captured".to_owned()));
    }

    #[test]
    fn arguments_are_read_through_an_instrumentors_wrapping() {
        let m = Mapping::parse(
            "[[tool]]\nname = \"r\"\nreads = \"notes/{key}\"\n\
             [[tool]]\nname = \"w\"\nwrites = \"notes/{0}/{user.id}\"\n",
            "m.toml",
        )
        .unwrap();
        let cell = |tool: &str, write: bool, args: Json| {
            let args = args.as_object().unwrap().clone();
            m.cell(tool, write, Ok(&args)).unwrap().map(|c| c.0)
        };
        // OpenInference's Python instrumentors: kwargs, beside a flag of their own.
        let wrapped = serde_json::json!({"args": [], "sanitize_inputs_outputs": true,
                                         "kwargs": {"key": "u1"}});
        assert_eq!(cell("r", false, wrapped), Ok("notes/u1".to_owned()));
        // Positional arguments by position; kwargs as a JSON string; a path into an object.
        let positional = serde_json::json!({"args": ["u2"],
                                            "kwargs": "{\"user\": {\"id\": 7}}"});
        assert_eq!(cell("w", true, positional), Ok("notes/u2/7".to_owned()));
        let in_string = serde_json::json!({"user": "{\"id\": \"x\"}", "0": "p"});
        assert_eq!(cell("w", true, in_string), Ok("notes/p/x".to_owned()));
        // The default value written is the arguments as the function got them.
        let args = serde_json::json!({"args": ["u2"], "kwargs": {"user": {"id": 1}}});
        let got = m
            .cell("w", true, Ok(args.as_object().unwrap()))
            .unwrap()
            .unwrap();
        assert_eq!(
            got.1,
            Some(serde_json::json!({"0": "u2", "user": {"id": 1}}))
        );
        // A flag is not an argument.
        let flag = serde_json::json!({"args": [], "kwargs": {}, "key": "k"});
        assert_eq!(
            cell("r", false, flag),
            Err("argument `key` missing".to_owned())
        );
    }

    #[test]
    fn attributes_name_where_a_framework_records_a_call() {
        let text = "[attributes]\narguments = \"fw.tool.args\"\nresult = \"fw.tool.out\"\n";
        let m = Mapping::parse(text, "m.toml").unwrap();
        assert_eq!(m.arguments.as_deref(), Some("fw.tool.args"));
        assert_eq!(m.result.as_deref(), Some("fw.tool.out"));
        assert_eq!(
            error("[attributes]\n"),
            "m.toml:1: `[attributes]` names neither `arguments` nor `result`"
        );
        assert_eq!(
            error("[attributes]\narguments = \"\"\n"),
            "m.toml:2: `arguments` is empty"
        );
        let e = error("[attributes]\nargs = \"x\"\n");
        assert!(e.starts_with("m.toml:2: unknown field `args`"), "{e}");
    }

    #[test]
    fn invocations_name_the_agents_whose_overlaps_are_separate_callers() {
        let m = Mapping::parse("[invocations]\nseparate = [\"support\"]\n", "m.toml").unwrap();
        assert!(m.separate_invocations.contains("support"));
        assert!(m
            .describe()
            .ends_with("overlapping invocations of support are separate callers"));
        assert_eq!(
            error("[invocations]\nseparate = []\n"),
            "m.toml:1: `[invocations] separate` names no agent"
        );
        assert_eq!(
            error("[invocations]\nseparate = [\"a\", \"a\"]\n"),
            "m.toml:2: agent `a` is named twice"
        );
        let e = error("[invocations]\nagents = [\"a\"]\n");
        assert!(e.starts_with("m.toml:2: unknown field `agents`"), "{e}");
    }

    fn error(text: &str) -> String {
        Mapping::parse(text, "m.toml").unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_line() {
        let e = error("[[tool]]\nname = \"t\"\nreads = \"c/{key\"\n");
        assert_eq!(e, "m.toml:3: `reads`: unclosed `{` in \"c/{key\"");
        let e = error("[[tool]]\nname = \"t\"\nread = \"c\"\n");
        assert!(e.starts_with("m.toml:3: unknown field `read`"), "{e}");
        let e = error("[[tool]]\nname = \"t\"\n");
        assert_eq!(e, "m.toml:1: tool `t` has neither `reads` nor `writes`");
        let twice =
            "[[tool]]\nname = \"t\"\nreads = \"c\"\n[[tool]]\nname = \"t\"\nreads = \"d\"\n";
        assert_eq!(error(twice), "m.toml:5: tool `t` is mapped twice");
        let two = "[[registry]]\nagents = [\"a\"]\n[[registry]]\nagents = [\"b\", \"a\"]\n";
        assert_eq!(
            error(two),
            "m.toml:4: agent `a` is in two registries (group1 too)"
        );
        let e = error("[[tool]]\nname = \"t\"\nreads = \"c\"\nvalue = \"v\"\n");
        assert_eq!(e, "m.toml:4: tool `t` has `value` but no `writes`");
    }
}
