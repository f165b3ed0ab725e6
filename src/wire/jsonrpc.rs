//! JSON-RPC 2.0 messages: ids, requests, notifications, responses, error codes, total guards,
//! a classifying parser over an already-parsed [`Value`](serde_json::Value), and response builders.
//!
//! Every wire input is classified by hand from a [`serde_json::Value`] so that each bad input maps
//! to a precise error (seed clauses 2, 3, 7, 8; JSON-RPC 2.0 §4–§5):
//!
//! | input | outcome |
//! |---|---|
//! | not an object | `-32600`, id `null` |
//! | a batch (array) | `-32600` "batches are not supported", id `null` ([`InvalidMessage::is_batch`]); a peer that receives batches reads it with [`JsonRpcBatch::from_slice`] (each element classified as above, see [`batch`](self::JsonRpcBatch)) |
//! | `method` and no `id` member | a [`JsonRpcNotification`]; never answered, however malformed |
//! | `"id": null`, or an id that is not a string or integer | `-32600`, id `null` |
//! | `jsonrpc` not exactly `"2.0"`, `method` not a string | `-32600`, the id echoed |
//! | `params` present and not an object | `-32602`, the id echoed |
//! | `result` xor `error` with an `id` | a [`JsonRpcResponse`] |
//! | not JSON (not UTF-8, outside the grammar, more after the first value) | `-32700`, id `null` ([`InvalidMessage::is_not_json`]); the id of a whole request the text starts with, when one does |
//! | a leading UTF-8 byte order mark | ignored (RFC 8259 §8.1) |
//! | valid JSON beyond a parser limit ([`MAX_DEPTH`], a number beyond `f64`, a lone surrogate escape) | `-32600` with the id when readable, else `-32700`; a notification is not answered |
//! | an integer id of any length | echoed exactly ([`RequestId::Integer`] beyond `i64`) |
//!
//! Unknown members (including `_meta`) are ignored everywhere.
mod batch;
mod error;
mod guards;
mod id;
mod message;
mod parse;
mod result;
mod scan;

pub use batch::{Incoming, JsonRpcBatch, JsonRpcBatchResponse, MAX_BATCH_LEN};
pub use error::{
    ErrorCode, ErrorObject, JSONRPC_INTERNAL_ERROR, JSONRPC_INVALID_PARAMS,
    JSONRPC_INVALID_REQUEST, JSONRPC_METHOD_NOT_FOUND, JSONRPC_PARSE_ERROR, JSONRPC_SERVER_ERROR,
    MAX_ERROR_MESSAGE_BYTES,
};
pub use guards::{
    is_initialize_request, is_jsonrpc_message, is_jsonrpc_request, is_jsonrpc_response,
    is_request_id, jsonrpc_error, jsonrpc_result, parse_jsonrpc_message,
};
pub use id::{IntegerText, RequestId};
pub use message::{JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
pub use parse::InvalidMessage;
pub(crate) use parse::{leading_message_id, without_bom};
pub use result::ResultValue;
pub use scan::MAX_DEPTH;

/// The protocol marker every JSON-RPC 2.0 message carries in its `jsonrpc` member.
pub const JSONRPC_VERSION: &str = "2.0";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::Value;

    fn parse(v: Value) -> Result<JsonRpcMessage, InvalidMessage> {
        JsonRpcMessage::from_value(v)
    }

    #[test]
    fn ids_round_trip_exactly() {
        for raw in [
            "0",
            "-1",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1234567890123456789012345678901234567890",
            "-1234567890123456789012345678901234567890",
            "-0",
            "\"\"",
            "\"007\"",
            "\"1\"",
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let msg = JsonRpcMessage::from_slice(text.as_bytes()).unwrap();
            let JsonRpcMessage::Request(req) = msg else {
                panic!("not a request")
            };
            let reply = JsonRpcResponse::result(req.id, json!({})).to_json();
            assert_eq!(
                reply,
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
            );
        }
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn valid_json_beyond_parser_limits_is_answered() {
        let deep = nested(200);
        let cases = [
            // (text, the id answered with, the code, what the message names)
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{deep}}}}}"#),
                Some(RequestId::Number(1)),
                ErrorCode::INVALID_REQUEST,
                "nest deeper than 127 levels at line 1 column 180",
            ),
            (
                format!(r#"{{"params":{deep},"id":"x","method":"ping","jsonrpc":"2.0"}}"#),
                Some("x".into()),
                ErrorCode::INVALID_REQUEST,
                "nest deeper than 127",
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"ping"}}"#),
                None,
                ErrorCode::PARSE_ERROR,
                "nest deeper",
            ),
            (deep.clone(), None, ErrorCode::PARSE_ERROR, "nest deeper"),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"m","params":{"n":-1e400}}"#.to_owned(),
                Some(RequestId::Number(2)),
                ErrorCode::INVALID_REQUEST,
                "the number -1e400 at line 1 column 52 is beyond the range of a 64-bit float",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"\ud800","method":"m"}"#.to_owned(),
                None,
                ErrorCode::PARSE_ERROR,
                r"lone UTF-16 surrogate escape \ud800 at line 1 column 24",
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"s":"a\udfff"}}"#.to_owned(),
                Some(RequestId::Number(3)),
                ErrorCode::INVALID_REQUEST,
                r"lone UTF-16 surrogate escape \udfff at line 1 column 54",
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","id":12345678901234567890123,"result":{deep}}}"#),
                RequestId::from_integer_text("12345678901234567890123"),
                ErrorCode::INVALID_REQUEST,
                "nest deeper",
            ),
        ];
        for (text, id, code, names) in cases {
            let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
            assert_eq!((&err.id, err.error.code), (&id, code), "{text}");
            assert!(err.error.message.contains(names), "{}", err.error.message);
            assert!(err.reply && !err.is_not_json(), "{text}");
            let answer = err.response().unwrap().to_json();
            let id_json = id.map_or("null".into(), |i| serde_json::to_string(&i).unwrap());
            assert!(answer.contains(&format!(r#""id":{id_json}"#)), "{answer}");
        }
        // A notification beyond a limit is still never answered.
        let text = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"a":{deep}}}}}"#);
        let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
        assert!(!err.reply && err.response().is_none());
        // Text that is not JSON stays a -32700 a host may skip.
        for bad in [
            "hello",
            r#"{"id":1,"#,
            "\u{feff}",
            "\u{feff}\u{feff}{}",
            r#"{"jsonrpc":"2.0","method":"n"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"} x"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}] x"#,
        ] {
            let err = JsonRpcMessage::from_slice(bad.as_bytes()).unwrap_err();
            assert!(err.is_not_json() && err.id.is_none(), "{bad}");
            assert_eq!(err.error.code, ErrorCode::PARSE_ERROR);
        }
        // A whole request followed by more: the -32700 carries its id, so it is answered.
        for (bad, id) in [
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#, RequestId::from(1)),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}{\"jsonrpc\":\"2.0\"}\n\u{ff}",
                RequestId::from("a"),
            ),
        ] {
            let err = JsonRpcMessage::from_slice(bad.as_bytes()).unwrap_err();
            assert!(err.is_not_json() && err.reply, "{bad}");
            assert_eq!((err.id, err.error.code), (Some(id), ErrorCode::PARSE_ERROR));
        }
        // A leading byte order mark is ignored (RFC 8259 §8.1), by the batch parser too.
        let bom = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert!(matches!(
            JsonRpcMessage::from_slice(bom.as_bytes()),
            Ok(JsonRpcMessage::Request(r)) if r.method == "ping"
        ));
        let bom = "\u{feff}[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]";
        assert_eq!(JsonRpcBatch::from_slice(bom.as_bytes()).unwrap().len(), 1);
        let err = JsonRpcMessage::from_slice(b"{\"id\":1,\"method\":\"\xff\"}").unwrap_err();
        assert!(err.is_not_json(), "not UTF-8 is not JSON");
        // Just under the depth limit is read.
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}}}}}"#,
            nested(MAX_DEPTH - 2)
        );
        assert!(JsonRpcMessage::from_slice(text.as_bytes()).is_ok());
    }

    #[test]
    fn integer_ids_of_any_length_are_exact() {
        for digits in [400, 309, 39, 20] {
            for sign in ["", "-"] {
                let raw = format!("{sign}{}", "7".repeat(digits));
                for text in [
                    format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#),
                    format!(r#"{{"jsonrpc":"2.0","method":"ping","id" : {raw} }}"#),
                ] {
                    let msg = JsonRpcMessage::from_slice(text.as_bytes()).unwrap();
                    let JsonRpcMessage::Request(req) = msg else {
                        panic!("not a request")
                    };
                    assert_eq!(req.id.to_string(), raw);
                    let reply = JsonRpcResponse::result(req.id, json!({})).to_json();
                    assert_eq!(
                        reply,
                        format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
                    );
                }
                // The exact id survives an error found elsewhere in the message.
                let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping","params":[]}}"#);
                let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
                assert_eq!(err.id.map(|i| i.to_string()), Some(raw.clone()));
                assert_eq!(err.error.code, ErrorCode::INVALID_PARAMS);
            }
        }
        // A parsed value cannot hold them: the refusal says why.
        let err = parse(json!({"jsonrpc":"2.0","id":1e30,"method":"ping"})).unwrap_err();
        assert!(
            err.error.message.contains("beyond 64 bits"),
            "{}",
            err.error.message
        );
        assert_eq!(
            RequestId::from_integer_text("12"),
            Some(RequestId::Number(12))
        );
        assert!(RequestId::from_integer_text("1.0").is_none());
    }

    #[test]
    fn text_reads_as_its_parsed_value_does() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"ping","id":2}"#,
            r#"{"x":{"y":[1,2]},"jsonrpc":"2.0","id":"s","method":"m","params":{"a":1},"z":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"ok":true},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"},"result":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#""text""#,
            "null",
            "1",
            "true",
            r#"{"jsonrpc":"2.0","method":"n","params":[1]}"#,
            r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null}"#,
            r#"{"params":{},"jsonrpc":"2.0"}"#,
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                JsonRpcMessage::from_slice(text.as_bytes()),
                JsonRpcMessage::from_value(value),
                "{text}"
            );
        }
        // A member the classifier does not read is still read: one beyond a parser limit
        // fails the message as before.
        let text = r#"{"jsonrpc":"2.0","id":2,"method":"m","x":-1e400}"#;
        let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some(RequestId::Number(2)), ErrorCode::INVALID_REQUEST)
        );
    }

    #[test]
    fn bad_ids_are_invalid_requests_with_null_id() {
        for raw in ["null", "1.5", "1e3", "true", "{}", "[]"] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
            assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST, "{raw}");
            assert_eq!(err.id, None);
            assert!(err.reply);
        }
    }

    #[test]
    fn notifications_are_classified_before_validation() {
        let n = parse(json!({"jsonrpc":"2.0","method":"x","params":{"_meta":{}}})).unwrap();
        assert!(matches!(n, JsonRpcMessage::Notification(_)));
        let err = parse(json!({"jsonrpc":"2.0","method":"x","params":[1]})).unwrap_err();
        assert!(
            !err.reply,
            "a notification whose only fault is params is never answered"
        );
        assert!(err.response().is_none());
        // No JSON-RPC message at all, though without an id: -32600, id null (JSON-RPC §7).
        for bad in [
            json!({"jsonrpc":"1.0","method":"x"}),
            json!({"method":"x"}),
            json!({"jsonrpc":"2.0","method":5}),
            json!({"jsonrpc":"2.0","method":1,"params":"bar"}),
        ] {
            let err = parse(bad.clone()).unwrap_err();
            let response = err.response().expect("answered");
            assert_eq!(response.id, None, "{bad}");
            assert_eq!(
                response.payload.unwrap_err().code,
                ErrorCode::INVALID_REQUEST,
                "{bad}"
            );
        }
    }

    #[test]
    fn envelope_errors_echo_the_id() {
        let err = parse(json!({"jsonrpc":"1.0","id":7,"method":"ping"})).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some(RequestId::Number(7)), ErrorCode::INVALID_REQUEST)
        );
        let err = parse(json!({"id":"a","method":"ping"})).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some("a".into()), ErrorCode::INVALID_REQUEST)
        );
        let err = parse(json!({"jsonrpc":"2.0","id":1,"method":["x"]})).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        let err = parse(json!({"jsonrpc":"2.0","id":1,"method":"x","params":"s"})).unwrap_err();
        assert_eq!(
            (err.id, err.error.code),
            (Some(RequestId::Number(1)), ErrorCode::INVALID_PARAMS)
        );
        let err = parse(json!({"jsonrpc":"2.0","id":1,"method":"x","params":null})).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn non_objects_and_batches_are_invalid() {
        for v in [
            json!([]),
            json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]),
            json!(1),
            json!("s"),
            json!(null),
            json!({}),
        ] {
            let is_array = v.is_array();
            let err = parse(v).unwrap_err();
            assert_eq!(
                (err.id.clone(), err.error.code),
                (None, ErrorCode::INVALID_REQUEST)
            );
            assert!(err.reply);
            assert_eq!(err.is_batch(), is_array, "an array is flagged as a batch");
        }
        // The refusal of a batch is the same from text, whatever the array holds.
        for text in ["[]", "[1]", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#] {
            let err = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
            assert!(err.is_batch(), "{text}");
            assert_eq!(
                err.error.message,
                "Invalid Request: batches are not supported"
            );
        }
    }

    #[test]
    fn responses_need_exactly_one_of_result_and_error() {
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","id":1,"result":{}})).unwrap(),
            JsonRpcMessage::Response(JsonRpcResponse { payload: Ok(_), .. })
        ));
        let ok = parse(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}))
            .unwrap();
        assert!(matches!(
            ok,
            JsonRpcMessage::Response(JsonRpcResponse {
                id: None,
                payload: Err(_)
            })
        ));
        assert!(
            parse(json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}))
                .is_err()
        );
        assert!(parse(json!({"jsonrpc":"2.0","id":1})).is_err());
        assert!(parse(json!({"jsonrpc":"2.0","id":1,"error":{"code":"x"}})).is_err());
    }

    #[test]
    fn unknown_members_are_ignored() {
        let msg = parse(
            json!({"jsonrpc":"2.0","id":1,"method":"ping","extra":true,"params":{"_meta":{"a":1}}}),
        )
        .unwrap();
        let JsonRpcMessage::Request(req) = msg else {
            panic!()
        };
        assert_eq!(req.params.unwrap()["_meta"], json!({"a":1}));
    }

    #[test]
    fn guards_are_total_and_sound() {
        let samples = [
            json!(null),
            json!(1),
            json!([]),
            json!({}),
            json!({"jsonrpc":"2.0","method":"m"}),
            json!({"jsonrpc":"2.0","id":1,"method":"initialize"}),
            json!({"jsonrpc":"2.0","id":null,"method":"m"}),
            json!({"jsonrpc":"2.0","id":1,"result":null}),
            json!({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}),
        ];
        for v in &samples {
            let parsed = parse_jsonrpc_message(v);
            assert_eq!(parsed.is_some(), is_jsonrpc_message(v));
            assert_eq!(
                is_jsonrpc_message(v),
                is_jsonrpc_request(v) || is_jsonrpc_response(v)
            );
            if let Some(m) = parsed {
                let back: Value = serde_json::from_str(&m.to_json()).unwrap();
                assert!(is_jsonrpc_message(&back));
            }
        }
        assert!(is_initialize_request(&samples[5]));
        assert!(!is_initialize_request(&samples[4]));
        assert!(
            is_request_id(&json!("")) && is_request_id(&json!(-3)) && !is_request_id(&json!(null))
        );
    }

    #[test]
    fn builders_make_envelopes() {
        let ok = jsonrpc_result(1.into(), json!({"a":1}));
        assert_eq!(ok.to_json(), r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#);
        let err = jsonrpc_error(None, JSONRPC_PARSE_ERROR, "Parse error", Some(json!(1)));
        assert_eq!(
            err.to_json(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":1}}"#
        );
    }
}
