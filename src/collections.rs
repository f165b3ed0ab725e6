//! The crate's hash maps and sets: `hashbrown`'s, the crate `indexmap` (serde_json's `Map`)
//! already builds on, rather than `std`'s copy of it. The same tables; in the wasm module, one
//! copy of their non-generic code instead of two. `S` defaults to `std`'s `RandomState` (SipHash
//! with random keys), as `std::collections::HashMap`'s does; maps that chose a faster hasher name
//! it.

/// A hash map (`hashbrown::HashMap`), by default with `std`'s hasher.
pub(crate) type HashMap<K, V, S = std::hash::RandomState> = hashbrown::HashMap<K, V, S>;

/// A hash set (`hashbrown::HashSet`), by default with `std`'s hasher.
pub(crate) type HashSet<T, S = std::hash::RandomState> = hashbrown::HashSet<T, S>;
