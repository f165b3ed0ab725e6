//! WebSocket load: ONE socket (subprotocol `mcp`), `initialize` + `notifications/initialized`,
//! then `tools/call` echo requests kept `--inflight` deep (a new request for every reply) for a
//! warm-up and then a measured window that ends at a duration OR a request budget, whichever comes
//! first. Every reply is checked: the echo text and the id of a request still in flight (each id
//! answered exactly once). Prints one JSON line:
//! `{"inflight":..,"ok":..,"bad":..,"secs":..,"rps":..,"p50_us":..,"p99_us":..}`.
//!
//! ```text
//! wsload --url ws://127.0.0.1:PORT/mcp --inflight 64 --duration-ms 2500 --warmup-ms 500 \
//!        --max-requests 2000000
//! ```

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::SinkExt;
use orkestrel_mcp_bench::ws::{connect_initialized, next_text};
use orkestrel_mcp_bench::{check_echo_reply, echo_call};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

struct Options {
    url: String,
    inflight: u64,
    duration: Duration,
    warmup: Duration,
    max_requests: u64,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        url: String::new(),
        inflight: 64,
        duration: Duration::from_secs(2),
        warmup: Duration::from_millis(500),
        max_requests: 1_000_000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{e}"));
        match arg.as_str() {
            "--url" => o.url = value()?,
            "--inflight" => o.inflight = num(value()?)?,
            "--duration-ms" => o.duration = Duration::from_millis(num(value()?)?),
            "--warmup-ms" => o.warmup = Duration::from_millis(num(value()?)?),
            "--max-requests" => o.max_requests = num(value()?)?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.url.is_empty() || o.inflight == 0 {
        return Err("--url is required and --inflight must be at least 1".into());
    }
    Ok(o)
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

struct Outcome {
    ok: u64,
    bad: u64,
    first_bad: Option<String>,
    latencies_us: Vec<u32>,
    secs: f64,
}

async fn run(o: &Options) -> Result<Outcome, String> {
    let mut socket = connect_initialized(&o.url).await?;
    let measure_from = Instant::now() + o.warmup;
    let end = measure_from + o.duration;
    let mut budget = o.max_requests;
    let mut pending: HashMap<u64, (Instant, bool)> = HashMap::new();
    let mut next_id: u64 = 1;
    let mut out = Outcome {
        ok: 0,
        bad: 0,
        first_bad: None,
        latencies_us: Vec::new(),
        secs: 0.0,
    };
    let mut stopped = false;
    loop {
        // Top up to `inflight` while the window is open and the budget lasts.
        while !stopped && (pending.len() as u64) < o.inflight {
            let now = Instant::now();
            let measured = now >= measure_from;
            if now >= end || (measured && budget == 0) {
                stopped = true;
                break;
            }
            if measured {
                budget -= 1;
            }
            let id = next_id;
            next_id += 1;
            pending.insert(id, (now, measured));
            socket
                .feed(Message::text(echo_call(id)))
                .await
                .map_err(|e| e.to_string())?;
        }
        socket.flush().await.map_err(|e| e.to_string())?;
        if pending.is_empty() {
            break;
        }
        let text = tokio::time::timeout(Duration::from_secs(10), next_text(&mut socket))
            .await
            .map_err(|_| "no reply within 10 s".to_string())??;
        let id = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("id").and_then(Value::as_u64));
        let Some((sent, measured)) = id.and_then(|id| pending.remove(&id)) else {
            out.bad += 1;
            out.first_bad
                .get_or_insert(format!("a reply to no request in flight: {text}"));
            continue;
        };
        match check_echo_reply(text.as_bytes(), id) {
            Ok(()) if measured => {
                out.ok += 1;
                out.latencies_us
                    .push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
            }
            Ok(()) => {}
            Err(why) => {
                out.bad += 1;
                out.first_bad.get_or_insert(why.0);
            }
        }
    }
    out.secs = Instant::now()
        .saturating_duration_since(measure_from)
        .as_secs_f64();
    let _ = socket.close(None).await;
    Ok(out)
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("wsload: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut out = match runtime.block_on(run(&o)) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("wsload: {e}");
            std::process::exit(1);
        }
    };
    out.latencies_us.sort_unstable();
    println!(
        "{{\"inflight\":{},\"ok\":{},\"bad\":{},\"secs\":{:.3},\"rps\":{:.0},\"p50_us\":{},\"p99_us\":{}}}",
        o.inflight,
        out.ok,
        out.bad,
        out.secs,
        out.ok as f64 / out.secs.max(1e-9),
        percentile(&out.latencies_us, 50.0),
        percentile(&out.latencies_us, 99.0),
    );
    if let Some(why) = out.first_bad {
        eprintln!("wsload: first bad reply: {why}");
    }
    if out.bad > 0 || out.ok == 0 {
        std::process::exit(1);
    }
}
