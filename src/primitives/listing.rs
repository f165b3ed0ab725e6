//! A registry's descriptors serialized once per change of it ([`Listing`]), and the cache a
//! registry keeps them in ([`ListCache`]): `tools/list`, `resources/list`,
//! `resources/templates/list` and `prompts/list` answer from it without cloning a descriptor or
//! re-serializing one (issue 15).
//!
//! A page is the JSON text of a list result written straight from the serialized items (each
//! written as is), its `nextCursor`, and any members the era adds; the whole list of a plain
//! request is serialized once more and shared by every response that asks for it.

use std::sync::{Arc, OnceLock, RwLock};

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::value::{to_raw_value, RawValue};
use serde_json::{Map, Value};

/// The descriptors of one registry, each serialized to JSON text once, in list order.
#[derive(Debug)]
pub(crate) struct Listing {
    items: Vec<Box<RawValue>>,
    /// `{"<key>":[…]}` of every item: the plain first page of an unpaginated list.
    whole: OnceLock<Arc<RawValue>>,
}

/// One page of a list result, serialized as `{"<key>":[items…],"nextCursor"?,…tail}`.
struct Page<'a> {
    key: &'a str,
    items: &'a [Box<RawValue>],
    next: Option<&'a str>,
    tail: Option<&'a Map<String, Value>>,
}

struct Items<'a>(&'a [Box<RawValue>]);

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for item in self.0 {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl Serialize for Page<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(self.key, &Items(self.items))?;
        if let Some(next) = self.next {
            map.serialize_entry("nextCursor", next)?;
        }
        for (key, value) in self.tail.into_iter().flatten() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Listing {
    /// Serialize every item (a descriptor of a registry, in its order).
    pub(crate) fn new<'a, T: Serialize + 'a>(items: impl IntoIterator<Item = &'a T>) -> Self {
        Listing {
            items: items.into_iter().map(raw).collect(),
            whole: OnceLock::new(),
        }
    }

    /// This listing followed by `more` items, serialized now (entries computed per request,
    /// e.g. a skill tree's files after the registered resources).
    pub(crate) fn extended<'a, T: Serialize + 'a>(
        &self,
        more: impl IntoIterator<Item = &'a T>,
    ) -> Self {
        let mut items = self.items.clone();
        items.extend(more.into_iter().map(raw));
        Listing {
            items,
            whole: OnceLock::new(),
        }
    }

    /// How many items there are.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// The result `{"<key>":[items start..end],"nextCursor"?:next, …tail}` as JSON text, with
    /// `tail`'s members (in their order) after the cursor. `start..end` is clamped to the list.
    pub(crate) fn page(
        &self,
        key: &str,
        start: usize,
        end: usize,
        next: Option<&str>,
        tail: Option<&Map<String, Value>>,
    ) -> Box<RawValue> {
        let end = end.min(self.items.len());
        let start = start.min(end);
        let page = Page {
            key,
            items: &self.items[start..end],
            next,
            tail,
        };
        to_raw_value(&page).expect("raw JSON items and string keys serialize")
    }

    /// `{"<key>":[every item]}`, serialized on the first call and shared after; one listing
    /// answers one method, so `key` is the same on every call.
    pub(crate) fn whole(&self, key: &str) -> Arc<RawValue> {
        self.whole
            .get_or_init(|| Arc::from(self.page(key, 0, self.items.len(), None, None)))
            .clone()
    }
}

fn raw<T: Serialize>(item: &T) -> Box<RawValue> {
    // A descriptor is plain data (strings, numbers, JSON values): it always serializes.
    to_raw_value(item).expect("descriptors serialize")
}

/// A registry's [`Listing`], built on the first list after a change and dropped by the next
/// change ([`ListCache::clear`]).
#[derive(Debug, Default)]
pub(crate) struct ListCache(RwLock<Option<Arc<Listing>>>);

impl ListCache {
    /// The cached listing, if no change dropped it since it was built.
    pub(crate) fn cached(&self) -> Option<Arc<Listing>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The cached listing, else one built from `items` and cached. The caller holds its
    /// registry's read lock, which its changes take for writing before they [`clear`]: a change
    /// cannot land between reading `items` and caching their listing.
    ///
    /// [`clear`]: ListCache::clear
    pub(crate) fn fill<'a, T: Serialize + 'a>(
        &self,
        items: impl IntoIterator<Item = &'a T>,
    ) -> Arc<Listing> {
        let mut slot = self.0.write().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| Arc::new(Listing::new(items)))
            .clone()
    }

    /// Drop the cached listing (the registry changed; call with its write lock held).
    pub(crate) fn clear(&self) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_are_the_serialized_value_byte_for_byte() {
        let items = [
            json!({"name":"a","x":[1,2.5,"é\n"]}),
            json!({"name":"b"}),
            json!({}),
        ];
        let listing = Listing::new(&items);
        assert_eq!(listing.len(), 3);
        let whole = listing.whole("tools");
        assert_eq!(
            whole.get(),
            serde_json::to_string(&json!({ "tools": items })).unwrap()
        );
        assert!(Arc::ptr_eq(&whole, &listing.whole("tools")), "shared");
        let mut tail = Map::new();
        tail.insert("resultType".into(), json!("complete"));
        tail.insert("_meta".into(), json!({"k":{"v":1}}));
        let page = listing.page("tools", 1, 9, Some("o3"), Some(&tail));
        assert_eq!(
            page.get(),
            r#"{"tools":[{"name":"b"},{}],"nextCursor":"o3","resultType":"complete","_meta":{"k":{"v":1}}}"#
        );
        assert_eq!(listing.page("p", 5, 2, None, None).get(), r#"{"p":[]}"#);
        let more = listing.extended(&[json!(1)]);
        assert_eq!(more.page("r", 2, 4, None, None).get(), r#"{"r":[{},1]}"#);
    }

    #[test]
    fn a_cache_keeps_its_listing_until_cleared() {
        let cache = ListCache::default();
        assert!(cache.cached().is_none());
        let first = cache.fill(&[json!(1)]);
        assert!(Arc::ptr_eq(&first, &cache.fill(&[json!(2)])), "kept");
        assert!(Arc::ptr_eq(&first, &cache.cached().unwrap()));
        cache.clear();
        assert!(cache.cached().is_none());
        assert_eq!(cache.fill(&[json!(2)]).whole("k").get(), r#"{"k":[2]}"#);
    }
}
