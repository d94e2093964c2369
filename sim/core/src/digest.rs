//! FNV-1a 64: the stable digest that keys recorded generations and derives stub outputs.
//!
//! `std`'s `DefaultHasher` is explicitly unstable across Rust releases, so a recording keyed
//! by it would silently stop matching; FNV-1a 64 (Fowler–Noll–Vo, offset basis
//! 0xcbf29ce484222325, prime 0x100000001b3) is fixed forever. It is not collision resistant
//! against an adversary, which keys of generations do not need.

/// An incremental FNV-1a 64 hasher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a::new()
    }
}

impl Fnv1a {
    pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    pub const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A hasher at the offset basis.
    pub const fn new() -> Self {
        Fnv1a(Self::OFFSET)
    }

    /// Feeds bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
        self
    }

    /// Feeds a string followed by a 0xFF separator (never valid UTF-8, so fields cannot run
    /// into each other).
    pub fn field(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes()).bytes(&[0xff])
    }

    /// Feeds a number as 8 little-endian bytes.
    pub fn word(&mut self, x: u64) -> &mut Self {
        self.bytes(&x.to_le_bytes())
    }

    /// Feeds a number's decimal digits, the bytes `format!("{x}")` gives, without formatting.
    pub fn decimal(&mut self, x: u64) -> &mut Self {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut x = x;
        loop {
            i -= 1;
            buf[i] = b'0' + (x % 10) as u8;
            x /= 10;
            if x == 0 {
                break;
            }
        }
        self.bytes(&buf[i..])
    }

    /// The digest so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// Hashing formatted text without building a string.
impl std::fmt::Write for Fnv1a {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// FNV-1a 64 of a byte string.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    Fnv1a::new().bytes(bytes).finish()
}

/// A final avalanche (SplitMix64's finaliser, the workspace's one mixer), to spread FNV's
/// weak low bits before a value is reduced modulo a small range.
pub use agentsim_models::mix::mix;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_test_vectors() {
        // From the FNV reference test suite (draft-eastlake-fnv).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn decimal_feeds_what_display_prints() {
        for x in [
            0,
            1,
            9,
            10,
            99,
            100,
            1_048_577,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let text = x.to_string();
            assert_eq!(
                Fnv1a::new().decimal(x).finish(),
                fnv1a64(text.as_bytes()),
                "{x}"
            );
        }
    }

    #[test]
    fn fields_are_separated() {
        let ab = Fnv1a::new().field("a").field("b").finish();
        let a_b = Fnv1a::new().field("ab").field("").finish();
        assert_ne!(ab, a_b);
    }
}
