import { fileURLToPath } from "node:url";
import { mergeConfig } from "vitest/config";
import { servicesTestConfig } from "../../packages/devstack/src/vitest-config";

// One file at a time: each file flushes "its" Redis database at start, and web has more test files
// than Redis has databases (16), so two files running side by side could flush each other's
// rate-limit counters and queues mid-test.
// codemirror-json-schema's ESM imports omit file extensions (fine for bundlers, not for Node):
// inlined, Vite resolves them, so the editor's completion can be tested as the browser runs it.
// `@/` is tsconfig.json's path alias for src/ (Next and tsx read it from tsconfig; Vite needs it here).
export default mergeConfig(servicesTestConfig({ fileParallelism: false, server: { deps: { inline: ["codemirror-json-schema", "json-schema-library"] } } }), {
  resolve: { alias: [{ find: /^@\//, replacement: fileURLToPath(new URL("./src/", import.meta.url)) }] },
});
