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
}
