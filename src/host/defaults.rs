//! The default clock, timer and spawner per target: the only core file that names
//! `SystemTime`, a thread, tokio, `spawn_local` or `futures-timer`. The options constructors
//! (`ServerOptions::new`, `ClientOptions::new`) call these; the core's logic never does.
//!
//! | target | [`clock`] | [`sleep`] | [`spawner`] |
//! |---|---|---|---|
//! | native | `SystemTime` (ms since the epoch) | `futures_timer::Delay` (a helper thread) | the current tokio runtime (feature `native`), else a new thread |
//! | `wasm32-unknown-unknown` | none | `futures_timer::Delay` (`setTimeout`) | `wasm_bindgen_futures::spawn_local` |
//! | other wasm | none | `futures_timer::Delay` | none |

use std::sync::Arc;
use std::time::Duration;

use super::{Clock, Sleep, Spawn};
use crate::BoxFuture;

/// The system clock in ms since the Unix epoch on native targets; `None` on wasm (where a host
/// passes `Date.now()` if it wants expiry).
pub fn clock() -> Option<Clock> {
    cfg_if::cfg_if! {
        if #[cfg(target_family = "wasm")] {
            None
        } else {
            Some(system_clock())
        }
    }
}

/// The system clock in ms since the Unix epoch (native targets; `0` before the epoch).
#[cfg(not(target_family = "wasm"))]
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    })
}

/// A timer that needs no runtime: `futures_timer::Delay` (a helper thread on native targets,
/// `setTimeout` on wasm).
pub fn sleep() -> Option<Sleep> {
    Some(Arc::new(|d: Duration| -> BoxFuture<'static, ()> {
        Box::pin(delay(d))
    }))
}

/// Wait `d` on the target's timer, however long: `setTimeout` (under the wasm timer) takes at
/// most 2^31 − 1 ms and fires at once beyond, so a longer wait is a chain of such (a `timeout`
/// of `Number.MAX_SAFE_INTEGER` means "no timeout", not "now").
pub async fn delay(d: Duration) {
    let mut left = d;
    while left > LONGEST_TIMER {
        futures_timer::Delay::new(LONGEST_TIMER).await;
        left -= LONGEST_TIMER;
    }
    futures_timer::Delay::new(left).await;
}

/// The longest one timer of [`delay`] waits: 2^31 − 1 ms (what `setTimeout` takes).
const LONGEST_TIMER: Duration = Duration::from_millis(i32::MAX as u64);

/// The spawner: on native targets the tokio runtime current at each spawn (feature `native`),
/// else a thread of its own; `spawn_local` on `wasm32-unknown-unknown`; none on other wasm
/// targets.
pub fn spawner() -> Option<Spawn> {
    cfg_if::cfg_if! {
        if #[cfg(all(target_arch = "wasm32", target_os = "unknown"))] {
            Some(Arc::new(|task: BoxFuture<'static, ()>| {
                wasm_bindgen_futures::spawn_local(task)
            }))
        } else if #[cfg(target_family = "wasm")] {
            None
        } else {
            Some(Arc::new(|task: BoxFuture<'static, ()>| {
                #[cfg(feature = "native")]
                if let Ok(handle) = tokio::runtime::Handle::try_current() {
                    handle.spawn(task);
                    return;
                }
                let spawned = std::thread::Builder::new()
                    .name("mcp-client-task".into())
                    .spawn(move || futures::executor::block_on(task));
                if let Err(e) = spawned {
                    tracing::error!(error = %e, "mcp: could not start a background thread");
                }
            }))
        }
    }
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;

    #[test]
    fn native_defaults_read_the_system_clock_and_run_tasks() {
        let now = clock().expect("a system clock on native targets")();
        assert!(now > 1_600_000_000_000, "ms since the epoch, got {now}");
        let (tx, rx) = futures::channel::oneshot::channel();
        spawner().expect("a spawner on native targets")(Box::pin(async move {
            let _ = tx.send(7);
        }));
        assert_eq!(futures::executor::block_on(rx), Ok(7));
        futures::executor::block_on(sleep().expect("a timer")(Duration::from_millis(1)));
    }
}
