//! Whether the peer of a long-lived connection is still there, with no I/O: the rule a
//! WebSocket host follows to ping an idle peer and close a dead one (RFC 6455 §5.5.2: a ping
//! MAY be sent at any time and the peer MUST answer it with a pong). The host feeds the time
//! (any monotonic clock, as the time since the connection opened) and sends what [`Beat`] says.
//!
//! | the peer | the host does |
//! |---|---|
//! | sent anything (a message, a pong, a ping) in the last `interval` | nothing: [`Beat::Wait`] until `interval` after it |
//! | silent for `interval` | one ping ([`Beat::Ping`]) |
//! | silent for `interval` more after that ping | it is dead ([`Beat::Dead`]): the host ends the connection |
//!
//! So a peer that answers pings is never closed for idleness, and a vanished one (a laptop lid
//! closed, a NAT mapping dropped: no FIN, no RST) is found within two intervals. A message
//! counts once it has arrived whole: a single message that takes longer than two intervals to
//! arrive counts as silence.

use std::time::Duration;

/// The default ping interval: 30 s (a dead peer is closed within 60 s).
pub const DEFAULT_PING_INTERVAL: Duration = Duration::from_secs(30);

/// What the host does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Beat {
    /// Nothing until this much more time has passed (then ask [`Liveness::beat`] again).
    Wait(Duration),
    /// Send a ping now.
    Ping,
    /// The peer answered nothing within the interval after a ping: end the connection.
    Dead,
}

/// The liveness state of one connection (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Liveness {
    interval: Duration,
    heard: Duration,
    pinged: Option<Duration>,
}

impl Liveness {
    /// A connection that opened (and so was last heard from) at `now`; `interval` is at least
    /// 1 ms.
    pub fn new(interval: Duration, now: Duration) -> Self {
        Liveness {
            interval: interval.max(Duration::from_millis(1)),
            heard: now,
            pinged: None,
        }
    }

    /// The interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The peer sent something (any frame) at `now`.
    pub fn heard(&mut self, now: Duration) {
        self.heard = self.heard.max(now);
        self.pinged = None;
    }

    /// When [`Liveness::beat`] next has something to do, on the same clock as `now`.
    pub fn due(&self) -> Duration {
        match self.pinged {
            Some(pinged) => pinged + self.interval,
            None => self.heard + self.interval,
        }
    }

    /// What to do at `now`. [`Beat::Ping`] counts as sent.
    pub fn beat(&mut self, now: Duration) -> Beat {
        let due = self.due();
        if now < due {
            return Beat::Wait(due - now);
        }
        match self.pinged {
            Some(_) => Beat::Dead,
            None => {
                self.pinged = Some(now);
                Beat::Ping
            }
        }
    }
}

/// How many pings a peer may send in a burst: 64 ([`PingBudget`]).
pub const PING_BURST: u32 = 64;

/// How often a peer's ping budget grows back by one: every second ([`PingBudget`]).
pub const PING_REFILL: Duration = Duration::from_secs(1);

/// The pings a peer may send, with no I/O. Each ping is answered with a pong (RFC 6455
/// §5.5.2), which waits in the connection's output until the peer reads it: a peer that sends
/// pings and never reads would grow that output without bound (one unread pong per ping;
/// HTTP/2's "ping flood", CVE-2019-9512, is the same attack). So a peer gets [`PING_BURST`]
/// pings at once and one more per [`PING_REFILL`] — far beyond any keep-alive (one every
/// 20–30 s) — and a ping past that is a policy violation: the host closes with `1008`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingBudget {
    left: u32,
    /// When the budget last grew back (time since the connection opened).
    refilled: Duration,
}

impl PingBudget {
    /// A full budget for a connection opened at `now`.
    pub fn new(now: Duration) -> Self {
        PingBudget {
            left: PING_BURST,
            refilled: now,
        }
    }

    /// The peer sent a ping at `now`: `true` when the budget allows it (and spends one),
    /// `false` when the peer is over it.
    pub fn ping(&mut self, now: Duration) -> bool {
        let periods = now.saturating_sub(self.refilled).as_nanos() / PING_REFILL.as_nanos();
        if periods > 0 {
            let grown = u32::try_from(periods).unwrap_or(u32::MAX);
            self.left = self.left.saturating_add(grown).min(PING_BURST);
            self.refilled += PING_REFILL * grown.min(PING_BURST);
            if self.left == PING_BURST {
                self.refilled = now;
            }
        }
        match self.left.checked_sub(1) {
            Some(left) => {
                self.left = left;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn an_idle_peer_is_pinged_and_a_silent_one_is_dead_after_one_more_interval() {
        let mut l = Liveness::new(10 * S, Duration::ZERO);
        assert_eq!(l.beat(4 * S), Beat::Wait(6 * S));
        assert_eq!(l.due(), 10 * S);
        assert_eq!(l.beat(10 * S), Beat::Ping);
        assert_eq!(l.beat(15 * S), Beat::Wait(5 * S));
        assert_eq!(l.beat(20 * S), Beat::Dead);
    }

    #[test]
    fn anything_heard_resets_the_wait_and_answers_the_ping() {
        let mut l = Liveness::new(10 * S, Duration::ZERO);
        l.heard(7 * S);
        assert_eq!(l.beat(10 * S), Beat::Wait(7 * S));
        assert_eq!(l.beat(17 * S), Beat::Ping);
        l.heard(18 * S); // the pong
        assert_eq!(l.beat(27 * S), Beat::Wait(S));
        assert_eq!(l.beat(28 * S), Beat::Ping);
        l.heard(29 * S); // the pong
                         // A late clock reading never moves "heard" back.
        l.heard(3 * S);
        assert_eq!(l.due(), 39 * S);
        assert_eq!(
            Liveness::new(Duration::ZERO, S).interval(),
            Duration::from_millis(1)
        );
    }

    #[test]
    fn a_ping_flood_is_over_budget_and_keep_alives_never_are() {
        let mut budget = PingBudget::new(S);
        // A burst of PING_BURST at one instant is allowed, the next is not.
        for _ in 0..PING_BURST {
            assert!(budget.ping(S));
        }
        assert!(!budget.ping(S));
        // One more per second after that, no more.
        assert!(budget.ping(S + PING_REFILL));
        assert!(!budget.ping(S + PING_REFILL));
        // A quiet minute refills it to the burst, not beyond.
        let later = S + PING_REFILL * 70;
        for _ in 0..PING_BURST {
            assert!(budget.ping(later));
        }
        assert!(!budget.ping(later));
        // A keep-alive every second (or every 30 s) for an hour never runs out.
        let mut keep_alive = PingBudget::new(S);
        for second in 0..3600u32 {
            assert!(keep_alive.ping(S + PING_REFILL * second));
        }
        // A sustained flood of ten a second is cut within the first seconds.
        let mut flood = PingBudget::new(S);
        let over = (0..100u32)
            .map(|i| S + Duration::from_millis(100) * i)
            .position(|at| !flood.ping(at));
        assert!(matches!(over, Some(i) if i < 80), "{over:?}");
    }
}
