// The Partitions section of Locust's --html report: one self-contained script, inlined into the report by
// loadtest/live/locust_ui.py beside the data it draws.
import { defineConfig } from "vite";

export default defineConfig({
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "../loadtest/live/webui",
    emptyOutDir: false,
    chunkSizeWarningLimit: 4000,
    lib: { entry: "src/report.jsx", formats: ["iife"], name: "PartitionStressReport", fileName: () => "partitions-report.js" },
  },
});
