//! Encryption of the secrets a profile keeps (its API key): ChaCha20-Poly1305 (ring) under a
//! 256-bit key. The key is SHA-256 of `OH_SECRET_KEY` when the server has one (upstream's
//! variable), else 32 random bytes in a key file beside the profiles, created 0600 on first
//! use. Each value is sealed with a fresh random nonce and bound to its profile and field, so
//! a ciphertext copied into another profile or field does not open.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

/// Prefix of an encrypted value.
pub const PREFIX: &str = "enc:v1:";

/// Why a value could not be sealed or opened.
#[derive(Debug, thiserror::Error)]
pub enum CipherError {
    /// The key file could not be read or written.
    #[error("the profile key file {path}: {source}")]
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The key file does not hold a 32-byte key.
    #[error("the profile key file {0} is not a key this server wrote")]
    BadKeyFile(PathBuf),
    /// The value is not one this key sealed (another key, or altered).
    #[error("cannot decrypt (written under another key, or altered)")]
    Open,
    /// The system's random generator failed.
    #[error("no randomness available")]
    Random,
}

/// Where the key comes from.
#[derive(Clone)]
pub enum KeySource {
    /// SHA-256 of this secret (`OH_SECRET_KEY`).
    Secret(String),
    /// Random bytes kept in this file (base64), created when missing.
    File(PathBuf),
}

impl std::fmt::Debug for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Secret(_) => f.write_str("Secret(**********)"),
            Self::File(p) => f.debug_tuple("File").field(p).finish(),
        }
    }
}

/// A sealing key.
pub struct Cipher {
    key: LessSafeKey,
    rng: SystemRandom,
}

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cipher")
    }
}

impl Cipher {
    /// The key of `source`; `create` makes a missing key file (else its absence is an error).
    pub fn load(source: &KeySource, create: bool) -> Result<Self, CipherError> {
        let bytes: Vec<u8> = match source {
            KeySource::Secret(s) => ring::digest::digest(&ring::digest::SHA256, s.as_bytes())
                .as_ref()
                .to_vec(),
            KeySource::File(path) => read_or_create(path, create)?,
        };
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, &bytes)
            .map_err(|_| CipherError::BadKeyFile(key_path(source)))?;
        Ok(Self {
            key: LessSafeKey::new(unbound),
            rng: SystemRandom::new(),
        })
    }

    /// `value` sealed for `context` (profile and field), as `enc:v1:<base64 nonce|sealed>`.
    pub fn seal(&self, context: &str, value: &str) -> Result<String, CipherError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).map_err(|_| CipherError::Random)?;
        let mut buf = value.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.as_bytes()),
                &mut buf,
            )
            .map_err(|_| CipherError::Random)?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&buf);
        Ok(format!("{PREFIX}{}", STANDARD.encode(out)))
    }

    /// The plain text of a value [`seal`](Self::seal) made for `context`.
    pub fn open(&self, context: &str, sealed: &str) -> Result<String, CipherError> {
        let raw = sealed
            .strip_prefix(PREFIX)
            .and_then(|b| STANDARD.decode(b).ok())
            .ok_or(CipherError::Open)?;
        if raw.len() < NONCE_LEN {
            return Err(CipherError::Open);
        }
        let (nonce, body) = raw.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CipherError::Open)?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(context.as_bytes()), &mut body)
            .map_err(|_| CipherError::Open)?;
        String::from_utf8(plain.to_vec()).map_err(|_| CipherError::Open)
    }
}

fn key_path(source: &KeySource) -> PathBuf {
    match source {
        KeySource::File(p) => p.clone(),
        KeySource::Secret(_) => PathBuf::from("OH_SECRET_KEY"),
    }
}

fn read_or_create(path: &Path, create: bool) -> Result<Vec<u8>, CipherError> {
    let io = |source| CipherError::KeyFile {
        path: path.to_owned(),
        source,
    };
    match std::fs::read_to_string(path) {
        // An empty key file sealed nothing (a write cut short by older servers): replace it.
        Ok(text) if text.trim().is_empty() && create => {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(e)),
            }
            create_key(path)
        }
        Ok(text) => {
            let key = STANDARD
                .decode(text.trim())
                .map_err(|_| CipherError::BadKeyFile(path.to_owned()))?;
            if key.len() != 32 {
                return Err(CipherError::BadKeyFile(path.to_owned()));
            }
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => create_key(path),
        Err(e) => Err(io(e)),
    }
}

/// Makes the key file at `path` whole or not at all: the key is written to a 0600 file beside
/// it, then linked in place (so no one reads a half-written key, and a crash leaves none); when
/// another server in this home made it first, theirs is used.
fn create_key(path: &Path) -> Result<Vec<u8>, CipherError> {
    let io = |source| CipherError::KeyFile {
        path: path.to_owned(),
        source,
    };
    let mut key = [0u8; 32];
    SystemRandom::new()
        .fill(&mut key)
        .map_err(|_| CipherError::Random)?;
    let mut salt = [0u8; 8];
    SystemRandom::new()
        .fill(&mut salt)
        .map_err(|_| CipherError::Random)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join(format!(
        ".secret_key.{}.tmp",
        salt.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&tmp).and_then(|mut f| {
        f.write_all(STANDARD.encode(key).as_bytes())?;
        f.sync_all()
    });
    let linked = written.and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key.to_vec()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_or_create(path, false),
        Err(e) => Err(io(e)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn seals_and_opens_only_in_its_context() {
        let dir = tempfile::tempdir().unwrap();
        let source = KeySource::File(dir.path().join("key"));
        let c = Cipher::load(&source, true).unwrap();
        let sealed = c.seal("work/api_key", "sk-123").unwrap();
        assert!(sealed.starts_with(PREFIX) && !sealed.contains("sk-123"));
        assert_eq!(c.open("work/api_key", &sealed).unwrap(), "sk-123");
        assert!(c.open("other/api_key", &sealed).is_err());
        // The same key file gives the same key.
        let again = Cipher::load(&source, false).unwrap();
        assert_eq!(again.open("work/api_key", &sealed).unwrap(), "sk-123");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = Cipher::load(&KeySource::Secret("s".into()), false).unwrap();
        assert!(other.open("work/api_key", &sealed).is_err());
        // Only the key file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn an_empty_key_file_is_replaced_and_a_bad_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, "").unwrap();
        assert!(matches!(
            Cipher::load(&KeySource::File(path.clone()), false),
            Err(CipherError::BadKeyFile(_))
        ));
        let c = Cipher::load(&KeySource::File(path.clone()), true).unwrap();
        let sealed = c.seal("a/api_key", "k").unwrap();
        let again = Cipher::load(&KeySource::File(path.clone()), false).unwrap();
        assert_eq!(again.open("a/api_key", &sealed).unwrap(), "k");
        std::fs::write(&path, "not a key").unwrap();
        assert!(matches!(
            Cipher::load(&KeySource::File(path), true),
            Err(CipherError::BadKeyFile(_))
        ));
    }
}
