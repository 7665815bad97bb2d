//! The CDP screencast of the active tab: JPEG frames, each acknowledged so Chromium sends the
//! next only when this one is taken, published as the latest frame.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    EventScreencastFrame, ScreencastFrameAckParams, StartScreencastFormat, StartScreencastParams,
    StopScreencastParams,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::browser::Browser;
use crate::state::Frame;

/// A running screencast of one tab.
#[derive(Debug)]
pub(crate) struct Screencast {
    target: String,
    stop: CancellationToken,
}

impl Drop for Screencast {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Browser {
    /// Screencasts `page` if someone watches and it is not already the one screencast.
    pub(crate) fn point_screencast(&self, page: Page) {
        if self.inner.viewers.load(Ordering::SeqCst) == 0 {
            return;
        }
        let target = page.target_id().as_ref().to_owned();
        let Ok(mut current) = self.inner.screencast.lock() else {
            return;
        };
        if current.as_ref().is_some_and(|s| s.target == target) {
            return;
        }
        let stop = CancellationToken::new();
        *current = Some(Screencast {
            target,
            stop: stop.clone(),
        });
        let browser = self.clone();
        tokio::spawn(async move {
            if let Err(e) = browser.screencast(page, stop).await {
                tracing::debug!(error = %e, "screencast ended");
            }
        });
    }

    /// Stops the screencast (no one watches, or the browser went away).
    pub(crate) fn stop_screencast(&self) {
        if let Ok(mut current) = self.inner.screencast.lock() {
            current.take();
        }
    }

    async fn screencast(
        &self,
        page: Page,
        stop: CancellationToken,
    ) -> Result<(), chromiumoxide::error::CdpError> {
        // The previous screencast's stop goes first: landing after this start, it would stop
        // this one, and every viewer would wait for frames that never come.
        let _turn = tokio::select! {
            turn = self.inner.screencast_turn.lock() => turn,
            () = stop.cancelled() => return Ok(()),
        };
        let mut frames = page.event_listener::<EventScreencastFrame>().await?;
        let (w, h) = self.inner.config.viewport;
        let params = StartScreencastParams {
            format: Some(StartScreencastFormat::Jpeg),
            quality: Some(70),
            max_width: Some(i64::from(w)),
            max_height: Some(i64::from(h)),
            every_nth_frame: Some(1),
        };
        page.execute(params).await?;
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                frame = frames.next() => {
                    let Some(frame) = frame else { break };
                    let frame: Arc<EventScreencastFrame> = frame;
                    let data: &str = frame.data.as_ref();
                    let published = Frame {
                        data: Arc::from(data),
                        width: frame.metadata.device_width,
                        height: frame.metadata.device_height,
                        seq: self.next_frame_seq(),
                    };
                    self.inner.frames.send_replace(Some(published));
                    page.execute(ScreencastFrameAckParams::new(frame.session_id)).await?;
                }
            }
        }
        let _ = page.execute(StopScreencastParams::default()).await;
        Ok(())
    }
}
