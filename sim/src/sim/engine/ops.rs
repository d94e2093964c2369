//! The engine's operation steps: begin (read), generate, issue and commit (write), retract.
//! Each acts on the runtime's decision as data: a drop or an abort is counted and retried
//! within the scenario's bound; tokens are tallied per operation so that aborted work counts
//! as wasted.

use super::{AgentState, Engine, Op, SimError};
use crate::sim::dist::Dist;
use crate::sim::generator::recorded::to_line;
use crate::sim::generator::{stub, GenCost, GenInput};
use crate::sim::scenario::Script;
use agentsim_models::names::{Agent, Cell, Tool};
use agentsim_models::record::ValueMap;
use agentsim_models::runtime::{BeginOutcome, BeginRequest, CommitOutcome, CommitRequest, Runtime};

impl<R: Runtime> Engine<'_, R> {
    /// `read`: begin an operation. Returns the next program counter.
    pub(super) fn read(
        &mut self,
        a: usize,
        pc: usize,
        cells: Vec<Cell>,
        tool: Option<Tool>,
        script: &Script,
        delay: &mut u64,
    ) -> Option<usize> {
        assert!(self.agents[a].op.is_none(), "read with an operation open");
        let agent = Agent(a as u32);
        let req = BeginRequest::new(agent, cells, tool);
        match self.rt.begin(&req) {
            BeginOutcome::Begun(snapshot) => {
                let read: Vec<_> = req
                    .read_set
                    .iter()
                    .map(|&c| (c, snapshot.read_values.get(c)))
                    .collect();
                note!(
                    self,
                    a,
                    "read {} at t={}",
                    self.show(&read),
                    snapshot.read_time
                );
                self.agents[a].last_read.clone_from(&read);
                self.agents[a].op = Some(Op {
                    read_pc: pc,
                    planned: tool,
                    read,
                    snapshot,
                    tokens: 0,
                    output: None,
                    commit: None,
                });
                Some(pc + 1)
            }
            BeginOutcome::Dropped(reason) => {
                self.c.drops += 1;
                note!(self, a, "dropped at read: {reason:?}");
                if self.retry(a, delay) {
                    Some(pc)
                } else {
                    Some(script.op_close[pc] + 1)
                }
            }
        }
    }

    /// Whether to retry the agent's operation; if so counts it and sets the backoff.
    fn retry(&mut self, a: usize, delay: &mut u64) -> bool {
        let st: &mut AgentState = &mut self.agents[a];
        if st.attempts < self.sc.retry.max {
            st.attempts += 1;
            self.c.retries += 1;
            *delay = self.sc.retry.backoff_ms.sample(&mut self.rng);
            true
        } else {
            st.attempts = 0;
            false
        }
    }

    /// `generate`: one LLM call. Returns its latency.
    pub(super) fn generate(
        &mut self,
        a: usize,
        pc: usize,
        latency_ms: Dist,
        completion: Option<Dist>,
    ) -> Result<u64, SimError> {
        let agent = Agent(a as u32);
        let op = self.agents[a].op.as_ref();
        let read = op.map_or(&[][..], |o| &o.read[..]);
        let input = GenInput {
            agent,
            step: pc,
            planned: op.and_then(|o| o.planned),
            read,
            // Outside an operation the generation sees the live registry.
            registry: op.map_or(&self.rt.store().registry, |o| &o.snapshot.registry),
            names: &self.sc.names,
        };
        let cost = GenCost {
            latency_ms,
            completion: completion.unwrap_or(self.sc.tokens.completion),
            prompt_tokens: self.sc.tokens.prompt_base
                + self.sc.tokens.prompt_per_cell * read.len() as u64,
        };
        let digest = input.digest();
        let g = self.generator.generate(&input, &cost, &mut self.rng)?;
        let tokens = g.prompt_tokens + g.completion_tokens;
        let latency = g.latency_ms;
        self.c.generations += 1;
        self.c.tokens_total += tokens;
        note!(self, a, "generate {latency} ms, {tokens} tokens");
        if let Some(op) = self.agents[a].op.as_mut() {
            op.tokens += tokens;
            op.output = Some((pc, digest, g));
        }
        Ok(latency)
    }

    /// `write`, first half: issue the effects; returns when the last completes.
    pub(super) fn issue(
        &mut self,
        a: usize,
        pc: usize,
        ws: Vec<Cell>,
        effect_ms: Dist,
    ) -> Result<u64, SimError> {
        let agent = Agent(a as u32);
        let op = self.agents[a]
            .op
            .as_ref()
            .expect("write inside an operation");
        let fallback = GenInput {
            agent,
            step: pc,
            planned: op.planned,
            read: &op.read,
            registry: &op.snapshot.registry,
            names: &self.sc.names,
        };
        let write_values = match &op.output {
            Some((_, _, g)) => ValueMap::from_pairs(ws.iter().map(|&c| (c, g.output.value(c)))),
            None => {
                let d = fallback.digest();
                ValueMap::from_pairs(ws.iter().map(|&c| (c, stub::value_for(d, c))))
            }
        };
        if let (Some(rec), Some(out)) = (self.recorded.as_mut(), op.output.as_ref()) {
            let (step, digest, g) = out;
            rec.push(to_line(
                &self.sc.names.agent_name(agent),
                *step,
                *digest,
                g,
                &ws,
                &self.sc.names,
            ));
        }
        let latencies: Vec<u64> = ws.iter().map(|_| effect_ms.sample(&mut self.rng)).collect();
        // Completion order: by completion time, ties in issue order (equal latencies never
        // reorder, as SPEC §7 observes of LangGraph's ToolNode).
        let mut completion: Vec<usize> = (0..ws.len()).collect();
        completion.sort_by_key(|&k| (latencies[k], k));
        let last = latencies.iter().copied().max().unwrap_or(0);
        note!(
            self,
            a,
            "issue {} completing {completion:?}",
            self.show_cells(&ws)
        );
        let req = CommitRequest {
            agent,
            issue: ws,
            write_values,
            completion,
        };
        self.agents[a].op.as_mut().expect("checked above").commit = Some(req);
        Ok(last)
    }

    /// `write`, second half: commit at the runtime and act on its decision.
    pub(super) fn commit(&mut self, a: usize, delay: &mut u64) -> Option<usize> {
        let op = self.agents[a]
            .op
            .take()
            .expect("commit inside an operation");
        let req = op.commit.as_ref().expect("commit after issue");
        let pc = self.agents[a].pc;
        match self.rt.commit(req) {
            CommitOutcome::Committed { index, write_time } => {
                assert_eq!(
                    index,
                    self.record_tokens.len(),
                    "records are appended in order"
                );
                self.record_tokens.push(op.tokens);
                self.c.commits += 1;
                self.agents[a].attempts = 0;
                note!(self, a, "commit #{index} at t={write_time}");
                Some(pc + 1)
            }
            CommitOutcome::Aborted {
                index,
                reason,
                compensate,
            } => {
                assert_eq!(
                    index,
                    self.record_tokens.len(),
                    "records are appended in order"
                );
                self.record_tokens.push(op.tokens);
                self.c.aborts += 1;
                self.c.compensations += compensate.len() as u64;
                note!(self, a, "abort #{index}: {reason:?}");
                if self.retry(a, delay) {
                    Some(op.read_pc)
                } else {
                    Some(pc + 1)
                }
            }
        }
    }

    /// `retract`: the latest live committed record of any target agent.
    pub(super) fn retract(&mut self, targets: &[Agent]) -> String {
        let log = self.rt.log();
        let Some(i) = log
            .iter()
            .rposition(|r| !r.aborted && targets.contains(&r.agent))
        else {
            return "retract: nothing to retract".into();
        };
        let aborted = self.rt.retract(i);
        assert!(
            aborted.windows(2).all(|w| w[0] < w[1]),
            "retract returns sorted indices"
        );
        self.c.retractions += 1;
        self.c.retracted += aborted.len() as u64;
        format!("retract #{i}: aborts {aborted:?}")
    }

    fn show(&self, read: &[(Cell, agentsim_models::names::Value)]) -> String {
        let parts: Vec<String> = read
            .iter()
            .map(|&(c, v)| {
                format!(
                    "{}={}",
                    self.sc.names.cell_name(c),
                    self.sc.names.value_display(v)
                )
            })
            .collect();
        format!("[{}]", parts.join(", "))
    }

    fn show_cells(&self, cells: &[Cell]) -> String {
        let parts: Vec<String> = cells.iter().map(|&c| self.sc.names.cell_name(c)).collect();
        format!("[{}]", parts.join(", "))
    }
}
