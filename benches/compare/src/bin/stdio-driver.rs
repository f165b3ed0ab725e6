//! One stdio client for every server: spawns `CMD ARGS...` with piped stdin/stdout, does the
//! `initialize` handshake, sends a warm-up, then `tools/call` echo requests with up to
//! `--inflight K` outstanding (1 = sequential) until `--max-requests` or `--duration-ms`,
//! whichever first. Every reply line is checked (id and echo text). Prints one JSON line:
//! `{"inflight":..,"ok":..,"bad":..,"rps":..}`; then closes stdin and waits for the child.
//!
//! ```text
//! stdio-driver --inflight 64 --duration-ms 2000 --max-requests 500000 --warmup 2000 -- CMD ARGS...
//! ```

use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orkestrel_mcp_bench::{check_echo_reply, echo_call, INITIALIZE, INITIALIZED};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::Semaphore;

struct Options {
    inflight: usize,
    duration: Duration,
    max_requests: u64,
    warmup: u64,
    command: Vec<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        inflight: 1,
        duration: Duration::from_secs(2),
        max_requests: 1_000_000,
        warmup: 1000,
        command: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            o.command = args.collect();
            break;
        }
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        let bad = |e: std::num::ParseIntError| format!("{arg}: {e}");
        match arg.as_str() {
            "--inflight" => o.inflight = value.parse().map_err(bad)?,
            "--duration-ms" => o.duration = Duration::from_millis(value.parse().map_err(bad)?),
            "--max-requests" => o.max_requests = value.parse().map_err(bad)?,
            "--warmup" => o.warmup = value.parse().map_err(bad)?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.command.is_empty() || o.inflight == 0 {
        return Err("usage: stdio-driver [--inflight K] [--duration-ms D] [--max-requests N] [--warmup N] -- CMD ARGS...".into());
    }
    Ok(o)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("stdio-driver: {e}");
            std::process::exit(2);
        }
    };
    match run(&o).await {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("stdio-driver: {e}");
            std::process::exit(1);
        }
    }
}

async fn run(o: &Options) -> Result<String, String> {
    let mut child = tokio::process::Command::new(&o.command[0])
        .args(&o.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", o.command[0]))?;
    let mut stdin = BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("piped"));
    let mut lines =
        BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped")).lines();

    // Handshake, bounded in time.
    let handshake = async {
        stdin.write_all(INITIALIZE.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        while let Some(line) = lines.next_line().await? {
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if v.get("id").and_then(Value::as_u64) == Some(0) {
                stdin.write_all(INITIALIZED.as_bytes()).await?;
                stdin.write_all(b"\n").await?;
                stdin.flush().await?;
                return Ok(());
            }
        }
        Err(std::io::Error::other("EOF before the initialize reply"))
    };
    tokio::time::timeout(Duration::from_secs(20), handshake)
        .await
        .map_err(|_| "initialize timed out".to_string())?
        .map_err(|e| format!("initialize: {e}"))?;

    let permits = Arc::new(Semaphore::new(o.inflight));
    let ok = Arc::new(AtomicU64::new(0));
    let bad = Arc::new(AtomicU64::new(0));
    let reader = {
        let (permits, ok, bad) = (permits.clone(), ok.clone(), bad.clone());
        tokio::spawn(async move {
            let mut first_bad = None;
            while let Ok(Some(line)) = lines.next_line().await {
                let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if v.get("id").is_none() {
                    continue; // a notification (logging, list changes)
                }
                let id = v.get("id").and_then(Value::as_u64);
                match check_echo_reply(line.as_bytes(), id) {
                    Ok(()) if id.is_some() => {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(()) => {}
                    Err(e) => {
                        bad.fetch_add(1, Ordering::Relaxed);
                        first_bad.get_or_insert(e.0);
                    }
                }
                permits.add_permits(1);
            }
            first_bad
        })
    };

    // Send `count` requests from `first_id` with at most `inflight` outstanding; stop at
    // `deadline`; then wait until all of them answered. Returns how many were sent.
    async fn send(
        stdin: &mut BufWriter<tokio::process::ChildStdin>,
        permits: &Semaphore,
        inflight: usize,
        first_id: u64,
        count: u64,
        deadline: Instant,
    ) -> Result<u64, String> {
        let mut sent = 0;
        while sent < count && Instant::now() < deadline {
            let permit = match permits.try_acquire() {
                Ok(p) => p,
                Err(_) => {
                    stdin.flush().await.map_err(|e| e.to_string())?;
                    match tokio::time::timeout_at(deadline.into(), permits.acquire()).await {
                        Ok(permit) => permit.map_err(|e| e.to_string())?,
                        Err(_) => break, // the window closed while waiting
                    }
                }
            };
            permit.forget();
            let line = echo_call(first_id + sent);
            stdin
                .write_all(line.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            stdin.write_all(b"\n").await.map_err(|e| e.to_string())?;
            sent += 1;
        }
        stdin.flush().await.map_err(|e| e.to_string())?;
        let all = u32::try_from(inflight).unwrap_or(u32::MAX);
        let drained = tokio::time::timeout(Duration::from_secs(20), permits.acquire_many(all))
            .await
            .map_err(|_| "timed out draining replies".to_string())?
            .map_err(|e| e.to_string())?;
        drop(drained);
        Ok(sent)
    }

    let far = Instant::now() + Duration::from_secs(60);
    send(&mut stdin, &permits, o.inflight, 1, o.warmup, far).await?;
    let warm_ok = ok.load(Ordering::Relaxed);
    let started = Instant::now();
    let sent = send(
        &mut stdin,
        &permits,
        o.inflight,
        o.warmup + 1,
        o.max_requests,
        started + o.duration,
    )
    .await?;
    let elapsed = started.elapsed();
    let measured = ok.load(Ordering::Relaxed) - warm_ok;
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    let _ = child.kill().await;
    let first_bad = reader.await.ok().flatten();
    let bad = bad.load(Ordering::Relaxed);
    if bad > 0 || measured != sent {
        return Err(format!(
            "{bad} bad replies, {measured} good of {sent} sent; first bad: {first_bad:?}"
        ));
    }
    Ok(format!(
        "{{\"inflight\":{},\"ok\":{},\"bad\":{},\"secs\":{:.3},\"rps\":{:.0}}}",
        o.inflight,
        measured,
        bad,
        elapsed.as_secs_f64(),
        measured as f64 / elapsed.as_secs_f64().max(1e-9)
    ))
}
