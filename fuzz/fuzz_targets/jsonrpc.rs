//! The JSON-RPC classifier: `JsonRpcMessage::from_slice` and `from_value` agree, never panic,
//! classify as JSON-RPC says (see `orkestrel_mcp_fuzz::expect`), and a classified message
//! serializes to JSON that classifies back to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orkestrel_mcp::wire::jsonrpc::JsonRpcMessage;
use orkestrel_mcp_fuzz::{check, expect, has_float, readable_id, readable_raw_id, Expect};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let classified = JsonRpcMessage::from_slice(data);
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        let floats = has_float(&value);
        // A parsed value no longer holds an integer id beyond u64 (or `-0`) exactly: only the
        // text path can echo those, so the two paths are compared on every other id.
        let exact = value
            .get("id")
            .is_none_or(|id| !id.is_number() || readable_id(id) || !readable_raw_id(data, id));
        if exact {
            assert_eq!(
                JsonRpcMessage::from_value(value),
                classified,
                "from_slice and from_value disagree"
            );
        }
        if let Ok(message) = &classified {
            let text = message.to_json();
            let again = JsonRpcMessage::from_slice(text.as_bytes());
            if !floats {
                assert_eq!(again.as_ref(), Ok(message), "no round trip through {text}");
            } else {
                assert!(again.is_ok(), "no round trip through {text}");
            }
        }
    }
    // The answer the classification implies is the answer JSON-RPC asks for.
    let expected = expect(data);
    let answer = match &classified {
        Ok(JsonRpcMessage::Request(_)) => {
            // A request is answered by the dispatcher; here only its id is checked.
            if let Expect::Reply { id, .. } = &expected {
                let Ok(JsonRpcMessage::Request(request)) = &classified else {
                    unreachable!()
                };
                // Compared as written (an id beyond every native integer by its exact text).
                let written = serde_json::to_string(&request.id).expect("an id serializes");
                let read = orkestrel_mcp_fuzz::parse(written.as_bytes()).expect("an id is JSON");
                assert_eq!(&read, id, "the request's id is misread");
            } else {
                panic!("classified as a request: {}", String::from_utf8_lossy(data));
            }
            return;
        }
        Ok(_) => None,
        Err(invalid) => invalid.response().map(|r| r.to_json()),
    };
    check(data, &expected, answer.as_deref());
});
