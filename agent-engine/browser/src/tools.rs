//! The browser tools: one [`TypedTool`] per upstream tool (and `browser_request_handoff`),
//! all acting on the conversation's one [`Browser`].

use std::sync::Arc;

use futures::future::BoxFuture;
use tandem_protocol::{
    BrowserClickAction, BrowserCloseTabAction, BrowserGetContentAction, BrowserGetStateAction,
    BrowserGetStorageAction, BrowserGoBackAction, BrowserListTabsAction, BrowserNavigateAction,
    BrowserObservation, BrowserRequestHandoffAction, BrowserScrollAction, BrowserSetStorageAction,
    BrowserStartRecordingAction, BrowserStopRecordingAction, BrowserSwitchTabAction,
    BrowserTypeAction, Content, ImageContent,
};
use tandem_sdk::{Tool, ToolContext, ToolDefinition, ToolInputError, TypedTool};

use crate::actions::Outcome;
use crate::browser::Browser;
use crate::definitions;
use crate::error::BrowserError;

/// The observation for an action's result.
fn observe(result: Result<Outcome, BrowserError>) -> BrowserObservation {
    let out = result.unwrap_or_else(|e| Outcome {
        text: match e {
            BrowserError::PersonDrives => e.to_string(),
            other => format!("Browser error: {other}"),
        },
        is_error: true,
        screenshot: None,
    });
    let mut content = vec![Content::text(out.text)];
    if let Some(png) = &out.screenshot {
        content.push(Content::Image(ImageContent {
            cache_prompt: false,
            image_urls: vec![format!("data:image/png;base64,{png}")],
            extra: Default::default(),
        }));
    }
    BrowserObservation {
        content,
        is_error: out.is_error,
        screenshot_data: out.screenshot,
        full_output_save_dir: None,
        extra: Default::default(),
    }
}

/// Runs `work` unless the call is cancelled first (an interrupt).
async fn or_cancelled(
    ctx: &ToolContext,
    work: impl std::future::Future<Output = Result<Outcome, BrowserError>>,
) -> BrowserObservation {
    tokio::select! {
        r = work => observe(r),
        _ = ctx.cancel.cancelled() => observe(Ok(Outcome {
            text: "Interrupted before the browser action finished.".into(),
            is_error: true,
            screenshot: None,
        })),
    }
}

macro_rules! browser_tools {
    ($($tool:ident($input:ty, $name:path) => |$b:ident, $i:ident| $body:expr;)*) => {$(
        #[doc = concat!("The `", stringify!($tool), "` tool.")]
        #[derive(Debug)]
        pub struct $tool {
            browser: Browser,
            definition: ToolDefinition,
        }

        impl $tool {
            /// The tool on `browser`.
            pub fn new(browser: Browser) -> Self {
                Self { browser, definition: definitions::definition($name) }
            }
        }

        impl TypedTool for $tool {
            type Input = $input;
            type Output = BrowserObservation;

            fn definition(&self) -> &ToolDefinition {
                &self.definition
            }

            fn run<'a>(&'a self, input: &'a $input, ctx: ToolContext) -> BoxFuture<'a, BrowserObservation> {
                Box::pin(async move {
                    let $b = &self.browser;
                    let $i = input;
                    or_cancelled(&ctx, $body).await
                })
            }

            /// The conversation closed: Chromium goes with it (the first tool closed does it).
            fn close(&self) {
                self.browser.close_soon();
            }
        }
    )*};
}

browser_tools! {
    Navigate(BrowserNavigateAction, definitions::NAVIGATE) => |b, i| b.navigate(&i.url, i.new_tab);
    Click(BrowserClickAction, definitions::CLICK) => |b, i| b.click(i.index, i.new_tab);
    TypeText(BrowserTypeAction, definitions::TYPE) => |b, i| b.type_text(i.index, &i.text);
    GetState(BrowserGetStateAction, definitions::GET_STATE) => |b, i| b.get_state(i.include_screenshot);
    GetContent(BrowserGetContentAction, definitions::GET_CONTENT) => |b, i| b.get_content(i.extract_links, i.start_from_char);
    Scroll(BrowserScrollAction, definitions::SCROLL) => |b, i| b.scroll(&i.direction);
    GoBack(BrowserGoBackAction, definitions::GO_BACK) => |b, _i| b.go_back();
    ListTabs(BrowserListTabsAction, definitions::LIST_TABS) => |b, _i| b.list_tabs();
    SwitchTab(BrowserSwitchTabAction, definitions::SWITCH_TAB) => |b, i| b.switch_tab(&i.tab_id);
    CloseTab(BrowserCloseTabAction, definitions::CLOSE_TAB) => |b, i| b.close_tab(&i.tab_id);
    GetStorage(BrowserGetStorageAction, definitions::GET_STORAGE) => |b, _i| b.get_storage();
    SetStorage(BrowserSetStorageAction, definitions::SET_STORAGE) => |b, i| b.set_storage(&serde_json::Value::Object(i.storage_state.clone()));
    StartRecording(BrowserStartRecordingAction, definitions::START_RECORDING) => |b, _i| b.start_recording();
    StopRecording(BrowserStopRecordingAction, definitions::STOP_RECORDING) => |b, _i| b.stop_recording();
}

/// `browser_request_handoff`: asks a person to take over and answers when they hand back.
#[derive(Debug)]
pub struct RequestHandoff {
    browser: Browser,
    definition: ToolDefinition,
}

impl RequestHandoff {
    /// The tool on `browser`.
    pub fn new(browser: Browser) -> Self {
        Self {
            browser,
            definition: definitions::definition(definitions::REQUEST_HANDOFF),
        }
    }
}

impl TypedTool for RequestHandoff {
    type Input = BrowserRequestHandoffAction;
    type Output = BrowserObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn validate(&self, input: &BrowserRequestHandoffAction) -> Result<(), ToolInputError> {
        if input.reason.trim().is_empty() {
            return Err(ToolInputError::invalid(
                "reason",
                "must say what the person should do",
            ));
        }
        Ok(())
    }

    fn run<'a>(
        &'a self,
        input: &'a BrowserRequestHandoffAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, BrowserObservation> {
        Box::pin(async move {
            let reply = self.browser.request_handoff(input.reason.trim());
            tokio::select! {
                back = reply => match back {
                    Ok(back) => observe(Ok(Outcome {
                        text: back.describe(),
                        screenshot: None,
                        is_error: false,
                    })),
                    Err(_) => observe(Err(BrowserError::Closed)),
                },
                _ = ctx.cancel.cancelled() => {
                    self.browser.cancel_handoff();
                    observe(Ok(Outcome {
                        text: "Interrupted while waiting for the person to hand the browser back.".into(),
                        screenshot: None,
                        is_error: true,
                    }))
                }
            }
        })
    }

    fn close(&self) {
        self.browser.cancel_handoff();
        self.browser.close_soon();
    }
}

/// The tools of upstream's `browser_tool_set`, in upstream's order, all on `browser`. Closing
/// them (the conversation closing) closes Chromium. Tandem's `browser_request_handoff` is
/// apart ([`request_handoff_tool`]): an agent spec asks for it by name, so an upstream client
/// asking for `browser_tool_set` gets exactly upstream's tools.
pub fn browser_tool_set(browser: &Browser) -> Vec<Arc<dyn Tool>> {
    let b = || browser.clone();
    vec![
        Arc::new(Navigate::new(b())),
        Arc::new(Click::new(b())),
        Arc::new(GetState::new(b())),
        Arc::new(GetContent::new(b())),
        Arc::new(TypeText::new(b())),
        Arc::new(Scroll::new(b())),
        Arc::new(GoBack::new(b())),
        Arc::new(ListTabs::new(b())),
        Arc::new(SwitchTab::new(b())),
        Arc::new(CloseTab::new(b())),
        Arc::new(GetStorage::new(b())),
        Arc::new(SetStorage::new(b())),
        Arc::new(StartRecording::new(b())),
        Arc::new(StopRecording::new(b())),
    ]
}

/// `browser_request_handoff` on `browser`.
pub fn request_handoff_tool(browser: &Browser) -> Arc<dyn Tool> {
    Arc::new(RequestHandoff::new(browser.clone()))
}
