//! JSON-RPC 2.0 batches (<https://www.jsonrpc.org/specification#batch>): an array of messages
//! sent as one, answered — when any of it is to be answered — by one array of responses.
//!
//! | batch text | [`JsonRpcBatch::from_slice`] |
//! |---|---|
//! | not JSON | `-32700`, id `null` ([`InvalidMessage::is_not_json`]), as a single message's |
//! | `[]` | one `-32600`, id `null`: an empty batch is invalid (not an empty reply) |
//! | more than [`MAX_BATCH_LEN`] elements | one `-32600`, id `null`, saying how many and the limit |
//! | an array of elements | each element classified as a message of its own would be ([`JsonRpcMessage::from_slice`] over its text): a message, or its own [`InvalidMessage`] (`[1, 2]` is two `-32600`s); an element that is itself an array is `-32600` (batches do not nest) |
//! | valid JSON that is not an array | `-32600`, id `null`: not a batch |
//!
//! An element is read from its own text, so one beyond a parser limit (nesting, a number
//! beyond `f64`, a lone surrogate) fails alone, with the answer a single message would get,
//! and an integer id of any length is echoed exactly. Which transports and protocol revisions
//! receive batches at all is the server's rule, not the wire's (`server::batch`).
//!
//! The reply ([`JsonRpcBatchResponse`]) holds one response per element that is answered: a
//! request's, an invalid element's error; a notification, a response or a broken notification
//! has no entry, and a batch with nothing to answer has no reply at all.

use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use super::{scan, ErrorObject, InvalidMessage, JsonRpcMessage, JsonRpcResponse};

/// The most messages one batch may hold: 1,024. A longer batch is refused whole (one `-32600`),
/// before any element is read: each invalid element of a batch gets an error of its own in the
/// reply, so without a bound a line of `1,1,1,…` (two bytes an element) would be answered with
/// about fifty times its size.
pub const MAX_BATCH_LEN: usize = 1024;

/// A parsed JSON-RPC batch: its elements in order, each a message or the error it deserves.
/// Never empty.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonRpcBatch {
    messages: Vec<Result<JsonRpcMessage, InvalidMessage>>,
}

impl JsonRpcBatch {
    /// Parse batch text (see the module table).
    ///
    /// # Errors
    /// The one error that answers the whole text: not JSON (`-32700`), not an array, an empty
    /// array, or more than [`MAX_BATCH_LEN`] elements (`-32600`, id `null`).
    pub fn from_slice(bytes: &[u8]) -> Result<JsonRpcBatch, InvalidMessage> {
        let bytes = super::parse::without_bom(bytes);
        let scanned = std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| scan::elements(text, MAX_BATCH_LEN));
        let Some((outline, elements)) = scanned else {
            // Not JSON: the single-message parser's own `-32700`, naming what is wrong.
            return Err(JsonRpcMessage::from_slice(bytes).err().unwrap_or_else(|| {
                InvalidMessage::new(None, ErrorObject::parse_error("not JSON"))
            }));
        };
        let refuse = |detail: String| {
            Err(InvalidMessage::new(
                None,
                ErrorObject::invalid_request(detail),
            ))
        };
        if !outline.array {
            return refuse("a batch must be a JSON array".into());
        }
        if elements.count == 0 {
            return refuse("an empty batch: a batch holds at least one message".into());
        }
        if elements.count > MAX_BATCH_LEN {
            return refuse(format!(
                "a batch of {} messages is over the limit of {MAX_BATCH_LEN} messages a batch",
                elements.count
            ));
        }
        let messages = elements.texts.into_iter().map(element).collect();
        Ok(JsonRpcBatch { messages })
    }

    /// The elements, in order.
    pub fn messages(&self) -> &[Result<JsonRpcMessage, InvalidMessage>] {
        &self.messages
    }

    /// How many elements the batch holds (at least one).
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Always `false`: an empty array is not a batch ([`JsonRpcBatch::from_slice`] refuses it).
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The elements, in order.
    pub fn into_messages(self) -> Vec<Result<JsonRpcMessage, InvalidMessage>> {
        self.messages
    }
}

impl IntoIterator for JsonRpcBatch {
    type Item = Result<JsonRpcMessage, InvalidMessage>;
    type IntoIter = std::vec::IntoIter<Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.messages.into_iter()
    }
}

/// One element, read from its own text as a single message is.
fn element(text: &str) -> Result<JsonRpcMessage, InvalidMessage> {
    match JsonRpcMessage::from_slice(text.as_bytes()) {
        Err(invalid) if invalid.is_batch() => Err(InvalidMessage::new(
            None,
            ErrorObject::invalid_request(
                "a batch element must be a JSON object, not an array: batches do not nest",
            ),
        )),
        read => read,
    }
}

/// What one line, frame or body holds: a single message or a batch.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// One message.
    Message(JsonRpcMessage),
    /// A batch (a JSON array), each element classified.
    Batch(JsonRpcBatch),
}

impl Incoming {
    /// Parse text that may be a batch: [`JsonRpcMessage::from_slice`], and for an array
    /// [`JsonRpcBatch::from_slice`]. A single message costs what it costs alone; an array is
    /// read a second time, element by element.
    ///
    /// # Errors
    /// The one error that answers the whole text (a single invalid message's, or a batch's
    /// that cannot be read: see [`JsonRpcBatch::from_slice`]).
    pub fn from_slice(bytes: &[u8]) -> Result<Incoming, InvalidMessage> {
        match JsonRpcMessage::from_slice(bytes) {
            Ok(message) => Ok(Incoming::Message(message)),
            Err(invalid) if invalid.is_batch() => {
                JsonRpcBatch::from_slice(bytes).map(Incoming::Batch)
            }
            Err(invalid) => Err(invalid),
        }
    }
}

/// The reply to a batch: the responses of its answered elements, as one JSON array. Never
/// empty: a batch with nothing to answer gets no reply ([`JsonRpcBatchResponse::new`]).
#[derive(Clone, Debug, PartialEq)]
pub struct JsonRpcBatchResponse {
    responses: Vec<JsonRpcResponse>,
}

impl JsonRpcBatchResponse {
    /// The reply holding `responses`, or `None` when there are none (JSON-RPC: nothing is sent
    /// back, not an empty array).
    pub fn new(responses: Vec<JsonRpcResponse>) -> Option<Self> {
        (!responses.is_empty()).then_some(JsonRpcBatchResponse { responses })
    }

    /// The responses, in the reply's order.
    pub fn responses(&self) -> &[JsonRpcResponse] {
        &self.responses
    }

    /// The responses, in the reply's order.
    pub fn into_responses(self) -> Vec<JsonRpcResponse> {
        self.responses
    }

    /// Serialize to a JSON array.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("JSON-RPC responses always serialize")
    }
}

impl Serialize for JsonRpcBatchResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.responses.len()))?;
        for response in &self.responses {
            seq.serialize_element(response)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::wire::jsonrpc::{ErrorCode, RequestId, MAX_DEPTH};

    fn codes(batch: &JsonRpcBatch) -> Vec<Result<&'static str, (Option<RequestId>, i32)>> {
        batch
            .messages()
            .iter()
            .map(|m| match m {
                Ok(JsonRpcMessage::Request(_)) => Ok("request"),
                Ok(JsonRpcMessage::Notification(_)) => Ok("notification"),
                Ok(JsonRpcMessage::Response(_)) => Ok("response"),
                Err(e) => Err((e.id.clone(), e.error.code.as_i32())),
            })
            .collect()
    }

    #[test]
    fn each_element_is_classified_as_a_message_of_its_own() {
        let text = r#" [ {"jsonrpc":"2.0","id":1,"method":"ping"},
            {"jsonrpc":"2.0","method":"notifications/initialized"},
            {"jsonrpc":"2.0","id":"s1","result":{}},
            1, "x", null, {},
            {"jsonrpc":"1.0","id":7,"method":"ping"},
            {"jsonrpc":"2.0","id":8,"method":"ping","params":[]},
            {"jsonrpc":"2.0","method":5},
            [{"jsonrpc":"2.0","id":9,"method":"ping"}] ] "#;
        let batch = JsonRpcBatch::from_slice(text.as_bytes()).unwrap();
        assert_eq!(batch.len(), 11);
        assert_eq!(
            codes(&batch),
            [
                Ok("request"),
                Ok("notification"),
                Ok("response"),
                Err((None, -32600)),
                Err((None, -32600)),
                Err((None, -32600)),
                Err((None, -32600)),
                Err((Some(RequestId::Number(7)), -32600)),
                Err((Some(RequestId::Number(8)), -32602)),
                Err((None, -32600)),
                Err((None, -32600)),
            ]
        );
        // An id-less element that is no message is answered (id null); a nested batch is
        // refused, saying so.
        let messages = batch.messages();
        assert!(messages[9].as_ref().unwrap_err().response().is_some());
        let nested = messages[10].as_ref().unwrap_err();
        assert!(
            nested.error.message.contains("batches do not nest"),
            "{nested}"
        );
        assert!(!nested.is_batch());
    }

    #[test]
    fn an_element_beyond_a_parser_limit_fails_alone_and_ids_stay_exact() {
        let deep = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let huge = "9".repeat(400);
        let text = format!(
            r#"[{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{deep}}}}},
               {{"jsonrpc":"2.0","id":{huge},"method":"ping"}},
               {{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}},
               {{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"s":"\ud800"}}}}]"#
        );
        // The whole text is beyond serde_json's depth limit: the single-message parser refuses
        // it as before, flagged as a batch.
        let single = JsonRpcMessage::from_slice(text.as_bytes()).unwrap_err();
        assert!(single.is_batch());
        assert_eq!(single.error.code, ErrorCode::PARSE_ERROR);
        let batch = JsonRpcBatch::from_slice(text.as_bytes()).unwrap();
        let messages = batch.messages();
        let first = messages[0].as_ref().unwrap_err();
        assert_eq!(
            (&first.id, first.error.code),
            (&Some(RequestId::Number(1)), ErrorCode::INVALID_REQUEST)
        );
        assert!(first.error.message.contains("nest deeper"), "{first}");
        let Ok(JsonRpcMessage::Request(long)) = &messages[1] else {
            panic!("{:?}", messages[1])
        };
        assert_eq!(long.id.to_string(), huge);
        let Ok(JsonRpcMessage::Request(wide)) = &messages[2] else {
            panic!("{:?}", messages[2])
        };
        assert_eq!(wide.id.to_string(), "12345678901234567890123");
        let lone = messages[3].as_ref().unwrap_err();
        assert_eq!(lone.id, Some(RequestId::Number(4)));
    }

    #[test]
    fn a_batch_that_cannot_be_read_gets_one_error() {
        for (text, code, says) in [
            ("[]", -32600, "an empty batch"),
            (" [ \n ] ", -32600, "an empty batch"),
            ("[1,", -32700, "Parse error"),
            ("[{\"id\":1,}]", -32700, "Parse error"),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                -32600,
                "must be a JSON array",
            ),
        ] {
            let err = JsonRpcBatch::from_slice(text.as_bytes()).unwrap_err();
            assert_eq!(
                (err.id.clone(), err.error.code.as_i32()),
                (None, code),
                "{text}"
            );
            assert!(err.error.message.contains(says), "{text}: {err}");
            assert!(err.response().is_some(), "{text}: answered");
        }
        assert!(JsonRpcBatch::from_slice(b"[\xff]")
            .unwrap_err()
            .is_not_json());
        let at_limit = format!("[{}1]", "1,".repeat(MAX_BATCH_LEN - 1));
        assert_eq!(
            JsonRpcBatch::from_slice(at_limit.as_bytes()).unwrap().len(),
            MAX_BATCH_LEN
        );
        let over = format!("[{}1]", "1,".repeat(MAX_BATCH_LEN));
        let err = JsonRpcBatch::from_slice(over.as_bytes()).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        assert!(
            err.error
                .message
                .contains("a batch of 1025 messages is over the limit of 1024"),
            "{err}"
        );
    }

    #[test]
    fn incoming_tells_a_message_from_a_batch() {
        let one = Incoming::from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert!(matches!(one, Incoming::Message(JsonRpcMessage::Request(_))));
        let two = Incoming::from_slice(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap();
        assert!(matches!(two, Incoming::Batch(b) if b.len() == 1));
        assert!(Incoming::from_slice(b"[]").is_err());
        assert!(Incoming::from_slice(b"nope").unwrap_err().is_not_json());
    }

    #[test]
    fn the_reply_is_one_array_or_nothing() {
        assert!(JsonRpcBatchResponse::new(Vec::new()).is_none());
        let reply = JsonRpcBatchResponse::new(vec![
            JsonRpcResponse::result(RequestId::Number(1), json!({})),
            JsonRpcResponse::error(None, ErrorObject::invalid_request("x")),
        ])
        .unwrap();
        let value: Value = serde_json::from_str(&reply.to_json()).unwrap();
        assert_eq!(
            value,
            json!([
                {"jsonrpc":"2.0","id":1,"result":{}},
                {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: x"}}
            ])
        );
        assert_eq!(reply.responses().len(), 2);
    }
}
