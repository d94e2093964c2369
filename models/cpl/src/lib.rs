//! `agentsim-cpl`: Causal Past Logic (CPL.md), guards over what an agent can causally know.
//!
//! One idea per file: [`value`] (values, interning), [`msc`] (executions and causal order),
//! [`ast`] and [`parse`] (formulas and their text), [`compile`] (the flat subformula table),
//! [`reference`] (literal semantics over a whole MSC), [`monitor`] (the online knowledge-vector
//! monitor), [`wire`] (binary and JSON messages), [`run`] (driving monitors over an MSC),
//! [`jsonl`] (the MSC interchange format) and [`workload`] (the reference workloads).

pub mod ast;
pub mod compile;
pub mod jsonl;
pub mod monitor;
pub mod msc;
pub mod parse;
pub mod reference;
pub mod run;
pub mod value;
pub mod wire;
pub mod workload;

pub use ast::{Cmp, Formula, Guards, Lit, Term, MAX_DEPTH};
pub use compile::{compile, CompileError, Program, MAX_STATE};
pub use monitor::{Message, Monitor};
pub use msc::{Causal, Event, Kind, Msc, MscError};
pub use parse::{parse_formula, parse_guards, ParseError};
pub use reference::Reference;
pub use run::System;
pub use value::{Symbols, Value};
