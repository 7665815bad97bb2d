//! Masking secrets in a byte stream that arrives in arbitrary chunks.
//!
//! A secret may be split across two reads of the PTY, so the tail of the stream (as long as the
//! longest secret could be) is held back until more bytes arrive or the stream goes quiet
//! ([`StreamMasker::flush`]). Bytes are masked per valid UTF-8 run; invalid bytes pass through.
//! With no secrets nothing is held and chunks pass straight through.

use tandem_sdk::Masker;

/// `bytes` with every secret value replaced; bytes that are not UTF-8 are kept as they are.
pub(crate) fn mask_bytes(bytes: &[u8], masker: &Masker) -> Vec<u8> {
    if masker.is_empty() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        if masker.contains_secret(valid) {
            out.extend_from_slice(masker.mask(valid).as_bytes());
        } else {
            out.extend_from_slice(valid.as_bytes());
        }
        out.extend_from_slice(chunk.invalid());
    }
    out
}

/// Moves `i` back to the start of the UTF-8 character it falls in.
fn char_boundary(bytes: &[u8], mut i: usize) -> usize {
    let mut steps = 0;
    while i > 0 && i < bytes.len() && (bytes[i] & 0xC0) == 0x80 && steps < 3 {
        i -= 1;
        steps += 1;
    }
    i
}

/// Masks a chunked stream, holding back a tail that might be the start of a secret.
#[derive(Debug, Default)]
pub(crate) struct StreamMasker {
    pending: Vec<u8>,
}

impl StreamMasker {
    /// Whether bytes are held back (the caller should [`flush`](Self::flush) when idle).
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Adds `chunk`; returns the masked bytes that are safe to show now. `hold` is at least the
    /// length of the longest secret minus one.
    pub fn push(&mut self, chunk: &[u8], masker: &Masker, hold: usize) -> Vec<u8> {
        if masker.is_empty() {
            if self.pending.is_empty() {
                return chunk.to_vec();
            }
            self.pending.extend_from_slice(chunk);
            return std::mem::take(&mut self.pending);
        }
        self.pending.extend_from_slice(chunk);
        if self.pending.len() <= hold {
            return Vec::new();
        }
        let whole = mask_bytes(&self.pending, masker);
        let mut cut = char_boundary(&self.pending, self.pending.len() - hold);
        while cut > 0 {
            let head = mask_bytes(&self.pending[..cut], masker);
            let tail = mask_bytes(&self.pending[cut..], masker);
            // Masking the halves apart gives the same bytes as masking the whole exactly when
            // no secret straddles the cut.
            if head.len() + tail.len() == whole.len()
                && whole.starts_with(&head)
                && whole.ends_with(&tail)
            {
                self.pending.drain(..cut);
                return head;
            }
            cut = char_boundary(&self.pending, cut.saturating_sub(hold.max(1)));
        }
        Vec::new()
    }

    /// Everything held back, masked.
    pub fn flush(&mut self, masker: &Masker) -> Vec<u8> {
        let pending = std::mem::take(&mut self.pending);
        mask_bytes(&pending, masker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stream: &[u8], size: usize, masker: &Masker) -> Vec<u8> {
        let mut m = StreamMasker::default();
        let mut out = Vec::new();
        for c in stream.chunks(size) {
            out.extend(m.push(c, masker, 16));
        }
        out.extend(m.flush(masker));
        out
    }

    #[test]
    fn secrets_split_across_chunks_are_masked() {
        let masker = Masker::new(["hunter2-secret"]);
        let stream = "key=hunter2-secret é and again hunter2-secret\r\n\u{fffd}end".as_bytes();
        let expected = mask_bytes(stream, &masker);
        assert!(!String::from_utf8_lossy(&expected).contains("hunter2"));
        for size in 1..stream.len() {
            assert_eq!(run(stream, size, &masker), expected, "chunk size {size}");
        }
    }

    #[test]
    fn without_secrets_everything_passes_at_once() {
        let mut m = StreamMasker::default();
        assert_eq!(m.push(b"abc", &Masker::default(), 0), b"abc");
        assert!(!m.has_pending());
    }

    #[test]
    fn invalid_utf8_passes_through() {
        let masker = Masker::new(["pw"]);
        assert_eq!(
            mask_bytes(b"\xffpw\xfe", &masker),
            b"\xff<secret-hidden>\xfe"
        );
    }
}
