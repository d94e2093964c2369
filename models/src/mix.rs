//! SplitMix64's finaliser, the one integer mixer of the workspace: the checker's fingerprint
//! hasher, the simulator's per-trial seeds and the stub generator's choices all draw on it,
//! so a seed means the same stream everywhere.
//!
//! The constants are Steele, Lea and Flood's (2014, "Fast splittable pseudorandom number
//! generators"); a test pins known outputs so a change here cannot pass silently.

/// The golden-ratio increment of SplitMix64.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's finaliser: a bijective avalanche of one word.
pub const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One SplitMix64 step from state `z`: the increment, then the finaliser.
pub const fn splitmix(z: u64) -> u64 {
    mix(z.wrapping_add(GOLDEN))
}

/// A random seed, drawn once per process, for the hash tables that look names up (it changes
/// speed on input built to collide, never an id or an output: no table's layout is iterated).
pub fn process_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| RandomState::new().hash_one(0x5eed_u64) | 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_outputs() {
        // SplitMix64 seeded with 0: its first output is splitmix(0).
        assert_eq!(splitmix(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(mix(0), 0);
        assert_ne!(mix(1), 1);
    }
}
