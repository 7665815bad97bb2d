//! Names in an `events/` directory: `event-{index:05}-{event id}.json`, matched exactly like
//! upstream's regex `^event-(\d{5,})-([0-9a-fA-F-]{8,})\.json$`, plus the lock and marker files.

/// The file lock a writer holds while the log is open.
pub(crate) const LOCK_FILE: &str = ".eventlog.lock";

/// Prefix and suffix of the length marker `.eventlog-len-N.marker`.
const MARKER_PREFIX: &str = ".eventlog-len-";
const MARKER_SUFFIX: &str = ".marker";

/// Suffixes of files a writer moved aside; loading skips them without a warning.
pub(crate) const SET_ASIDE_SUFFIXES: &[&str] = &[".corrupt", ".orphaned", ".duplicate"];

/// The file name of event `index` with id `event_id`.
pub(crate) fn event_file_name(index: usize, event_id: &str) -> String {
    format!("event-{index:05}-{event_id}.json")
}

/// Whether `id` can name an event file (upstream's `[0-9a-fA-F-]{8,}`).
pub(crate) fn is_valid_event_id(id: &str) -> bool {
    id.len() >= 8 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// The index of an event file name, `None` when the name is not one.
pub(crate) fn parse_event_file_name(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let dash = rest.find('-')?;
    let (digits, id) = (&rest[..dash], &rest[dash + 1..]);
    if digits.len() < 5 || !digits.bytes().all(|b| b.is_ascii_digit()) || !is_valid_event_id(id) {
        return None;
    }
    digits.parse().ok()
}

/// The length marker's file name for a log of `len` events.
pub(crate) fn marker_file_name(len: usize) -> String {
    format!("{MARKER_PREFIX}{len}{MARKER_SUFFIX}")
}

/// Whether `name` is a length marker.
pub(crate) fn is_marker(name: &str) -> bool {
    name.strip_prefix(MARKER_PREFIX)
        .and_then(|r| r.strip_suffix(MARKER_SUFFIX))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `name` is a temp file of an interrupted event write (`.event-....json.<random>`).
pub(crate) fn is_event_temp(name: &str) -> bool {
    name.starts_with(".event-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_upstreams_regex() {
        let id = "1343ce37-1e8a-4d20-957a-e99821d81685";
        assert_eq!(parse_event_file_name(&event_file_name(0, id)), Some(0));
        assert_eq!(
            parse_event_file_name(&event_file_name(123_456, id)),
            Some(123_456)
        );
        assert_eq!(parse_event_file_name("event-00007-ABCDEF01.json"), Some(7));
        for bad in [
            "event-0007-1343ce37.json",
            "event-00007-1343ce3.json",
            "event-00007-1343ce3g.json",
            "event-00007-1343ce37.json.corrupt",
            "event-00007_1343ce37.json",
            "xevent-00007-1343ce37.json",
            "event--1343ce37.json",
        ] {
            assert_eq!(parse_event_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn markers_and_temps() {
        assert!(is_marker(&marker_file_name(40)));
        assert!(!is_marker(".eventlog-len-.marker"));
        assert!(!is_marker(LOCK_FILE));
        assert!(is_event_temp(".event-00001-1343ce37.json.0a1b2c3d4e5f"));
        assert!(!is_event_temp(LOCK_FILE));
    }
}
