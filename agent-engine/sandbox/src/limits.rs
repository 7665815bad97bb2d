//! Resource limits in the notation people type (`512m`, `1.5`).

use crate::SandboxError;

/// Bytes of a memory limit in Docker's notation: a number with an optional `b`, `k`, `m` or
/// `g` suffix (powers of 1024). At least 6 MiB, as Docker requires.
pub fn parse_memory(text: &str) -> Result<i64, SandboxError> {
    let t = text.trim().to_ascii_lowercase();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t.as_str(), ""),
    };
    let scale: i64 = match unit.trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => {
            return Err(SandboxError::Invalid(format!(
                "invalid memory limit {text:?}: expected a number with k, m or g (512m, 2g)"
            )));
        }
    };
    let n: i64 = digits.parse().map_err(|_| {
        SandboxError::Invalid(format!(
            "invalid memory limit {text:?}: expected a number with k, m or g (512m, 2g)"
        ))
    })?;
    let bytes = n.checked_mul(scale).ok_or_else(|| {
        SandboxError::Invalid(format!("invalid memory limit {text:?}: too large"))
    })?;
    if bytes < 6 << 20 {
        return Err(SandboxError::Invalid(format!(
            "memory limit {text:?} is below Docker's minimum of 6m"
        )));
    }
    Ok(bytes)
}

/// Docker's `NanoCpus` of a CPU count.
pub(crate) fn nano_cpus(cpus: f64) -> Result<i64, SandboxError> {
    if !(cpus.is_finite() && cpus > 0.0 && cpus <= 1024.0) {
        return Err(SandboxError::Invalid(format!(
            "invalid CPU limit {cpus}: expected a positive number of CPUs (0.5, 1, 2)"
        )));
    }
    // Rounded to whole nano-CPUs; the cast cannot overflow below 1024 CPUs.
    #[allow(clippy::cast_possible_truncation)]
    Ok((cpus * 1e9).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limits_in_dockers_notation() {
        assert_eq!(parse_memory("512m").unwrap(), 512 << 20);
        assert_eq!(parse_memory("2G").unwrap(), 2 << 30);
        assert_eq!(parse_memory("1048576000").unwrap(), 1_048_576_000);
        assert_eq!(parse_memory("256mb").unwrap(), 256 << 20);
        for bad in ["", "m", "12x", "-5m", "1k", "99999999999999g"] {
            let e = parse_memory(bad).unwrap_err().to_string();
            assert!(e.contains("memory limit"), "{bad}: {e}");
        }
    }

    #[test]
    fn cpu_limits() {
        assert_eq!(nano_cpus(1.5).unwrap(), 1_500_000_000);
        assert!(nano_cpus(0.0).is_err());
        assert!(nano_cpus(f64::NAN).is_err());
    }
}
