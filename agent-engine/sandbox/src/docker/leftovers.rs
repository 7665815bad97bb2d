//! Sandboxes left behind by a crash: those whose owning process is gone (a `tandem run
//! --sandbox` or a desktop app killed before it could remove its sandbox), running or not.
//! Sandboxes started to outlive their starter (`tandem sandbox start`) carry no owner and are
//! only removed once stopped. A sandbox another process is starting right now is never touched.

use super::{DockerProvisioner, OWNER_LABEL, SANDBOX_LABEL, labelled};

/// `<boot id>/<pid>` of this process.
pub(super) fn this_process() -> String {
    format!("{}/{}", boot_id(), std::process::id())
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// Whether the process an owner label names is gone.
fn owner_gone(owner: &str) -> bool {
    let Some((boot, pid)) = owner.rsplit_once('/') else {
        return false;
    };
    if boot != boot_id() {
        // Started before this machine last booted: its owner cannot be alive.
        return true;
    }
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

impl DockerProvisioner {
    /// Removes the sandboxes this process started for itself (on Ctrl-C or a fatal error).
    pub async fn remove_owned_by_this_process(&self) {
        let owner = format!("{OWNER_LABEL}={}", this_process());
        let Ok(found) = self.docker.list_containers(Some(labelled(&owner))).await else {
            return;
        };
        for id in found.into_iter().filter_map(|c| c.id) {
            if let Err(e) = self.remove(&id).await {
                tracing::warn!(container = %id, "cannot remove a sandbox: {e}");
            }
        }
    }

    /// Removes leftovers; a failure is logged, never in the way of the start that asked.
    pub(super) async fn clean_leftovers(&self) {
        let all = labelled(&format!("{SANDBOX_LABEL}=1"));
        let Ok(found) = self.docker.list_containers(Some(all)).await else {
            return;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        for c in found {
            let Some(id) = c.id else { continue };
            let state = c.state.map(|s| s.to_string()).unwrap_or_default();
            let owner = c.labels.as_ref().and_then(|l| l.get(OWNER_LABEL));
            let left = match owner {
                // Its owner removes it, even once stopped (it reads the logs first).
                Some(o) => owner_gone(o),
                // `tandem sandbox start`'s: once stopped, or stuck before it ever ran (one
                // still being started by another process is left alone).
                None => match state.as_str() {
                    "exited" | "dead" => true,
                    "created" => c.created.is_some_and(|t| now - t > 120),
                    _ => false,
                },
            };
            if left {
                tracing::info!(container = %id, %state, "removing a sandbox left behind");
                if let Err(e) = self.remove(&id).await {
                    tracing::warn!(container = %id, "cannot remove a leftover sandbox: {e}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_gone_after_a_reboot_or_when_their_process_ended() {
        assert!(!owner_gone(&this_process()));
        assert!(owner_gone("another-boot/1"));
        assert!(owner_gone(&format!("{}/999999999", boot_id())));
        assert!(!owner_gone("not an owner"));
    }
}
