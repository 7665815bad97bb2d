import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// `base: "./"` makes every asset URL relative, so one build works when `tandem serve` serves it
// under /ui/, when Tauri serves it from its own scheme, and from a file:// preview.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: {
    target: "es2022",
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4096,
    // No manual chunks: the editor (Monaco) and terminal (xterm) panes are loaded with dynamic
    // import(), so the bundler already keeps them out of the start-up chunk.
  },
  worker: { format: "es" },
  server: { port: 5173, strictPort: false },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    css: false,
  },
});
