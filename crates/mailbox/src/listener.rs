//! Wake-ups for long polls: one LISTEN connection per [`crate::Mailbox`], reconnecting forever.
//!
//! Every `NOTIFY mq_messages` bumps a counter in a watch channel; a parked receiver wakes when it
//! changes and claims again. Notifications are lost while this connection is down (and through
//! transaction poolers), which is why receivers also poll at an interval: a wake-up is a hint,
//! the claim is the truth.

use futures_util::StreamExt;
use maskbus_pg::Database;
use std::time::Duration;
use tokio::sync::watch;
use tokio_postgres::{AsyncMessage, NoTls};

pub const CHANNEL: &str = "mq_messages";

/// Spawns the listener task; the returned receiver's value changes at every notification. The
/// `ready` receiver turns true once the first LISTEN is in place.
pub fn spawn(
    target: Database,
) -> (
    watch::Receiver<u64>,
    watch::Receiver<bool>,
    tokio::task::JoinHandle<()>,
) {
    let (wake, woken) = watch::channel(0u64);
    let (ready_tx, ready) = watch::channel(false);
    let task = tokio::spawn(async move {
        // For as long as the agent runs: receivers poll meanwhile, so no try is the last.
        let mut retry =
            maskbus_pg::Retry::new(u32::MAX, Duration::from_millis(100), Duration::from_secs(5));
        loop {
            match listen_until_closed(&target, &wake, &ready_tx).await {
                Ok(()) => retry.reset(),
                Err(reason) => {
                    tracing::debug!(%reason, "bus listener disconnected; receivers fall back to polling")
                }
            }
            if wake.is_closed() {
                return;
            }
            // Wake everyone once: whatever was notified while the connection was down is found by
            // their next claim.
            wake.send_modify(|n| *n += 1);
            retry.pause().await;
        }
    });
    (woken, ready, task)
}

async fn listen_until_closed(
    target: &Database,
    wake: &watch::Sender<u64>,
    ready: &watch::Sender<bool>,
) -> Result<(), String> {
    let (client, mut connection) = target
        .config
        .connect(NoTls)
        .await
        .map_err(|e| maskbus_pg::bus_error_text(&e))?;
    let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
    let statement = format!("LISTEN {CHANNEL}");
    let listen = client.batch_execute(&statement);
    tokio::pin!(listen);
    // The LISTEN only completes while the connection is being driven, so drive both.
    loop {
        tokio::select! {
            result = &mut listen => {
                result.map_err(|e| maskbus_pg::bus_error_text(&e))?;
                break;
            }
            message = messages.next() => match message {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(maskbus_pg::bus_error_text(&e)),
                None => return Err("connection closed".into()),
            }
        }
    }
    tracing::debug!("bus listener ready");
    let _ = ready.send(true);
    while let Some(message) = messages.next().await {
        match message {
            Ok(AsyncMessage::Notification(_)) => {
                if wake.is_closed() {
                    return Ok(());
                }
                wake.send_modify(|n| *n += 1);
            }
            Ok(_) => {}
            Err(e) => return Err(maskbus_pg::bus_error_text(&e)),
        }
    }
    Err("connection closed".into())
}
