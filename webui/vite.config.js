// Locust's web UI with the Partitions tab: index.html, served by Locust as a Jinja template (--build-path).
// The HTML report's Partitions section is a second build (vite.report.config.js), inlined into Locust's report.
import { defineConfig } from "vite";

export default defineConfig({
  base: "./",
  build: { outDir: "../loadtest/live/webui", emptyOutDir: true, chunkSizeWarningLimit: 4000 },
});
