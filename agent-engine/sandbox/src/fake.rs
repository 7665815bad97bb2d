//! A provisioner without Docker, for the supervisor's tests and (feature `fake`) for hosts'
//! tests, which show that any provisioner plugs in through [`ProvisionerSource::Given`]: its sandboxes are entries in a
//! map, each step can be held at (to cancel, drop or race a start there), made to fail, and a
//! sandbox can be made to die with an exit code.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use tokio::sync::{Semaphore, watch};

use crate::{
    BuildOptions, BuildReport, Created, Exit, OnProgress, Provisioner, ProvisionerSource, Sandbox,
    SandboxError, SandboxInfo, SandboxSpec,
};

/// A step of a start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    Create,
    Start,
    Ready,
}

/// A step held open: calls arriving there wait until it is released.
pub struct Gate {
    arrived: Semaphore,
    open: watch::Sender<bool>,
}

impl Gate {
    /// Waits until one more call arrived at the step.
    pub async fn reached(&self) {
        if let Ok(p) = self.arrived.acquire().await {
            p.forget();
        }
    }

    /// Lets every call waiting at the step (and later ones) through.
    pub fn release(&self) {
        self.open.send_replace(true);
    }

    async fn pass(&self) {
        self.arrived.add_permits(1);
        let mut open = self.open.subscribe();
        let _ = open.wait_for(|o| *o).await;
    }
}

enum Behaviour {
    Hold(Arc<Gate>),
    Fail(String),
}

struct FakeSandbox {
    running: bool,
    exit: watch::Sender<Option<Exit>>,
}

#[derive(Default)]
struct State {
    next: u32,
    sandboxes: BTreeMap<String, FakeSandbox>,
    steps: HashMap<Step, Behaviour>,
}

/// Counts a create dropped before it answered (the supervisor must never do that).
struct CreateInFlight<'a>(&'a AtomicU32, bool);

impl Drop for CreateInFlight<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The fake provisioner.
#[derive(Default)]
pub struct Fake {
    state: Mutex<State>,
    dropped_creates: AtomicU32,
    creates: AtomicU32,
    /// Creates answer [`SandboxError::ImageMissing`] until an image is built.
    image_missing: AtomicBool,
    builds: AtomicU32,
    /// Sandboxes reach this machine's loopback through a gateway, as on Docker's bridge.
    bridged: AtomicBool,
}

impl Fake {
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This fake as a host takes a provisioner.
    pub fn source(self: &Arc<Self>) -> ProvisionerSource {
        ProvisionerSource::Given(Arc::clone(self) as Arc<dyn Provisioner>)
    }

    /// Creates fail with [`SandboxError::ImageMissing`] until [`Provisioner::build_image`].
    pub fn without_image(&self) {
        self.image_missing.store(true, Ordering::SeqCst);
    }

    /// How many images were built.
    pub fn builds(&self) -> u32 {
        self.builds.load(Ordering::SeqCst)
    }

    /// Sandboxes reach a loopback URL of this machine as `host.docker.internal`.
    pub fn bridged(&self) {
        self.bridged.store(true, Ordering::SeqCst);
    }

    /// Holds `step` until the gate answered is released.
    pub fn hold(&self, step: Step) -> Arc<Gate> {
        let gate = Arc::new(Gate {
            arrived: Semaphore::new(0),
            open: watch::channel(false).0,
        });
        self.lock()
            .steps
            .insert(step, Behaviour::Hold(Arc::clone(&gate)));
        gate
    }

    /// Makes `step` fail with `message`.
    pub fn fail(&self, step: Step, message: &str) {
        self.lock()
            .steps
            .insert(step, Behaviour::Fail(message.to_owned()));
    }

    /// Lets `step` pass again.
    pub fn pass(&self, step: Step) {
        self.lock().steps.remove(&step);
    }

    /// Sandbox `id` stops with `code`, as a killed container does.
    pub fn kill(&self, id: &str, code: i64) {
        let mut state = self.lock();
        if let Some(s) = state.sandboxes.get_mut(id) {
            s.running = false;
            s.exit.send_replace(Some(Exit {
                code: Some(code),
                reason: format!("its server exited with code {code}"),
            }));
        }
    }

    /// The ids of every sandbox that exists, any state.
    pub fn sandboxes(&self) -> Vec<String> {
        self.lock().sandboxes.keys().cloned().collect()
    }

    /// How many creates were dropped before they answered.
    pub fn dropped_creates(&self) -> u32 {
        self.dropped_creates.load(Ordering::SeqCst)
    }

    /// How many creates were asked for.
    pub fn creates(&self) -> u32 {
        self.creates.load(Ordering::SeqCst)
    }

    /// Waits at `step` when it is held; the message scripted with [`Fake::fail`] when it fails.
    async fn step(&self, step: Step) -> Option<String> {
        let gate = match self.lock().steps.get(&step) {
            None => return None,
            Some(Behaviour::Fail(m)) => return Some(m.clone()),
            Some(Behaviour::Hold(g)) => Arc::clone(g),
        };
        gate.pass().await;
        None
    }
}

impl Provisioner for Fake {
    fn create<'a>(&'a self, spec: &'a SandboxSpec) -> BoxFuture<'a, Result<Created, SandboxError>> {
        Box::pin(async move {
            self.creates.fetch_add(1, Ordering::SeqCst);
            let mut in_flight = CreateInFlight(&self.dropped_creates, false);
            if self.image_missing.load(Ordering::SeqCst) {
                in_flight.1 = true;
                return Err(SandboxError::ImageMissing {
                    image: spec.image.clone(),
                });
            }
            if !spec.workspace.is_dir() {
                in_flight.1 = true;
                return Err(SandboxError::Invalid(format!(
                    "the workspace {} is not a folder",
                    spec.workspace.display()
                )));
            }
            // The sandbox exists before the answer arrives, as with a daemon: a create
            // dropped now would leave it behind unnamed.
            let id = {
                let mut state = self.lock();
                state.next += 1;
                let id = format!("fake-{:04}", state.next);
                state.sandboxes.insert(
                    id.clone(),
                    FakeSandbox {
                        running: false,
                        exit: watch::channel(None).0,
                    },
                );
                id
            };
            let step = self.step(Step::Create).await;
            in_flight.1 = true;
            if let Some(m) = step {
                self.lock().sandboxes.remove(&id);
                return Err(SandboxError::Docker(m));
            }
            Ok(Created {
                session_key: format!("key-of-{id}"),
                url: Some(format!("http://fake.invalid/{id}")),
                port: None,
                id,
            })
        })
    }

    fn start<'a>(&'a self, created: &'a Created) -> BoxFuture<'a, Result<Sandbox, SandboxError>> {
        Box::pin(async move {
            if let Some(m) = self.step(Step::Start).await {
                return Err(SandboxError::Docker(m));
            }
            match self.lock().sandboxes.get_mut(&created.id) {
                Some(s) => s.running = true,
                None => return Err(SandboxError::NotFound(created.id.clone())),
            }
            Ok(Sandbox {
                id: created.id.clone(),
                url: created.url.clone().unwrap_or_default(),
                session_key: created.session_key.clone(),
                workspace: crate::WORKSPACE_IN_SANDBOX.to_owned(),
            })
        })
    }

    fn ready<'a>(&'a self, sandbox: &'a Sandbox) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async move {
            match self.step(Step::Ready).await {
                None => Ok(()),
                Some(logs) => Err(SandboxError::Unhealthy {
                    id: sandbox.id.clone(),
                    seconds: 0,
                    logs,
                }),
            }
        })
    }

    fn wait<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Exit, SandboxError>> {
        Box::pin(async move {
            let rx = match self.lock().sandboxes.get(id) {
                Some(s) => s.exit.subscribe(),
                None => {
                    return Ok(Exit {
                        code: None,
                        reason: "its container was removed".into(),
                    });
                }
            };
            let mut rx = rx;
            let exit = match rx.wait_for(Option::is_some).await {
                Ok(e) => e.clone(),
                // Removed: its sender is gone.
                Err(_) => None,
            };
            Ok(exit.unwrap_or_else(|| Exit {
                code: None,
                reason: "its container was removed".into(),
            }))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async move {
            match self.lock().sandboxes.remove(id) {
                Some(_) => Ok(()),
                None => Err(SandboxError::NotFound(id.to_owned())),
            }
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<SandboxInfo>, SandboxError>> {
        Box::pin(async move {
            Ok(self
                .lock()
                .sandboxes
                .iter()
                .map(|(id, s)| SandboxInfo {
                    id: id.clone(),
                    name: id.clone(),
                    image: "fake".into(),
                    state: if s.running { "running" } else { "exited" }.into(),
                    url: None,
                    workspace: None,
                })
                .collect())
        })
    }

    fn logs<'a>(
        &'a self,
        id: &'a str,
        _tail: usize,
    ) -> BoxFuture<'a, Result<String, SandboxError>> {
        Box::pin(async move { Ok(format!("the last words of {id}\n")) })
    }

    fn sweep(&self, _mine: bool) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn build_image<'a>(
        &'a self,
        opts: &'a BuildOptions,
        progress: OnProgress<'a>,
    ) -> BoxFuture<'a, Result<BuildReport, SandboxError>> {
        Box::pin(async move {
            progress(crate::Progress::Building(format!("building {}", opts.tag)));
            self.builds.fetch_add(1, Ordering::SeqCst);
            self.image_missing.store(false, Ordering::SeqCst);
            Ok(BuildReport {
                tag: opts.tag.clone(),
                image_id: format!("sha256:fake-{}", opts.tag),
                size_bytes: 0,
                cached: false,
                base_built: false,
                seconds: 0.0,
            })
        })
    }

    fn url_inside<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Option<String>> {
        let bridged = self.bridged.load(Ordering::SeqCst);
        Box::pin(async move { bridged.then(|| crate::rewrite_loopback(url)).flatten() })
    }
}
