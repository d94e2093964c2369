//! The one RNG rule of agentsim: trial `k` of a run seeded `seed` draws from ChaCha8 seeded
//! with [`trial_seed`]`(seed, k)`, on a stream that names who draws. Every seeded loop in the
//! workspace (the engine, its schedulers, the split-view trials, the deployed-system
//! reproductions) takes its generator from here, so a trial's draws depend on the seed, the
//! trial index and the stream only: never on the thread count or on another trial.

use agentsim_models::mix::{mix, splitmix};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Who draws: one ChaCha stream each, so that adding draws to one never shifts another's.
pub mod stream {
    /// The engine: latencies, tokens, generations.
    pub const ENGINE: u64 = 0;
    /// The scheduler's choices (replaying them leaves the engine's draws unchanged).
    pub const SCHEDULER: u64 = 1;
    /// The replicated store's trials (`split-view`): replication lag and routing.
    pub const SPLIT_VIEW: u64 = 2;
    /// The deployed-system reproductions take streams from here up, one per reproduction.
    pub const DEPLOYED: u64 = 16;
}

/// Trial k's seed: SplitMix64-mixed from the run seed and k (independent of thread count).
pub fn trial_seed(seed: u64, trial: u64) -> u64 {
    mix(mix(seed) ^ splitmix(trial))
}

/// The generator a trial's `stream` draws from, given the trial's seed.
pub fn stream_rng(trial_seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(trial_seed);
    rng.set_stream(stream);
    rng
}

/// The generator of trial `trial` of a run seeded `seed`, on `stream`.
pub fn trial_rng(seed: u64, trial: u64, stream: u64) -> ChaCha8Rng {
    stream_rng(trial_seed(seed, trial), stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_and_trials_are_distinct_and_reproducible() {
        let first = |seed, trial, s| trial_rng(seed, trial, s).next_u64();
        assert_eq!(first(7, 3, stream::ENGINE), first(7, 3, stream::ENGINE));
        assert_ne!(first(7, 3, stream::ENGINE), first(7, 3, stream::SCHEDULER));
        assert_ne!(first(7, 3, stream::ENGINE), first(7, 4, stream::ENGINE));
        assert_ne!(first(7, 3, stream::ENGINE), first(8, 3, stream::ENGINE));
    }
}
