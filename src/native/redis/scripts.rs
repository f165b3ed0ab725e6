//! The Lua scripts of the Redis session store: one round trip per session operation, atomic on
//! the Redis server. Times are the Redis server's (`TIME`), so the instances' clocks need not
//! agree.

use ::redis::Script;

// KEYS[1] the record, KEYS[2] the live set; ARGV[1] the new session's TTL ms (the handshake
// TTL when shorter than the idle TTL; 0: none), ARGV[2] the cap, ARGV[3] the id, ARGV[4] the
// version. 1 minted, 0 at the cap, -1 the id is taken.
const MINT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
if redis.call('HSETNX', KEYS[1], 'v', ARGV[4]) == 0 then return -1 end
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
else
  redis.call('ZADD', KEYS[2], '+inf', ARGV[3])
end
return 1
";

// KEYS[1] the record, KEYS[2] the live set; ARGV[1] idle TTL ms (0: none), ARGV[2] the id.
// The record's fields and values (its expiry set to the idle TTL: pushed back, or, for a session
// minted with the shorter handshake TTL, lengthened), or nil when it is gone.
const TOUCH: &str = r"
local record = redis.call('HGETALL', KEYS[1])
if #record == 0 then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return false
end
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[2])
elseif redis.call('PERSIST', KEYS[1]) == 1 then
  redis.call('ZADD', KEYS[2], '+inf', ARGV[2])
end
return record
";

// KEYS[1] the record; ARGV[1] n, then n field/value pairs, then the fields to delete. Writes
// only a record that exists (an ended session is not brought back). 1 written, 0 gone.
const SAVE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = tonumber(ARGV[1])
for i = 2, 2 * n, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
for i = 2 * n + 2, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
return 1
";

// KEYS[1] the record, KEYS[2] the live set; ARGV[1] the id, ARGV[2] the channel. 1 ended, 0 gone.
const END: &str = r"
local n = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if n > 0 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
return n
";

// KEYS[1] the live set. The number dropped (past their expiry) and the number left.
const COUNT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local dropped = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return {dropped, redis.call('ZCARD', KEYS[1])}
";

// KEYS[1] the live set, KEYS[2..] the records; ARGV[1] idle TTL ms, ARGV[2..] the ids. The ids
// whose record is gone (ended, expired or evicted elsewhere).
const KEEP: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local gone = {}
for i = 2, #KEYS do
  if redis.call('PEXPIRE', KEYS[i], ttl) == 1 then
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
  else
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
";

/// The scripts, loaded into Redis on first use (`EVALSHA`, then `SCRIPT LOAD` on `NOSCRIPT`).
pub(super) struct Scripts {
    pub(super) keep: Script,
    pub(super) mint: Script,
    pub(super) touch: Script,
    pub(super) save: Script,
    pub(super) end: Script,
    pub(super) count: Script,
}

impl Scripts {
    pub(super) fn new() -> Scripts {
        Scripts {
            keep: Script::new(KEEP),
            mint: Script::new(MINT),
            touch: Script::new(TOUCH),
            save: Script::new(SAVE),
            end: Script::new(END),
            count: Script::new(COUNT),
        }
    }
}
