//! The stub generator: a deterministic function of (agent, step, values read, tools visible).
//!
//! Its output is the digest of the inputs, from which each written cell gets a value, so
//! different inputs give different outputs as a real model would, and the same inputs give
//! the same output. Latency and completion tokens are sampled from the scenario's
//! distributions with the trial's RNG; prompt tokens come from what was read. The stub models
//! no *content*: two agents that "agree" in reality get unrelated values here.

use super::{GenCost, GenError, GenInput, Generation, Generator, Output};
use crate::digest::mix;
use agentsim_models::names::{Cell, Value};
use rand_chacha::ChaCha8Rng;

/// Stub values live above this id, clear of values interned from a recording.
pub const STUB_VALUE_BASE: u32 = 1 << 20;

/// The stub generator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stub;

impl Generator for Stub {
    fn generate(
        &self,
        input: &GenInput<'_>,
        cost: &GenCost,
        rng: &mut ChaCha8Rng,
    ) -> Result<Generation, GenError> {
        Ok(generate(input, cost, rng))
    }
}

/// The stub's generation (also the fallback of a recorded generator).
pub fn generate(input: &GenInput<'_>, cost: &GenCost, rng: &mut ChaCha8Rng) -> Generation {
    let digest = input.digest();
    let latency_ms = cost.latency_ms.sample(rng);
    let completion_tokens = cost.completion.sample(rng);
    let called = input.planned.filter(|&t| input.registry.contains(t));
    Generation {
        latency_ms,
        prompt_tokens: cost.prompt_tokens,
        completion_tokens,
        output: Output::Digest(digest),
        tool_calls: called.into_iter().collect(),
    }
}

/// The value an output with `digest` writes to cell `c`: non-NULL, at least
/// [`STUB_VALUE_BASE`], spread over 2^30 values so unrelated outputs collide with
/// probability about 2^-30.
pub fn value_for(digest: u64, c: Cell) -> Value {
    let h = mix(digest ^ mix(u64::from(c.0) + 1));
    Value(STUB_VALUE_BASE + (h % (1 << 30)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use agentsim_models::names::{Agent, Names};
    use agentsim_models::record::Registry;
    use rand::SeedableRng;

    fn input<'a>(read: &'a [(Cell, Value)], reg: &'a Registry, names: &'a Names) -> GenInput<'a> {
        GenInput {
            agent: Agent(0),
            step: 1,
            planned: None,
            read,
            registry: reg,
            names,
        }
    }

    #[test]
    fn same_inputs_same_output_different_inputs_different_output() {
        let names = Names::synthetic(1, 2, 1, 0);
        let reg = Registry::all(1);
        let cost = GenCost {
            latency_ms: Dist::Fixed(5.0),
            completion: Dist::Fixed(7.0),
            prompt_tokens: 3,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let a = generate(
            &input(&[(Cell(0), Value(1))], &reg, &names),
            &cost,
            &mut rng,
        );
        let b = generate(
            &input(&[(Cell(0), Value(1))], &reg, &names),
            &cost,
            &mut rng,
        );
        let c = generate(
            &input(&[(Cell(0), Value(2))], &reg, &names),
            &cost,
            &mut rng,
        );
        assert_eq!(a, b);
        assert_ne!(a.output, c.output);
        assert_eq!(
            (a.latency_ms, a.prompt_tokens, a.completion_tokens),
            (5, 3, 7)
        );
        let empty = Registry::new();
        let d = generate(
            &input(&[(Cell(0), Value(1))], &empty, &names),
            &cost,
            &mut rng,
        );
        assert_ne!(a.output, d.output, "the tools visible are an input");
        assert_ne!(a.output.value(Cell(0)), a.output.value(Cell(1)));
        assert!(a.output.value(Cell(0)).0 >= STUB_VALUE_BASE);
    }
}
