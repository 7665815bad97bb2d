//! A person's credentials never reach the model: what they type into password fields during a
//! takeover, and text they mark as secret in the Browser pane, becomes a secret of the
//! conversation (masked as `<secret-hidden>` in observations, events and LLM requests).
//!
//! How typed passwords are found: after each key or text a person sends, the focused element
//! (through shadow roots and same-origin frames) is asked over CDP whether it is an
//! `<input type=password>`, and if so its whole value is kept as that field's latest value.
//! A field's value becomes final when the person clicks, presses Enter, navigates or hands
//! back (so a correction keeps only what was finally typed, and a retyped password counts
//! too); at the hand-back the password fields still filled in on every tab are read as well.
//! Each final value is registered with its URL-encoded spellings, so a GET form that puts it
//! in the page's URL is masked too.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use chromiumoxide::Page;
use serde_json::Value;

use crate::actions::eval;
use crate::browser::Browser;
use crate::engine::Engine;
use crate::error::BrowserError;

/// The shortest text kept as a secret: shorter text would mask ordinary words everywhere.
pub const MIN_SECRET_LEN: usize = 4;

/// `[field key, value]` of the focused password field, or null.
const FOCUSED_PASSWORD: &str = r#"(() => {
  let e = document.activeElement;
  for (let i = 0; e && i < 16; i++) {
    if (e.shadowRoot && e.shadowRoot.activeElement) { e = e.shadowRoot.activeElement; continue; }
    if (e.tagName === 'IFRAME' || e.tagName === 'FRAME') {
      try { e = e.contentDocument.activeElement; continue; } catch (_) { return null; }
    }
    break;
  }
  if (!e || e.tagName !== 'INPUT' || (e.type || '').toLowerCase() !== 'password') return null;
  const form = e.form ? (e.form.getAttribute('action') || '') : '';
  return JSON.stringify([location.origin + location.pathname + '|' + form + '|' + (e.name || e.id || ''), e.value]);
})()"#;

/// The values of every filled-in password field of the document.
const PASSWORD_VALUES: &str = r#"JSON.stringify(Array.from(document.querySelectorAll('input[type=password]')).map(e => e.value).filter(v => v))"#;

/// What the person typed, kept until the hand-back.
#[derive(Default)]
pub(crate) struct Typed {
    /// The latest value of each password field being typed into.
    pending: BTreeMap<String, String>,
    /// Final values not yet given to the conversation.
    captured: Vec<String>,
    /// Every spelling already given (so none is registered twice).
    given: HashSet<String>,
    /// Secrets named so far.
    count: usize,
}

/// `s` as an HTML form's GET puts it in a URL (application/x-www-form-urlencoded).
fn form_encoded(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `s` as `encodeURIComponent` spells it.
fn uri_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'!'
            | b'~'
            | b'*'
            | b'\''
            | b'('
            | b')' => out.push(char::from(b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Typed {
    /// Names `value` and its URL spellings not given yet: `BROWSER_SECRET_<n>`, then
    /// `…_FORM` and `…_URI` where those differ.
    fn name(&mut self, value: &str, out: &mut Vec<(String, String)>) {
        if value.chars().count() < MIN_SECRET_LEN || self.given.contains(value) {
            return;
        }
        self.count += 1;
        let base = format!("BROWSER_SECRET_{}", self.count);
        for (suffix, spelling) in [
            ("", value.to_owned()),
            ("_FORM", form_encoded(value)),
            ("_URI", uri_component(value)),
        ] {
            if self.given.insert(spelling.clone()) {
                out.push((format!("{base}{suffix}"), spelling));
            }
        }
    }
}

impl Browser {
    fn typed(&self) -> std::sync::MutexGuard<'_, Typed> {
        self.inner
            .typed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// After a person's key or text: keeps the focused password field's value, if any.
    pub(crate) async fn note_typing(&self, page: &Page) {
        let probe = tokio::time::timeout(Duration::from_secs(2), eval(page, FOCUSED_PASSWORD));
        let Ok(Ok(Value::String(json))) = probe.await else {
            return;
        };
        if let Ok((key, value)) = serde_json::from_str::<(String, String)>(&json) {
            self.typed().pending.insert(key, value);
        }
    }

    /// The values typed so far are final (a click, Enter, a navigation).
    pub(crate) fn settle_typing(&self) {
        let mut typed = self.typed();
        let values: Vec<String> = std::mem::take(&mut typed.pending).into_values().collect();
        typed.captured.extend(values);
    }

    /// Reads the filled-in password fields of every tab.
    pub(crate) async fn collect_password_fields(&self, engine: &Engine) {
        for tab in &engine.tabs {
            let read =
                tokio::time::timeout(Duration::from_secs(2), eval(&tab.page, PASSWORD_VALUES));
            if let Ok(Ok(Value::String(json))) = read.await
                && let Ok(values) = serde_json::from_str::<Vec<String>>(&json)
            {
                self.typed().captured.extend(values);
            }
        }
    }

    /// What the person typed into password fields, named, each once: to become secrets of
    /// the conversation.
    pub(crate) fn take_typed_secrets(&self) -> Vec<(String, String)> {
        self.settle_typing();
        let mut typed = self.typed();
        let mut out = Vec::new();
        for value in std::mem::take(&mut typed.captured) {
            typed.name(&value, &mut out);
        }
        out
    }

    /// Text the person marked as secret in the Browser pane: answers `(name, value)` pairs
    /// to register as secrets of the conversation (none when it already is one).
    pub fn mark_secret(&self, text: &str) -> Result<Vec<(String, String)>, BrowserError> {
        if text.chars().count() < MIN_SECRET_LEN {
            return Err(BrowserError::BadInput(format!(
                "a secret needs at least {MIN_SECRET_LEN} characters (shorter text would hide ordinary words everywhere)"
            )));
        }
        let mut out = Vec::new();
        self.typed().name(text, &mut out);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_spelled_as_forms_and_scripts_put_them_in_urls() {
        assert_eq!(form_encoded("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(uri_component("a b!(x)'~*"), "a%20b!(x)'~*");
        let mut typed = Typed::default();
        let mut out = Vec::new();
        typed.name("hunter 2!", &mut out);
        typed.name("hunter 2!", &mut out);
        typed.name("abc", &mut out);
        typed.name("plain", &mut out);
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "BROWSER_SECRET_1",
                "BROWSER_SECRET_1_FORM",
                "BROWSER_SECRET_1_URI",
                "BROWSER_SECRET_2"
            ],
            "{out:?}"
        );
        assert_eq!(out[1].1, "hunter+2%21");
        assert_eq!(out[2].1, "hunter%202!");
    }
}
