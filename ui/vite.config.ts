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
    rollupOptions: {
      output: {
        // Monaco and xterm are large and change rarely: separate chunks cache better.
        manualChunks(id: string) {
          if (id.includes("monaco-editor")) return "monaco";
          if (id.includes("@xterm")) return "xterm";
          if (id.includes("node_modules")) return "vendor";
          return undefined;
        },
      },
    },
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
