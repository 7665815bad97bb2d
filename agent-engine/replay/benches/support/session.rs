//! A scripted terminal session for the replay benchmarks: what a terminal shows for one event
//! of an agent's build-and-test loop or a person's shell (colours, full-screen programs).

/// A small deterministic generator (the same session on every run).
pub struct Lcg(pub u64);
impl Lcg {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// What a terminal shows for one event.
pub fn output(rng: &mut Lcg, i: usize, person: bool) -> String {
    let mut s = String::from("\x1b[1;32muser@tandem\x1b[0m:\x1b[1;34m~/work\x1b[0m$ ");
    match rng.below(12) {
        0 => {
            s.push_str("cargo test\r\n");
            for k in 0..(20 + rng.below(60)) {
                s.push_str(&format!(
                    "test module_{i}::case_{k} ... \x1b[32mok\x1b[0m\r\n"
                ));
            }
            s.push_str("\r\ntest result: \x1b[32mok\x1b[0m. 80 passed; 0 failed\r\n");
        }
        1 if !person => {
            s.push_str("less src/lib.rs\r\n\x1b[?1049h\x1b[H\x1b[2J");
            for k in 0..40 {
                s.push_str(&format!(
                    "\x1b[{};1H{k:4} fn item_{k}() {{ body(); }}",
                    k + 1
                ));
            }
            s.push_str("\x1b[?1049l");
        }
        2 => {
            s.push_str("ls -la\r\n");
            for k in 0..(5 + rng.below(30)) {
                s.push_str(&format!(
                    "-rw-r--r-- 1 user user {:6} Nov 29 07:{:02} file_{i}_{k}.rs\r\n",
                    rng.below(99_999),
                    rng.below(60)
                ));
            }
        }
        3 => {
            s.push_str("git diff\r\n");
            for k in 0..(10 + rng.below(40)) {
                let (c, sign) = if k % 2 == 0 { (31, '-') } else { (32, '+') };
                s.push_str(&format!(
                    "\x1b[{c}m{sign}    let value_{k} = compute({i});\x1b[0m\r\n"
                ));
            }
        }
        _ => {
            s.push_str(&format!("echo step {i}\r\nstep {i}\r\n"));
        }
    }
    s
}
