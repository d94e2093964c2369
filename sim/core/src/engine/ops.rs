//! The engine's operation steps: begin (read), generate, issue and commit (write), retract.
//! Each acts on the runtime's decision as data: a drop or an abort is counted and retried
//! within the scenario's bound; tokens are tallied per operation so that aborted work counts
//! as wasted.

use super::{AgentState, Engine, SimError};
use crate::dist::Dist;
use crate::generator::recorded::to_line;
use crate::generator::{stub, GenCost, GenInput};
use crate::scenario::{EffectOrder, Script};
use agentsim_models::names::{Agent, Cell, Tool, Value};
use agentsim_models::runtime::{BeginRequest, CommitOutcome, Runtime};

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
        assert!(!self.agents[a].open, "read with an operation open");
        let agent = Agent(a as u32);
        let req = self.mcp_request(a, BeginRequest::new(agent, cells, tool));
        let next = match self.rt.start(&req) {
            Ok(()) => {
                // What the op read stays in the runtime (its in-flight snapshot): no copy.
                let snapshot = &self.rt.store().pending(agent).snapshot;
                let st = &mut self.agents[a];
                st.open = true;
                let op = &mut st.op;
                op.read_pc = pc;
                op.planned = req.planned_tool;
                op.tokens = 0;
                op.output = None;
                op.issued = false;
                op.read.clear();
                op.read.extend(
                    req.read_set
                        .iter()
                        .map(|&c| (c, snapshot.read_values.get(c))),
                );
                st.last_read.clone_from(&op.read);
                note!(
                    self,
                    a,
                    "read {} at t={}",
                    self.show(&self.agents[a].op.read),
                    self.rt.store().pending(agent).snapshot.read_time
                );
                Some(pc + 1)
            }
            Err(reason) => {
                self.c.drops += 1;
                note!(self, a, "dropped at read: {reason:?}");
                if self.retry(a, delay) {
                    Some(pc)
                } else {
                    Some(script.op_close[pc] + 1)
                }
            }
        };
        // The runtime kept its own copy of the read set: the buffer goes back to the pool.
        self.pool.cells = req.read_set;
        next
    }

    /// Whether to retry the agent's operation; if so counts it and sets the backoff.
    pub(super) fn retry(&mut self, a: usize, delay: &mut u64) -> bool {
        let st: &mut AgentState = &mut self.agents[a];
        if self.sc.retry.unbounded {
            // Retried forever: the count is not state, only that the operation is retrying
            // (which the liveness search reads as an operation begun and not yet ended).
            st.attempts = 1;
            self.c.retries += 1;
            *delay = self.sc.retry.backoff_ms.sample(&mut self.rng);
            self.drew(self.sc.retry.backoff_ms);
            true
        } else if st.attempts < self.sc.retry.max {
            st.attempts += 1;
            self.c.retries += 1;
            *delay = self.sc.retry.backoff_ms.sample(&mut self.rng);
            self.drew(self.sc.retry.backoff_ms);
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
        let st = &self.agents[a];
        let op = st.open.then_some(&st.op);
        let read = op.map_or(&[][..], |o| &o.read[..]);
        let input = GenInput {
            agent,
            step: pc,
            planned: op.and_then(|o| o.planned),
            read,
            // Outside an operation the generation sees the live registry.
            registry: match op {
                Some(_) => &self.rt.store().pending(agent).snapshot.registry,
                None => self.rt.store().registry(),
            },
            names: &self.sc.names,
        };
        let cost =
            GenCost {
                latency_ms,
                completion: completion.unwrap_or(self.sc.tokens.completion),
                // Saturating: token counts come from the user (the scenario, a recording), and
                // a tally that wrapped would report less waste than work.
                prompt_tokens: self.sc.tokens.prompt_base.saturating_add(
                    (self.sc.tokens.prompt_per_cell).saturating_mul(read.len() as u64),
                ),
            };
        let digest = self.recorded.as_ref().map(|_| input.digest());
        let g = self.generator.generate(&input, &cost, &mut self.rng)?;
        let tokens = g.prompt_tokens.saturating_add(g.completion_tokens);
        let latency = g.latency_ms;
        self.drew_generation(latency_ms, &g);
        self.c.generations += 1;
        self.c.tokens_total = self.c.tokens_total.saturating_add(tokens);
        note!(self, a, "generate {latency} ms, {tokens} tokens");
        let st = &mut self.agents[a];
        if st.open {
            st.op.tokens = st.op.tokens.saturating_add(tokens);
            st.op.output = Some((pc, digest, g));
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
        order: EffectOrder,
    ) -> Result<u64, SimError> {
        let agent = Agent(a as u32);
        assert!(self.agents[a].open, "write inside an operation");
        let chosen = match (&self.chooser, &self.zone) {
            (None, _) => None,
            (Some(_), None) => Some(self.abstract_order(a, ws.len(), order)),
            (Some(_), Some(_)) => Some(self.timed_order(a, ws.len(), order, effect_ms)),
        };
        let op = &mut self.agents[a].op;
        // The op's request is reused: empty its map (its keys are among the cells it issued).
        let req = &mut op.commit;
        for &c in &req.issue {
            req.write_values.set(c, Value::NULL);
        }
        assert!(
            req.write_values.entries().is_empty(),
            "a reused request starts with no write values"
        );
        req.agent = agent;
        match &op.output {
            Some((_, _, g)) => ws
                .iter()
                .for_each(|&c| req.write_values.set(c, g.output.value(c))),
            None => {
                let fallback = GenInput {
                    agent,
                    step: pc,
                    planned: op.planned,
                    read: &op.read,
                    registry: &self.rt.store().pending(agent).snapshot.registry,
                    names: &self.sc.names,
                };
                let d = fallback.digest();
                ws.iter()
                    .for_each(|&c| req.write_values.set(c, stub::value_for(d, c)));
            }
        }
        if let (Some(rec), Some((step, Some(digest), g))) =
            (self.recorded.as_mut(), op.output.as_ref())
        {
            rec.push(to_line(
                &self.sc.names.agent_name(agent),
                *step,
                *digest,
                g,
                &ws,
                &self.sc.names,
            ));
        }
        let mut latencies = std::mem::take(&mut self.pool.latencies);
        latencies.clear();
        latencies.extend(ws.iter().map(|_| effect_ms.sample(&mut self.rng)));
        // Completion order: by completion time, ties in issue order (equal latencies never
        // reorder, as SPEC §7 observes of LangGraph's ToolNode).
        let completion = &mut req.completion;
        completion.clear();
        completion.extend(0..ws.len());
        match (chosen, order) {
            (Some(chosen), _) => *completion = chosen,
            (None, EffectOrder::Latency) => completion.sort_by_key(|&k| (latencies[k], k)),
            (None, EffectOrder::NonIdentity) => non_identity(&mut self.rng, completion),
        }
        let last = latencies.iter().copied().max().unwrap_or(0);
        self.pool.latencies = latencies;
        // The previous issue list's buffer becomes the pool's selection buffer.
        self.pool.cells = std::mem::replace(&mut req.issue, ws);
        op.issued = true;
        note!(
            self,
            a,
            "issue {} completing {:?}",
            self.show_cells(&self.agents[a].op.commit.issue),
            self.agents[a].op.commit.completion
        );
        Ok(last)
    }

    /// `write`, second half: commit at the runtime and act on its decision.
    pub(super) fn commit(&mut self, a: usize, delay: &mut u64) -> Option<usize> {
        let st = &self.agents[a];
        assert!(st.open, "commit inside an operation");
        assert!(st.op.issued, "commit after issue");
        let pc = st.pc;
        let outcome = self.rt.commit(&st.op.commit);
        let st = &mut self.agents[a];
        st.open = false;
        st.op.issued = false;
        let (tokens, read_pc) = (st.op.tokens, st.op.read_pc);
        match outcome {
            CommitOutcome::Committed { index, write_time } => {
                assert_eq!(
                    index,
                    self.record_tokens.len(),
                    "records are appended in order"
                );
                self.record_tokens.push(tokens);
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
                self.record_tokens.push(tokens);
                self.c.aborts += 1;
                self.c.compensations += compensate.len() as u64;
                note!(self, a, "abort #{index}: {reason:?}");
                if self.retry(a, delay) {
                    Some(read_pc)
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
            return self.traced(|| "retract: nothing to retract".into());
        };
        let aborted = self.rt.retract(i);
        assert!(
            aborted.windows(2).all(|w| w[0] < w[1]),
            "retract returns sorted indices"
        );
        self.c.retractions += 1;
        self.c.retracted += aborted.len() as u64;
        self.traced(|| format!("retract #{i}: aborts {aborted:?}"))
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

/// Draws the retry bound of [`non_identity`]: the identity has probability 1/w! <= 1/2 per
/// draw, so 64 redraws all failing has probability <= 2^-64.
const SHUFFLE_DRAWS_MAX: u32 = 64;

/// Shuffles `order` (Fisher-Yates) into a uniformly random non-identity permutation by
/// redrawing the identity; fewer than two elements stay as they are.
fn non_identity(rng: &mut rand_chacha::ChaCha8Rng, order: &mut [usize]) {
    if order.len() < 2 {
        return;
    }
    for _ in 0..SHUFFLE_DRAWS_MAX {
        for i in (1..order.len()).rev() {
            order.swap(i, crate::dist::below(rng, i + 1));
        }
        if order.iter().enumerate().any(|(k, &x)| k != x) {
            return;
        }
    }
    // Unreachable in practice (see SHUFFLE_DRAWS_MAX); stay non-identity regardless.
    order.swap(0, 1);
}

#[cfg(test)]
mod tests {
    use super::non_identity;
    use rand::SeedableRng;

    #[test]
    fn non_identity_is_a_permutation_never_the_identity_and_covers_all_others() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..600 {
            let mut v: Vec<usize> = (0..3).collect();
            non_identity(&mut rng, &mut v);
            assert_ne!(v, [0, 1, 2]);
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, [0, 1, 2]);
            seen.insert(v);
        }
        assert_eq!(seen.len(), 5, "all 3! - 1 non-identity orders occur");
        let mut one = vec![0];
        non_identity(&mut rng, &mut one);
        assert_eq!(one, [0]);
    }
}
