//! The API server's random choices — object uids, `generateName` suffixes
//! and Service cluster IPs — all drawn from one seeded generator, so that a
//! run can be replayed (`miniplane up --seed N`).
//!
//! Guarantees: two [`Ids`] built from the same seed and stream hand out the
//! same values for the same sequence of calls. The API uses the store's
//! revision at start as the stream: a fresh store (revision 0) replays the
//! seed's sequence, while a restart on a kept data dir draws from another
//! stream and so does not hand out again the uids and names of the objects
//! it already holds.
//!
//! Caveat: the values follow the order of the creates. Concurrent clients
//! (several controller workers) may create in a different order from one run
//! to the next, and then get each other's names.

use std::sync::{Mutex, PoisonError};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Upstream's alphabet for `generateName` suffixes (`utilrand.String`): no
/// vowels, so no words, and no 0, 1 or 3, which read like letters.
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random `generateName` suffix.
const SUFFIX_LEN: usize = 5;
/// Longest `generateName` prefix kept, so the name fits 63 characters.
const MAX_PREFIX_LEN: usize = 58;

/// The one generator of the API server's random values.
pub(crate) struct Ids {
    /// Guards the generator state; held only for one draw, never across an
    /// `.await`, so a std `Mutex` is enough.
    rng: Mutex<ChaCha8Rng>,
}

impl Ids {
    /// A generator keyed by `seed`, on stream `stream`.
    pub(crate) fn new(seed: u64, stream: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Ids { rng: Mutex::new(rng) }
    }

    /// A new `metadata.uid`: an RFC 4122 version 4 UUID whose random bits
    /// come from the generator.
    pub(crate) fn uid(&self) -> String {
        uuid::Builder::from_random_bytes(self.bytes())
            .into_uuid()
            .to_string()
    }

    /// `prefix` (cut to 58 characters) plus five characters from upstream's
    /// alphabet, as upstream's `SimpleNameGenerator`.
    pub(crate) fn generate_name(&self, prefix: &str) -> String {
        let mut name: String = prefix.chars().take(MAX_PREFIX_LEN).collect();
        let mut rng = self.lock();
        for _ in 0..SUFFIX_LEN {
            name.push(SUFFIX_ALPHABET[rng.random_range(0..SUFFIX_ALPHABET.len())] as char);
        }
        name
    }

    /// `N` random bytes.
    pub(crate) fn bytes<const N: usize>(&self) -> [u8; N] {
        self.lock().random()
    }

    /// The generator. A panic while it was held cannot leave it half
    /// updated (each draw is a single call), so a poisoned lock is used as is.
    fn lock(&self) -> std::sync::MutexGuard<'_, ChaCha8Rng> {
        self.rng.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(ids: &Ids) -> (String, String, [u8; 3]) {
        (ids.uid(), ids.generate_name("web-"), ids.bytes())
    }

    #[test]
    fn uids_are_version_4_uuids() {
        let uid = Ids::new(1, 0).uid();
        let parsed = uuid::Uuid::parse_str(&uid).unwrap();
        assert_eq!(parsed.get_version(), Some(uuid::Version::Random));
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(uid, parsed.hyphenated().to_string());
    }

    #[test]
    fn generated_names_use_the_upstream_alphabet() {
        let ids = Ids::new(1, 0);
        let n = ids.generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        assert!(n[4..].bytes().all(|c| SUFFIX_ALPHABET.contains(&c)));
        let long = ids.generate_name(&"a".repeat(70));
        assert_eq!(long.len(), MAX_PREFIX_LEN + SUFFIX_LEN);
    }

    #[test]
    fn same_seed_and_stream_replay_the_same_values() {
        let (a, b) = (Ids::new(42, 0), Ids::new(42, 0));
        for _ in 0..3 {
            assert_eq!(draws(&a), draws(&b));
        }
    }

    #[test]
    fn another_seed_or_stream_draws_other_values() {
        let first = draws(&Ids::new(42, 0));
        assert_ne!(draws(&Ids::new(43, 0)), first);
        assert_ne!(draws(&Ids::new(42, 7)), first);
    }

    #[test]
    fn successive_draws_differ() {
        let ids = Ids::new(42, 0);
        assert_ne!(ids.uid(), ids.uid());
        assert_ne!(ids.generate_name("web-"), ids.generate_name("web-"));
    }
}
