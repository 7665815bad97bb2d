//! Tool inputs and outputs: one action struct per tool is the single source of what the model
//! reads and sends.
//!
//! - [`parameters`] derives the argument schema the model reads from the struct (its field doc
//!   comments are the descriptions);
//! - [`parse`] reads the model's arguments into it, leniently where models commonly slip
//!   (`"5"` for 5, `"true"` for true, a list sent as a JSON string, `null` for absent) and
//!   otherwise with an error naming the field (`field `task_list[1].status` must be one of …`);
//!   arguments the schema does not declare are dropped, as upstream never accepts them;
//! - [`ToolInput`] / [`ToolOutput`] tie a tool's action and observation structs to their
//!   [`Action`] / [`Observation`] variants.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{
    Action, BrowserClickAction, BrowserCloseTabAction, BrowserGetContentAction,
    BrowserGetStateAction, BrowserGetStorageAction, BrowserGoBackAction, BrowserListTabsAction,
    BrowserNavigateAction, BrowserObservation, BrowserRequestHandoffAction, BrowserScrollAction,
    BrowserSetStorageAction, BrowserStartRecordingAction, BrowserStopRecordingAction,
    BrowserSwitchTabAction, BrowserTypeAction, Content, FileEditorAction, FileEditorObservation,
    FinishAction, FinishObservation, Observation, TaskTrackerAction, TaskTrackerObservation,
    TerminalAction, TerminalObservation, ThinkAction, ThinkObservation,
};

mod arguments;
mod error;
mod schema;

pub use arguments::{ArgumentError, Arguments, type_name};
pub use error::ToolInputError;
pub use schema::parameters;

/// An action struct that is a tool's input: the model's arguments parse into it and its schema
/// is the tool's `parameters`.
pub trait ToolInput:
    Serialize + DeserializeOwned + JsonSchema + Into<Action> + Send + Sync + 'static
{
    /// Its `kind` on the wire (`FileEditorAction`).
    const KIND: &'static str;

    /// The input `action` carries, if it is of this kind.
    fn of(action: &Action) -> Option<&Self>;
}

/// An observation struct that is a tool's output.
pub trait ToolOutput: Into<Observation> + Send + 'static {
    /// Its `kind` on the wire (`FileEditorObservation`).
    const KIND: &'static str;

    /// A failed result that tells the model `message`.
    fn failure(message: String) -> Self;
}

/// Reads the model's arguments (a JSON object; `null` counts as empty) into `T`, then checks
/// them against the enums of `parameters` (`T`'s schema from [`parameters`]). The error names
/// the field at fault.
pub fn parse<T: DeserializeOwned + Serialize>(
    arguments: Value,
    parameters: &Value,
) -> Result<T, ToolInputError> {
    let object = match arguments {
        Value::Object(object) => object,
        Value::Null => Map::new(),
        other => {
            return Err(ToolInputError::NotAnObject {
                got: arguments::type_name(&other),
            });
        }
    };
    let input = T::deserialize(Arguments(Value::Object(object)))?;
    let mut read = serde_json::to_value(&input)?;
    schema::check_enums(&read, parameters, "")?;
    if schema::prune(&mut read, parameters) {
        // Read back without the arguments the schema does not declare.
        return Ok(serde_json::from_value(read)?);
    }
    Ok(input)
}

macro_rules! tool_inputs {
    ($($input:ident => $variant:ident),* $(,)?) => {$(
        impl ToolInput for $input {
            const KIND: &'static str = stringify!($input);

            fn of(action: &Action) -> Option<&Self> {
                match action {
                    Action::$variant(input) => Some(input),
                    _ => None,
                }
            }
        }
    )*};
}

// Apart from the inputs: all browser tools answer with one observation type.
macro_rules! tool_outputs {
    ($($output:ident),* $(,)?) => {$(
        impl ToolOutput for $output {
            const KIND: &'static str = stringify!($output);

            fn failure(message: String) -> Self {
                failure!($output, message)
            }
        }
    )*};
}

/// An error observation of each kind: its content and `is_error`, the rest as when empty.
macro_rules! failure {
    (FileEditorObservation, $message:expr) => {
        FileEditorObservation {
            content: vec![Content::text($message)],
            is_error: true,
            command: String::new(),
            path: None,
            prev_exist: true,
            old_content: None,
            new_content: None,
            extra: Default::default(),
        }
    };
    ($output:ident, $message:expr) => {
        $output {
            content: vec![Content::text($message)],
            is_error: true,
            ..Default::default()
        }
    };
}

tool_inputs! {
    TerminalAction => Terminal,
    FileEditorAction => FileEditor,
    TaskTrackerAction => TaskTracker,
    ThinkAction => Think,
    FinishAction => Finish,
    BrowserNavigateAction => BrowserNavigate,
    BrowserClickAction => BrowserClick,
    BrowserTypeAction => BrowserType,
    BrowserGetStateAction => BrowserGetState,
    BrowserGetContentAction => BrowserGetContent,
    BrowserScrollAction => BrowserScroll,
    BrowserGoBackAction => BrowserGoBack,
    BrowserListTabsAction => BrowserListTabs,
    BrowserSwitchTabAction => BrowserSwitchTab,
    BrowserCloseTabAction => BrowserCloseTab,
    BrowserGetStorageAction => BrowserGetStorage,
    BrowserSetStorageAction => BrowserSetStorage,
    BrowserStartRecordingAction => BrowserStartRecording,
    BrowserStopRecordingAction => BrowserStopRecording,
    BrowserRequestHandoffAction => BrowserRequestHandoff,
}

tool_outputs! {
    TerminalObservation,
    FileEditorObservation,
    TaskTrackerObservation,
    ThinkObservation,
    FinishObservation,
    BrowserObservation,
}
