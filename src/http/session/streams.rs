//! The small map a session keeps per stream (its live connections, its unanswered request
//! streams) and per connection token (the buffers a route has yet to take): keyed by the
//! session's own `u64` numbers, it holds no heap while it has no entry or one — what an idle
//! session and a session answering one request at a time have — and a hash table only while
//! two or more entries are live at once (a `GET` stream beside a request, requests in
//! parallel). The table is kept until the map is empty again, so a session with its `GET`
//! stream open does not allocate a table per request, and released then, so an idle session
//! holds none.

use crate::collections::HashMap;

/// The hasher of the table: foldhash, several times cheaper than SipHash on a `u64` (the keys
/// are the server's own numbers, so no peer chooses them).
type StreamHasher = foldhash::fast::RandomState;

/// A map from a session's stream numbers (or connection tokens) to `V`.
#[derive(Default)]
pub(super) enum StreamMap<V> {
    /// No entry, no heap.
    #[default]
    Empty,
    /// One entry, inline.
    One(u64, V),
    /// Two or more entries (or fewer, after removals, until the map is empty again). Boxed, so
    /// the map is no wider than its inline entry.
    #[allow(clippy::box_collection)]
    Many(Box<HashMap<u64, V, StreamHasher>>),
}

impl<V> StreamMap<V> {
    /// Whether the map has no entry.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            StreamMap::Empty => true,
            StreamMap::One(..) => false,
            StreamMap::Many(map) => map.is_empty(),
        }
    }

    /// Whether `key` has an entry.
    pub(super) fn contains_key(&self, key: u64) -> bool {
        self.get(key).is_some()
    }

    /// The entry of `key`.
    pub(super) fn get(&self, key: u64) -> Option<&V> {
        match self {
            StreamMap::Empty => None,
            StreamMap::One(k, v) => (*k == key).then_some(v),
            StreamMap::Many(map) => map.get(&key),
        }
    }

    /// The entry of `key`, mutably.
    pub(super) fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        match self {
            StreamMap::Empty => None,
            StreamMap::One(k, v) => (*k == key).then_some(v),
            StreamMap::Many(map) => map.get_mut(&key),
        }
    }

    /// Set `key`'s entry to `value`; the entry it replaces, if any.
    pub(super) fn insert(&mut self, key: u64, value: V) -> Option<V> {
        let (map, replaced) = match std::mem::take(self) {
            StreamMap::Empty => (StreamMap::One(key, value), None),
            StreamMap::One(k, v) if k == key => (StreamMap::One(k, value), Some(v)),
            StreamMap::One(k, v) => {
                let mut map = HashMap::with_capacity_and_hasher(2, StreamHasher::default());
                map.insert(k, v);
                map.insert(key, value);
                (StreamMap::Many(Box::new(map)), None)
            }
            StreamMap::Many(mut map) => {
                let replaced = map.insert(key, value);
                (StreamMap::Many(map), replaced)
            }
        };
        *self = map;
        replaced
    }

    /// Remove `key`'s entry; the map's table goes with its last entry.
    pub(super) fn remove(&mut self, key: u64) -> Option<V> {
        match self {
            StreamMap::Empty => None,
            StreamMap::One(k, _) if *k != key => None,
            StreamMap::One(..) => match std::mem::take(self) {
                StreamMap::One(_, v) => Some(v),
                other => {
                    *self = other;
                    None
                }
            },
            StreamMap::Many(map) => {
                let removed = map.remove(&key);
                if map.is_empty() {
                    *self = StreamMap::Empty;
                }
                removed
            }
        }
    }

    /// The keys, in no particular order.
    pub(super) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        let (one, many) = match self {
            StreamMap::Empty => (None, None),
            StreamMap::One(k, _) => (Some(*k), None),
            StreamMap::Many(map) => (None, Some(map.keys().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }

    /// Every entry, taken out: the map is empty (and holds no heap) after.
    pub(super) fn take_all(&mut self) -> impl Iterator<Item = (u64, V)> {
        let (one, many) = match std::mem::take(self) {
            StreamMap::Empty => (None, None),
            StreamMap::One(k, v) => (Some((k, v)), None),
            StreamMap::Many(map) => (None, Some(map.into_iter())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }

    /// Whether the map holds a table on the heap (for tests: an idle session's maps hold none).
    #[cfg(test)]
    pub(super) fn holds_heap(&self) -> bool {
        matches!(self, StreamMap::Many(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(map: &StreamMap<&'static str>) -> Vec<u64> {
        let mut keys: Vec<u64> = map.keys().collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn one_entry_is_inline_and_two_take_a_table_until_the_map_is_empty() {
        let mut map = StreamMap::default();
        assert!(map.is_empty() && !map.holds_heap());
        assert_eq!(map.insert(7, "a"), None);
        assert!(!map.holds_heap(), "one entry is inline");
        assert_eq!(map.get(7), Some(&"a"));
        assert_eq!(map.get(8), None);
        assert_eq!(map.insert(7, "b"), Some("a"), "replaced in place");
        assert!(!map.holds_heap());
        assert_eq!(map.remove(8), None);
        assert_eq!(map.remove(7), Some("b"));
        assert!(map.is_empty() && !map.holds_heap());
        assert_eq!(map.remove(7), None);

        // A second live entry takes a table, kept while any entry is left.
        map.insert(0, "get");
        map.insert(1, "post");
        assert!(map.holds_heap());
        assert_eq!(sorted(&map), [0, 1]);
        assert_eq!(map.remove(1), Some("post"));
        assert!(map.holds_heap(), "kept while the GET stream is live");
        assert!(!map.is_empty() && map.contains_key(0) && !map.contains_key(1));
        map.insert(2, "post");
        if let Some(v) = map.get_mut(2) {
            *v = "post 2";
        }
        assert_eq!(map.get(2), Some(&"post 2"));
        assert_eq!(map.insert(2, "again"), Some("post 2"));
        assert_eq!(map.remove(2), Some("again"));
        assert_eq!(map.remove(0), Some("get"));
        assert!(
            map.is_empty() && !map.holds_heap(),
            "released with the last entry"
        );
    }

    #[test]
    fn taking_all_empties_the_map() {
        let mut map = StreamMap::default();
        assert_eq!(map.take_all().count(), 0);
        map.insert(3, "x");
        assert_eq!(map.take_all().collect::<Vec<_>>(), [(3, "x")]);
        assert!(map.is_empty() && !map.holds_heap());
        for k in 0..10 {
            map.insert(k, "y");
        }
        let mut all: Vec<u64> = map.take_all().map(|(k, _)| k).collect();
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert!(map.is_empty() && !map.holds_heap());
    }
}
