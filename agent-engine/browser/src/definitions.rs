//! What the model reads about the browser tools: their names, descriptions and effect hints.
//! The arguments are the fields of the action structs in `tandem_protocol` (one per tool,
//! e.g. [`BrowserNavigateAction`]); every tool answers with a [`BrowserObservation`].
//!
//! The names, argument schemas and security-risk flags are upstream's `browser_tool_set`;
//! `browser_request_handoff` is Tandem's own.

use tandem_protocol::{
    BrowserClickAction, BrowserCloseTabAction, BrowserGetContentAction, BrowserGetStateAction,
    BrowserGetStorageAction, BrowserGoBackAction, BrowserListTabsAction, BrowserNavigateAction,
    BrowserObservation, BrowserRequestHandoffAction, BrowserScrollAction, BrowserSetStorageAction,
    BrowserStartRecordingAction, BrowserStopRecordingAction, BrowserSwitchTabAction,
    BrowserTypeAction, ToolInput,
};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

/// `browser_navigate`: open a URL.
pub const NAVIGATE: &str = "browser_navigate";
/// `browser_click`: click an element by index.
pub const CLICK: &str = "browser_click";
/// `browser_get_state`: the page's interactive elements, optionally a screenshot.
pub const GET_STATE: &str = "browser_get_state";
/// `browser_get_content`: the page's content as markdown.
pub const GET_CONTENT: &str = "browser_get_content";
/// `browser_type`: type into an element by index.
pub const TYPE: &str = "browser_type";
/// `browser_scroll`: scroll up or down.
pub const SCROLL: &str = "browser_scroll";
/// `browser_go_back`: back in history.
pub const GO_BACK: &str = "browser_go_back";
/// `browser_list_tabs`: the open tabs and their ids.
pub const LIST_TABS: &str = "browser_list_tabs";
/// `browser_switch_tab`: make a tab current.
pub const SWITCH_TAB: &str = "browser_switch_tab";
/// `browser_close_tab`: close a tab.
pub const CLOSE_TAB: &str = "browser_close_tab";
/// `browser_get_storage`: cookies, local and session storage.
pub const GET_STORAGE: &str = "browser_get_storage";
/// `browser_set_storage`: restore cookies and storage.
pub const SET_STORAGE: &str = "browser_set_storage";
/// `browser_start_recording`: start recording the session.
pub const START_RECORDING: &str = "browser_start_recording";
/// `browser_stop_recording`: stop recording and save it.
pub const STOP_RECORDING: &str = "browser_stop_recording";
/// `browser_request_handoff`: ask a person to take over the browser.
pub const REQUEST_HANDOFF: &str = "browser_request_handoff";

/// Every browser tool's name: upstream's `browser_tool_set` in its order, then
/// `browser_request_handoff`.
pub const ALL: [&str; 15] = [
    NAVIGATE,
    CLICK,
    GET_STATE,
    GET_CONTENT,
    TYPE,
    SCROLL,
    GO_BACK,
    LIST_TABS,
    SWITCH_TAB,
    CLOSE_TAB,
    GET_STORAGE,
    SET_STORAGE,
    START_RECORDING,
    STOP_RECORDING,
    REQUEST_HANDOFF,
];

/// Tools that only read the page or the session.
const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

/// Tools that make the page talk to the web (a visit, a click, typed text).
const OPEN_WORLD: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: true,
};

/// Tools that change only the browser session itself.
const SESSION: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

const NAVIGATE_DESCRIPTION: &str = "\
Opens a URL in the browser, in the current tab or, with `new_tab=true`, in a new one.

Give the full URL with its scheme, e.g. `https://example.com`. The result says where the \
browser ended up (after redirects). Call browser_get_state next to see what you can click or \
type into.";

const CLICK_DESCRIPTION: &str = "\
Clicks an interactive element of the page (a link, button, checkbox, form control) by its \
index.

The index comes from the latest browser_get_state; indices change when the page changes, so \
only use indices from the state you read after the last navigation or click. With \
`new_tab=true` the page the click leads to opens in a new tab.";

const GET_STATE_DESCRIPTION: &str = "\
Reads the current page: its URL, title, open tabs, scroll position and the numbered list of \
interactive elements (links, buttons, inputs) you can click or type into by index.

Call it after every navigation or click before using an index. With \
`include_screenshot=true` you also get a picture of the visible part of the page.";

const GET_CONTENT_DESCRIPTION: &str = "\
Reads the main content of the current page as markdown, without navigation menus and \
advertising.

Long pages are cut off; the result says where, and `start_from_char` continues from there. \
With `extract_links=true` the links' URLs are kept in the text.";

const TYPE_DESCRIPTION: &str = "\
Types text into an input element of the page (a text field, search box or text area) by its \
index.

The index comes from the latest browser_get_state; only use indices from the state you read \
after the last navigation or click. To submit, click the form's button or type into a field \
and click next.";

const SCROLL_DESCRIPTION: &str = "\
Scrolls the current page one screen `down` (the default) or `up`, to reach content and \
elements that are not visible yet. Read browser_get_state afterwards for the elements now in \
view.";

const GO_BACK_DESCRIPTION: &str = "\
Goes back to the previous page of the current tab's history, like the browser's back \
button.";

const LIST_TABS_DESCRIPTION: &str = "\
Lists the open tabs with their 4-character ids, URLs and titles. Use the ids with \
browser_switch_tab and browser_close_tab.";

const SWITCH_TAB_DESCRIPTION: &str = "\
Makes another open tab the current one; the following browser tools act on it. The tab's \
4-character id comes from browser_list_tabs.";

const CLOSE_TAB_DESCRIPTION: &str = "\
Closes an open tab you no longer need. The tab's 4-character id comes from \
browser_list_tabs.";

const GET_STORAGE_DESCRIPTION: &str = "\
Reads the browser's cookies and each origin's local and session storage, e.g. to check a \
login session or to save it for browser_set_storage.";

const SET_STORAGE_DESCRIPTION: &str = "\
Sets the browser's cookies and storage, e.g. to restore a session saved with \
browser_get_storage.

`storage_state` is an object with `cookies` (a list of cookie objects) and `origins` (a list \
of objects with `origin`, `localStorage` and `sessionStorage`), in the shape \
browser_get_storage returns.";

const START_RECORDING_DESCRIPTION: &str = "\
Starts recording the browser session: the page as it is drawn (JPEG frames of the live view) \
and every change of URL, title or driver, also across navigations. The recording is saved as \
numbered JSON files of those events (not rrweb) in a folder the result names, every 5 seconds. \
Call browser_stop_recording to end it.";

const STOP_RECORDING_DESCRIPTION: &str = "\
Stops the recording started with browser_start_recording and saves what is left of it. The \
result says how many events and files were saved and where.";

const REQUEST_HANDOFF_DESCRIPTION: &str = "\
Asks a person to take over the browser for something you cannot or must not do yourself: \
logging in with their own account, entering a one-time code, passing a CAPTCHA, confirming a \
payment.

Say in `reason` what the person should do. The person sees the live page and drives it; the \
result arrives when they hand control back and tells you the URL and title before and after \
and their note. Then read browser_get_state again: the page has changed.";

/// The definition of the browser tool `name`, one of [`ALL`].
///
/// # Panics
/// On any other name: callers pass this module's constants.
pub fn definition(name: &str) -> ToolDefinition {
    match name {
        NAVIGATE => {
            typed::<BrowserNavigateAction>(NAVIGATE, NAVIGATE_DESCRIPTION, OPEN_WORLD, true)
        }
        CLICK => typed::<BrowserClickAction>(CLICK, CLICK_DESCRIPTION, OPEN_WORLD, true),
        GET_STATE => {
            typed::<BrowserGetStateAction>(GET_STATE, GET_STATE_DESCRIPTION, READ_ONLY, false)
        }
        GET_CONTENT => {
            typed::<BrowserGetContentAction>(GET_CONTENT, GET_CONTENT_DESCRIPTION, READ_ONLY, false)
        }
        TYPE => typed::<BrowserTypeAction>(TYPE, TYPE_DESCRIPTION, OPEN_WORLD, true),
        SCROLL => typed::<BrowserScrollAction>(SCROLL, SCROLL_DESCRIPTION, SESSION, true),
        GO_BACK => typed::<BrowserGoBackAction>(GO_BACK, GO_BACK_DESCRIPTION, SESSION, true),
        LIST_TABS => {
            typed::<BrowserListTabsAction>(LIST_TABS, LIST_TABS_DESCRIPTION, READ_ONLY, false)
        }
        SWITCH_TAB => {
            typed::<BrowserSwitchTabAction>(SWITCH_TAB, SWITCH_TAB_DESCRIPTION, SESSION, true)
        }
        CLOSE_TAB => {
            typed::<BrowserCloseTabAction>(CLOSE_TAB, CLOSE_TAB_DESCRIPTION, SESSION, true)
        }
        GET_STORAGE => {
            typed::<BrowserGetStorageAction>(GET_STORAGE, GET_STORAGE_DESCRIPTION, READ_ONLY, false)
        }
        SET_STORAGE => {
            typed::<BrowserSetStorageAction>(SET_STORAGE, SET_STORAGE_DESCRIPTION, SESSION, true)
        }
        START_RECORDING => typed::<BrowserStartRecordingAction>(
            START_RECORDING,
            START_RECORDING_DESCRIPTION,
            SESSION,
            true,
        ),
        STOP_RECORDING => typed::<BrowserStopRecordingAction>(
            STOP_RECORDING,
            STOP_RECORDING_DESCRIPTION,
            SESSION,
            true,
        ),
        REQUEST_HANDOFF => typed::<BrowserRequestHandoffAction>(
            REQUEST_HANDOFF,
            REQUEST_HANDOFF_DESCRIPTION,
            SESSION,
            false,
        ),
        other => panic!("`{other}` is not a browser tool (one of definitions::ALL)"),
    }
}

/// Every browser tool's definition, in the order of [`ALL`].
pub fn definitions() -> Vec<ToolDefinition> {
    ALL.iter().map(|name| definition(name)).collect()
}

fn typed<I: ToolInput>(
    name: &str,
    description: &str,
    annotations: ToolAnnotations,
    asks_security_risk: bool,
) -> ToolDefinition {
    ToolDefinition::typed::<I, BrowserObservation>(
        name,
        description,
        annotations,
        asks_security_risk,
    )
}
