//! The streaming side of the model client: the SSE decoder, then the Chat Completions and
//! Responses accumulators fed with its events, as `model::client` does.
//!
//! Input: one byte choosing the chunk size, then the raw response body. Checks that decoding
//! does not depend on where the network cut the bytes.
#![no_main]

use interpreter_core::model::chat::ChatStream;
use interpreter_core::model::responses::ResponsesStream;
use interpreter_core::model::sse::{SseDecoder, SseEvent};
use libfuzzer_sys::fuzz_target;

fn decode(body: &[u8], chunk: usize) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in body.chunks(chunk) {
        events.extend(decoder.feed(piece));
    }
    events.extend(decoder.finish());
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first % 16) + 1;
    let events = decode(body, chunk);
    assert_eq!(
        events,
        decode(body, body.len().max(1)),
        "events depend on chunk boundaries (chunk size {chunk})"
    );

    let mut chat = ChatStream::new("fuzz");
    let mut chat_ok = true;
    let mut responses = ResponsesStream::new("fuzz");
    let mut responses_ok = true;
    for ev in &events {
        // The client stops at the first error, like here.
        if chat_ok {
            chat_ok = chat.handle(&ev.data).is_ok();
        }
        if responses_ok {
            responses_ok = responses.handle(ev.event.as_deref(), &ev.data).is_ok();
        }
    }
    let _ = chat.partial_state();
    let _ = responses.partial_state();
    if chat_ok {
        let _ = chat.finish();
    }
    if responses_ok {
        let _ = responses.finish();
    }
});
