//! What `is_input` sends: special key names (`C-c`, `UP`, `TAB`, ...) become the bytes a
//! terminal sends for that key; any other text is typed followed by Enter.

/// The bytes for a named key, `None` when `name` is not one.
pub(crate) fn key_bytes(name: &str) -> Option<&'static [u8]> {
    let bytes: &'static [u8] = match name {
        "UP" => b"\x1b[A",
        "DOWN" => b"\x1b[B",
        "RIGHT" => b"\x1b[C",
        "LEFT" => b"\x1b[D",
        "HOME" => b"\x1b[H",
        "END" => b"\x1b[F",
        "PGUP" => b"\x1b[5~",
        "PGDN" => b"\x1b[6~",
        "TAB" => b"\t",
        "ESC" => b"\x1b",
        "BS" => b"\x7f",
        "ENTER" => b"\r",
        _ => return control_key(name),
    };
    Some(bytes)
}

/// `C-a` .. `C-z` (either case), plus `C-[`, `C-\`, `C-]`, `C-^`, `C-_`, `C-@`.
fn control_key(name: &str) -> Option<&'static [u8]> {
    const CONTROL: [u8; 32] = {
        let mut table = [0u8; 32];
        let mut i = 0;
        while i < 32 {
            table[i] = i as u8;
            i += 1;
        }
        table
    };
    let rest = name
        .strip_prefix("C-")
        .or_else(|| name.strip_prefix("c-"))?;
    let &[c] = rest.as_bytes() else {
        return None;
    };
    let code = match c {
        b'a'..=b'z' => c - b'a' + 1,
        b'A'..=b'Z' => c - b'A' + 1,
        b'@' => 0,
        b'[' => 27,
        b'\\' => 28,
        b']' => 29,
        b'^' => 30,
        b'_' => 31,
        _ => return None,
    };
    Some(&CONTROL[code as usize..=code as usize])
}

/// What to write for an `is_input` action's `command`.
pub(crate) fn input_bytes(command: &str) -> Vec<u8> {
    if let Some(key) = key_bytes(command.trim()) {
        return key.to_vec();
    }
    let mut bytes = command.trim_end_matches(['\n', '\r']).as_bytes().to_vec();
    bytes.push(b'\r');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_text() {
        assert_eq!(input_bytes("C-c"), b"\x03");
        assert_eq!(input_bytes("C-D"), b"\x04");
        assert_eq!(input_bytes("C-z"), b"\x1a");
        assert_eq!(input_bytes("UP"), b"\x1b[A");
        assert_eq!(input_bytes("yes\n"), b"yes\r");
        assert_eq!(input_bytes("C-cc"), b"C-cc\r");
    }
}
