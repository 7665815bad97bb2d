//! A person's input to the page while they drive: mouse, keys, text, navigation, tabs. Every
//! event goes through CDP's Input domain, so the page sees trusted events.

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton,
};
use chromiumoxide::keys::USKEYBOARD_LAYOUT;
use tandem_protocol::BrowserClientFrame as PersonInput;

use crate::actions::{history_step, navigate_page, switch};
use crate::browser::Browser;
use crate::error::BrowserError;

fn button(name: Option<&str>) -> Result<(MouseButton, i64), BrowserError> {
    match name.unwrap_or("left") {
        "left" => Ok((MouseButton::Left, 1)),
        "right" => Ok((MouseButton::Right, 2)),
        "middle" => Ok((MouseButton::Middle, 4)),
        other => Err(BrowserError::BadInput(format!(
            "unknown mouse button `{other}`; use left, middle or right"
        ))),
    }
}

impl Browser {
    /// Applies a person's input (the input frames of the live view). Refused unless they
    /// drive; coordinates outside the viewport and unknown keys are refused with the reason.
    pub async fn person_input(&self, input: PersonInput) -> Result<(), BrowserError> {
        let mut s = self.for_person().await?;
        let timeout = self.inner.config.navigation_timeout;
        let (vw, vh) = self.inner.config.viewport;
        let engine = s.engine()?;
        engine.sync_tabs(true).await?;
        let page = engine.page()?;
        // Only input that may navigate waits for the page and refreshes the state; moves,
        // presses, wheels and text go straight through so hovering and dragging stay live.
        let may_navigate = match &input {
            PersonInput::Mouse { action, .. } => action == "click" || action == "up",
            PersonInput::Text { .. } => false,
            _ => true,
        };
        // What was typed into a password field is final once the person moves on (see
        // secrets.rs); keys and text are looked at after they land.
        let typing = matches!(input, PersonInput::Key { .. } | PersonInput::Text { .. });
        let submits = matches!(&input, PersonInput::Key { key, .. } if key == "Enter");
        let moves_on = match &input {
            PersonInput::Mouse { action, .. } => action == "click" || action == "down",
            PersonInput::Key { .. } | PersonInput::Text { .. } => false,
            _ => true,
        };
        if moves_on {
            self.settle_typing();
        }
        match input {
            PersonInput::Mouse {
                action,
                x,
                y,
                button: name,
                delta_x,
                delta_y,
                modifiers,
            } => {
                if !x.is_finite()
                    || !y.is_finite()
                    || x < 0.0
                    || y < 0.0
                    || x > f64::from(vw)
                    || y > f64::from(vh)
                {
                    return Err(BrowserError::BadInput(format!(
                        "({x}, {y}) is outside the page's {vw}×{vh} viewport"
                    )));
                }
                let (b, buttons) = button(name.as_deref())?;
                let kinds: &[DispatchMouseEventType] = match action.as_str() {
                    "click" => &[
                        DispatchMouseEventType::MouseMoved,
                        DispatchMouseEventType::MousePressed,
                        DispatchMouseEventType::MouseReleased,
                    ],
                    "down" => &[DispatchMouseEventType::MousePressed],
                    "up" => &[DispatchMouseEventType::MouseReleased],
                    "move" => &[DispatchMouseEventType::MouseMoved],
                    "wheel" => &[DispatchMouseEventType::MouseWheel],
                    other => {
                        return Err(BrowserError::BadInput(format!(
                            "unknown mouse action `{other}`; use click, down, up, move or wheel"
                        )));
                    }
                };
                for kind in kinds {
                    let mut p = DispatchMouseEventParams::new(kind.clone(), x, y);
                    p.modifiers = Some(modifiers);
                    match kind {
                        DispatchMouseEventType::MousePressed
                        | DispatchMouseEventType::MouseReleased => {
                            p.button = Some(b.clone());
                            p.buttons = Some(buttons);
                            p.click_count = Some(1);
                        }
                        DispatchMouseEventType::MouseWheel => {
                            p.delta_x = Some(delta_x);
                            p.delta_y = Some(delta_y);
                        }
                        _ => {}
                    }
                    page.execute(p).await?;
                }
            }
            PersonInput::Key { key, modifiers } => {
                let def = USKEYBOARD_LAYOUT
                    .iter()
                    .find(|d| d.key == key)
                    .ok_or_else(|| BrowserError::BadInput(format!("unknown key `{key}`")))?;
                // With Ctrl, Alt or Meta held a key is a shortcut and types nothing.
                let text = if modifiers & 0b0111 == 0 {
                    def.text
                        .map(str::to_owned)
                        .or_else(|| (def.key.chars().count() == 1).then(|| def.key.to_owned()))
                } else {
                    None
                };
                for kind in [DispatchKeyEventType::KeyDown, DispatchKeyEventType::KeyUp] {
                    let down = kind == DispatchKeyEventType::KeyDown;
                    let mut p = DispatchKeyEventParams::new(kind);
                    p.key = Some(def.key.to_owned());
                    p.code = Some(def.code.to_owned());
                    p.windows_virtual_key_code = Some(def.key_code);
                    p.native_virtual_key_code = Some(def.key_code);
                    p.modifiers = Some(modifiers);
                    if down {
                        p.text.clone_from(&text);
                        p.unmodified_text.clone_from(&text);
                    }
                    page.execute(p).await?;
                }
            }
            PersonInput::Text { text } => {
                page.execute(InsertTextParams::new(text)).await?;
            }
            PersonInput::Navigate { url } => {
                let out = navigate_page(&page, &url, timeout).await?;
                if out.is_error {
                    return Err(BrowserError::BadInput(out.text));
                }
            }
            PersonInput::Back | PersonInput::Forward => {
                let delta = if matches!(input, PersonInput::Back) {
                    -1
                } else {
                    1
                };
                let out = history_step(&page, delta, timeout).await?;
                if out.is_error {
                    return Err(BrowserError::BadInput(out.text));
                }
            }
            PersonInput::Reload => {
                page.reload().await?;
            }
            PersonInput::SwitchTab { tab_id } => {
                let out = switch(engine, &tab_id).await?;
                if out.is_error {
                    return Err(BrowserError::BadInput(out.text));
                }
            }
            PersonInput::Auth { .. }
            | PersonInput::TakeControl
            | PersonInput::HandBack { .. }
            | PersonInput::MarkSecret { .. } => {
                return Err(BrowserError::BadInput(
                    "not an input frame: control frames are handled by the socket".into(),
                ));
            }
        }
        if typing {
            self.note_typing(&page).await;
            if submits {
                self.settle_typing();
            }
        }
        if !may_navigate {
            return Ok(());
        }
        // Navigation a click started shows in the state once it has committed.
        tokio::time::sleep(crate::actions::CLICK_GRACE).await;
        crate::actions::settle(&page, std::time::Duration::from_millis(300)).await;
        let engine = s.engine()?;
        engine.sync_tabs(true).await?;
        self.publish(engine).await;
        Ok(())
    }
}
