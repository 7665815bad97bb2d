//! Build script: Tauri's code generation. The UI (`ui/dist`) is embedded into the binary; when
//! it has not been built yet (a fresh clone running clippy), a placeholder page saying how to
//! build it is written there, so the workspace always compiles.

fn main() {
    let dist = std::path::Path::new("../ui/dist");
    if !dist.join("index.html").exists() {
        let page = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Tandem</title></head>\
<body data-tandem-placeholder><h1>Tandem</h1><p>The UI is not built yet: run \
<code>npm ci &amp;&amp; npm run -w ui build</code>, then rebuild the desktop app \
(<code>scripts/run.sh</code> does both).</p></body></html>\n";
        if std::fs::create_dir_all(dist)
            .and_then(|()| std::fs::write(dist.join("index.html"), page))
            .is_ok()
        {
            println!(
                "cargo:warning=ui/dist is missing: embedded a placeholder page (build the UI, then rebuild)"
            );
        }
    }
    println!("cargo:rerun-if-changed=../ui/dist");
    println!("cargo:rerun-if-changed=tauri.conf.json");
    println!("cargo:rerun-if-changed=capabilities");
    tauri_build::build();
}
