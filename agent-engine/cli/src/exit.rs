//! Leaving on a second Ctrl-C without leaving things behind: work that must happen before the
//! process exits (removing a sandbox started for this run) is registered here and awaited, for
//! a bounded time, by [`quit`].

use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;

type Cleanup = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

static CLEANUPS: Mutex<Vec<Cleanup>> = Mutex::new(Vec::new());

/// Runs `f` before the process quits through [`quit`].
pub fn on_quit(f: impl Fn() -> BoxFuture<'static, ()> + Send + Sync + 'static) {
    if let Ok(mut c) = CLEANUPS.lock() {
        c.push(Box::new(f));
    }
}

/// Runs the registered clean-ups (10 s at most) and exits with `code`.
pub async fn quit(code: i32) -> ! {
    let pending: Vec<_> = match CLEANUPS.lock() {
        Ok(c) => c.iter().map(|f| f()).collect(),
        Err(_) => Vec::new(),
    };
    if !pending.is_empty() {
        let _ =
            tokio::time::timeout(Duration::from_secs(10), futures::future::join_all(pending)).await;
    }
    std::process::exit(code)
}
